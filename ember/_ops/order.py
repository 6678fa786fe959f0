"""Reductions that select elements by order: max/min, amax/amin, aminmax, argmax/argmin, median, mode, quantile.

Their gradients go to the selected elements: through the returned indices (split evenly among ties when no index
is returned, as torch does), by the sparse gather/scatter pair below.
"""

__all__ = ["max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "median", "nanmedian", "mode", "quantile",
           "nanquantile"]
import math

import numpy as np

from .. import _dtype, return_types
from .._autocast import float32_inputs
from .._kernels import reduction
from .._tensor import Tensor, register, wrap_dim, write_out
from ..autograd.function import Function
from .matmul import write_same, write_same_all
from .reduce import _dims, _kept_shape, _quiet, _restore, numpy_aliases

_INT64 = _dtype.int64.np


# -- the gradient path: a sparse linear map and its adjoint -----------------------------------------------------------
class SparseScatter(Function):
    """``out.flat[flat[..., j]] += weights[..., j] * g[...]``: scatters ``g`` into a zero tensor of ``shape``."""

    @staticmethod
    def forward(ctx, g, flat, weights, shape):
        xp = ctx.xp
        ctx.flat, ctx.weights, ctx.out_shape = flat, weights, g.shape
        vals = xp.broadcast_to(g[..., None], flat.shape) if weights is None else g[..., None] * weights
        n = math.prod(shape)
        out = xp.bincount(flat.reshape(-1), weights=vals.reshape(-1).astype("float64"), minlength=n)
        return out.astype(g.dtype).reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return SparseGather.apply(grad, flat=ctx.flat, weights=ctx.weights, shape=ctx.out_shape)


class SparseGather(Function):
    """``out[...] = sum_j weights[..., j] * x.flat[flat[..., j]]``: the adjoint of :class:`SparseScatter`."""

    @staticmethod
    def forward(ctx, x, flat, weights, shape):
        ctx.flat, ctx.weights, ctx.in_shape = flat, weights, x.shape
        v = x.reshape(-1)[flat]
        return (v if weights is None else v * weights).sum(-1).reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return SparseScatter.apply(grad, flat=ctx.flat, weights=ctx.weights, shape=ctx.in_shape)


def flat_index(xp, idx, dim, shape):
    """Positions in the flattened input (of ``shape``) of the elements that ``idx`` picks along ``dim``."""
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    flat = idx * strides[dim]
    for k, n in enumerate(idx.shape):
        if k != dim and n > 1:  # plus each element's own coordinate along the other dims
            flat = flat + (xp.arange(n) * strides[k]).reshape((n,) + (1,) * (idx.ndim - k - 1))
    return flat


def argsort(xp, a, axis):
    """A stable argsort (NaNs last); CuPy's is always stable and takes no ``kind``."""
    return xp.argsort(a, axis=axis, kind="stable") if xp.__name__ == "numpy" else xp.argsort(a, axis=axis)


def _check_dims(name, input, dims, shown=None, sep="()"):
    if input.numel() == 0:
        for d, s in zip(dims, shown or dims):
            if input.shape[d] == 0:
                raise IndexError(f"{name}{sep}: Expected reduction dim {s} to have non-zero size.")


def _check_full(name, input):
    if input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")


def _no_complex(input, kernel):
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(input.dtype)}'")


def _no_complex_dim(name, input):
    if input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")


