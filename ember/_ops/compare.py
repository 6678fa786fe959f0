"""Comparisons, elementwise predicates (isnan, signbit, ...), logical and bitwise ops. All are non-differentiable."""

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
           "isclose", "allclose", "equal", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit",
           "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "isin"]
from numbers import Number

import numpy as np

from .. import _dtype
from .._tensor import Tensor, inplace, register, write_out
from ..autograd.function import Function
from .binary import public, public_tensors, recover

_SCALARS = (bool, int, float, complex)


def _operator(fn, arrays=False):
    """A comparison dunder: other operands (None, strings, lists) defer to Python (``==`` is then False); with
    ``arrays``, NumPy arrays compare elementwise."""
    def method(self, other):
        if other.__class__ in _SCALARS or isinstance(other, (Tensor, Number)):
            return fn(self, other)
        if arrays and isinstance(other, np.ndarray):
            return fn(self, other)
        return NotImplemented
    method.__name__ = fn.__name__
    return method


# -- comparisons ----------------------------------------------------------------------------------------------------
class Compare(Function):
    promote = True  # compared in the promoted dtype; the result is bool
    ufunc = None

    @classmethod
    def forward(cls, ctx, a, b):
        if b.__class__ is int:
            b = _wrap_int(b, a)
        elif a.__class__ is int:
            a = _wrap_int(a, b)
        return getattr(ctx.xp, cls.ufunc)(a, b)


_INT_RANGE = {}


def _wrap_int(v, a):
    """torch casts a Python int compared with an integer tensor to the tensor's dtype, wrapping around (uint8 254
    equals -2) where NumPy compares the values."""
    dt = a.dtype
    if dt.kind not in "iu":
        return v
    r = _INT_RANGE.get(dt)
    if r is None:
        info = np.iinfo(dt)
        r = _INT_RANGE[dt] = (int(info.min), int(info.max))
    if r[0] <= v <= r[1]:
        return v
    if not -2 ** 63 <= v < 2 ** 64:
        raise OverflowError("int too big to convert")
    return np.asarray(v & (2 ** 64 - 1), dtype=np.uint64).astype(dt)[()]


class Eq(Compare):
    ufunc = "equal"


class Ne(Compare):
    ufunc = "not_equal"


class Lt(Compare):
    ufunc = "less"
    no_complex = "lt_cpu"


class Le(Compare):
    ufunc = "less_equal"
    no_complex = "le_cpu"


class Gt(Compare):
    ufunc = "greater"
    no_complex = "gt_cpu"


class Ge(Compare):
    ufunc = "greater_equal"
    no_complex = "ge_cpu"


eq = public(Eq, "eq", "``input == other`` elementwise (a bool tensor).")
ne = not_equal = public(Ne, "ne", "``input != other`` elementwise.")
lt = less = public(Lt, "lt", "``input < other`` elementwise.")
le = less_equal = public(Le, "le", "``input <= other`` elementwise.")
gt = greater = public(Gt, "gt", "``input > other`` elementwise.")
ge = greater_equal = public(Ge, "ge", "``input >= other`` elementwise.")


