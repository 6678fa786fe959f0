"""StudentT, HalfNormal (with AbsTransform), Multinomial and MixtureSameFamily beyond the shared cases: moments at
small degrees of freedom, reparameterized samples and their gradients, the transform, and their own edge cases."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from ember.distributions import transforms as TE
from .cases import RNG, close, grads_close

T = torch.distributions


# -- StudentT ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_studentt_moments_at_small_df(dtype):
    df = [0.5, 1.0, 1.5, 2.0, 2.5, 30.0]
    e = D.StudentT(ember.tensor(df, dtype=getattr(ember, dtype)), 1.5, 2.0)
    t = T.StudentT(torch.tensor(df, dtype=getattr(torch, dtype)), 1.5, 2.0)
    for prop in ("mean", "variance", "stddev", "mode"):
        close(getattr(e, prop), getattr(t, prop), dtype, prop)


def test_studentt_rsample_gradients():
    """rsample is ``loc + scale * X / sqrt(Z / df)``: its derivatives in loc and scale are 1 and the standardized
    draw; the derivative in df is finite and the draws follow the distribution (their cdf below the median)."""
    df = ember.tensor(RNG.uniform(1, 8, (4,)), requires_grad=True)
    loc = ember.tensor(RNG.standard_normal(4), requires_grad=True)
    scale = ember.tensor(RNG.uniform(0.5, 2, 4), requires_grad=True)
    ember.manual_seed(0)
    x = D.StudentT(df, loc, scale).rsample((5,))
    assert x.shape == (5, 4) and x.requires_grad
    gdf, gloc, gscale = ember.autograd.grad(x.sum(), [df, loc, scale])
    np.testing.assert_allclose(gloc.numpy(), 5.0)
    y = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(gscale.numpy(), y.sum(0).numpy(), rtol=1e-5)
    assert np.isfinite(gdf.numpy()).all()


def test_studentt_sample_quantiles():
    d = D.StudentT(ember.tensor([1.0, 3.0], dtype=ember.float64), ember.tensor([0.5, -1.0], dtype=ember.float64),
                   2.0)
    ember.manual_seed(1)
    x = torch.tensor(d.sample((20000,)).numpy())
    t = T.StudentT(torch.tensor([1.0, 3.0], dtype=torch.float64), torch.tensor([0.5, -1.0], dtype=torch.float64), 2.0)
    # ember's quartiles against those of 200000 of torch's draws
    q = np.quantile(x.numpy(), [0.25, 0.5, 0.75], axis=0)
    tq = np.quantile(t.sample((200000,)).numpy(), [0.25, 0.5, 0.75], axis=0)
    np.testing.assert_allclose(q, tq, atol=0.1)


def test_studentt_expand_keeps_chi2():
    d = D.StudentT(ember.tensor([3.0, 4.0]))
    e = d.expand((3, 2))
    assert e._chi2.batch_shape == (3, 2) and e.rsample().shape == (3, 2)


# -- AbsTransform and HalfNormal ---------------------------------------------------------------------------------------
def test_abs_transform():
    te, tt = TE.AbsTransform(), T.transforms.AbsTransform()
    x = RNG.standard_normal((3, 4))
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = te(xe), tt(xt)
    close(ye, yt, "float64", "forward")
    grads_close(ye, yt, [xe], [xt], "float64", "forward")
    close(te.inv(ye), tt.inv(yt), "float64", "inverse")
    assert te.bijective == tt.bijective is False
    assert repr(te) == repr(tt) == "AbsTransform()"
    assert repr(te.domain) == repr(tt.domain) and repr(te.codomain) == repr(tt.codomain)
    assert TE.AbsTransform() == TE.AbsTransform() != TE.ExpTransform()
    c = TE.AbsTransform(cache_size=1)
    y = c(xe)
    assert c.inv(y) is xe
    with pytest.raises(NotImplementedError):
        te.log_abs_det_jacobian(xe, ye)
    with pytest.raises(NotImplementedError):
        tt.log_abs_det_jacobian(xt, yt)


def test_halfnormal_is_a_transformed_normal():
    d = D.HalfNormal(ember.ones(2))
    assert isinstance(d, D.TransformedDistribution) and isinstance(d.base_dist, D.Normal)
    assert d.transforms == [TE.AbsTransform()]
    e = d.expand((3, 2))
    assert type(e) is D.HalfNormal and e.scale.shape == (3, 2)
    assert (d.sample((100,)) >= 0).all()


def test_halfnormal_log_prob_below_zero_without_validation():
    d = D.HalfNormal(ember.ones(2), validate_args=False)
    t = T.HalfNormal(torch.ones(2), validate_args=False)
    close(d.log_prob(ember.tensor([-1.0, 0.5])), t.log_prob(torch.tensor([-1.0, 0.5])), "float32", "log_prob")


def test_halfnormal_rsample_is_abs_of_normal():
    scale = ember.tensor([0.5, 2.0], requires_grad=True)
    ember.manual_seed(3)
    x = D.HalfNormal(scale).rsample((4,))
    ember.manual_seed(3)
    eps = ember.randn(4, 2)
    np.testing.assert_allclose(x.detach().numpy(), (eps * scale.detach()).abs().numpy(), rtol=1e-6)
    (g,) = ember.autograd.grad(x.sum(), [scale])
    np.testing.assert_allclose(g.numpy(), eps.abs().sum(0).numpy(), rtol=1e-5)


# -- Multinomial -------------------------------------------------------------------------------------------------------
def test_multinomial_samples_count_total():
    p = RNG.uniform(0.1, 2, (2, 3, 4))
    d = D.Multinomial(9, probs=ember.tensor(p))
    ember.manual_seed(0)
    x = d.sample((5,))
    assert x.shape == (5, 2, 3, 4) and x.dtype is ember.float64
    assert (x.sum(-1) == 9).all() and (x >= 0).all()
    assert ember.isfinite(d.log_prob(x)).all()
    z = D.Multinomial(0, probs=ember.tensor(p)).sample((3,))
    assert z.shape == (3, 2, 3, 4) and (z == 0).all()
    assert not d.has_rsample and not d.has_enumerate_support


def test_multinomial_zero_probabilities():
    # a zero probability with a zero count contributes nothing; with a positive count the log-probability is -inf
    p = [0.0, 0.3, 0.7]
    e, t = D.Multinomial(4, ember.tensor(p)), T.Multinomial(4, torch.tensor(p))
    v = [[0.0, 1.0, 3.0], [1.0, 1.0, 2.0]]
    close(e.log_prob(ember.tensor(v)), t.log_prob(torch.tensor(v)), "float32", "log_prob")
    close(e.entropy(), t.entropy(), "float32", "entropy")
    ember.manual_seed(0)
    assert (e.sample((50,))[:, 0] == 0).all()


def test_multinomial_log_prob_against_binomial():
    """With two categories the multinomial is the binomial of the first count."""
    p = ember.tensor(RNG.uniform(0.1, 0.9, 4), dtype=ember.float64)
    k = ember.tensor([0.0, 3.0, 5.0, 8.0], dtype=ember.float64)
    m = D.Multinomial(8, ember.stack([p, 1 - p], -1)).log_prob(ember.stack([k, 8 - k], -1))
    np.testing.assert_allclose(m.numpy(), D.Binomial(8, p).log_prob(k).numpy(), rtol=1e-10)


# -- MixtureSameFamily -------------------------------------------------------------------------------------------------
def _mixtures(M, L, w, loc, scale):
    return M.MixtureSameFamily(M.Categorical(probs=w), M.Independent(M.Normal(loc, scale), 1))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mixture_broadcasts_mixture_weights(dtype):
    """Mixture weights of batch shape () against components of batch shape (3, k), with vector events
    (Independent): values, moments and gradients as torch's."""
    arrays = [RNG.uniform(0.2, 2, 4), RNG.standard_normal((3, 4, 2)), RNG.uniform(0.5, 2, 2)]
    pe = [ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True) for a in arrays]
    pt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    de, dt = _mixtures(D, ember, *pe), _mixtures(T, torch, *pt)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) == (3,) and tuple(de.event_shape) == (2,)
    x = RNG.standard_normal((5, 1, 2))
    ye = de.log_prob(ember.tensor(x, dtype=getattr(ember, dtype)))
    yt = dt.log_prob(torch.tensor(x, dtype=getattr(torch, dtype)))
    close(ye, yt, dtype, "log_prob")
    grads_close(ye, yt, pe, pt, dtype, "log_prob")
    close(de.mean, dt.mean, dtype, "mean")
    de, dt = _mixtures(D, ember, *pe), _mixtures(T, torch, *pt)  # (a fresh graph)
    close(de.variance, dt.variance, dtype, "variance")
    grads_close(de.variance, dt.variance, pe, pt, dtype, "variance")
    assert repr(de.support) == repr(dt.support).replace("torch.", "ember.")
    assert de.support.event_dim == dt.support.event_dim == 1


