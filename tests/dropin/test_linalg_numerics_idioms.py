"""Numerical linear algebra idioms of research code (Gaussian processes, Kalman filters, PCA, complex decompositions
and their gradients) against torch."""
import re

import numpy as np
import pytest
import torch

import ember

_rng = np.random.default_rng(0)
_C = _rng.standard_normal((2, 3, 3)) + 1j * _rng.standard_normal((2, 3, 3))
_D = _rng.standard_normal((3, 2)) + 1j * _rng.standard_normal((3, 2))


def _np(t):
    t = t.detach()
    return t.resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _close(e, t, rtol=1e-7, atol=1e-9):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _run(fn, *arrays):
    """``fn(lib, *tensors)`` in both libraries; a loss with fixed random weights on the real view of every output
    (complex ones included) is differentiated back to the inputs. Returns ``[(outputs, grads)]`` for ember, torch."""
    res = []
    for lib in (ember, torch):
        ins = [lib.tensor(a, requires_grad=True) for a in arrays]
        outs = fn(lib, *ins)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        loss = 0
        for k, o in enumerate(outs):
            r = lib.view_as_real(o.resolve_conj()) if o.is_complex() else o
            w = np.random.default_rng(k).standard_normal(tuple(r.shape))
            loss = loss + (r * lib.tensor(w, dtype=r.dtype)).sum()
        res.append((outs, lib.autograd.grad(loss, ins)))
    return res


def _compare(fn, *arrays, rtol=1e-7, atol=1e-9):
    (eo, eg), (to, tg) = _run(fn, *arrays)
    for e, t in zip(eo + list(eg), to + list(tg)):
        _close(e, t, rtol, atol)


# -- Gaussian processes ------------------------------------------------------------------------------------------
def _gp(lib, X, y, Xs, ls, log_noise):
    def k(a, b):
        return lib.exp(-0.5 * lib.cdist(a / ls, b / ls).pow(2))
    K = k(X, X) + log_noise.exp() * lib.eye(X.shape[0], dtype=X.dtype)
    L = lib.linalg.cholesky(K)
    alpha = lib.cholesky_solve(y.unsqueeze(-1), L)
    Ks = k(X, Xs)
    v = lib.linalg.solve_triangular(L, Ks, upper=False)
    var = k(Xs, Xs).diagonal() - (v * v).sum(0)
    nll = 0.5 * (y.unsqueeze(-1) * alpha).sum() + L.diagonal().log().sum()
    return Ks.T @ alpha, var, nll, lib.logdet(K)


def test_gp_regression_values_and_hyperparameter_gradients():
    """Exact GP posterior and marginal likelihood through cholesky, cholesky_solve and solve_triangular."""
    X, y, Xs = _rng.standard_normal((10, 2)), _rng.standard_normal(10), _rng.standard_normal((4, 2))
    _compare(_gp, X, y, Xs, np.array([0.7, 1.3]), np.array(-2.0))


def test_cholesky_jitter_loop_and_info():
    """The jitter loop catches ``linalg.LinAlgError`` (a RuntimeError); ``cholesky_ex`` reports the failing minor."""
    A = np.diag([1.0, 1.0, -1e-3])
    tries = []
    for lib in (ember, torch):
        a, jitter = lib.tensor(A), 1e-6
        for i in range(8):
            try:
                lib.linalg.cholesky(a + jitter * lib.eye(3, dtype=a.dtype))
                break
            except lib.linalg.LinAlgError:
                jitter *= 10
        tries.append(i)
        with pytest.raises(RuntimeError, match="leading minor of order 3"):
            lib.linalg.cholesky(a)
    assert tries[0] == tries[1]
    _close(ember.linalg.cholesky_ex(ember.tensor(A)).info, torch.linalg.cholesky_ex(torch.tensor(A)).info)


def test_inv_ex_check_errors_names_inv_ex():
    with pytest.raises(ember.linalg.LinAlgError, match=r"^linalg\.inv_ex: The diagonal element 2 is zero"):
        ember.linalg.inv_ex(ember.ones(3, 3), check_errors=True)


# -- filters and iterations in float64 ---------------------------------------------------------------------------
def _kalman(lib, zs, q):
    F = lib.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=zs.dtype)
    H = lib.tensor([[1.0, 0.0]], dtype=zs.dtype)
    x, P, I = lib.zeros(2, dtype=zs.dtype), lib.eye(2, dtype=zs.dtype), lib.eye(2, dtype=zs.dtype)
    xs = []
    for z in zs:
        x, P = F @ x, F @ P @ F.T + q * I
        K = lib.linalg.solve(H @ P @ H.T + 0.5, H @ P).T
        x, P = x + K @ (z - H @ x), (I - K @ H) @ P
        xs.append(x)
    return lib.stack(xs), P


