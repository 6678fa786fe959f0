"""Padding layers: constant (zero), reflection, replication and circular, over 1-3 trailing dims."""
from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


def _padding(padding, n):
    """An int (every side) or a tuple (left, right, top, bottom, front, back), passed to F.pad as given."""
    return (padding,) * (2 * n) if isinstance(padding, int) else tuple(padding)


class _ConstantPadNd(Module):
    _n = 0

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _padding(padding, self._n)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``; ``padding`` is an int or (left, right).

    Example::

        >>> ember.nn.ConstantPad1d(2, 3.5)(ember.zeros(1, 2, 2)).shape
        ember.Size([1, 2, 6])
    """

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``; ``padding`` is an int or (left, right, top, bottom).

    Example::

        >>> ember.nn.ConstantPad2d((1, 0, 2, 0), 1.)(ember.zeros(1, 2, 2)).shape
        ember.Size([1, 4, 3])
    """

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``; ``padding`` is an int or (left, right, top, bottom, front, back)."""

    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros.

    Example::

        >>> ember.nn.ZeroPad1d((1, 2))(ember.ones(1, 2))
        tensor([[0., 1., 1., 0., 0.]])
    """

    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros; ``padding`` is an int or (left, right, top, bottom).

    Example::

        >>> ember.nn.ZeroPad2d(1)(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros."""

    _n = 3


class _ModePadNd(Module):
    _n = 0
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Pads the last dim with the reflection of the input (its edge not repeated).

    Example::

        >>> ember.nn.ReflectionPad1d(2)(ember.tensor([[[0., 1., 2., 3.]]]))
        tensor([[[2., 1., 0., 1., 2., 3., 2., 1.]]])
    """

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Pads the last 2 dims with the reflection of the input."""

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Pads the last 3 dims with the reflection of the input."""

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Pads the last dim by repeating the edge values.

    Example::

        >>> ember.nn.ReplicationPad1d(2)(ember.tensor([[[0., 1., 2.]]]))
        tensor([[[0., 0., 0., 1., 2., 2., 2.]]])
    """

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Pads the last 2 dims by repeating the edge values."""

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Pads the last 3 dims by repeating the edge values."""

    _n, _mode = 3, "replicate"


class CircularPad1d(_ModePadNd):
    """Pads the last dim by wrapping the input around.

    Example::

        >>> ember.nn.CircularPad1d(1)(ember.tensor([[[0., 1., 2.]]]))
        tensor([[[2., 0., 1., 2., 0.]]])
    """

    _n, _mode = 1, "circular"


class CircularPad2d(_ModePadNd):
    """Pads the last 2 dims by wrapping the input around."""

    _n, _mode = 2, "circular"


class CircularPad3d(_ModePadNd):
    """Pads the last 3 dims by wrapping the input around."""

    _n, _mode = 3, "circular"