class IsClose(Function):
    @staticmethod
    def forward(ctx, a, b, rtol, atol, equal_nan):
        xp = ctx.xp
        close = a == b
        floating = a.dtype.kind in "fcV"
        if equal_nan and floating:
            close |= xp.isnan(a) & xp.isnan(b)
        if rtol == 0 and atol == 0:
            return close
        if not floating:
            a, b = a.astype(_dtype._default[0].np), b.astype(_dtype._default[0].np)
        err = xp.abs(a - b)
        return close | (xp.isfinite(err) & (err <= atol + xp.abs(rtol * b)))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close).

    Example::

        >>> ember.isclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0 + 1e-7, 2.1]))
        tensor([ True, False])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype.scalar_name(input.dtype)} did not match {_dtype.scalar_name(other.dtype)}")
    if not rtol >= 0:  # NaN included
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    try:
        return IsClose.apply(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except (ValueError, OverflowError) as e:
        return recover(e, IsClose, input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``input`` is close to ``other`` (see ``isclose``); a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """Whether both tensors have the same shape and elements; a Python bool."""
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return input.shape == other.shape and bool(eq(input, other)._data.all())


class IsIn(Function):
    promote = True  # compared in the promoted dtype, as eq
    no_complex = RuntimeError, "Unsupported input type encountered for isin(): {}"

    @staticmethod
    def forward(ctx, elements, test, invert):
        xp = ctx.xp
        elements, test = xp.asarray(elements), xp.asarray(test)  # CuPy takes arrays only
        if elements.dtype.kind == "V":  # bfloat16, which CuPy's isin lacks: compared exactly in float32
            elements, test = elements.astype(np.float32), test.astype(np.float32)
        return xp.isin(elements, test, invert=invert)


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number); a bool tensor of
    ``elements``' shape.

    Example::

        >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5]))
        tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: expected at least one Tensor")
    if any(isinstance(t, bool) or getattr(t, "dtype", None) is _dtype.bool for t in (elements, test_elements)):
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return write_out(IsIn.apply(elements, test_elements, invert=invert), out)


# -- predicates -----------------------------------------------------------------------------------------------------
class Predicate(Function):
    test = None

    @classmethod
    def forward(cls, ctx, x):
        return cls.test(ctx.xp, x)


def _floating(x):
    return x.dtype.kind in "fcV"


class IsNan(Predicate):
    test = staticmethod(lambda xp, x: xp.isnan(x) if _floating(x) else xp.zeros(x.shape, bool))


class IsInf(Predicate):
    test = staticmethod(lambda xp, x: xp.isinf(x) if _floating(x) else xp.zeros(x.shape, bool))


class IsPosInf(Predicate):
    no_complex = RuntimeError, "isposinf does not support complex inputs."
    test = staticmethod(lambda xp, x: x == xp.inf if _floating(x) else xp.zeros(x.shape, bool))


class IsNegInf(Predicate):
    no_complex = RuntimeError, "isneginf does not support complex inputs."
    test = staticmethod(lambda xp, x: x == -xp.inf if _floating(x) else xp.zeros(x.shape, bool))


class IsFinite(Predicate):
    test = staticmethod(lambda xp, x: xp.isfinite(x) if _floating(x) else xp.ones(x.shape, bool))


class IsReal(Predicate):
    test = staticmethod(lambda xp, x: xp.imag(x) == 0 if x.dtype.kind == "c" else xp.ones(x.shape, bool))


class Signbit(Predicate):
    no_complex = NotImplementedError, "signbit is not implemented for complex tensors."
    test = staticmethod(lambda xp, x: xp.signbit(x) if _floating(x) else x < 0)  # -0.0 has its sign bit set


def _predicate(cls, name, doc):
    def op(input):
        return cls.apply(input)
    op.__name__ = op.__qualname__ = name
    op.__code__ = op.__code__.replace(co_name=name, co_qualname=name)  # names the op in tracebacks and errors
    op.__doc__ = doc
    return op


isnan = _predicate(IsNan, "isnan", "Whether each element is NaN.")
isinf = _predicate(IsInf, "isinf", "Whether each element is +inf or -inf.")
isposinf = _predicate(IsPosInf, "isposinf", "Whether each element is +inf.")
isneginf = _predicate(IsNegInf, "isneginf", "Whether each element is -inf.")
isfinite = _predicate(IsFinite, "isfinite", "Whether each element is finite (not inf, not NaN).")
isreal = _predicate(IsReal, "isreal", "Whether each element is real (always True for real dtypes).")
signbit = _predicate(Signbit, "signbit", "Whether each element's sign bit is set (True for -0.0).")


# -- logical and bitwise ops ----------------------------------------------------------------------------------------
class Logical(Function):
    ufunc = None

    @classmethod
    def forward(cls, ctx, *args):
        return getattr(ctx.xp, cls.ufunc)(*args)


class LogicalAnd(Logical):
    ufunc = "logical_and"


class LogicalOr(Logical):
    ufunc = "logical_or"


class LogicalXor(Logical):
    ufunc = "logical_xor"


class LogicalNot(Logical):
    ufunc = "logical_not"


