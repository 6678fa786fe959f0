"""The exponential distribution."""
from .._creation import empty, zeros_like
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (``1 / scale``).

    Example::

        >>> m = Exponential(ember.tensor([1.0]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        rate (float or Tensor): the rate.
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, _Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
