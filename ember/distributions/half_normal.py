"""The half-normal distribution: ``|X|`` of a centred normal variable."""
import math

from .folded import Folded
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Folded):
    """The distribution of ``Y = |X|`` with ``X ~ Normal(0, scale)`` (``base_dist``): a
    ``TransformedDistribution`` of the normal by ``AbsTransform``.

    Example::

        >>> m = HalfNormal(ember.tensor([1.0]))
        >>> bool((m.sample() >= 0).all())
        True

    Args:
        scale (float or Tensor): the scale of the full normal distribution.
    """
    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
