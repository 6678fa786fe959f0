"""The categorical distribution over ``{0, ..., K-1}``."""
import math

from .._creation import arange, full
from .._dtype import finfo, int64
from .._ops.view import broadcast_tensors
from .._random import multinomial
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import _size, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """The categorical distribution over ``{0, ..., K-1}``, ``K = probs.size(-1)``, with the (normalized) event
    probabilities ``probs`` or the unnormalized log-probabilities ``logits`` in the last dimension (the others are
    batch dimensions). ``probs`` and ``logits`` read back normalized. It is the distribution ``ember.multinomial``
    samples from.

    Example::

        >>> m = Categorical(ember.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample().shape
        ember.Size([])

    Args:
        probs (Tensor): non-negative event weights (finite, with a non-zero sum).
        logits (Tensor): event log-weights (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = new._param = self.probs.expand(param_shape)
        if "logits" in self.__dict__:
            new.logits = new._param = self.logits.expand(param_shape)
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=Size()):
        sample_shape = _size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
