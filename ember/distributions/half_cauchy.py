"""The half-Cauchy distribution: ``|X|`` of a centred Cauchy variable."""
import math

from .._creation import full
from .cauchy import Cauchy
from .folded import Folded

__all__ = ["HalfCauchy"]


class HalfCauchy(Folded):
    """The distribution of ``Y = |X|`` with ``X ~ Cauchy(0, scale)`` (``base_dist``).

    Example::

        >>> m = HalfCauchy(ember.tensor([1.0]))
        >>> bool((m.sample() >= 0).all())
        True

    Args:
        scale (float or Tensor): the scale of the full Cauchy distribution.
    """
    _base = Cauchy

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
