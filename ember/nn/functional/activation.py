"""Activation functions (``nn.functional.relu`` and friends), their in-place forms, and the softmax family."""

__all__ = ["threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "glu", "gelu",
           "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus", "softshrink", "tanh", "sigmoid",
           "hardsigmoid", "silu", "mish", "hardswish", "softmin", "softmax", "log_softmax", "gumbel_softmax"]
from ... import _dtype
from ..._autocast import lower_precision_inputs
from ..._creation import empty, empty_like, zeros_like
from ..._ops import nn_ops as _ops
from ..._ops.softmax import implicit_dim
from ..._ops.softmax import softmax as _softmax, log_softmax as _log_softmax
from ..._tensor import register, write_inplace

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(fn, input, inplace, *args):
    return write_inplace(input, fn, *args) if inplace else fn(input, *args)


def _relu(input):
    if input.dtype is _dtype.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _ops.Relu.apply(input)


def relu(input, inplace=False):
    """``max(0, input)`` elementwise.

    Example::

        >>> F.relu(ember.tensor([-1., 2.]))
        tensor([0., 2.])
    """
    return _maybe_inplace(_relu, input, inplace)


def relu_(input):
    """In-place :func:`relu`."""
    return write_inplace(input, _relu)


def _threshold(input, threshold, value):
    return _ops.Threshold.apply(input, threshold=threshold, value=value)


def threshold(input, threshold, value, inplace=False):
    """``input`` where it is greater than ``threshold``, ``value`` elsewhere."""
    return _maybe_inplace(_threshold, input, inplace, threshold, value)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return write_inplace(input, _threshold, threshold, value)


def _hardtanh(input, min_val, max_val):
    if input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtype.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _ops.Hardtanh.apply(input, lo=min_val, hi=max_val)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]`` (gradient 0 outside, and at the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(_hardtanh, input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(0, input), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _elu(input, alpha, scale, input_scale):
    return _ops.Elu.apply(input, alpha=alpha, scale=scale, input_scale=input_scale)


def elu(input, alpha=1.0, inplace=False):
    """``input`` above 0, ``alpha * (exp(input) - 1)`` below."""
    return _maybe_inplace(_elu, input, inplace, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return elu(input, alpha, True)


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with SELU's fixed ``alpha`` and ``scale``."""
    return _maybe_inplace(_elu, input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):
    """In-place :func:`selu`."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_inplace(_elu, input, inplace, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, True)


def _leaky_relu(input, negative_slope):
    return _ops.LeakyRelu.apply(input, slope=negative_slope)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` above 0, ``negative_slope * input`` below."""
    return _maybe_inplace(_leaky_relu, input, inplace, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


@lower_precision_inputs
def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)`` with a learnable ``weight`` per channel (dim 1) or a single one."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
        weight = weight.reshape((n,) + (1,) * (input.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return _ops.PreluKernel.apply(input, weight)


def _rrelu(input, lower, upper, training, generator=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return _ops.LeakyRelu.apply(input, slope=(lower + upper) / 2)
    if not input.dtype.is_floating_point or input.dtype is _dtype.float16 and input.device.type == "cpu":
        name = _dtype.scalar_name(input.dtype)
        raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for \'{name}\'')
    r = empty(input.shape, dtype=input.dtype, device=input.device).uniform_(lower, upper, generator=generator)
    return _ops.RreluNoise.apply(input, r=r._data)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky relu with a slope drawn uniformly from ``[lower, upper]`` per element in training, and the mean
    slope ``(lower + upper) / 2`` otherwise."""
    return _maybe_inplace(_rrelu, input, inplace, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    """The gated linear unit ``a * sigmoid(b)``, with ``a`` and ``b`` the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"glu_cpu" not implemented for \'{_dtype.scalar_name(input.dtype)}\'')
    d = input._wrap_dim(dim)
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (Phi the standard normal CDF); ``approximate='tanh'`` uses the tanh approximation."""
    if approximate == "none":
        return _ops.Gelu.apply(input)
    if approximate == "tanh":
        return _ops.GeluTanh.apply(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def logsigmoid(input):
    """``log(sigmoid(input))``, computed without overflow."""
    return _ops.LogSigmoid.apply(input)


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, 0 elsewhere."""
    return _ops.Hardshrink.apply(input, lambd=lambd)


def softshrink(input, lambd=0.5):
    """``input`` moved ``lambd`` towards 0, and 0 where ``|input| <= lambd``."""
    return _ops.Softshrink.apply(input, lambd=lambd)


def tanhshrink(input):
    """``input - tanh(input)``."""
    return input - input.tanh()


def softsign(input):
    """``input / (1 + |input|)``."""
    return input / (input.abs() + 1)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    return _ops.Softplus.apply(input, beta=beta, threshold=threshold)


def tanh(input):
    """``tanh(input)``."""
    return input.tanh()


def sigmoid(input):
    """``1 / (1 + exp(-input))``."""
    return input.sigmoid()


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    return _maybe_inplace(_ops.Hardsigmoid.apply, input, inplace)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish)."""
    return _maybe_inplace(_ops.Silu.apply, input, inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(_ops.Mish.apply, input, inplace)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    return _maybe_inplace(_ops.Hardswish.apply, input, inplace)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x), dim)``, computed stably; ``dtype`` casts the input first."""
    if dim is None:
        dim = implicit_dim("softmax", input.ndim, _stacklevel)
    return _softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``."""
    if dim is None:
        dim = implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(-input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log(softmax(x, dim))``, computed stably."""
    if dim is None:
        dim = implicit_dim("log_softmax", input.ndim, _stacklevel)
    return _log_softmax(input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution over ``dim``; ``hard`` gives one-hot samples whose gradient is
    the soft sample's (straight-through)."""
    if eps != 1e-10:
        import warnings
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


register(relu, relu_, hardshrink)
