"""Cumulative ops along a dimension: cumsum, cumprod, cummax, cummin, logcumsumexp, and diff, their inverse; vander,
a cumulative product."""

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff", "vander"]
import ml_dtypes

from .. import _dtype, return_types
from .._tensor import inplace, register, wrap_dim, write_out
from ..autograd.function import Function
from .binary import logaddexp_complex
from .order import SparseScatter, _no_complex, _write_pair, flat_index
from .reduce import _cast, _quiet, _sum_dtype, _tname, numpy_aliases
from .shape import cat

_INT64 = _dtype.int64.np
_F32, _F64 = _dtype.float32.np, _dtype.float64.np
_HALVES = (_dtype.float16.np, _dtype.bfloat16.np)


def _flip(xp, x, dim, reverse):
    return xp.ascontiguousarray(xp.flip(x, dim)) if reverse else x


def _acc(x, dtype):
    """The accumulator of cumsum/cumprod, as in torch's CPU kernels: float64 for float32, float32 for float16 and
    bfloat16, else ``dtype`` (None: NumPy's default)."""
    return _F64 if x.dtype == _F32 else _F32 if x.dtype in _HALVES else dtype


def scan(xp, x, dim, op):
    """Inclusive scan of ``x`` along ``dim`` with an associative binary ufunc, in log2(n) vectorized steps (NumPy
    and CuPy alike, for ops without a native cumulative form)."""
    x = xp.moveaxis(x, dim, -1).copy()
    n, step = x.shape[-1], 1
    while step < n:
        x[..., step:] = op(x[..., step:], x[..., :-step])
        step *= 2
    return xp.ascontiguousarray(xp.moveaxis(x, -1, dim))


def _out_dtype(dtype, out):
    """The dtype cumsum/cumprod compute in: ``dtype``, else that of ``out`` when given."""
    if out is None:
        return dtype
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_dtype.c_name(dtype)}, but got "
                           f"{_dtype.c_name(out.dtype)} instead")
    return out.dtype


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x, dim, reverse=False, dtype=None):
        xp = ctx.xp
        ctx.dim, ctx.reverse = dim, reverse
        shape = x.shape
        if x.ndim == 0:
            x = x.reshape(1)
        y = _flip(xp, xp.cumsum(_flip(xp, x, dim, reverse), axis=dim, dtype=_acc(x, dtype)), dim, reverse)
        return xp.ascontiguousarray(y).reshape(shape).astype(x.dtype if dtype is None else dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, dim=ctx.dim, reverse=not ctx.reverse)


