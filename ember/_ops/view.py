"""Views: ops whose output shares memory with their input, laid out with torch's sizes, strides and offsets.

Every view op is a ``Function`` with ``is_view = True`` whose forward depends only on its keyword parameters, so an
in-place write through a view can be replayed onto the base (``rebase_view``).
"""
import math
import warnings

import numpy as np

__all__ = ["expand", "broadcast_to", "broadcast_shapes", "broadcast_tensors", "expand_as", "reshape", "view_as", "transpose", "swapaxes", "swapdims",
           "permute", "t", "adjoint", "movedim", "moveaxis", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select",
           "diagonal", "as_strided", "clone", "memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d", "legacy_contiguous_format"]
from .. import _dtype
from .._tensor import Size, Tensor, register, wrap_dim
from ..autograd.function import Function, direct_view
from ..autograd.grad_mode import grad_enabled
from ._strided import (Gather, ScatterAdd, ViewScatter, along, dims_arg, elem_strides, index_map, is_plain,
                       restride, shape_arg, view_strides, writeable_view)
from ._strided import check_inplace_view, rebase_view  # noqa: F401 (used by write_inplace)
from .memory_format import (Clone, channels_last, channels_last_3d, clone, contiguous_format,  # noqa: F401
                            legacy_contiguous_format, memory_format,
                            preserve_format)  # public through __all__; Clone for onnx's symbolics

_ndarray = np.ndarray


