"""Reductions over dimensions: sum/mean (and their NaN-ignoring forms), prod, var/std, norm, logsumexp, all/any.

``dim`` is an int, a tuple/list of ints, or None (every dimension); ``keepdim`` and ``dtype`` behave as in torch.
"""

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "var", "std", "var_mean", "std_mean", "norm", "logsumexp",
           "all", "any", "count_nonzero"]
import builtins
import contextlib
import functools
import math
import warnings

import numpy as np

from .. import _dtype
from .._autocast import float32_inputs
from .._device import array_module
from .._kernels import reduction
from .._kernels.elementwise import binary as ufunc2, unary as ufunc1
from .._tensor import Tensor, register, write_out
from ..autograd.function import Function, direct_result
from .view import Expand, reshape

_tname = _dtype.scalar_name  # the name torch's messages give a dtype (``Long`` for int64)


_EVERY_DIM = tuple(range(64))  # sliced: cheaper than building tuple(range(ndim)) on every call


def _dims(dim, ndim):
    """``dim`` as a tuple of distinct dims in ``[0, ndim)``; None, () and [] mean every dimension."""
    if dim is None or type(dim) in (tuple, list) and not dim:
        return _EVERY_DIM[:ndim]
    dims = (dim,) if isinstance(dim, (int, np.integer, Tensor)) else tuple(dim)
    n = ndim or 1
    out = []
    for d in dims:
        if isinstance(d, Tensor):  # an integer tensor of one element stands for its value
            d = d.__index__()
        if not isinstance(d, (int, np.integer)) or isinstance(d, (bool, np.bool_)):
            raise TypeError(f"dim must be an int or a tuple of ints, but got an element of type {type(d).__name__}")
        d = int(d)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out) if ndim else ()


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _count(shape, dims):
    return math.prod(shape[d] for d in dims)


def _restore(t, in_shape, dims, keepdim):
    """A reduced tensor reshaped to keep its reduced dims as size 1 (broadcastable against the input)."""
    return t if keepdim else reshape(t, _kept_shape(in_shape, dims))


def _unsqueeze_to(grad, in_shape, dims, keepdim):
    """``grad`` of a reduction over ``dims`` broadcast back to ``in_shape``: one Expand when the reduced dims lead
    (as in a full reduction), since broadcasting aligns the trailing dims."""
    if not keepdim and dims != _EVERY_DIM[:len(dims)]:
        grad = reshape(grad, _kept_shape(in_shape, dims))
    return Expand.apply(grad, shape=tuple(in_shape))


def _quiet(xp):
    """NumPy's floating-point warnings off (torch does not warn on inf/nan); CuPy never warns."""
    return xp.errstate(all="ignore") if hasattr(xp, "errstate") else contextlib.nullcontext()


def numpy_keywords(name, dim, keepdim, axis, keepdims):
    """``dim`` and ``keepdim`` given torch's NumPy-style keywords ``axis`` and ``keepdims`` (for hot functions,
    which take them as keyword-only arguments rather than through :func:`numpy_aliases`' extra call)."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}() got multiple values for argument 'dim'")
        dim = axis
    return dim, keepdim if keepdims is None else keepdims


def numpy_aliases(fn):
    """Accepts torch's NumPy-style keywords: ``axis`` for ``dim`` and ``keepdims`` for ``keepdim``."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if not kwargs:
            return fn(*args)
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    return op


def _cast(input, dtype):
    return input if dtype is None else input.to(_dtype.to_dtype(dtype))


