"""Values and gradients against torch.distributions on batched parameters: mean, variance, stddev, mode, entropy,
log_prob at values that broadcast against the batch, cdf and icdf, enumerate_support, batch and event shapes."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from .cases import CASES, RNG, build, close, grads_close, to_lib

DTYPES = ["float64", "float32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_shapes_and_moments(case, dtype):
    de, _ = build(case, ember, dtype)
    dt, _ = build(case, torch, dtype)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) and tuple(de.event_shape) == tuple(dt.event_shape)
    assert isinstance(de.batch_shape, ember.Size) and isinstance(de.event_shape, ember.Size)
    assert de.has_rsample == dt.has_rsample and de.has_enumerate_support == dt.has_enumerate_support
    for prop in ("mean", "variance", "stddev", "mode"):
        try:
            t = getattr(dt, prop)
        except NotImplementedError as err:  # (Multinomial has no mode)
            with pytest.raises(NotImplementedError) as ee:
                getattr(de, prop)
            assert str(ee.value).replace("ember.", "torch.") == str(err)
            continue
        e = getattr(de, prop)
        close(e, t, dtype, prop)
        assert e.dtype.name == str(t.dtype)[6:], (prop, e.dtype, t.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_log_prob(case, dtype):
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, dtype)
    ye = de.log_prob(to_lib(case.value, ember, dtype))
    yt = dt.log_prob(to_lib(case.value, torch, dtype))
    close(ye, yt, dtype, "log_prob")
    grads_close(ye, yt, pe, pt, dtype, "log_prob")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", [c for c in CASES if c.entropy], ids=repr)
def test_entropy(case, dtype):
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, dtype)
    ye, yt = de.entropy(), dt.entropy()
    close(ye, yt, dtype, "entropy")
    close(de.perplexity(), dt.perplexity(), dtype, "perplexity")
    grads_close(ye, yt, pe, pt, dtype, "entropy")


@pytest.mark.parametrize("name", ["Poisson", "Binomial_logits"])
def test_entropy_not_implemented(name):
    case = next(c for c in CASES if c.name == name)
    de, _ = build(case, ember, "float64")
    dt, _ = build(case, torch, "float64")
    with pytest.raises(NotImplementedError) as et:
        dt.entropy()
    with pytest.raises(NotImplementedError) as ee:
        de.entropy()
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", [c for c in CASES if c.cdf], ids=repr)
def test_cdf(case, dtype):
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, dtype)
    ve = to_lib(case.value, ember, dtype, True)
    vt = to_lib(case.value, torch, dtype, True)
    ye, yt = de.cdf(ve), dt.cdf(vt)
    close(ye, yt, dtype, "cdf")
    grads_close(ye, yt, pe[case.cdf_grad] + [ve], pt[case.cdf_grad] + [vt], dtype, "cdf")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", [c for c in CASES if c.icdf], ids=repr)
def test_icdf(case, dtype):
    de, pe = build(case, ember, dtype)
    dt, pt = build(case, torch, dtype)
    q = RNG.uniform(0.02, 0.98, (2, 1, 4))
    ye, yt = de.icdf(to_lib(q, ember, dtype)), dt.icdf(to_lib(q, torch, dtype))
    close(ye, yt, dtype, "icdf")
    grads_close(ye, yt, pe, pt, dtype, "icdf")
    close(de.cdf(ye), np.broadcast_to(q, tuple(ye.shape)), dtype, "cdf(icdf(q))", scale=10)


def test_gamma_cdf_gradient_in_concentration():
    # torch has no derivative of gammainc in its first argument: compare with central differences of torch's
    c = np.array([0.4, 1.0, 2.5, 7.0])
    x = np.array([0.3, 1.5, 2.0, 9.0])
    ce = ember.tensor(c, requires_grad=True)
    d = D.Gamma(ce, 1.0)
    (g,) = ember.autograd.grad(d.cdf(ember.tensor(x)).sum(), [ce])
    h = 1e-6
    P = lambda a: torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()  # noqa: E731
    np.testing.assert_allclose(g.numpy(), (P(c + h) - P(c - h)) / (2 * h), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("expand", [True, False])
@pytest.mark.parametrize("name", ["Bernoulli_probs", "Binomial_probs", "Categorical_logits", "OneHotCategorical"])
def test_enumerate_support(name, expand):
    case = next(c for c in CASES if c.name == name)
    de, _ = build(case, ember, "float32")
    dt, _ = build(case, torch, "float32")
    se, st = de.enumerate_support(expand), dt.enumerate_support(expand)
    assert se.dtype.name == str(st.dtype)[6:]
    np.testing.assert_array_equal(se.numpy(), st.numpy())
    if expand:  # every supported value has a finite log-probability
        assert ember.isfinite(de.log_prob(se)).all()


def test_binomial_enumerate_support_inhomogeneous():
    d = D.Binomial(ember.tensor([3.0, 4.0]), probs=ember.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        d.enumerate_support()


def test_categorical_normalizes_probs_and_logits():
    p = RNG.uniform(0.1, 2.0, (3, 4))
    de = D.Categorical(probs=ember.tensor(p))
    dt = torch.distributions.Categorical(probs=torch.tensor(p))
    close(de.probs, dt.probs, "float64", "probs")
    close(de.logits, dt.logits, "float64", "logits")
    np.testing.assert_allclose(de.probs.sum(-1).numpy(), 1.0)
    lg = RNG.standard_normal((3, 4)) * 3
    de = D.Categorical(logits=ember.tensor(lg))
    dt = torch.distributions.Categorical(logits=torch.tensor(lg))
    close(de.logits, dt.logits, "float64", "logits")
    close(de.probs, dt.probs, "float64", "probs")
    np.testing.assert_allclose(de.logits.exp().sum(-1).numpy(), 1.0)
    assert de.param_shape == (3, 4) and de.mode.tolist() == dt.mode.tolist()


def test_categorical_entropy_with_zero_probs():
    p = [[0.0, 0.3, 0.7], [1.0, 0.0, 0.0]]
    e = D.Categorical(probs=ember.tensor(p)).entropy()
    t = torch.distributions.Categorical(probs=torch.tensor(p)).entropy()
    close(e, t, "float32", "entropy")
    assert ember.isfinite(e).all()


def test_bernoulli_mode_at_half_and_extreme_logits():
    d = D.Bernoulli(probs=ember.tensor([0.2, 0.5, 0.9]))
    t = torch.distributions.Bernoulli(probs=torch.tensor([0.2, 0.5, 0.9]))
    close(d.mode, t.mode, "float32", "mode")
    lg = [-100.0, 100.0, 0.0]
    e = D.Bernoulli(logits=ember.tensor(lg))
    t = torch.distributions.Bernoulli(logits=torch.tensor(lg))
    close(e.log_prob(ember.tensor([1.0, 0.0, 1.0])), t.log_prob(torch.tensor([1.0, 0.0, 1.0])), "float32", "lp")
    close(e.entropy(), t.entropy(), "float32", "entropy")


def test_beta_mode_edge_cases():
    a, b = [0.5, 0.5, 2.0, 1.0, 0.3, 3.0], [0.5, 2.0, 0.5, 1.0, 0.2, 3.0]
    e = D.Beta(ember.tensor(a), ember.tensor(b)).mode
    t = torch.distributions.Beta(torch.tensor(a), torch.tensor(b)).mode
    close(e, t, "float32", "mode")


def test_scalar_parameters():
    T = torch.distributions
    for make, value in ((lambda M: M.Normal(0.5, 2.0), [0.5, 1.0]), (lambda M: M.Gamma(2.0, 3.0), [0.5, 1.0]),
                        (lambda M: M.Beta(2.0, 3.0), [0.5, 0.25]), (lambda M: M.Bernoulli(0.3), [0.0, 1.0]),
                        (lambda M: M.Exponential(2.0), [0.5, 1.0]), (lambda M: M.Laplace(1.0, 2.0), [0.5, 1.0]),
                        (lambda M: M.Uniform(-1.0, 3.0), [0.5, 1.0]), (lambda M: M.Poisson(3.0), [0.0, 4.0]),
                        (lambda M: M.LogNormal(0.1, 0.5), [0.5, 1.0])):
        de, dt = make(D), make(T)
        assert de.batch_shape == () and dt.batch_shape == ()
        assert de.mean.dtype is ember.float32 and de.mean.shape == ()
        close(de.mean, dt.mean, "float32", repr(dt))
        close(de.log_prob(ember.tensor(value)), dt.log_prob(torch.tensor(value)), "float32", repr(dt))


def test_gamma_log_prob_converts_values():
    # as torch, Gamma.log_prob accepts numbers and casts values to the parameters' dtype
    d = D.Gamma(ember.tensor([2.0, 3.0]), ember.tensor([1.0, 0.5]))
    t = torch.distributions.Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5]))
    close(d.log_prob(1.5), t.log_prob(1.5), "float32", "number")
    e = d.log_prob(ember.tensor([1.5, 2.5], dtype=ember.float64))
    assert e.dtype is ember.float32
    close(e, t.log_prob(torch.tensor([1.5, 2.5], dtype=torch.float64)), "float32", "float64 value")
