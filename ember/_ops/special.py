"""Elementwise special functions: sigmoid and logit, the error functions, the gamma family, Bessel's i0."""

__all__ = ["sigmoid", "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "i0"]
import math

from .._device import special_module
from .._kernels.elementwise import sigmoid as sigmoid_kernel, unary as ufunc1
from .._tensor import inplace, register, write_out
from .binary import _where
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


erf = _public(Erf, "erf", "The error function.")
erfc = _public(Erfc, "erfc", "The complementary error function ``1 - erf(input)``, accurate in the tails.")
erfinv = _public(Erfinv, "erfinv", "The inverse error function (on ``[-1, 1]``).")


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


i0 = _public(I0, "i0", "The modified Bessel function of the first kind of order 0.")


def _polygamma_method(self, n):
    return polygamma(n, self)


_polygamma_method.__name__ = "polygamma"


_METHODS = {"sigmoid": sigmoid, "logit": logit, "erf": erf, "erfc": erfc, "erfinv": erfinv, "lgamma": lgamma,
            "digamma": digamma, "i0": i0}
register(**_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()},
         polygamma=_polygamma_method, polygamma_=inplace(_polygamma_method))
