"""Parameter initialisation, in place and without recording gradients (as ``torch.nn.init``)."""
import math
import warnings

from .._device import special_module
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_", "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


def _write(tensor, value):
    """Writes ``value`` (an array or a number) into ``tensor``'s memory as an in-place op does (a meta tensor has
    none: nothing is written)."""
    arr = tensor._data
    if not tensor.is_meta:
        if arr.ndim == 0:
            arr[()] = value
        else:
            arr[...] = value
    tensor._bump()
    return tensor


def _compute_array(tensor):
    """The tensor's values as an array NumPy/CuPy can compute on (half types widened to float32)."""
    arr = tensor._data
    return arr.astype("float32") if tensor.dtype.itemsize < 4 and tensor.dtype.is_floating_point else arr.copy()


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2) (relu),
    sqrt(2 / (1 + slope^2)) (leaky_relu), 3/4 (selu).

    Example::

        >>> ember.nn.init.calculate_gain('leaky_relu', 0.2)
        1.3867504905630728
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` with values drawn from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills ``tensor`` with values drawn from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills ``tensor`` with values drawn from N(mean, std^2) truncated to [a, b] (by inverting the CDF)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        u = tensor
        if tensor.dtype.itemsize < 4 and tensor.dtype.is_floating_point:  # drawn finer than the half type holds
            from .._creation import empty
            from .._dtype import float32
            u = empty(tensor.shape, dtype=float32, device=tensor.device)
        u.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        x = _compute_array(u)
        special_module(_xp(tensor)).erfinv(x, out=x)
        x *= std * math.sqrt(2.0)
        x += mean
        _xp(tensor).clip(x, a, b, out=x)
        return _write(tensor, x)


def constant_(tensor, val):
    """Fills ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills the 2-D ``tensor`` with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    return _write(tensor, _xp(tensor).eye(*tensor.shape, dtype=tensor._data.dtype))


def dirac_(tensor, groups=1):
    """Fills the 3-, 4- or 5-D ``tensor`` with the Dirac delta: a convolution with it preserves the identity of
    (the first of each group's) input channels."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    if tensor.is_meta:
        return tensor
    arr = tensor._data
    arr[...] = 0
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            arr[(g * out_per_group + d, d) + centre] = 1
    tensor._bump()
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan_mode)``.

    Example::

        >>> w = ember.empty(3, 5)
        >>> _ = ember.nn.init.kaiming_uniform_(w, mode='fan_in', nonlinearity='relu')
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan_mode)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills ``tensor`` (at least 2-D, trailing dimensions flattened) with a (semi-)orthogonal matrix times
    ``gain``, from the QR decomposition of a Gaussian matrix."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    from .._creation import empty
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flat = empty(rows, cols, dtype=tensor.dtype, device=tensor.device).normal_(0, 1, generator=generator)
    x = _compute_array(flat)
    xp = _xp(tensor)
    if rows < cols:
        x = x.T
    q, r = xp.linalg.qr(x)
    q *= xp.sign(xp.diagonal(r))  # unique decomposition: R with a positive diagonal
    if rows < cols:
        q = q.T
    q *= gain
    return _write(tensor, q.reshape(tensor.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fills the 2-D ``tensor`` with N(0, std^2) values, then zeroes ``ceil(sparsity * rows)`` random entries of
    each column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .. import randperm
    rows, cols = tensor.shape
    if tensor.is_meta:
        return tensor
    num_zeros = math.ceil(sparsity * rows)
    normal_(tensor, 0, std, generator)
    arr = tensor._data
    for col in range(cols):
        arr[randperm(rows, generator=generator, device=tensor.device)._data[:num_zeros], col] = 0
    tensor._bump()
    return tensor


# the private in-place fills that model code calls directly
_no_grad_uniform_, _no_grad_normal_, _no_grad_trunc_normal_ = uniform_, normal_, trunc_normal_
_no_grad_fill_, _no_grad_zero_ = constant_, zeros_


def _xp(tensor):
    from .._device import array_module
    return array_module(tensor.device)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__doc__ = f"Deprecated alias of :func:`{new_name}`."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
