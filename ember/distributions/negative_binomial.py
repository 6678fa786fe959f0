"""The negative binomial distribution."""
from .._random import poisson
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The number of successes of independent Bernoulli trials of success probability ``probs`` before
    ``total_count`` failures (``total_count`` may be any non-negative real); sampled as a gamma-Poisson mixture.

    Example::

        >>> m = NegativeBinomial(5, ember.tensor([0.3, 0.6]))
        >>> m.sample().shape
        ember.Size([2])

    Args:
        total_count (float or Tensor): the number of failures to stop at (non-negative).
        probs (Tensor): the success probabilities, in ``[0, 1)``.
        logits (Tensor): the success log-odds (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