# -- values only: amax/amin, max()/min()/median() over everything ------------------------------------------------------
class Extreme(Function):
    """The value ``pick`` selects over ``dims``; the gradient is split evenly among the elements equal to it."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dims, keepdim, pick, nan_aware):
        xp = ctx.xp
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        y = pick(xp, x, dims)  # reduced dims kept
        if ctx.needs_input_grad:
            hit = x == y
            if nan_aware:
                hit |= xp.isnan(x) & xp.isnan(y)
            with _quiet(xp):
                ctx.save_for_backward(hit / xp.sum(hit, axis=dims, keepdims=True).astype(x.dtype))
        return y if keepdim else y.reshape([s for i, s in enumerate(x.shape) if i not in dims])

    @staticmethod
    def backward(ctx, grad):
        (share,) = ctx.saved_tensors
        return _restore(grad, ctx.in_shape, ctx.dims, ctx.keepdim) * share


def _amax(xp, x, dims):
    return reduction.amax(x, dims, True)


def _amin(xp, x, dims):
    return reduction.amin(x, dims, True)


@numpy_aliases
def amax(input, dim=(), keepdim=False, *, out=None):
    """The maximum over ``dim`` (every dimension by default); the gradient is split evenly among ties.

    Example::

        >>> ember.tensor([[1., 5.], [3., 2.]]).amax(1)
        tensor([5., 3.])
    """
    return write_out(_extreme("amax", input, dim, keepdim, _amax), out)


@numpy_aliases
def amin(input, dim=(), keepdim=False, *, out=None):
    """The minimum over ``dim`` (every dimension by default); the gradient is split evenly among ties."""
    return write_out(_extreme("amin", input, dim, keepdim, _amin), out)


def _extreme(name, input, dim, keepdim, pick):
    _no_complex(input, f"{name[1:]}_values_cpu")
    dims = _dims(dim, input.ndim)
    if dim is None or type(dim) in (tuple, list) and not dim:
        _check_full(name, input)
    _check_dims(name, input, dims, (int(dim),) if isinstance(dim, (int, np.integer)) else dim)
    return Extreme.apply(input, dims=dims, keepdim=keepdim, pick=pick, nan_aware=False)


@numpy_aliases
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` of ``input`` over ``dim`` (everything when None) as a named tuple.

    Example::

        >>> ember.aminmax(ember.tensor([3., 1., 2.]))
        ember.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    _no_complex(input, "aminmax_cpu")
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    dims = _dims(dim, input.ndim)
    _check_dims("aminmax", input, dims, sep="")
    return _write_pair(return_types.aminmax(
        Extreme.apply(input, dims=dims, keepdim=keepdim, pick=_amin, nan_aware=False),
        Extreme.apply(input, dims=dims, keepdim=keepdim, pick=_amax, nan_aware=False)), out)


# -- values and indices along one dim ---------------------------------------------------------------------------------
class SelectAlong(Function):
    """The element ``pick`` chooses along ``dim`` and its index; the gradient goes to that element."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dim, keepdim, pick):
        xp = ctx.xp
        ctx.in_shape = x.shape
        if x.ndim == 0:
            x = x.reshape(1)
        idx = pick(xp, x, dim)  # (kept shape) indices along dim
        vals = xp.take_along_axis(x, idx, dim)
        if ctx.needs_input_grad:
            ctx.flat = flat_index(xp, idx, dim, x.shape)[..., None]
        if not keepdim or not ctx.in_shape:
            shape = tuple(s for i, s in enumerate(ctx.in_shape) if i != dim)
            vals, idx = vals.reshape(shape), idx.reshape(shape)
            if ctx.needs_input_grad:
                ctx.flat = ctx.flat.reshape(shape + (1,))
        return vals, idx.astype(_INT64)

    @staticmethod
    def backward(ctx, grad, _):
        return SparseScatter.apply(grad, flat=ctx.flat, weights=None, shape=ctx.in_shape)


def _argmax(xp, x, dim):
    return reduction.argmax(x, dim, True)


def _argmin(xp, x, dim):
    return reduction.argmin(x, dim, True)


def _write_pair(result, out):
    """The ``(values, indices)`` pair, copied into ``out`` (a pair of tensors) when given."""
    return write_same_all(result, out)


def _select(name, input, dim, keepdim, pick, result):
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = int(dim)
    d = wrap_dim(dim, input.ndim)
    if input.ndim:
        _check_dims(name, input, (d,))
    return result(*SelectAlong.apply(input, dim=d, keepdim=keepdim, pick=pick))