def test_mixture_sample_picks_components():
    """Well separated components: every draw lies near one component mean, at the mixture's frequencies."""
    w = ember.tensor([0.2, 0.5, 0.3], dtype=ember.float64)
    d = D.MixtureSameFamily(D.Categorical(w), D.Normal(ember.tensor([-10.0, 0.0, 10.0], dtype=ember.float64), 0.1))
    ember.manual_seed(0)
    x = d.sample((20000,)).numpy()
    near = np.abs(x[:, None] - np.array([-10.0, 0.0, 10.0])) < 1
    assert near.sum(1).tolist() == [1] * len(x)
    np.testing.assert_allclose(near.mean(0), [0.2, 0.5, 0.3], atol=5 * np.sqrt(0.25 / 20000))
    assert not d.has_rsample
    with pytest.raises(NotImplementedError):
        d.rsample()


def test_mixture_with_unbroadcast_mixture_cannot_sample_like_torch():
    # as torch's, sampling needs the mixture's batch shape to equal the components' (log_prob broadcasts)
    make = lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(2)), M.Normal(L.zeros(3, 2), 1.0))  # noqa: E731
    with pytest.raises(RuntimeError):
        make(T, torch).sample()
    with pytest.raises(RuntimeError):
        make(D, ember).sample()
    assert make(D, ember).log_prob(ember.zeros(3)).shape == (3,)


def test_mixture_expand():
    d = D.MixtureSameFamily(D.Categorical(ember.ones(2, 3)), D.Normal(ember.zeros(2, 3), 1.0))
    e = d.expand((4, 2))
    assert type(e) is D.MixtureSameFamily and e.batch_shape == (4, 2)
    assert e.component_distribution.batch_shape == (4, 2, 3) and e.mixture_distribution.batch_shape == (4, 2)
    assert e.sample((5,)).shape == (5, 4, 2)