@numpy_aliases
def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim``; integers and bools accumulate in int64.

    Example::

        >>> ember.tensor([1., 2., 3.]).cumsum(0)
        tensor([1., 3., 6.])
    """
    dim, dtype = wrap_dim(dim, input.ndim), _out_dtype(dtype, out)
    return write_out(Cumsum.apply(_cast(input, dtype), dim=dim, dtype=_sum_dtype(input, dtype)), out)


class Cumprod(Function):
    holomorphic = True
    @staticmethod
    def forward(ctx, x, dim, reverse=False, dtype=None):
        xp = ctx.xp
        ctx.dim, ctx.reverse = dim, reverse
        x1 = x.reshape(1) if x.ndim == 0 else x
        y = _flip(xp, xp.cumprod(_flip(xp, x1, dim, reverse), axis=dim, dtype=_acc(x, dtype)), dim, reverse)
        y = xp.ascontiguousarray(y).reshape(x.shape).astype(x.dtype if dtype is None else dtype, copy=False)
        ctx.has_zero = bool(ctx.needs_input_grad) and bool((x == 0).any())
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if not ctx.has_zero:
            return Cumsum.apply(grad * y, dim=ctx.dim, reverse=not ctx.reverse) / x
        if not x.ndim:
            return grad
        if not ctx.reverse:
            return _cumprod_grad(grad, x, ctx.dim)
        from .. import flip
        return flip(_cumprod_grad(flip(grad, (ctx.dim,)), flip(x, (ctx.dim,)), ctx.dim), (ctx.dim,))


def exclusive_cumprod(x, dim, reverse=False):
    """``prod(x[:k])`` (``reverse``: ``prod(x[k+1:])``) at each k along ``dim``, differentiably."""
    from .. import cat, narrow, ones
    n = x.shape[dim]
    one = ones([1 if d == dim else s for d, s in enumerate(x.shape)], dtype=x.dtype, device=x.device)
    if reverse:
        return Cumprod.apply(cat([narrow(x, dim, 1, n - 1), one], dim), dim=dim, reverse=True)
    return Cumprod.apply(cat([one, narrow(x, dim, 0, n - 1)], dim), dim=dim)


def _cumprod_grad(g, x, dim):
    """The cumprod gradient without dividing by ``x`` (exact with zeros, to every order):
    dx_k = prod(x[:k]) * S_k with S_k = g_k + x_{k+1} S_{k+1}, a linear recurrence scanned in log2(n) steps."""
    from .. import cat, narrow
    n = x.shape[dim]
    if n <= 1:
        return g
    s = g
    m = cat([narrow(x, dim, 1, n - 1), narrow(x, dim, 0, 1) * 0], dim)  # m_k = x_{k+1}
    step = 1
    while step < n:  # (s, m) over windows of `step`: S_k = s_k + m_k * S_{k+step}
        head, tail = n - step, step
        s = cat([narrow(s, dim, 0, head) + narrow(m, dim, 0, head) * narrow(s, dim, step, head),
                 narrow(s, dim, head, tail)], dim)
        m = cat([narrow(m, dim, 0, head) * narrow(m, dim, step, head), narrow(m, dim, head, tail)], dim)
        step *= 2
    return exclusive_cumprod(x, dim) * s


@numpy_aliases
def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; integers and bools accumulate in int64. Gradients are exact with zeros.

    Example::

        >>> ember.tensor([1., 2., 3.]).cumprod(0)
        tensor([1., 2., 6.])
    """
    dim, dtype = wrap_dim(dim, input.ndim), _out_dtype(dtype, out)
    return write_out(Cumprod.apply(_cast(input, dtype), dim=dim, dtype=_sum_dtype(input, dtype)), out)


