"""``ember.distributions``: probability distributions with sampling, log-densities and KL divergences, as
``torch.distributions``.

Example::

    >>> import ember.distributions as D
    >>> p, q = D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)
    >>> round(D.kl_divergence(p, q).item(), 4)
    0.4431
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "Gamma", "Geometric", "HalfNormal", "Independent", "Laplace", "LogNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
           "StudentT", "TransformedDistribution", "Uniform", "constraints", "transforms", "kl_divergence",
           "register_kl"]
