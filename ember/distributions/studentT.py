"""Student's t-distribution."""
import math

from .._ops.index import where
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom, ``Gamma(df / 2, 1 / 2)`` (StudentT's
    denominator; it validates ``df`` first, as torch's does)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    Example::

        >>> m = StudentT(ember.tensor([2.0]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        df (float or Tensor): the degrees of freedom.
        loc (float or Tensor): the location (the mean, where ``df > 1``).
        scale (float or Tensor): the scale.
    """
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / where(df > 2, df - 2, 1.0)
        return where(df > 2, finite, where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)
