"""biject_to / transform_to against torch's registries (the transform chosen for each constraint, its values,
inverse and log-Jacobian), registering new constraints, and the transforms they return that the other tests do
not cover: Softplus, StickBreaking, LowerCholesky, PositiveDefinite, CorrCholesky, Independent, Cat, Stack and
CumulativeDistribution."""
import numpy as np
import pytest
import torch

import ember
import ember.distributions as D
from ember.distributions import biject_to, constraints, transform_to
from ember.distributions import transforms as TE
from .cases import RNG, close, grads_close, to_lib

T = torch.distributions

# name: (constraint(C), input shape)
CONSTRAINTS = {
    "real": (lambda C: C.real, (3, 4)),
    "positive": (lambda C: C.positive, (3, 4)),
    "nonnegative": (lambda C: C.nonnegative, (3, 4)),
    "greater_than": (lambda C: C.greater_than(1.5), (3, 4)),
    "greater_than_eq": (lambda C: C.greater_than_eq(-2.0), (3, 4)),
    "less_than": (lambda C: C.less_than(3.0), (3, 4)),
    "unit_interval": (lambda C: C.unit_interval, (3, 4)),
    "interval": (lambda C: C.interval(-2.0, 5.0), (3, 4)),
    "half_open_interval": (lambda C: C.half_open_interval(0.0, 1.0), (3, 4)),
    "simplex": (lambda C: C.simplex, (3, 4)),
    "real_vector": (lambda C: C.real_vector, (3, 4)),
    "independent_positive": (lambda C: C.independent(C.positive, 1), (3, 4)),
    "lower_cholesky": (lambda C: C.lower_cholesky, (3, 4, 4)),
    "positive_definite": (lambda C: C.positive_definite, (3, 4, 4)),
    "positive_semidefinite": (lambda C: C.positive_semidefinite, (3, 4, 4)),
    "corr_cholesky": (lambda C: C.corr_cholesky, (3, 6)),
    "cat": (lambda C: C.cat([C.positive, C.real, C.interval(0.0, 2.0)], -1, [1, 2, 1]), (3, 4)),
    "stack": (lambda C: C.stack([C.positive, C.real, C.unit_interval], 0), (3, 4)),
}


def _msg(s):
    return str(s).replace("torch.", "ember.")


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", CONSTRAINTS)
def test_registry(name, registry):
    make, shape = CONSTRAINTS[name]
    ce, ct = make(constraints), make(T.constraints)
    re, rt = getattr(D, registry), getattr(T, registry)
    try:
        tt = rt(ct)
    except NotImplementedError as err:
        with pytest.raises(NotImplementedError) as ee:
            re(ce)
        assert str(ee.value) == str(err)
        return
    te = re(ce)
    assert repr(te) == _msg(repr(tt)) and type(te).__name__ == type(tt).__name__
    assert te.bijective == tt.bijective
    x = RNG.standard_normal(shape)
    xe, xt = to_lib(x, ember, "float64", True), to_lib(x, torch, "float64", True)
    ye, yt = te(xe), tt(xt)
    close(ye, yt, "float64", "forward")
    grads_close(ye, yt, [xe], [xt], "float64", "forward")
    assert ce.check(ye.detach()).all()
    close(te.inv(ye.detach()), tt.inv(yt.detach()), "float64", "inverse", scale=100)
    if tt.bijective:
        le, lt = te.log_abs_det_jacobian(xe, te(xe)), tt.log_abs_det_jacobian(xt, tt(xt))
        close(le, lt, "float64", "log_abs_det_jacobian")
        if lt.requires_grad:
            grads_close(le, lt, [xe], [xt], "float64", "log_abs_det_jacobian")
        close(te.inv(ye.detach()), x, "float64", "round trip", scale=100)


def test_registry_with_distribution_constraints():
    """The documented uses: optimizing an unconstrained parameter, and HMC-style potentials on the support."""
    u = ember.zeros(3, requires_grad=True)
    scale = transform_to(D.Normal.arg_constraints["scale"])(u)
    loss = -D.Normal(ember.zeros(3), scale).log_prob(ember.tensor([0.5, 1.0, 2.0])).sum()
    loss.backward()
    assert u.grad is not None and ember.isfinite(u.grad).all()
    d = D.Pareto(ember.tensor([2.0, 3.0]), ember.tensor([1.5, 2.5]))
    t = biject_to(d.support)
    y = t(ember.tensor([-1.0, 4.0]))
    assert (y >= d.scale).all() and ember.isfinite(d.log_prob(y)).all()


def test_register():
    class MyConstraint(constraints.Constraint):
        def check(self, value):
            return value > 2

    registry = D.constraint_registry.ConstraintRegistry()
    with pytest.raises(NotImplementedError, match="Cannot transform MyConstraint constraints"):
        registry(MyConstraint())

    @registry.register(MyConstraint)
    def _factory(constraint):
        return TE.ComposeTransform([TE.ExpTransform(), TE.AffineTransform(2.0, 1.0)])

    assert registry(MyConstraint())(ember.tensor([0.0])).item() == 3.0
    registry.register(constraints.positive, lambda c: TE.SoftplusTransform())
    assert isinstance(registry(constraints.positive), TE.SoftplusTransform)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        registry.register(int, _factory)
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        biject_to(constraints.lower_cholesky)


