"""The relaxed Bernoulli (binary Concrete) distribution and its logit."""
from .._random import rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _Number, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a ``RelaxedBernoulli`` variable (Maddison et al., 2017; Jang et al., 2017): ``(logit(U) +
    logits) / temperature`` of a uniform ``U``.

    Example::

        >>> m = D.relaxed_bernoulli.LogitRelaxedBernoulli(ember.tensor([0.5]), ember.tensor([0.3]))
        >>> m.rsample().shape
        ember.Size([1])

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of ``1``.
        logits (Number, Tensor): the log-odds of ``1`` (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
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
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
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

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The relaxed Bernoulli distribution on ``(0, 1)``: ``sigmoid`` of a ``LogitRelaxedBernoulli`` variable
    (``base_dist``); reparameterizable, it tends to ``Bernoulli(probs)`` as ``temperature`` goes to 0.

    Example::

        >>> m = RelaxedBernoulli(ember.tensor([2.2]), ember.tensor([0.1, 0.2, 0.3, 0.99]))
        >>> bool(((m.sample() > 0) & (m.sample() < 1)).all())
        True

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Number, Tensor): the probability of ``1``.
        logits (Number, Tensor): the log-odds of ``1`` (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
