"""MixtureSameFamily: a mixture of components of one family, batched along the rightmost batch dimension."""
from .._ops.reduce import logsumexp
from .._ops.softmax import log_softmax
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import _size

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture whose ``k`` components are the rightmost batch dimension of ``component_distribution``, weighted
    by the ``Categorical`` ``mixture_distribution`` (over ``k`` categories, its batch shape broadcasting against
    the components' others).

    Example::

        >>> mix = Categorical(ember.ones(5))
        >>> comp = Normal(ember.randn(5), ember.rand(5) + 0.5)
        >>> gmm = MixtureSameFamily(mix, comp)
        >>> gmm.sample((3,)).shape
        ember.Size([3])

    Args:
        mixture_distribution (Categorical): the component weights.
        component_distribution (Distribution): the components, batched along the rightmost batch dimension.
    """
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of ember.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "ember.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._expanded(new, batch_shape, new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        return (self.component_distribution.cdf(x) * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_mix_prob = log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return logsumexp(log_prob_x + log_mix_prob, dim=-1)  # [S, B]

    def sample(self, sample_shape=Size()):
        sample_shape = _size(sample_shape)
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = self.event_shape
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = mix_sample.shape
            comp_samples = self.component_distribution.sample(sample_shape)
            idx = mix_sample.reshape(mix_shape + Size([1] * (len(es) + 1)))
            idx = idx.repeat(Size([1] * len(mix_shape)) + Size([1]) + es)
            return comp_samples.gather(gather_dim, idx).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = x.shape
        return x.reshape(xs[:-1] + Size(pad_ndims * [1]) + xs[-1:] + Size(self._event_ndims * [1]))

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
