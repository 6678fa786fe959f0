"""GeneralizedPareto, InverseGamma, Wishart, LKJCholesky and ReshapeTransform against torch.distributions: shapes,
constraints, moments, log_prob, entropy, cdf/icdf and their gradients; draws by their moments, reparameterized
gradients against the gradient of the exact mean."""
import doctest
import importlib
import math
import warnings

import numpy as np
import pytest
import scipy.stats
import torch

import ember
import ember.distributions as D
from .cases import RNG, Case, _pos, _real, _spd, build, close, grads_close, to_lib

T = torch.distributions
N = 20000
_GP_CONC = np.array([0.0, 0.3, -0.4, 0.8])  # the exponential case, a Pareto tail, a bounded support, no variance
_GP_LOC, _GP_SCALE = _real(3, 4), _pos(4)
_W_SCALE = _spd(2, 3, 3)

CASES = [
    Case("GeneralizedPareto", lambda M, loc, s, c: M.GeneralizedPareto(loc, s, c), [_GP_LOC, _GP_SCALE, _GP_CONC],
         _GP_LOC + RNG.uniform(0.01, 1.5, (2, 3, 4)), cdf=True, icdf=True),
    Case("InverseGamma", lambda M, c, r: M.InverseGamma(c, r), [_pos(3, 4, lo=0.5, hi=4), _pos(4)],
         _pos(2, 1, 4, lo=0.1)),
    Case("Wishart_cov", lambda M, df, c: M.Wishart(df, covariance_matrix=c), [np.array([3.5, 6.0]), _W_SCALE],
         _spd(4, 1, 3, 3)),
    Case("Wishart_prec", lambda M, df, p: M.Wishart(df, precision_matrix=p), [np.array(5.0), _W_SCALE],
         _spd(4, 1, 3, 3)),
    Case("Wishart_tril", lambda M, df, L: M.Wishart(df, scale_tril=L), [np.array([[4.0], [7.0]]),
                                                                        np.linalg.cholesky(_W_SCALE)],
         _spd(4, 1, 1, 3, 3)),
    Case("LKJCholesky", lambda M, c: M.LKJCholesky(4, c), [np.array([0.5, 1.0, 3.0])],
         T.LKJCholesky(4, torch.tensor(1.5, dtype=torch.float64)).sample((2, 3)).numpy(), entropy=False),
]
BY_NAME = {c.name: c for c in CASES}
DTYPES = ["float64", "float32"]


def _torch_dtype(case, dtype):
    """torch's GeneralizedPareto compares its concentration with a float32 zero: it scores only float32 values."""
    return "float32" if case.name == "GeneralizedPareto" else dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_shapes_constraints_moments(case, dtype):
    de, _ = build(case, ember, dtype)
    dt, _ = build(case, torch, dtype)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) and tuple(de.event_shape) == tuple(dt.event_shape)
    assert de.has_rsample == dt.has_rsample
    assert {k: repr(v) for k, v in de.arg_constraints.items()} == {k: repr(v) for k, v in dt.arg_constraints.items()}
    for prop in ("mean", "variance", "mode"):
        if case.name == "LKJCholesky":
            with pytest.raises(NotImplementedError):
                getattr(de, prop)
            continue
        e, t = getattr(de, prop), getattr(dt, prop)
        close(e, t, dtype, prop)
        assert e.dtype.name == str(t.dtype)[6:]
    assert de.sample((5,)).shape == dt.sample((5,)).shape
    lead = (case.value.shape[0],)
    expanded = de.expand(lead + tuple(de.batch_shape))
    assert tuple(expanded.batch_shape) == tuple(dt.expand(lead + tuple(dt.batch_shape)).batch_shape)
    value = to_lib(case.value, ember, dtype)
    got = expanded.log_prob(value)
    close(got, de.log_prob(value).expand(got.shape), dtype, "expanded log_prob")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_log_prob_and_entropy(case, dtype):
    tdtype = _torch_dtype(case, dtype)
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, tdtype)
    ye, yt = de.log_prob(to_lib(case.value, ember, dtype)), dt.log_prob(to_lib(case.value, torch, tdtype))
    close(ye, yt, tdtype, "log_prob")
    grads_close(ye, yt, pe, pt, tdtype, "log_prob", scale=30)
    if case.entropy:  # rebuilt: the Cholesky factor computed at construction is part of the freed graph
        de, pe = build(case, ember, dtype)
        dt, pt = build(case, torch, tdtype)
        close(de.entropy(), dt.entropy(), tdtype, "entropy")
        grads_close(de.entropy(), dt.entropy(), pe, pt, tdtype, "entropy")


