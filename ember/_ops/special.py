"""Elementwise special functions: sigmoid and logit, the error functions, the normal distribution's, the gamma and
zeta family, Bessel functions, entropy."""

__all__ = ["sigmoid", "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "igamma",
           "igammac"]
import math

from .. import _dtype
from .._device import special_module
from .._kernels.elementwise import binary as ufunc2, sigmoid as sigmoid_kernel, unary as ufunc1
from .._tensor import Tensor, inplace, register, write_out
from .binary import (Binary, Xlogy, _floats, _where, public as _public2, public_tensors as _public_tensors,
                     recover)
from .unary import FloatUnary, _public, half_in_float32

_SPECIAL = {}


def _sp(xp):
    """scipy.special (or cupyx.scipy.special) for ``xp``, looked up once."""
    sp = _SPECIAL.get(xp)
    if sp is None:
        sp = _SPECIAL[xp] = special_module(xp)
    return sp


class Sigmoid(FloatUnary):
    holomorphic = True

    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + ctx.xp.exp(-x)) if x.dtype.kind == "c" else sigmoid_kernel(ctx.xp, x, _sp(ctx.xp).expit)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return half_in_float32(_sigmoid_grad, grad, y, float16=False)  # float16 rounds after each step


def _sigmoid_grad(grad, y):
    return grad * (1 - y) * y


sigmoid = _public(Sigmoid, "sigmoid", "The logistic function ``1 / (1 + exp(-input))``.")


class Logit(FloatUnary):
    no_complex = "logit_cpu"

    @staticmethod
    def forward(ctx, x, eps):
        xp = ctx.xp
        ctx.save_for_backward(x)
        ctx.eps = eps
        # the lower bound wins when eps > 0.5 makes the interval empty
        z = x if eps is None else xp.where(x < eps, eps, xp.minimum(x, 1 - eps))
        return xp.log(z / (1 - z))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        if eps is None:  # NaN outside [0, 1]; at 0 and 1 (also -0.0), infinity with the gradient's sign
            return _where((x < 0) | (x > 1), math.nan, grad / (x * (1 - x)).abs())
        g = grad / (x * (1 - x))
        return _where((x < eps) | (x > 1 - eps), 0.0, g)  # clamped inputs have no gradient


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    r = Logit.apply(input, eps=None if eps is not None and eps < 0 else eps)  # a negative eps clamps nothing
    return r if out is None else write_out(r, out)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erf(FloatUnary):
    no_complex = "erf_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).erf, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _TWO_OVER_SQRT_PI * (-(x * x)).exp() * grad


class Erfc(FloatUnary):
    no_complex = "erfc_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).erfc, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -_TWO_OVER_SQRT_PI * (-(x * x)).exp() * grad


class Erfinv(FloatUnary):
    no_complex = "erfinv_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).erfinv, x)
        y = ctx.xp.where(x == 0, x, y)  # erfinv(-0.0) = -0.0
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return 0.5 * math.sqrt(math.pi) * (y * y).exp() * grad


class Erfcx(FloatUnary):
    no_complex = "erfcx_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).erfcx, x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * (2 * x * y - _TWO_OVER_SQRT_PI)


erf = _public(Erf, "erf", "The error function.")
erfc = _public(Erfc, "erfc", "The complementary error function ``1 - erf(input)``, accurate in the tails.")
erfinv = _public(Erfinv, "erfinv", "The inverse error function (on ``[-1, 1]``).")
erfcx = _public(Erfcx, "erfcx", "The scaled complementary error function ``exp(input ** 2) * erfc(input)``.")

_INV_SQRT_2PI = 1.0 / math.sqrt(2 * math.pi)


class Ndtr(FloatUnary):
    no_complex = "erf_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).ndtr, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _INV_SQRT_2PI * (-0.5 * x * x).exp()


class Ndtri(FloatUnary):
    no_complex = "ndtri_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).ndtri, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * math.sqrt(2 * math.pi) * (0.5 * y * y).exp()


class LogNdtr(FloatUnary):
    no_complex = "log_ndtr_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).log_ndtr, x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * _INV_SQRT_2PI * (-0.5 * x * x - y).exp()


