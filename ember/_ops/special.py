"""Elementwise special functions: sigmoid and logit, the error functions, the normal distribution's, the gamma and
zeta family, Bessel functions, entropy."""

__all__ = ["sigmoid", "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0"]
import math

from .._device import special_module
from .._kernels.elementwise import binary as ufunc2, sigmoid as sigmoid_kernel, unary as ufunc1
from .._tensor import inplace, register, write_out
from .binary import Binary, Xlogy, _floats, _where, public as _public2
from .unary import FloatUnary, _public

_SPECIAL = {}


def _sp(xp):
    """scipy.special (or cupyx.scipy.special) for ``xp``, looked up once."""
    sp = _SPECIAL.get(xp)
    if sp is None:
        sp = _SPECIAL[xp] = special_module(xp)
    return sp


class Sigmoid(FloatUnary):
    @staticmethod
    def forward(ctx, x):
        y = sigmoid_kernel(ctx.xp, x, _sp(ctx.xp).expit)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y) * y


sigmoid = _public(Sigmoid, "sigmoid", "The logistic function ``1 / (1 + exp(-input))``.")


class Logit(FloatUnary):
    @staticmethod
    def forward(ctx, x, eps):
        xp = ctx.xp
        ctx.save_for_backward(x)
        ctx.eps = eps
        z = x if eps is None else xp.clip(x, eps, 1 - eps)
        return xp.log(z / (1 - z))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        g = grad / (x * (1 - x))
        if eps is None:  # NaN outside [0, 1]; at 0 and 1 (also -0.0), infinity with the gradient's sign
            g = _where((x == 0) | (x == 1), grad * math.inf, g)
            return _where((x < 0) | (x > 1), math.nan, g)
        return _where((x < eps) | (x > 1 - eps), 0.0, g)  # clamped inputs have no gradient


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    r = Logit.apply(input, eps=eps)
    return r if out is None else write_out(r, out)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erf(FloatUnary):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).erf, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _TWO_OVER_SQRT_PI * (-(x * x)).exp() * grad


class Erfc(FloatUnary):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).erfc, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -_TWO_OVER_SQRT_PI * (-(x * x)).exp() * grad


class Erfinv(FloatUnary):
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(_sp(ctx.xp).erfinv, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return 0.5 * math.sqrt(math.pi) * (y * y).exp() * grad


class Erfcx(FloatUnary):
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
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).ndtr, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _INV_SQRT_2PI * (-0.5 * x * x).exp()


class Ndtri(FloatUnary):
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
        sp = _sp(ctx.xp)
        return ufunc1(sp.psi, x) if n == 0 else sp.polygamma(n, x).astype(x.dtype)

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
    r = Polygamma.apply(input, n=int(n))
    return r if out is None else write_out(r, out)


class I0(FloatUnary):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(_sp(ctx.xp).i0, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * I1.apply(x)


class I1(FloatUnary):
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


class BesselJ(FloatUnary):
    """Bessel functions of the first kind: torch defines no derivative, so the result does not require grad."""
    kernel = None

    @classmethod
    def forward(cls, ctx, x):
        y = ufunc1(getattr(_sp(ctx.xp), cls.kernel), x)
        ctx.mark_non_differentiable(y)
        return y


class BesselJ0(BesselJ):
    kernel = "j0"


class BesselJ1(BesselJ):
    kernel = "j1"


class Entr(FloatUnary):
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
bessel_j0 = _public(BesselJ0, "bessel_j0", "The Bessel function of the first kind of order 0.")
bessel_j1 = _public(BesselJ1, "bessel_j1", "The Bessel function of the first kind of order 1.")
entr = _public(Entr, "entr", "The elementwise entropy ``-input * log(input)`` (0 at 0, -inf for negative inputs).")


class Xlog1py(Xlogy):
    log, shift = "log1p", 1


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
        return xp.asarray(ufunc2(_sp(xp).zeta, x, q), dtype=dt)

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise RuntimeError("the derivative for 'zeta' is not implemented.")
        return None, grad * -x * zeta(x + 1, q)


xlog1py = _public2(Xlog1py, "xlog1py",
                   "``input * log1p(other)``, defined as 0 where ``input`` is 0 (unless ``other`` is NaN).")
zeta = _public2(Zeta, "zeta", "The Hurwitz zeta function ``sum((k + other) ** -input for k >= 0)``.")


def _polygamma_method(self, n):
    return polygamma(n, self)


_polygamma_method.__name__ = "polygamma"


def _mvlgamma_method(self, p):
    return mvlgamma(self, p)


_mvlgamma_method.__name__ = "mvlgamma"


_METHODS = {"sigmoid": sigmoid, "logit": logit, "erf": erf, "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma,
            "digamma": digamma, "i0": i0}
register(**_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()},
         polygamma=_polygamma_method, polygamma_=inplace(_polygamma_method), mvlgamma=_mvlgamma_method,
         mvlgamma_=inplace(_mvlgamma_method))
