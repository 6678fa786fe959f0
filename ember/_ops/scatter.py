"""Gather and scatter along one dimension (gather, scatter, scatter_add, scatter_reduce, take_along_dim) and the
index_* ops that select whole slices along one dimension (index_select, index_add, index_copy, index_fill,
index_reduce). Gradients are as torch defines them, including scatter_reduce's prod, mean, amax and amin."""
import numpy as np

from .. import _dtype
from .._autocast import cpu_widest_inputs
from .._creation import zeros
from .._settings import warn_once
from .._tensor import Tensor, inplace, register, wrap_dim, write_out
from ..autograd.function import Function
from .index import BasicIndex, Where, _const, _xp, check_fill_value, inplace_expanded, pad_to
from .view import broadcast_pair
from .view import expand, reshape
from ._ufunc_at import ufunc_at

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "take_along_dim", "index_select", "index_add",
           "index_copy", "index_fill", "index_reduce"]

_ALL = slice(None)
_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}
_INDEX_DTYPES = (_dtype.int64, _dtype.int32)
def _1d(a):
    """0-d arrays as 1-D: torch treats a 0-d tensor as having one dimension of size 1 in these ops."""
    return a.reshape(1) if a.ndim == 0 else a


def _mesh(xp, index, dim):
    """The advanced index that reads ``index`` along ``dim`` and goes straight through the other dimensions."""
    nd = index.ndim
    return tuple(index if d == dim else xp.arange(n).reshape((n,) + (1,) * (nd - d - 1))
                 for d, n in enumerate(index.shape))


def _along(dim, index):
    return (_ALL,) * dim + (index,)


