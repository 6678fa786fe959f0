"""kl_divergence against torch's on batched, broadcasting parameters: values and gradients for every registered
pair of implemented distributions, infinite divergences, unregistered pairs, register_kl dispatch and the Bregman
(exponential family) fallback."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from ember.distributions.kl import _kl_expfamily_expfamily
from .cases import RNG, close, grads_close, to_lib


def _pos(*shape, lo=0.5, hi=3.0):
    return RNG.uniform(lo, hi, shape)


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _prob(*shape):
    return RNG.uniform(0.05, 0.95, shape)


# distribution builders: (M, *params) -> distribution, and parameters with batch shapes that broadcast to (3, 4)
FAMILIES = {
    "Normal": (lambda M, a, b: M.Normal(a, b), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "Bernoulli": (lambda M, p: M.Bernoulli(probs=p), lambda: [_prob(3, 4)]),
    "Categorical": (lambda M, p: M.Categorical(probs=p), lambda: [_pos(3, 4, 5)]),
    "OneHotCategorical": (lambda M, lg: M.OneHotCategorical(logits=lg), lambda: [RNG.standard_normal((4, 5))]),
    "Uniform": (lambda M, a, b: M.Uniform(a, b), lambda: [RNG.uniform(0.01, 0.3, (3, 4)), RNG.uniform(0.7, 0.99, 4)]),
    "Beta": (lambda M, a, b: M.Beta(a, b), lambda: [_pos(3, 4), _pos(4)]),
    "Gamma": (lambda M, a, b: M.Gamma(a, b), lambda: [_pos(3, 4), _pos(4)]),
    "Exponential": (lambda M, r: M.Exponential(r), lambda: [_pos(3, 4)]),
    "Laplace": (lambda M, a, b: M.Laplace(a, b), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "Poisson": (lambda M, r: M.Poisson(r), lambda: [_pos(3, 4)]),
    "Binomial": (lambda M, p: M.Binomial(10, probs=p), lambda: [_prob(3, 4)]),
    "LogNormal": (lambda M, a, b: M.LogNormal(a, b), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "MultivariateNormal": (lambda M, loc, cov: M.MultivariateNormal(loc, covariance_matrix=cov),
                           lambda: [RNG.standard_normal((3, 4)), _spd(3, 4, 4)]),
    "MultivariateNormal_tril": (lambda M, loc, L: M.MultivariateNormal(loc, scale_tril=L),
                                lambda: [RNG.standard_normal(4), np.linalg.cholesky(_spd(4, 4))]),
    "Dirichlet": (lambda M, c: M.Dirichlet(c), lambda: [_pos(3, 4, 5)]),
    "Geometric": (lambda M, p: M.Geometric(probs=p), lambda: [_prob(3, 4)]),
    "HalfNormal": (lambda M, s: M.HalfNormal(s), lambda: [_pos(3, 4)]),
    "Independent": (lambda M, a, b: M.Independent(M.Normal(a, b), 1), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "Cauchy": (lambda M, a, b: M.Cauchy(a, b), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "Chi2": (lambda M, df: M.Chi2(df), lambda: [_pos(3, 4, lo=1, hi=5)]),
    "Gumbel": (lambda M, a, b: M.Gumbel(a, b), lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
    "Pareto": (lambda M, s, a: M.Pareto(s, a), lambda: [RNG.uniform(0.002, 0.01, (3, 4)), _pos(4, lo=0.5, hi=4)]),
    "ContinuousBernoulli": (lambda M, p: M.ContinuousBernoulli(probs=p), lambda: [_prob(3, 4)]),
    "LowRankMultivariateNormal": (lambda M, loc, W, d: M.LowRankMultivariateNormal(loc, W, d),
                                  lambda: [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4, 2)), _pos(4)]),
    "TransformedExp": (lambda M, a, b: M.TransformedDistribution(M.Normal(a, b), [M.transforms.ExpTransform()]),
                       lambda: [RNG.standard_normal((3, 4)), _pos(4)]),
}

PAIRS = [("Normal", "Normal"), ("Bernoulli", "Bernoulli"), ("Categorical", "Categorical"),
         ("OneHotCategorical", "OneHotCategorical"), ("Uniform", "Uniform"), ("Beta", "Beta"), ("Gamma", "Gamma"),
         ("Exponential", "Exponential"), ("Laplace", "Laplace"), ("Poisson", "Poisson"), ("Binomial", "Binomial"),
         ("LogNormal", "LogNormal"), ("MultivariateNormal", "MultivariateNormal"),
         ("MultivariateNormal", "MultivariateNormal_tril"), ("Independent", "Independent"), ("Dirichlet", "Dirichlet"), ("Geometric", "Geometric"), ("HalfNormal", "HalfNormal"),
         ("Bernoulli", "Poisson"), ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"),
         ("Beta", "Uniform"), ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Gamma", "Exponential"),
         ("Gamma", "Normal"), ("Laplace", "Normal"), ("Normal", "Laplace"), ("Uniform", "Beta"),
         ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Normal"),
         ("Exponential", "Beta"), ("Exponential", "Uniform"), ("Gamma", "Beta"), ("Gamma", "Uniform"),
         ("Laplace", "Beta"), ("Laplace", "Exponential"), ("Laplace", "Gamma"), ("Laplace", "Uniform"),
         ("Normal", "Beta"), ("Normal", "Exponential"), ("Normal", "Gamma"), ("Normal", "Uniform"),
         ("Poisson", "Bernoulli"), ("Poisson", "Binomial"),
         ("Cauchy", "Cauchy"), ("Chi2", "Chi2"), ("Chi2", "Gamma"), ("Gumbel", "Gumbel"), ("Pareto", "Pareto"),
         ("ContinuousBernoulli", "ContinuousBernoulli"), ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
         ("MultivariateNormal", "LowRankMultivariateNormal"), ("LowRankMultivariateNormal", "MultivariateNormal"),
         ("LowRankMultivariateNormal", "MultivariateNormal_tril"), ("TransformedExp", "TransformedExp"),
         ("Beta", "ContinuousBernoulli"), ("Beta", "Pareto"), ("ContinuousBernoulli", "Pareto"),
         ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Uniform"),
         ("Exponential", "ContinuousBernoulli"), ("Exponential", "Pareto"), ("Exponential", "Gumbel"),
         ("Gamma", "ContinuousBernoulli"), ("Gamma", "Pareto"), ("Gamma", "Gumbel"), ("Gumbel", "Beta"),
         ("Gumbel", "ContinuousBernoulli"), ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Pareto"),
         ("Gumbel", "Uniform"), ("Gumbel", "Normal"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Pareto"),
         ("Normal", "ContinuousBernoulli"), ("Normal", "Pareto"), ("Normal", "Gumbel"), ("Pareto", "Beta"),
         ("Pareto", "ContinuousBernoulli"), ("Pareto", "Uniform"), ("Pareto", "Exponential"), ("Pareto", "Gamma"),
         ("Pareto", "Normal"), ("Uniform", "ContinuousBernoulli"), ("Uniform", "Gumbel"), ("Uniform", "Pareto")]
PARAMS = {pair: (FAMILIES[pair[0]][1](), FAMILIES[pair[1]][1]()) for pair in PAIRS}


def _make(name, lib, arrays, dtype):
    params = [to_lib(a, lib, dtype, True) for a in arrays]
    return FAMILIES[name][0](D if lib is ember else torch.distributions, *params), params


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_kl_divergence(pair, dtype):
    (ap, aq) = PARAMS[pair]
    pe, ppe = _make(pair[0], ember, ap, dtype)
    qe, pqe = _make(pair[1], ember, aq, dtype)
    pt, ppt = _make(pair[0], torch, ap, dtype)
    qt, pqt = _make(pair[1], torch, aq, dtype)
    ye, yt = D.kl_divergence(pe, qe), torch.distributions.kl_divergence(pt, qt)
    close(ye, yt, dtype, "kl")
    assert ye.requires_grad == yt.requires_grad
    if yt.requires_grad:  # (KL to a distribution of smaller support is a constant infinity)
        grads_close(ye, yt, ppe + pqe, ppt + pqt, dtype, "kl")
    else:
        assert torch.isinf(yt).all()


def _both(make):
    return make(D, ember), make(torch.distributions, torch)


INFINITE = [
    ("uniform not covering", lambda M, L: (M.Uniform(L.tensor([0.0, 0.0, 0.2]), L.tensor([1.0, 1.0, 0.5])),
                                           M.Uniform(L.tensor([-1.0, 0.5, 0.0]), L.tensor([2.0, 2.0, 0.4])))),
    ("bernoulli zero probs", lambda M, L: (M.Bernoulli(L.tensor([0.0, 0.3, 1.0, 0.3, 0.0])),
                                           M.Bernoulli(L.tensor([0.2, 0.0, 0.5, 1.0, 0.0])))),
    ("categorical zero probs", lambda M, L: (M.Categorical(L.tensor([[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]])),
                                             M.Categorical(L.tensor([[0.2, 0.8, 0.0], [0.0, 0.5, 0.5]])))),
    ("binomial larger count", lambda M, L: (M.Binomial(L.tensor([10.0, 12.0]), L.tensor([0.3, 0.3])),
                                            M.Binomial(L.tensor([10.0, 10.0]), L.tensor([0.4, 0.4])))),
    ("beta-uniform narrow", lambda M, L: (M.Beta(L.tensor([2.0, 2.0]), L.tensor([3.0, 3.0])),
                                          M.Uniform(L.tensor([0.0, 0.1]), L.tensor([1.0, 1.0])))),
    ("uniform-exponential negative", lambda M, L: (M.Uniform(L.tensor([-1.0, 0.5]), L.tensor([1.0, 1.0])),
                                                   M.Exponential(L.tensor([1.0, 2.0])))),
]


@pytest.mark.parametrize("make", [m for _, m in INFINITE], ids=[n for n, _ in INFINITE])
def test_kl_infinite_and_zero_terms(make):
    (pe, qe), (pt, qt) = _both(make)
    e, t = D.kl_divergence(pe, qe), torch.distributions.kl_divergence(pt, qt)
    close(e, t, "float32", "kl")
    assert torch.isinf(t).any() and ember.isinf(e).tolist() == torch.isinf(t).tolist()


def test_kl_of_identical_distributions_is_zero():
    for p in (D.Normal(ember.randn(3), ember.rand(3) + 0.5), D.Categorical(logits=ember.randn(2, 4)),
              D.MultivariateNormal(ember.randn(3), ember.eye(3) * 2), D.Gamma(ember.rand(3) + 1, 2.0)):
        np.testing.assert_allclose(D.kl_divergence(p, p).detach().numpy(), 0, atol=1e-5)


ERRORS = [
    ("unregistered", lambda M, L: (M.Normal(0.0, 1.0), M.Categorical(L.ones(2)))),
    ("cross exponential families", lambda M, L: (M.Normal(0.0, 1.0), M.Bernoulli(0.3))),
    ("binomial smaller count", lambda M, L: (M.Binomial(L.tensor([5.0]), L.tensor([0.3])),
                                             M.Binomial(L.tensor([10.0]), L.tensor([0.3])))),
    ("independent ndims", lambda M, L: (M.Independent(M.Normal(L.zeros(2, 3), 1.0), 1),
                                        M.Independent(M.Normal(L.zeros(2, 3), 1.0), 2))),
    ("mvn event shapes", lambda M, L: (M.MultivariateNormal(L.zeros(2), L.eye(2)),
                                       M.MultivariateNormal(L.zeros(3), L.eye(3)))),
    ("lowrank event shapes", lambda M, L: (M.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
                                           M.MultivariateNormal(L.zeros(3), L.eye(3)))),
    ("transformed different transforms", lambda M, L: (M.LogNormal(0.0, 1.0),
                                                       M.TransformedDistribution(M.Normal(0.0, 1.0), []))),
    ("weibull different concentrations", lambda M, L: (M.Weibull(L.ones(2), L.ones(2)),
                                                       M.Weibull(L.ones(2), L.ones(2) * 2))),
]


@pytest.mark.parametrize("make", [m for _, m in ERRORS], ids=[n for n, _ in ERRORS])
def test_kl_errors(make):
    (pe, qe), (pt, qt) = _both(make)
    with pytest.raises(Exception) as et:
        torch.distributions.kl_divergence(pt, qt)
    with pytest.raises(type(et.value)) as ee:
        D.kl_divergence(pe, qe)
    assert " ".join(str(ee.value).split()) == " ".join(str(et.value).split())


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    expected = D.kl_divergence(D.Normal(0.0, 1.0), q).item()
    assert D.kl_divergence(p, q).item() == pytest.approx(expected)  # inherits Normal-Normal

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return ember.tensor(42.0)

    assert D.kl_divergence(p, q).item() == 42.0  # the most specific registration wins
    assert D.kl_divergence(q, p).item() == pytest.approx(D.kl_divergence(q, D.Normal(0.0, 1.0)).item())

    @D.register_kl(D.Normal, MyNormal)
    def _kl_other(p, q):
        return ember.tensor(7.0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert D.kl_divergence(p, MyNormal(0.0, 1.0)).item() == 42.0
    assert any("Ambiguous kl_divergence(MyNormal, MyNormal)" in str(x.message) for x in w)
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


@pytest.mark.parametrize("family,params", [
    ("Normal", lambda: [RNG.standard_normal(4), _pos(4)]),
    ("Gamma", lambda: [_pos(4), _pos(4)]),
    ("Exponential", lambda: [_pos(4)]),
    ("Beta", lambda: [_pos(4), _pos(4)]),
    ("Bernoulli", lambda: [_prob(4)]),
    ("Poisson", lambda: [_pos(4)]),
])
def test_exponential_family_bregman_fallback(family, params):
    """The Bregman-divergence KL and entropy of ExponentialFamily agree with the closed forms (and torch's)."""
    ap, aq = params(), params()
    pe, ppe = _make(family, ember, ap, "float64")
    qe, pqe = _make(family, ember, aq, "float64")
    pt, _ = _make(family, torch, ap, "float64")
    qt, _ = _make(family, torch, aq, "float64")
    kl = _kl_expfamily_expfamily(pe, qe)
    close(kl, torch.distributions.kl._kl_expfamily_expfamily(pt, qt), "float64", "bregman kl")
    close(kl, D.kl_divergence(pe, qe), "float64", "closed form")
    # p's natural parameters are detached (as in torch): the gradient flows to q's parameters
    g = ember.autograd.grad(kl.sum(), pqe)
    g_closed = ember.autograd.grad(D.kl_divergence(pe, qe).sum(), pqe)
    for a, b in zip(g, g_closed):
        close(a, b, "float64", "gradient")
    if family in ("Poisson", "Beta"):  # as in torch, they have no expected carrier measure
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(pe)
        with pytest.raises(NotImplementedError):
            torch.distributions.ExponentialFamily.entropy(pt)
    else:
        close(D.ExponentialFamily.entropy(pe), pe.entropy(), "float64", "bregman entropy")
    assert math.isfinite(kl.sum().item())