# -- sum / mean -------------------------------------------------------------------------------------------------------
class Sum(Function):
    """sum, mean (``mean``), and their NaN-ignoring forms (``nan``): one kernel, one linear backward."""
    half_in_float32 = True
    n = None  # mean: the count divided by

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype=None, nan=False, mean=False):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if not (nan or mean):
            return reduction.sum(x, dims, keepdim, dtype)
        xp = ctx.xp
        keep = None
        if nan and x.dtype.kind == "f":
            keep = ~xp.isnan(x)
            x = xp.where(keep, x, 0)
        y = reduction.sum(x, dims, keepdim, dtype)
        if mean:
            if keep is None:
                ctx.n = n = x.size // y.size if y.size else _count(x.shape, dims)
                if not n:  # only 0 / 0 warns
                    with _quiet(xp):
                        y = y / n
                elif y.ndim:  # new memory: divided in place
                    xp.true_divide(y, n, out=y)
                else:  # a 0-d array's ``out=`` costs more than the division
                    y = y / n
            else:
                n = keep.sum(axis=dims, keepdims=keepdim)
                with _quiet(xp):
                    y = (y / n).astype(y.dtype)
                if ctx.needs_input_grad:
                    keep = keep / keep.sum(axis=dims, keepdims=True).astype(x.dtype)
        if keep is not None:
            ctx.save_for_backward(keep)
        return y

    @staticmethod
    def backward(ctx, grad):
        g = _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        saved = ctx.saved_tensors
        if saved:  # zero for NaNs; nanmean's keep already holds 1/count
            return g * saved[0]
        return g if ctx.n is None else g / ctx.n