def _max_or_min(name, input, dim, keepdim, other, pick, result, out):
    if other is None and isinstance(dim, Tensor):
        other = dim
    if other is not None:
        from .. import maximum, minimum
        return write_out((maximum if name == "max" else minimum)(input, other), out)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, keepdim=bool), "
                            f"but expected one of: (Tensor input), (Tensor input, Tensor other), "
                            f"(Tensor input, int dim, bool keepdim = False)")
        _no_complex(input, f"{name}_all")
        _check_full(name, input)
        return write_out(Extreme.apply(input, dims=tuple(range(input.ndim)), keepdim=False, pick=pick,
                                       nan_aware=True), out)
    _no_complex_dim(name, input)
    return _write_pair(_select(name, input, dim, keepdim, _argmax if name == "max" else _argmin, result), out)


@numpy_aliases
def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """The maximum of all elements; with ``dim``, ``(values, indices)`` along it; with a tensor, :func:`maximum`.

    Example::

        >>> ember.tensor([[1., 5.], [3., 2.]]).max(dim=1)
        ember.return_types.max(
        values=tensor([5., 3.]),
        indices=tensor([1, 0]))
    """
    return _max_or_min("max", input, dim, keepdim, other, _amax, return_types.max, out)


@numpy_aliases
def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """The minimum of all elements; with ``dim``, ``(values, indices)`` along it; with a tensor, :func:`minimum`."""
    return _max_or_min("min", input, dim, keepdim, other, _amin, return_types.min, out)