def _identity(reduce, dtype):
    """The value a reduction starts from when ``include_self=False``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


# -- gather / scatter --------------------------------------------------------------------------------------------------
class Gather(Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        return _1d(x)[_mesh(ctx.xp, _1d(index), dim)].reshape(index.shape)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        z = zeros(ctx.in_shape, dtype=grad.dtype, device=grad.device)
        return Scatter.apply(z, grad, index, dim=ctx.dim, reduce="sum", include_self=True), None


class Scatter(Function):
    """``x`` with ``src`` (an array, or a number) written at ``index`` along ``dim``, or combined there with
    ``reduce`` (sum, prod, mean, amax, amin), starting from ``x``'s values if ``include_self``."""

    @staticmethod
    def forward(ctx, x, src, index, dim, reduce, include_self):
        xp = ctx.xp
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        out = x.copy()
        o, idx = _1d(out), _1d(index)
        key = _mesh(xp, idx, dim)
        is_array = isinstance(src, xp.ndarray)
        if is_array:
            ctx.src_shape = src.shape
            s = _1d(src)[_corner(idx.shape)]
        else:
            ctx.value = src
            s = np.array(src).astype(x.dtype)[()]  # a number cast as torch casts it (2.7 into int64 is 2)
        if reduce is None:
            o[key] = s
            ctx.save_for_backward(index)
            return out
        if not include_self:
            o[key] = _identity(reduce, x.dtype)
        ufunc_at(xp, _UFUNC[reduce], o, key, s)
        if reduce == "mean":
            n = xp.full(o.shape, int(include_self), dtype=o.dtype if o.dtype.kind not in "iub" else np.int64)
            ufunc_at(xp, "add", n, key, 1)
            n = xp.maximum(n, 1)
            o[...] = o // n if o.dtype.kind in "iu" else o / n
            ctx.count = n.reshape(out.shape)
        if reduce in ("sum", "mean"):
            ctx.save_for_backward(index)
        else:
            ctx.save_for_backward(index, x, src if is_array else None, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        index, *rest = ctx.saved_tensors
        dim, reduce = ctx.dim, ctx.reduce
        need = ctx.needs_input_grad
        gx = gs = None
        if reduce is None:
            gx = Scatter.apply(grad, 0, index, dim=dim, reduce=None, include_self=True) if need[0] else None
            gs = Gather.apply(grad, index, dim=dim) if need[1] else None
        elif reduce == "sum":
            gx, gs = grad, Gather.apply(grad, index, dim=dim) if need[1] else None
        elif reduce == "mean":
            gx = grad / _const(ctx.count.astype(grad._data.dtype), grad.device)
            gs = Gather.apply(gx, index, dim=dim) if need[1] else None
        elif reduce == "prod":
            gx, gs = _prod_backward(ctx, grad, index, *rest)
        else:
            gx, gs = _minmax_backward(ctx, grad, index, *rest)
        if reduce is not None and not ctx.include_self and need[0]:
            gx = Scatter.apply(gx, 0, index, dim=dim, reduce=None, include_self=True)
        if gs is not None:
            shape = ctx.src_shape
            if gs.ndim != len(shape):  # a 0-d index with a 1-D src, or the reverse
                gs = reshape(gs, (1,) * len(shape))
            gs = pad_to(gs, shape)
        return gx if need[0] else None, gs, None


def _src_part(src, index):
    """The part of ``src`` that ``index`` reads (its leading corner of ``index``'s shape)."""
    if src.ndim and tuple(src.shape) != tuple(index.shape):
        return BasicIndex.apply(src, key=_corner(index.shape))
    return src


def _corner(shape):
    return tuple(slice(0, n) for n in shape)


def _prod_backward(ctx, grad, index, x, src, out):
    """torch's scatter_reduce 'prod' gradient: exact where ``x`` or ``src`` hold a single zero."""
    xp, dim, incl, dev = _xp(grad), ctx.dim, ctx.include_self, grad.device
    masked_x = Where.apply(_const(x._data == 0, dev), 1, x, dtype=x.dtype)
    other = src if src is not None else ctx.value
    gx = grad * Scatter.apply(masked_x, other, index, dim=dim, reduce="prod", include_self=incl) / masked_x
    if src is None or not ctx.needs_input_grad[1]:
        return gx, None
    part = _src_part(src, index)
    zero = part._data == 0
    key = _mesh(xp, _1d(index._data), dim)
    count = xp.zeros(_1d(x._data).shape, dtype=np.int64)
    ufunc_at(xp, "add", count, key, _1d(zero))
    single = _const(zero & (count[key].reshape(zero.shape) == 1), dev)
    masked_src = Where.apply(single, 1, part, dtype=part.dtype)
    with_masked = Scatter.apply(x, masked_src, index, dim=dim, reduce="prod", include_self=incl)
    gs = Where.apply(single, Gather.apply(grad * with_masked, index, dim=dim),
                     Gather.apply(grad * out, index, dim=dim) / Where.apply(_const(zero, dev), 1, part,
                                                                            dtype=part.dtype), dtype=grad.dtype)
    return gx, gs


def _minmax_backward(ctx, grad, index, x, src, out):
    """torch's scatter_reduce 'amax'/'amin' gradient: shared evenly among the elements equal to the result."""
    xp, dim, dev, dt = _xp(grad), ctx.dim, grad.device, grad._data.dtype
    key = _mesh(xp, _1d(index._data), dim)
    o = _1d(out._data)
    self_is = (_1d(x._data) == o).astype(dt)
    count = self_is.copy()
    src_is = None
    if src is not None:
        src_is = (_1d(src._data)[_corner(_1d(index._data).shape)] == o[key]).astype(dt)
        ufunc_at(xp, "add", count, key, src_is)
    shared = grad / _const(count.reshape(out.shape), dev)
    gx = _const(self_is.reshape(out.shape), dev) * shared
    gs = None
    if src is not None and ctx.needs_input_grad[1]:
        gs = _const(src_is.reshape(index.shape), dev) * Gather.apply(shared, index, dim=dim)
    return gx, gs


def _size(t, d):
    return t.shape[d] if t.ndim else 1


_OUT_OF_BOUNDS = "index {v} is out of bounds for dimension {dim} with size {size}"


def _check_bounds(index, dim, size, error=RuntimeError, msg=_OUT_OF_BOUNDS, negative=False):
    """Every index in [0, size) (in [-size, size) with ``negative``), else ``error(msg)``."""
    a = index._data
    if a.size:
        lo, hi, low = int(a.min()), int(a.max()), -size if negative else 0
        if lo < low or hi >= size:
            raise error(msg.format(v=lo if lo < low else hi, dim=dim, size=size))


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim=0`` (and likewise for other dims).

    Example::

        >>> ember.tensor([[1., 2.], [3., 4.]]).gather(1, ember.tensor([[0, 0], [1, 0]]))
        tensor([[1., 1.],
                [4., 3.]])
    """
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, input.ndim)
    if max(index.ndim, 1) != max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.numel():
        for i in range(max(input.ndim, 1)):
            if i != d and _size(index, i) > _size(input, i):
                raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be "
                                   f"no larger than self {list(input.shape)} apart from dimension {d}")
        _check_bounds(index, d, _size(input, d))
    return write_out(Gather.apply(input, index, dim=d), out)


def _check_scatter(input, dim, index, src):
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, input.ndim)
    is_tensor = isinstance(src, Tensor)
    if is_tensor and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    nd = max(input.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if index.numel():
        for i in range(nd):
            if is_tensor and 0 < src.ndim <= i:  # torch reads src.size(i) before comparing the ranks
                raise IndexError(f"Dimension out of range (expected to be in range of [{-src.ndim}, "
                                 f"{src.ndim - 1}], but got {i})")
            if (i != d and _size(index, i) > _size(input, i)) or (is_tensor and _size(index, i) > _size(src, i)):
                msg = (f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} apart "
                       f"from dimension {d}")
                raise RuntimeError(msg + (f" and to be no larger size than src {list(src.shape)}" if is_tensor
                                          else ""))
        _check_bounds(index, d, _size(input, d))
    if is_tensor and max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    return d


def scatter(input, dim, index, src=None, reduce=None, *, value=None):
    """``input`` with ``src`` (a tensor, or a number ``value``) written at ``index`` along ``dim``:
    ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``. ``reduce`` 'add' or 'multiply' combines instead."""
    if src is None:
        src = value
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    d = _check_scatter(input, dim, index, src)
    if not isinstance(src, Tensor):
        check_fill_value(src, input.dtype)
    elif reduce is not None:
        warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
                   "PyTorch release. Use torch.scatter_reduce instead for more reduction options.")
    return Scatter.apply(input, src, index, dim=d, reduce={"add": "sum", "multiply": "prod"}.get(reduce),
                         include_self=True)


def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
    d = _check_scatter(input, dim, index, src)
    return Scatter.apply(input, src, index, dim=d, reduce="sum", include_self=True)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src`` reduced into it at ``index`` along ``dim``; ``reduce`` is 'sum', 'prod', 'mean',
    'amax' or 'amin'; without ``include_self`` the scattered-to elements of ``input`` take no part."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter(input, dim, index, src)
    return Scatter.apply(input, src, index, dim=d, reduce=reduce, include_self=include_self)


def take_along_dim(input, indices, dim=None, *, out=None):
    """``input`` read at ``indices`` along ``dim`` (the two broadcast in the other dimensions; indices wrap modulo
    the size of ``dim``); with ``dim=None``, the flattened ``input`` at the flattened ``indices``."""
    if dim is None:
        return write_out(gather(reshape(input, (-1,)), 0, reshape(indices, (-1,))), out)
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype.scalar_name(indices.dtype)}")
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = wrap_dim(dim, input.ndim)
    a, b = list(input.shape), list(indices.shape)
    a[d] = b[d] = 1
    shape = list(broadcast_pair(tuple(a), tuple(b)))
    in_shape, idx_shape = shape[:d] + [input.shape[d]] + shape[d + 1:], shape[:d] + [indices.shape[d]] + shape[d + 1:]
    if list(input.shape) != in_shape:
        input = expand(input, in_shape)
    n, idx = input.shape[d], indices._data
    if idx.size:  # indices count modulo the size of ``dim``, so negative ones wrap
        if n == 0:
            raise RuntimeError("ZeroDivisionError")
        idx = _xp(indices).remainder(idx, n)
    indices = _const(_xp(indices).broadcast_to(idx, idx_shape), indices.device)
    return write_out(gather(input, d, indices), out)


# -- index_select / index_add / index_copy / index_fill / index_reduce -------------------------------------------------
class IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        out = ctx.xp.take(_1d(x), _1d(index), axis=dim)
        return out.reshape(()) if x.ndim == 0 else out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        z = zeros(ctx.in_shape, dtype=grad.dtype, device=grad.device)
        return IndexAdd.apply(z, grad, index, dim=ctx.dim, alpha=1), None


class IndexAdd(Function):
    @staticmethod
    def forward(ctx, x, src, index, dim, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(index)
        out = x.copy()
        s = _1d(src) if alpha == 1 else (_1d(src) * alpha).astype(x.dtype, copy=False)
        ufunc_at(ctx.xp, "add", _1d(out), _along(dim, _1d(index)), s)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        gs = None
        if ctx.needs_input_grad[1]:
            gs = IndexSelect.apply(grad, index, dim=ctx.dim)
            gs = gs if ctx.alpha == 1 else gs * ctx.alpha
        return grad, gs, None


class IndexCopy(Function):
    @staticmethod
    def forward(ctx, x, src, index, dim):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x.copy()
        _1d(out)[_along(dim, _1d(index))] = _1d(src)
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (IndexFill.apply(grad, 0, index, dim=ctx.dim) if need[0] else None,
                IndexSelect.apply(grad, index, dim=ctx.dim) if need[1] else None, None)


class IndexFill(Function):
    @staticmethod
    def forward(ctx, x, value, index, dim):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x.copy()
        _1d(out)[_along(dim, _1d(index))] = value
        return out

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        gx = IndexFill.apply(grad, 0, index, dim=ctx.dim)
        return gx, (grad - gx).sum() if ctx.needs_input_grad[1] else None, None


def _name(d):
    return _dtype.scalar_name(d)


def _check_vector(op, index):
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_name(index.dtype)} and size: {list(index.shape)}")


def index_select(input, dim, index, *, out=None):
    """The slices of ``input`` at positions ``index`` (a 1-D tensor) along ``dim``."""
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    if input.ndim > 1 and index.numel():  # torch's kernel for dim 1 words the error differently
        if input.shape[d] == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if d == 1 or not input.numel():
            _check_bounds(index, d, input.shape[d], msg="INDICES element is out of DATA bounds, id={v} axis_dim={size}")
    _check_bounds(index, d, _size(input, d), IndexError, "index out of range in self")
    return write_out(IndexSelect.apply(input, index, dim=d), out)


def _check_index_add(op, input, dim, index, source):
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: {_name(index.dtype)}")
    _check_vector(op, index)
    d = wrap_dim(dim, input.ndim)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self ({_name(input.dtype)}) and source ({_name(source.dtype)}) must have the "
                           "same scalar type")
    if index.numel() != _size(source, d):
        raise RuntimeError(f"{op}(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({_size(source, d)}), for dim: {d}")
    if input.ndim != source.ndim or any(a != b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    return d


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """``input`` with ``alpha * source`` added at positions ``index`` along ``dim`` (repeats accumulate)."""
    d = _check_index_add("index_add_", input, dim, index, source)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        alpha = int(alpha)  # in the input's dtype, as the values it scales
    # an out-of-range index is a RuntimeError along an outer or inner dim with an int64 index and alpha 1, else an
    # IndexError, as torch reports it
    put = input.ndim > 1 and d in (0, input.ndim - 1) and index.dtype is _dtype.int64 and alpha == 1
    _check_bounds(index, d, _size(input, d), *(() if put else (IndexError, "index out of range in self")))
    return write_out(IndexAdd.apply(input, source, index, dim=d, alpha=alpha), out)


@cpu_widest_inputs  # on CPU autocast's widest-type list
def index_copy(input, dim, index, source):
    """``input`` with the slices at positions ``index`` along ``dim`` replaced by those of ``source``."""
    if index.dtype is not _dtype.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_name(index.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    d = wrap_dim(dim, input.ndim)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_name(input.dtype)} and (source) {_name(source.dtype)}")
    if source.ndim == 0 and index.numel() != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got "
                         f"{index.numel()})")
    if index.numel() != _size(source, d):
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({_size(source, d)})")
    rest_in = [s for i, s in enumerate(input.shape) if i != d]
    rest_src = [s for i, s in enumerate(source.shape) if i != d]
    if source.ndim and rest_in != rest_src:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, rest_in))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, rest_src))} at dimension {d}.")
    _check_bounds(index, d, _size(input, d), IndexError, "index_copy_(): " + _OUT_OF_BOUNDS)
    return IndexCopy.apply(input, source, index, dim=d)


def index_fill(input, dim, index, value):
    """``input`` with ``value`` (a number or a 0-d tensor) at positions ``index`` along ``dim``."""
    if index.dtype is not _dtype.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    d = wrap_dim(dim, input.ndim)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    check_fill_value(value, input.dtype)
    if isinstance(value, Tensor):
        value = value.to(input.dtype)
    _check_bounds(index, d, _size(input, d), IndexError, negative=True)
    return IndexFill.apply(input, value, index, dim=d)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` reduced into positions ``index`` along ``dim``; ``reduce`` is
    'prod', 'mean', 'amax' or 'amin'."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    warn_once("index_reduce() is in beta and the API may change at any time.")
    d = _check_index_add("index_reduce_", input, dim, index, source)
    _check_bounds(index, d, _size(input, d), IndexError, "index out of range in self")
    shape = [1] * source.ndim
    if source.ndim:
        shape[d] = index.numel()
    full = _xp(index).broadcast_to(index._data.reshape(shape), tuple(source.shape))
    return Scatter.apply(input, source, _const(full, index.device), dim=d, reduce=reduce, include_self=include_self)


register(gather, scatter, scatter_add, scatter_reduce, take_along_dim, index_select, index_add, index_copy,
         index_fill, index_reduce,
         scatter_=inplace(scatter), scatter_add_=inplace(scatter_add), scatter_reduce_=inplace(scatter_reduce),
         index_add_=inplace(index_add), index_copy_=inplace(index_copy.__wrapped__),
         index_fill_=inplace_expanded(index_fill, "tensor[mask] = scalar"),
         index_reduce_=inplace(index_reduce))
