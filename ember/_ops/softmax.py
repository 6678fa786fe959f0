"""softmax, log_softmax and softmin along a dimension: stable at large logits, with one-line backwards."""

__all__ = ["softmax", "log_softmax", "_softmax_backward_data", "_log_softmax_backward_data"]
import warnings

from .. import _dtype
from .._tensor import register, wrap_dim
from ..autograd.function import Function
from .reduce import _quiet, _tname, numpy_aliases


def _shifted(xp, x, dim):
    """``x`` minus its max along ``dim`` (so that exp never overflows), as a new C-contiguous array: the results
    are contiguous whatever the input's layout."""
    if x.shape[dim] == 0:
        return x.copy()
    return xp.subtract(x, xp.amax(x, axis=dim, keepdims=True), out=xp.empty(x.shape, x.dtype))


def _axis(t, dim):
    return dim if t.ndim else ()


class Softmax(Function):
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dim):
        xp = ctx.xp
        ctx.dim = dim
        with _quiet(xp):
            e = _shifted(xp, x.reshape(1) if x.ndim == 0 else x, dim)
            xp.exp(e, out=e)
            e /= xp.sum(e, axis=dim, keepdims=True)
        y = e.reshape(x.shape)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return SoftmaxBackward.apply(grad, y, dim=_axis(y, ctx.dim))


class SoftmaxBackward(Function):
    """``y * (g - sum(g * y, dim))``, fused; differentiable again for higher-order gradients."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, y, dim):
        ctx.dim = dim
        gy = g * y
        gy -= y * ctx.xp.sum(gy, axis=dim, keepdims=True)
        ctx.save_for_backward(g, y)
        return gy

    @staticmethod
    def backward(ctx, go):
        g, y = ctx.saved_tensors
        d = ctx.dim
        gg = SoftmaxBackward.apply(go, y, dim=d) if ctx.needs_input_grad[0] else None
        gy = None
        if ctx.needs_input_grad[1]:
            gy = go * (g - (g * y).sum(d, keepdim=True)) - g * (go * y).sum(d, keepdim=True)
        return gg, gy


class LogSoftmax(Function):
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, dim, half=None):
        xp = ctx.xp
        ctx.dim = dim
        with _quiet(xp):
            s = _shifted(xp, x.reshape(1) if x.ndim == 0 else x, dim)
            lse = xp.sum(xp.exp(s), axis=dim, keepdims=True)
            if half is not None and dim == x.ndim - 1:  # along the last dim torch rounds the sum and its log to half
                lse = xp.log(lse.astype(half).astype(s.dtype)).astype(half).astype(s.dtype)
            else:
                lse = xp.log(lse)
            s -= lse
        y = s.reshape(x.shape)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return LogSoftmaxBackward.apply(grad, y, dim=_axis(y, ctx.dim))


class LogSoftmaxBackward(Function):
    """``g - exp(y) * sum(g, dim)``, fused; differentiable again for higher-order gradients."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, y, dim):
        xp = ctx.xp
        ctx.dim = dim
        out = xp.exp(y)
        out *= -xp.sum(g, axis=dim, keepdims=True)
        out += g
        ctx.save_for_backward(g, y)
        return out

    @staticmethod
    def backward(ctx, go):
        g, y = ctx.saved_tensors
        d = ctx.dim
        e = y.exp()
        gg = go - (go * e).sum(d, keepdim=True) if ctx.needs_input_grad[0] else None
        gy = -go * e * g.sum(d, keepdim=True) if ctx.needs_input_grad[1] else None
        return gg, gy


def _apply(op, name, input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    d = wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        if input.numel() == 0:  # torch returns before dispatching on the dtype
            return input.to(input.dtype, copy=True)
        kernel = "lastdim_kernel_impl" if d == input.ndim - 1 or input.ndim == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{kernel}\" not implemented for '{_tname(input.dtype)}'")
    if op is LogSoftmax and (input.dtype is _dtype.float16 or input.dtype is _dtype.bfloat16):
        return op.apply(input, dim=d, half=input.dtype.np)
    return op.apply(input, dim=d)


@numpy_aliases
def softmax(input, dim, dtype=None):
    """``exp(input) / sum(exp(input), dim)``, computed stably; ``dtype`` casts the input first.

    Example::

        >>> ember.tensor([1e4, 1e4]).softmax(0)
        tensor([0.5000, 0.5000])
    """
    return _apply(Softmax, "softmax", input, dim, dtype)


@numpy_aliases
def log_softmax(input, dim, dtype=None):
    """``log(softmax(input, dim))``, computed stably (no log of an underflowed zero).

    Example::

        >>> ember.tensor([0., 1e4]).log_softmax(0)
        tensor([-10000.,      0.])
    """
    return _apply(LogSoftmax, "log_softmax", input, dim, dtype)


def _backward_data(op, grad_output, output, dim, input_dtype):
    if grad_output.dtype is not output.dtype or _dtype.to_dtype(input_dtype) is not grad_output.dtype:
        other = output.dtype if grad_output.dtype is not output.dtype else _dtype.to_dtype(input_dtype)
        raise RuntimeError(f"expected scalar type {_tname(grad_output.dtype)} but found {_tname(other)}")
    if grad_output.shape != output.shape:
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {list(grad_output.shape)} does not equal {list(output.shape)} (while "
                           f"checking arguments for {op.__name__[:-8].lower()}_backward)")
    return op.apply(grad_output, output, dim=_axis(output, wrap_dim(dim, output.ndim)))


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of ``softmax`` along ``dim`` from its ``output`` and the gradient ``grad_output`` of it, in
    ``input_dtype`` (the dtype of both); differentiable.

    Example::

        >>> y = ember.tensor([0., 1.]).softmax(0)
        >>> ember._softmax_backward_data(ember.tensor([1., 0.]), y, 0, ember.float32)
        tensor([ 0.1966, -0.1966])
    """
    return _backward_data(SoftmaxBackward, grad_output, output, dim, input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of ``log_softmax`` along ``dim`` from its ``output`` and the gradient ``grad_output`` of it, in
    ``input_dtype`` (the dtype of both); differentiable."""
    return _backward_data(LogSoftmaxBackward, grad_output, output, dim, input_dtype)


def implicit_dim(name, ndim, stacklevel):
    """The dim ``nn.functional.softmax`` and friends pick when none is given (deprecated in torch, with a warning)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)`` (``nn.functional.softmin``)."""
    if dim is None:
        dim = implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _apply(Softmax, "softmax", -input if input.dtype.is_floating_point else input, dim, None)


register(softmax, log_softmax)
