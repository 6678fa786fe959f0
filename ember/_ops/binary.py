"""Elementwise arithmetic of two inputs (broadcasting, torch's type promotion)."""

__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
           "remainder", "fmod", "pow", "float_power", "atan2", "arctan2", "hypot", "xlogy", "copysign", "maximum",
           "minimum", "fmax", "fmin", "logaddexp", "logaddexp2", "heaviside", "ldexp", "nextafter",
           "gcd", "lcm"]
import cmath
import math

import numpy as np

from .. import _dtype
from .._creation import zeros_like
from .._kernels import compiled
from .._kernels.elementwise import MIN_SIZE as _THREADED_SIZE
from .._kernels.elementwise import binary as ufunc2
from .._kernels.parallel import chunks, parallel_map
from .._tensor import Tensor, inplace, register, write_inplace, write_out
from ..autograd.function import Function

_BOOL = _dtype.bool
_HALF = (_dtype.float16, _dtype.bfloat16)
_F32 = _dtype.float32
_RSQRT_POW = (_dtype.float32, _dtype.float64, _dtype.bfloat16)  # float16 ** -0.5 is a true pow
_INTEGRAL = "biu"  # NumPy kinds of bool and integer arrays


class Binary(Function):
    promote = True
    half_in_float32 = True


def shape_error(err, *inputs):
    """torch's error for inputs whose shapes do not broadcast (from NumPy's ValueError; ``err`` itself otherwise)."""
    shape = None
    for x in inputs:
        s = getattr(x, "shape", None)
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
            continue
        n = max(len(shape), len(s))
        a, b = (1,) * (n - len(shape)) + shape, (1,) * (n - len(s)) + tuple(s)
        for i in reversed(range(n)):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                    f"non-singleton dimension {i}")
        shape = tuple(max(p, q) if p != 0 and q != 0 else 0 for p, q in zip(a, b))
    return err


def recover(err, fn, *inputs, **params):
    """The error path of the public elementwise ops: NumPy's broadcast ValueError becomes torch's RuntimeError, and a
    Python int that overflows the op's integer dtype wraps around (torch casts it where NumPy refuses)."""
    if isinstance(err, OverflowError):
        from .._creation import cast_scalar
        dt = _dtype.result_type(*inputs)
        return fn.apply(*(cast_scalar(x, dt) if x.__class__ is int else x for x in inputs), **params)
    raise shape_error(err, *inputs) from None


def public(cls, name, doc, half_scalars=False):
    """The public function ``name(input, other, *, out=None)`` of the two-input op ``cls``."""
    apply = cls.apply

    def op(input, other, *, out=None):
        if half_scalars and (input.__class__ is float or other.__class__ is float):
            input, other = half_scalar(input, other)
        try:
            r = apply(input, other)
        except (ValueError, OverflowError) as e:
            r = recover(e, cls, input, other)
        return r if out is None else write_out(r, out)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=name)  # names the op in tracebacks and errors
    op.__doc__ = doc
    return op


def public_tensors(cls, name, doc):
    """``public`` for ops refusing Python numbers, as torch's maximum or logical_or do (a separate closure over
    ``apply``, which ONNX tracing patches, so that ``public`` itself stays as lean as it is)."""
    apply = cls.apply

    def op(input, other, *, out=None):
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            arg, pos, x = ("input", 1, input) if not isinstance(input, Tensor) else ("other", 2, other)
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")
        try:
            r = apply(input, other)
        except (ValueError, OverflowError) as e:
            r = recover(e, cls, input, other)
        return r if out is None else write_out(r, out)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=name)  # names the op in tracebacks and errors
    op.__doc__ = doc
    return op


def half_scalar(a, b):
    """torch rounds a Python float to a float16/bfloat16 tensor's dtype before adding, subtracting, raising to or
    taking the remainder with it (its mul and div keep the float in float32); called when ``a`` or ``b`` is a float."""
    if b.__class__ is float and getattr(a, "dtype", None) in _HALF:
        return a, float(a.dtype.np.type(b))
    if a.__class__ is float and getattr(b, "dtype", None) in _HALF:
        return float(b.dtype.np.type(a)), b
    return a, b


def _floats(a, b):
    """Integer and bool operands of a float-valued op compute in the default float dtype, as in torch."""
    d = _dtype._default[0].np
    if getattr(a, "dtype", d).kind in _INTEGRAL:
        a = a.astype(d)
    if getattr(b, "dtype", d).kind in _INTEGRAL:
        b = b.astype(d)
    return a, b


