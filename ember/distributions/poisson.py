"""The Poisson distribution."""
from .._random import poisson
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with ``rate``: ``P(k) = rate**k * exp(-rate) / k!``.

    Example::

        >>> m = Poisson(ember.tensor([4.0]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        rate (Number, Tensor): the rate (the mean).
    """
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, _Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