ndtr = _public(Ndtr, "ndtr", "The standard normal distribution function.")
ndtri = _public(Ndtri, "ndtri", "The inverse of ``ndtr``: the standard normal quantile function.")
log_ndtr = _public(LogNdtr, "log_ndtr", "``log(ndtr(input))``, accurate in the left tail.")


class Lgamma(FloatUnary):
    no_complex = "lgamma_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = ufunc1(_sp(ctx.xp).gammaln, x)
        return ctx.xp.where(x == -ctx.xp.inf, ctx.xp.inf, y)  # lgamma(-inf) = +inf

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * digamma(x)


class Polygamma(FloatUnary):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        xp, sp = ctx.xp, _sp(ctx.xp)
        if n == 0:
            return ufunc1(sp.psi, x)
        y = sp.polygamma(xp.asarray(n, x.dtype), x).astype(x.dtype)
        # NaN at the infinity where the series fails (-inf for n = 1, +inf above)
        return xp.where(x == (-xp.inf if n == 1 else xp.inf), xp.nan, y).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(ctx.n + 1, x)


lgamma = _public(Lgamma, "lgamma", "The log of the absolute value of the gamma function.")


def digamma(input, *, out=None):
    """The logarithmic derivative of the gamma function (-inf at 0, NaN at negative integers)."""
    return polygamma(0, input, out=out)


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    r = sum((lgamma(input - i / 2) for i in range(1, p)), lgamma(input)) + p * (p - 1) / 4 * math.log(math.pi)
    return r if out is None else write_out(r, out)


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of the digamma function."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.dtype.is_complex:
        kernel = ("digamma", "trigamma")[n] if n < 2 else "polygamma"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    r = Polygamma.apply(input, n=int(n))
    return r if out is None else write_out(r, out)


class I0(FloatUnary):
    no_complex = "i0_vml_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).i0, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * I1.apply(x)


class I1(FloatUnary):
    no_complex = "i1_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).i1, x)
        ctx.save_for_backward(x, y)
        ctx.eps = float(ctx.xp.finfo(x.dtype).eps)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        eps = ctx.eps
        # i1'(x) = i0(x) - i1(x) / x, whose limit at 0 is 1/2
        not_tiny = x.abs() > eps
        safe = _where(not_tiny, x, eps)
        return grad * _where(not_tiny, safe.i0() - y * safe.reciprocal(), 0.5)


class I0e(FloatUnary):
    no_complex = "i0e_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).i0e, x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * (I1e.apply(x) - x.sign() * y)


class I1e(FloatUnary):
    no_complex = "i1e_cpu"

    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).i1e, x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        # i1e'(x) = i0e(x) - i1e(x) * (sign(x) + 1 / x), whose limit at 0 is 1/2 (also given at NaN, as torch)
        nonzero = x.abs() > 0
        safe = _where(nonzero, x, 1.0)
        return grad * _where(nonzero, I0e.apply(safe) - y * (safe.sign() + safe.reciprocal()), 0.5)


class NoGradUnary(FloatUnary):
    """Functions torch defines no derivative for: the result does not require grad. ``kernel(sp, x)`` computes
    with ``sp``, the array module's scipy.special. torch has no float16 kernels for them."""
    half_in_float32 = False

    @classmethod
    def forward(cls, ctx, x):
        if x.dtype.itemsize < 4:
            raise NotImplementedError(f'"{cls.__name__}" not implemented for {x.dtype}')
        y = cls.kernel(_sp(ctx.xp), x).astype(x.dtype, copy=False)
        ctx.mark_non_differentiable(y)
        return y


def _no_grad_unary(name, kernel, doc):
    return _public(type(name, (NoGradUnary,), {"kernel": staticmethod(kernel)}), name, doc)


class Entr(FloatUnary):
    no_complex = "entr_cpu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).entr, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(x.log() + 1)


