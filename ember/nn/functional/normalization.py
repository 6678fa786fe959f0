"""Normalization functions: batch_norm, instance_norm, layer_norm, group_norm, rms_norm, local_response_norm."""

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm"]
import math

from ... import _dtype
from ..._creation import zeros
from ..._ops.memory_format import contiguous, suggest_format
from ..._ops.nn_norm import Normalize
from ..._ops.shape import cat
from ...autograd.grad_mode import no_grad


def _verify_batch_size(size):
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _check_numel(name, t, n):
    if t is not None and t.numel() != n:
        raise RuntimeError(f"{name} should contain {n} elements not {t.numel()}")


def _mixed(input, *params):
    """Whether the parameters (running statistics, weight, bias; None where absent) are float32 for a float16 or
    bfloat16 ``input``: the one mix of dtypes the normalizations accept on the CPU, with a result in the input's
    dtype."""
    given = [p for p in params if p is not None]
    if input.device.type != "cpu" or not given or given[0].dtype is input.dtype:
        for p in given:
            if p.dtype is not input.dtype:
                raise RuntimeError(f"expected scalar type {_dtype.scalar_name(input.dtype)} but found "
                                   f"{_dtype.scalar_name(p.dtype)}")
        return False
    if any(p.dtype is not _dtype.float32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def _channel_view(t, ndim):
    """A per-channel vector shaped ``(C, 1, ..., 1)`` to broadcast against an ``ndim``-d ``(N, C, ...)`` input."""
    return None if t is None else t.reshape((t.numel(),) + (1,) * (ndim - 2))


def _update(running, stat, momentum):
    """``running = (1 - momentum) * running + momentum * stat``, in place and outside the graph."""
    with no_grad():
        running.mul_(1 - momentum).add_(stat.to(running.dtype), alpha=momentum)


def _eval_norm(input, mean, var, weight, bias, eps):
    """``(input - mean) / sqrt(var + eps) * weight + bias`` with fixed statistics: one scale and one shift."""
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    dt = input.dtype
    return input * _channel_view(scale.to(dt), input.ndim) + _channel_view(shift.to(dt), input.ndim)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalizes each channel (dim 1) over the batch and spatial dims; see :class:`~ember.nn.BatchNorm2d`.

    In training the batch statistics are used and ``running_mean``/``running_var`` (if given) are updated in
    place with ``momentum`` (the variance unbiased); otherwise the running statistics are used.
    """
    size = list(input.shape)
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    c = size[1] if len(size) > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        _check_numel(name, t, c)
    _mixed(input, weight, bias, running_mean, running_var)
    if training and (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation "
                               "mode")
        return _eval_norm(input, running_mean, running_var, weight, bias, eps)
    axes = (0,) + tuple(range(2, input.ndim))
    input = contiguous(input, suggest_format(input.shape, input.stride()))  # the result's layout: channels_last kept
    y, mean, var = Normalize.apply(input, _channel_view(weight, input.ndim), _channel_view(bias, input.ndim),
                                   axes=axes, eps=eps)
    if running_mean is not None and input.numel():  # an empty batch leaves the statistics as they are
        _update(running_mean, mean.reshape(c), momentum)
        n = input.numel() // c
        _update(running_var, var.reshape(c) * (n / (n - 1)), momentum)
    return y


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each channel of each sample over its spatial dims; see :class:`~ember.nn.InstanceNorm2d`."""
    size = list(input.shape)
    if use_input_stats and math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    n, c = size[0], size[1]
    for name, t in (("weight", weight), ("bias", bias)):
        _check_numel(name, t, c)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {t.numel() * n}")
    _mixed(input, weight, bias, running_mean, running_var)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        return _eval_norm(input, running_mean, running_var, weight, bias, eps)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    y, mean, var = Normalize.apply(contiguous(input), _channel_view(weight, input.ndim),
                                   _channel_view(bias, input.ndim), axes=tuple(range(2, input.ndim)), eps=eps)
    if running_mean is not None:
        _update(running_mean, mean.reshape(n, c).mean(0), momentum)
    if running_var is not None:
        m = math.prod(size[2:])
        _update(running_var, var.reshape(n, c).mean(0) * (m / (m - 1)), momentum)
    return y


def _normalized_axes(input, normalized_shape, weight, bias, tail_sep=", "):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{tail_sep}{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(shape)}")
    return tuple(range(input.ndim - k, input.ndim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalizes over the trailing ``normalized_shape`` dims, then scales by ``weight`` and shifts by ``bias``.

    Example::

        >>> F.layer_norm(ember.tensor([[1., 3.]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    axes = _normalized_axes(input, normalized_shape, weight, bias)
    _mixed(input, weight, bias)
    return Normalize.apply(contiguous(input), weight, bias, axes=axes, eps=eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input ** 2) + eps) * weight`` over the trailing ``normalized_shape`` dims; ``eps``
    defaults to the input dtype's machine epsilon."""
    axes = _normalized_axes(input, normalized_shape, weight, None, tail_sep="")
    half = input.dtype in (_dtype.float16, _dtype.bfloat16)
    if eps is None:  # of the dtype computed in: float32 for halves
        eps = _dtype.finfo(_dtype.float32 if half else input.dtype).eps
    if weight is not None and weight.dtype is not input.dtype and not half:  # the result has the input's dtype
        weight = weight.to(input.dtype)
    y = Normalize.apply(contiguous(input), weight, None, axes=axes, eps=eps, center=False)[0]
    return contiguous(y, suggest_format(input.shape, input.stride()))  # the result's layout: channels_last kept


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes each group of ``C / num_groups`` channels of each sample, then applies a per-channel affine."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    fmt = suggest_format(input.shape, input.stride())  # the result's layout: channels_last kept
    shape = (n, num_groups, c // num_groups, math.prod(input.shape[2:]))
    if _mixed(input, weight, bias):  # the affine in float32 too, rounded once to the input's dtype
        g = (num_groups, c // num_groups, 1)
        y = Normalize.apply(input.reshape(shape), None if weight is None else weight.reshape(g),
                            None if bias is None else bias.reshape(g), axes=(2, 3), eps=eps)[0].reshape(input.shape)
        return contiguous(y, fmt)
    y = Normalize.apply(input.reshape(n, num_groups, shape[2] * shape[3]), None, None, axes=(2,),
                        eps=eps)[0].reshape(input.shape)
    if weight is not None:
        y = y * _channel_view(weight, input.ndim)
    if bias is not None:
        y = y + _channel_view(bias, input.ndim)
    return contiguous(y, fmt)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalizes each element by the summed squares of ``size`` neighbouring channels:
    ``x / (k + alpha * mean(x ** 2 over the window)) ** beta``."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    before, after = size // 2, (size - 1) // 2
    pad = lambda m: zeros((input.shape[0], m) + tuple(input.shape[2:]), dtype=input.dtype, device=input.device)
    padded = cat([pad(before), sq, pad(after)], 1)
    div = padded.narrow(1, 0, c)
    for i in range(1, size):
        div = div + padded.narrow(1, i, c)
    div = (div * (alpha / size) + k) ** beta
    return input / contiguous(div, suggest_format(input.shape, input.stride()))  # the input's layout kept
