"""CUDA through CuPy: availability, device queries and the per-device random generators."""
from .._device import _import_cupy, cuda_available


def is_available():
    """Whether a CUDA GPU is usable (CuPy installed and a device present)."""
    return cuda_available()


def device_count():
    """The number of CUDA devices (0 without CuPy or a GPU)."""
    return _import_cupy().cuda.runtime.getDeviceCount() if cuda_available() else 0


def current_device():
    """The index of the current CUDA device."""
    return _import_cupy().cuda.runtime.getDevice()


def set_device(device):
    """Makes ``device`` (an index, ``'cuda:N'`` or an ember.device) the current CUDA device."""
    from .._device import device as _dev
    d = _dev("cuda", device) if isinstance(device, int) else _dev(device)
    _import_cupy().cuda.runtime.setDevice(d.index or 0)


def synchronize(device=None):
    """Waits for all work on the current CUDA device to finish."""
    if cuda_available():
        _import_cupy().cuda.Device().synchronize()


def _generator(device=None):
    from .._random import cuda_generator
    if device is None or device == "cuda":
        return cuda_generator(current_device())
    from .._device import device as _dev
    return cuda_generator(device if isinstance(device, int) else _dev(device).index or 0)


def manual_seed(seed):
    """Seeds the current CUDA device's generator (silently does nothing without CUDA, as torch)."""
    if cuda_available():
        _generator().manual_seed(seed)


def manual_seed_all(seed):
    """Seeds every CUDA device's generator."""
    for i in range(device_count()):
        _generator(i).manual_seed(seed)


def seed():
    """Seeds the current CUDA device's generator from the OS's entropy."""
    if cuda_available():
        _generator().seed()


def seed_all():
    """Seeds every CUDA device's generator with one seed from the OS's entropy."""
    if cuda_available():
        s = _generator(0).seed()
        manual_seed_all(s)


def initial_seed():
    """The current CUDA device generator's seed."""
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    """The state of a CUDA device's generator as a uint8 tensor."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda"):
    """Restores a CUDA device generator's state."""
    _generator(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def __getattr__(name):
    # ember.cuda.amp (torch's older spelling of ember.amp for CUDA), imported on first use
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
