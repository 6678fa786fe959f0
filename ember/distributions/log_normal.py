"""The log-normal distribution: ``exp`` of a normal variable."""
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import Normal

__all__ = ["LogNormal"]


class LogNormal(Distribution):
    """The distribution of ``Y = exp(X)`` with ``X ~ Normal(loc, scale)`` (``base_dist``).

    Example::

        >>> m = LogNormal(ember.tensor([0.0]), ember.tensor([1.0]))
        >>> bool((m.sample() > 0).all())
        True

    Args:
        loc (float or Tensor): the mean of ``log(Y)``.
        scale (float or Tensor): the standard deviation of ``log(Y)``.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        x = value.log()
        return self.base_dist.log_prob(x) - x

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
