"""The one-hot categorical distribution."""
from .._creation import eye
from .._tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """The categorical distribution over one-hot vectors of size ``probs.size(-1)``; ``probs`` and ``logits`` as in
    ``Categorical``.

    Example::

        >>> m = OneHotCategorical(ember.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample().sum().item()
        1.0

    Args:
        probs (Tensor): non-negative event weights.
        logits (Tensor): event log-weights (give ``probs`` or ``logits``, not both).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, batch_shape, self.event_shape)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` with the straight-through gradient estimator (Bengio et al., 2013): ``rsample``
    returns one-hot samples whose gradient is that of ``probs``.

    Example::

        >>> p = ember.tensor([0.2, 0.8], requires_grad=True)
        >>> OneHotCategoricalStraightThrough(p).rsample().requires_grad
        True
    """
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
