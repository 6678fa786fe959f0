"""Draws that cannot be checked by their mean and variance, and rsample estimators beyond the standard draws: von
Mises (circular moments and bin frequencies against torch's density), half-Cauchy quartiles, the relaxed
distributions (thresholds and argmax frequencies), the logistic normal, negative binomial frequencies, the
straight-through estimator and the low-rank multivariate normal."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from .cases import RNG, close

T = torch.distributions
N = 20000


@pytest.mark.parametrize("kappa", [1e-3, 0.5, 2.0, 30.0])
def test_von_mises_samples(kappa):
    loc = 2.5
    d = D.VonMises(ember.full((N,), loc, dtype=ember.float64), ember.full((N,), kappa, dtype=ember.float64))
    ember.manual_seed(0)
    x = d.sample().numpy()
    assert ((x >= -np.pi) & (x < np.pi)).all()
    c, s = np.cos(x - loc), np.sin(x - loc)
    mean_cos = 1 - d.variance[0].item()  # I1(kappa) / I0(kappa)
    assert abs(c.mean() - mean_cos) < 5 * c.std() / np.sqrt(N) + 1e-6
    assert abs(s.mean()) < 5 * s.std() / np.sqrt(N) + 1e-6
    # the frequencies of 8 bins against torch's density integrated over them
    edges = np.linspace(-np.pi, np.pi, 9)
    grid = np.linspace(-np.pi, np.pi, 8001)
    dens = T.VonMises(torch.tensor(loc, dtype=torch.float64), torch.tensor(kappa, dtype=torch.float64)).log_prob(
        torch.tensor(grid)).exp().numpy()
    cum = np.concatenate([[0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid))])
    p = np.diff(np.interp(edges, grid, cum))
    freq = np.histogram(x, edges)[0] / N
    np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / N) + 1e-3)


def test_von_mises_sample_dtype_and_no_rsample():
    d = D.VonMises(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 1e-6]))
    x = d.sample((3,))
    assert x.dtype is ember.float32 and x.shape == (3, 2)
    assert not d.has_rsample
    with pytest.raises(NotImplementedError):
        d.rsample()


def test_half_cauchy_quartiles():
    scale = np.array([0.5, 2.0])
    d = D.HalfCauchy(ember.tensor(scale))
    ember.manual_seed(0)
    x = d.sample((N,)).numpy()
    q = np.quantile(x, [0.25, 0.5, 0.75], axis=0)
    expected = np.tan(np.pi / 2 * np.array([0.25, 0.5, 0.75]))[:, None] * scale
    density = 2 / (np.pi * scale * (1 + (expected / scale) ** 2))  # the standard error of a quantile
    se = np.sqrt(np.array([0.25, 0.5, 0.75]) * np.array([0.75, 0.5, 0.25]) / N)[:, None] / density
    np.testing.assert_array_less(np.abs(q - expected), 5 * se)


def test_relaxed_bernoulli_threshold_frequencies():
    """A relaxed Bernoulli draw is above 1/2 exactly when the logistic noise exceeds ``-logits``: with probability
    ``probs``, at any temperature."""
    p = np.array([0.1, 0.5, 0.85])
    for t in (0.1, 1.0, 5.0):
        d = D.RelaxedBernoulli(ember.tensor(t, dtype=ember.float64), probs=ember.tensor(p))
        ember.manual_seed(1)
        x = d.sample((N,)).numpy()
        assert ((x > 0) & (x < 1)).all()
        np.testing.assert_array_less(np.abs((x > 0.5).mean(0) - p), 5 * np.sqrt(p * (1 - p) / N))
    assert (np.minimum(x, 1 - x) > 0).all()
    sharp = D.RelaxedBernoulli(ember.tensor(0.01), probs=ember.tensor(p)).sample((100,)).numpy()
    assert (np.minimum(sharp, 1 - sharp) < 0.01).mean() > 0.9  # near {0, 1} at a low temperature


def test_relaxed_one_hot_argmax_frequencies():
    """The argmax of a relaxed one-hot draw is Categorical(probs) (the Gumbel-max trick)."""
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    d = D.RelaxedOneHotCategorical(ember.tensor(0.5, dtype=ember.float64), probs=ember.tensor(p))
    ember.manual_seed(2)
    x = d.sample((N,)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1, rtol=1e-12)
    freq = (x.argmax(-1)[..., None] == np.arange(4)).mean(0)
    np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / N))


def test_logistic_normal_samples():
    """Mapped back through the stick-breaking transform, draws are Normal(loc, scale)."""
    loc, scale = np.array([0.5, -1.0, 0.0]), np.array([1.0, 0.3, 2.0])
    d = D.LogisticNormal(ember.tensor(loc), ember.tensor(scale))
    ember.manual_seed(3)
    x = d.sample((N,))
    np.testing.assert_allclose(x.sum(-1).numpy(), 1, rtol=1e-12)
    z = D.transforms.StickBreakingTransform().inv(x).numpy()
    np.testing.assert_array_less(np.abs(z.mean(0) - loc), 5 * scale / np.sqrt(N))
    np.testing.assert_allclose(z.std(0), scale, rtol=0.03)
    e, t = D.LogisticNormal(0.0, 1.0), T.LogisticNormal(0.0, 1.0)  # scalars: a 2-simplex
    assert e.event_shape == t.event_shape == (2,) and e.batch_shape == ()


@pytest.mark.parametrize("n,p", [(0.5, 0.3), (4.0, 0.6), (20.0, 0.1)])
def test_negative_binomial_frequencies(n, p):
    d = D.NegativeBinomial(n, ember.full((N,), p, dtype=ember.float64))
    ember.manual_seed(4)
    x = d.sample().numpy()
    assert (x == np.round(x)).all() and (x >= 0).all()
    k = np.arange(12)
    pmf = T.NegativeBinomial(n, torch.tensor(p, dtype=torch.float64)).log_prob(torch.tensor(k * 1.0)).exp().numpy()
    freq = (x[:, None] == k).mean(0)
    np.testing.assert_array_less(np.abs(freq - pmf), 5 * np.sqrt(pmf * (1 - pmf) / N) + 1e-9)


def test_fisher_snedecor_rsample_gradient():
    """The gradient of the mean of rsample in the degrees of freedom approaches that of the mean, ``d2 / (d2 -
    2)``."""
    df1 = ember.tensor([3.0, 5.0], dtype=ember.float64, requires_grad=True)
    df2 = ember.tensor([8.0, 12.0], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(5)
    x = D.FisherSnedecor(df1, df2).rsample((N,))
    g1, g2 = ember.autograd.grad(x.mean(0).sum(), [df1, df2])
    np.testing.assert_allclose(g1.numpy(), 0, atol=0.02)
    np.testing.assert_allclose(g2.numpy(), -2 / (df2.detach().numpy() - 2) ** 2, atol=0.02)


def test_one_hot_straight_through():
    logits = RNG.standard_normal((3, 4))
    le = ember.tensor(logits, requires_grad=True)
    lt = torch.tensor(logits, requires_grad=True)
    de, dt = D.OneHotCategoricalStraightThrough(logits=le), T.OneHotCategoricalStraightThrough(logits=lt)
    w = RNG.standard_normal((5, 3, 4))
    x = de.rsample((5,))
    assert ((x == 0) | (x == 1)).all() and (x.sum(-1) == 1).all() and x.requires_grad
    (ge,) = ember.autograd.grad((x * ember.tensor(w)).sum(), [le])
    (gt,) = torch.autograd.grad((dt.rsample((5,)) * torch.tensor(w)).sum(), [lt])
    close(ge, gt, "float64", "straight-through gradient")


def test_low_rank_multivariate_normal():
    loc, W, diag = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4, 2)), RNG.uniform(0.5, 2, 4)
    pe = [ember.tensor(a, requires_grad=True) for a in (loc, W, diag)]
    pt = [torch.tensor(a, requires_grad=True) for a in (loc, W, diag)]
    de, dt = D.LowRankMultivariateNormal(*pe), T.LowRankMultivariateNormal(*pt)
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        close(getattr(de, prop), getattr(dt, prop), "float64", prop)
    ember.manual_seed(6)
    y = de.rsample((2,))
    ember.manual_seed(6)
    eps_w, eps_d = ember.randn(2, 3, 2, dtype=ember.float64), ember.randn(2, 3, 4, dtype=ember.float64)
    yt = pt[0] + (pt[1] @ torch.tensor(eps_w.numpy()).unsqueeze(-1)).squeeze(-1) + pt[2].sqrt() * torch.tensor(
        eps_d.numpy())
    close(y, yt, "float64", "rsample")
    g = RNG.standard_normal((2, 3, 4))
    for a, b in zip(ember.autograd.grad(y, pe, ember.tensor(g)), torch.autograd.grad(yt, pt, torch.tensor(g))):
        close(a, b, "float64", "rsample gradient")
    x = D.LowRankMultivariateNormal(ember.tensor(loc[0]), ember.tensor(W[0]), ember.tensor(diag)).sample((N,))
    cov = W[0] @ W[0].T + np.diag(diag)
    np.testing.assert_allclose(np.cov(x.numpy().T), cov, atol=5 * cov.max() * 2 / np.sqrt(N))
