"""``autocast``: the region in which matmul-like ops run in a lower-precision dtype and losses in float32."""
import contextvars
import functools
import warnings

from .. import _autocast, _dtype
from .._device import cuda_available

_DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
_SUPPORTED = {"cpu": (_dtype.bfloat16, _dtype.float16), "cuda": (_dtype.float16, _dtype.bfloat16)}
# {device type: dtype} of the innermost region per device, on or off: a region without a dtype takes it
_DTYPES = contextvars.ContextVar("ember_autocast_dtypes", default=None)


def is_autocast_available(device_type):
    """Whether autocast can run on ``device_type`` ('cpu' or 'cuda')."""
    return device_type in _SUPPORTED


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for ``device_type`` here."""
    return device_type in (_autocast.ACTIVE.get() or {})


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (the current region's, else the device's default)."""
    return (_DTYPES.get() or {}).get(device_type, _DEFAULT_DTYPES.get(device_type))


class autocast:
    """Context manager and decorator: inside it, ops on ``device_type`` tensors run in mixed precision.

    Matrix products, linear layers, convolutions and scaled dot-product attention cast their floating inputs
    (float64 excepted) to ``dtype``; losses cast float16/bfloat16 inputs to float32; other ops run in their inputs'
    dtypes. Gradients flow back through the casts, so parameters keep float32 gradients. ``enabled=False`` switches
    it off inside an enclosing region.

    Args:
        device_type (str): 'cpu' or 'cuda'
        dtype (ember.dtype, optional): the lower-precision dtype (default: the enclosing region's, else bfloat16 on
            CPU and float16 on CUDA)
        enabled (bool): whether autocast is on in the region
        cache_enabled (bool, optional): accepted for compatibility (ember keeps no cast cache)

    Example::

        >>> model = ember.nn.Linear(4, 2)
        >>> with ember.autocast("cpu"):
        ...     y = model(ember.randn(3, 4))
        >>> y.dtype
        ember.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _SUPPORTED:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else _dtype.to_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if self._enabled and device_type == "cuda" and not cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(f"ember.{d.name}" for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{device_type.upper()} Autocast only supports dtype of {names} currently.",
                          stacklevel=2)
            self._enabled = False
        self._token = self._dtype_token = None

    def __enter__(self):
        active = dict(_autocast.ACTIVE.get() or {})
        if self._enabled:
            active[self.device] = self.fast_dtype
        else:
            active.pop(self.device, None)
        self._token = _autocast.ACTIVE.set(active or None)
        self._dtype_token = _DTYPES.set({**(_DTYPES.get() or {}), self.device: self.fast_dtype})
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _DTYPES.reset(self._dtype_token)
        _autocast.ACTIVE.reset(self._token)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def is_autocast_cpu_enabled():
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use torch.is_autocast_enabled('cpu') instead.",
                  DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cpu') instead.",
                  DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    warnings.warn("torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cuda")


def _cast(value, device_type, dtype):
    if hasattr(value, "_data"):  # a tensor
        if value.device.type == device_type and value.dtype.is_floating_point and value.dtype is not _dtype.float64:
            return value.to(dtype)
        return value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates the ``forward`` of a custom autograd ``Function``: its ``backward`` (decorated with
    :func:`custom_bwd`) runs under the autocast state of forward. With ``cast_inputs``, forward runs with autocast
    off and its floating inputs on ``device_type`` cast to ``cast_inputs`` when called in an autocast region."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates the ``backward`` of a custom autograd ``Function`` whose forward has :func:`custom_fwd`: it runs
    under the autocast state that forward ran under."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