i0 = _public(I0, "i0", "The modified Bessel function of the first kind of order 0.")
i0e = _public(I0e, "i0e", "The exponentially scaled modified Bessel function of order 0: ``exp(-|input|) * i0``.")
i1 = _public(I1, "i1", "The modified Bessel function of the first kind of order 1.")
i1e = _public(I1e, "i1e", "The exponentially scaled modified Bessel function of order 1: ``exp(-|input|) * i1``.")
bessel_j0 = _no_grad_unary("bessel_j0", lambda sp, x: ufunc1(sp.j0, x),
                           "The Bessel function of the first kind of order 0.")
bessel_j1 = _no_grad_unary("bessel_j1", lambda sp, x: ufunc1(sp.j1, x),
                           "The Bessel function of the first kind of order 1.")
bessel_y0 = _no_grad_unary("bessel_y0", lambda sp, x: ufunc1(sp.y0, x),
                           "The Bessel function of the second kind of order 0.")
bessel_y1 = _no_grad_unary("bessel_y1", lambda sp, x: ufunc1(sp.y1, x),
                           "The Bessel function of the second kind of order 1.")
modified_bessel_i0 = _no_grad_unary("modified_bessel_i0", lambda sp, x: ufunc1(sp.i0, x),
                                    "The modified Bessel function of the first kind of order 0 (no gradient).")
modified_bessel_i1 = _no_grad_unary("modified_bessel_i1", lambda sp, x: ufunc1(sp.i1, x),
                                    "The modified Bessel function of the first kind of order 1 (no gradient).")
modified_bessel_k0 = _no_grad_unary("modified_bessel_k0", lambda sp, x: ufunc1(sp.k0, x),
                                    "The modified Bessel function of the second kind of order 0.")
modified_bessel_k1 = _no_grad_unary("modified_bessel_k1", lambda sp, x: ufunc1(sp.k1, x),
                                    "The modified Bessel function of the second kind of order 1.")
scaled_modified_bessel_k0 = _no_grad_unary("scaled_modified_bessel_k0", lambda sp, x: ufunc1(sp.k0e, x),
                                           "``exp(input) * modified_bessel_k0(input)``.")
scaled_modified_bessel_k1 = _no_grad_unary("scaled_modified_bessel_k1", lambda sp, x: ufunc1(sp.k1e, x),
                                           "``exp(input) * modified_bessel_k1(input)``.")
spherical_bessel_j0 = _no_grad_unary("spherical_bessel_j0", lambda sp, x: sp.spherical_jn(0, x),
                                     "The spherical Bessel function of the first kind of order 0: ``sin(x) / x``.")
airy_ai = _no_grad_unary("airy_ai", lambda sp, x: sp.airy(x)[0], "The Airy function Ai.")
entr = _public(Entr, "entr", "The elementwise entropy ``-input * log(input)`` (0 at 0, -inf for negative inputs).")


class Xlog1py(Xlogy):
    log, shift = "log1p", 1
    no_complex = "xlog1py_cpu"


class Zeta(Binary):
    half_in_float32 = False

    @staticmethod
    def forward(ctx, x, q):
        xp = ctx.xp
        x, q = _floats(x, q)
        dt = (x if hasattr(x, "dtype") else q).dtype
        if dt.kind != "f" or dt.itemsize < 4:
            raise NotImplementedError(f'"zeta" not implemented for {dt}')
        ctx.save_for_backward(x, q)
        y = xp.asarray(ufunc2(_sp(xp).zeta, x, q), dtype=dt)
        return xp.where(xp.asarray(q) == xp.inf, xp.nan, y).astype(dt, copy=False)  # the series' tail is NaN at q = inf

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, grad * -x * zeta(x + 1, q)


class Igamma(Binary):
    """The regularized lower (``upper = False``) or upper incomplete gamma function of ``(a, x)``."""
    upper = False

    @classmethod
    def forward(cls, ctx, a, x):
        if a.dtype.kind != "f":
            raise NotImplementedError(f'"{"igammac" if cls.upper else "igamma"}" not implemented for {a.dtype}')
        xp = ctx.xp
        ctx.save_for_backward(a, x)
        sp = _sp(xp)
        y = ufunc2(sp.gammaincc if cls.upper else sp.gammainc, a, x).astype(a.dtype, copy=False)
        # torch's limits where scipy gives NaN: P(nan, 0) = P(inf, nan) = 0 and P(nan, inf) = 1
        zero = xp.isnan(a) & (x == 0) | (a == xp.inf) & xp.isnan(x)
        one = xp.isnan(a) & (x == xp.inf)
        return xp.where(zero, float(cls.upper), xp.where(one, float(not cls.upper), y)).astype(a.dtype, copy=False)

    @classmethod
    def backward(cls, ctx, grad):
        a, x = ctx.saved_tensors
        name = "igammac" if cls.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        g = grad * ((a - 1) * x.log() - x - a.lgamma()).exp()
        return None, -g if cls.upper else g


