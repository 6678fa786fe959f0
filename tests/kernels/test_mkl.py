"""MKL's GEMMs (the ember[mkl] extra) against NumPy's products, and the ops that route their products to them."""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember
from ember._kernels import blas, mkl

pytestmark = pytest.mark.skipif(not mkl.available(), reason="the mkl package (ember[mkl]) is not installed")
RNG = np.random.default_rng(0)


def _operand(shape, dtype, layout):
    """A 2-D array of ``shape`` stored row-major ('C'), column-major ('F') or inside a larger array ('view')."""
    if layout == "F":
        return np.asfortranarray(RNG.standard_normal(shape).astype(dtype))
    if layout == "view":
        return RNG.standard_normal((shape[0] + 3, shape[1] + 5)).astype(dtype)[2:2 + shape[0], 1:1 + shape[1]]
    return RNG.standard_normal(shape).astype(dtype)


def _tol(dtype, k):
    return dict(rtol=1e-5, atol=5e-6 * math.sqrt(k)) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la", ["C", "F", "view"])
@pytest.mark.parametrize("lb", ["C", "F", "view"])
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_matches_numpy(dtype, la, lb, threads):
    m, k, n = 130, 97, 150
    a, b = _operand((m, k), dtype, la), _operand((k, n), dtype, lb)
    got = mkl.gemm(a, b, threads)
    assert got is not None and got.dtype == dtype and got.shape == (m, n) and got.flags.c_contiguous
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), **_tol(dtype, k))


def test_gemm_writes_into_a_block_of_out():
    a, b = _operand((128, 96), np.float32, "C"), _operand((96, 200), np.float32, "C")
    out = np.full((128, 300), 7.0, np.float32)
    assert mkl.gemm(a, b[:, 40:140], 1, out[:, 100:200]) is not None
    np.testing.assert_allclose(out[:, 100:200], a @ b[:, 40:140], **_tol(np.float32, 96))
    assert (out[:, :100] == 7).all() and (out[:, 200:] == 7).all()


@pytest.mark.parametrize("case", ["float16", "int32", "mixed", "strided", "broadcast", "small"])
def test_gemm_declines_what_it_cannot_read(case):
    a, b = _operand((128, 128), np.float32, "C"), _operand((128, 128), np.float32, "C")
    a, b = {"float16": (a.astype(np.float16), b.astype(np.float16)),
            "int32": (a.astype(np.int32), b.astype(np.int32)),
            "mixed": (a, b.astype(np.float64)),
            "strided": (_operand((128, 256), np.float32, "C")[:, ::2], b),
            "broadcast": (np.broadcast_to(a[:1], a.shape), b),
            "small": (a[:32, :32], b[:32, :32])}[case]
    assert mkl.gemm(a, b, 1) is None


@pytest.fixture(params=["mkl", "numpy"])
def backend(request, monkeypatch):
    """Products on MKL, or on NumPy as without the extra."""
    if request.param == "numpy":
        monkeypatch.setattr(mkl, "_routines", {})
    return request.param


def test_matmul_and_linear_match_torch(backend):
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in ((300, 200), (100, 200), (100,)))
    ex, ew, eb = (ember.tensor(v, requires_grad=True) for v in (x, w, b))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    for e_out, t_out in ((ex @ ew.T, tx @ tw.T), (ember.nn.functional.linear(ex, ew, eb),
                                                  torch.nn.functional.linear(tx, tw, tb))):
        np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4, atol=1e-4)
        g = RNG.standard_normal(tuple(t_out.shape)).astype(np.float32)
        ge = ember.autograd.grad(e_out, (ex, ew), ember.tensor(g))
        gt = torch.autograd.grad(t_out, (tx, tw), torch.tensor(g))
        for a, c in zip(ge, gt):
            np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-4, atol=1e-3)


def test_blas_blocks_match_the_product(backend, monkeypatch):
    """The intra-op threads' blocks and inner-dimension pieces, each a one-thread product."""
    monkeypatch.setattr(blas, "LARGE", 0)
    a, b = _operand((400, 300), np.float32, "C"), _operand((300, 200), np.float32, "F")
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(blas.matmul(a, b), exact, **_tol(np.float32, 300))
    np.testing.assert_allclose(blas.matmul(b.T, a.T), exact.T, **_tol(np.float32, 300))
    long_k = _operand((64, 4099), np.float32, "C")
    np.testing.assert_allclose(blas.matmul(long_k, long_k.T), long_k.astype(np.float64) @ long_k.T,
                               **_tol(np.float32, 4099))


def test_a_forked_child_does_not_wait_on_the_parents_threads():
    """GNU OpenMP's threads are gone in a child of ``fork``: the child's products run on NumPy, and finish."""
    script = textwrap.dedent("""
        import os
        import numpy as np
        import ember
        from ember._kernels import mkl
        a = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
        assert mkl.gemm(a, a, 2) is not None
        pid = os.fork()
        if pid == 0:
            y = (ember.from_numpy(a) @ ember.from_numpy(a)).numpy()
            os._exit(0 if mkl.gemm(a, a, 2) is None and np.allclose(y, a @ a, rtol=1e-4, atol=1e-3) else 1)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
