"""svd_lowrank, pca_lowrank and lobpcg: randomized, so checked by their properties against exact decompositions,
and against torch itself where both are given the same random start (the projection of svd_lowrank, the ``X`` of
lobpcg)."""
import doctest
import importlib

import numpy as np
import pytest
import scipy.linalg
import torch

import ember
import ember._ops.lowrank as lowrank


def decaying(shape, rng, rate=0.5):
    """A random matrix (or batch) with singular values ``rate ** i``."""
    *batch, m, n = shape
    k = min(m, n)
    U = np.linalg.qr(rng.standard_normal((*batch, m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((*batch, n, k)))[0]
    return (U * rate ** np.arange(k)) @ np.swapaxes(V, -1, -2)


def spd(m, rng, low=1.0):
    """A symmetric positive-definite matrix with well separated eigenvalues in ``[low, low + m)``."""
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    return (Q * (low + np.arange(m) + rng.uniform(0, 0.3, m))) @ Q.T


def assert_orthonormal(Q, tol=1e-10):
    Q = Q.numpy()
    eye = np.broadcast_to(np.eye(Q.shape[-1]), Q.shape[:-2] + (Q.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, eye, atol=tol)


def product(U, S, V):
    return (U * S.unsqueeze(-2)) @ V.mT


@pytest.fixture
def same_projection(monkeypatch):
    """torch and ember draw the same random projection ``R`` in svd_lowrank."""
    rng = np.random.default_rng(7)
    draws = {}

    def fixed(lib):
        def randn(*size, dtype=None, device=None):
            key = tuple(size)
            if key not in draws:
                draws[key] = rng.standard_normal(key)
            return lib.tensor(draws[key], dtype=dtype)
        return randn
    monkeypatch.setattr(torch, "randn", fixed(torch))
    monkeypatch.setattr(lowrank, "randn", fixed(ember))


# -- svd_lowrank / pca_lowrank ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(40, 25), (25, 40)])
def test_svd_lowrank_matches_truncated_svd(shape):
    ember.manual_seed(0)
    A = decaying(shape, np.random.default_rng(0))
    q = 6
    U, S, V = ember.svd_lowrank(ember.tensor(A), q=q, niter=2)
    assert tuple(U.shape) == (shape[0], q) and tuple(S.shape) == (q,) and tuple(V.shape) == (shape[1], q)
    assert_orthonormal(U)
    assert_orthonormal(V)
    exact = ember.linalg.svdvals(ember.tensor(A)).numpy()
    np.testing.assert_allclose(S.numpy()[:4], exact[:4], rtol=1e-6)
    best = np.linalg.norm(exact[q:])  # the error of the exact rank-q truncation
    assert np.linalg.norm(product(U, S, V).numpy() - A) < 1.5 * best


def test_svd_lowrank_batched_and_centered():
    ember.manual_seed(1)
    rng = np.random.default_rng(1)
    A = decaying((2, 3, 20, 12), rng)
    M = rng.standard_normal((1, 12))  # broadcast to A's shape, as torch does
    U, S, V = ember.svd_lowrank(ember.tensor(A + M), q=8, niter=3, M=ember.tensor(M))
    assert tuple(U.shape) == (2, 3, 20, 8) and tuple(V.shape) == (2, 3, 12, 8)
    assert_orthonormal(U)
    np.testing.assert_allclose(S.numpy()[..., :5], np.linalg.svd(A, compute_uv=False)[..., :5], rtol=1e-6)
    np.testing.assert_allclose(product(U, S, V).numpy(), A, atol=1e-2)


def test_pca_lowrank():
    ember.manual_seed(2)
    rng = np.random.default_rng(2)
    data = rng.standard_normal((200, 5)) * np.array([5.0, 2.0, 1.0, 0.1, 0.01]) + 3.0
    U, S, V = ember.pca_lowrank(ember.tensor(data))
    assert tuple(S.shape) == (5,)  # q = min(6, m, n)
    cov = np.cov(data, rowvar=False)
    np.testing.assert_allclose((S.numpy() ** 2 / 199)[:3], np.linalg.eigvalsh(cov)[::-1][:3], rtol=1e-8)
    first = np.linalg.eigh(cov)[1][:, -1]
    assert abs(abs(V.numpy()[:, 0] @ first) - 1) < 1e-8
    _, S0, _ = ember.pca_lowrank(ember.tensor(data), center=False)  # the SVD of the data as it is
    np.testing.assert_allclose(S0.numpy(), np.linalg.svd(data, compute_uv=False), rtol=1e-10)
    with pytest.raises(ValueError):
        ember.pca_lowrank(ember.tensor(data), q=6)
    with pytest.raises(ValueError):
        ember.pca_lowrank(ember.tensor(data), niter=-1)


@pytest.mark.parametrize("shape,M", [((30, 20), False), ((20, 30), True), ((2, 15, 10), False)])
def test_svd_lowrank_equals_torch_given_the_same_projection(same_projection, shape, M):
    rng = np.random.default_rng(3)
    A = decaying(shape, rng, rate=0.7)
    Mv = rng.standard_normal(shape[-1:]) if M else None
    grads = rng.standard_normal(shape[:-2] + (5,)), rng.standard_normal(shape)
    results = []
    for lib in (torch, ember):
        a = lib.tensor(A, requires_grad=True)
        U, S, V = lib.svd_lowrank(a, q=5, niter=1, M=None if Mv is None else lib.tensor(Mv))
        # a loss blind to the singular vectors' signs, which LAPACK builds may choose differently
        loss = (S * lib.tensor(grads[0])).sum() + (product(U, S, V) * lib.tensor(grads[1])).sum()
        (g,) = lib.autograd.grad(loss, a)
        results.append((U.detach().numpy(), S.detach().numpy(), V.detach().numpy(), g.numpy()))
    (tU, tS, tV, tg), (eU, eS, eV, eg) = results
    np.testing.assert_allclose(eS, tS, rtol=1e-10)
    np.testing.assert_allclose(np.abs(eU), np.abs(tU), atol=1e-10)
    np.testing.assert_allclose(np.abs(eV), np.abs(tV), atol=1e-10)
    np.testing.assert_allclose(eg, tg, rtol=1e-8, atol=1e-10)


# -- lobpcg -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("generalized", [False, True])
def test_lobpcg_equals_torch_and_eigh(method, largest, generalized):
    rng = np.random.default_rng(4)
    m, k = 30, 2
    A = spd(m, rng)
    B = spd(m, rng) / m + np.eye(m) if generalized else None
    X = rng.standard_normal((m, 3))
    E = {}
    for lib in (torch, ember):
        E[lib] = lib.lobpcg(lib.tensor(A), k=k, B=None if B is None else lib.tensor(B), X=lib.tensor(X),
                            largest=largest, method=method)
    exact = scipy.linalg.eigh(A, B)
    order = slice(None, -k - 1, -1) if largest else slice(0, k)
    (tE, tV), (eE, eV) = E[torch], E[ember]
    assert tuple(eE.shape) == (k,) and tuple(eV.shape) == (m, k)
    np.testing.assert_allclose(eE.numpy(), tE.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.abs(eV.numpy()), np.abs(tV.numpy()), atol=1e-7)
    np.testing.assert_allclose(eE.numpy(), exact[0][order], rtol=1e-10)
    # B-orthonormal eigenvectors
    Bm = np.eye(m) if B is None else B
    np.testing.assert_allclose(eV.numpy().T @ Bm @ eV.numpy(), np.eye(k), atol=1e-7)


def test_lobpcg_random_start_and_batches():
    ember.manual_seed(5)
    rng = np.random.default_rng(5)
    A = np.stack([spd(24, rng) for _ in range(3)]).reshape(3, 1, 24, 24)
    E, V = ember.lobpcg(ember.tensor(A), k=3, largest=False)
    assert tuple(E.shape) == (3, 1, 3) and tuple(V.shape) == (3, 1, 24, 3)
    np.testing.assert_allclose(E.numpy(), np.linalg.eigvalsh(A)[..., :3], rtol=1e-10)
    np.testing.assert_allclose((A @ V.numpy()), V.numpy() * E.numpy()[..., None, :], atol=1e-6)
    E1, _ = ember.lobpcg(ember.tensor(A[0, 0]))  # k=1, largest by default
    np.testing.assert_allclose(E1.numpy(), np.linalg.eigvalsh(A[0, 0])[-1:], rtol=1e-10)


@pytest.mark.parametrize("largest,k", [(True, 1), (True, 2), (False, 3)])
def test_lobpcg_gradient_equals_torch(largest, k):
    rng = np.random.default_rng(6)
    m = 12
    A = spd(m, rng)
    A = A + 0.1 * rng.standard_normal((m, m))  # not symmetric: the gradient goes through (A + A^T) / 2
    X = rng.standard_normal((m, k))
    gE, gV = rng.standard_normal(k), rng.standard_normal((m, k))
    grads = []
    for lib in (torch, ember):
        a = lib.tensor(A, requires_grad=True)
        E, V = lib.lobpcg(a, k=k, X=lib.tensor(X), largest=largest)
        loss = (E * lib.tensor(gE)).sum() + (V * V * lib.tensor(gV)).sum()  # blind to the eigenvectors' signs
        grads.append(lib.autograd.grad(loss, a)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads[1], grads[1].T, atol=1e-9)


def test_lobpcg_tracker_errors_and_inputs_kept():
    rng = np.random.default_rng(8)
    A = ember.tensor(spd(12, rng))
    X = ember.tensor(rng.standard_normal((12, 2)))
    X0 = X.clone()
    seen = []

    def tracker(worker):
        seen.append((worker.ivars["istep"], worker.ivars["converged_count"], tuple(worker.tvars["rerr"].shape)))
        if worker.ivars["istep"] == 3:
            worker.bvars["force_stop"] = True
    ember.lobpcg(A, X=X, tol=1e-300, tracker=tracker, method="basic")
    assert [s[0] for s in seen] == [1, 2, 3] and seen[0][2] == (2,)
    assert ember.equal(X, X0)
    with pytest.raises(ValueError, match="smaller than 3 x"):
        ember.lobpcg(A, k=5)
    a = A.clone().requires_grad_()
    E, _ = ember.lobpcg(a, k=1, B=ember.eye(12, dtype=A.dtype), X=X[:, :1])
    with pytest.raises(ValueError, match="B != I"):
        E.sum().backward()


@pytest.mark.parametrize("name", ["ember._ops.lowrank", "ember._ops.lobpcg"])
def test_docstring_examples(name):
    ember.manual_seed(0)
    result = doctest.testmod(importlib.import_module(name), globs={"ember": ember},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed
