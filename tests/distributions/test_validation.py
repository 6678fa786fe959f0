"""Argument and value validation (with torch's exception types and messages), set_default_validate_args, expand,
Independent's reinterpreted dimensions, constraints and reprs."""
import math

import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from ember.distributions import constraints
from .cases import CASES, build, close

T = torch.distributions


def _msg(s):
    return str(s).replace("torch.", "ember.")


def same_error(make, message=True):
    """``make(M, lib)`` raises the same exception type (and message) with ember as with torch."""
    with pytest.raises(Exception) as et:
        make(T, torch)
    with pytest.raises(type(et.value)) as ee:
        make(D, ember)
    assert not message or _msg(ee.value) == _msg(et.value)


ARG_ERRORS = {
    "Normal negative scale": lambda M, L: M.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -2.0])),
    "Normal NaN loc": lambda M, L: M.Normal(L.tensor([math.nan]), 1.0),
    "Uniform low > high": lambda M, L: M.Uniform(L.tensor([0.0, 2.0]), L.tensor([1.0, 1.0])),
    "Bernoulli probs > 1": lambda M, L: M.Bernoulli(probs=L.tensor([0.5, 1.5])),
    "Bernoulli both": lambda M, L: M.Bernoulli(probs=L.tensor(0.5), logits=L.tensor(0.0)),
    "Bernoulli neither": lambda M, L: M.Bernoulli(),
    "Categorical scalar probs": lambda M, L: M.Categorical(probs=L.tensor(0.5)),
    "Categorical scalar logits": lambda M, L: M.Categorical(logits=L.tensor(0.5)),
    "Categorical negative probs": lambda M, L: M.Categorical(probs=L.tensor([0.5, -0.1, 0.6])),
    "Categorical both": lambda M, L: M.Categorical(probs=L.tensor([0.5]), logits=L.tensor([0.0])),
    "Gamma zero rate": lambda M, L: M.Gamma(L.tensor([1.0]), L.tensor([0.0])),
    "Exponential negative rate": lambda M, L: M.Exponential(L.tensor([-1.0])),
    "Laplace zero scale": lambda M, L: M.Laplace(0.0, L.tensor([0.0])),
    "Poisson negative rate": lambda M, L: M.Poisson(L.tensor([-1.0])),
    "Binomial fractional count": lambda M, L: M.Binomial(L.tensor([2.5]), probs=L.tensor([0.5])),
    "MVN scalar loc": lambda M, L: M.MultivariateNormal(L.tensor(0.0), L.eye(1)),
    "MVN no matrix": lambda M, L: M.MultivariateNormal(L.zeros(2)),
    "MVN two matrices": lambda M, L: M.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    "MVN vector covariance": lambda M, L: M.MultivariateNormal(L.zeros(2), L.ones(2)),
    "MVN vector scale_tril": lambda M, L: M.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2)),
    "MVN not symmetric": lambda M, L: M.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 0.5], [0.0, 1.0]])),
    "MVN not upper tril": lambda M, L: M.MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 0.5], [0.0, 1.0]])),
    "MVN bad batch": lambda M, L: M.MultivariateNormal(L.zeros(3, 2), L.eye(2).expand(4, 2, 2)),
    "Dirichlet scalar": lambda M, L: M.Dirichlet(L.tensor(1.0)),
    "Dirichlet zero concentration": lambda M, L: M.Dirichlet(L.tensor([1.0, 0.0])),
    "Cauchy zero scale": lambda M, L: M.Cauchy(0.0, L.tensor([0.0])),
    "Geometric zero probs": lambda M, L: M.Geometric(L.tensor([0.5, 0.0])),
    "Geometric both": lambda M, L: M.Geometric(L.tensor(0.5), logits=L.tensor(0.0)),
    "StudentT zero df": lambda M, L: M.StudentT(L.tensor([1.0, 0.0])),
    "StudentT negative scale": lambda M, L: M.StudentT(3.0, 0.0, L.tensor([-1.0])),
    "HalfNormal zero scale": lambda M, L: M.HalfNormal(L.tensor([1.0, 0.0])),
    "Multinomial float count": lambda M, L: M.Multinomial(2.0, L.ones(3)),
    "Multinomial negative probs": lambda M, L: M.Multinomial(3, L.tensor([0.5, -0.1, 0.6])),
    "Multinomial both": lambda M, L: M.Multinomial(3, L.ones(3), logits=L.zeros(3)),
    "Multinomial scalar probs": lambda M, L: M.Multinomial(3, L.tensor(0.5)),
    "Mixture not categorical": lambda M, L: M.MixtureSameFamily(M.Normal(L.zeros(2), 1.0), M.Normal(L.zeros(2), 1.0)),
    "Mixture component count": lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(3)), M.Normal(L.zeros(2), 1.0)),
    "Mixture batch": lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(4, 2)), M.Normal(L.zeros(3, 2), 1.0)),
    "Independent too many dims": lambda M, L: M.Independent(M.Normal(L.zeros(3), 1.0), 2),
    "Gumbel zero scale": lambda M, L: M.Gumbel(L.zeros(2), L.tensor([1.0, 0.0])),
    "Weibull negative concentration": lambda M, L: M.Weibull(L.ones(2), L.tensor([1.0, -1.0])),
    "Pareto zero alpha": lambda M, L: M.Pareto(L.ones(2), L.tensor([1.0, 0.0])),
    "HalfCauchy negative scale": lambda M, L: M.HalfCauchy(L.tensor([-1.0])),
    "Chi2 zero df": lambda M, L: M.Chi2(L.tensor([0.0, 1.0])),
    "FisherSnedecor negative df2": lambda M, L: M.FisherSnedecor(L.ones(2), L.tensor([1.0, -1.0])),
    "Kumaraswamy zero concentration0": lambda M, L: M.Kumaraswamy(L.ones(2), L.tensor([0.0, 1.0])),
    "LogisticNormal zero scale": lambda M, L: M.LogisticNormal(L.zeros(2), L.tensor([1.0, 0.0])),
    "ContinuousBernoulli probs > 1 validated": lambda M, L: M.ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
    "ContinuousBernoulli both": lambda M, L: M.ContinuousBernoulli(L.tensor(0.5), L.tensor(0.0)),
    "NegativeBinomial probs 1": lambda M, L: M.NegativeBinomial(3.0, L.tensor([0.5, 1.0])),
    "NegativeBinomial negative count": lambda M, L: M.NegativeBinomial(L.tensor([-1.0]), L.tensor([0.5])),
    "NegativeBinomial neither": lambda M, L: M.NegativeBinomial(3.0),
    "VonMises zero concentration": lambda M, L: M.VonMises(L.zeros(2), L.tensor([1.0, 0.0])),
    "RelaxedBernoulli both": lambda M, L: M.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.5]), L.tensor([0.0])),
    "RelaxedBernoulli probs > 1": lambda M, L: M.RelaxedBernoulli(L.tensor(0.5), L.tensor([1.5])),
    "RelaxedOneHot negative probs": lambda M, L: M.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.5, -0.1, 0.6])),
    "StraightThrough scalar probs": lambda M, L: M.OneHotCategoricalStraightThrough(L.tensor(0.5)),
    "LowRank scalar loc": lambda M, L: M.LowRankMultivariateNormal(L.tensor(0.0), L.ones(1, 1), L.ones(1)),
    "LowRank vector cov_factor": lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2), L.ones(2)),
    "LowRank cov_factor rows": lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    "LowRank cov_diag size": lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(3)),
    "LowRank bad batch": lambda M, L: M.LowRankMultivariateNormal(L.zeros(3, 2), L.ones(4, 2, 1), L.ones(2)),
    "LowRank zero cov_diag": lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.tensor([1.0, 0.0])),
}


@pytest.mark.parametrize("name", ARG_ERRORS)
def test_argument_errors(name):
    # ember.broadcast_shapes words its error a little differently from torch's
    same_error(lambda M, L: ARG_ERRORS[name](M, L), message=name != "MVN bad batch")


VALUE_ERRORS = {
    "not a tensor": lambda M, L: M.Normal(0.0, 1.0).log_prob(0.5),
    "wrong batch": lambda M, L: M.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    "wrong event": lambda M, L: M.MultivariateNormal(L.zeros(3), L.eye(3)).log_prob(L.zeros(2)),
    "outside support": lambda M, L: M.Exponential(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "not boolean": lambda M, L: M.Bernoulli(L.tensor([0.3])).log_prob(L.tensor([0.5])),
    "category out of range": lambda M, L: M.Categorical(L.ones(3)).log_prob(L.tensor([3])),
    "beta at 1.5": lambda M, L: M.Beta(L.ones(1), L.ones(1)).log_prob(L.tensor([1.5])),
    "uniform above": lambda M, L: M.Uniform(L.zeros(1), L.ones(1)).log_prob(L.tensor([1.5])),
    "uniform cdf above": lambda M, L: M.Uniform(L.zeros(1), L.ones(1)).cdf(L.tensor([1.5])),
    "not one-hot": lambda M, L: M.OneHotCategorical(L.ones(3)).log_prob(L.tensor([1.0, 1.0, 0.0])),
    "binomial above count": lambda M, L: M.Binomial(3, L.tensor([0.5])).log_prob(L.tensor([4.0])),
    "halfnormal negative": lambda M, L: M.HalfNormal(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "halfnormal cdf negative": lambda M, L: M.HalfNormal(L.ones(2)).cdf(L.tensor([1.0, -1.0])),
    "studentt wrong batch": lambda M, L: M.StudentT(L.ones(3) * 3).log_prob(L.zeros(2)),
    "multinomial above count": lambda M, L: M.Multinomial(3, L.ones(3)).log_prob(L.tensor([2.0, 2.0, 0.0])),
    "multinomial negative": lambda M, L: M.Multinomial(3, L.ones(3)).log_prob(L.tensor([4.0, -1.0, 0.0])),
    "multinomial wrong event": lambda M, L: M.Multinomial(3, L.ones(3)).log_prob(L.tensor([1.0, 2.0])),
    "mixture outside support": lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(2)),
                                                                M.Exponential(L.ones(2))).log_prob(L.tensor([-1.0])),
    "mixture wrong event": lambda M, L: M.MixtureSameFamily(
        M.Categorical(L.ones(2)), M.MultivariateNormal(L.zeros(2, 3), L.eye(3))).log_prob(L.zeros(2)),
    "poisson fractional": lambda M, L: M.Poisson(L.tensor([2.0])).log_prob(L.tensor([1.5])),
    "pareto below scale": lambda M, L: M.Pareto(L.tensor([2.0]), L.tensor([1.0])).log_prob(L.tensor([1.5])),
    "weibull negative": lambda M, L: M.Weibull(L.ones(2), L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "kumaraswamy above 1": lambda M, L: M.Kumaraswamy(L.ones(1), L.ones(1)).log_prob(L.tensor([1.5])),
    "halfcauchy negative": lambda M, L: M.HalfCauchy(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "chi2 negative": lambda M, L: M.Chi2(L.ones(2)).log_prob(L.tensor([1.0, -1.0])),
    "fishersnedecor zero": lambda M, L: M.FisherSnedecor(L.ones(1), L.ones(1)).log_prob(L.tensor([0.0])),
    "negative binomial fractional": lambda M, L: M.NegativeBinomial(3.0, L.tensor([0.5])).log_prob(L.tensor([1.5])),
    "continuous bernoulli above 1": lambda M, L: M.ContinuousBernoulli(L.tensor([0.3])).log_prob(L.tensor([1.5])),
    "relaxed bernoulli at 1.5": lambda M, L: M.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.3])).log_prob(
        L.tensor([1.5])),
    "relaxed one-hot not simplex": lambda M, L: M.RelaxedOneHotCategorical(L.tensor(0.5), L.ones(3)).log_prob(
        L.tensor([0.5, 0.5, 0.5])),
    "logistic normal wrong event": lambda M, L: M.LogisticNormal(L.zeros(2), L.ones(2)).log_prob(
        L.tensor([0.5, 0.5])),
    "lowrank wrong event": lambda M, L: M.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3)).log_prob(
        L.zeros(2)),
    "von mises nan": lambda M, L: M.VonMises(L.zeros(1), L.ones(1)).log_prob(L.tensor([float("nan")])),
}


@pytest.mark.parametrize("name", VALUE_ERRORS)
def test_value_errors(name):
    same_error(lambda M, L: VALUE_ERRORS[name](M, L))


def test_validate_args_false_skips_checks():
    d = D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False)
    assert d.scale.item() == -1.0
    assert D.Exponential(ember.ones(1), validate_args=False).log_prob(ember.tensor([-1.0])).item() == 1.0
    assert not d.expand((3, 1))._validate_args


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
        assert not d._validate_args
        with pytest.raises(ValueError):
            D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=True)
        with pytest.raises(ValueError):
            D.Distribution.set_default_validate_args(3)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))


def test_error_message_names_the_parameter():
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
                                         r"Normal\(loc: ember.Size\(\[2\]\), scale: ember.Size\(\[2\]\)\) to satisfy "
                                         r"the constraint GreaterThan\(lower_bound=0.0\)"):
        D.Normal(ember.zeros(2), ember.tensor([1.0, 0.0]))


# -- expand ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_expand(case):
    de, _ = build(case, ember, "float64")
    dt, _ = build(case, torch, "float64")
    new_batch = (2,) + tuple(de.batch_shape)
    ee, et = de.expand(new_batch), dt.expand(torch.Size(new_batch))
    assert type(ee) is type(de) and ee.batch_shape == new_batch and ee.event_shape == de.event_shape
    assert ee._validate_args == de._validate_args
    close(ee.log_prob(ember.tensor(case.value)), et.log_prob(torch.tensor(case.value)), "float64", "log_prob")
    try:
        mean = et.mean
    except NotImplementedError:  # (the relaxed distributions, LogisticNormal)
        with pytest.raises(NotImplementedError):
            ee.mean
    else:
        close(ee.mean, mean, "float64", "mean")
    assert ee.sample((3,)).shape == (3,) + new_batch + tuple(de.event_shape)
    with pytest.raises(RuntimeError):
        de.expand((7, 5))  # not broadcastable to the batch shape


