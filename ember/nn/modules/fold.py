"""Fold and Unfold: sliding local blocks to columns (im2col) and back (col2im)."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combines sliding blocks (N, C * prod(kernel_size), L) into (N, C, *output_size), summing overlaps.

    Example::

        >>> ember.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(ember.randn(1, 3 * 2 * 2, 12)).shape
        ember.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding blocks: (N, C, H, W) to (N, C * prod(kernel_size), L).

    Example::

        >>> ember.nn.Unfold(kernel_size=(2, 3))(ember.randn(2, 5, 3, 4)).shape
        ember.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
