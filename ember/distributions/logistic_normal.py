"""The logistic-normal distribution on the simplex."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The distribution on the ``K + 1``-simplex of ``StickBreakingTransform()(X)`` with ``X ~ Normal(loc,
    scale)`` of ``K`` dimensions (``base_dist``, an ``Independent`` normal).

    Example::

        >>> m = LogisticNormal(ember.tensor([0.0] * 3), ember.tensor([1.0] * 3))
        >>> m.sample().shape
        ember.Size([4])

    Args:
        loc (float or Tensor): the mean of the base normal.
        scale (float or Tensor): the standard deviation of the base normal.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
