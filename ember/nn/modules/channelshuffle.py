"""ChannelShuffle: interleaves channel groups (ShuffleNet)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the channels of (N, C, *) into ``groups`` and interleaves them.

    Example::

        >>> ember.nn.ChannelShuffle(2)(ember.arange(4.).reshape(1, 4, 1, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
