"""The generalized Pareto distribution."""
import math

from .._creation import full_like, ones_like, zeros_like
from .._ops.index import where
from .._random import rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _Number, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration`` (the shape ``xi``): the
    exponential at ``concentration = 0``, a Pareto for ``concentration > 0``, bounded above for
    ``concentration < 0`` (uniform at -1).

    Example::

        >>> m = GeneralizedPareto(ember.tensor([0.1]), ember.tensor([2.0]), ember.tensor([0.4]))
        >>> bool((m.sample() >= 0.1).all())
        True

    Args:
        loc (float or Tensor): the location (the lower end of the support).
        scale (float or Tensor): the scale.
        concentration (float or Tensor): the shape.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, _Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        return self._expanded(new, batch_shape)

    def _safe_concentration(self):
        """Where the concentration is (close to) 0, and the concentration with 1 there (the exponential case)."""
        c = self.concentration
        eq_zero = c.isclose(zeros_like(c))
        return eq_zero, where(eq_zero, ones_like(c), c)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, c = self._safe_concentration()
        y = 1 / c + ones_like(z)
        nonzero = where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, c = self._safe_concentration()
        return where(eq_zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, c = self._safe_concentration()
        logu = (-value).log1p()
        return where(eq_zero, self.loc - self.scale * logu, self.loc + self.scale / c * (-c * logu).expm1())

    @property
    def mean(self):
        valid = self.concentration < 1
        c = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration, full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
