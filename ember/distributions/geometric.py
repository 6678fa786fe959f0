"""The geometric distribution: the number of failures before the first success of Bernoulli trials."""
from .._dtype import finfo
from .._ops.index import where
from .._random import rand
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import _Number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The geometric distribution on ``{0, 1, 2, ...}``: failures before the first success of trials that succeed
    with probability ``probs`` (or log-odds ``logits``).

    Example::

        >>> m = Geometric(ember.tensor([0.3]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        probs (Number, Tensor): the success probability, in ``(0, 1]``.
        logits (Number, Tensor): the log-odds of success (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, _Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, _Number)
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        super().__init__(Size() if is_scalar else param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:  # beyond unit_interval: a success must be possible
            valid = self.probs > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                                 f"invalid values:\n{self.probs[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)  # 0 * log(0) is 0 here
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
