"""Storages: the memory behind a tensor and all its views, as ``Tensor.untyped_storage()`` (bytes) and the deprecated
``Tensor.storage()`` (elements of the tensor's dtype) return it. A storage is the outermost array whose memory the
tensor's array views, so views of one base report its size and address, as in torch."""
import warnings

import numpy as np

__all__ = ["UntypedStorage", "TypedStorage"]


def _owner(a):
    """The outermost array of ``a``'s kind whose memory ``a`` views (through as_strided's and restride's wrappers)."""
    while True:
        b = a.base
        while b is not None and not isinstance(b, type(a)):
            b = getattr(b, "base", None)
        if b is None:
            return a
        a = b


def _address(a):
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


class UntypedStorage:
    """The bytes behind a tensor. ``nbytes()``, ``size()`` and ``len()`` count them; ``data_ptr()`` is their address."""

    def __init__(self, array, device):
        self._array, self.device = array, device  # _array: the owning array, any dtype

    def _bytes(self):
        return self._array.ravel(order="K").view(np.uint8)  # memory order: the owner is dense

    def nbytes(self):
        return self._array.nbytes

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        return _address(self._array)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def cpu(self):
        """This storage if it is on the CPU, else a CPU copy."""
        if self.device.type == "cpu":
            return self
        from ._device import CPU
        return type(self)(self._array.get(), CPU)

    def tolist(self):
        return self.cpu()._bytes().tolist()

    def __getitem__(self, i):
        return self.cpu()._bytes()[i].tolist()

    def __repr__(self):
        return f"ember.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}"


class TypedStorage(UntypedStorage):
    """A storage seen as elements of ``dtype``: ``size()`` and ``len()`` count elements."""

    def __init__(self, array, device, dtype):
        super().__init__(array, device)
        self.dtype = dtype

    def size(self):
        return self.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def untyped(self):
        return UntypedStorage(self._array, self.device)

    def cpu(self):
        if self.device.type == "cpu":
            return self
        u = self.untyped().cpu()
        return type(self)(u._array, u.device, self.dtype)

    def _values(self):
        from ._tensor import Tensor
        u = self.cpu()
        return Tensor._make(u._bytes().view(self.dtype.np), self.dtype, u.device)

    def tolist(self):
        return self._values().tolist()

    def __getitem__(self, i):
        return self._values()[i].item()

    def __repr__(self):
        return (f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}")


_warned = []


def untyped_storage(tensor):
    return UntypedStorage(_owner(tensor._data), tensor.device)


def typed_storage(tensor):
    if not _warned:  # once per process, as torch warns
        _warned.append(True)
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)
    return TypedStorage(_owner(tensor._data), tensor.device, tensor.dtype)
