"""The numba loops of ember._kernels.compiled against their NumPy references (GELU, layer/RMS norm rows, col2im,
max-pool routing, the SGD step, add/sub with alpha), the fallback to the references without numba, and the malloc
thresholds set at import."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

from ember._kernels import compiled, malloc
from ember._ops import binary, conv, nn_norm, nn_ops, pool

from .conftest import spy_loops

numba = pytest.importorskip("numba")
RNG = np.random.default_rng(0)


def _gelu_input(n):
    x = (RNG.standard_normal(n) * 4).astype(np.float32)
    x[:9] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-40, -9.5]
    return x


@pytest.mark.parametrize("n", [compiled.MIN_SIZE, 100_003])
@pytest.mark.parametrize("nout", [1, 2], ids=["value", "with_derivative"])
def test_gelu_loop_matches_reference(n, nout):
    x = _gelu_input(n)
    fused, ref = [tuple(np.empty_like(x) for _ in range(nout)) for _ in range(2)]
    with np.errstate(all="ignore"):
        nn_ops._gelu_f32(x, fused)
        nn_ops._gelu_f32_numpy(x, ref)
    for a, b in zip(fused, ref):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        ok = ~np.isnan(b)
        np.testing.assert_allclose(a[ok], b[ok], rtol=2e-7, atol=5e-7)
    assert fused[0][1] == np.inf and np.isnan(fused[0][2])  # inf * Phi(inf); -inf * 0


def test_gelu_op_with_the_loop_vs_torch(monkeypatch):
    used = spy_loops(monkeypatch)
    x = (RNG.standard_normal((4, 40_000)) * 3).astype(np.float32)  # blocks of 2 ** 17 elements: the numba loop
    g = RNG.standard_normal(x.shape).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = ember.nn.functional.gelu(xe), torch.nn.functional.gelu(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=2e-6)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert "gelu_f32_grad" in used


def test_gelu_loop_takes_any_layout():
    x = _gelu_input(2 * compiled.MIN_SIZE).reshape(2, -1)[:, ::2]  # strided, 2-D
    out, ref = (np.empty(x.shape, np.float32),), (np.empty(x.shape, np.float32),)
    with np.errstate(all="ignore"):
        nn_ops._gelu_f32(x, out)
        nn_ops._gelu_f32_numpy(x, ref)
    np.testing.assert_allclose(out[0], ref[0], rtol=2e-7, atol=5e-7)


def test_small_arrays_use_the_reference():
    assert compiled.kernel("gelu_f32", compiled.MIN_SIZE - 1) is None
    assert compiled.kernel("gelu_f32", compiled.MIN_SIZE) is not None


def test_without_numba_the_references_run(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    monkeypatch.setattr(compiled, "_compiled", {})
    assert compiled.kernel("norm_rows", 1 << 20) is None
    x = _gelu_input(1 << 15)
    with np.errstate(all="ignore"):
        out, ref = (np.empty_like(x),), (np.empty_like(x),)
        nn_ops._gelu_f32(x, out)
        nn_ops._gelu_f32_numpy(x, ref)
    np.testing.assert_array_equal(out[0], ref[0])
    x = RNG.standard_normal((200, 100)).astype(np.float32)
    np.testing.assert_array_equal(nn_norm.rows_forward(x, None, None, 1e-5, True)[0],
                                  nn_norm.rows_forward_numpy(x, None, None, 1e-5, True)[0])


NORM_CASES = [((2048, 256), True, True), ((100, 301), True, False), ((64, 1000), False, True), ((17, 1), True, True),
              ((1, 20_000), False, False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,center,affine", NORM_CASES)
def test_norm_rows_match_reference(monkeypatch, dtype, shape, center, affine):
    monkeypatch.setattr(compiled, "MIN_SIZE", 0)
    m, n = shape
    x = (RNG.standard_normal(shape) * 3 + 2).astype(dtype)
    w = RNG.standard_normal(n).astype(dtype) if affine else None
    b = RNG.standard_normal(n).astype(dtype) if affine and center else None
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    got, ref = nn_norm.rows_forward(x, w, b, 1e-5, center), nn_norm.rows_forward_numpy(x, w, b, 1e-5, center)
    for a, r in zip(got, ref):
        assert (a is None) == (r is None)
        if r is not None:
            assert a.dtype == r.dtype and a.shape == r.shape
            np.testing.assert_allclose(a, r, **tol)
    g = RNG.standard_normal(shape).astype(dtype)
    mean, var = ref[1], ref[2]
    for need in [(True, affine, b is not None), (False, affine, b is not None), (True, False, False)]:
        got = nn_norm.rows_backward(g, x, w, mean, var, 1e-5, need)
        ref = nn_norm.rows_backward_numpy(g, x, w, mean, var, 1e-5, need)
        for k, (a, r) in enumerate(zip(got, ref)):
            assert (a is None) == (r is None) == (not need[k])
            if r is not None:
                assert a.dtype == r.dtype and a.shape == r.shape
                np.testing.assert_allclose(a, r, rtol=tol["rtol"] * 10, atol=tol["atol"] * 10 * max(np.abs(r).max(), 1))


def test_norm_rows_keep_nan_and_inf(monkeypatch):
    monkeypatch.setattr(compiled, "MIN_SIZE", 0)
    x = RNG.standard_normal((4, 50)).astype(np.float32)
    x[1, 3], x[2, 7] = np.nan, np.inf
    with np.errstate(all="ignore"):
        y, mean, var = nn_norm.rows_forward(x, None, None, 1e-5, True)
    assert np.isnan(y[1]).all() and np.isnan(y[2]).all()  # a NaN or inf spreads over its row, as in torch
    assert np.isfinite(y[[0, 3]]).all()
    assert np.isnan(mean[1]) and np.isinf(mean[2])


# -- col2im --------------------------------------------------------------------------------------------------------
GEOMETRIES = [((4, 3, 12, 12), (5, 5), (1, 1), (1, 1), ((2, 2), (2, 2))),
              ((3, 2, 15, 11), (3, 2), (2, 3), (1, 2), ((1, 0), (2, 1))),
              ((2, 4, 9, 20), (2, 4), (1, 2), (3, 1), ((0, 0), (1, 3)))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_add_windows_matches_reference(monkeypatch, dtype, geometry):
    plan = conv.Plan(*geometry)
    B, C = plan.shape[:2]
    cols = RNG.standard_normal((C * int(np.prod(plan.ksize)), int(np.prod(plan.out)) * B)).astype(dtype)
    results = []
    for min_size in (0, 1 << 40):  # the numba loop, then the NumPy reference
        monkeypatch.setattr(compiled, "MIN_SIZE", min_size)
        buf = conv._padded_buffer(np, plan, dtype)
        conv._add_columns(np, buf, cols, plan)
        results.append(buf)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)
    assert np.abs(results[1]).max() > 0


def test_conv2d_input_gradient_vs_torch(monkeypatch):
    x = RNG.standard_normal((16, 6, 23, 19)).astype(np.float32)
    w = RNG.standard_normal((8, 3, 4, 3)).astype(np.float32)
    args = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    xe, we = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ye, yt = ember.nn.functional.conv2d(xe, we, **args), torch.nn.functional.conv2d(xt, wt, **args)
    g = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
    used = spy_loops(monkeypatch)
    (ge,), (gt,) = ember.autograd.grad(ye, [xe], ember.tensor(g)), torch.autograd.grad(yt, [xt], torch.tensor(g))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-4, atol=1e-4)
    assert "add_windows_2d" in used


# -- max-pool routing ----------------------------------------------------------------------------------------------
POOL_GEOMETRIES = [((4, 3, 12, 12), (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0))),  # disjoint windows
                   ((3, 2, 15, 11), (3, 3), (2, 1), (1, 1), ((1, 1), (1, 2))),  # overlapping, padded
                   ((2, 4, 9, 20), (2, 3), (2, 2), (2, 1), ((0, 1), (1, 2)))]  # dilated, ceil-mode-like high pads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", POOL_GEOMETRIES)
def test_scatter_windows_matches_reference(monkeypatch, dtype, geometry):
    plan = conv.Plan(*geometry)
    x = RNG.standard_normal(plan.shape).astype(dtype)
    _, arg = pool.max_windows(np, x, plan)
    g = RNG.standard_normal(arg.shape).astype(dtype)
    results = []
    for min_size in (0, 1 << 40):  # the numba loop, then the NumPy reference
        monkeypatch.setattr(compiled, "MIN_SIZE", min_size)
        used = spy_loops(monkeypatch)
        results.append(pool.WindowScatter.apply(ember.from_numpy(g), arg=arg, plan=plan).numpy())
        assert ("scatter_windows_2d" in used) == (min_size == 0)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)  # overlaps may add in another order
    assert results[0].shape == plan.shape and np.abs(results[0]).max() > 0


def test_max_pool2d_gradient_vs_torch(monkeypatch):
    x = RNG.standard_normal((16, 8, 41, 38)).astype(np.float32)  # windows above MIN_SIZE
    args = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = ember.nn.functional.max_pool2d(xe, **args), torch.nn.functional.max_pool2d(xt, **args)
    g = RNG.standard_normal(tuple(yt.shape)).astype(np.float32)
    used = spy_loops(monkeypatch)
    (ge,), (gt,) = ember.autograd.grad(ye, [xe], ember.tensor(g)), torch.autograd.grad(yt, [xt], torch.tensor(g))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-6, atol=1e-6)
    assert "scatter_windows_2d" in used


# -- SGD ----------------------------------------------------------------------------------------------------------
SGD_OPTIONS = [dict(momentum=0.0), dict(momentum=0.9), dict(momentum=0.9, nesterov=True, weight_decay=0.01),
               dict(momentum=0.5, dampening=0.3, maximize=True), dict(weight_decay=0.1, maximize=True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", SGD_OPTIONS)
def test_sgd_step_matches_reference_and_torch(monkeypatch, dtype, options):
    shape = (130, 257)  # above MIN_SIZE
    w0 = RNG.standard_normal(shape).astype(dtype)
    grads = [RNG.standard_normal(shape).astype(dtype) for _ in range(4)]
    results = []
    for min_size in (0, 1 << 40):  # the numba loop, then the NumPy reference
        monkeypatch.setattr(compiled, "MIN_SIZE", min_size)
        used = spy_loops(monkeypatch)
        w = ember.nn.Parameter(ember.tensor(w0))
        opt = ember.optim.SGD([w], lr=0.05, **options)
        for g in grads:
            w.grad = ember.tensor(g)
            opt.step()
        assert ("sgd" in used) == (min_size == 0)
        results.append(w.detach().numpy())
    w = torch.nn.Parameter(torch.tensor(w0))
    opt = torch.optim.SGD([w], lr=0.05, **options)
    for g in grads:
        w.grad = torch.tensor(g)
        opt.step()
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(results[0], results[1], **tol)
    np.testing.assert_allclose(results[0], w.detach().numpy(), **tol)
    assert not np.allclose(results[0], w0)


# -- add / sub with alpha -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.3, -2.5, 3, 1e-30])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_scaled_loop_matches_reference_and_torch(monkeypatch, threads, op, alpha):
    """float32 ``add``/``sub`` with ``alpha`` round once, as torch's fused multiply-add: the loop (on three threads)
    and the reference give torch's bits, NaN and inf included."""
    x, y = (RNG.standard_normal((2, 70_001)) * 100).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38]
    y[:6] = [1.0, -np.inf, -np.inf, -0.0, 0.0, 3e38]
    want = getattr(torch, op)(torch.tensor(x), torch.tensor(y), alpha=alpha).numpy()
    results = []
    for min_size in (0, 1 << 40):
        monkeypatch.setattr(compiled, "MIN_SIZE", min_size)
        monkeypatch.setattr(binary, "_THREADED_SIZE", 1 << 15)
        used = spy_loops(monkeypatch)
        results.append(getattr(ember, op)(ember.tensor(x), ember.tensor(y), alpha=alpha).numpy())
        assert ("add_scaled" in used) == (min_size == 0)
    for r in results:
        np.testing.assert_array_equal(r, want)
    assert np.array_equal(np.signbit(results[0]), np.signbit(want))