def test_expand_subclass_with_custom_init_needs_custom_expand():
    class MyNormal(D.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        MyNormal(ember.zeros(2)).expand((3, 2))


# -- Independent -------------------------------------------------------------------------------------------------------
def test_independent_reinterprets_batch_dims():
    loc, scale = np.random.default_rng(1).standard_normal((2, 3, 4)), np.full((2, 3, 4), 0.5)
    base = D.Normal(ember.tensor(loc), ember.tensor(scale))
    for n in range(4):
        ind = D.Independent(base, n)
        assert ind.batch_shape == (2, 3, 4)[:3 - n] and ind.event_shape == (2, 3, 4)[3 - n:]
        x = ember.tensor(loc + 0.3)
        expected = base.log_prob(x).numpy().reshape((2, 3, 4)[:3 - n] + (-1,)).sum(-1)
        np.testing.assert_allclose(ind.log_prob(x).numpy(), expected, rtol=1e-12)
        np.testing.assert_allclose(ind.entropy().numpy(),
                                   base.entropy().numpy().reshape((2, 3, 4)[:3 - n] + (-1,)).sum(-1), rtol=1e-12)
        assert ind.has_rsample and ind.rsample((5,)).shape == (5, 2, 3, 4)
    ind = D.Independent(base, 2)
    assert repr(ind.support) == "IndependentConstraint(Real(), 2)" and ind.support.event_dim == 2
    assert repr(D.Independent(base, 0).support) == "Real()"
    # as torch's, Independent leaves value checks to the base distribution: a value broadcasting against it is fine
    assert ind.log_prob(ember.zeros(4)).shape == (2,)
    with pytest.raises(ValueError):
        ind.log_prob(ember.zeros(5))
    ind_b = D.Independent(D.Bernoulli(ember.full((2, 3), 0.3)), 1)
    assert not ind_b.has_enumerate_support and not ind_b.has_rsample
    with pytest.raises(NotImplementedError, match="cartesian product"):
        ind_b.enumerate_support()
    assert D.Independent(D.Bernoulli(ember.full((2, 3), 0.3)), 0).enumerate_support().shape == (2, 2, 3)


def test_independent_of_multivariate_normal():
    base = D.MultivariateNormal(ember.zeros(5, 3), ember.eye(3))
    ind = D.Independent(base, 1)
    assert ind.batch_shape == () and ind.event_shape == (5, 3)
    x = ember.randn(4, 5, 3)
    np.testing.assert_allclose(ind.log_prob(x).numpy(), base.log_prob(x).sum(-1).numpy(), rtol=1e-5)


# -- constraints and repr ----------------------------------------------------------------------------------------------
REPRS = [
    lambda M, L: M.Normal(0.0, 1.0),
    lambda M, L: M.Normal(L.zeros(1), 1.0),
    lambda M, L: M.Normal(L.zeros(3), L.ones(3)),
    lambda M, L: M.Bernoulli(0.3),
    lambda M, L: M.Bernoulli(logits=L.zeros(2, 2)),
    lambda M, L: M.Categorical(L.ones(2, 3)),
    lambda M, L: M.OneHotCategorical(L.ones(3)),
    lambda M, L: M.MultivariateNormal(L.zeros(2), scale_tril=L.eye(2)),
    lambda M, L: M.Independent(M.Normal(L.zeros(2, 3), 1.0), 1),
    lambda M, L: M.Beta(0.5, 0.5),
    lambda M, L: M.Gamma(L.ones(2), 2.0),
    lambda M, L: M.Binomial(10, L.tensor([0.2, 0.5])),
    lambda M, L: M.LogNormal(0.0, 1.0),
    lambda M, L: M.Uniform(0.0, 2.0),
    lambda M, L: M.Poisson(L.tensor([1.0, 2.0])),
    lambda M, L: M.Dirichlet(L.ones(2, 3)),
    lambda M, L: M.Cauchy(0.0, 1.0),
    lambda M, L: M.Geometric(L.tensor([0.3, 0.5])),
    lambda M, L: M.TransformedDistribution(M.Normal(0.0, 1.0), [M.transforms.ExpTransform()]),
    lambda M, L: M.StudentT(3.0),
    lambda M, L: M.StudentT(L.tensor([3.0, 4.0]), 1.0, L.tensor([2.0, 0.5])),
    lambda M, L: M.HalfNormal(1.0),
    lambda M, L: M.Multinomial(5, L.ones(2, 3)),
    lambda M, L: M.Multinomial(5, logits=L.zeros(3)),
    lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(3)), M.Normal(L.zeros(3), 1.0)),
    lambda M, L: M.MixtureSameFamily(M.Categorical(logits=L.zeros(2, 3)),
                                     M.Independent(M.Gamma(L.ones(2, 3, 4), 1.0), 1)),
    lambda M, L: M.HalfNormal(L.ones(3)),
    lambda M, L: M.Gumbel(0.0, 1.0),
    lambda M, L: M.Weibull(L.ones(2), 2.0),
    lambda M, L: M.Pareto(1.0, 2.0),
    lambda M, L: M.HalfCauchy(L.ones(3)),
    lambda M, L: M.Chi2(L.ones(3)),
    lambda M, L: M.FisherSnedecor(L.ones(2), 3.0),
    lambda M, L: M.Kumaraswamy(1.0, L.ones(2)),
    lambda M, L: M.LogisticNormal(L.zeros(3), 1.0),
    lambda M, L: M.ContinuousBernoulli(0.3),
    lambda M, L: M.ContinuousBernoulli(logits=L.zeros(2)),
    lambda M, L: M.NegativeBinomial(3.0, logits=L.zeros(2)),
    lambda M, L: M.VonMises(L.zeros(2), 1.0),
    lambda M, L: M.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.2, 0.3])),
    lambda M, L: M.relaxed_bernoulli.LogitRelaxedBernoulli(L.tensor(0.5), logits=L.zeros(2)),
    lambda M, L: M.RelaxedOneHotCategorical(L.tensor(0.5), L.ones(2, 3)),
    lambda M, L: M.relaxed_categorical.ExpRelaxedCategorical(L.tensor(0.5), logits=L.zeros(3)),
    lambda M, L: M.OneHotCategoricalStraightThrough(L.ones(3)),
    lambda M, L: M.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3)),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr(i):
    assert repr(REPRS[i](D, ember)) == _msg(repr(REPRS[i](T, torch)))


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_constraints_match_torch(i):
    de, dt = REPRS[i](D, ember), REPRS[i](T, torch)
    assert repr(de.support) == _msg(repr(dt.support))
    assert de.support.is_discrete == dt.support.is_discrete and de.support.event_dim == dt.support.event_dim
    assert {k: repr(v) for k, v in de.arg_constraints.items()} == \
        {k: _msg(repr(v)) for k, v in dt.arg_constraints.items()}


