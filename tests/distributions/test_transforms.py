"""Transforms (values, inverses, log-Jacobians, domains, shapes, caching, equality, repr) and
TransformedDistribution (shapes, sample/rsample, log_prob, cdf/icdf and their gradients) against torch's."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from ember.distributions import transforms as TE
from .cases import RNG, close, grads_close, to_lib

TT = torch.distributions.transforms
T = torch.distributions

_LOC, _SCALE, _SCALE_SIGNED, _EXPONENT = (RNG.standard_normal(4), RNG.uniform(0.5, 2, 4), RNG.uniform(-2, 2, 4),
                                         RNG.uniform(0.5, 2.5, 4))
# name: (build(T, L), input x of the forward map)
TRANSFORMS = {
    "Exp": (lambda M, L: M.ExpTransform(), RNG.standard_normal((3, 4))),
    "Affine_number": (lambda M, L: M.AffineTransform(1.5, -2.0), RNG.standard_normal((3, 4))),
    "Affine_tensor": (lambda M, L: M.AffineTransform(L.tensor(_LOC), L.tensor(_SCALE)), RNG.standard_normal((3, 4))),
    "Affine_event": (lambda M, L: M.AffineTransform(0.5, L.tensor(_SCALE_SIGNED), event_dim=1),
                     RNG.standard_normal((3, 4))),
    "Sigmoid": (lambda M, L: M.SigmoidTransform(), RNG.standard_normal((3, 4)) * 3),
    "Tanh": (lambda M, L: M.TanhTransform(), RNG.standard_normal((3, 4))),
    "Power": (lambda M, L: M.PowerTransform(L.tensor(_EXPONENT)), RNG.uniform(0.2, 3, (3, 4))),
    "Softmax": (lambda M, L: M.SoftmaxTransform(), RNG.standard_normal((3, 4))),
    "Compose": (lambda M, L: M.ComposeTransform([M.AffineTransform(0.3, 2.0), M.TanhTransform(),
                                                 M.AffineTransform(1.0, 0.5)]), RNG.standard_normal((3, 4))),
    "Compose_event": (lambda M, L: M.ComposeTransform([M.ExpTransform(),
                                                       M.AffineTransform(0.0, L.tensor([1.0, -2.0, 3.0, 0.5]),
                                                                         event_dim=1)]), RNG.standard_normal((3, 4))),
    "Inverse_sigmoid": (lambda M, L: M.SigmoidTransform().inv, RNG.uniform(0.05, 0.95, (3, 4))),
}


def _msg(s):
    return str(s).replace("torch.", "ember.")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_values(name, dtype):
    make, x = TRANSFORMS[name]
    te, tt = make(TE, ember), make(TT, torch)
    xe, xt = to_lib(x, ember, dtype, True), to_lib(x, torch, dtype, True)
    ye, yt = te(xe), tt(xt)
    close(ye, yt, dtype, "forward")
    grads_close(ye, yt, [xe], [xt], dtype, "forward")
    close(te.inv(ye.detach()), tt.inv(yt.detach()), dtype, "inverse", scale=10)
    assert te.bijective == tt.bijective
    assert repr(te.domain) == _msg(repr(tt.domain)) and repr(te.codomain) == _msg(repr(tt.codomain))
    assert te.domain.event_dim == tt.domain.event_dim and te.codomain.event_dim == tt.codomain.event_dim
    assert repr(te) == _msg(repr(tt))
    assert tuple(te.forward_shape(ember.Size((2, 3, 4)))) == tuple(tt.forward_shape(torch.Size((2, 3, 4))))
    assert tuple(te.inverse_shape(ember.Size((2, 3, 4)))) == tuple(tt.inverse_shape(torch.Size((2, 3, 4))))
    if name == "Softmax":
        with pytest.raises(NotImplementedError):
            te.log_abs_det_jacobian(xe, ye)
        return
    le, lt = te.log_abs_det_jacobian(xe, te(xe)), tt.log_abs_det_jacobian(xt, tt(xt))  # (a fresh graph)
    close(le, lt, dtype, "log_abs_det_jacobian")
    assert le.requires_grad == lt.requires_grad
    if lt.requires_grad:
        grads_close(le, lt, [xe], [xt], dtype, "log_abs_det_jacobian")
    se, st = te.sign, tt.sign
    close(ember.as_tensor(se), torch.as_tensor(st), dtype, "sign")


def test_log_abs_det_jacobian_matches_autograd():
    for t in (TE.ExpTransform(), TE.SigmoidTransform(), TE.TanhTransform(), TE.AffineTransform(1.0, -3.0),
              TE.PowerTransform(2.5), TE.ComposeTransform([TE.TanhTransform(), TE.AffineTransform(0.0, 2.0)])):
        x = ember.tensor(RNG.uniform(0.1, 2, 5), dtype=ember.float64, requires_grad=True)
        y = t(x)
        (dy,) = ember.autograd.grad(y.sum(), [x])
        np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).detach().numpy(), np.log(np.abs(dy.numpy())),
                                   rtol=1e-10, err_msg=repr(t))


def test_inverse_and_equality():
    t = TE.ExpTransform()
    assert t.inv.inv is t and t.inv is t.inv
    assert t.inv.domain is t.codomain and t.inv.sign == 1
    assert TE.ExpTransform() == TE.ExpTransform() and TE.ExpTransform() != TE.SigmoidTransform()
    assert TE.AffineTransform(1.0, 2.0) == TE.AffineTransform(1.0, 2.0) != TE.AffineTransform(1.0, 3.0)
    assert TE.PowerTransform(2.0) == TE.PowerTransform(2.0) != TE.PowerTransform(3.0)
    assert TE.ExpTransform().inv == TE.ExpTransform().inv
    assert TE.ComposeTransform([TE.ExpTransform()]) == TE.ComposeTransform([TE.ExpTransform()])
    assert TE.AffineTransform(0.0, -2.0).sign == -1
    assert TE.identity_transform(ember.tensor(2.0)).item() == 2.0
    c = TE.ComposeTransform([TE.ExpTransform(), TE.AffineTransform(1.0, 2.0)])
    x = ember.tensor([0.5, -1.0])
    np.testing.assert_allclose(c.inv(c(x)).numpy(), x.numpy(), rtol=1e-6)
    assert TE.ExpTransform().event_dim == 0 and TE.AffineTransform(0.0, 1.0, event_dim=2).event_dim == 2
    with pytest.raises(ValueError):
        TE.ExpTransform(cache_size=2)


def test_caching():
    for cache in (0, 1):
        t = TE.ExpTransform(cache_size=cache)
        x = ember.tensor([0.5, 1.0])
        y = t(x)
        assert (t.inv(y) is x) == bool(cache) and (t(x) is y) == bool(cache)
        u = TE.ExpTransform().with_cache(cache)
        assert u._cache_size == cache
    t = TE.TanhTransform().with_cache(1)
    x = ember.tensor([30.0])  # tanh saturates: only the cache recovers x
    assert t.inv(t(x)) is x
    c = TE.ComposeTransform([TE.AffineTransform(0.0, 2.0), TE.ExpTransform()], cache_size=1)
    assert all(p._cache_size == 1 for p in c.parts)
    x = ember.tensor([0.1, 0.2])
    assert c.inv(c(x)) is x


# -- TransformedDistribution ---------------------------------------------------------------------------------------
DISTS = {
    "Normal-Sigmoid-Affine": (lambda M, loc, scale: M.TransformedDistribution(
        M.Normal(loc, scale), [M.transforms.SigmoidTransform(), M.transforms.AffineTransform(-1.0, 3.0)]),
        [RNG.standard_normal((3, 4)), RNG.uniform(0.5, 2, 4)], RNG.uniform(-0.9, 1.9, (2, 1, 4)), True),
    "Normal-Tanh": (lambda M, loc, scale: M.TransformedDistribution(M.Normal(loc, scale), M.transforms.TanhTransform()),
                    [RNG.standard_normal((3, 4)), RNG.uniform(0.5, 2, 4)], RNG.uniform(-0.9, 0.9, (2, 1, 4)), True),
    "Uniform-negAffine": (lambda M, low, high: M.TransformedDistribution(
        M.Uniform(low, high), [M.transforms.AffineTransform(2.0, -0.5)]),
        [RNG.uniform(-2, -1, (3, 4)), RNG.uniform(1, 2, 4)], RNG.uniform(1.6, 2.4, (2, 1, 4)), True),
    "Gamma-Power": (lambda M, c, r: M.TransformedDistribution(M.Gamma(c, r), [M.transforms.PowerTransform(0.5)]),
                    [RNG.uniform(0.5, 3, (3, 4)), RNG.uniform(0.5, 3, 4)], RNG.uniform(0.2, 2, (2, 1, 4)), False),
    "Normal-Affine_event": (lambda M, loc, scale: M.TransformedDistribution(
        M.Normal(loc, 1.0), [M.transforms.AffineTransform(0.0, scale, event_dim=1)]),
        [RNG.standard_normal((3, 4)), RNG.uniform(-2, 2, 4)], RNG.standard_normal((2, 1, 4)), False),
    "Independent-Exp": (lambda M, loc, scale: M.TransformedDistribution(
        M.Independent(M.Normal(loc, scale), 1), [M.transforms.ExpTransform()]),
        [RNG.standard_normal((3, 4)), RNG.uniform(0.5, 2, 4)], RNG.uniform(0.2, 3, (2, 1, 4)), False),
}


def _build(name, lib, dtype):
    make, params, _, _ = DISTS[name]
    ps = [to_lib(p, lib, dtype, True) for p in params]
    return make(D if lib is ember else T, *ps), ps


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", DISTS)
def test_transformed_distribution(name, dtype):
    de, pe = _build(name, ember, dtype)
    dt, pt = _build(name, torch, dtype)
    _, _, value, has_cdf = DISTS[name]
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) and tuple(de.event_shape) == tuple(dt.event_shape)
    assert de.has_rsample == dt.has_rsample
    assert repr(de.support) == _msg(repr(dt.support)) and repr(de) == _msg(repr(dt))
    ye = de.log_prob(to_lib(value, ember, dtype))
    yt = dt.log_prob(to_lib(value, torch, dtype))
    close(ye, yt, dtype, "log_prob")
    grads_close(ye, yt, pe, pt, dtype, "log_prob")
    for shape in ((), (5,)):
        se, st = de.sample(shape), dt.sample(shape)
        assert tuple(se.shape) == tuple(st.shape) and not se.requires_grad
        assert ember.isfinite(de.log_prob(se)).all()
    assert de.rsample((2,)).requires_grad
    ee, et = de.expand((2,) + tuple(de.batch_shape)), dt.expand((2,) + tuple(dt.batch_shape))
    assert tuple(ee.batch_shape) == tuple(et.batch_shape) and type(ee) is D.TransformedDistribution
    close(ee.log_prob(to_lib(value, ember, dtype)), et.log_prob(to_lib(value, torch, dtype)), dtype, "expanded")
    if has_cdf:
        ve, vt = to_lib(value, ember, dtype, True), to_lib(value, torch, dtype, True)
        ce, ct = de.cdf(ve), dt.cdf(vt)
        close(ce, ct, dtype, "cdf")
        grads_close(ce, ct, pe + [ve], pt + [vt], dtype, "cdf")
        q = RNG.uniform(0.05, 0.95, (2, 1, 4))
        ie, it = de.icdf(to_lib(q, ember, dtype)), dt.icdf(to_lib(q, torch, dtype))
        close(ie, it, dtype, "icdf", scale=10)
        grads_close(ie, it, pe, pt, dtype, "icdf", scale=100)


def test_transformed_distribution_sample_moments():
    d = D.TransformedDistribution(D.Normal(ember.tensor([0.5, -1.0], dtype=ember.float64), 0.3),
                                  [TE.AffineTransform(2.0, 3.0)])
    ember.manual_seed(0)
    x = d.sample((20000,)).numpy()
    np.testing.assert_allclose(x.mean(0), [3.5, -1.0], atol=5 * 0.9 / np.sqrt(20000))
    np.testing.assert_allclose(x.std(0), [0.9, 0.9], rtol=0.03)


def test_transformed_distribution_errors_and_validation():
    with pytest.raises(ValueError):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [TE.ExpTransform(), "exp"])
    with pytest.raises(ValueError):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    with pytest.raises(ValueError, match="base_distribution needs to have shape with size at least 1"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [TE.SoftmaxTransform()])
    d = D.TransformedDistribution(D.Normal(ember.zeros(2), 1.0), [TE.ExpTransform()])
    with pytest.raises(ValueError):
        d.log_prob(ember.tensor([-1.0, 1.0]))
    s = D.TransformedDistribution(D.Normal(ember.zeros(2, 3), 1.0), [TE.SoftmaxTransform()])
    assert s.batch_shape == (2,) and s.event_shape == (3,) and repr(s.support) == "Simplex()"
    np.testing.assert_allclose(s.sample().sum(-1).numpy(), 1, rtol=1e-6)


def test_lognormal_is_a_transformed_normal():
    d = D.LogNormal(ember.zeros(2), 1.0)
    assert isinstance(d, D.TransformedDistribution) and isinstance(d.base_dist, D.Normal)
    assert d.transforms == [TE.ExpTransform()]
    e = d.expand((3, 2))
    assert type(e) is D.LogNormal and e.loc.shape == (3, 2)
