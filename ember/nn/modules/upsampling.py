"""Upsample and its fixed-mode forms UpsamplingNearest2d / UpsamplingBilinear2d."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resizes (N, C, *spatial) inputs to ``size`` or by ``scale_factor`` with :func:`F.interpolate`.

    Args:
        size (int or tuple): output spatial size
        scale_factor (float or tuple): multiplier of the spatial size
        mode (str): ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``, ``'bicubic'`` or
            ``'trilinear'``. Default: ``'nearest'``
        align_corners (bool): align the corner pixels' centres (interpolating modes)
        recompute_scale_factor (bool): recompute the scale from the computed output size

    Example::

        >>> ember.nn.Upsample(scale_factor=2, mode='nearest')(ember.tensor([[[[1., 2.]]]]))
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.]]]])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (``Upsample(mode='nearest')``).

    Example::

        >>> ember.nn.UpsamplingNearest2d(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True``.

    Example::

        >>> ember.nn.UpsamplingBilinear2d(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