# -- the new transforms ------------------------------------------------------------------------------------------------
TRANSFORMS = {
    "Softplus": (lambda M, L: M.SoftplusTransform(), (3, 4)),
    "StickBreaking": (lambda M, L: M.StickBreakingTransform(), (3, 4)),
    "LowerCholesky": (lambda M, L: M.LowerCholeskyTransform(), (3, 4, 4)),
    "PositiveDefinite": (lambda M, L: M.PositiveDefiniteTransform(), (3, 4, 4)),
    "CorrCholesky": (lambda M, L: M.CorrCholeskyTransform(), (3, 10)),
    "Independent": (lambda M, L: M.IndependentTransform(M.SoftplusTransform(), 2), (3, 4)),
    "Cat": (lambda M, L: M.CatTransform([M.ExpTransform(), M.SoftplusTransform()], -1, [1, 3]), (3, 4)),
    "Cat_dim0": (lambda M, L: M.CatTransform([M.ExpTransform(), M.TanhTransform()], 0, [2, 1]), (3, 4)),
    "Stack": (lambda M, L: M.StackTransform([M.ExpTransform(), M.TanhTransform(), M.SoftplusTransform()], 0), (3, 4)),
    "CumulativeDistribution": (lambda M, L: M.CumulativeDistributionTransform(
        (D if L is ember else T).Normal(L.tensor([0.5, -1.0, 0.0, 2.0]), L.tensor([1.0, 2.0, 0.5, 1.5]))), (3, 4)),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform(name, dtype):
    make, shape = TRANSFORMS[name]
    te, tt = make(TE, ember), make(T.transforms, torch)
    x = RNG.standard_normal(shape)
    xe, xt = to_lib(x, ember, dtype, True), to_lib(x, torch, dtype, True)
    ye, yt = te(xe), tt(xt)
    close(ye, yt, dtype, "forward")
    grads_close(ye, yt, [xe], [xt], dtype, "forward")
    close(te.inv(ye.detach()), tt.inv(yt.detach()), dtype, "inverse", scale=100)
    assert te.bijective == tt.bijective and repr(te) == _msg(repr(tt))
    assert repr(te.domain) == _msg(repr(tt.domain)) and repr(te.codomain) == _msg(repr(tt.codomain))
    assert te.domain.event_dim == tt.domain.event_dim and te.codomain.event_dim == tt.codomain.event_dim
    assert tuple(te.forward_shape(ember.Size(shape))) == tuple(tt.forward_shape(torch.Size(shape)))
    assert tuple(te.inverse_shape(ye.shape)) == tuple(tt.inverse_shape(yt.shape))
    if tt.bijective:
        le, lt = te.log_abs_det_jacobian(xe, te(xe)), tt.log_abs_det_jacobian(xt, tt(xt))
        close(le, lt, dtype, "log_abs_det_jacobian")
        grads_close(le, lt, [xe], [xt], dtype, "log_abs_det_jacobian")
    assert te == make(TE, ember) or name in ("Independent", "Cat", "Cat_dim0", "Stack", "CumulativeDistribution")


def test_transform_caching_and_errors():
    for t in (TE.IndependentTransform(TE.ExpTransform(), 1), TE.CatTransform([TE.ExpTransform()] * 2, 0),
              TE.StackTransform([TE.ExpTransform()] * 2, 0), TE.SoftplusTransform()):
        c = t.with_cache(1)
        x = ember.randn(2, 3)
        assert c.inv(c(x)) is x and c._cache_size == 1
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        TE.CorrCholeskyTransform().forward_shape((2, 4))
    with pytest.raises(AssertionError, match="must equal length"):
        TE.CatTransform([TE.ExpTransform()] * 2, 0)(ember.zeros(3))
    with pytest.raises(AssertionError, match="must equal len"):
        TE.StackTransform([TE.ExpTransform()] * 2, 0)(ember.zeros(3))
    y = TE.CorrCholeskyTransform()(ember.randn(5, 6, dtype=ember.float64))
    np.testing.assert_allclose((y @ y.mT).diagonal(dim1=-2, dim2=-1).numpy(), 1, rtol=1e-12)


def test_tril_vec_round_trip():
    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    for diag in (0, -1, -2):
        m = ember.randn(2, 5, 5).tril(diag)
        np.testing.assert_array_equal(vec_to_tril_matrix(tril_matrix_to_vec(m, diag), diag).numpy(), m.numpy())
        mt = torch.tensor(m.numpy())
        np.testing.assert_array_equal(tril_matrix_to_vec(m, diag).numpy(),
                                      T.utils.tril_matrix_to_vec(mt, diag).numpy())
    with pytest.raises(ValueError, match="cannot be expressed"):
        vec_to_tril_matrix(ember.zeros(5))
