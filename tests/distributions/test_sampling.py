"""Sampling: shapes and dtypes of sample/rsample, reproducibility under ember.manual_seed, sample statistics of
20000 draws against the true moments, reparameterization (rsample is a differentiable function of ember's standard
draws) and the implicit reparameterization gradients of Gamma and Beta against torch's."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from .cases import CASES, BY_NAME, RNG, build, close

SHAPES = [(), (5,), (2, 3)]
N = 20000


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_sample_shapes_and_dtypes(case):
    de, _ = build(case, ember, "float32")
    dt, _ = build(case, torch, "float32")
    for shape in SHAPES:
        se, st = de.sample(shape), dt.sample(shape)
        assert tuple(se.shape) == tuple(st.shape) == shape + tuple(dt.batch_shape) + tuple(dt.event_shape)
        assert se.dtype.name == str(st.dtype)[6:]
        assert not se.requires_grad
        assert de.sample(ember.Size(shape)).shape == se.shape
        if de.has_rsample:
            re = de.rsample(shape)
            assert re.shape == se.shape and re.dtype == se.dtype and re.requires_grad
    try:
        dt.rsample()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            de.rsample()


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_seeded_sampling_is_reproducible(case):
    d, _ = build(case, ember, "float32")
    ember.manual_seed(123)
    a = d.sample((4,))
    ember.manual_seed(123)
    b = d.sample((4,))
    ember.manual_seed(124)
    c = d.sample((4,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    if not case.name.startswith(("Bernoulli", "Categorical", "OneHot", "Binomial", "Poisson", "NegativeBinomial")):
        assert not np.array_equal(a.numpy(), c.numpy())


@pytest.mark.parametrize("case", [c for c in CASES if c.moments and c.name not in ("Categorical_logits", "Cauchy")],
                         ids=repr)
def test_sample_moments(case):
    """The mean and variance of N draws lie within 5 standard errors of the distribution's."""
    d, _ = build(case, ember, "float64")
    ember.manual_seed(0)
    x = d.sample((N,)).double().numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    if case.name.startswith("Categorical"):  # no mean: compare the frequencies of each category
        freq = (x[..., None] == np.arange(case.params[0].shape[-1])).mean(0)
        p = d.probs.detach().numpy()
        np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / N) + 1e-12)
        return
    m, v = x.mean(0), x.var(0)
    np.testing.assert_array_less(np.abs(m - mean), 5 * np.sqrt(var / N) + 1e-12)
    m4 = ((x - m) ** 4).mean(0)  # the variance's standard error, plus the second-order term (m - mean) ** 2
    np.testing.assert_array_less(np.abs(v - var), 5 * np.sqrt(np.maximum(m4 - v ** 2, 0) / N) + 25 * var / N + 1e-12)


def test_multivariate_normal_sample_covariance():
    loc, cov = RNG.standard_normal(3), np.array([[2.0, 0.6, -0.4], [0.6, 1.0, 0.2], [-0.4, 0.2, 0.5]])
    for kw in ({"covariance_matrix": cov}, {"precision_matrix": np.linalg.inv(cov)},
               {"scale_tril": np.linalg.cholesky(cov)}):
        d = D.MultivariateNormal(ember.tensor(loc), **{k: ember.tensor(v) for k, v in kw.items()})
        ember.manual_seed(1)
        x = d.sample((N,)).numpy()
        np.testing.assert_allclose(np.cov(x.T), cov, atol=5 * 2.0 / np.sqrt(N))
        np.testing.assert_array_less(np.abs(x.mean(0) - loc), 5 * np.sqrt(np.diag(cov) / N))


@pytest.mark.parametrize("alpha", [0.05, 0.5, 1.0, 4.0, 200.0])
def test_gamma_sample_distribution(alpha):
    """Gamma draws for small and large shapes: moments and the probability of falling below the median."""
    d = D.Gamma(ember.full((N,), alpha, dtype=ember.float64), 2.0)
    ember.manual_seed(2)
    x = d.sample()
    assert (x > 0).all()
    below = (d.cdf(x) < 0.5).double().mean().item()  # the probability integral transform is uniform
    assert abs(below - 0.5) < 5 * 0.5 / np.sqrt(N)
    assert abs(x.mean().item() - alpha / 2) < 5 * np.sqrt(alpha / 4 / N)


@pytest.mark.parametrize("n,p", [(1, 0.3), (7, 0.5), (40, 0.05), (1000, 0.9), (0, 0.4)])
def test_binomial_sample_distribution(n, p):
    d = D.Binomial(n, ember.full((N,), p, dtype=ember.float64))
    ember.manual_seed(3)
    x = d.sample().numpy()
    assert ((x >= 0) & (x <= n) & (x == np.round(x))).all()
    freq = np.bincount(x.astype(np.int64), minlength=n + 1) / N
    pmf = torch.distributions.Binomial(n, torch.tensor(p, dtype=torch.float64)).log_prob(
        torch.arange(n + 1.0, dtype=torch.float64)).exp().numpy()
    np.testing.assert_array_less(np.abs(freq - pmf), 5 * np.sqrt(pmf * (1 - pmf) / N) + 1e-9)