logical_and = public_tensors(LogicalAnd, "logical_and", "Elementwise logical AND of the truth values (a bool tensor).")
logical_or = public_tensors(LogicalOr, "logical_or", "Elementwise logical OR of the truth values.")
logical_xor = public_tensors(LogicalXor, "logical_xor", "Elementwise logical XOR of the truth values.")


def logical_not(input, *, out=None):
    """Elementwise logical NOT of the truth values (a bool tensor)."""
    r = LogicalNot.apply(input)
    return r if out is None else write_out(r, out)


class Bitwise(Function):
    promote = True
    ufunc = kernel = None
    bools = True  # shifts are not defined on bool

    @classmethod
    def forward(cls, ctx, *args):
        kind = next(a.dtype.kind for a in args if hasattr(a, "dtype"))
        if kind not in "iu" and not (kind == "b" and cls.bools):
            dt = _dtype.from_numpy_dtype(next(a.dtype for a in args if hasattr(a, "dtype")))
            raise NotImplementedError(f'"{cls.kernel}_cpu" not implemented for \'{_dtype.scalar_name(dt)}\'')
        return getattr(ctx.xp, cls.ufunc)(*args)


class BitwiseAnd(Bitwise):
    ufunc = kernel = "bitwise_and"


class BitwiseOr(Bitwise):
    ufunc = kernel = "bitwise_or"


class BitwiseXor(Bitwise):
    ufunc = kernel = "bitwise_xor"


class BitwiseNot(Bitwise):
    ufunc, kernel = "invert", "bitwise_not"


class LeftShift(Bitwise):
    ufunc, kernel, bools = "left_shift", "lshift", False  # shifts past the width give 0, as in torch


class RightShift(Bitwise):
    ufunc, kernel, bools = "right_shift", "rshift", False  # shifts past the width fill with the sign bit


bitwise_and = public(BitwiseAnd, "bitwise_and", "Elementwise bitwise AND of integer or bool tensors.")
bitwise_or = public(BitwiseOr, "bitwise_or", "Elementwise bitwise OR of integer or bool tensors.")
bitwise_xor = public(BitwiseXor, "bitwise_xor", "Elementwise bitwise XOR of integer or bool tensors.")
bitwise_left_shift = public(LeftShift, "bitwise_left_shift", "``input << other`` for integer tensors.")
bitwise_right_shift = public(RightShift, "bitwise_right_shift",
                                     "``input >> other`` for integer tensors (arithmetic: keeps the sign).")


def bitwise_not(input, *, out=None):
    """Elementwise bitwise NOT of an integer tensor (logical NOT of a bool tensor)."""
    r = BitwiseNot.apply(input)
    return r if out is None else write_out(r, out)


def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    method.__name__ = "__r" + fn.__name__ + "__"
    return method


_METHODS = {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "greater": gt, "greater_equal": ge,
            "less": lt, "less_equal": le, "not_equal": ne, "logical_and": logical_and, "logical_or": logical_or,
            "logical_xor": logical_xor, "logical_not": logical_not, "bitwise_and": bitwise_and,
            "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
            "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift}
register(isclose, allclose, equal, isnan, isinf, isposinf, isneginf, isfinite, isreal, signbit,
         **_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()},
         __eq__=_operator(eq, arrays=True), __ne__=_operator(ne), __lt__=_operator(lt), __le__=_operator(le),
         __gt__=_operator(gt), __ge__=_operator(ge),
         __and__=bitwise_and, __rand__=bitwise_and, __or__=bitwise_or, __ror__=bitwise_or,
         __xor__=bitwise_xor, __rxor__=bitwise_xor, __invert__=_invert,
         __lshift__=bitwise_left_shift, __rlshift__=_reflected(bitwise_left_shift),
         __rshift__=bitwise_right_shift, __rrshift__=_reflected(bitwise_right_shift),
         __iand__=inplace(bitwise_and), __ior__=inplace(bitwise_or), __ixor__=inplace(bitwise_xor),
         __ilshift__=inplace(bitwise_left_shift), __irshift__=inplace(bitwise_right_shift))
