"""Pooling layers: max, average, Lp, adaptive, and max unpooling."""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                        return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L); ``return_indices`` also returns the argmax indices (for
    :class:`MaxUnpool1d`).

    Example::

        >>> ember.nn.MaxPool1d(3, stride=2)(ember.randn(20, 16, 50)).shape
        ember.Size([20, 16, 24])
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size: the size of the window
        stride: the stride of the window. Default: ``kernel_size``
        padding: implicit negative-infinity padding on both sides
        dilation: spacing between window elements
        return_indices (bool): also return the flat argmax indices
        ceil_mode (bool): use ceil instead of floor for the output shape

    Example::

        >>> ember.nn.MaxPool2d(3, stride=2)(ember.randn(20, 16, 50, 32)).shape
        ember.Size([20, 16, 24, 15])
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> ember.nn.MaxPool3d(2)(ember.randn(1, 2, 4, 4, 4)).shape
        ember.Size([1, 2, 2, 2, 2])
    """

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """1-D average pooling over (N, C, L) or (C, L).

    Example::

        >>> ember.nn.AvgPool1d(3, stride=2)(ember.tensor([[[1., 2, 3, 4, 5, 6, 7]]]))
        tensor([[[2., 4., 6.]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPool(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                        self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPool):
    """2-D average pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size, stride (default: ``kernel_size``), padding (zeros): the windows
        ceil_mode (bool): use ceil instead of floor for the output shape
        count_include_pad (bool): count the zero padding in the divisor. Default: ``True``
        divisor_override (int): the divisor to use instead of the window size

    Example::

        >>> ember.nn.AvgPool2d(2)(ember.ones(1, 1, 4, 4)).shape
        ember.Size([1, 1, 2, 2])
    """

    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPool):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> ember.nn.AvgPool3d(2)(ember.ones(1, 1, 4, 4, 4)).shape
        ember.Size([1, 1, 2, 2, 2])
    """

    _fn = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPool(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    """Average pooling to a fixed output length.

    Example::

        >>> ember.nn.AdaptiveAvgPool1d(5)(ember.randn(1, 64, 8)).shape
        ember.Size([1, 64, 5])
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """Average pooling to a fixed output size (None entries keep the input size).

    Example::

        >>> ember.nn.AdaptiveAvgPool2d((5, 7))(ember.randn(1, 64, 8, 9)).shape
        ember.Size([1, 64, 5, 7])
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    """3-D average pooling to a fixed output size.

    Example::

        >>> ember.nn.AdaptiveAvgPool3d(1)(ember.randn(1, 4, 3, 5, 6)).shape
        ember.Size([1, 4, 1, 1, 1])
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return self._fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling to a fixed output length.

    Example::

        >>> ember.nn.AdaptiveMaxPool1d(5)(ember.randn(1, 64, 8)).shape
        ember.Size([1, 64, 5])
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling to a fixed output size.

    Example::

        >>> ember.nn.AdaptiveMaxPool2d((5, 7))(ember.randn(1, 64, 8, 9)).shape
        ember.Size([1, 64, 5, 7])
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """3-D max pooling to a fixed output size.

    Example::

        >>> ember.nn.AdaptiveMaxPool3d(2)(ember.randn(1, 4, 4, 5, 6)).shape
        ember.Size([1, 4, 2, 2, 2])
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpool(Module):
    _n = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """The partial inverse of :class:`MaxPool1d`: values at their argmax indices, zeros elsewhere.

    Example::

        >>> pool, unpool = ember.nn.MaxPool1d(2, return_indices=True), ember.nn.MaxUnpool1d(2)
        >>> unpool(*pool(ember.tensor([[[1., 2, 3, 4]]])))
        tensor([[[0., 2., 0., 4.]]])
    """

    _n = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """The partial inverse of :class:`MaxPool2d`.

    Example::

        >>> pool, unpool = ember.nn.MaxPool2d(2, return_indices=True), ember.nn.MaxUnpool2d(2)
        >>> unpool(*pool(ember.randn(1, 1, 4, 4))).shape
        ember.Size([1, 1, 4, 4])
    """

    _n = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpool):
    """The partial inverse of :class:`MaxPool3d`."""

    _n = 3
    _fn = staticmethod(F.max_unpool3d)


class _LPPool(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """1-D power-average pooling: ``(sum x^p)^(1/p)`` over each window.

    Example::

        >>> ember.nn.LPPool1d(2, 3, stride=2)(ember.randn(20, 16, 50)).shape
        ember.Size([20, 16, 24])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPool):
    """2-D power-average pooling."""

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPool):
    """3-D power-average pooling."""

    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPool(Module):
    _n = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{n}d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                        _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """2-D fractional max pooling: ``kernel_size`` windows whose starts step pseudo-randomly to give
    ``output_size`` (or ``output_ratio`` times the input size). A ``_random_samples`` buffer (N, C, 2) in [0, 1)
    fixes the steps; without one each call draws its own.

    Example::

        >>> ember.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(ember.randn(20, 16, 50, 32)).shape
        ember.Size([20, 16, 25, 16])
    """

    _n = 2
    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPool):
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W); ``_random_samples`` is (N, C, 3).

    Example::

        >>> ember.nn.FractionalMaxPool3d(3, output_size=(13, 12, 11))(ember.randn(2, 4, 50, 32, 16)).shape
        ember.Size([2, 4, 13, 12, 11])
    """

    _n = 3
    _fn = staticmethod(F.fractional_max_pool3d)
