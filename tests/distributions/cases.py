"""The distributions under test, each built the same way from ember and torch (``M`` is ``ember.distributions`` or
``torch.distributions``), on batched parameters and values that broadcast against them; and the helpers that
compare ember's results with torch's."""
import numpy as np
import torch

import ember
import ember.distributions as D

RNG = np.random.default_rng(0)
TOL = {"float64": (1e-5, 1e-8), "float32": (1e-4, 1e-5)}


def _pos(*shape, lo=0.5, hi=3.0):
    return RNG.uniform(lo, hi, shape)


def _real(*shape):
    return RNG.standard_normal(shape)


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _one_hot(idx, k):
    return np.eye(k)[idx]


class Case:
    """A distribution: ``build(M, *params)``; ``params`` (NumPy arrays, differentiable where ``grad`` says);
    ``value``, a point to score, broadcasting against the batch; ``cdf``/``icdf``/``entropy``: whether to compare
    them; ``moments``: whether draws have a finite mean and variance to compare with the distribution's."""

    def __init__(self, name, build, params, value, grad=None, cdf=False, icdf=False, entropy=True, moments=True):
        self.name, self.build, self.params, self.value = name, build, params, value
        self.grad = grad or [True] * len(params)
        self.cdf, self.icdf, self.entropy = cdf, icdf, entropy
        self.moments = moments  # whether the sample mean and variance estimate the distribution's
        self.cdf_grad = slice(None)  # the parameters torch differentiates cdf in

    def __repr__(self):
        return self.name


_MVN_LOC = _real(3, 4)
_MVN_COV = _spd(3, 4, 4)
_K = 5
_CAT_IDX = RNG.integers(0, _K, (2, 3))

CASES = [
    Case("Normal", lambda M, loc, scale: M.Normal(loc, scale), [_real(3, 4), _pos(4)], _real(2, 1, 4),
         cdf=True, icdf=True),
    Case("Uniform", lambda M, low, high: M.Uniform(low, high), [RNG.uniform(-2, -1, (3, 4)), RNG.uniform(1, 2, 4)],
         RNG.uniform(-0.9, 0.9, (2, 1, 4)), cdf=True, icdf=True),
    Case("Laplace", lambda M, loc, scale: M.Laplace(loc, scale), [_real(3, 4), _pos(4)], _real(2, 1, 4),
         cdf=True, icdf=True),
    Case("Exponential", lambda M, rate: M.Exponential(rate), [_pos(3, 4)], _pos(2, 1, 4), cdf=True, icdf=True),
    Case("Gamma", lambda M, c, r: M.Gamma(c, r), [_pos(3, 4, lo=0.3), _pos(4)], _pos(2, 1, 4, lo=0.1), cdf=True),
    Case("Beta", lambda M, a, b: M.Beta(a, b), [_pos(3, 4, lo=0.3), _pos(4, lo=0.3)],
         RNG.uniform(0.05, 0.95, (2, 1, 4))),
    Case("LogNormal", lambda M, loc, scale: M.LogNormal(loc, scale), [_real(3, 4), _pos(4, lo=0.2, hi=1)],
         _pos(2, 1, 4, lo=0.1), cdf=True, icdf=True),
    Case("Poisson", lambda M, rate: M.Poisson(rate), [_pos(3, 4, hi=6)], RNG.integers(0, 8, (2, 1, 4)) * 1.0,
         entropy=False),
    Case("Bernoulli_probs", lambda M, p: M.Bernoulli(probs=p), [RNG.uniform(0.05, 0.95, (3, 4))],
         RNG.integers(0, 2, (2, 1, 4)) * 1.0),
    Case("Bernoulli_logits", lambda M, lg: M.Bernoulli(logits=lg), [_real(3, 4)], RNG.integers(0, 2, (2, 1, 4)) * 1.0),
    Case("Binomial_probs", lambda M, p: M.Binomial(10, probs=p), [RNG.uniform(0.05, 0.95, (3, 4))],
         RNG.integers(0, 11, (2, 1, 4)) * 1.0),
    Case("Binomial_logits", lambda M, n, lg: M.Binomial(n, logits=lg), [RNG.integers(5, 15, (3, 1)) * 1.0,
                                                                        _real(3, 4)],
         RNG.integers(0, 5, (2, 1, 4)) * 1.0, grad=[False, True], entropy=False),
    Case("Categorical_probs", lambda M, p: M.Categorical(probs=p), [_pos(3, _K)], _CAT_IDX),
    Case("Categorical_logits", lambda M, lg: M.Categorical(logits=lg), [_real(3, _K)], _CAT_IDX),
    Case("OneHotCategorical", lambda M, p: M.OneHotCategorical(probs=p), [_pos(3, _K)], _one_hot(_CAT_IDX, _K)),
    Case("MultivariateNormal_cov", lambda M, loc, c: M.MultivariateNormal(loc, covariance_matrix=c),
         [_MVN_LOC, _MVN_COV], _real(2, 1, 4)),
    Case("MultivariateNormal_prec", lambda M, loc, p: M.MultivariateNormal(loc, precision_matrix=p),
         [_MVN_LOC, _spd(4, 4)], _real(2, 3, 4)),
    Case("MultivariateNormal_tril", lambda M, loc, L: M.MultivariateNormal(loc, scale_tril=L),
         [_real(4), np.linalg.cholesky(_MVN_COV)], _real(2, 1, 4)),
    Case("Dirichlet", lambda M, c: M.Dirichlet(c), [_pos(3, _K, lo=0.3)], RNG.dirichlet(np.ones(_K), (2, 1))),
    Case("Cauchy", lambda M, loc, scale: M.Cauchy(loc, scale), [_real(3, 4), _pos(4)], _real(2, 1, 4),
         cdf=True, icdf=True),
    Case("Geometric_probs", lambda M, p: M.Geometric(probs=p), [RNG.uniform(0.2, 0.9, (3, 4))],
         RNG.integers(0, 6, (2, 1, 4)) * 1.0),
    Case("Geometric_logits", lambda M, lg: M.Geometric(logits=lg), [_real(3, 4)], RNG.integers(0, 6, (2, 1, 4)) * 1.0),
    Case("StudentT", lambda M, df, loc, scale: M.StudentT(df, loc, scale), [_pos(3, 4, lo=5, hi=10), _real(4), _pos(4)],
         _real(2, 1, 4) * 3),
    Case("HalfNormal", lambda M, scale: M.HalfNormal(scale), [_pos(3, 4)], _pos(2, 1, 4, lo=0.01), cdf=True,
         icdf=True),
    Case("Multinomial_probs", lambda M, p: M.Multinomial(10, probs=p), [_pos(3, _K)],
         RNG.multinomial(10, np.full(_K, 1 / _K), (2, 1)) * 1.0),
    Case("Multinomial_logits", lambda M, lg: M.Multinomial(7, logits=lg), [_real(3, _K)],
         RNG.multinomial(7, np.full(_K, 1 / _K), (2, 3)) * 1.0),
    Case("MixtureSameFamily", lambda M, w, loc, scale: M.MixtureSameFamily(M.Categorical(probs=w),
                                                                           M.Normal(loc, scale)),
         [_pos(3, _K), _real(3, _K), _pos(_K)], _real(2, 1), entropy=False, cdf=True),
    Case("MixtureSameFamily_mvn", lambda M, lg, loc, L: M.MixtureSameFamily(
        M.Categorical(logits=lg), M.MultivariateNormal(loc, scale_tril=L)),
         [_real(3, _K), _real(3, _K, 2), np.linalg.cholesky(_spd(_K, 2, 2))], _real(2, 1, 2), entropy=False),
    Case("Independent", lambda M, loc, scale: M.Independent(M.Normal(loc, scale), 1), [_real(3, 4), _pos(4)],
         _real(2, 1, 4)),
]
_CB_PROBS = RNG.uniform(0.05, 0.95, (3, 4))
_CB_PROBS[0, :2] = 0.4995, 0.5  # inside the Taylor-expanded region around 0.5
_TEMP = np.array(0.7)