def test_add_scaled_broadcasts_and_differentiates():
    a, b = ember.randn(3, 1, requires_grad=True), ember.randn(4, requires_grad=True)
    ta, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (a, b))
    y, ty = ember.sub(a, b, alpha=0.7), torch.sub(ta, tb, alpha=0.7)
    assert y.grad_fn.name() == ty.grad_fn.name() == "SubBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g = RNG.standard_normal((3, 4)).astype(np.float32)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


# -- malloc --------------------------------------------------------------------------------------------------------
def _fresh(code, *args, **env):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}, **env}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          check=True).stdout


@pytest.mark.skipif(not os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else True, reason="glibc only")
def test_malloc_thresholds_raised_unless_the_environment_sets_them():
    code = "from ember._kernels import malloc; print(malloc.keep_freed_memory())"
    assert _fresh(code).strip() == "True"
    assert _fresh(code, MALLOC_TRIM_THRESHOLD_="1000000").strip() == "False"
    assert _fresh(code, GLIBC_TUNABLES="glibc.malloc.mmap_threshold=65536").strip() == "False"
    # four 8 MB arrays freed together are kept for the next four: no new page faults (glibc alone returns them to
    # the OS, and then each array faults its 2048 pages in again)
    code = ("import resource, sys, numpy as np\nif sys.argv[1] == 'ember': import ember\n"
            "def step():\n    arrays = [np.ones(1 << 21, np.float32) for _ in range(4)]\n"
            "step()\nbefore = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
            "for _ in range(10): step()\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)")
    run = lambda which: int(_fresh(code, which))
    assert run("ember") < 1000 < 5 * 2048 < run("numpy")
    assert malloc.MMAP_THRESHOLD <= 32 << 20  # glibc rejects larger