def test_kalman_filter_gradients():
    _compare(_kalman, _rng.standard_normal((8, 1)).cumsum(0), np.array(0.05))


def test_newton_iterations_with_batched_broadcast_solves():
    def newton(lib, A, b):
        x = lib.zeros(b.shape, dtype=b.dtype)
        for _ in range(4):
            g = (A @ x.unsqueeze(-1)).squeeze(-1) - b + 0.1 * x ** 3
            x = x - lib.linalg.solve(A + lib.diag_embed(0.3 * x ** 2), g)
        return x
    M = _rng.standard_normal((4, 4))
    _compare(newton, M @ M.T + 3 * np.eye(4), _rng.standard_normal((3, 4)))


# -- complex decompositions: values and gradients ----------------------------------------------------------------
def _hpd(lib, a):
    return a @ a.mH + lib.eye(3, dtype=a.dtype)


_COMPLEX = {
    "inv": (lambda lib, a: lib.linalg.inv(a), (_C,)),
    "inverse": (lambda lib, a: lib.inverse(a), (_C,)),
    "det": (lambda lib, a: lib.linalg.det(a), (_C,)),
    "slogdet": (lambda lib, a: lib.linalg.slogdet(a), (_C,)),
    "logdet": (lambda lib, a: lib.logdet(a), (_C,)),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), (_C, _D)),
    "solve_left_false": (lambda lib, a, b: lib.linalg.solve(a, b.mT.unsqueeze(0), left=False), (_C, _D)),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), (_C, _D)),
    "solve_triangular_unit_right": (
        lambda lib, a, b: lib.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True),
        (_C, _D)),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(_hpd(lib, a)), (_C,)),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(_hpd(lib, a), upper=True), (_C,)),
    "cholesky_solve": (lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(_hpd(lib, a))), (_C, _D)),
    "cholesky_inverse": (lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(_hpd(lib, a))), (_C,)),
    "qr_tall": (lambda lib, a: lib.linalg.qr(a), (_D,)),
    "qr_wide": (lambda lib, a: lib.linalg.qr(a.mT), (_D,)),
    "eigh_values": (lambda lib, a: lib.linalg.eigh(_hpd(lib, a))[0], (_C,)),
    "eigh_projector": (lambda lib, a: (lambda v: v @ v.mH)(lib.linalg.eigh(_hpd(lib, a))[1][..., :2]), (_C,)),
    "eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"), (_C,)),
    "svd_reconstruction": (lambda lib, a: (lambda u, s, vh: (u * s) @ vh)(*lib.linalg.svd(a, full_matrices=False)),
                           (_D,)),
    "svd_abs_vectors": (lambda lib, a: [t.abs() for t in lib.linalg.svd(a.mT, full_matrices=False)], (_D,)),
    "svdvals": (lambda lib, a: lib.linalg.svdvals(a), (_C,)),
    "legacy_svd": (lambda lib, a: lib.svd(a), (_D,)),
    "lu": (lambda lib, a: lib.linalg.lu(a)[1:], (_C,)),
    "lu_rect": (lambda lib, a: lib.linalg.lu(a.mT)[1:], (_D,)),
    "lu_solve_adjoint": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True), (_C, _D)),
    "lu_solve_right": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False) * 1,
                       (_C, _D)),
    "pinv": (lambda lib, a: lib.linalg.pinv(a), (_D,)),
    "pinv_hermitian": (lambda lib, a: lib.linalg.pinv(a @ a.mH, hermitian=True, atol=1e-8), (_D,)),
    "matrix_power_neg": (lambda lib, a: lib.linalg.matrix_power(a, -2), (_C,)),
    "lstsq": (lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd")[::3], (_D, _C[0])),
    "lstsq_gels_residuals": (lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gels")[:2], (_D, _C[0])),
}


@pytest.mark.parametrize("name", sorted(_COMPLEX))
def test_complex_decompositions_values_and_gradients(name):
    """Complex128 inputs: values (``U`` up to phase excluded) and the conjugate-convention gradients of torch."""
    fn, arrays = _COMPLEX[name]
    if name == "legacy_svd":  # singular vectors up to a phase: compare U S V^H and S, with gradients of S
        (eo, eg), (to, tg) = _run(lambda lib, a: [lib.svd(a)[1]], *arrays)
        for lib, outs in ((ember, eo), (torch, to)):
            u, s, v = lib.svd(lib.tensor(arrays[0]))
            assert u.dtype == lib.complex128 and v.dtype == lib.complex128 and s.dtype == lib.float64
            np.testing.assert_allclose(_np((u * s) @ v.mH), arrays[0], atol=1e-12)
        _close(eo[0], to[0])
        _close(eg[0], tg[0])
        return
    _compare(fn, *arrays)


def test_lstsq_complex_output_dtypes():
    """Residuals and singular values of a complex problem are real."""
    for driver in ("gels", "gelsd", "gelss"):
        e = ember.linalg.lstsq(ember.tensor(_D), ember.tensor(_C[0]), driver=driver)
        t = torch.linalg.lstsq(torch.tensor(_D), torch.tensor(_C[0]), driver=driver)
        for a, b in zip(e, t):
            _close(a, b)


@pytest.mark.parametrize("fn", [
    lambda lib, a: lib.linalg.cholesky(_hpd(lib, a)),
    lambda lib, a: lib.linalg.qr(a[0, :, :2]),
    lambda lib, a: (lambda u, s, vh: ((u * s) @ vh, s))(*lib.linalg.svd(a[0, :, :2], full_matrices=False)),
    lambda lib, a: lib.linalg.slogdet(a),
])
def test_complex_gradcheck_and_gradgradcheck(fn):
    """float64 gradcheck of complex decompositions, second order included, passes in both libraries."""
    for lib in (ember, torch):
        x = lib.tensor(_C[:1], requires_grad=True)
        assert lib.autograd.gradcheck(lambda a: fn(lib, a), (x,))
        assert lib.autograd.gradgradcheck(lambda a: fn(lib, a), (x,))


def test_gradcheck_catches_wrong_complex_gradient():
    """A conjugated (wrong) gradient of ``2 z`` fails gradcheck, in slow and fast mode."""
    res = []
    for lib in (ember, torch):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                return z * 2

            @staticmethod
            def backward(ctx, g):
                return g.conj() * 2
        z = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        res.append([lib.autograd.gradcheck(Bad.apply, (z,), raise_exception=False, fast_mode=f) for f in (0, 1)])
    assert res[0] == res[1] == [False, False]


# -- PCA -----------------------------------------------------------------------------------------------------------
def test_pca_by_svd_and_by_covariance_eigh():
    """Explained variance and (sign-free) projections of the two PCA recipes, with gradients."""
    def pca(lib, x):
        xc = x - x.mean(0)
        S = lib.linalg.svd(xc, full_matrices=False)[1]
        w, V = lib.linalg.eigh(lib.cov(xc.T))
        ev = S ** 2 / (x.shape[0] - 1)
        return ev / ev.sum(), w.flip(0), (xc @ V[:, -2:]).abs()
    _compare(pca, _rng.standard_normal((30, 5)) @ np.diag([4.0, 3, 2, 1, 0.5]))


# -- errors and complex elementwise ops ----------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, a: lib.linalg.svd(a, driver="gesvd"),
    lambda lib, a: lib.linalg.svdvals(a, driver="gesvdj"),
    lambda lib, a: lib.linalg.householder_product(*lib.geqrf(a)).sum().backward(),
    lambda lib, a: lib.ormqr(*lib.geqrf(a), a.detach()).sum().backward(),
    lambda lib, a: lib.sign(a.to(lib.complex64)),
    lambda lib, a: lib.linalg.cholesky(a[:, :2]),
    lambda lib, a: lib.linalg.inv(lib.ones(3, 3, dtype=a.dtype)),
])
def test_error_types(call):
    """torch's exception types (its LinAlgError is a RuntimeError) and the start of its messages."""
    with pytest.raises(Exception) as want:
        call(torch, torch.eye(3, dtype=torch.float64, requires_grad=True) + 1)
    expected = type(want.value) if type(want.value).__module__ == "builtins" else RuntimeError
    with pytest.raises(expected, match=re.escape(str(want.value)[:40])) as got:
        call(ember, ember.eye(3, dtype=ember.float64, requires_grad=True) + 1)
    assert expected is RuntimeError or type(got.value) is expected


def test_complex_sigmoid_and_randn():
    """``sigmoid`` of complex inputs (holomorphic gradient), and complex ``randn`` with variance 1/2 per part."""
    _compare(lambda lib, z: lib.sigmoid(z), _C[0])
    z = ember.randn(20000, dtype=ember.complex64, generator=ember.Generator().manual_seed(0))
    assert z.dtype == ember.complex64
    np.testing.assert_allclose([z.real.var().item(), z.imag.var().item()], [0.5, 0.5], atol=0.02)
    assert ember.randn_like(ember.tensor(_C)).dtype == ember.complex128
