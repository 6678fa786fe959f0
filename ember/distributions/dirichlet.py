"""The Dirichlet distribution on the probability simplex."""
from .._dtype import finfo
from .._ops.index import where
from .._tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dimension, with positive ``concentration``.
    Samples are normalized standard gamma draws (differentiable by the gamma sampler's implicit
    reparameterization).

    Example::

        >>> m = Dirichlet(ember.tensor([0.5, 0.5]))
        >>> m.sample().shape
        ember.Size([2])

    Args:
        concentration (Tensor): the concentrations (alpha), at least one-dimensional.
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        return self._expanded(new, batch_shape, self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_gamma(self.concentration.expand(shape))
        x = x / x.sum(-1, keepdim=True)
        info = finfo(x.dtype)
        x.detach().clamp_(min=info.tiny, max=1 - info.eps)  # in place, outside the graph
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1, keepdim=True)
        corner = one_hot(mode.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        return where(mask, corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
