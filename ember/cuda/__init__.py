"""CUDA through CuPy: availability, device queries and the per-device random generators."""
from .._device import _import_cupy, cuda_available
from .._legacy import CUDA_TYPES as _TYPES

(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_TYPES[n] for n in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                                    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"))


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (``ember.OutOfMemoryError`` is the same class)."""


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


def _require_cuda():
    if not cuda_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _import_cupy()


def _index(device):
    """The index of ``device`` (None: the current one; an int, 'cuda:N' or an ember.device)."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    from .._device import device as _dev
    return _dev(device).index or 0


def synchronize(device=None):
    """Waits for all work on a CUDA device (the current one by default) to finish."""
    cp = _require_cuda()
    with cp.cuda.Device(_index(device)):
        cp.cuda.Device().synchronize()


def get_device_name(device=None):
    """The name of a CUDA device (the current one by default)."""
    props = _require_cuda().cuda.runtime.getDeviceProperties(_index(device))
    return props["name"].decode()


def is_bf16_supported(including_emulation=True):
    """Whether the current CUDA device computes in bfloat16 (compute capability 8.0 or more); False without CUDA."""
    if not cuda_available():
        return False
    props = _import_cupy().cuda.runtime.getDeviceProperties(current_device())
    return props["major"] >= 8


# -- memory: ember allocates through CuPy's default memory pool -------------------------------------------------------
_peak = {}  # (device index, 'allocated' | 'reserved') -> the largest value seen since the last reset


def _pool_bytes(device, kind):
    if not cuda_available():
        return 0
    cp = _import_cupy()
    i = _index(device)
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(i):
        n = pool.used_bytes() if kind == "allocated" else pool.total_bytes()
    _peak[i, kind] = max(_peak.get((i, kind), 0), n)
    return n


def memory_allocated(device=None):
    """Bytes of CUDA memory held by tensors on a device (0 without CUDA)."""
    return _pool_bytes(device, "allocated")


def memory_reserved(device=None):
    """Bytes of CUDA memory held by the caching allocator (CuPy's memory pool) on a device (0 without CUDA)."""
    return _pool_bytes(device, "reserved")


def max_memory_allocated(device=None):
    """The largest :func:`memory_allocated` since the last :func:`reset_peak_memory_stats`. CuPy's pool keeps no
    peak, so ember's is the largest value seen by the memory queries of this module (0 without CUDA)."""
    if not cuda_available():
        return 0
    _pool_bytes(device, "allocated")
    return _peak[_index(device), "allocated"]


def max_memory_reserved(device=None):
    """The largest :func:`memory_reserved` since the last :func:`reset_peak_memory_stats` (as
    :func:`max_memory_allocated`, sampled at the queries)."""
    if not cuda_available():
        return 0
    _pool_bytes(device, "reserved")
    return _peak[_index(device), "reserved"]


def reset_peak_memory_stats(device=None):
    """Restarts the peaks of :func:`max_memory_allocated` and :func:`max_memory_reserved` from the current values."""
    if not cuda_available():  # torch's CPU build lacks the binding
        raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'")
    i = _index(device)
    _peak.pop((i, "allocated"), None)
    _peak.pop((i, "reserved"), None)


def empty_cache():
    """Returns the unused blocks of CuPy's memory pool to the device (does nothing without CUDA)."""
    if cuda_available():
        _import_cupy().get_default_memory_pool().free_all_blocks()


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
