"""The multinomial distribution."""
import math

from .._creation import arange, tensor
from .._ops.index import where
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The multinomial distribution: the counts of each of ``K`` categories in ``total_count`` independent
    Categorical(``probs``/``logits``) draws (``K`` the last dimension of the parameter; ``total_count`` one
    integer for the whole batch). ``log_prob`` does not need ``total_count``.

    Example::

        >>> m = Multinomial(100, ember.tensor([1.0, 1.0, 1.0, 1.0]))
        >>> x = m.sample()
        >>> x.shape, x.sum().item()
        (ember.Size([4]), 100.0)

    Args:
        total_count (int): the number of trials.
        probs (Tensor): non-negative event weights (normalized over the last dimension).
        logits (Tensor): event log-weights (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, batch_shape, self.event_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = _size(sample_shape)
        shape = self._extended_shape(sample_shape)
        with no_grad():
            if self.total_count == 0:
                return self.probs.new_zeros(shape)
            # (total_count,) + sample_shape + batch_shape category draws, counted per category
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            k = self._categorical._num_events
            counts = (draws.unsqueeze(-1) == arange(k, device=draws.device)).sum(0)
            return counts.to(self.probs.dtype).expand(shape)

    def entropy(self):
        n = tensor(self.total_count, dtype=self.probs.dtype, device=self.probs.device)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum((0, -1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