def _zero_divisor(b, y):
    """torch raises on integer division by zero (that it computes) where NumPy returns 0 with a warning."""
    if y.size and ((b == 0).any() if hasattr(b, "any") else b == 0):
        raise RuntimeError("ZeroDivisionError")


def _no_bool(xp, a, b, name):
    """torch has no bool kernel for integer division and remainders: two bool operands are refused."""
    if all(x.__class__ is bool or getattr(x, "dtype", None) is not None and x.dtype.kind == "b" for x in (a, b)):
        raise NotImplementedError(f"\"{name}_{'cpu' if xp is np else 'cuda'}\" not implemented for 'Bool'")


def _float_kernel(xp, a, name):
    """torch has no integer or bool kernel for ``name``: refuses ``a`` (the promoted operand) of such a dtype."""
    if getattr(a, "dtype", None) is not None and a.dtype.kind in _INTEGRAL:
        raise NotImplementedError(f"\"{name}_{'cpu' if xp is np else 'cuda'}\" not implemented for "
                                  f"'{_dtype.scalar_name(_dtype.from_numpy_dtype(a.dtype))}'")


def _is_integral(a, b):
    return getattr(a, "dtype", None) is not None and a.dtype.kind in _INTEGRAL or \
        getattr(b, "dtype", None) is not None and b.dtype.kind in _INTEGRAL


def _where(cond, a, b):
    """``a`` where ``cond`` else ``b`` (internal: ``a`` or ``b`` may be a Python number; gradients flow to both)."""
    return Where.apply(cond, a, b)


class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        # NumPy widens a bfloat16 (or float8) array with a Python number to float64; the number takes its dtype
        if getattr(a, "dtype", None) is not None and a.dtype.kind == "V" and isinstance(b, (int, float)):
            b = ctx.xp.asarray(b, a.dtype)
        elif getattr(b, "dtype", None) is not None and b.dtype.kind == "V" and isinstance(a, (int, float)):
            a = ctx.xp.asarray(a, b.dtype)
        try:
            return ctx.xp.where(cond, a, b)
        except ValueError as e:
            raise shape_error(e, cond, a, b) from None

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        return (None, _where(cond, grad, 0.0) if ctx.needs_input_grad[1] else None,
                _where(cond, 0.0, grad) if ctx.needs_input_grad[2] else None)


