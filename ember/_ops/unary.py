"""Elementwise ops of one input."""

__all__ = ["neg", "negative", "exp", "conj"]
from .._tensor import inplace, register
from ..autograd.function import Function


class Unary(Function):
    half_in_float32 = True


class Neg(Unary):
    @staticmethod
    def forward(ctx, x):
        return ctx.xp.negative(x)

    @staticmethod
    def backward(ctx, grad):
        return -grad


def neg(input, *, out=None):
    """``-input``."""
    return Neg.apply(input)


negative = neg


class Exp(Unary):
    @staticmethod
    def forward(ctx, x):
        y = ctx.xp.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


def exp(input, *, out=None):
    """Elementwise ``e ** input``."""
    return Exp.apply(input)


class Conj(Unary):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def conj(input):
    """The complex conjugate (the tensor itself for real dtypes)."""
    return input if not input.dtype.is_complex else Conj.apply(input)


register(neg, negative, exp, conj, __neg__=neg, neg_=inplace(neg), exp_=inplace(exp))