CHECKS = [
    ("real", [1.0, math.nan, -math.inf]),
    ("positive", [1.0, 0.0, -1.0]),
    ("nonnegative", [1.0, 0.0, -1.0]),
    ("unit_interval", [0.0, 1.0, 1.5]),
    ("boolean", [0.0, 1.0, 0.5]),
    ("nonnegative_integer", [0.0, 3.0, 1.5, -1.0]),
    ("simplex", [[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]]),
    ("one_hot", [[0.0, 1.0], [1.0, 1.0]]),
    ("real_vector", [[0.0, math.nan], [1.0, 2.0]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 0.5], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]),
    ("positive_definite", [[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.5], [0.0, 1.0]]]),
    ("positive_semidefinite", [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.5, 0.5]]]),
    ("square", [[[1.0, 2.0], [3.0, 4.0]]]),
]


@pytest.mark.parametrize("name,value", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_checks(name, value):
    ce, ct = getattr(constraints, name), getattr(T.constraints, name)
    assert ce.check(ember.tensor(value)).tolist() == ct.check(torch.tensor(value)).tolist()
    assert repr(ce) == repr(ct) and ce.event_dim == ct.event_dim and ce.is_discrete == ct.is_discrete


def test_parametrized_constraints():
    v = [0.0, 1.0, 2.0, 2.5, 3.0]
    for make in (lambda C: C.interval(0.5, 2.5), lambda C: C.half_open_interval(0.5, 2.5),
                 lambda C: C.integer_interval(1, 2), lambda C: C.greater_than(1.0), lambda C: C.greater_than_eq(1.0),
                 lambda C: C.less_than(2.0), lambda C: C.independent(C.positive, 1),
                 lambda C: C.cat([C.positive, C.real], 0, [2, 3]), lambda C: C.stack([C.positive] * 5, 0)):
        ce, ct = make(constraints), make(T.constraints)
        assert ce.check(ember.tensor(v)).tolist() == ct.check(torch.tensor(v)).tolist()
        assert ce.event_dim == ct.event_dim and ce.is_discrete == ct.is_discrete
    assert repr(constraints.interval(0.5, 2.5)) == "Interval(lower_bound=0.5, upper_bound=2.5)"
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        constraints.dependent.check(ember.zeros(1))
    with pytest.raises(NotImplementedError):
        constraints.dependent.event_dim
    assert constraints.dependent(event_dim=1).event_dim == 1
    assert D.Uniform.support.event_dim == 0 and constraints.is_dependent(D.Uniform.support)