def _sum_dtype(input, dtype):
    """The accumulator NumPy must be told: int64 for integers and bools, unless ``dtype`` (which the input is cast
    to first) asks for another integer type. Floating types accumulate in their own (half: float32) precision."""
    dt = input.dtype if dtype is None else _dtype.to_dtype(dtype)
    if dt.is_floating_point or dt.is_complex:
        return None
    return dt.np if dtype is not None else _dtype.int64.np


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Sum over ``dim`` (every element when None); integers and bools sum to int64.

    Example::

        >>> ember.tensor([[1., 2.], [3., 4.]]).sum(1)
        tensor([3., 7.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_keywords("sum", dim, keepdim, axis, keepdims)
    a = input._data
    dims = _EVERY_DIM[:a.ndim] if dim is None else _dims(dim, a.ndim)
    if out is not None and dtype is None:
        dtype = out.dtype  # sums into out in its dtype
    if dtype is None and input.dtype.is_floating_point:  # the common case, without the dtype logic
        if a.itemsize > 2 and out is None:  # float32/64: no rounding from float32 as for halves
            return direct_result(Sum, input, reduction.sum(a, dims, keepdim), {"dims": dims, "keepdim": keepdim})
        r = Sum.apply(input, dims=dims, keepdim=keepdim)
    else:
        r = Sum.apply(_cast(input, dtype), dims=dims, keepdim=keepdim, dtype=_sum_dtype(input, dtype))
    return r if out is None else write_out(r, out)


def _nansum_input(input):
    if input.dtype.is_complex and input.device.type == "cpu":
        raise RuntimeError("nansum on CPU does not support complex inputs")


@numpy_aliases
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over ``dim`` treating NaN as zero."""
    _nansum_input(input)
    dims = _dims(dim, input.ndim)
    if out is not None and dtype is None:
        dtype = out.dtype
    return write_out(Sum.apply(_cast(input, dtype), dims=dims, keepdim=keepdim, dtype=_sum_dtype(input, dtype),
                               nan=True), out)


def _mean_input(name, input, dtype):
    if dtype is not None:
        dt = _dtype.to_dtype(dtype)
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_tname(dt)}")
        return input.to(dt)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_tname(input.dtype)}")
    return input


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Mean over ``dim`` (every element when None); the input must be floating point unless ``dtype`` is given.

    Example::

        >>> ember.tensor([[1., 2.], [3., 4.]]).mean(0)
        tensor([2., 3.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = numpy_keywords("mean", dim, keepdim, axis, keepdims)
    x = _mean_input("mean", input, dtype)
    dims = _EVERY_DIM[:x._data.ndim] if dim is None else _dims(dim, x.ndim)
    r = Sum.apply(x, dims=dims, keepdim=keepdim, mean=True)
    return r if out is None else write_out(r, out)


@numpy_aliases
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean over ``dim`` of the non-NaN elements (NaN where there are none)."""
    if dtype is None and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_tname(input.dtype)}")
    _nansum_input(input)
    x = _mean_input("nanmean", input, dtype)
    return write_out(Sum.apply(x, dims=_dims(dim, x.ndim), keepdim=keepdim, nan=True, mean=True), out)


# -- prod -------------------------------------------------------------------------------------------------------------
class Prod(Function):
    holomorphic = True
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        y = reduction.prod(x, dims, keepdim, dtype)
        ctx.has_zero = bool(ctx.needs_input_grad) and bool((x == 0).any())
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = _restore(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        if not ctx.has_zero:
            return g * (_restore(y, ctx.in_shape, ctx.dims, ctx.keepdim) / x)
        if not x.ndim:
            return g
        # The product of the others, without dividing: exclusive products from both sides.
        from .scan import exclusive_cumprod
        dim = ctx.dims[0] if len(ctx.dims) == 1 else 0
        flat = x if len(ctx.dims) == 1 else reshape(x, (-1,))
        others = exclusive_cumprod(flat, dim) * exclusive_cumprod(flat, dim, reverse=True)
        return g * reshape(others, ctx.in_shape)


@numpy_aliases
@float32_inputs
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product over ``dim`` (an int) or of every element; integers and bools multiply in int64.

    Example::

        >>> ember.tensor([[1., 2.], [3., 4.]]).prod(1)
        tensor([ 2., 12.])
    """
    if isinstance(dim, Tensor) and dim.dtype is not _dtype.bool:
        dim = dim.__index__()
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = _dims(dim, input.ndim)
    keep = keepdim and dim is not None
    if out is not None and dtype is None:
        dtype = out.dtype
    return write_out(Prod.apply(_cast(input, dtype), dims=dims, keepdim=keep, dtype=_sum_dtype(input, dtype)), out)


# -- var / std --------------------------------------------------------------------------------------------------------
class Var(Function):
    """Variance (``sqrt``: standard deviation) over ``dims`` with ``correction``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, sqrt, full):
        xp = ctx.xp
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.sqrt, ctx.full = x.shape, dims, keepdim, sqrt, full
        ctx.dof = _count(x.shape, dims) - correction
        with _quiet(xp):
            ss = reduction.moments(x, dims)[1] if _count(x.shape, dims) else x.sum(dims, None, None, True)
            if not keepdim:
                ss = ss.reshape([s for i, s in enumerate(x.shape) if i not in dims])
            y = (ss / builtins.max(ctx.dof, 0)).astype(x.dtype, order="C")  # C order whatever the input's
            if sqrt:
                y = xp.sqrt(y)
        if ctx.dof <= 0:
            warnings.warn(f"{'std' if sqrt else 'var'}(): degrees of freedom is <= 0. Correction should be strictly "
                          "less than the reduction factor (input numel divided by output numel).", stacklevel=4)
        ctx.save_for_backward(x, y if sqrt else None)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = _restore(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        if ctx.sqrt:  # d std = d var / (2 std), zero where std is zero
            y = _restore(y, ctx.in_shape, ctx.dims, ctx.keepdim)
            g = g / ((y + _inf_where_zero(y)) * 2)
        centered = x - mean(x, ctx.dims, keepdim=True)
        if ctx.dof <= 0 and ctx.full:  # torch: inf, or NaN where the input equals its mean
            xp = array_module(x.device)
            return g * _const(x, xp.where(centered._data == 0, math.nan, math.inf))
        coef = 2.0 / ctx.dof if ctx.dof != 0 else math.inf
        return coef * g * centered


def _const(like, arr):
    """A constant (non-differentiable) tensor holding ``arr`` on ``like``'s device, in ``like``'s dtype."""
    return Tensor._make(arr.astype(like._data.dtype), like.dtype, like.device)


def _inf_where_zero(t):
    """inf where ``t`` is zero, else 0: ``t + _inf_where_zero(t)`` divides to 0 where ``t`` vanishes."""
    xp = array_module(t.device)
    return _const(t, xp.where(t._data == 0, math.inf, 0.0))


def _correction(name, unbiased, correction):
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both 'unbiased' and "
                        "'correction'")
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _var_args(name, input, dim, unbiased, correction):
    if isinstance(dim, bool):  # the legacy var(input, unbiased)
        dim, unbiased = None, dim
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return dict(dims=_dims(dim, input.ndim), correction=_correction(name, unbiased, correction),
                full=dim is None or input.ndim == 0)


def _var(input, keepdim, sqrt, args):
    if input.dtype.is_complex:  # the variance of |x - mean|: the real part's plus the imaginary part's
        v = Var.apply(input.real, keepdim=keepdim, sqrt=False, **args) + \
            Var.apply(input.imag, keepdim=keepdim, sqrt=False, **args)
        return v.sqrt() if sqrt else v
    return Var.apply(input, keepdim=keepdim, sqrt=sqrt, **args)


@numpy_aliases
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased=False`` means 0).

    Example::

        >>> ember.tensor([1., 2., 3., 4.]).var()
        tensor(1.6667)
    """
    args = _var_args("var", input, dim, unbiased, correction)
    return write_out(_var(input, keepdim, False, args), out)


@numpy_aliases
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over ``dim`` with Bessel's ``correction`` (see :func:`var`)."""
    args = _var_args("std", input, dim, unbiased, correction)
    return write_out(_var(input, keepdim, True, args), out)


