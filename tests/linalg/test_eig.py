"""linalg.eig and linalg.eigvals against torch: complex values and dtypes, batches, errors, and gradients of losses
that do not depend on the eigenvectors' phase."""
import numpy as np
import pytest
import torch

import ember


def matrices(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def sort_key(L):
    return np.lexsort((np.round(L.imag, 6), np.round(L.real, 6)), axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (5, 5), (2, 4, 4), (0, 0), (3, 0, 0)])
def test_eig_forward(dtype, shape):
    a = matrices(shape, dtype)
    tL, tV = torch.linalg.eig(torch.tensor(a))
    eL, eV = ember.linalg.eig(ember.tensor(a))
    assert str(eL.dtype).split(".")[1] == str(tL.dtype).split(".")[1] and eV.dtype == eL.dtype
    assert eL.shape == tuple(tL.shape) and eV.shape == tuple(tV.shape)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    L, V = eL.numpy(), eV.numpy()
    np.testing.assert_allclose(np.take_along_axis(L, sort_key(L), -1),
                               np.take_along_axis(tL.numpy(), sort_key(tL.numpy()), -1), rtol=tol, atol=tol)
    np.testing.assert_allclose(a @ V, V * L[..., None, :], rtol=tol * 10, atol=tol * 10)  # A V = V diag(L)
    if V.size:
        np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, rtol=tol)
    eLv = ember.linalg.eigvals(ember.tensor(a))
    tLv = torch.linalg.eigvals(torch.tensor(a))
    assert eLv.dtype == eL.dtype
    np.testing.assert_allclose(np.sort_complex(eLv.numpy()), np.sort_complex(tLv.numpy()), rtol=tol, atol=tol)


def test_eig_matches_torch_on_a_fixed_matrix():
    a = np.array([[1., 2., 0.], [3., 1., 1.], [0.5, -2., 4.]])
    tL, tV = torch.linalg.eig(torch.tensor(a))
    eL, eV = ember.linalg.eig(ember.tensor(a))
    np.testing.assert_allclose(eL.numpy(), tL.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.abs(eV.numpy()), np.abs(tV.numpy()), rtol=1e-10)


def _grads(a, loss):
    out = []
    for m in (torch, ember):
        A = m.tensor(a, requires_grad=True)
        loss(m, *m.linalg.eig(A)).backward()
        out.append(A.grad.numpy())
    return out


LOSSES = {
    "eigvals_abs": lambda m, L, V: L.abs().sum(),
    "eigvals_weighted": lambda m, L, V: ((L.real * m.arange(L.shape[-1], dtype=L.real.dtype)).sum()
                                         + L.imag.pow(2).sum()),
    "vectors_abs": lambda m, L, V: V.abs().sum(),
    "both": lambda m, L, V: (V.abs() * m.arange(1, V.shape[-1] + 1, dtype=V.real.dtype)).sum() + L.abs().pow(2).sum(),
    "projector": lambda m, L, V: (V[..., :, 0:1] * V[..., :, 0:1].conj().transpose(-2, -1)).real.sum(),
}


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_backward(loss, shape, dtype):
    a = matrices(shape, dtype, seed=3)
    tg, eg = _grads(a, LOSSES[loss])
    assert eg.dtype == tg.dtype
    np.testing.assert_allclose(eg, tg, rtol=1e-7, atol=1e-9)


def test_eigvals_backward_and_float32():
    a = matrices((4, 4), "float32", seed=5)
    out = []
    for m in (torch, ember):
        A = m.tensor(a, requires_grad=True)
        L = m.linalg.eigvals(A)
        assert str(L.dtype).endswith("complex64")
        g = m.tensor(matrices((4,), "complex64", seed=6))
        (L * g.conj()).real.sum().backward()
        out.append(A.grad.numpy())
    assert out[1].dtype == np.float32
    np.testing.assert_allclose(out[1], out[0], rtol=1e-4, atol=1e-5)


def test_gradcheck_of_phase_invariant_losses():
    a = ember.tensor(matrices((3, 3), seed=7), requires_grad=True)
    assert ember.autograd.gradcheck(lambda A: ember.linalg.eigvals(A).abs(), (a,))
    assert ember.autograd.gradcheck(lambda A: ember.linalg.eig(A)[1].abs(), (a,))


def test_phase_dependent_loss_raises():
    for m in (torch, ember):
        A = m.tensor(matrices((3, 3), seed=3), requires_grad=True)
        L, V = m.linalg.eig(A)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            V.imag.sum().backward()


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("case", ["nonfinite", "half", "int", "rect", "vector"])
def test_errors(case):
    for m in (torch, ember):
        a = {"nonfinite": lambda: m.tensor([[1., float("nan")], [0., 1.]]),
             "half": lambda: m.ones(2, 2, dtype=m.float16), "int": lambda: m.ones(2, 2, dtype=m.int64),
             "rect": lambda: m.ones(2, 3), "vector": lambda: m.ones(3)}[case]()
        with pytest.raises(NotImplementedError if case == "half" else RuntimeError):
            m.linalg.eig(a)
    L = ember.linalg.eigvals(ember.tensor([[1., float("inf")], [0., 1.]]))
    assert L.dtype == ember.complex64 and np.isnan(L.numpy()).all()
