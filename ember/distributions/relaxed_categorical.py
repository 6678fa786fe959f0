"""The relaxed one-hot categorical (Concrete, Gumbel-softmax) distribution and its logarithm."""
from .._creation import full_like
from .._random import rand
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` point (Maddison et al., 2017): ``log_softmax((logits + G) /
    temperature)`` of standard Gumbel draws ``G``; values live in ``real_vector`` (on a submanifold of it).

    Example::

        >>> m = D.relaxed_categorical.ExpRelaxedCategorical(ember.tensor(0.5), ember.tensor([0.1, 0.2, 0.7]))
        >>> m.rsample().shape
        ember.Size([3])

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): the event probabilities.
        logits (Tensor): the unnormalized event log-probabilities (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, batch_shape, self.event_shape)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() - self.temperature.log().mul(-(k - 1))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The relaxed one-hot categorical (Gumbel-softmax) distribution on the simplex: ``exp`` of an
    ``ExpRelaxedCategorical`` variable (``base_dist``); reparameterizable, it tends to ``OneHotCategorical`` as
    ``temperature`` goes to 0.

    Example::

        >>> m = RelaxedOneHotCategorical(ember.tensor([2.2]), ember.tensor([0.1, 0.2, 0.3, 0.4]))
        >>> round(m.sample().sum().item(), 4)
        1.0

    Args:
        temperature (Tensor): the relaxation temperature.
        probs (Tensor): the event probabilities.
        logits (Tensor): the unnormalized event log-probabilities (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
