"""Indexing: ``x[key]`` (basic indices give views, advanced ones copies), ``x[key] = value``, index_put, where,
nonzero, the masked ops, take and put. Gather/scatter and the index_* ops along one dimension are in ``scatter.py``.

An index is split into a *basic* part (ints, slices, None), applied as one view, and *advanced* index arrays at
dimensions of that view. Since ints are taken out first, NumPy's rule for where the advanced dimensions go (in place
when adjacent, else first) is torch's rule.
"""
import math
import numbers
import warnings

import numpy as np

from .. import _dtype
from .._creation import cast_scalar, check_fill, zeros
from .._fill import _expanded_alias
from .._device import CPU, array_module
from .._meta import data_dependent
from .._tensor import Tensor, check_writable, inplace, register, write_inplace, write_out
from ..autograd.function import Function, direct_view
from ..autograd.grad_mode import grad_enabled
from .view import broadcast_pair, expand, reshape
from ._ufunc_at import ufunc_at
from ._strided import elem_strides, restride

_ndarray = np.ndarray

__all__ = ["index_put", "where", "nonzero", "nonzero_static", "argwhere", "masked_fill", "masked_select",
           "masked_scatter", "take", "put"]

_ALL = slice(None)
_LOOSE_FLOATS = (_dtype.float16, _dtype.bfloat16) + tuple(_dtype.FLOAT8)
_NONE, _ELLIPSIS, _INT, _SLICE, _BOOL, _ARRAY, _MASK, _SEQ_MASK = range(8)  # _SEQ_MASK: a list or array mask
_FROM_NP = _dtype._FROM_NP
_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
              "(got {})")
_BAD_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"
_LONE_MASK, _LONE_BYTE_MASK = "mask", "byte mask"
_BYTE_FILL = "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"


def _const(arr, device):
    """A raw array as a Tensor outside the graph (index arrays, masks)."""
    return Tensor._make(arr, _FROM_NP[arr.dtype], device)


def _xp(t):
    return np if t.device is CPU else array_module(t.device)


# -- parsing an index ------------------------------------------------------------------------------------------------
def _as_tuple_key(key):
    """torch's rule: a short list holding a slice, None, Ellipsis, a Tensor or a sequence is a tuple of indices."""
    if isinstance(key, tuple):
        return key
    if type(key) is list and len(key) < 32 and any(
            k is None or k is Ellipsis or isinstance(k, (slice, Tensor, list, tuple, np.ndarray)) for k in key):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] "
                      "instead of x[seq]. It will be interpreted as a tensor index, x[tensor(seq)], which will result "
                      "either in an error or a different result", UserWarning, stacklevel=4)  # the line holding x[key]
        return tuple(key)
    return (key,)


def _index_array(k, x):
    """An array-like index (Tensor, NumPy array, list) as (kind, array on x's device)."""
    if isinstance(k, Tensor):
        if k.device is not x.device:
            if k.device is not CPU:
                raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor "
                                   f"({x.device})")
            k = k.to(x.device)
        a = k._data
    else:
        a = np.asarray(k)
        if a.dtype.kind not in "biuf":
            raise IndexError(_BAD_INDEX.format(type(k).__name__))
        if a.dtype.kind != "b" and a.dtype != np.uint8:
            a = a.astype(np.int64)  # torch reads a list or array index as int64 (or as a mask)
        if x.device is not CPU:
            a = _xp(x).asarray(a)
    kind = a.dtype.kind
    if kind == "b" or a.dtype == np.uint8:
        return (_BOOL, bool(a)) if a.ndim == 0 else (_MASK if isinstance(k, Tensor) else _SEQ_MASK, a)
    if a.ndim == 0 and kind in "iu":  # a 0-d integer tensor of any width is an integer index
        return _INT, int(a)
    if a.dtype != np.int64 and a.dtype != np.int32:
        raise IndexError(_BAD_DTYPE)
    return _ARRAY, a