# -- reparameterization ------------------------------------------------------------------------------------------------
def _draws(kind, shape, dtype):
    """The standard draws ember's rsample consumes, redrawn after reseeding."""
    if kind == "randn":
        return ember.randn(shape, dtype=dtype)
    if kind == "rand":
        return ember.rand(shape, dtype=dtype)
    if kind == "exponential":
        return ember.empty(shape, dtype=dtype).exponential_()
    return ember.empty(shape, dtype=dtype).uniform_(ember.finfo(dtype).eps - 1, 1)


T = torch.distributions


def _tiny_to_1(u):
    """Uniform draws mapped onto ``[tiny, 1 - eps)``, as Gumbel's base distribution."""
    info = torch.finfo(u.dtype)
    return info.tiny + u * (1 - info.eps - info.tiny)


def _logit_relaxed(u, t, p):
    u, p = T.utils.clamp_probs(u), T.utils.clamp_probs(p)
    return (u.log() - (-u).log1p() + p.log() - (-p).log1p()) / t


def _exp_relaxed(u, t, logits):
    scores = (logits - T.utils.clamp_probs(u).log().neg().log()) / t
    return scores - scores.logsumexp(-1, keepdim=True)


REPARAM = [  # case, the standard draws, rsample as a torch function of them and the parameters
    ("Normal", "randn", lambda eps, loc, scale: loc + scale * eps),
    ("LogNormal", "randn", lambda eps, loc, scale: (loc + scale * eps).exp()),
    ("Uniform", "rand", lambda u, low, high: low + u * (high - low)),
    ("Exponential", "exponential", lambda e, rate: e / rate),
    ("Laplace", "uniform", lambda u, loc, scale: loc - scale * u.sign() * torch.log1p(-u.abs())),
    ("MultivariateNormal_cov", "randn",
     lambda eps, loc, cov: loc + (torch.linalg.cholesky(cov) @ eps.unsqueeze(-1)).squeeze(-1)),
    ("MultivariateNormal_tril", "randn", lambda eps, loc, L: loc + (L @ eps.unsqueeze(-1)).squeeze(-1)),
    ("Independent", "randn", lambda eps, loc, scale: loc + scale * eps),
    ("Gumbel", "rand", lambda u, loc, scale: loc - scale * _tiny_to_1(u).log().neg().log()),
    ("Weibull", "exponential", lambda e, scale, c: scale * e ** (1 / c)),
    ("Pareto", "exponential", lambda e, scale, alpha: scale * (e / alpha).exp()),
    ("HalfCauchy", "rand", lambda u, scale: (scale * (torch.pi * (u - 0.5)).tan()).abs()),
    ("Kumaraswamy", "rand", lambda u, a, b: (1 - u ** (1 / b)) ** (1 / a)),
    ("LogisticNormal", "randn", lambda eps, loc, scale: T.transforms.StickBreakingTransform()(loc + scale * eps)),
    ("ContinuousBernoulli_probs", "rand", lambda u, p: T.ContinuousBernoulli(probs=p).icdf(u)),
    ("LogitRelaxedBernoulli", "rand", lambda u, t, p: _logit_relaxed(u, t, p)),
    ("RelaxedBernoulli_logits", "rand",
     lambda u, t, lg: T.transforms.SigmoidTransform()(_logit_relaxed(u, t, lg.sigmoid()))),
    ("ExpRelaxedCategorical", "rand", lambda u, t, p: _exp_relaxed(u, t, (p / p.sum(-1, keepdim=True)).log())),
    ("RelaxedOneHotCategorical", "rand", lambda u, t, lg: _exp_relaxed(u, t, lg.log_softmax(-1)).exp()),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kind,fn", REPARAM, ids=[r[0] for r in REPARAM])
def test_rsample_reparameterization(name, kind, fn, dtype):
    case = BY_NAME[name]
    de, pe = build(case, ember, dtype)
    _, pt = build(case, torch, dtype)
    shape = (3,) + tuple(de.batch_shape) + tuple(de.event_shape)
    base = getattr(de, "base_dist", de)  # (a transformed distribution draws in its base's shape)
    ember.manual_seed(7)
    ye = de.rsample((3,))
    ember.manual_seed(7)
    eps = _draws(kind, (3,) + tuple(base.batch_shape) + tuple(base.event_shape), getattr(ember, dtype))
    yt = fn(torch.tensor(eps.numpy()), *pt)
    close(ye, yt, dtype, "rsample")
    g = RNG.standard_normal(shape)
    ge = ember.autograd.grad(ye, pe, ember.tensor(g, dtype=ye.dtype))
    gt = torch.autograd.grad(yt, pt, torch.tensor(g, dtype=yt.dtype))
    for a, b in zip(ge, gt):
        close(a, b, dtype, "rsample gradient", scale=10)


def test_gamma_rsample_gradient_matches_torch():
    """d sample / d concentration is torch's implicit gradient at the same sample (ember's finite differences of
    the incomplete gamma function are more accurate than torch's approximation: to ~1e-8 against ~1e-3)."""
    c = ember.tensor(RNG.uniform(0.05, 20, (4, 5)), requires_grad=True)
    r = ember.tensor(RNG.uniform(0.5, 3, 5), requires_grad=True)
    ember.manual_seed(0)
    x = D.Gamma(c, r).rsample((3,))
    gc, gr = ember.autograd.grad(x.sum(), [c, r])
    ct, rt = torch.tensor(c.detach().numpy()), torch.tensor(r.detach().numpy())
    z = torch.tensor(x.detach().numpy()) * rt  # the standard gamma draws
    np.testing.assert_allclose(gc.numpy(), (torch._standard_gamma_grad(ct.expand(z.shape), z) / rt).sum(0).numpy(),
                               rtol=2e-3)
    np.testing.assert_allclose(gr.numpy(), (-z / rt ** 2).sum((0, 1)).numpy(), rtol=1e-10)


def test_beta_rsample_gradient_matches_torch():
    a = ember.tensor(RNG.uniform(0.2, 10, (4, 5)), requires_grad=True)
    b = ember.tensor(RNG.uniform(0.2, 10, (4, 5)), requires_grad=True)
    ember.manual_seed(0)
    x = D.Beta(a, b).rsample()
    assert ((x > 0) & (x < 1)).all()
    ga, gb = ember.autograd.grad(x.sum(), [a, b])
    # torch's Dirichlet backward for Beta = Dirichlet([a, b]).rsample()[..., 0]
    xt = torch.tensor(x.detach().numpy())
    conc = torch.stack([torch.tensor(a.detach().numpy()), torch.tensor(b.detach().numpy())], -1)
    g = torch._dirichlet_grad(torch.stack([xt, 1 - xt], -1), conc, conc.sum(-1, True).expand_as(conc))
    np.testing.assert_allclose(ga.numpy(), (g[..., 0] * (1 - xt)).numpy(), rtol=2e-3)
    np.testing.assert_allclose(gb.numpy(), (-g[..., 1] * xt).numpy(), rtol=2e-3)


def test_rsample_gradient_of_a_loss():
    """A Monte-Carlo objective trains through rsample: E[(x - 3)^2] under Normal(loc, 1) pulls loc towards 3."""
    loc = ember.zeros(1, requires_grad=True)
    opt = ember.optim.SGD([loc], lr=0.1)
    ember.manual_seed(0)
    for _ in range(50):
        opt.zero_grad()
        ((D.Normal(loc, 1.0).rsample((64,)) - 3) ** 2).mean().backward()
        opt.step()
    assert abs(loc.item() - 3) < 0.2


def test_dirichlet_rsample_gradient_is_unbiased():
    """The mean over draws of d x / d concentration approaches the derivative of the mean ``c / c.sum()``."""
    c = ember.tensor([0.4, 1.5, 3.0], dtype=ember.float64, requires_grad=True)
    w = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64)
    ember.manual_seed(0)
    x = D.Dirichlet(c).rsample((N,))
    assert ((x > 0) & (x < 1)).all() and np.allclose(x.sum(-1).detach().numpy(), 1)
    per_draw = (x * w).sum(-1)
    (g,) = ember.autograd.grad(per_draw.mean(), [c])
    ct = torch.tensor([0.4, 1.5, 3.0], dtype=torch.float64, requires_grad=True)
    (gt,) = torch.autograd.grad((torch.distributions.Dirichlet(ct).mean * torch.tensor(w.numpy())).sum(), [ct])
    np.testing.assert_allclose(g.numpy(), gt.numpy(), atol=0.02)


def test_cauchy_sample_quartiles():
    """Cauchy draws have no moments: their quartiles are loc -+ scale."""
    d = D.Cauchy(ember.tensor([0.5, -2.0], dtype=ember.float64), ember.tensor([1.0, 3.0], dtype=ember.float64))
    ember.manual_seed(0)
    x = d.sample((N,)).numpy()
    q = np.quantile(x, [0.25, 0.5, 0.75], axis=0)
    se = 5 * np.array([1.0, 3.0]) * np.pi * np.sqrt(0.25 * 0.75 / N) * 2  # ~ quantile standard errors
    np.testing.assert_array_less(np.abs(q - np.array([[-0.5, -5.0], [0.5, -2.0], [1.5, 1.0]])), np.broadcast_to(se, (3, 2)))
