"""``ember.accelerator``: the current accelerator, as ``torch.accelerator``. ember's one accelerator is CUDA (through
CuPy); where it is not available, the answers are those of a torch with no accelerator."""
import warnings

from . import cuda
from ._device import _import_cupy, cuda_available, device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "get_memory_info", "is_available", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "reset_peak_memory_stats", "set_device_idx", "set_device_index",
           "synchronize"]


def _require():
    if not cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device, optional=True):
    """The index of ``device``: an int, a string or an ember.device of the accelerator's type; None, when
    ``optional``, is the current device."""
    if isinstance(device, str):
        device = _device(device)
    index = device
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return current_device_index()
    return index


def _allocator_index(device):
    """The index of ``device`` for the memory queries, which check for an accelerator first."""
    _require()
    return _index(device)


def current_accelerator(check_available=False):
    """The accelerator's device type (``device(type='cuda')``, without an index), or None where there is none.

    Example::

        >>> model = ember.nn.Linear(2, 2)
        >>> if (acc := ember.accelerator.current_accelerator(check_available=True)) is not None:
        ...     model = model.to(acc)
    """
    return _device("cuda") if cuda_available() else None


def is_available():
    """Whether an accelerator is usable (a CUDA GPU and CuPy)."""
    return cuda_available()


def device_count():
    """The number of accelerator devices (0 where there is none)."""
    return cuda.device_count()


def current_device_index():
    """The index of the current accelerator device."""
    _require()
    return cuda.current_device()


def current_device_idx():
    """Deprecated: :func:`current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Makes ``device`` (an index, or a device of the accelerator's type with an index) the current device; a
    negative index does nothing."""
    index = _index(device, optional=False)
    if index >= 0:
        _require()
        cuda.set_device(index)


def set_device_idx(device, /):
    """Deprecated: :func:`set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """Context manager making ``device`` (an index, or None for no change) the current device inside the block."""

    def __init__(self, device, /):
        self.idx, self.prev_idx = device, -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            set_device_index(self.prev_idx)


def synchronize(device=None, /):
    """Waits for all work on an accelerator device (the current one by default) to finish."""
    index = _index(device)
    _require()
    cuda.synchronize(index)


def empty_cache():
    """Returns the unused cached memory of the accelerator's allocator to the device."""
    _require()
    cuda.empty_cache()


def memory_allocated(device_index=None, /):
    """Bytes of accelerator memory held by tensors on a device (the current one by default)."""
    return cuda.memory_allocated(_allocator_index(device_index))


def max_memory_allocated(device_index=None, /):
    """The peak of :func:`memory_allocated` since the last :func:`reset_peak_memory_stats`."""
    return cuda.max_memory_allocated(_allocator_index(device_index))


def memory_reserved(device_index=None, /):
    """Bytes of accelerator memory held by the caching allocator on a device."""
    return cuda.memory_reserved(_allocator_index(device_index))


def max_memory_reserved(device_index=None, /):
    """The peak of :func:`memory_reserved` since the last :func:`reset_peak_memory_stats`."""
    return cuda.max_memory_reserved(_allocator_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    """Restarts the peaks of :func:`max_memory_allocated` and :func:`max_memory_reserved`."""
    cuda.reset_peak_memory_stats(_allocator_index(device_index))


def get_memory_info(device_index=None, /):
    """``(free, total)`` bytes of a device's memory, as the driver reports them."""
    index = _index(device_index)
    _require()
    cp = _import_cupy()
    with cp.cuda.Device(index):
        return cp.cuda.runtime.memGetInfo()