@numpy_aliases
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(input, dim), mean(input, dim))``."""
    args = _var_args("var_mean", input, dim, unbiased, correction)
    return (_var(input, keepdim, False, args),
            Sum.apply(input, dims=args["dims"], keepdim=keepdim, mean=True))


@numpy_aliases
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(input, dim), mean(input, dim))``."""
    args = _var_args("std_mean", input, dim, unbiased, correction)
    return (_var(input, keepdim, True, args),
            Sum.apply(input, dims=args["dims"], keepdim=keepdim, mean=True))


# -- norms ------------------------------------------------------------------------------------------------------------
class VectorNorm(Function):
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        xp = ctx.xp
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.ord = x.shape, dims, keepdim, ord
        a = ufunc1(xp.abs, x)
        with _quiet(xp):
            if ord == math.inf:
                y = reduction.amax(a, dims, keepdim)
            elif ord == -math.inf:
                y = reduction.amin(a, dims, keepdim)
            elif ord == 0:
                y = xp.sum(a != 0, axis=dims, keepdims=keepdim, dtype=a.dtype)
            elif ord == 1:
                y = reduction.sum(a, dims, keepdim)
            elif ord == 2:
                y = xp.sqrt(reduction.sum(ufunc2(xp.multiply, a, a), dims, keepdim))
            else:
                y = xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        p = ctx.ord
        if p == 0:
            return None
        xp = array_module(x.device)
        g = _restore(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        y = _restore(y, ctx.in_shape, ctx.dims, ctx.keepdim)
        sgn = x.sgn()  # differentiable (zero derivative for real x), so the gradient stays a function of x
        if p == 1:
            return g * sgn
        if p == 2:  # x / norm, zero where the norm is zero
            return g * (x / (y + _inf_where_zero(y)))
        if math.isinf(p):  # split evenly among the elements that attain the norm (NaNs included)
            a = xp.abs(x._data)
            hit = (a == y._data) | xp.isnan(a)
            return g * sgn * _const(x, hit / xp.sum(hit, axis=ctx.dims, keepdims=True))
        zero = _const(x, x._data == 0)
        ax = x.abs() + zero  # |x|, with zeros replaced by one so that negative powers stay finite
        if p < 1:
            return sgn * ax ** (p - 1) * g * y ** (1 - p)
        scaled = sgn * ax ** (p - 1) if p < 2 else x * ax ** (p - 2)
        return scaled * (g / (y ** (p - 1) + _inf_where_zero(y)))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (every element when None), as ``linalg.vector_norm``."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(x.dtype)}")
    if dtype is not None:
        dt = _dtype.to_dtype(dtype)
        if _dtype.promote_types(x.dtype, dt) is not dt:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_tname(x.dtype)}) should be convertible "
                               f"without narrowing to the specified dtype ({_tname(dt)})")
        x = x.to(dt)
    dims = _dims(dim, x.ndim)
    if ord < 0 or ord == math.inf:
        name = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else f"{ord:g}")
        if dim is None and x.numel() == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because the "
                               "operation does not have an identity")
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the dimension {d}because "
                                   "this dimension is empty and the operation does not have an identity")
    return write_out(VectorNorm.apply(x, ord=ord, dims=dims, keepdim=keepdim), out)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The ``p``-norm of ``input`` over ``dim``: a number (vector norm), ``'fro'`` or ``'nuc'`` (matrix norms).

    Example::

        >>> ember.tensor([3., 4.]).norm()
        tensor(5.)
    """
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        from .. import linalg
        dims = tuple(range(input.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
        return write_out(linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype), out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


# -- logsumexp --------------------------------------------------------------------------------------------------------
class LogSumExp(Function):
    half_in_float32 = True
    holomorphic = True

    def name(self):
        return "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        xp = ctx.xp
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        with _quiet(xp):
            if builtins.any(x.shape[d] == 0 for d in dims):
                y = xp.log(xp.sum(xp.exp(x), axis=dims, keepdims=keepdim))
            else:  # shift by the max (zero where infinite, so that inf and -inf rows stay exact)
                m = reduction.amax(x, dims, True)
                m = xp.where(xp.isinf(m), 0, m)
                y = xp.log(reduction.sum(ufunc1(xp.exp, ufunc2(xp.subtract, x, m)), dims, True)) + m
                if not keepdim:
                    y = y.reshape([s for i, s in enumerate(x.shape) if i not in dims])
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = _restore(grad, ctx.in_shape, ctx.dims, ctx.keepdim)
        return g * (x - _restore(y, ctx.in_shape, ctx.dims, ctx.keepdim)).exp()


@numpy_aliases
def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably; integers give the default float dtype.

    Example::

        >>> ember.tensor([1e4, 1e4]).logsumexp(0)
        tensor(10000.6934)
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = input.to(_dtype.get_default_dtype())
    return write_out(LogSumExp.apply(input, dims=_dims(dim, input.ndim), keepdim=keepdim), out)


# -- logical reductions -----------------------------------------------------------------------------------------------
class AllAny(Function):
    """all / any; uint8 inputs give uint8 as in torch, everything else bool."""

    @staticmethod
    def forward(ctx, x, dims, keepdim, any):
        y = (reduction.any if any else reduction.all)(x, dims, keepdim)
        return y.astype(x.dtype) if x.dtype == _dtype.uint8.np else y


def _logical_dims(dim, ndim):
    """all/any reduce nothing over an empty ``dim`` tuple (elementwise), unlike sum; None means every dim."""
    return () if type(dim) in (tuple, list) and not dim else _dims(dim, ndim)


@numpy_aliases
def all(input, dim=None, keepdim=False, *, out=None):
    """Whether every element over ``dim`` is nonzero; ``dim=()`` tests each element."""
    return write_out(AllAny.apply(input, dims=_logical_dims(dim, input.ndim), keepdim=keepdim, any=False), out)


@numpy_aliases
def any(input, dim=None, keepdim=False, *, out=None):
    """Whether some element over ``dim`` is nonzero; ``dim=()`` tests each element."""
    return write_out(AllAny.apply(input, dims=_logical_dims(dim, input.ndim), keepdim=keepdim, any=True), out)


class CountNonzero(Function):
    @staticmethod
    def forward(ctx, x, dims):
        return ctx.xp.asarray(ctx.xp.count_nonzero(x, axis=dims)).astype(_dtype.int64.np)


@numpy_aliases
def count_nonzero(input, dim=None):
    """The number of nonzero elements over ``dim`` (int64)."""
    return CountNonzero.apply(input, dims=_dims(dim, input.ndim))


register(sum, mean, nansum, nanmean, prod, var, std, norm, logsumexp, all, any, count_nonzero)
