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

    def get_device(self):
        return self.device.index

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

    def _items(self):
        return self._bytes()  # on the storage's device, sharing its memory

    def __setitem__(self, i, value):
        """Writes ``value`` into element (or slice) ``i`` of this storage's memory."""
        items = self._items()
        if isinstance(i, int) and not -items.size <= i < items.size:
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {items.size}")
        items[i] = value

    def fill_(self, value):
        """Writes ``value`` into every element; returns this storage."""
        self._items()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        """Copies the bytes of the storage ``source``, of the same size in bytes; returns this storage."""
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {source.nbytes()} "
                               "bytes")
        self._bytes()[...] = source._bytes() if source.device == self.device else _to(source._bytes(), self.device)
        return self

    def clone(self):
        """A copy of this storage in new memory."""
        new = self.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._array = self._array.copy(order="K")
        return new

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

    def _items(self):
        return self._bytes().view(self.dtype.np)

    def __repr__(self):
        return (f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}")


def _to(a, device):
    """The array ``a`` copied onto ``device``."""
    from ._device import array_module
    return a.get() if device.type == "cpu" else array_module(device).asarray(a)


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