CASES += [
    Case("Gumbel", lambda M, loc, scale: M.Gumbel(loc, scale), [_real(3, 4), _pos(4)], _real(2, 1, 4),
         cdf=True, icdf=True),
    Case("Weibull", lambda M, scale, c: M.Weibull(scale, c), [_pos(3, 4), _pos(4, lo=0.8)], _pos(2, 1, 4, lo=0.1),
         cdf=True, icdf=True),
    Case("Pareto", lambda M, scale, alpha: M.Pareto(scale, alpha), [_pos(3, 4, lo=0.5, hi=1.0), _pos(4, lo=5, hi=8)],
         _pos(2, 1, 4, lo=1.0), cdf=True, icdf=True),
    Case("HalfCauchy", lambda M, scale: M.HalfCauchy(scale), [_pos(3, 4)], _pos(2, 1, 4, lo=0.01), cdf=True,
         icdf=True, moments=False),
    Case("Chi2", lambda M, df: M.Chi2(df), [_pos(3, 4, lo=1, hi=6)], _pos(2, 1, 4, lo=0.1), cdf=True),
    Case("FisherSnedecor", lambda M, d1, d2: M.FisherSnedecor(d1, d2), [_pos(3, 4, lo=1, hi=6), _pos(4, lo=9, hi=12)],
         _pos(2, 1, 4, lo=0.1), entropy=False),
    Case("Kumaraswamy", lambda M, a, b: M.Kumaraswamy(a, b), [_pos(3, 4, lo=0.5), _pos(4, lo=0.5)],
         RNG.uniform(0.05, 0.95, (2, 1, 4)), cdf=True, icdf=True),
    Case("LogisticNormal", lambda M, loc, scale: M.LogisticNormal(loc, scale), [_real(3, 4), _pos(4)],
         RNG.dirichlet(np.ones(5), (2, 1)), entropy=False, moments=False),
    Case("ContinuousBernoulli_probs", lambda M, p: M.ContinuousBernoulli(probs=p), [_CB_PROBS],
         RNG.uniform(0, 1, (2, 1, 4)), cdf=True, icdf=True),
    Case("ContinuousBernoulli_logits", lambda M, lg: M.ContinuousBernoulli(logits=lg), [_real(3, 4) * 3],
         RNG.uniform(0, 1, (2, 1, 4)), cdf=True, icdf=True),
    Case("NegativeBinomial_probs", lambda M, n, p: M.NegativeBinomial(n, probs=p),
         [_pos(3, 1, lo=1, hi=6), RNG.uniform(0.1, 0.8, (3, 4))], RNG.integers(0, 8, (2, 1, 4)) * 1.0, entropy=False),
    Case("NegativeBinomial_logits", lambda M, n, lg: M.NegativeBinomial(n, logits=lg), [_pos(3, 4, lo=1, hi=6),
                                                                                         _real(4) - 0.5],
         RNG.integers(0, 8, (2, 1, 4)) * 1.0, entropy=False),
    Case("VonMises", lambda M, loc, k: M.VonMises(loc, k), [_real(3, 4), _pos(4, lo=0.5, hi=6)], _real(2, 1, 4) * 2,
         entropy=False, moments=False),
    Case("LogitRelaxedBernoulli", lambda M, t, p: M.relaxed_bernoulli.LogitRelaxedBernoulli(t, probs=p),
         [_TEMP, RNG.uniform(0.1, 0.9, (3, 4))], _real(2, 1, 4) * 2, entropy=False, moments=False),
    Case("RelaxedBernoulli_logits", lambda M, t, lg: M.RelaxedBernoulli(t, logits=lg), [_TEMP, _real(3, 4)],
         RNG.uniform(0.05, 0.95, (2, 1, 4)), entropy=False, moments=False),
    Case("ExpRelaxedCategorical", lambda M, t, p: M.relaxed_categorical.ExpRelaxedCategorical(t, probs=p), [_TEMP, _pos(3, _K)],
         np.log(RNG.dirichlet(np.ones(_K), (2, 1))), entropy=False, moments=False),
    Case("RelaxedOneHotCategorical", lambda M, t, lg: M.RelaxedOneHotCategorical(t, logits=lg), [_TEMP, _real(3, _K)],
         RNG.dirichlet(np.ones(_K), (2, 1)), entropy=False, moments=False),
    Case("OneHotCategoricalStraightThrough", lambda M, p: M.OneHotCategoricalStraightThrough(probs=p), [_pos(3, _K)],
         _one_hot(_CAT_IDX, _K)),
    Case("LowRankMultivariateNormal", lambda M, loc, W, d: M.LowRankMultivariateNormal(loc, W, d),
         [_real(3, 4), _real(3, 4, 2), _pos(4)], _real(2, 1, 4)),
]
BY_NAME = {c.name: c for c in CASES}
BY_NAME["Gamma"].cdf_grad = slice(1, None)  # torch has no derivative of gammainc in the shape
BY_NAME["Chi2"].cdf_grad = slice(0, 0)


