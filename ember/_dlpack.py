"""DLPack: tensors sharing memory with any producer (torch, NumPy, CuPy) through ``from_dlpack``."""
import enum

import numpy as np

from . import _dtype
from ._device import CPU, array_module, normalize
from ._tensor import Tensor


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes, as ``Tensor.__dlpack_device__`` reports them."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (consumed once by a ``from_dlpack``)."""
    return tensor.__dlpack__(max_version=(1, 0))  # a versioned capsule carries writability


class _Capsule:
    """A bare DLPack capsule dressed as a producer (a capsule carries no device: the CPU is assumed)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with ``ext_tensor``: any object implementing the DLPack protocol (a torch tensor,
    a NumPy or CuPy array) or a DLPack capsule.

    Example::

        >>> a = numpy.arange(3.); t = ember.from_dlpack(a); t[0] = 5; a
        array([5., 1., 2.])
    """
    if isinstance(ext_tensor, Tensor):
        if ext_tensor.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise TypeError(f"from_dlpack expects an object with __dlpack__ or a DLPack capsule, got "
                            f"{type(ext_tensor).__name__}")
        ext_tensor = _Capsule(ext_tensor)
    kind, index = ext_tensor.__dlpack_device__()
    if int(kind) == 1:  # kDLCPU
        arr = np.from_dlpack(ext_tensor)
        dev = CPU
    elif int(kind) == 2:  # kDLCUDA
        dev = normalize(f"cuda:{index}")
        arr = array_module(dev).from_dlpack(ext_tensor)
    else:
        raise RuntimeError(f"from_dlpack: unsupported device type {kind} (only CPU and CUDA tensors are)")
    return Tensor._make(arr, _dtype.from_numpy_dtype(arr.dtype), dev)