class Igammac(Igamma):
    upper = True


igamma = _public_tensors(Igamma, "igamma", "The regularized lower incomplete gamma function ``P(input, other)``.")
igammac = _public_tensors(Igammac, "igammac",
                          "The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``.")


xlog1py = _public2(Xlog1py, "xlog1py",
                   "``input * log1p(other)``, defined as 0 where ``input`` is 0 (unless ``other`` is NaN).")
zeta = _public2(Zeta, "zeta", "The Hurwitz zeta function ``sum((k + other) ** -input for k >= 0)``.")


class Polynomial(Binary):
    """An orthogonal polynomial of degree ``n`` (truncated to an integer; 0 below 0) at ``x``, by its three-term
    recurrence ``p_d = step(d, x, p_{d-1}, p_{d-2})`` from ``p_0 = 1`` and ``p_1 = first(x)``, with torch's closed
    forms where it uses them. torch defines no derivative: the result does not require grad."""
    half_in_float32 = False

    @classmethod
    def forward(cls, ctx, x, n):
        xp = ctx.xp
        x, n = _floats(x, n)
        dt = (x if hasattr(x, "dtype") else n).dtype
        if dt.kind != "f" or dt.itemsize < 4:
            raise NotImplementedError(f'"{cls.__name__}" not implemented for {dt}')
        x, n = xp.broadcast_arrays(xp.asarray(x, dtype=dt), xp.asarray(n, dtype=dt))
        n = xp.where(xp.isnan(n), -1, xp.trunc(n))
        closed, y = cls.closed(xp, x, n)
        top = n[~closed].max() if (~closed).any() else 1
        p, q = xp.ones_like(x), cls.first(x)
        out = xp.where(n == 0, p, q)
        for d in range(2, int(top) + 1):
            p, q = q, cls.step(d, x, q, p)
            out = xp.where(n == d, q, out)
        out = xp.where(closed, y, xp.where(n < 0, 0, out)).astype(dt, copy=False)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def closed(xp, x, n):
        """Where a closed form replaces the recurrence, and its values there."""
        return xp.zeros(x.shape, bool), x


def _polynomial(name, first, step, closed=None, shift=False, doc=""):
    body = {"first": staticmethod(first), "step": staticmethod(step)}
    if closed is not None:
        body["closed"] = staticmethod(closed)
    cls = type(name, (Polynomial,), body)
    apply = cls.apply

    def op(input, n, *, out=None):
        if not (isinstance(input, Tensor) or isinstance(n, Tensor)):
            raise TypeError(f"{name}(): expected a Tensor for input or n, got {type(input).__name__} and "
                            f"{type(n).__name__}")
        x = 2 * input - 1 if shift else input
        try:
            r = apply(x, n)
        except ValueError as e:
            r = recover(e, cls, x, n)
        return r if out is None else write_out(r, out)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=name)  # names the op in tracebacks and errors
    op.__doc__ = doc
    return op


def _chebyshev_closed(at_one, at_minus_one, trig, lowest):
    """torch's Chebyshev special cases: ``at_one(n)``/``at_minus_one(n)`` at x = 1/-1, ``trig(xp, x, n)`` inside
    (-1, 1) from degree ``lowest``."""
    def closed(xp, x, n):
        edge = xp.abs(x) == 1
        inside = (xp.abs(x) < 1) & (n >= lowest)
        with_trig = xp.where(inside, trig(xp, xp.where(inside, x, 0), n), 0)
        y = xp.where(edge, xp.where(x > 0, at_one(n), at_minus_one(n)), with_trig)
        return (edge | inside) & (n >= 0), y
    return closed


