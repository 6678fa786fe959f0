"""Idioms of scientific PyTorch code (Gaussian processes, QR with Householder reflectors, legacy LU solves, spectral
losses differentiated twice) run with ember and with torch on the same inputs: values and gradients agree."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(force=True), rtol=tol, atol=tol)


def _spd(n, *batch):
    A = RNG.standard_normal(batch + (n, n))
    return A @ np.swapaxes(A, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_gradient_reaches_both_triangles(upper):
    A, B, G = _spd(4), RNG.standard_normal((3, 4, 2)), RNG.standard_normal((3, 4, 2))
    out = []
    for m in (ember, torch):
        L = m.linalg.cholesky(m.tensor(A), upper=upper).requires_grad_(True)
        b = m.tensor(B, requires_grad=True)
        X = m.cholesky_solve(b, L, upper=upper)  # the factor broadcast against a batch of right-hand sides
        gL, gb = m.autograd.grad(X, (L, b), m.tensor(G), create_graph=True)
        ggL = m.autograd.grad((gL * gL).sum() + gb.sum(), L)[0]
        out.append((X, gL, gb, ggL))
    for e, t in zip(*out):
        close(e, t)
    assert (out[0][1].triu(1) if not upper else out[0][1].tril(-1)).abs().max() > 1e-3


def test_cholesky_inverse_gradient_and_complex_solve():
    A, G = _spd(3, 2), RNG.standard_normal((2, 3, 3))
    H = A + 1j * (lambda S: S - np.swapaxes(S, -1, -2))(RNG.standard_normal((2, 3, 3)))
    Bc = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    out = []
    for m in (ember, torch):
        U = m.linalg.cholesky(m.tensor(A), upper=True).requires_grad_(True)
        Ai = m.cholesky_inverse(U, upper=True)
        Lc = m.linalg.cholesky(m.tensor(H)).requires_grad_(True)
        Xc = m.cholesky_solve(m.tensor(Bc), Lc)
        out.append((Ai, m.autograd.grad(Ai, U, m.tensor(G))[0], Xc, m.autograd.grad(Xc.abs().sum(), Lc)[0]))
    for e, t in zip(*out):
        close(e, t)


def test_gp_marginal_likelihood_gradients():
    X, y = RNG.uniform(-3, 3, (20, 2)), RNG.standard_normal(20)
    out = []
    for m in (ember, torch):
        log_ls = m.zeros(2, dtype=m.float64, requires_grad=True)
        raw_noise = m.tensor(-1.0, dtype=m.float64, requires_grad=True)
        x = m.tensor(X)
        K = m.exp(-0.5 * m.cdist(x / log_ls.exp(), x / log_ls.exp()) ** 2)
        L = m.linalg.cholesky(K + m.nn.functional.softplus(raw_noise) * m.eye(20, dtype=m.float64))
        alpha = m.cholesky_solve(m.tensor(y)[:, None], L)
        nll = 0.5 * (m.tensor(y) @ alpha[:, 0]) + L.diagonal().log().sum()
        out.append((nll, *m.autograd.grad(nll, (log_ls, raw_noise))))
    for e, t in zip(*out):
        close(e, t)


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_geqrf_ormqr_householder_product(shape, dtype):
    A = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if dtype == "complex128" else 0)
    m_ = shape[-2]
    C, D = RNG.standard_normal(shape[:-2] + (m_, 2)), RNG.standard_normal(shape[:-2] + (2, m_))
    out = []
    for m in (ember, torch):
        a, tau = m.geqrf(m.tensor(A))
        a.requires_grad_(True)
        c, d = m.tensor(C).to(a.dtype), m.tensor(D).to(a.dtype)
        Q = m.linalg.householder_product(a, tau) if shape[-2] >= shape[-1] else m.orgqr(a[..., :m_], tau)
        QC = m.ormqr(a, tau, c, transpose=True)
        DQ = m.ormqr(a, tau, d, left=False)
        out.append((a, tau, Q, QC, DQ, m.autograd.grad(QC.abs().sum() + DQ.real.sum(), a)[0]))
    for e, t in zip(*out):
        close(e, t)


def test_legacy_lu_and_lu_solve():
    A, B = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for m in (ember, torch):
            a = m.tensor(A, requires_grad=True)
            LU, piv, info = m.lu(a, get_infos=True)
            assert isinstance(m.lu(a), tuple) and len(m.lu(a)) == 2
            X = m.tensor(B).lu_solve(*a.lu())
            out.append((LU, piv, info, X, m.lu_solve(m.tensor(B), LU, piv), m.autograd.grad(X.sum(), a)[0]))
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        ember.lu_solve(ember.tensor(B), *ember.linalg.lu_factor(ember.tensor(A)))
    for e, t in zip(*out):
        assert e.dtype.itemsize == t.dtype.itemsize
        close(e, t)


def test_spectral_loss_second_order():
    """abs() and angle() of an rfft in a loss, differentiated twice (the cross terms need sgn's gradient)."""
    x0, target, v = RNG.standard_normal((2, 16)), RNG.standard_normal((2, 9)), RNG.standard_normal((2, 16))
    out = []
    for m in (ember, torch):
        x = m.tensor(x0, requires_grad=True)
        X = m.fft.rfft(x, norm="ortho")
        loss = (X.abs() - m.tensor(target)).pow(2).mean() + 0.1 * X.angle().pow(2).mean()
        g = m.autograd.grad(loss, x, create_graph=True)[0]
        out.append((g, m.autograd.grad((g * m.tensor(v)).sum(), x)[0]))
    for e, t in zip(*out):
        close(e, t)


def test_complex_sgn_gradient():
    z0, w = RNG.standard_normal(4) + 1j * RNG.standard_normal(4), RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    z0[1] = 0
    out = []
    for m in (ember, torch):
        z = m.tensor(z0, requires_grad=True)
        out.append(m.autograd.grad((z.sgn() * m.tensor(w)).real.sum(), z)[0])
        x = m.tensor([2.0, -1.0, 0.0], requires_grad=True)
        out.append(m.autograd.grad(x.sgn().sum(), x)[0])
    close(out[0], out[2])
    close(out[1], out[3])


def test_quantum_evolution_gradients():
    """Complex matrix_exp and einsum expectation values, differentiated in real parameters."""
    H0 = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    H0, H1, O, th = H0 + H0.conj().T, np.kron([[0, 1], [1, 0]], np.eye(2)), np.diag([1.0, -1, -1, 1]), [0.3, 0.7]
    out = []
    for m in (ember, torch):
        theta = m.tensor(th, dtype=m.float64, requires_grad=True)
        U = m.linalg.matrix_exp(-1j * (m.tensor(H0) + theta[0] * m.tensor(H1, dtype=m.complex128)) * theta[1])
        psi = U[:, 0]
        energy = m.einsum("i,ij,j->", psi.conj(), m.tensor(O, dtype=m.complex128), psi).real
        g = m.autograd.grad(energy, theta, create_graph=True)[0]
        out.append((energy, g, m.autograd.grad(g.sum(), theta)[0]))
    for e, t in zip(*out):
        close(e, t)
