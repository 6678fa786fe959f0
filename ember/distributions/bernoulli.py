"""The Bernoulli distribution."""
import math

from .._creation import arange
from .._ops.index import where
from .._random import bernoulli
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``), else 0.

    Example::

        >>> m = Bernoulli(ember.tensor([0.3]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        probs (Number, Tensor): the probability of 1.
        logits (Number, Tensor): the log-odds of 1 (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, _Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return where(self.probs == 0.5, math.nan, (self.probs >= 0.5).to(self.probs))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