def _classify(k, x):
    if k is None:
        return _NONE, None
    if k is Ellipsis:
        return _ELLIPSIS, None
    if isinstance(k, slice):
        start, stop, step = (None if v is None else _to_int(v) for v in (k.start, k.stop, k.step))
        if step is not None and step <= 0:
            raise ValueError("slice step cannot be zero" if step == 0 else "step must be greater than zero")
        return _SLICE, slice(start, stop, step)
    if isinstance(k, bool):
        return _BOOL, bool(k)
    if isinstance(k, (int, np.integer)):
        return _INT, int(k)
    if isinstance(k, (Tensor, np.ndarray, list, tuple, range)):
        return _index_array(k, x)
    if isinstance(k, str):  # torch reads a str as a sequence to build an index tensor from
        raise TypeError("new(): invalid data type 'str'")
    name = type(k).__name__
    raise IndexError(_BAD_INDEX.format(f"numpy.{name}" if isinstance(k, np.generic) else name))


def _to_int(v):
    if isinstance(v, Tensor) and (v.dtype.is_floating_point or v.numel() != 1):
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(v) if isinstance(v, Tensor) else v.__index__()


def _parse(x, key):
    """Splits ``key`` into a basic index (ints, slices and None, applied as a view of ``x``) and advanced index
    arrays at dimensions ``dims`` of that view. Returns (basic, dims, indices, strict); ``strict`` when the key
    holds index tensors (values must then match ``x``'s dtype, as torch's index_put requires), ``_LONE_MASK`` or
    ``_LONE_BYTE_MASK`` when its only one is a mask (a one-element value is then written as masked_fill does)."""
    items = [_classify(k, x) for k in _as_tuple_key(key)]
    for kind, v in items:
        if kind in (_MASK, _SEQ_MASK) and v.dtype == np.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                          UserWarning, stacklevel=3)
    # torch counts a mask given as a list or array as one dimension when it expands an Ellipsis
    used = sum(v.ndim if kind == _MASK else kind in (_INT, _SLICE, _ARRAY, _SEQ_MASK) for kind, v in items)
    shape = x._data.shape
    ndim = len(shape)
    if used > ndim:
        if ndim == 0 and items[0][0] == _INT:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, dims, indices, sizes = [], [], [], []
    d = od = 0  # dimension of x, dimension of the basic view
    ellipsis = False
    for pos, (kind, v) in enumerate(items):
        if d + (v.ndim if kind in (_MASK, _SEQ_MASK) else kind in (_INT, _SLICE, _ARRAY)) > ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim}")
        if kind == _NONE:
            basic.append(None)
            od += 1
        elif kind == _ELLIPSIS:
            n = 0 if ellipsis else ndim - used  # torch expands the first Ellipsis only
            ellipsis = True
            basic.extend((_ALL,) * n)
            d, od = d + n, od + n
        elif kind == _INT:
            size = shape[d]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {pos} with size {size}")
            basic.append(v)
            d += 1
        elif kind == _SLICE:
            basic.append(v)
            d, od = d + 1, od + 1
        elif kind == _BOOL:  # a new dimension of size 1, indexed by [0] (True) or [] (False)
            basic.append(None)
            dims.append(od)
            sizes.append(1)
            indices.append(_xp(x).zeros(int(v), dtype=np.int64))
            od += 1
        elif kind == _ARRAY:
            basic.append(_ALL)
            dims.append(od)
            sizes.append(shape[d])
            indices.append(v)
            d, od = d + 1, od + 1
        else:
            if x.device.type == "meta":
                raise data_dependent("indexing with a boolean mask")
            for j, s in enumerate(v.shape):
                if s != shape[d + j]:  # torch names the shape indexed so far and the dimension in it
                    seen = list(x._data[tuple(basic) + (Ellipsis,)].shape)
                    raise IndexError(f"The shape of the mask {list(v.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {seen} at index {od + j}")
            for j, nz in enumerate(_xp(x).nonzero(v)):
                basic.append(_ALL)
                dims.append(od + j)
                sizes.append(-1)  # in range by construction
                indices.append(nz)
            d, od = d + v.ndim, od + v.ndim
    nothing = False  # the index arrays broadcast to no element: torch then checks no index value
    if len(indices) > 1:
        try:
            nothing = math.prod(np.broadcast_shapes(*(a.shape for a in indices))) == 0
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(list(a.shape)) for a in indices)) from None
    for p, (a, size) in enumerate(zip(indices, sizes)):
        if size >= 0 and a.size:
            lo, hi = int(a.min()), int(a.max())
            if nothing and (lo < -size or hi >= size):
                indices[p] = _xp(x).zeros_like(a)
            elif lo < -size or hi >= size:
                view = x._data[tuple(basic) + (Ellipsis,)].shape
                if math.prod(view) == 0:  # torch checks nothing when the indexed view is empty
                    if math.prod(_adv_shape(view, dims, [i.shape for i in indices])):
                        raise IndexError("index is out of bounds for dimension with size 0")
                    indices[p] = _xp(x).zeros_like(a)
                    continue
                raise IndexError(f"index {lo if lo < -size else hi} is out of bounds for dimension {p} with size "
                                 f"{size}")
    while basic and basic[-1] == _ALL:
        basic.pop()
    adv = [v for kind, v in items if kind in (_BOOL, _ARRAY, _MASK, _SEQ_MASK)]
    if len(adv) == 1 and not isinstance(adv[0], bool) and adv[0].dtype.kind in "bu":
        strict = _LONE_MASK if adv[0].dtype.kind == "b" else _LONE_BYTE_MASK
    else:
        strict = bool(adv)
    return tuple(basic), tuple(dims), indices, strict