def to_lib(a, lib, dtype, grad=False):
    """A NumPy array as a ``lib`` tensor: floats in ``dtype``, integers as int64."""
    if a.dtype.kind == "f":
        t = lib.tensor(a, dtype=getattr(lib, dtype))
        return t.requires_grad_(grad)
    return lib.tensor(a)


def build(case, lib, dtype):
    """The case's distribution in ``lib`` and its parameters (those that require grad)."""
    params = [to_lib(a, lib, dtype, g) for a, g in zip(case.params, case.grad)]
    d = case.build(D if lib is ember else torch.distributions, *params)
    return d, [p for p, g in zip(params, case.grad) if g]


def as_np(t):
    if isinstance(t, np.ndarray):
        return t
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().cpu().numpy()


def close(actual, expected, dtype, what="", scale=1):
    rtol, atol = TOL[dtype]
    a, e = as_np(actual), as_np(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != torch's {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol * scale, atol=atol * scale, equal_nan=True, err_msg=what)


def grads_close(ye, yt, pe, pt, dtype, what="", scale=10):
    """Compares the gradients of ember's ``ye`` and torch's ``yt`` (same shapes) in their parameters under one
    random output gradient."""
    g = RNG.standard_normal(tuple(yt.shape))
    ge = ember.autograd.grad(ye, pe, ember.tensor(g, dtype=ye.dtype), allow_unused=True)
    gt = torch.autograd.grad(yt, pt, torch.tensor(g, dtype=yt.dtype), allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        assert (a is None) == (b is None), f"{what}: gradient {i} present in only one library"
        if a is not None:
            close(a, b, dtype, f"{what}: gradient of parameter {i}", scale)
