"""The continuous uniform distribution."""
import math

from .._random import rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _Number, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on the half-open interval ``[low, high)``.

    Example::

        >>> m = Uniform(ember.tensor([0.0]), ember.tensor([5.0]))
        >>> bool(((m.sample() >= 0) & (m.sample() < 5)).all())
        True

    Args:
        low (float or Tensor): the lower bound (inclusive).
        high (float or Tensor): the upper bound (exclusive).
    """
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = Size() if isinstance(low, _Number) and isinstance(high, _Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(batch_shape)
        new.low = self.low.expand(batch_shape)
        new.high = self.high.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = self.low.le(value).type_as(self.low) * self.high.gt(value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