def _adv_key(dims, indices):
    key = [_ALL] * (dims[-1] + 1)
    for d, a in zip(dims, indices):
        key[d] = a
    return tuple(key)


def _adv_shape(shape, dims, index_shapes):
    """The shape of a view of ``shape`` indexed by arrays at ``dims`` (NumPy's placement rule)."""
    b = np.broadcast_shapes(*index_shapes)
    if dims[-1] - dims[0] == len(dims) - 1:
        return tuple(shape[:dims[0]]) + b + tuple(shape[dims[-1] + 1:])
    return b + tuple(s for i, s in enumerate(shape) if i not in dims)


# -- the functions ---------------------------------------------------------------------------------------------------
def _new_axis_strides(x, key):
    """Element strides of ``x[key]`` where each None inserts a dimension as ``unsqueeze`` does (NumPy gives it 0)."""
    shape, st, d = list(x.shape), list(elem_strides(x)), 0
    for k in key:
        if k is None:
            st.insert(d, shape[d] * st[d] if d < len(shape) else 1)
            shape.insert(d, 1)
            d += 1
        elif isinstance(k, slice):
            st[d] *= k.indices(shape[d])[2]
            d += 1
        else:
            del shape[d], st[d]
    return st


class BasicIndex(Function):
    """``x[key]`` for a key of ints, slices and None: a view."""
    is_view = True

    @staticmethod
    def forward(ctx, x, key):
        ctx.in_shape, ctx.key = x.shape, key
        out = x[key + (Ellipsis,)]  # the Ellipsis keeps a full integer key a 0-d array view, not a scalar
        return restride(ctx.xp, out, out.shape, _new_axis_strides(x, key)) if None in key else out

    @staticmethod
    def backward(ctx, grad):
        return SliceScatter.apply(grad, key=ctx.key, shape=ctx.in_shape)


class SliceScatter(Function):
    """Zeros of ``shape`` with ``src`` written at the basic index ``key``."""

    @staticmethod
    def forward(ctx, src, key, shape):
        ctx.key = key
        out = ctx.xp.zeros(shape, dtype=src.dtype)
        out[key + (Ellipsis,)] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        return BasicIndex.apply(grad, key=ctx.key)