class CumExtreme(Function):
    """Running max (``largest``) or min and the index where it was last attained; NaN propagates."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dim, largest):
        xp = ctx.xp
        ctx.shape = shape = x.shape
        if x.ndim == 0:
            x = x.reshape(1)
        v = scan(xp, x, dim, xp.maximum if largest else xp.minimum)
        hit = x == v  # a new extreme (or a tie: torch takes the later index), or a NaN
        if x.dtype.kind == "f":
            hit |= xp.isnan(x)
        n = x.shape[dim]
        steps = xp.arange(n).reshape((n,) + (1,) * (x.ndim - dim - 1))
        idx = scan(xp, xp.where(hit, steps, 0), dim, xp.maximum)
        if x.dtype.kind == "f":  # the value at that index: -0.0 after 0.0 is a tie, and is the one returned
            v = xp.take_along_axis(x, idx, axis=dim)
        if ctx.needs_input_grad:
            ctx.flat = flat_index(xp, idx, dim, x.shape).reshape(shape + (1,))
        return v.reshape(shape), idx.astype(_INT64).reshape(shape)

    @staticmethod
    def backward(ctx, grad, _):
        return SparseScatter.apply(grad, flat=ctx.flat, weights=None, shape=ctx.shape)


@numpy_aliases
def cummax(input, dim, *, out=None):
    """``(values, indices)``: the running maximum along ``dim`` and where it was attained.

    Example::

        >>> ember.cummax(ember.tensor([1., 3., 2.]), 0)
        ember.return_types.cummax(
        values=tensor([1., 3., 3.]),
        indices=tensor([0, 1, 1]))
    """
    _no_complex(input, "cummax_cpu")
    return _write_pair(return_types.cummax(*CumExtreme.apply(input, dim=wrap_dim(dim, input.ndim), largest=True)), out)


@numpy_aliases
def cummin(input, dim, *, out=None):
    """``(values, indices)``: the running minimum along ``dim`` and where it was attained."""
    _no_complex(input, "cummin_cpu")
    return _write_pair(return_types.cummin(*CumExtreme.apply(input, dim=wrap_dim(dim, input.ndim), largest=False)),
                       out)


def _scan_in_order(xp, x, dim, op):
    """Inclusive scan of ``x`` along ``dim``, one element after the other (for ops, such as the complex logaddexp
    whose phase wraps, where the order of the additions shows in the result)."""
    x = xp.moveaxis(x, dim, -1).copy()
    for i in range(1, x.shape[-1]):
        x[..., i] = op(x[..., i], x[..., i - 1])
    return xp.ascontiguousarray(xp.moveaxis(x, -1, dim))


class LogCumsumExp(Function):
    half_in_float32 = True
    holomorphic = True

    @staticmethod
    def forward(ctx, x, dim, reverse=False):
        xp = ctx.xp
        ctx.dim, ctx.reverse = dim, reverse
        x1 = x.reshape(1) if x.ndim == 0 else x
        with _quiet(xp):
            xs = _flip(xp, x1, dim, reverse)
            y = _scan_in_order(xp, xs, dim, logaddexp_complex(xp)) if x.dtype.kind == "c" else \
                scan(xp, xs, dim, xp.logaddexp)
            y = _flip(xp, y, dim, reverse).reshape(x.shape)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        # dx_i = sum_{j >= i} g_j exp(x_i - y_j), summed in log space separately for the positive and negative
        # parts of g so that nothing overflows (a complex g: in log space with its phase, log(g))
        from .. import where
        x, y = ctx.saved_tensors
        if grad.dtype.is_complex:
            return (LogCumsumExp.apply(grad.log() - y, dim=ctx.dim, reverse=not ctx.reverse) + x).exp()
        lowest = float(ml_dtypes.finfo(grad.dtype.np).min)
        log_abs = where(grad != 0, grad, 1.0).abs().log()  # a zero gradient takes no log: finite higher derivatives
        pos = where(grad > 0, log_abs, lowest)
        neg = where(grad < 0, log_abs, lowest)

        def rlcse(t):
            return LogCumsumExp.apply(t, dim=ctx.dim, reverse=not ctx.reverse)
        return (rlcse(pos - y) + x).exp() - (rlcse(neg - y) + x).exp()


@numpy_aliases
def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input), dim))``, computed stably.

    Example::

        >>> ember.tensor([0., 0.]).logcumsumexp(0)
        tensor([0.0000, 0.6931])
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_tname(input.dtype)}'")
    return write_out(LogCumsumExp.apply(input, dim=wrap_dim(dim, input.ndim)), out)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``out[i] = input[i + 1] - input[i]``, applied ``n`` times,
    after ``prepend`` and ``append`` are concatenated to ``input`` along ``dim`` (bools: ``!=``).

    Example::

        >>> ember.diff(ember.tensor([1, 3, 6, 10]))
        tensor([2, 3, 4])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    for t in (prepend, append):
        if t is None:
            continue
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i, (m, k) in enumerate(zip(input.shape, t.shape)):
            if i != d and m != k:
                raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({i}) = {m}, but got "
                                   f"tensor.size({i}) = {k}")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        a, b = x.narrow(d, 1, x.shape[d] - 1), x.narrow(d, 0, x.shape[d] - 1)
        x = a != b if x.dtype is _dtype.bool else a - b
    return x


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D tensor ``x``: column ``i`` holds ``x ** (N - 1 - i)`` (``x ** i`` when
    ``increasing``); ``N`` defaults to ``len(x)``. Integer and bool inputs give int64.

    Example::

        >>> ember.vander(ember.tensor([1, 2, 3]))
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = _dtype.promote_types(x.dtype, _dtype.int64)
    col = x.to(dt).unsqueeze(1)
    powers = [col.new_ones((x.shape[0], min(n, 1)))]
    if n > 1:
        powers.append(cumprod(col.expand(x.shape[0], n - 1), 1))
    out = cat(powers, 1)
    return out if increasing else out.flip(1)


def _scan_(fn):
    """The in-place ``x.cumsum_(dim, dtype=...)``: ``dtype``, when given, must be ``x``'s."""
    method = inplace(fn)

    def scan_(self, dim, *, dtype=None):
        if dtype is not None and _dtype.to_dtype(dtype) is not self.dtype:
            from .matmul import _CPP
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_CPP[self.dtype.name]} and output tensor "
                               f"dtype {_CPP[_dtype.to_dtype(dtype).name]} should match")
        return method(self, dim)
    scan_.__name__, scan_.__doc__ = method.__name__, method.__doc__
    return scan_


register(cumsum, cumprod, cummax, cummin, logcumsumexp, diff, cumsum_=_scan_(cumsum), cumprod_=_scan_(cumprod))