# -- expand / sum_to_size ----------------------------------------------------------------------------------------------
class Expand(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        if x.ndim == 0:
            return restride(ctx.xp, x, shape, (0,) * len(shape))
        st, lead = elem_strides(x), len(shape) - x.ndim
        strides = [0] * len(shape)
        for i in reversed(range(len(shape))):
            d = i - lead
            if d >= 0:
                strides[i] = st[d] if x.shape[d] == shape[i] else 0
            elif shape[i] == 1:  # a new dimension of size 1 gets a contiguous stride, as in torch
                strides[i] = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 1
        return restride(ctx.xp, x, shape, strides)

    @staticmethod
    def backward(ctx, grad):
        return grad  # the engine sums it back to the input's shape


def _sizes_kw(op, name, args, value):
    """The sizes an op got as varargs ``args`` or as the keyword ``name=value``, with torch's errors."""
    if value is None:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
    if args:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    if isinstance(value, int):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not int")
    return (value,)


def expand(input, *sizes, size=None, implicit=False):
    """A view of ``input`` broadcast to ``sizes`` (-1 keeps a dimension); no memory is copied."""
    if size is not None or not sizes:
        sizes = _sizes_kw("expand", "size", sizes, size)
    sizes = shape_arg(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand({input.type()}{{{list(input.shape)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({input.ndim})")
    shape = list(sizes)
    for i, want in enumerate(sizes):
        if i < lead:
            if want < 0:
                raise RuntimeError(f"The expanded size of the tensor ({want}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            continue
        s = input.shape[i - lead]
        if want == -1:
            shape[i] = s
        elif s != 1 and s != want:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    return Expand.apply(input, shape=tuple(shape))


def broadcast_to(input, *sizes, size=None):
    """``input`` broadcast to ``size`` (a view, as :func:`expand`); the method also takes the sizes as varargs."""
    if size is not None or not sizes:
        sizes = _sizes_kw("broadcast_to", "size", sizes, size)
    return expand(input, *sizes)


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` (each a sequence of sizes, or an int) broadcast to, without any tensor.

    Example::

        >>> ember.broadcast_shapes((2, 1), (3,))
        ember.Size([2, 3])
    """
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    out = [1] * max(map(len, shapes), default=0)
    for k, shape in enumerate(shapes):
        for i in range(1, len(shape) + 1):
            size = shape[-i]
            if size != out[-i] and size != 1:
                if out[-i] != 1:
                    raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at -{i}! Mismatching "
                                       f"argument at index {k} had {shape}; but expected shape should be broadcastable "
                                       f"to {out}")
                out[-i] = size
    return Size(out)


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common broadcast shape (a tensor already of that shape is returned
    as is)."""
    shape = ()
    for t in tensors:
        shape = broadcast_pair(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def broadcast_pair(a, b):
    """The broadcast of two shapes, with the error of torch's binary ops."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def expand_as(input, other):
    return expand(input, other.shape)


class SumToSize(Function):
    half_in_float32 = True  # float16/bfloat16 accumulate in float32, rounded once

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        lead = x.ndim - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
        out = ctx.xp.sum(x, axis=dims, keepdims=True, dtype=x.dtype) if dims else x
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return expand(grad, ctx.in_shape)


def sum_to_size(input, *size):
    """Sums ``input`` over broadcast dimensions down to ``size``."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = shape_arg(size)
    if tuple(input.shape) == size:
        return input
    lead = input.ndim - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, input.shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(input.shape)}}}.")
    return SumToSize.apply(input, shape=size)


# -- reshape / view ----------------------------------------------------------------------------------------------------
class Reshape(Function):
    is_view = True

    def name(self):
        return "ViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        # is_plain's common case inline: a writeable C-contiguous array without size-1 dims
        if x.__class__ is _ndarray and x.flags.carray and 1 not in x.shape and x.size or is_plain(x):
            return x.reshape(shape)
        st = view_strides(x.shape, elem_strides(x), shape)
        if st is None:
            return x.copy().reshape(shape)
        return restride(ctx.xp, x, shape, st)

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.in_shape)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {shape.index(s)} of shape {shape}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                               "dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _target_shape(sizes, numel):
    """The shape of ``numel`` elements that ``reshape``/``view`` are given as sizes, ``f(2, 3)`` or ``f((2, 3))``
    (one of them may be -1)."""
    shape = sizes
    if len(sizes) == 1 and type(sizes[0]) is not int and isinstance(sizes[0], (tuple, list)):
        shape = sizes[0]
    known = 1
    for s in shape:
        if type(s) is not int or s < 0:
            break
        known *= s
    else:
        if known == numel:  # the common case: Python ints, nothing to infer
            return shape if type(shape) is tuple else tuple(shape)
    return _infer_shape(shape_arg(sizes), numel)


def reshape(input, *sizes, shape=None):
    """``input`` with a new shape; a view when the memory layout allows, a copy otherwise."""
    if shape is not None or not sizes:
        sizes = _sizes_kw("reshape", "shape", sizes, shape)
    a = input._data
    shape = _target_shape(sizes, a.size)
    if a.__class__ is _ndarray and (a.flags.carray and 1 not in a.shape and a.size or is_plain(a)):
        # as Reshape.forward's first case
        return direct_view(Reshape, input, a.reshape(shape), {"shape": shape})
    return Reshape.apply(input, shape=shape)


def view(input, *shape, size=None, dtype=None):
    """A view of ``input`` with a new shape (or reinterpreted as another dtype); raises if the memory layout does
    not allow one."""
    if size is not None or dtype is not None or not shape:
        shape = _view_args(shape, size, dtype)
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, Tensor, np.integer)):
        from .. import _dtype
        return view_dtype(input, _dtype.to_dtype(shape[0]))
    shape = _target_shape(shape, input._data.size)
    if not is_plain(input._data) and view_strides(input.shape, input.stride(), shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return Reshape.apply(input, shape=shape)


def _view_args(shape, size, dtype):
    """``view``'s arguments given by keyword: ``size=`` or ``dtype=``, alone."""
    if shape or (size is None) == (dtype is None) or isinstance(size, int):
        got = ", ".join([type(a).__name__ for a in shape] + [f"{k}={type(v).__name__}" for k, v in
                                                             (("size", size), ("dtype", dtype)) if v is not None])
        raise TypeError(f"view() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (torch.dtype dtype)\n * (tuple of ints size)\n")
    return (size,) if dtype is None else (dtype,)


def view_as(input, other):
    """``input.view(other.size())``."""
    return view(input, other.shape)


class ViewDtype(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dtype):
        return x.view(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("view(dtype) is not differentiable")


def view_dtype(input, dtype):
    old, new = input.dtype.itemsize, dtype.itemsize
    if new != old:
        what = (f"to view {_dtype.scalar_name(input.dtype)} as {_dtype.scalar_name(dtype)} (different element "
                f"sizes)")
        if not input.ndim:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if input.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {input.stride(-1)}")
        if new > old:
            ratio = new // old
            for name, n in (("size(-1)", input.shape[-1]), ("storage_offset()", input.storage_offset())):
                if n % ratio:
                    raise RuntimeError(f"self.{name} must be divisible by {ratio} {what}, but got {n}")
            for d, n in enumerate(input.stride()[:-1]):
                if n % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {n}")
    return ViewDtype.apply(input, dtype=dtype)


# -- reordering dimensions ---------------------------------------------------------------------------------------------
class Permute(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return writeable_view(ctx.xp, x.transpose(dims))

    @staticmethod
    def backward(ctx, grad):
        inv = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inv[d] = i
        return Permute.apply(grad, dims=tuple(inv))


def permute(input, *args, dims=None):
    """A view of ``input`` with its dimensions reordered: output dimension i is input dimension ``dims[i]``."""
    if dims is not None or not args:
        args = _sizes_kw("permute", "dims", args, dims)
    dims = dims_arg(args)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if not input.ndim:
        dims = ()
    return Permute.apply(input, dims=dims)


def transpose(input, dim0, dim1):
    """A view of ``input`` with dimensions ``dim0`` and ``dim1`` swapped."""
    n = input.ndim
    dims = list(range(n))
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    if n:
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, dims=tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    """Transposes a tensor of at most 2 dimensions (0-d and 1-d tensors are returned as views of themselves)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return Permute.apply(input, dims=tuple(reversed(range(input.ndim))))


def _dim_list(dims, n, what, op="movedim"):
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    out = tuple(wrap_dim(int(d), n) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}: repeated dim in `{what}` ({list(dims)})")
    return out


def movedim(input, source, destination):
    """Moves dimensions ``source`` of ``input`` to positions ``destination``; the others keep their order."""
    n = input.ndim
    src, dst = _dim_list(source, n, "source"), _dim_list(destination, n, "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    if n == 0:
        return Permute.apply(input, dims=())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    dims = tuple(o if o is not None else next(rest) for o in order)
    return Permute.apply(input, dims=dims)


moveaxis = movedim


def _T(self):
    if self.ndim != 2:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
                      if self.ndim == 0 else
                      "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=2)
    return Permute.apply(self, dims=tuple(reversed(range(self.ndim))))


def _mT(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _H(self):
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
    return transpose(self, 0, 1).conj()


def _mH(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return transpose(self, -2, -1).conj()


def adjoint(input):
    """A view of ``input`` with its last two dimensions transposed and conjugated (``input.mH``)."""
    return _mH(input)


# -- adding and removing dimensions ------------------------------------------------------------------------------------
class Squeeze(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.in_shape = x.shape
        keep = [d for d in range(x.ndim) if d not in dims]
        st = elem_strides(x)
        return restride(ctx.xp, x, [x.shape[d] for d in keep], [st[d] for d in keep])

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.in_shape)


def squeeze(input, dim=None):
    """A view of ``input`` without its size-1 dimensions (only those among ``dim``, an int or tuple, if given)."""
    n = input.ndim
    if dim is None:
        dims = range(n)
    else:
        dims = [wrap_dim(int(d), n) for d in ((dim,) if isinstance(dim, (int, np.integer)) else dim)]
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return Squeeze.apply(input, dims=tuple(d for d in dims if n and input.shape[d] == 1))


class Unsqueeze(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        shape, st = list(x.shape), list(elem_strides(x))
        st.insert(dim, shape[dim] * st[dim] if dim < x.ndim else 1)
        shape.insert(dim, 1)
        return restride(ctx.xp, x, shape, st)

    @staticmethod
    def backward(ctx, grad):
        return Squeeze.apply(grad, dims=(ctx.dim,))


def unsqueeze(input, dim):
    """A view of ``input`` with a size-1 dimension inserted at ``dim``."""
    return Unsqueeze.apply(input, dim=wrap_dim(dim, input.ndim + 1))


def flatten(input, start_dim=0, end_dim=-1):
    """``input`` with dimensions ``start_dim..end_dim`` merged into one (a view when the layout allows)."""
    n = input.ndim
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if n == 0:
        return reshape(input, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    """A view of ``input`` with dimension ``dim`` split into ``sizes`` (one entry may be -1)."""
    if input.ndim == 0:
        raise RuntimeError(f"unflatten: Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return view(input, input.shape[:d] + sizes + input.shape[d + 1:])


# -- sub-regions -------------------------------------------------------------------------------------------------------
class Narrow(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dim, start, length):
        ctx.in_shape, ctx.params = x.shape, {"dim": dim, "start": start, "length": length}
        return writeable_view(ctx.xp, along(x, dim, slice(start, start + length)))

    @staticmethod
    def backward(ctx, grad):
        return ViewScatter.apply(grad, shape=ctx.in_shape, op=Narrow, params=ctx.params)


class Select(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.in_shape, ctx.params = x.shape, {"dim": dim, "index": index}
        part = along(x, dim, slice(index, index + 1))  # keeps an array (not a scalar) and moves the start
        st = elem_strides(part)
        return restride(ctx.xp, part, part.shape[:dim] + part.shape[dim + 1:], st[:dim] + st[dim + 1:])

    @staticmethod
    def backward(ctx, grad):
        return ViewScatter.apply(grad, shape=ctx.in_shape, op=Select, params=ctx.params)


def narrow(input, dim, start, length):
    """A view of ``input`` restricted to ``length`` entries of dimension ``dim`` from ``start``."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start.ndim or start.dtype.is_floating_point or start.dtype.is_complex
                                      or start.dtype == _dtype.bool):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    d = wrap_dim(dim, input.ndim)
    size, start, length = input.shape[d], int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return Narrow.apply(input, dim=d, start=start, length=length)


def select(input, dim, index):
    """A view of ``input`` at position ``index`` of dimension ``dim`` (which is removed)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    size, index = input.shape[d], int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {dim}")
    return Select.apply(input, dim=d, index=index % size)


class Diagonal(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.in_shape, ctx.params = x.shape, {"offset": offset, "dim1": dim1, "dim2": dim2}
        n1, n2 = x.shape[dim1], x.shape[dim2]
        size = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
        st = elem_strides(x)
        if size:  # moves the start to the first diagonal element
            x = along(x, dim2, slice(offset, None)) if offset >= 0 else along(x, dim1, slice(-offset, None))
        keep = [d for d in range(x.ndim) if d != dim1 and d != dim2]
        return restride(ctx.xp, x, [x.shape[d] for d in keep] + [size], [st[d] for d in keep] + [st[dim1] + st[dim2]])

    @staticmethod
    def backward(ctx, grad):
        return ViewScatter.apply(grad, shape=ctx.in_shape, op=Diagonal, params=ctx.params)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``input`` over dimensions ``dim1`` and ``dim2`` (``offset`` > 0: above the main
    diagonal), appended as the last dimension."""
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(input, offset=int(offset), dim1=d1, dim2=d2)


class Unfold(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dimension, size, step):
        ctx.in_shape, ctx.params = x.shape, {"dimension": dimension, "size": size, "step": step}
        if x.ndim == 0:
            return restride(ctx.xp, x, (size,), (1,))
        shape, st = list(x.shape), list(elem_strides(x))
        shape[dimension] = (shape[dimension] - size) // step + 1
        shape.append(size)
        st.append(st[dimension])
        st[dimension] *= step
        return restride(ctx.xp, x, shape, st)

    @staticmethod
    def backward(ctx, grad):  # windows may overlap: gradients add up
        index = index_map(ctx.xp, ctx.in_shape, Unfold, ctx.params)
        return ScatterAdd.apply(grad, index=index, shape=ctx.in_shape)


def unfold(input, dimension, size, step):
    """A view of all slices of length ``size`` of dimension ``dimension``, ``step`` apart, in a new last dimension."""
    d = wrap_dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return Unfold.apply(input, dimension=d, size=int(size), step=int(step))


def _storage_index(xp, shape, strides, offset):
    """The element offset in memory of each element of a (shape, strides) view starting at ``offset``."""
    idx = xp.full(tuple(shape), offset, dtype="int64")
    for d, (n, s) in enumerate(zip(shape, strides)):
        idx += (xp.arange(n, dtype="int64") * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return idx


class AsStrided(Function):
    is_view = True
    addresses_memory = True  # its parameters address the input's memory, not its elements

    @staticmethod
    def forward(ctx, x, size, stride, delta):
        ctx.in_shape, ctx.in_strides = x.shape, elem_strides(x)
        ctx.params = (size, stride, delta)
        if delta:  # the view starts ``delta`` elements away from x's first element
            x = ctx.xp.lib.stride_tricks.as_strided(x, (2,), (delta * x.itemsize,))[1:]
        return restride(ctx.xp, x, size, stride)

    @staticmethod
    def backward(ctx, grad):
        # Gradients meet in memory: sum them per memory location, then read each input element's location
        # (shared among the input elements that alias it).
        xp = ctx.xp
        size, stride, delta = ctx.params
        idx_in = _storage_index(xp, ctx.in_shape, ctx.in_strides, 0)
        idx_out = _storage_index(xp, size, stride, delta)
        both = xp.concatenate([idx_in.reshape(-1), idx_out.reshape(-1)])
        lo = int(both.min()) if both.size else 0
        n = int(both.max()) - lo + 1 if both.size else 0
        flat = ScatterAdd.apply(grad, index=idx_out - lo, shape=(n,))
        g = Gather.apply(flat, index=idx_in - lo)
        count = xp.bincount((idx_in - lo).reshape(-1), minlength=n)[idx_in - lo]
        if count.size and int(count.max()) > 1:
            g = g / Tensor._make(count.astype(grad.dtype.np), grad.dtype, grad.device)
        return g


def _extent(shape, strides):
    """Elements of memory a (shape, strides) layout spans."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` and ``storage_offset`` (in elements)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    here = input.storage_offset()
    offset = here if storage_offset is None else int(storage_offset)
    root = input._base if input._base is not None else input
    have = _extent(root.shape, root.stride())
    need = offset + _extent(size, stride) if _extent(size, stride) else 0
    if need > have:
        it = input.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {it} requiring a storage size of {need * it} are out of bounds for storage of "
                           f"size {have * it}")
    return AsStrided.apply(input, size=size, stride=stride, delta=offset - here)


def _inplace_view(fn):
    """The in-place method ``x.op_(...)`` of view op ``fn``: ``x`` takes the view's layout and graph node."""
    def method(self, *args, **kwargs):
        if grad_enabled() and self._requires_grad and self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        out = fn(self, *args, **kwargs)
        self._data = out._data
        if out.grad_fn is not None:
            self.grad_fn, self._output_nr = out.grad_fn, out._output_nr
        if self._base is not None:
            self._view_chain = out._view_chain
        self._vc[0] += 1
        return self
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of :meth:`{fn.__name__}` (changes this tensor's shape and strides)."
    return method


def reshape_as(input, other):
    return reshape(input, other.shape)


register(expand, expand_as, broadcast_to, sum_to_size, reshape, reshape_as, view, view_as, permute, transpose,
         t, adjoint, movedim, squeeze, unsqueeze, flatten, unflatten, narrow, select, diagonal, unfold, as_strided,
         swapaxes=transpose, swapdims=transpose, moveaxis=movedim,
         T=property(_T), mT=property(_mT), H=property(_H), mH=property(_mH),
         t_=_inplace_view(t), transpose_=_inplace_view(transpose), swapaxes_=_inplace_view(transpose),
         swapdims_=_inplace_view(transpose), squeeze_=_inplace_view(squeeze), unsqueeze_=_inplace_view(unsqueeze),
         as_strided_=_inplace_view(as_strided))