def test_generalized_pareto_float64_against_scipy():
    case = BY_NAME["GeneralizedPareto"]
    de, _ = build(case, ember, "float64")
    ref = scipy.stats.genpareto(_GP_CONC, _GP_LOC, _GP_SCALE)
    close(de.log_prob(ember.tensor(case.value)), ref.logpdf(case.value), "float64", "log_prob")
    close(de.cdf(ember.tensor(case.value)), ref.cdf(case.value), "float64", "cdf")
    u = RNG.uniform(0.01, 0.99, (2, 3, 4))
    close(de.icdf(ember.tensor(u)), ref.ppf(u), "float64", "icdf")
    close(de.entropy(), ref.entropy(), "float64", "entropy")
    with pytest.raises(ValueError, match="within the support"):
        de.log_prob(ember.tensor(_GP_LOC - 1.0))
    support = de.support
    assert support.check(ember.tensor(case.value)).all()
    assert not support.check(ember.tensor(_GP_LOC - 0.1)).any()
    assert not support.check(ember.tensor(_GP_LOC + _GP_SCALE / 0.4 + 0.1))[:, 2].any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_generalized_pareto_cdf_icdf(dtype):
    case = BY_NAME["GeneralizedPareto"]
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, dtype)
    u = RNG.uniform(0.01, 0.99, (2, 3, 4))
    ue, ut = to_lib(u, ember, dtype, True), to_lib(u, torch, dtype, True)
    ye, yt = de.icdf(ue), dt.icdf(ut)
    close(ye, yt, dtype, "icdf")
    grads_close(ye, yt, pe + [ue], pt + [ut], dtype, "icdf")
    de, pe = build(case, ember, "float32")
    dt, pt = build(case, torch, "float32")
    ye, yt = de.cdf(to_lib(case.value, ember, "float32")), dt.cdf(to_lib(case.value, torch, "float32"))
    close(ye, yt, "float32", "cdf", scale=10)
    grads_close(ye, yt, pe, pt, "float32", "cdf", scale=30)


def _moments_match(x, mean, var):
    """``x`` (N draws along dim 0) has ``mean`` and ``var`` within five standard errors."""
    x, mean, var = np.asarray(x), np.asarray(mean), np.asarray(var)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(var / N) + 1e-9)
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    np.testing.assert_array_less(np.abs(x.var(0) - var), 5 * np.sqrt((m4 - var ** 2) / N) + 1e-9)


@pytest.mark.parametrize("name", ["GeneralizedPareto", "InverseGamma", "Wishart_cov", "Wishart_tril"])
def test_sample_moments(name):
    case = BY_NAME[name]
    params = list(case.params)
    if name == "GeneralizedPareto":  # finite fourth moments
        params[2] = np.array([0.0, 0.2, -0.4, -1.0])
    elif name == "InverseGamma":
        params[0] = params[0] + 4.5
    d = case.build(D, *[ember.tensor(p) for p in params])
    ember.manual_seed(0)
    x = d.sample((N,))
    assert x.shape == (N,) + tuple(d.batch_shape) + tuple(d.event_shape) and x.dtype is ember.float64
    assert d.support.check(x).all()
    _moments_match(x.numpy(), d.mean.numpy(), d.variance.numpy())


@pytest.mark.parametrize("name", ["GeneralizedPareto", "InverseGamma", "Wishart_cov", "Wishart_tril"])
def test_rsample_gradient_is_the_mean_gradient(name):
    case = BY_NAME[name]
    params = list(case.params)
    if name == "GeneralizedPareto":  # at concentration 0 exactly, the sampler (as torch's) has no gradient in it
        params[2] = np.array([0.1, 0.2, -0.4, -1.0])
    elif name == "InverseGamma":
        params[0] = params[0] + 4.5
    ps = [ember.tensor(p, requires_grad=True) for p in params]
    d = case.build(D, *ps)
    ember.manual_seed(1)
    g = RNG.standard_normal(tuple(d.mean.shape))
    g = ember.tensor(g + np.swapaxes(g, -1, -2) if name.startswith("Wishart") else g)  # symmetric matrices
    sampled = ember.autograd.grad((d.rsample((N,)).mean(0) * g).sum(), ps)
    exact = ember.autograd.grad((d.mean * g).sum(), ps)
    for a, b in zip(sampled, exact):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0.05, atol=0.05 * np.abs(b.numpy()).max())


