"""The numba loops of grid_sample (neighbours, sampling at points and its gradients) and of interpolate (resampling
along an axis and its adjoint) against their NumPy references, grid_sample and interpolate through them against
torch (float32 grid_sample bit-exact), on several threads, under create_graph, and without numba."""
import numpy as np
import pytest
import torch

import ember
from ember._kernels import compiled
from ember._ops import sample
from ember.nn.functional import upsampling, vision

from .conftest import spy_loops

numba = pytest.importorskip("numba")
RNG = np.random.default_rng(0)
N, C, H, W, HO, WO = 2, 8, 30, 40, 50, 60  # N * C * HO * WO above compiled.MIN_SIZE: the loops run


def _points(dtype):
    """Pixel coordinates in and around a (H, W) image, with exact borders, halves, NaN and infinities."""
    px = RNG.uniform(-2, W + 1, (N, 500)).astype(dtype)
    py = RNG.uniform(-2, H + 1, (N, 500)).astype(dtype)
    px[0, :12] = [0, W - 1, -1, W, -0.5, W - 0.5, np.nan, np.inf, -np.inf, 1e30, -1e30, 3.5]
    py[0, :12] = [H - 1, 0, 0, 5, H - 0.5, -0.5, 2, 3, np.nan, 4, 5, np.inf]
    return px, py


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("linear", [True, False], ids=["bilinear", "nearest"])
def test_neighbours_loop_matches_reference(dtype, linear):
    px, py = _points(dtype)
    if not linear:
        px, py = np.round(px), np.round(py)
    got = sample.neighbours(px, py, H, W, linear, 1 << 20)
    with np.errstate(invalid="ignore"):
        ref = sample.neighbours_numpy(px, py, H, W, linear)
    np.testing.assert_array_equal(got[0], ref[0])
    for a, b in zip(got[1:], ref[1:]):
        if b is not None:
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pad", [0, 1, 2], ids=["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(H, W), (1, 1)])
def test_grid_coords_loop_matches_reference(dtype, pad, align, size):
    grid = RNG.uniform(-3.5, 3.5, (N, 5000, 2)).astype(dtype)
    ends = [(s - 1) / s if not align else 1 for s in size[::-1]]
    grid[0, :14, 0] = [-1, 1, 0, ends[0], -ends[0], np.nan, np.inf, -np.inf, 1e30, -1e30, 3, -3, 5, 0.5]
    grid[0, :14, 1] = [1, -1, np.nan, -ends[1], ends[1], 0, 2, np.inf, -np.inf, 7, -5, 1e-8, -1e-8, 1e20]
    grid[1] = np.round(grid[1] * size[1] / 2) * 2 / size[1]  # pixel centres, edges and halves
    grid[0, 14:2000] = RNG.choice([-1, 1], (1986, 2)) * 10 ** RNG.uniform(-8, 9, (1986, 2))  # many reflections
    for nearest in (False, True):
        got = sample.grid_coords(grid, *size, align, pad, nearest, 1 << 20)
        ref = sample.grid_coords_numpy(grid, *size, align, pad, nearest)
        for a, b in zip(got, ref):
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, b)
        # the Tensor-op formula a backward pass with create_graph differentiates: the same values and derivatives
        g = ember.tensor(grid, requires_grad=True)
        pixels = vision._pixels(g, size, align, vision._PADS[pad], nearest)
        for i, p in enumerate(pixels):
            np.testing.assert_array_equal(got[i], p.detach().numpy())
            if not nearest:
                np.testing.assert_array_equal(got[2 + i], ember.autograd.grad(p.sum(), g)[0][..., i].numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("linear", [True, False], ids=["bilinear", "nearest"])
def test_sample_points_loops_match_reference(dtype, linear):
    x = RNG.standard_normal((N, C, H * W)).astype(dtype)
    px, py = _points(dtype)
    if not linear:
        px, py = np.round(px), np.round(py)
    px, py = np.nan_to_num(px), np.nan_to_num(py)
    idx, wt, dist = sample.neighbours_numpy(px, py, H, W, linear)
    idx, wt = np.tile(idx, (1, 1, 10)), np.tile(wt, (1, 1, 10))  # 5000 points: N * C * P above MIN_SIZE
    dist = None if dist is None else np.tile(dist, (1, 1, 10))
    g = RNG.standard_normal((N, C, idx.shape[2])).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(sample.sample_points(x, idx, wt), sample.sample_points_numpy(x, idx, wt), rtol=rtol,
                               atol=rtol)
    got = sample.sample_points_grad(x, g, idx, wt, dist, True, linear)
    ref = sample.sample_points_grad_numpy(x, g, idx, wt, dist, True, linear)
    for a, b in zip(got, ref):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 10)