class ArgExtreme(Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        xp = ctx.xp
        find = reduction.argmax if largest else reduction.argmin
        if dim is None:
            i = find(x.reshape(-1))
            return xp.asarray(i, dtype=_INT64).reshape((1,) * x.ndim if keepdim else ())
        if x.ndim == 0:
            return xp.zeros((), dtype=_INT64)
        return find(x, dim, keepdim).astype(_INT64)


def _arg(name, input, dim, keepdim, largest):
    if input.dtype is _dtype.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    _no_complex_dim(name, input)
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    else:
        dim = wrap_dim(dim, input.ndim)
        if input.ndim:
            _check_dims(name, input, (dim,))
    return ArgExtreme.apply(input, dim=dim, keepdim=keepdim, largest=largest)


@numpy_aliases
def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the maximum along ``dim`` (of the flattened input when None); the first one among ties.

    Example::

        >>> ember.tensor([[1., 5.], [3., 2.]]).argmax(1)
        tensor([1, 0])
    """
    return write_same(_arg("argmax", input, dim, keepdim, True), out)


@numpy_aliases
def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the minimum along ``dim`` (of the flattened input when None); the first one among ties."""
    return write_same(_arg("argmin", input, dim, keepdim, False), out)


# -- median / mode ----------------------------------------------------------------------------------------------------
def _median_index(xp, x, dim, ignore_nan):
    """Index along ``dim`` of the lower median; with NaNs, of the first NaN (or, ignoring them, of the median of the
    rest)."""
    order = argsort(xp, x, dim)
    n = x.shape[dim]
    kept = _kept_shape(x.shape, (dim,))
    nans = xp.sum(xp.isnan(x), axis=dim, keepdims=True) if x.dtype.kind == "f" else xp.zeros(kept, dtype=_INT64)
    if ignore_nan:
        k = xp.maximum((n - nans - 1) // 2, 0)
    else:
        k = xp.where(nans > 0, n - nans, (n - 1) // 2)
    return xp.take_along_axis(order, k.astype(_INT64), dim)


def _median(xp, x, dim):
    return _median_index(xp, x, dim, False)


def _nanmedian(xp, x, dim):
    return _median_index(xp, x, dim, True)


def _median_value(ignore_nan):
    def pick(xp, x, dims):
        flat = x.reshape(-1)
        if flat.size == 0:  # torch's NaN, cast to the dtype
            fill = math.nan if x.dtype.kind == "f" else True if x.dtype == bool else xp.iinfo(x.dtype).min
            return xp.full((1,) * x.ndim, fill, dtype=x.dtype)
        return flat[_median_index(xp, flat, 0, ignore_nan)].reshape((1,) * x.ndim)
    return pick


_PICK_MEDIAN, _PICK_NANMEDIAN = _median_value(False), _median_value(True)


def _median_op(name, input, dim, keepdim, ignore_nan, result, out):
    if dim is None and (out is not None or keepdim):
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    boolean = input.dtype is _dtype.bool
    _no_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        if boolean and input.numel():
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
        return Extreme.apply(input, dims=tuple(range(input.ndim)), keepdim=False,
                             pick=_PICK_NANMEDIAN if ignore_nan else _PICK_MEDIAN, nan_aware=True)
    if boolean:
        _check_dims(name, input, (wrap_dim(dim, input.ndim),))
        raise NotImplementedError(f"\"{name}_out\" not implemented for 'Bool'")
    return _select(name, input, dim, keepdim, _nanmedian if ignore_nan else _median, result)


@numpy_aliases
def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median of all elements (NaN if any is NaN); with ``dim``, ``(values, indices)`` along it.

    Example::

        >>> ember.tensor([4., 1., 3., 2.]).median()
        tensor(2.)
    """
    return _write_pair(_median_op("median", input, dim, keepdim, False, return_types.median, out), out)


@numpy_aliases
def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """:func:`median` ignoring NaNs (NaN only where every element is NaN)."""
    return _write_pair(_median_op("nanmedian", input, dim, keepdim, True, return_types.nanmedian, out), out)


def _mode(xp, x, dim):
    """Index along ``dim`` of the most frequent value (the smallest among equally frequent ones), its last
    occurrence."""
    order = argsort(xp, x, dim)
    s = xp.take_along_axis(x, order, dim)
    s, order = xp.moveaxis(s, dim, -1), xp.moveaxis(order, dim, -1)
    n = s.shape[-1]
    new = xp.ones(s.shape, dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]  # a run of equal values starts here (NaNs never equal)
    run = xp.cumsum(new, axis=-1) - 1
    starts = argsort(xp, ~new, -1)  # the runs' first positions, in order, come first
    length = xp.arange(n) - xp.take_along_axis(starts, run, -1) + 1
    best = xp.argmax(length, axis=-1, keepdims=True)  # the end of the first longest run
    return xp.moveaxis(xp.take_along_axis(order, best, -1), -1, dim)


@numpy_aliases
def mode(input, dim=-1, keepdim=False, *, out=None):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest if several) and its last index.

    Example::

        >>> ember.mode(ember.tensor([3, 1, 1, 3, 2]))
        ember.return_types.mode(
        values=tensor(1),
        indices=tensor(2))
    """
    _no_complex(input, "mode_cpu")
    return _write_pair(_select("mode", input, dim, keepdim, _mode, return_types.mode), out)


# -- quantile ---------------------------------------------------------------------------------------------------------
class Quantile(Function):
    @staticmethod
    def forward(ctx, x, q, dim, keepdim, interpolation, ignore_nan):
        xp = ctx.xp
        ctx.in_shape, ctx.q_dims = x.shape, () if xp.ndim(q) == 0 else (0,)
        pos = xp.arange(x.size).reshape(x.shape)
        if dim is None:
            xm, pos = x.reshape(-1), pos.reshape(-1)
        else:
            xm, pos = xp.moveaxis(x, dim, -1), xp.moveaxis(pos, dim, -1)
        order = argsort(xp, xm, -1)
        s, pos = xp.take_along_axis(xm, order, -1), xp.take_along_axis(pos, order, -1)
        last = s.shape[-1] - 1
        nan = xp.isnan(s)
        qa = xp.asarray(q, dtype=x.dtype).reshape(-1)
        if ignore_nan:  # ranks among the non-NaN values; all NaN gives rank 0, a NaN
            rate = (last - xp.sum(nan, axis=-1, keepdims=True)).astype(x.dtype)
            ranks = qa * rate
            rate = xp.where(ranks < 0, 0, rate)
            ranks = xp.where(ranks < 0, 0, ranks)
        else:  # any NaN: the last rank, a NaN
            has_nan = xp.any(nan, axis=-1, keepdims=True)
            rate = xp.where(has_nan, 0, last).astype(x.dtype)
            ranks = xp.where(has_nan, last, qa * last).astype(x.dtype)
        if interpolation == "lower":
            ranks = xp.floor(ranks)
        elif interpolation == "higher":
            ranks = xp.ceil(ranks)
        elif interpolation == "nearest":
            ranks = xp.round(ranks)  # half to even, as torch
        lo = ranks.astype(_INT64)
        below = xp.take_along_axis(s, lo, -1)
        flats, weights = [xp.take_along_axis(pos, lo, -1)], []  # where the gradient goes, and how much
        if interpolation in ("linear", "midpoint"):
            w = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - xp.floor(ranks)
            hi = xp.ceil(ranks).astype(_INT64)
            above = xp.take_along_axis(s, hi, -1)
            with _quiet(xp):
                if interpolation == "linear":  # d out / d q: the gap between the neighbours times d rank / d q
                    ctx.dq = (above - below) * rate
                below = xp.where(w < 0.5, below + w * (above - below), above - (above - below) * (1 - w))
            flats.append(xp.take_along_axis(pos, hi, -1))
            weights += [1 - w, w]
        # (..., nq) -> (nq, ...) with the reduced dims removed or kept
        out_shape = (() if xp.ndim(q) == 0 else (qa.size,)) + (
            _kept_shape(x.shape, range(x.ndim) if dim is None else (dim,)) if keepdim else
            tuple(s for i, s in enumerate(x.shape) if dim is not None and i != dim))

        def arrange(a):
            return xp.ascontiguousarray(xp.moveaxis(a, -1, 0)).reshape(out_shape)
        if ctx.needs_input_grad:
            ctx.flat = xp.stack([arrange(t) for t in flats], axis=-1)
            ctx.weights = xp.stack([arrange(t) for t in weights], axis=-1) if weights else None
            ctx.dq = arrange(ctx.dq) if hasattr(ctx, "dq") else None
        return arrange(below)

    @staticmethod
    def backward(ctx, grad):
        gx = gq = None
        if ctx.needs_input_grad[0]:
            gx = SparseScatter.apply(grad, flat=ctx.flat, weights=ctx.weights, shape=ctx.in_shape)
        if ctx.needs_input_grad[1] and ctx.dq is not None:
            g = grad * Tensor._make(ctx.dq, grad.dtype, grad.device)
            rest = [d for d in range(g.ndim) if d not in ctx.q_dims]
            gq = g.sum(rest) if rest else g
        return gx, gq


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.device != input.device:
            raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
        qd = q._data
        if qd.size and not bool(((qd >= 0) & (qd <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    elif isinstance(q, (int, float)) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        qd = q
    else:
        raise TypeError(f"{name}(): argument 'q' must be a Tensor or a float, not {type(q).__name__}")
    if dim is not None and (not isinstance(dim, (int, np.integer)) or isinstance(dim, bool)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = None if dim is None else int(dim)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if input.numel() > 1 << 24:
        raise RuntimeError("quantile() input tensor is too large")
    if dim is not None:
        dim = wrap_dim(dim, input.ndim) if input.ndim else None
    return Quantile.apply(input, q, dim=dim, keepdim=keepdim, interpolation=interpolation, ignore_nan=ignore_nan)


@numpy_aliases
@float32_inputs
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-quantiles (a number or a 1-D tensor in [0, 1]) of ``input`` along ``dim`` (flattened when None).
    A 1-D ``q`` adds a leading dimension; ``interpolation`` is linear, lower, higher, midpoint or nearest.

    Example::

        >>> ember.quantile(ember.tensor([0., 1., 2., 3.]), 0.5)
        tensor(1.5000)
    """
    return write_out(_quantile("quantile", input, q, dim, keepdim, interpolation, False), out)


@numpy_aliases
@float32_inputs
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaNs (NaN only where every element is NaN)."""
    return write_out(_quantile("nanquantile", input, q, dim, keepdim, interpolation, True), out)


register(max, min, amax, amin, aminmax, argmax, argmin, median, nanmedian, mode, quantile, nanquantile)