def test_lkj_cholesky_samples():
    eta = np.array([0.5, 1.0, 3.0])
    d = D.LKJCholesky(4, ember.tensor(eta))
    ember.manual_seed(0)
    L = d.sample((N,))
    assert L.shape == (N, 3, 4, 4) and not d.has_rsample
    assert d.support.check(L).all()
    C = (L @ L.mT).numpy()
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    # each correlation is 2 * Beta(eta - 1 + dim / 2, the same) - 1: mean 0, variance 1 / (2 * eta + dim - 1).
    # (torch's onion sampler draws row i's squared norm from Beta(i - 1 / 2, ...), not Beta(i / 2, ...): its
    # correlations below the second row are too spread, e.g. a variance of 0.25 instead of 0.2 at eta = 1)
    for x in (C[..., 1, 0], C[..., 2, 0], C[..., 3, 1], C[..., 3, 2]):
        _moments_match(x, np.zeros(3), 1 / (2 * eta + 3))
    # and log_prob of the draws, against torch's
    close(d.log_prob(L[:50]), T.LKJCholesky(4, torch.tensor(eta)).log_prob(torch.tensor(L[:50].numpy())),
          "float64", "log_prob")


def test_lkj_cholesky_float32_sample_and_errors():
    d = D.LKJCholesky(3, 2.0)
    assert d.sample((2,)).dtype is ember.float32 and tuple(d.batch_shape) == ()
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        D.LKJCholesky(1, 1.0)
    with pytest.raises(ValueError):
        D.LKJCholesky(3, -1.0, validate_args=True)


def test_wishart_errors_and_warnings():
    S = ember.eye(3, dtype=ember.float64)
    with pytest.raises(AssertionError, match="Exactly one"):
        D.Wishart(4.0, covariance_matrix=S, scale_tril=S)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        D.Wishart(4.0, covariance_matrix=ember.ones(3))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        D.Wishart(ember.tensor([4.0, 2.0], dtype=ember.float64), covariance_matrix=S)
    with pytest.warns(UserWarning, match="Low df"):
        D.Wishart(2.5, covariance_matrix=S)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for regular draws
        x = D.Wishart(ember.tensor([4.0, 9.0], dtype=ember.float64), covariance_matrix=S).rsample((3,))
    assert x.shape == (3, 2, 3, 3)
    d = D.Wishart(ember.tensor([2.5, 3.0]), covariance_matrix=ember.eye(3), validate_args=True)
    assert repr(d.arg_constraints["df"]) == "GreaterThan(lower_bound=2)"
    with pytest.raises(ValueError):
        d.log_prob(-ember.eye(3))
    assert math.isnan(D.Wishart(3.5, covariance_matrix=S).mode[0, 0].item())  # df <= p + 1 has no mode


@pytest.mark.parametrize("shapes", [((6,), (2, 3)), ((2, 3), (3, 2)), ((4, 1), (2, 2)), ((), (1,))])
def test_reshape_transform(shapes):
    in_shape, out_shape = shapes
    te, tt = D.ReshapeTransform(in_shape, out_shape), T.ReshapeTransform(in_shape, out_shape)
    x = RNG.standard_normal((5,) + in_shape)
    ye, yt = te(ember.tensor(x)), tt(torch.tensor(x))
    close(ye, yt, "float64", "forward")
    close(te.inv(ye), x, "float64", "inverse")
    close(te.log_abs_det_jacobian(ember.tensor(x), ye), tt.log_abs_det_jacobian(torch.tensor(x), yt), "float64")
    assert te.forward_shape((5,) + in_shape) == tt.forward_shape((5,) + in_shape)
    assert te.inverse_shape((5,) + out_shape) == tt.inverse_shape((5,) + out_shape)
    assert te.domain.event_dim == len(in_shape) and te.codomain.event_dim == len(out_shape)
    assert te.bijective and te.with_cache().inv(te.with_cache()(ember.tensor(x))).shape == x.shape


def test_reshape_transform_errors_and_distribution():
    with pytest.raises(ValueError, match="different numbers of elements"):
        D.ReshapeTransform((6,), (4,))
    t = D.ReshapeTransform((2, 3), (6,))
    with pytest.raises(ValueError, match="Too few dimensions"):
        t.forward_shape((3,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        t.forward_shape((3, 2))
    loc, scale = _real(4, 2, 3), _pos(2, 3)
    de = D.TransformedDistribution(D.Normal(ember.tensor(loc), ember.tensor(scale)), [t])
    dt = T.TransformedDistribution(T.Normal(torch.tensor(loc), torch.tensor(scale)), [T.ReshapeTransform((2, 3), (6,))])
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) == (4,) and tuple(de.event_shape) == (6,)
    v = _real(4, 6)
    close(de.log_prob(ember.tensor(v)), dt.log_prob(torch.tensor(v)), "float64", "log_prob")
    assert de.sample((2,)).shape == (2, 4, 6)


@pytest.mark.parametrize("name", ["generalized_pareto", "inverse_gamma", "wishart", "lkj_cholesky"])
def test_docstring_examples(name):
    module = importlib.import_module(f"ember.distributions.{name}")
    globs = {"ember": ember, **{k: getattr(D, k) for k in D.__all__}}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0 and result.attempted > 0
