"""The two-parameter Weibull distribution."""
from .._creation import ones_like
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution with scale ``scale`` (lambda) and shape ``concentration`` (k): ``scale * E ** (1 /
    concentration)`` of a standard exponential ``E``.

    Example::

        >>> m = Weibull(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> bool((m.sample() > 0).all())
        True

    Args:
        scale (float or Tensor): the scale (lambda).
        concentration (float or Tensor): the shape (k).
    """
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * ((1 + 2 * self.concentration_reciprocal).lgamma().exp()
                                    - (2 * (1 + self.concentration_reciprocal).lgamma()).exp())

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)
