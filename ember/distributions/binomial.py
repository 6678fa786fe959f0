"""The binomial distribution."""
import math

from .._creation import arange
from .._dtype import float64
from .._ops.index import where
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .beta import _sample_beta
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _sample_binomial(total_count, probs):
    """Binomial draws (in ``probs``'s dtype), counting the uniforms below ``probs`` by order statistics: the
    median ``Y`` of ``n`` uniforms is Beta distributed; if ``Y < p`` the uniforms up to it count and the rest are
    uniform on ``(Y, 1)``, else only those below it, uniform on ``(0, Y)``, can count. ``log2(n) + 1`` rounds."""
    with no_grad():
        n, p = total_count.to(float64), probs.to(float64)
        count = where(n.isfinite(), 0.0, math.nan)
        n = where(n.isfinite(), n, 0.0)
        while (n > 0).any():
            active = n > 0
            i = where(active, ((n + 1) / 2).floor(), 1.0)
            y = _sample_beta(i, where(active, n + 1 - i, 1.0))
            below = y < p
            count = count + where(active & below, i, 0.0)
            n = where(active, where(below, n - i, i - 1), 0.0)
            p = where(below, (p - y) / (1 - y), p / y).clamp(0, 1)
        return count.to(probs.dtype)


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The binomial distribution: the number of successes in ``total_count`` Bernoulli trials of probability
    ``probs`` (or ``sigmoid(logits)``); ``total_count`` broadcasts with ``probs``/``logits``.

    Example::

        >>> m = Binomial(100, ember.tensor([0, .2, .8, 1]))
        >>> m.sample().shape
        ember.Size([4])

    Args:
        total_count (int or Tensor): the number of trials.
        probs (Tensor): the success probabilities.
        logits (Tensor): the success log-odds (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

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
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return _sample_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        normalize_term = (n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p()
                          - (n + 1).lgamma())
        return value * self.logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize_term

    def entropy(self):
        if not self.total_count.min() == self.total_count.max():
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