def pad_to(grad, shape):
    """``grad`` in the leading corner of zeros of ``shape`` (the gradient of a slice from the start)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return SliceScatter.apply(grad, key=tuple(slice(0, n) for n in grad.shape), shape=tuple(shape))


class Index(Function):
    """``x[key]`` for index arrays at dimensions ``dims`` (slices elsewhere): a copy."""

    @staticmethod
    def forward(ctx, x, *indices, dims):
        ctx.in_shape, ctx.dims = x.shape, dims
        ctx.save_for_backward(*indices)
        out = x[_adv_key(dims, indices)]
        return out if out.flags.c_contiguous else out.copy()  # NumPy may lay the result out transposed

    @staticmethod
    def backward(ctx, grad):
        idx = ctx.saved_tensors
        z = zeros(ctx.in_shape, dtype=grad.dtype, device=grad.device)
        return (IndexPut.apply(z, grad, *idx, basic=(), dims=ctx.dims, accumulate=True),) + (None,) * len(idx)


class IndexPut(Function):
    """``x`` with ``x[basic][indices at dims]`` replaced by (or, with ``accumulate``, incremented by) ``values``."""

    def name(self):  # a write through basic indexing alone is a copy into slices
        return "IndexPutBackward0" if self.dims or self.accumulate else "torch::autograd::CopySlices"

    @staticmethod
    def forward(ctx, x, values, *indices, basic, dims, accumulate):
        ctx.basic, ctx.dims, ctx.accumulate = basic, dims, accumulate
        ctx.save_for_backward(*indices)
        out = x.copy()
        _write(ctx.xp, out, basic, dims, indices, values, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        idx = ctx.saved_tensors
        gx = gv = None
        if ctx.needs_input_grad[0]:
            gx = grad if ctx.accumulate else IndexPut.apply(grad, 0, *idx, basic=ctx.basic, dims=ctx.dims,
                                                            accumulate=False)
        if ctx.needs_input_grad[1]:
            gv = grad if not ctx.basic else BasicIndex.apply(grad, key=ctx.basic)
            if idx:
                gv = Index.apply(gv, *idx, dims=ctx.dims)
        return (gx, gv) + (None,) * len(idx)


def _write(xp, out, basic, dims, indices, values, accumulate=False):
    region = out[basic + (Ellipsis,)] if basic else out
    key = _adv_key(dims, indices) if dims else Ellipsis
    if accumulate:
        ufunc_at(xp, "add", region, key, values)
    else:
        region[key] = values


# -- getitem / setitem -----------------------------------------------------------------------------------------------
_PLAIN = (int, type(None))


def _getitem(self, key):
    t = type(key)
    if t is int:  # fast paths: x[i] and x[a:b:c] with Python ints
        a = self._data
        shape = a.shape
        if shape and -shape[0] <= key < shape[0]:
            if a.__class__ is _ndarray:
                return direct_view(BasicIndex, self, a[key, ...], {"key": (key,)})
            return BasicIndex.apply(self, key=(key,))
    elif t is slice and self._data.ndim and type(key.start) in _PLAIN and type(key.stop) in _PLAIN and (
            key.step is None or type(key.step) is int and key.step > 0):
        a = self._data
        if a.__class__ is _ndarray:
            return direct_view(BasicIndex, self, a[key, ...], {"key": (key,)})
        return BasicIndex.apply(self, key=(key,))
    basic, dims, indices, _ = _parse(self, key)
    out = self
    if basic or not dims:
        out = BasicIndex.apply(self, key=basic)
    if dims:
        out = Index.apply(out, *(_const(a, self.device) for a in indices), dims=dims)
    return out


def _region_shape(x, basic, dims, indices):
    """The shape of ``x[key]`` for a parsed key."""
    shape = x._data[basic + (Ellipsis,)].shape if basic else x._data.shape
    return _adv_shape(shape, dims, [a.shape for a in indices]) if dims else tuple(shape)


def _check_same_dtype(dst, src):
    if src.dtype is not dst.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_dtype.scalar_name(dst.dtype)} for the destination and {_dtype.scalar_name(src.dtype)} "
                           "for the source.")


def _fit_value(value, shape, advanced):
    """``value`` with leading size-1 dimensions dropped (as torch does), checked to broadcast to ``shape``."""
    vs = tuple(value.shape)
    k = 0
    while k < len(vs) and vs[k] == 1:
        k += 1
    if k:
        value = reshape(value, vs[k:])
    if not advanced:
        return expand(value, shape)
    vs = vs[k:]
    if len(vs) > len(shape) or any(a != b and a != 1 for a, b in zip(vs[::-1], shape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    return value


def _setitem(self, key, value):
    if key is False:  # as torch: nothing to write, nothing checked
        return
    if isinstance(key, Tensor) and key.dtype is _dtype.uint8 and (isinstance(value, numbers.Number) or
                                                                 isinstance(value, Tensor) and value.numel() == 1):
        raise RuntimeError(_BYTE_FILL)
    basic, dims, indices, strict = _parse(self, key)
    mask_fill = False
    if strict in (_LONE_MASK, _LONE_BYTE_MASK) and (not isinstance(value, Tensor) or value.numel() == 1):
        if strict is _LONE_BYTE_MASK:
            raise RuntimeError(_BYTE_FILL)
        strict, mask_fill = False, True  # x[mask] = one element goes by masked_fill, which casts
    if isinstance(value, Tensor):
        if strict and key is not True:  # torch's index_put wants equal dtypes
            _check_same_dtype(self, value)
        value = _fit_value(value.to(self.dtype), _region_shape(self, basic, dims, indices), bool(dims))
    elif not isinstance(value, numbers.Number):
        raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")
    else:
        if isinstance(value, numbers.Integral) and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        if self.dtype not in _LOOSE_FLOATS or isinstance(value, complex):  # real numbers go in unchecked there
            check_fill(value, self.dtype)
        value = cast_scalar(value, self.dtype)
    is_tensor = isinstance(value, Tensor)
    recording = grad_enabled() and (self._requires_grad or is_tensor and value._requires_grad)
    data = self._data
    if not getattr(data.flags, "writeable", True):  # CuPy arrays have no such flag
        data = _expanded_target(self, basic, dims, mask_fill, recording)
        if data is None:
            return
    if recording:
        if self._requires_grad and self.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        write_inplace(self, _put_parsed, basic, dims, indices, value)
        return
    if is_tensor and value.device is not self.device:
        value = value.to(self.device)
    _write(_xp(self), data, basic, dims, indices, value._data if is_tensor else value)
    self._vc[0] += 1


def _warn_expanded(opname, example, stacklevel=3):
    warnings.warn(f"Use of {opname} on expanded tensors is deprecated. Please clone() the tensor before performing "
                  f"this operation. This also applies to advanced indexing e.g. {example}", UserWarning,
                  stacklevel=stacklevel)


def inplace_expanded(fn, example):
    """The in-place method of ``fn``, which also writes an expanded tensor (with a deprecation warning): each
    element that the op changes is written to its memory location."""
    method = inplace(fn)

    def write(self, *args, **kwargs):
        a = self._data
        if getattr(a.flags, "writeable", True) or self.device.type == "meta" or not a.size or \
                not any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
            return method(self, *args, **kwargs)
        _warn_expanded(method.__name__, example)
        alias = _expanded_alias(a)
        if alias is a or grad_enabled() and (self._requires_grad or any(isinstance(v, Tensor) and v._requires_grad
                                                                        for v in args)):
            return method(self, *args, **kwargs)  # read-only memory, or a write to record: refused
        out = fn(self, *args, **kwargs)._data
        changed = out != a
        alias[changed] = out[changed]
        self._vc[0] += 1
        return self
    write.__name__, write.__doc__ = method.__name__, method.__doc__
    return write


def _expanded_target(self, basic, dims, mask_fill, recording):
    """The array that ``self[key] = value`` writes where ``self``'s array is read-only (None: nothing to write). An
    expanded tensor takes the write where its indexed region's elements do not share memory, and an indexed write
    (with a deprecation warning) where they do; read-only memory raises."""
    a = self._data
    region = a[basic + (Ellipsis,)] if basic else a
    if self.device.type != "meta" and region.size and any(s == 0 and n > 1 for n, s in zip(region.shape,
                                                                                          region.strides)):
        if not dims:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        _warn_expanded("index_put_", "tensor[indices] = tensor", 4)
        if mask_fill:
            _warn_expanded("masked_fill_", "tensor[mask] = scalar", 4)
    if recording:  # written through the graph, which checks the whole tensor
        return a
    alias = _expanded_alias(a)
    if alias is a and check_writable(self, "index_put_", "some elements of the input tensor and the written-to "
                                     "tensor refer to a single memory location"):
        return None
    return alias


def _put_parsed(input, basic, dims, indices, value):
    return IndexPut.apply(input, value, *(_const(a, input.device) for a in indices), basic=basic, dims=dims,
                          accumulate=False)


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices] = values`` (or ``+=`` with ``accumulate``, where repeated indices add up);
    ``indices`` is a tuple of index tensors."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if len(indices) > max(input.ndim, 1):
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {len(indices)})")
    basic, dims, idx, strict = _parse(input, tuple(indices))
    if strict in (_LONE_MASK, _LONE_BYTE_MASK) and values.numel() == 1 and not accumulate:
        if strict is _LONE_BYTE_MASK:
            raise RuntimeError(_BYTE_FILL)
        values = values.to(input.dtype)  # written as masked_fill does
    _check_same_dtype(input, values)
    values = _fit_value(values, _region_shape(input, basic, dims, idx), True)
    return IndexPut.apply(input, values, *(_const(a, input.device) for a in idx), basic=basic, dims=dims,
                          accumulate=accumulate)


# -- where / nonzero ---------------------------------------------------------------------------------------------------
class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b, dtype, contiguous=False):
        ctx.save_for_backward(cond)
        out = ctx.xp.where(cond, a, b)
        if contiguous and not out.flags.c_contiguous:  # masked_fill's layout, whatever its inputs'
            out = ctx.xp.ascontiguousarray(out)
        return out if out.dtype == dtype.np else out.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (None, Where.apply(cond, grad, 0, dtype=grad.dtype) if need[1] else None,
                Where.apply(cond, 0, grad, dtype=grad.dtype) if need[2] else None)


def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, of ``other`` elsewhere (broadcast; the two are promoted
    together, numbers allowed). ``where(condition)`` is ``nonzero(condition, as_tuple=True)``.

    Example::

        >>> ember.where(ember.tensor([True, False]), ember.tensor([1., 2.]), 0.)
        tensor([1., 0.])
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if condition.dtype is not _dtype.bool and condition.dtype is not _dtype.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype.scalar_name(condition.dtype)}")
    shape = tuple(condition.shape)
    for t in (input, other):
        if isinstance(t, Tensor):
            shape = broadcast_pair(shape, tuple(t.shape))
    dt = _dtype.result_type(input, other)
    for x in (input, other):
        if x.__class__ is int and dt._kind in "iu":  # torch refuses to wrap a number into the tensors' dtype
            check_fill(x, dt)
    a = input.to(dt) if isinstance(input, Tensor) else input
    b = other.to(dt) if isinstance(other, Tensor) else other
    return write_out(Where.apply(condition, a, b, dtype=dt), out)


def _tensor_where(self, condition, other):
    return where(condition, self, other)


def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or with ``as_tuple`` one 1-D tensor per
    dimension."""
    if input.device.type == "meta":
        raise data_dependent("nonzero")
    a = input._data
    xp = _xp(input)
    idx = xp.nonzero(a.reshape(1) if a.ndim == 0 else a)
    # one contiguous (ndim, n) block: the tuple holds its rows, the matrix is its transpose (column-major)
    cols = xp.stack(idx).astype(np.int64, copy=False)
    if as_tuple:
        return tuple(_const(i, input.device) for i in cols)
    res = cols.T if a.ndim else xp.zeros((idx[0].size, 0), dtype=np.int64)
    return write_out(_const(res, input.device), out)


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` with exactly ``size`` rows: truncated, or padded with rows of ``fill_value``.

    Example::

        >>> ember.nonzero_static(ember.tensor([0, 3, 5]), size=3)
        tensor([[ 1],
                [ 2],
                [-1]])
    """
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    idx = nonzero(input)._data[:size]
    xp = _xp(input)
    pad = xp.full((size - idx.shape[0], idx.shape[1]), fill_value, dtype=np.int64)
    return _const(xp.concatenate([idx, pad]), input.device)


def argwhere(input):
    """``nonzero(input)``: the indices of the non-zero elements, one row each."""
    return nonzero(input)


# -- masked ops --------------------------------------------------------------------------------------------------------
_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
               "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
               "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def check_fill_value(value, dt):
    """torch's overflow check of the number, or CPU 0-d tensor, that a fill-like op writes into a ``dt`` tensor."""
    if not isinstance(value, Tensor):
        check_fill(value, dt)
    elif value.device.type == "cpu":
        check_fill(value.item(), dt)


def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or a 0-d tensor) where the boolean ``mask`` holds."""
    if mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_TYPE_NAMES[mask.dtype.name]}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    check_fill_value(value, input.dtype)
    if isinstance(value, Tensor):
        value = value.to(input.dtype)
    broadcast_pair(tuple(mask.shape), tuple(input.shape))
    return Where.apply(mask, value, input, dtype=input.dtype, contiguous=True)


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` holds (both broadcast), as a 1-D tensor."""
    if mask.dtype is not _dtype.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if input.device.type == "meta" or mask.device.type == "meta":
        raise data_dependent("masked_select")
    shape = broadcast_pair(tuple(input.shape), tuple(mask.shape))
    if tuple(input.shape) != shape:
        input = expand(input, shape)
    m = mask._data if tuple(mask.shape) == shape else _xp(mask).broadcast_to(mask._data, shape)
    idx = _xp(mask).nonzero(m.reshape(1) if m.ndim == 0 else m)
    if input.ndim == 0:
        input = reshape(input, (1,))
    return write_out(Index.apply(input, *(_const(i, input.device) for i in idx), dims=tuple(range(len(idx)))), out)


class MaskedScatter(Function):
    @staticmethod
    def forward(ctx, x, src, mask):
        n = int(mask.sum())
        if n > src.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        ctx.save_for_backward(mask)
        ctx.src_shape = src.shape
        out = x.copy()
        out[mask] = src.reshape(-1)[:n]
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        gx = Where.apply(mask, 0, grad, dtype=grad.dtype) if ctx.needs_input_grad[0] else None
        gs = None
        if ctx.needs_input_grad[1]:
            m = mask._data
            idx = _xp(mask).nonzero(m.reshape(1) if m.ndim == 0 else m)
            g = grad if grad.ndim else reshape(grad, (1,))
            flat = Index.apply(g, *(_const(i, grad.device) for i in idx), dims=tuple(range(len(idx))))
            gs = reshape(pad_to(flat, (math.prod(ctx.src_shape),)), ctx.src_shape)
        return gx, gs, None


def masked_scatter(input, mask, source):
    """``input`` with the elements where ``mask`` holds replaced, in order, by the first elements of ``source``."""
    if mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.scalar_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_dtype.scalar_name(input.dtype)} and {_dtype.scalar_name(source.dtype)}")
    shape = broadcast_pair(tuple(input.shape), tuple(mask.shape))
    if tuple(input.shape) != shape:
        input = expand(input, shape)
    if tuple(mask.shape) != shape:
        mask = _const(_xp(mask).broadcast_to(mask._data, shape), mask.device)
    return MaskedScatter.apply(input, source, mask)


# -- take / put --------------------------------------------------------------------------------------------------------
def _check_flat_index(index, n, op):
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {_dtype.scalar_name(index.dtype)}")
    a = index._data
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < -n or hi >= n:
            raise IndexError(f"out of range: tried to access index {lo if lo < -n else hi} on a tensor of {n} "
                             "elements.")


def take(input, index):
    """``input`` read as 1-D at ``index`` (negative indices count from the end); the result has ``index``'s shape."""
    _check_flat_index(index, input.numel(), "take")
    return Index.apply(reshape(input, (-1,)), index, dims=(0,))


def put(input, index, source, accumulate=False):
    """``input`` (read as 1-D) with ``source``'s elements written (or added, with ``accumulate``) at ``index``."""
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dtype.scalar_name(input.dtype)} and source.dtype = {_dtype.scalar_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    _check_flat_index(index, input.numel(), "put_")
    flat = IndexPut.apply(reshape(input, (-1,)), reshape(source, (-1,)), _const(index._data.reshape(-1), index.device),
                          basic=(), dims=(0,), accumulate=accumulate)
    return reshape(flat, tuple(input.shape))


register(index_put, nonzero, nonzero_static, argwhere, masked_fill, masked_select, masked_scatter, take, put,
         __getitem__=_getitem, __setitem__=_setitem, where=_tensor_where,
         index_put_=inplace_expanded(index_put, "tensor[indices] = tensor"),
         masked_fill_=inplace_expanded(masked_fill, "tensor[mask] = scalar"), masked_scatter_=inplace(masked_scatter),
         put_=inplace(put))

from .scatter import *  # noqa: E402,F401,F403
from .scatter import __all__ as _scatter_all  # noqa: E402

__all__ += _scatter_all
