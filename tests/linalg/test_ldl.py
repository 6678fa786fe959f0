"""linalg.ldl_factor(_ex) and ldl_solve against torch: LAPACK's sytrf layout (LD and pivots), solutions against
torch's and linalg.solve's, batches and broadcasting, errors, no derivatives."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
DTYPES = [np.float64, np.float32, np.complex128]


def _sym(shape, dtype, hermitian):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    a = a.astype(dtype)
    return a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_factor_and_solve_match_torch(dtype, hermitian):
    A = _sym((3, 6, 6), dtype, hermitian)
    A[:, range(6), range(6)] = 0  # a zero diagonal: 2x2 pivot blocks occur
    LDe, pe, info = ember.linalg.ldl_factor_ex(ember.tensor(A), hermitian=hermitian)
    LDt, pt = torch.linalg.ldl_factor(torch.tensor(A), hermitian=hermitian)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(LDe.numpy(), LDt.numpy(), rtol=tol, atol=tol)
    np.testing.assert_array_equal(pe.numpy(), pt.numpy())
    assert pe.dtype is ember.int32 and info.dtype is ember.int32 and (info.numpy() == 0).all()
    assert (pe.numpy() < 0).any()
    B = RNG.standard_normal((3, 6, 4)).astype(dtype)
    xe = ember.linalg.ldl_solve(LDe, pe, ember.tensor(B), hermitian=hermitian)
    xt = torch.linalg.ldl_solve(LDt, pt, torch.tensor(B), hermitian=hermitian)
    np.testing.assert_allclose(xe.numpy(), xt.numpy(), rtol=tol * 10, atol=tol * 10)
    B = RNG.standard_normal((2, 1, 6, 4)).astype(dtype)  # batches broadcast (where torch 2.13 crashes)
    xe = ember.linalg.ldl_solve(LDe, pe, ember.tensor(B), hermitian=hermitian)
    assert xe.shape == (2, 3, 6, 4)
    np.testing.assert_allclose(xe.numpy(), ember.linalg.solve(ember.tensor(A), ember.tensor(B)).numpy(),
                               rtol=tol * 10, atol=tol * 10)


def test_reads_the_lower_triangle_and_long_pivots():
    A = _sym((5, 5), np.float64, False)
    junk = A + np.triu(RNG.standard_normal((5, 5)), 1)
    LD, piv = ember.linalg.ldl_factor(ember.tensor(junk))
    np.testing.assert_allclose(LD.numpy(), ember.linalg.ldl_factor(ember.tensor(A))[0].numpy())
    b = RNG.standard_normal((5, 1))
    x = ember.linalg.ldl_solve(LD, piv.long(), ember.tensor(b))
    np.testing.assert_allclose(A @ x.numpy(), b, atol=1e-10)


def test_empty_singular_and_errors():
    LD, piv = ember.linalg.ldl_factor(ember.zeros(0, 3, 3))
    assert LD.shape == (0, 3, 3) and piv.shape == (0, 3)
    LD, piv, info = ember.linalg.ldl_factor_ex(ember.zeros(3, 3))
    t = torch.linalg.ldl_factor_ex(torch.zeros(3, 3))
    assert info.item() == t.info.item() == 1 and (piv.numpy() == t.pivots.numpy()).all()
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.ldl_factor(ember.zeros(3, 3))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.ldl_factor_ex(ember.zeros(3, 3), check_errors=True)
    A = _sym((4, 4), np.float64, False)
    cases = [lambda m: m.linalg.ldl_factor(m.ones(3, 4)), lambda m: m.linalg.ldl_factor_ex(m.ones(4)),
             lambda m: m.linalg.ldl_factor(m.ones(3, 3, dtype=m.int64)),
             lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(m.tensor(A)), m.ones(3, 2, dtype=m.float64)),
             lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(m.tensor(A)), m.ones(4, 2))]
    for fn in cases:
        with pytest.raises(RuntimeError) as et:
            fn(torch)
        with pytest.raises(RuntimeError) as ee:
            fn(ember)
        assert str(ee.value) == str(et.value)


def test_no_derivatives():
    A = ember.tensor(_sym((3, 3), np.float64, False), requires_grad=True)
    LD, piv = ember.linalg.ldl_factor(A)
    assert not LD.requires_grad
    B = ember.ones(3, 1, dtype=ember.float64, requires_grad=True)
    assert not ember.linalg.ldl_solve(LD, piv, B).requires_grad