def _odd(n):
    return n % 2 == 1


def _trig_u(xp, x, n):
    t = xp.arccos(x)
    s = xp.sin(t)
    return xp.where(s != 0, xp.sin((n + 1) * t) / xp.where(s != 0, s, 1), (n + 1) * xp.cos((n + 1) * t) / x)


def _trig_v(xp, x, n):
    t = xp.arccos(x)
    edge = xp.where(_odd(n), -(2 * n + 1), 2 * n + 1)
    return xp.where(xp.sin(t / 2) != 1, xp.cos((n + 0.5) * t) / xp.cos(t / 2), edge)


def _trig_w(xp, x, n):
    t = xp.arccos(x)
    return xp.where(xp.cos(t / 2) != 1, xp.sin((n + 0.5) * t) / xp.sin(t / 2), 2 * n + 1)


def _chebyshev_step(d, x, q, p):
    return 2 * x * q - p


_CHEBYSHEV = {
    "t": (lambda x: x, _chebyshev_closed(lambda n: 1, lambda n: 1 - 2 * _odd(n), lambda xp, x, n: xp.cos(
        n * xp.arccos(x)), 7), "first"),
    "u": (lambda x: 2 * x, _chebyshev_closed(lambda n: n + 1, lambda n: (n + 1) * (1 - 2 * _odd(n)), _trig_u, 9),
          "second"),
    "v": (lambda x: 2 * x - 1, _chebyshev_closed(lambda n: 1, lambda n: (2 * n + 1) * (1 - 2 * _odd(n)), _trig_v, 9),
          "third"),
    "w": (lambda x: 2 * x + 1, _chebyshev_closed(lambda n: 2 * n + 1, lambda n: 1 - 2 * _odd(n), _trig_w, 9),
          "fourth"),
}
for _k, (_first, _closed, _kind) in _CHEBYSHEV.items():
    globals()[f"chebyshev_polynomial_{_k}"] = _polynomial(
        f"chebyshev_polynomial_{_k}", _first, _chebyshev_step, _closed,
        doc=f"The Chebyshev polynomial of the {_kind} kind of degree ``n``, ``{_k.upper()}_n(input)``.")
    globals()[f"shifted_chebyshev_polynomial_{_k}"] = _polynomial(
        f"shifted_chebyshev_polynomial_{_k}", _first, _chebyshev_step, _closed, shift=True,
        doc=f"The shifted Chebyshev polynomial of the {_kind} kind, ``{_k.upper()}_n(2 * input - 1)``.")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda x: 2 * x,
                                   lambda d, x, q, p: 2 * x * q - 2 * (d - 1) * p,
                                   doc="The physicists' Hermite polynomial of degree ``n``.")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda x: x, lambda d, x, q, p: x * q - (d - 1) * p,
                                    doc="The probabilists' Hermite polynomial of degree ``n``.")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", lambda x: 1 - x,
                                    lambda d, x, q, p: ((2 * d - 1 - x) * q - (d - 1) * p) / d,
                                    lambda xp, x, n: ((x == 0) & (n >= 0), xp.ones_like(x)),
                                    doc="The Laguerre polynomial of degree ``n``.")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", lambda x: x,
                                    lambda d, x, q, p: ((2 * d - 1) * x * q - (d - 1) * p) / d,
                                    _chebyshev_closed(lambda n: 1, lambda n: 1 - 2 * _odd(n), lambda xp, x, n: x,
                                                      math.inf),
                                    doc="The Legendre polynomial of degree ``n``.")


def _polygamma_method(self, n):
    return polygamma(n, self)


_polygamma_method.__name__ = "polygamma"


def _mvlgamma_method(self, p):
    return mvlgamma(self, p)


_mvlgamma_method.__name__ = "mvlgamma"


_METHODS = {"sigmoid": sigmoid, "logit": logit, "erf": erf, "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma,
            "digamma": digamma, "i0": i0, "igamma": igamma, "igammac": igammac}
register(**_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()},
         polygamma=_polygamma_method, polygamma_=inplace(_polygamma_method), mvlgamma=_mvlgamma_method,
         mvlgamma_=inplace(_mvlgamma_method))
