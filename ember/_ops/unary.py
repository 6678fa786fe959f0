"""Elementwise ops of one input: signs, rounding, exponentials and logarithms, powers, trigonometric functions."""

__all__ = ["neg", "negative", "positive", "abs", "absolute", "sign", "sgn", "conj", "floor", "ceil", "round", "trunc",
           "fix", "frac", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square",
           "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
           "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc", "frexp"]
import math

from .. import _dtype
from .._creation import zeros_like
from .._kernels.elementwise import binary as ufunc2, unary as ufunc1
from .._tensor import inplace, register, write_inplace, write_out
from ..autograd.function import Function
from ..return_types import structseq

_INTEGRAL = "biu"


class Unary(Function):
    half_in_float32 = True
    tensor_inputs = True


class FloatUnary(Unary):
    """A float-valued op: integer and bool inputs compute in the default float dtype, as in torch."""
    int_to_float = True


def half_in_float32(derivative, grad, *tensors, float16=True):
    """``derivative(grad, *tensors)``, evaluated in float32 and rounded once for a bfloat16 (and, if ``float16``, a
    float16) ``grad``, as the fused backward kernels (tanh, sigmoid, ...) do."""
    dt = grad.dtype
    if dt is _dtype.bfloat16 or float16 and dt is _dtype.float16:
        return derivative(grad.float(), *(t.float() for t in tensors)).to(dt)
    return derivative(grad, *tensors)


def _public(cls, name, doc):
    """The public function ``name(input, *, out=None)`` of the one-input op ``cls``."""
    apply = cls.apply

    def op(input, *, out=None):
        r = apply(input)
        return r if out is None else write_out(r, out)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=name)  # names the op in tracebacks and errors
    op.__doc__ = doc
    return op


class ZeroGrad(Unary):
    """Piecewise-constant ops: the gradient is zero wherever it is defined (torch's convention everywhere)."""

    @staticmethod
    def backward(ctx, grad):
        return zeros_like(grad)


# -- signs ----------------------------------------------------------------------------------------------------------
class Neg(Unary):
    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        return ufunc1(ctx.xp.negative, x)

    @staticmethod
    def backward(ctx, grad):
        return -grad


neg = negative = _public(Neg, "neg", "``-input``.")


def positive(input):
    """``input`` itself (``+input``)."""
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _no_kernel(x, kernel, kinds="b"):
    """torch's error for an input dtype (by NumPy kind) its kernel has no implementation for."""
    if x.dtype.kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.scalar_name(_dtype.from_numpy_dtype(x.dtype))}'")


def cabs(xp, z):
    """``|z|`` of a complex array, as ``hypot(re, im)``: correctly rounded, where NumPy's complex abs may be one ulp
    off."""
    return ufunc2(xp.hypot, z.real, z.imag)


class Abs(Unary):
    @staticmethod
    def forward(ctx, x):
        _no_kernel(x, "abs_cpu")
        ctx.save_for_backward(x)
        return ufunc1(ctx.xp.abs, x) if x.dtype.kind != "c" else cabs(ctx.xp, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sgn()  # abs'(0) = 0


abs = absolute = _public(Abs, "abs", "Elementwise absolute value.")


def _sign(xp, x):
    if x.dtype.kind == "b":
        return x.copy()
    return xp.subtract(x > 0, x < 0, dtype=x.dtype)  # sign(NaN) is 0, as in torch


class Sign(ZeroGrad):
    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "c":
            raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                      "torch.sgn instead.")
        return _sign(ctx.xp, x)


sign = _public(Sign, "sign", "-1, 0 or 1 by the sign of each element (0 for NaN).")


class Sgn(Unary):
    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            return _sign(ctx.xp, x)
        xp = ctx.xp
        r = cabs(xp, x)
        r = xp.where(r == 0, 1, r)
        y = xp.empty_like(x)  # each part divided by |z|: a complex division would round differently
        xp.divide(x.real, r, out=y.real)
        xp.divide(x.imag, r, out=y.imag)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        if not ctx.saved_tensors:  # real: piecewise constant
            return zeros_like(grad)
        from .binary import _where
        x, y = ctx.saved_tensors
        r = x.abs()  # d sgn = (dz - sgn Re(conj(sgn) dz)) / |z|, zero at z = 0
        return _where(r == 0, 0.0, (grad - y * (grad * y.conj()).real) / _where(r == 0, 1.0, r))


