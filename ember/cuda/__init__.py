"""CUDA through CuPy: availability and device queries."""
from .._device import _import_cupy, cuda_available


def is_available():
    """Whether a CUDA GPU is usable (CuPy installed and a device present)."""
    return cuda_available()


def device_count():
    return _import_cupy().cuda.runtime.getDeviceCount() if cuda_available() else 0


def current_device():
    return _import_cupy().cuda.runtime.getDevice()


def set_device(device):
    from .._device import device as _dev
    d = _dev(device) if not isinstance(device, int) else _dev("cuda", device)
    _import_cupy().cuda.runtime.setDevice(d.index or 0)


def synchronize(device=None):
    if cuda_available():
        _import_cupy().cuda.Device().synchronize()


def manual_seed(seed):
    from .._random import manual_seed as _seed
    _seed(seed)


manual_seed_all = manual_seed