def _grid_sample_both(mode, padding_mode, align, dtype="float32", threads=None):
    x_np = RNG.standard_normal((N, C, H, W))
    grid_np = RNG.uniform(-1.2, 1.2, (N, HO, WO, 2))
    g_np = RNG.standard_normal((N, C, HO, WO))
    out = []
    for lib in (ember, torch):
        x = lib.tensor(x_np, dtype=getattr(lib, dtype), requires_grad=True)
        grid = lib.tensor(grid_np, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align)
        out.append([y] + list(lib.autograd.grad(y, (x, grid), lib.tensor(g_np, dtype=getattr(lib, dtype)))))
    return [[t.detach().numpy() for t in ts] for ts in out]


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_float32_bit_exact(monkeypatch, mode, padding_mode, align):
    """The loops round as torch's 2-D kernel: the same output, input gradient and grid gradient, bit for bit."""
    used = spy_loops(monkeypatch)
    for e, t in zip(*_grid_sample_both(mode, padding_mode, align)):
        np.testing.assert_array_equal(e, t)
    assert {"grid_coords_2d", "neighbours_2d", "sample_points", "sample_points_grad"} <= set(used)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_float64_and_threads(threads, padding_mode, align):
    for e, t in zip(*_grid_sample_both("bilinear", padding_mode, align, "float64")):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-11)


def test_grid_sample_create_graph_through_the_loops():
    x_np, grid_np = RNG.standard_normal((N, C, H, W)), RNG.uniform(-1.1, 1.1, (N, HO, WO, 2))
    g_np = RNG.standard_normal((N, C, HO, WO))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(x_np, requires_grad=True)
        grid = lib.tensor(grid_np, requires_grad=True)
        y = lib.nn.functional.grid_sample(x, grid, padding_mode="border", align_corners=False)
        gx, gg = lib.autograd.grad(y, (x, grid), lib.tensor(g_np), create_graph=True)
        res.append([gx, gg] + list(lib.autograd.grad((gx ** 2).sum() + (gg ** 2).sum(), (x, grid))))
    for e, t in zip(*res):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-8, atol=1e-9)


def test_grid_sample_without_numba(monkeypatch):
    monkeypatch.setattr(compiled, "kernel", lambda name, size: None)
    for mode in ("bilinear", "nearest"):
        for e, t in zip(*_grid_sample_both(mode, "reflection", False)):
            np.testing.assert_allclose(e, t, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode,kw", [("bilinear", dict(scale_factor=2, align_corners=False)),
                                     ("bilinear", dict(size=(23, 71), align_corners=True)),
                                     ("bicubic", dict(scale_factor=0.7, align_corners=False)),
                                     ("bilinear", dict(size=(17, 29), antialias=True, align_corners=False)),
                                     ("nearest", dict(scale_factor=2)), ("nearest-exact", dict(size=(45, 61)))])
def test_resample_loops_match_reference(monkeypatch, dtype, mode, kw):
    x_np = RNG.standard_normal((N, C, H, W)).astype(dtype)
    g = None
    res = []
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(compiled, "kernel", lambda name, size: None)
        x = ember.tensor(x_np, requires_grad=True)
        y = ember.nn.functional.interpolate(x, mode=mode, **kw)
        g = RNG.standard_normal(tuple(y.shape)).astype(dtype) if g is None else g
        res.append((y.detach().numpy(), ember.autograd.grad(y, x, ember.tensor(g))[0].numpy()))
    (y1, g1), (y2, g2) = res
    np.testing.assert_array_equal(y1, y2)  # the same products and sums, in the same order
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(g1, g2, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("mode,align", [("bilinear", False), ("bilinear", True), ("bicubic", False),
                                        ("nearest", None)])
def test_interpolate_through_the_loops_vs_torch(monkeypatch, threads, mode, align):
    used = spy_loops(monkeypatch)
    x_np = RNG.standard_normal((4, 16, 32, 32))
    g_np = RNG.standard_normal((4, 16, 64, 64))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(x_np, dtype=lib.float32, requires_grad=True)
        y = lib.nn.functional.interpolate(x, scale_factor=2, mode=mode, align_corners=align)
        res.append((y, lib.autograd.grad(y, x, lib.tensor(g_np, dtype=lib.float32))[0]))
    for e, t in zip(*res):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert "resample_axis_adjoint" in used and ("resample_axis" in used or mode == "nearest")
    assert upsampling._SPREAD <= 4 * 16 * 64 * 64  # large enough to be spread over the threads