sgn = _public(Sgn, "sgn", "``input / abs(input)`` (0 at 0); the sign for real inputs.")


class Conj(Unary):
    @staticmethod
    def forward(ctx, x):
        return ctx.xp.conj(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


def conj(input):
    """The complex conjugate (the tensor itself for real dtypes)."""
    return input if not input.dtype.is_complex else Conj.apply(input)


# -- rounding -------------------------------------------------------------------------------------------------------
class Floor(ZeroGrad):
    no_complex = NotImplementedError, "floor is not supported for complex inputs"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind in _INTEGRAL:
            _no_kernel(x, "floor_vml_cpu")
            return x.copy()
        return ufunc1(ctx.xp.floor, x)


class Ceil(ZeroGrad):
    no_complex = NotImplementedError, "ceil is not supported for complex inputs"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind in _INTEGRAL:
            _no_kernel(x, "ceil_vml_cpu")
            return x.copy()
        return ufunc1(ctx.xp.ceil, x)


class Trunc(ZeroGrad):
    no_complex = NotImplementedError, "trunc is not supported for complex inputs"

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind in _INTEGRAL:
            _no_kernel(x, "trunc_vml_cpu")
            return x.copy()
        return ufunc1(ctx.xp.trunc, x)


class Round(ZeroGrad):
    @staticmethod
    def forward(ctx, x, decimals):
        if x.dtype.kind in _INTEGRAL:
            _no_kernel(x, "round_cpu" if decimals else "round_vml_cpu", _INTEGRAL if decimals else "b")
            return x.copy()
        _no_kernel(x, "round_cpu" if decimals else "round_vml_cpu", "c")
        return ufunc1(ctx.xp.rint, x) if decimals == 0 else ctx.xp.round(x, decimals)  # halves round to even


floor = _public(Floor, "floor", "The largest integer not greater than each element.")
ceil = _public(Ceil, "ceil", "The smallest integer not less than each element.")
trunc = fix = _public(Trunc, "trunc", "Each element rounded toward zero.")


def round(input, *, decimals=0, out=None):
    """Each element rounded to ``decimals`` decimal places, halves to even.

    Example::

        >>> ember.round(ember.tensor([0.5, 1.5, 2.25]), decimals=1)
        tensor([0.5000, 1.5000, 2.2000])
    """
    r = Round.apply(input, decimals=decimals)
    return r if out is None else write_out(r, out)


class Frac(Unary):
    @staticmethod
    def forward(ctx, x):
        _no_kernel(x, "frac_cpu", _INTEGRAL + "c")
        return ufunc2(ctx.xp.subtract, x, ufunc1(ctx.xp.trunc, x))

    @staticmethod
    def backward(ctx, grad):
        return grad


frac = _public(Frac, "frac", "The fractional part ``input - trunc(input)``.")


# -- exponentials and logarithms ------------------------------------------------------------------------------------
class Exp(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(ctx.xp.exp, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class Exp2(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(ctx.xp.exp2, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * math.log(2.0)


class Expm1(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(ctx.xp.expm1, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (y + 1)


exp = _public(Exp, "exp", "Elementwise ``e ** input``.")
exp2 = _public(Exp2, "exp2", "Elementwise ``2 ** input``.")
expm1 = _public(Expm1, "expm1", "``exp(input) - 1``, accurate for small inputs.")


class Log(FloatUnary):
    holomorphic = True
    scale = None  # backward divides by ``x * scale`` (log2, log10)
    ufunc = "log"

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(getattr(ctx.xp, cls.ufunc), x)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / x if cls.scale is None else grad / (x * cls.scale)


class Log2(Log):
    scale, ufunc = math.log(2.0), "log2"


class Log10(Log):
    scale, ufunc = math.log(10.0), "log10"


class Log1p(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(ctx.xp.log1p, x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (x + 1)


log = _public(Log, "log", "The natural logarithm.")
log2 = _public(Log2, "log2", "The base-2 logarithm.")
log10 = _public(Log10, "log10", "The base-10 logarithm.")
log1p = _public(Log1p, "log1p", "``log(1 + input)``, accurate for small inputs.")


# -- powers ---------------------------------------------------------------------------------------------------------
class Sqrt(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(ctx.xp.sqrt, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad / (2 * y)  # inf at 0


class Rsqrt(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        y = ufunc1(xp.reciprocal, ufunc1(xp.sqrt, x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return -0.5 * grad * y.pow(3)


class Reciprocal(FloatUnary):
    holomorphic = True
    @staticmethod
    def forward(ctx, x):
        y = ufunc1(ctx.xp.reciprocal, x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return -grad * (y * y)


sqrt = _public(Sqrt, "sqrt", "The square root.")
rsqrt = _public(Rsqrt, "rsqrt", "The reciprocal of the square root.")
reciprocal = _public(Reciprocal, "reciprocal", "``1 / input`` (as floats).")


def square(input, *, out=None):
    """``input ** 2`` (bool inputs give int64, as torch)."""
    from .binary import pow
    return pow(input, 2, out=out)


# -- trigonometric and hyperbolic -----------------------------------------------------------------------------------
class SavesInput(FloatUnary):
    """A float-valued op whose gradient ``grad * derivative(x)`` needs its input."""
    ufunc = None
    holomorphic = True

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return ufunc1(getattr(ctx.xp, cls.ufunc), x)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        return cls.derivative(grad, x)


class Sin(SavesInput):
    ufunc = "sin"
    derivative = staticmethod(lambda g, x: g * x.cos())


class Cos(SavesInput):
    ufunc = "cos"
    derivative = staticmethod(lambda g, x: g * -x.sin())


class Asin(SavesInput):
    ufunc = "arcsin"
    derivative = staticmethod(lambda g, x: g * (-x * x + 1).rsqrt())


class Acos(SavesInput):
    ufunc = "arccos"
    derivative = staticmethod(lambda g, x: g * -((-x * x + 1).rsqrt()))


class Atan(SavesInput):
    ufunc = "arctan"
    derivative = staticmethod(lambda g, x: g / (x * x + 1))


class Sinh(SavesInput):
    ufunc = "sinh"
    derivative = staticmethod(lambda g, x: g * x.cosh())


class Cosh(SavesInput):
    ufunc = "cosh"
    derivative = staticmethod(lambda g, x: g * x.sinh())


class Asinh(SavesInput):
    ufunc = "arcsinh"
    derivative = staticmethod(lambda g, x: g * (x * x + 1).rsqrt())


class Acosh(SavesInput):
    ufunc = "arccosh"
    # as torch: 1 / sqrt(x^2 - 1) for real x, 1 / sqrt(x - 1) sqrt(x + 1) (acosh's branch) for complex x
    derivative = staticmethod(lambda g, x: g * ((x - 1).rsqrt() * (x + 1).rsqrt() if x.dtype.is_complex else
                                                (x * x - 1).rsqrt()))


class Atanh(SavesInput):
    ufunc = "arctanh"
    derivative = staticmethod(lambda g, x: g / (1 - x * x))


class SavesOutput(FloatUnary):
    """A float-valued op whose gradient ``grad * derivative(y)`` needs only its output."""
    ufunc = None
    holomorphic = True

    @classmethod
    def forward(cls, ctx, x):
        y = ufunc1(getattr(ctx.xp, cls.ufunc), x)
        ctx.save_for_backward(y)
        return y

    @classmethod
    def backward(cls, ctx, grad):
        (y,) = ctx.saved_tensors
        return cls.derivative(grad, y)


class Tan(SavesOutput):
    ufunc = "tan"
    derivative = staticmethod(lambda g, y: g * (y * y + 1))


class Tanh(SavesOutput):
    ufunc = "tanh"
    derivative = staticmethod(lambda g, y: g * (1 - y * y))

    @classmethod
    def backward(cls, ctx, grad):
        (y,) = ctx.saved_tensors
        return half_in_float32(cls.derivative, grad, y)


sin = _public(Sin, "sin", "The sine (radians).")
cos = _public(Cos, "cos", "The cosine (radians).")
tan = _public(Tan, "tan", "The tangent (radians).")
asin = arcsin = _public(Asin, "asin", "The inverse sine.")
acos = arccos = _public(Acos, "acos", "The inverse cosine.")
atan = arctan = _public(Atan, "atan", "The inverse tangent.")
sinh = _public(Sinh, "sinh", "The hyperbolic sine.")
cosh = _public(Cosh, "cosh", "The hyperbolic cosine.")
tanh = _public(Tanh, "tanh", "The hyperbolic tangent.")
asinh = arcsinh = _public(Asinh, "asinh", "The inverse hyperbolic sine.")
acosh = arccosh = _public(Acosh, "acosh", "The inverse hyperbolic cosine.")
atanh = arctanh = _public(Atanh, "atanh", "The inverse hyperbolic tangent.")


def deg2rad(input, *, out=None):
    """Degrees to radians."""
    from .binary import mul
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return mul(input, math.pi / 180, out=out)


def rad2deg(input, *, out=None):
    """Radians to degrees."""
    from .binary import mul
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return mul(input, 180 / math.pi, out=out)


class Sinc(FloatUnary):
    holomorphic = True

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        px = x * math.pi
        return xp.where(x == 0, 1, xp.sin(px) / xp.where(x == 0, 1, px))

    @staticmethod
    def backward(ctx, grad):
        from .binary import _where
        (x,) = ctx.saved_tensors
        px, denom = x * math.pi, x * x * math.pi
        return _where(denom == 0, 0.0, grad * (px * px.cos() - px.sin()) / denom)  # 0 where x * x underflows


sinc = _public(Sinc, "sinc", "The normalized sinc ``sin(pi x) / (pi x)`` (1 at 0).")


# -- Tensor methods -------------------------------------------------------------------------------------------------
_METHODS = {"neg": neg, "negative": neg, "abs": abs, "absolute": abs, "sign": sign, "sgn": sgn, "floor": floor,
            "ceil": ceil, "round": round, "trunc": trunc, "fix": fix, "frac": frac, "exp": exp, "exp2": exp2,
            "expm1": expm1, "log": log, "log2": log2, "log10": log10, "log1p": log1p, "sqrt": sqrt, "rsqrt": rsqrt,
            "square": square, "reciprocal": reciprocal, "sin": sin, "cos": cos, "tan": tan, "asin": asin,
            "acos": acos, "atan": atan, "sinh": sinh, "cosh": cosh, "tanh": tanh, "asinh": asinh, "acosh": acosh,
            "atanh": atanh, "arcsin": asin, "arccos": acos, "arctan": atan, "arcsinh": asinh, "arccosh": acosh,
            "arctanh": atanh, "deg2rad": deg2rad, "rad2deg": rad2deg, "sinc": sinc}


_FrexpT = structseq("frexp", ("mantissa", "exponent"))


class Frexp(Unary):
    @staticmethod
    def forward(ctx, x):
        m, e = ctx.xp.frexp(x)
        e = e.astype(_dtype.int32.np)
        ctx.mark_non_differentiable(e)
        ctx.save_for_backward(e)
        return m, e

    @staticmethod
    def backward(ctx, grad, _):
        (e,) = ctx.saved_tensors
        return grad / 2.0 ** e.to(grad.dtype)


def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, ``0.5 <= |mantissa| < 1`` (0, inf and
    NaN: the exponent is 0); the exponent is int32.

    Example::

        >>> ember.frexp(ember.tensor([8., 0.75]))
        ember.return_types.frexp(
        mantissa=tensor([0.5000, 0.7500]),
        exponent=tensor([4, 0], dtype=ember.int32))
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    r = _FrexpT(*Frexp.apply(input))
    if out is not None:
        write_out(r[0], out[0])
        write_out(r[1], out[1])
        return _FrexpT(*out)
    return r


register(frexp, positive, conj, **_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()},
         __neg__=neg, __pos__=positive, __abs__=abs)


def _abs_(self):
    """In-place :func:`abs` (real dtypes only: a complex tensor cannot hold its real result)."""
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return write_inplace(self, abs)


register(abs_=_abs_, absolute_=_abs_)