# -- add, sub, mul, div ---------------------------------------------------------------------------------------------
class Add(Binary):
    @staticmethod
    def forward(ctx, a, b):
        return ufunc2(ctx.xp.add, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Binary):
    @staticmethod
    def forward(ctx, a, b):
        return ufunc2(ctx.xp.subtract, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.needs_input_grad[1] else None


class AddScaled(Binary):
    """``a + alpha * b`` of float32 tensors, rounded once (a fused multiply-add, as torch's ``add(alpha=)``); its
    graph node is torch's ``AddBackward0``."""

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.alpha = alpha
        return add_scaled(ctx.xp, a, b, alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * ctx.alpha if ctx.needs_input_grad[1] else None


class SubScaled(AddScaled):
    """``a - alpha * b``, as :class:`AddScaled` of ``-alpha``; its graph node is torch's ``SubBackward0``."""


AddScaled.__name__ = AddScaled.__qualname__ = "Add"
SubScaled.__name__ = SubScaled.__qualname__ = "Sub"


def add_scaled(xp, a, b, alpha):
    """``a + alpha * b`` of float32 arrays rounded once: with numba, one loop (``compiled.add_scaled``) spread over
    the intra-op threads, else :func:`add_scaled_numpy`."""
    alpha = np.float64(np.float32(alpha))
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray and a.shape == b.shape and a.flags.c_contiguous \
            and b.flags.c_contiguous:
        fused = compiled.kernel("add_scaled", a.size)
        if fused is not None:
            out = np.empty_like(a)
            fa, fb, fo = a.reshape(-1), b.reshape(-1), out.reshape(-1)
            parts = chunks(a.size, grain=1 << 15) if a.size >= _THREADED_SIZE else [(0, a.size)]
            parallel_map(lambda r: fused(fa[r[0]:r[1]], fb[r[0]:r[1]], alpha, fo[r[0]:r[1]]), parts)
            return out
    return add_scaled_numpy(xp, a, b, alpha)


def add_scaled_numpy(xp, a, b, alpha):
    """The reference of ``compiled.add_scaled``, broadcasting: computed in float64, where ``alpha * b`` is exact."""
    x = b.astype(xp.float64)
    x *= alpha
    return xp.add(x, a).astype(xp.float32)


class Mul(Binary):
    holomorphic = True

    @staticmethod
    def forward(ctx, a, b):
        # each factor only for the other's gradient: torch lets a factor be modified in place when the other
        # needs none (``out[:, t] = 0.9 * out[:, t - 1] + x[:, t]``); nothing without a graph (no edges)
        edges = ctx._edges
        if edges:
            ctx.save_for_backward(a if edges[1] is not None else None, b if edges[0] is not None else None)
        return ufunc2(ctx.xp.multiply, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


class Div(Binary):
    holomorphic = True

    @staticmethod
    def forward(ctx, a, b):
        if _is_integral(a, b):
            a, b = _floats(a, b)
        # not the output: torch lets it be modified in place afterwards; the dividend only for the divisor's gradient
        edges = ctx._edges
        if edges:
            ctx.save_for_backward(a if edges[1] is not None else None, b)
        return ufunc2(ctx.xp.true_divide, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad / b if ctx.needs_input_grad[0] else None,
                -grad * ((a / b) / b) if ctx.needs_input_grad[1] else None)


def _floor_divmod(xp, a, b):
    """Floor division and remainder of floats as NumPy computes them (``fmod`` corrected to the divisor's sign), for
    CuPy, whose kernels give NaN for finite ``a`` over infinite ``b`` and lose the signs of zeros. A Python number
    takes the other operand's dtype (the result's, as ``apply`` promoted it)."""
    a = a if hasattr(a, "dtype") else xp.asarray(a, b.dtype)
    b = b if hasattr(b, "dtype") else xp.asarray(b, a.dtype)
    mod = xp.fmod(a, b)
    div = (a - mod) / b
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    zero = xp.zeros_like(mod)
    mod = xp.where(fix, mod + b, xp.where(mod != 0, mod, xp.copysign(zero, b)))
    div = xp.where(fix, div - 1, div)
    floor = xp.floor(div)
    floor = xp.where(div - floor > 0.5, floor + 1, floor)
    quotient = a / b
    floor = xp.where(div != 0, floor, xp.copysign(zero, quotient))
    by_zero = b == 0
    return xp.where(by_zero, quotient, floor).astype(mod.dtype), xp.where(by_zero, xp.fmod(a, b), mod)


class DivFloor(Binary):
    no_complex = "div_floor_cpu"

    @staticmethod
    def forward(ctx, a, b):
        integral = _is_integral(a, b)
        if integral:
            _no_bool(ctx.xp, a, b, "div_floor")
        elif ctx.xp is not np:
            return _floor_divmod(ctx.xp, a, b)[0]
        y = ufunc2(ctx.xp.floor_divide, a, b)
        if integral:
            _zero_divisor(b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        return zeros_like(grad), zeros_like(grad)


class FloorDivide(DivFloor):
    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


class DivTrunc(DivFloor):
    no_complex = "div_trunc_cpu"

    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        if not _is_integral(a, b):
            return xp.trunc(xp.true_divide(a, b))
        _no_bool(xp, a, b, "div_trunc")
        q = xp.floor_divide(a, b)
        _zero_divisor(b, q)
        # floor and truncation differ by one where the quotient is negative and inexact
        return q + ((xp.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def _alpha(input, other, alpha):
    if isinstance(alpha, (bool, float, complex)):
        rt = _dtype.result_type(input, other)
        if alpha.__class__ is bool and rt is not _BOOL:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        if isinstance(alpha, (float, complex)) and not (rt.is_floating_point or rt.is_complex):
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        if isinstance(alpha, complex) and not rt.is_complex:
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if (other.__class__ is bool or getattr(other, "dtype", None) is _BOOL) and \
            _dtype.result_type(input, other) is _BOOL:  # torch computes in bool: alpha counts as bool(alpha)
        return other * bool(alpha) if isinstance(other, Tensor) else bool(other and alpha)
    return other * alpha


def _in_float32(fn, input, other, alpha, out):
    """``fn(input, other, alpha=alpha)`` of float16/bfloat16 tensors computed in float32 and rounded once, as torch
    (``alpha`` rounded to the result's dtype, ``alpha * other`` not rounded on its own)."""
    rt = _dtype.result_type(input, other)
    if alpha.__class__ in (int, float) and rt in _HALF:
        alpha = float(rt.np.type(alpha))
    r = fn(input.float(), other.float(), alpha=alpha).to(rt)
    return r if out is None else write_out(r, out)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting and promoting types as torch.

    Example::

        >>> ember.add(ember.tensor([1, 2]), 0.5)
        tensor([1.5000, 2.5000])
    """
    if alpha != 1 or alpha is True:
        if getattr(input, "dtype", None) in _HALF and getattr(other, "dtype", None) in _HALF:
            return _in_float32(add, input, other, alpha, out)
        if alpha.__class__ in (int, float) and isinstance(input, Tensor) and isinstance(other, Tensor) and \
                _dtype.result_type(input, other) is _F32:
            return write_out(AddScaled.apply(input, other, alpha=alpha), out)
        other = _alpha(input, other, alpha)
    elif other.__class__ is float:
        input, other = half_scalar(input, other)
    try:
        r = Add.apply(input, other)
    except (ValueError, OverflowError) as e:
        r = recover(e, Add, input, other)
    return r if out is None else write_out(r, out)


def _check_bool_sub(input, other):
    a = input.__class__ is bool or getattr(input, "dtype", None) is _BOOL
    b = other.__class__ is bool or getattr(other, "dtype", None) is _BOOL
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if getattr(input, "dtype", None) is _BOOL or getattr(other, "dtype", None) is _BOOL or \
            input.__class__ is bool or other.__class__ is bool:
        _check_bool_sub(input, other)
    if alpha != 1 or alpha is True:
        if getattr(input, "dtype", None) in _HALF and getattr(other, "dtype", None) in _HALF:
            return _in_float32(sub, input, other, alpha, out)
        if alpha.__class__ in (int, float) and isinstance(input, Tensor) and isinstance(other, Tensor) and \
                _dtype.result_type(input, other) is _F32:
            return write_out(SubScaled.apply(input, other, alpha=-alpha), out)
        other = _alpha(input, other, alpha)
    elif input.__class__ is float or other.__class__ is float:
        input, other = half_scalar(input, other)
    try:
        r = Sub.apply(input, other)
    except (ValueError, OverflowError) as e:
        r = recover(e, Sub, input, other)
    return r if out is None else write_out(r, out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


mul = multiply = public(Mul, "mul", "Elementwise product ``input * other``.")


def div(input, other, *, rounding_mode=None, out=None):
    """Elementwise ``input / other``: true division (integers give floats) when ``rounding_mode`` is None,
    else rounded toward zero ('trunc') or down ('floor'), keeping integer dtypes.

    Example::

        >>> ember.div(ember.tensor([-7, 7]), 2, rounding_mode='trunc')
        tensor([-3,  3])
    """
    if rounding_mode is None:
        fn = Div
    elif rounding_mode == "floor":
        fn = DivFloor
    elif rounding_mode == "trunc":
        fn = DivTrunc
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    try:
        r = fn.apply(input, other)
    except (ValueError, OverflowError) as e:
        r = recover(e, fn, input, other)
    return r if out is None else write_out(r, out)


divide = div


def true_divide(dividend, divisor, *, out=None):
    """``dividend / divisor`` (true division); the same as ``div`` without a rounding mode."""
    return div(dividend, divisor, out=out)


floor_divide = public(FloorDivide, "floor_divide",
                      "``input / other`` rounded down (Python's ``//``); not differentiable.")


# -- remainder, fmod ------------------------------------------------------------------------------------------------
class Remainder(Binary):
    no_complex = "remainder_cpu"

    @staticmethod
    def forward(ctx, a, b):
        integral = _is_integral(a, b)
        if integral:
            _no_bool(ctx.xp, a, b, "remainder")
        y = ufunc2(ctx.xp.remainder, a, b) if integral or ctx.xp is np else _floor_divmod(ctx.xp, a, b)[1]
        if integral:
            _zero_divisor(b, y)
        elif y.dtype.kind == "f":  # a zero remainder keeps the sign of ``input``, as fmod's
            y = ctx.xp.where(y == 0, ctx.xp.copysign(y, a), y)
        ctx.save_for_backward(a, b)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad, -grad * div(a, b, rounding_mode="floor") if ctx.needs_input_grad[1] else None


class Fmod(Binary):
    no_complex = "fmod_cpu"

    @staticmethod
    def forward(ctx, a, b):
        integral = _is_integral(a, b)
        if integral:
            _no_bool(ctx.xp, a, b, "fmod")
        y = ufunc2(ctx.xp.fmod, a, b)
        if integral:
            _zero_divisor(b, y)
        ctx.save_for_backward(a, b)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad, -grad * div(a, b, rounding_mode="trunc") if ctx.needs_input_grad[1] else None


remainder = public(Remainder, "remainder",
                   "Python's modulus: the remainder of floor division, with the sign of ``other``.", True)
fmod = public(Fmod, "fmod", "C's ``fmod``: the remainder of truncated division, with the sign of ``input``.", True)


# -- pow ------------------------------------------------------------------------------------------------------------
def _int_pow(xp, a, b):
    """Integer powers; negative exponents of a tensor give 1, -1 or 0 (NumPy refuses them)."""
    if (a if hasattr(a, "dtype") else b).dtype.kind == "b":
        if not hasattr(b, "dtype"):  # a bool tensor to a Python bool power: torch's x ** 1 and x ** 0
            return a.copy() if b else xp.ones_like(a)
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if not hasattr(b, "dtype"):
        if b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return xp.power(a, b)
    neg = b < 0
    if not neg.any():
        return xp.power(a, b)
    y = xp.power(a, xp.where(neg, 0, b))
    odd = (b % 2) != 0
    small = xp.where((a == 1) | ((a == -1) & ~odd), 1, xp.where((a == -1) & odd, -1, 0))
    return xp.where(neg, small, y).astype(y.dtype)


class Pow(Binary):
    holomorphic = True
    @staticmethod
    def forward(ctx, a, b, rsqrt=False):
        xp = ctx.xp
        if rsqrt:  # x ** -0.5 as 1 / sqrt(x): (-0) ** -0.5 is -inf, (-inf) ** -0.5 NaN
            y = xp.reciprocal(xp.sqrt(a))
        else:
            y = _int_pow(xp, a, b) if _is_integral(a, b) else ufunc2(xp.power, a, b)
        ctx.save_for_backward(a, b, y if ctx.needs_input_grad[1] else None)  # y only enters the exponent's grad
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if not isinstance(b, Tensor):
                if b == 0:
                    ga = zeros_like(grad)
                else:
                    ga = grad * (a * 2 if b == 2 else b * a.pow(b - 1))
            else:
                ga = _where(b == 0, 0.0, grad * (b * a.pow(b - 1)))
        if ctx.needs_input_grad[1]:
            # 0 ** b has zero gradient for real b >= 0 (a complex b's imaginary part must be 0)
            nonneg = (b.real >= 0) & (b.imag == 0) if b.dtype.is_complex else b >= 0
            if isinstance(a, Tensor):
                gb = grad * _where((a == 0) & nonneg, 0.0, y * a.log())
            else:  # a Python number base
                log_a = -math.inf if a == 0 else cmath.log(a) if isinstance(a, complex) else \
                    math.log(a) if a > 0 else math.nan
                gb = grad * (_where(nonneg, 0.0, y * log_a) if a == 0 else y * log_a)
        return ga, gb


class PowRounded(Pow):
    """bfloat16 ``input ** 3`` and ``input ** -2`` as products, rounded after each step."""
    half_in_float32 = False

    @staticmethod
    def forward(ctx, a, b):
        y = a * a * a if b == 3 else 1 / (a * a)
        ctx.save_for_backward(a, b, y)
        return y


def pow(input, exponent, *, out=None):
    """``input ** exponent`` elementwise; either may be a Python number.

    Example::

        >>> ember.pow(ember.tensor([1., 2., 3.]), 2)
        tensor([1., 4., 9.])
    """
    if input.__class__ is float or exponent.__class__ is float:
        input, exponent = half_scalar(input, exponent)
    op, params = Pow, {}
    if exponent.__class__ in (int, float) and (exponent == 3 or exponent == -2) and \
            getattr(input, "dtype", None) is _dtype.bfloat16:
        op = PowRounded
    elif exponent.__class__ is float and exponent == -0.5 and getattr(input, "dtype", None) in _RSQRT_POW:
        params = {"rsqrt": True}
    try:
        r = op.apply(input, exponent, **params)
    except (ValueError, OverflowError) as e:
        r = recover(e, Pow, input, exponent)
    return r if out is None else write_out(r, out)


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision (complex128 for complex inputs)."""
    dt = _dtype.complex128 if any(getattr(x, "dtype", None) is not None and x.dtype.is_complex or
                                  isinstance(x, complex) for x in (input, exponent)) else _dtype.float64
    if isinstance(input, Tensor):
        input = input.to(dt)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dt)
    elif not isinstance(input, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument")
    return pow(input, exponent, out=out)


def _float_power_(self, exponent):
    dt = _dtype.complex128 if self.dtype.is_complex else _dtype.float64
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype.scalar_name(self.dtype)} but the "
                           f"operation's result requires dtype {_dtype.scalar_name(dt)}")
    return write_inplace(self, float_power, exponent)


# -- atan2, hypot, xlogy, copysign ----------------------------------------------------------------------------------
class Atan2(Binary):
    no_complex = "atan2_cpu"

    @staticmethod
    def forward(ctx, a, b):
        a, b = _floats(a, b)
        ctx.save_for_backward(a, b)
        return ufunc2(ctx.xp.arctan2, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        denom = a * a + b * b
        recip = _where(denom == 0, 0.0, denom.reciprocal())  # zero gradient at the origin, as torch
        return (grad * b * recip if ctx.needs_input_grad[0] else None,
                grad * -a * recip if ctx.needs_input_grad[1] else None)


atan2 = arctan2 = public_tensors(Atan2, "atan2",
                                 "The angle of the point ``(other, input)``: ``atan(input / other)`` in its quadrant.")


class Hypot(Binary):
    no_complex = "hypot_cpu"

    @staticmethod
    def forward(ctx, a, b):
        dt = (a if hasattr(a, "dtype") else b).dtype  # the promoted dtype
        if dt.kind in _INTEGRAL:
            raise NotImplementedError(f"\"hypot_cpu\" not implemented for "
                                      f"'{_dtype.scalar_name(_dtype.from_numpy_dtype(dt))}'")
        y = ufunc2(ctx.xp.hypot, a, b)
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        return (grad * a / y if ctx.needs_input_grad[0] else None,
                grad * b / y if ctx.needs_input_grad[1] else None)


hypot = public(Hypot, "hypot", "``sqrt(input ** 2 + other ** 2)`` without intermediate overflow.")


class Xlogy(Binary):
    """``a * log(b + shift)`` (``shift`` 0: xlogy; 1: xlog1py), 0 where ``a`` is 0 and ``b`` is not NaN."""
    no_complex = "xlogy_cpu"
    log, shift = "log", 0

    @classmethod
    def forward(cls, ctx, a, b):
        xp = ctx.xp
        a, b = _floats(a, b)
        if not hasattr(b, "dtype"):  # a NumPy log of a Python number would be a float64 scalar
            b = xp.asarray(b, dtype=a.dtype)
        ctx.save_for_backward(a, b)
        # 0 * log(0) is 0, but a NaN ``other`` still gives NaN
        return xp.where((a == 0) & ~xp.isnan(b), 0, xp.multiply(a, getattr(xp, cls.log)(b)))

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        # d/da is log(b + shift), taken as 0 where a = 0 and the log is undefined (b + shift <= 0); written as
        # xlogy(grad, b) as torch, so that a zero gradient stays zero where the log is -inf
        return (_where((a == 0) & (b <= -cls.shift), 0.0, cls.apply(grad, b)) if ctx.needs_input_grad[0] else None,
                grad * a / (b + cls.shift if cls.shift else b) if ctx.needs_input_grad[1] else None)  # keeps -0


xlogy = public(Xlogy, "xlogy",
               "``input * log(other)``, defined as 0 where ``input`` is 0 (unless ``other`` is NaN).")


class Copysign(Binary):
    no_complex = "copysign_cpu"

    @staticmethod
    def forward(ctx, a, b):
        a, b = _floats(a, b)
        y = ufunc2(ctx.xp.copysign, a, b)
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, y = ctx.saved_tensors
        return (_where(a == 0, 0.0, grad * (y / a)) if ctx.needs_input_grad[0] else None,
                zeros_like(grad) if ctx.needs_input_grad[1] else None)


copysign = public(Copysign, "copysign", "The magnitude of ``input`` with the sign of ``other`` (as floats).")


# -- maximum, minimum, fmax, fmin -----------------------------------------------------------------------------------
class Maximum(Binary):
    no_complex = RuntimeError, "maximum not implemented for complex tensors."
    half_in_float32 = False  # exact in any dtype
    ufunc, is_max = "maximum", True

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return ufunc2(getattr(ctx.xp, cls.ufunc), a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        lose_a, lose_b = (a < b, a > b) if cls.is_max else (a > b, a < b)
        shared = _where(a == b, grad / 2, grad)  # ties split the gradient
        return (_where(lose_a, 0.0, shared) if ctx.needs_input_grad[0] else None,
                _where(lose_b, 0.0, shared) if ctx.needs_input_grad[1] else None)


class Minimum(Maximum):
    ufunc, is_max = "minimum", False
    no_complex = RuntimeError, "minimum not implemented for complex tensors."


class Fmax(Maximum):
    ufunc = "fmax"
    no_complex = RuntimeError, "fmax not implemented for complex tensors."

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        # ties and a NaN ``other`` give the whole gradient to ``input``
        keep_a = ((a >= b) if cls.is_max else (a <= b)) | (b.isnan() if isinstance(b, Tensor) else math.isnan(b))
        return (_where(keep_a, grad, 0.0) if ctx.needs_input_grad[0] else None,
                _where(keep_a, 0.0, grad) if ctx.needs_input_grad[1] else None)


class Fmin(Fmax):
    ufunc, is_max = "fmin", False
    no_complex = RuntimeError, "fmin not implemented for complex tensors."


maximum = public_tensors(Maximum, "maximum", "The elementwise maximum; NaN if either input is NaN.")
minimum = public_tensors(Minimum, "minimum", "The elementwise minimum; NaN if either input is NaN.")
fmax = public_tensors(Fmax, "fmax", "The elementwise maximum, ignoring NaN (NaN only where both are NaN).")
fmin = public_tensors(Fmin, "fmin", "The elementwise minimum, ignoring NaN (NaN only where both are NaN).")


# -- logaddexp, heaviside, ldexp, nextafter -------------------------------------------------------------------------
def logaddexp_complex(xp):
    """``log(exp(a) + exp(b))`` of complex arrays, factored by the operand of larger real part."""
    def op(a, b):
        swap = a.real < b.real  # a tie factors out a
        hi, lo = xp.where(swap, b, a), xp.where(swap, a, b)
        y = hi + xp.log1p(xp.exp(lo - hi))
        tie = (a.real == b.real) & xp.isinf(a.real)  # -inf keeps b; +inf sums the two directions
        return xp.where(tie, xp.where(a.real < 0, b, xp.log(xp.exp(a) + xp.exp(b))), y) if tie.any() else y
    return op


class Logaddexp(Binary):
    ufunc, base = "logaddexp", math.e
    holomorphic = True

    @classmethod
    def forward(cls, ctx, a, b):
        _float_kernel(ctx.xp, a, cls.ufunc)
        ctx.save_for_backward(a, b)
        if getattr(a, "dtype", None) is not None and a.dtype.kind == "c":
            return logaddexp_complex(ctx.xp)(*ctx.xp.broadcast_arrays(a, b))
        return ufunc2(getattr(ctx.xp, cls.ufunc), a, b)  # stable: max(a, b) + log1p(exp(-|a - b|))

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        return (grad / (1 + cls.base ** (b - a)) if ctx.needs_input_grad[0] else None,
                grad / (1 + cls.base ** (a - b)) if ctx.needs_input_grad[1] else None)


class Logaddexp2(Logaddexp):
    ufunc, base = "logaddexp2", 2.0
    no_complex = "logaddexp2_cpu"


logaddexp = public_tensors(Logaddexp, "logaddexp", "``log(exp(input) + exp(other))`` without overflow.")
logaddexp2 = public_tensors(Logaddexp2, "logaddexp2", "``log2(2 ** input + 2 ** other)`` without overflow.")


class Heaviside(Binary):
    no_complex = RuntimeError, "heaviside is not yet implemented for complex tensors."
    half_in_float32 = False

    @staticmethod
    def forward(ctx, a, b):
        return ctx.xp.where(a == 0, b, a > 0).astype(a.dtype)  # NaN input gives 0, as torch

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


_heaviside = public_tensors(Heaviside, "heaviside", "")


def heaviside(input, values, *, out=None):
    """The step function: 0 below 0, 1 above, ``values`` at 0."""
    if isinstance(values, Tensor) and isinstance(input, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _heaviside(input, values, out=out)


def ldexp(input, other, *, out=None):
    """``input * 2 ** other`` (as floats)."""
    dt = _dtype.result_type(input, other)
    if not (dt.is_floating_point or dt.is_complex):
        dt = _dtype.get_default_dtype()
    return mul(input.to(dt), pow(2.0, other.to(dt) if isinstance(other, Tensor) else other), out=out)


def next_float(xp, a, b):
    """``nextafter(a, b)`` of float (also bfloat16) arrays of one dtype, one step of the bit pattern taken as an
    integer: CuPy's kernel flushes float32's subnormals to zero, and NumPy's float16 one gives ``a`` for
    ``nextafter(0.0, -0.0)`` where torch gives ``b``."""
    bits = np.dtype(f"i{a.dtype.itemsize}")
    ia = a.view(bits)
    away = (b > a) == (a > 0)  # a step away from zero: the magnitude's bits up by one
    out = xp.where(away, ia + 1, ia - 1).astype(bits, copy=False)
    tiny = xp.where(b > 0, 1, np.iinfo(bits).min + 1).astype(bits, copy=False)  # the smallest subnormal toward b
    out = xp.where(a == 0, tiny, out).view(a.dtype)
    out = xp.where(a == b, b, out)
    return xp.where(xp.isnan(a) | xp.isnan(b), a + b, out).astype(a.dtype, copy=False)  # CuPy's where: bf16 in float32


class Nextafter(Binary):
    half_in_float32 = False  # the next representable value of the tensor's own dtype
    no_complex = "nextafter_cpu"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp = ctx.xp
        _float_kernel(xp, a, "nextafter")
        if xp is np and a.dtype.itemsize >= 4:
            return ufunc2(np.nextafter, a, b)
        b = xp.asarray(b, dtype=a.dtype)
        return next_float(xp, *xp.broadcast_arrays(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _where(a == b, 0.0, grad), zeros_like(grad) if ctx.needs_input_grad[1] else None  # as torch


nextafter = public(Nextafter, "nextafter", "The next floating point value after ``input`` towards ``other``.")


# -- gcd, lcm -------------------------------------------------------------------------------------------------------
class Gcd(Binary):
    @staticmethod
    def forward(ctx, a, b):
        return ufunc2(ctx.xp.gcd, a, b)


class Lcm(Binary):
    @staticmethod
    def forward(ctx, a, b):  # |a / gcd * b| in C's int (at least 32 bits), wrapping on overflow as torch does
        xp = ctx.xp
        g = ufunc2(xp.gcd, a, b)
        dt = g.dtype
        if dt.itemsize < 4:
            a, b, g = (v.astype(xp.int32) for v in (a, b, g))
        return xp.abs(a // xp.where(g == 0, 1, g) * b).astype(dt, copy=False)


def _integers_only(cls, name, input, other, out):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dt = _dtype.result_type(input, other)
    if dt.is_floating_point or dt.is_complex or dt is _BOOL:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.scalar_name(dt)}'")
    return write_out(cls.apply(input, other), out)


def gcd(input, other, *, out=None):
    """The elementwise greatest common divisor of integer tensors (non-negative; ``gcd(0, 0) = 0``).

    Example::

        >>> ember.gcd(ember.tensor([4, -6, 0]), ember.tensor([6, 4, 5]))
        tensor([2, 2, 5])
    """
    return _integers_only(Gcd, "gcd", input, other, out)


def lcm(input, other, *, out=None):
    """The elementwise least common multiple of integer tensors (non-negative; 0 if either is 0)."""
    return _integers_only(Lcm, "lcm", input, other, out)


# -- Tensor methods -------------------------------------------------------------------------------------------------
def _rdiv(self, other):
    return div(other, self)


def _rfloordiv(self, other):
    return floor_divide(other, self)


def _rmod(self, other):
    return remainder(other, self)


def _rpow(self, other):
    return pow(other, self)


def _dunder(fn):
    """``fn`` as ``*``: an operand that is neither a Tensor nor a number gives NotImplemented, so that Python repeats
    a sequence by an integer tensor (``[pad] * (max_len - len(seq))``), as torch. (Only for ``*``: the other
    operators stay one call, the cost of a small op's dispatch.)"""
    def method(self, other):
        try:
            return fn(self, other)
        except TypeError:
            if isinstance(other, Tensor):
                raise
            return NotImplemented
    return method


register(add, sub, mul, div, true_divide, floor_divide, remainder, fmod, pow, float_power, atan2, hypot, xlogy,
         copysign, maximum, minimum, fmax, fmin, logaddexp, logaddexp2, heaviside, ldexp, nextafter, gcd, lcm,
         gcd_=inplace(gcd), lcm_=inplace(lcm),
         subtract=sub, multiply=mul, divide=div, arctan2=atan2,
         __add__=add, __radd__=add, __sub__=sub, __rsub__=rsub, __mul__=_dunder(mul), __rmul__=_dunder(mul),
         __truediv__=div, __rtruediv__=_rdiv, __floordiv__=floor_divide, __rfloordiv__=_rfloordiv,
         __mod__=remainder, __rmod__=_rmod, __pow__=pow, __rpow__=_rpow,
         add_=inplace(add), sub_=inplace(sub), subtract_=inplace(sub), mul_=inplace(mul), multiply_=inplace(mul),
         div_=inplace(div), divide_=inplace(div), true_divide_=inplace(div), floor_divide_=inplace(floor_divide),
         remainder_=inplace(remainder), fmod_=inplace(fmod), pow_=inplace(pow), float_power_=_float_power_,
         atan2_=inplace(atan2), arctan2_=inplace(atan2), hypot_=inplace(hypot), xlogy_=inplace(xlogy),
         copysign_=inplace(copysign), heaviside_=inplace(heaviside), ldexp_=inplace(ldexp),
         nextafter_=inplace(nextafter),
         __iadd__=inplace(add), __isub__=inplace(sub), __imul__=inplace(mul), __itruediv__=inplace(div),
         __ifloordiv__=inplace(floor_divide), __imod__=inplace(remainder), __ipow__=inplace(pow))
