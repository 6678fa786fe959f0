"""``Tensor.resize_``, ``resize_as_`` and ``set_``: a new shape over the tensor's storage, which grows (keeping its
values) when too small."""
import numpy as np

from .._creation import _size
from .._device import array_module
from .._storage import _address, _owner
from .._tensor import Tensor, register
from ..autograd.grad_mode import grad_enabled
from .matmul import _CPP
from .memory_format import as_format, contiguous_format, format_strides
from ._strided import restride
from .view import AsStrided


def resize_(self, *sizes, memory_format=None):
    """Gives this tensor the shape ``sizes`` in place, laid out densely (in ``memory_format``) from its first element
    in its storage. Elements beyond the old storage are uninitialised; the same shape keeps the strides.

    Example::

        >>> x = ember.arange(6.); x.resize_(2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    shape = _size(sizes, "resize_")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == self.shape and memory_format is None:
        return self
    strides = format_strides(shape, as_format(memory_format, contiguous_format))
    it = self.dtype.itemsize
    nbytes = 0 if 0 in shape else it * (1 + sum((n - 1) * s for n, s in zip(shape, strides)))
    owner = _owner(self._data)
    raw = owner.ravel(order="K").view(np.uint8)  # the storage's bytes in memory order (the owner is dense)
    start = _address(self._data) - _address(owner)
    if not 0 <= start <= raw.size:  # an empty tensor's address need not lie in its storage
        start = 0
    if start + max(nbytes, it) > raw.size:
        grown = array_module(self.device).empty(start + nbytes, np.uint8)
        grown[:raw.size] = raw
        raw = grown
        self._base = Tensor._make(grown.view(self._data.dtype), self.dtype, self.device) if start else None
    # NumPy gives an empty slice the address of its array's start: slice one element and drop it to keep the place
    flat = raw[start:start + max(nbytes, it)].view(self._data.dtype)[:nbytes // it]
    self._data = restride(array_module(self.device), flat, shape, strides) if flat.size else flat.reshape(shape)
    if self._base is not None:  # the view's new place in its base, for autograd's replay of in-place writes
        self._view_chain = ((AsStrided, (), {"size": shape, "stride": strides, "delta": self.storage_offset()}),)
    return self


def resize_as_(self, the_template, *, memory_format=None):
    """``self.resize_(the_template.shape)``."""
    return resize_(self, the_template.shape, memory_format=memory_format)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Makes this tensor view the memory of ``source`` (a tensor, whose shape and strides it takes, or a storage), or
    of nothing (an empty tensor) when no source is given; ``size`` and ``stride`` lay it out from ``storage_offset``.

    Example::

        >>> x, y = ember.zeros(3), ember.arange(4.)
        >>> x.set_(y) is x, x.data_ptr() == y.data_ptr()
        (True, True)
    """
    if self._requires_grad and self.grad_fn is None and grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    xp = array_module(self.device)
    if source is None:
        data = xp.empty((0,), self._data.dtype)
    elif isinstance(source, Tensor) and size is None:
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_CPP[source.dtype.name]} to a tensor of type "
                               f"{_CPP[self.dtype.name]}")
        data = source._data
    else:
        raw = _owner(source._data).ravel(order="K") if isinstance(source, Tensor) else source._array.ravel(order="K")
        flat = raw.view(np.uint8)[storage_offset * self.dtype.itemsize:].view(self._data.dtype)
        size = (flat.size,) if size is None else tuple(size)
        stride = format_strides(size, contiguous_format) if stride is None else tuple(stride)
        data = restride(xp, flat, size, stride)
    self._data, self._base = data, None
    self._vc[0] += 1
    return self


def is_set_to(self, tensor):
    """Whether this tensor and ``tensor`` view the same memory with the same offset, size and strides.

    Example::

        >>> x = ember.zeros(2, 3)
        >>> x.is_set_to(x.view(2, 3)), x.is_set_to(x.view(6))
        (True, False)
    """
    a, b = self._data, tensor._data
    return (self.device == tensor.device and a.shape == b.shape and self.stride() == tensor.stride()
            and _address(a) == _address(b) and _address(_owner(a)) == _address(_owner(b)))


def resize(self, *sizes):
    """The deprecated out-of-place ``resize_``: this tensor's elements in the shape ``sizes`` (same number of
    elements), differentiable."""
    import warnings
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize_same(self, _size(sizes, "resize"))


def resize_as(self, tensor):
    """The deprecated out-of-place ``resize_as_``: ``self.resize(tensor.shape)``."""
    import warnings
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize_same(self, tensor.shape)


def _resize_same(self, shape):
    n = int(np.prod(shape))
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(shape)


register(resize_, resize_as_, set_, is_set_to, resize, resize_as)
