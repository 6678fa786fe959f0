"""The Cauchy (Lorentz) distribution."""
import math

from .._creation import full
from .._random import rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _Number, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy distribution with median ``loc`` and half width at half maximum ``scale`` (no mean or variance).

    Example::

        >>> m = Cauchy(ember.tensor([0.0]), ember.tensor([1.0]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        loc (float or Tensor): the mode and median.
        scale (float or Tensor): the half width at half maximum.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, _Number) and isinstance(scale, _Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        eps = (math.pi * (u - 0.5)).tan()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
