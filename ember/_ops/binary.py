"""Elementwise ops of two inputs (broadcasting, torch's type promotion)."""

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide"]
from .._tensor import Tensor, inplace, register
from ..autograd.function import Function


class Binary(Function):
    promote = True
    half_in_float32 = True


class Add(Binary):
    @staticmethod
    def forward(ctx, a, b):
        return ctx.xp.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Binary):
    @staticmethod
    def forward(ctx, a, b):
        return ctx.xp.subtract(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad


class Mul(Binary):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.multiply(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


class Div(Binary):
    @staticmethod
    def forward(ctx, a, b):
        xp = ctx.xp
        if getattr(a, "dtype", None) is not None and a.dtype.kind in "biu" and (
                not hasattr(b, "dtype") or b.dtype.kind in "biu"):
            a = a.astype(_default_float().np)  # true division of integers gives the default float dtype
        ctx.save_for_backward(a, b)
        return xp.true_divide(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad / b if ctx.needs_input_grad[0] else None
        gb = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


def _default_float():
    from .._dtype import get_default_dtype
    return get_default_dtype()


def _alpha(other, alpha):
    return other if alpha == 1 else other * alpha


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting and promoting types as torch."""
    return Add.apply(input, _alpha(other, alpha))


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    return Sub.apply(input, _alpha(other, alpha))


subtract = sub


def mul(input, other, *, out=None):
    """Elementwise product."""
    return Mul.apply(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """Elementwise ``input / other``; ``rounding_mode`` None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode == "floor":
        from .elementwise_extra import floor_divide
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        from .elementwise_extra import trunc_divide
        return trunc_divide(input, other)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


divide = true_divide = div


def _rsub(self, other):
    return Sub.apply(other, self)


def _rdiv(self, other):
    return Div.apply(other, self)


register(add, sub, mul, div, subtract, multiply, divide, true_divide,
         __add__=add, __radd__=add, __sub__=sub, __rsub__=_rsub, __mul__=mul, __rmul__=mul,
         __truediv__=div, __rtruediv__=_rdiv,
         add_=inplace(add), sub_=inplace(sub), mul_=inplace(mul), div_=inplace(div),
         __iadd__=inplace(add), __isub__=inplace(sub), __imul__=inplace(mul), __itruediv__=inplace(div))
