"""Devices and the array module (NumPy or CuPy) that computes on each. CuPy is imported here and nowhere else."""
import numpy as np

_cupy = None


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # no CuPy, no driver or no GPU
            # torch's CPU builds raise AssertionError here
            raise AssertionError("Torch not compiled with CUDA enabled: ember needs CuPy and a CUDA GPU "
                                 f"for device 'cuda' ({type(e).__name__}: {e})") from None
        _cupy = cupy
    return _cupy


_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """A device: ``ember.device('cpu')``, ``ember.device('cuda')``, ``ember.device('cuda:1')``, ``device('cuda', 0)``.

    ``cpu`` and ``cuda`` hold tensors, and ``meta`` tensors without data (shape, dtype and autograd only); the other
    names torch knows parse, as torch's do.
    """

    __slots__ = ("type", "index")

    def __new__(cls, type=None, index=None, *, device=None):
        if type is None or device is not None:
            type = _keyword_device(type, index, device)
        type_or_str = type
        if isinstance(type_or_str, cls):
            return type_or_str
        if isinstance(type_or_str, int) and not isinstance(type_or_str, bool):
            if type_or_str < 0:
                raise RuntimeError("Device index must not be negative")
            if not cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type_or_str, index = "cuda", type_or_str
        if not isinstance(type_or_str, str):
            type_or_str = str(type_or_str)  # e.g. a torch.device
        kind, colon, idx = type_or_str.partition(":")
        if kind not in _TYPES:
            if kind.strip() != kind or not kind.isalpha():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: "
                               f"{type_or_str}")
        if colon:
            if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: "
                                   f"{type_or_str}")
            index = int(idx)
        if index is not None:
            index = int(index)
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        key = (kind, index)
        hit = _CACHE.get(key)
        if hit is None:
            hit = object.__new__(cls)
            hit.type, hit.index = kind, index
            _CACHE[key] = hit
        return hit

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # as torch's: a device never equals a string
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self):
        """``with ember.device('cuda'):`` makes this the default device of factory functions inside."""
        from . import _creation
        _ENTERED.append(_creation._default_device)
        _creation.set_default_device(self)
        return self

    def __exit__(self, *exc):
        from . import _creation
        _creation.set_default_device(_ENTERED.pop())


_ENTERED = []  # the default devices that ``with device(...)`` blocks replaced, innermost last


def _keyword_device(type, index, dev):
    """The argument of ``device(device=...)``: torch's other form, besides ``device(type, index)``."""
    if type is None and index is None and dev is not None:
        return dev
    got = ", ".join(f"{k}={v.__class__.__name__}" for k, v in (("type", type), ("index", index), ("device", dev))
                    if v is not None)
    raise TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    " * (torch.device device)\n * (str type, int index = -1)\n")


_CACHE = {}
CPU = device("cpu")
META = device("meta")


def array_module(dev):
    """NumPy for the CPU and the meta device, CuPy for CUDA."""
    if dev.type == "cpu" or dev.type == "meta":
        return np
    if dev.type != "cuda":
        raise RuntimeError(f"ember tensors live on 'cpu', 'cuda' or 'meta' devices, not '{dev.type}'")
    return _import_cupy()


def meta_array(shape, dtype):
    """The array of a meta tensor: one element of ``dtype`` broadcast (zero strides, read-only) to ``shape``, so
    that a meta tensor of any size costs no memory. The element is 0, so that ops computing on it (an index, a
    divisor) see a valid value."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def is_meta_array(a):
    """Whether ``a`` is already a meta tensor's array: read-only, zero strides along every dimension of size > 1."""
    if a.flags.writeable:
        return False
    for n, s in zip(a.shape, a.strides):
        if s and n > 1:
            return False
    return True


def normalize(dev):
    """A device argument as an ember.device; 'cuda' means the current CUDA device (index 0 unless set)."""
    if dev is None:
        return CPU
    dev = device(dev)
    if dev.type == "cuda" and dev.index is None:
        dev = device("cuda", current_cuda_index())
    elif dev.type == "cpu" and dev.index is not None:
        dev = CPU  # one CPU: 'cpu:0' tensors live on 'cpu', as torch's
    elif dev.type not in ("cpu", "cuda"):
        array_module(dev)
        dev = META
    return dev


def current_cuda_index():
    return _import_cupy().cuda.runtime.getDevice()


def device_of_array(a):
    """The device an array lives on."""
    if isinstance(a, np.ndarray):
        return CPU
    return device("cuda", a.device.id)


def cuda_available():
    try:
        _import_cupy()
        return True
    except AssertionError:
        return False


def special_module(xp):
    """``scipy.special`` for NumPy, ``cupyx.scipy.special`` (with SciPy's values where CuPy's differ) for CuPy."""
    if xp is np:
        import scipy.special
        return scipy.special
    import cupyx.scipy.special
    from ._cuda_special import CudaSpecial
    return CudaSpecial(cupyx.scipy.special, xp)
