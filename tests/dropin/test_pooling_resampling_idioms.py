"""Pooling and resampling idioms against torch: max/avg/Lp/adaptive/fractional pooling and unpooling, interpolate and
Upsample in every mode, grid_sample/affine_grid (spatial transformers), pixel and channel shuffles: values,
indices, gradients (ties, overlapping windows, all-padding windows), forward-mode tangents, dtypes, layouts and the
errors torch raises."""
import contextlib

import numpy as np
import pytest
import torch

import ember

@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():  # the arrays are small: torch's thread pool only adds waits
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2)}


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _lib(a, lib, dtype, grad):
    if not isinstance(a, np.ndarray):
        return a
    t = lib.tensor(a, dtype=getattr(lib, dtype)) if a.dtype.kind == "f" else lib.tensor(a)
    return t.requires_grad_() if grad and t.dtype.is_floating_point else t


def _np(t):
    t = t.detach()
    return (t.float() if t.dtype in (ember.bfloat16, torch.bfloat16, ember.float16, torch.float16) else t).numpy()


def _close(e, t, dtype="float64", scale=1):
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert e.dtype.name == str(t.dtype)[6:], (e.dtype, t.dtype)
    rtol, atol = TOL[dtype] if t.dtype.is_floating_point else (0, 0)
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol * scale, atol=atol * scale, equal_nan=True)


def check(fn, *arrays, dtype="float64", grad=True, seed=1):
    """``fn(F, lib, *tensors)`` under ember and torch: every output (values, dtype, shape) and, with ``grad``, the
    gradients of the float inputs under a random gradient of the first output."""
    te = [_lib(a, ember, dtype, grad) for a in arrays]
    tt = [_lib(a, torch, dtype, grad) for a in arrays]
    ye, yt = fn(ember.nn.functional, ember, *te), fn(torch.nn.functional, torch, *tt)
    ye, yt = (ye, yt) if isinstance(yt, tuple) else ((ye,), (yt,))
    assert len(ye) == len(yt)
    for e, t in zip(ye, yt):
        _close(e, t, dtype)
    if grad and yt[0].requires_grad:
        g = np.random.default_rng(seed).standard_normal(tuple(yt[0].shape))
        de = [t for t in te if isinstance(t, ember.Tensor) and t.requires_grad]
        dt = [t for t in tt if isinstance(t, torch.Tensor) and t.requires_grad]
        ge = ember.autograd.grad(ye[0], de, ember.tensor(g, dtype=ye[0].dtype))
        gt = torch.autograd.grad(yt[0], dt, torch.tensor(g, dtype=yt[0].dtype))
        for e, t in zip(ge, gt):
            _close(e, t, dtype, scale=10)


def same_error(call, match=True):
    """ember raises what torch raises: the type and (with ``match``) the message."""
    with pytest.raises(Exception) as want:
        call(torch.nn.functional, torch)
    with pytest.raises(type(want.value)) as got:
        call(ember.nn.functional, ember)
    if match:
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


# -- max pooling -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, stride=3, ceil_mode=True),  # the last window would start past
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),  # the input: dropped
                                dict(kernel_size=2, stride=2, padding=1, dilation=2, ceil_mode=True),
                                dict(kernel_size=3, dilation=2, padding=1, stride=None)])
def test_max_pool_geometry_values_indices_grads(n, kw):
    x = np.round(_rand(*(2, 3, 7, 6, 5)[:n + 2]) * 2)  # many ties
    check(lambda F, L, x: getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw), x)
    check(lambda F, L, x: getattr(F, f"max_pool{n}d")(x, **kw), x[0])  # unbatched


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=2, stride=2, padding=1),
                                dict(kernel_size=3, stride=1, padding=1, dilation=2),
                                dict(kernel_size=2, stride=2, padding=1, ceil_mode=True)])
def test_max_pool_windows_tied_with_the_padding(n, kw):
    """A window whose elements are all -inf (masked logits, log-probabilities) points at its first element inside
    the input, never at the padding, and routes its gradient there."""
    x = np.full((1, 2) + (5,) * n, -np.inf)
    x[0, 1].flat[::3] = 1.0
    check(lambda F, L, x: getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw), x)
    xi = np.full((1, 1) + (4,) * n, np.iinfo(np.int64).min)
    check(lambda F, L, x: getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw), xi, grad=False)


@pytest.mark.parametrize("call", [
    lambda F, L: F.max_pool2d(L.zeros(1, 1, 9, 9), 3, 1, 2, dilation=2),  # fine for the effective kernel (5), not 3
    lambda F, L: F.max_pool3d(L.zeros(1, 1, 9, 9, 9), (3, 5, 3), 1, (1, 1, 2), 2),
    lambda F, L: F.max_pool2d(L.zeros(1, 1, 9, 9), (3, 5), 1, (2, 1), 2),
    lambda F, L: F.max_pool2d(L.zeros(1, 1, 9, 9), 1, 1, 1, dilation=3),
    lambda F, L: F.max_pool1d(L.zeros(1, 1, 9), 3, 1, 2, 2),
    lambda F, L: F.max_pool1d(L.zeros(1, 1, 9), 3, 1, 2, 2, return_indices=True),
    lambda F, L: F.max_pool1d(L.zeros(1, 1, 9), 3, 1, -1),
    lambda F, L: F.avg_pool2d(L.zeros(1, 1, 9, 9), 3, 1, 2),
])
def test_pool_padding_errors(call):
    same_error(call)


def test_pooling_dtype_support():
    """torch's CPU kernels: max pooling takes integers (not bool), 1-D max pooling without indices and the adaptive
    max and unpooling only floats, average pooling int64."""
    x = np.random.default_rng(0).integers(0, 50, (2, 3, 6, 6))
    for dtype in ("int64", "int32", "uint8"):
        check(lambda F, L, x: F.max_pool2d(x, 3, 2, 1, return_indices=True), x.astype(dtype))
        check(lambda F, L, x: F.max_pool1d(x, 2, return_indices=True), x[0].astype(dtype))
        check(lambda F, L, x: F.max_pool3d(x, 2), x.astype(dtype))
    check(lambda F, L, x: F.avg_pool2d(x, 3, 2, 1), x)
    for dtype in ("bool", "int32", "uint8"):
        xd = x.astype(dtype)
        same_error(lambda F, L: F.avg_pool2d(L.tensor(xd), 2))
        same_error(lambda F, L: F.max_pool1d(L.tensor(xd[0]), 2))
        same_error(lambda F, L: F.adaptive_max_pool2d(L.tensor(xd), 4))
        same_error(lambda F, L: F.max_unpool2d(L.tensor(xd), L.zeros(xd.shape, dtype=L.long), 2))
    same_error(lambda F, L: F.max_pool2d(L.tensor(x > 25), 2))
    same_error(lambda F, L: F.adaptive_max_pool3d(L.tensor(x[None]), 2))


# -- average, Lp and adaptive pooling ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
def test_avg_pool_counts_and_divisors(n):
    x = _rand(*(2, 3, 7, 6, 5)[:n + 2])
    for kw in (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
               dict(kernel_size=2, stride=2, padding=1, ceil_mode=True)):
        for cip in (True, False):
            check(lambda F, L, x: getattr(F, f"avg_pool{n}d")(x, count_include_pad=cip, **kw), x)
        if n > 1:
            check(lambda F, L, x: getattr(F, f"avg_pool{n}d")(x, divisor_override=2, **kw), x)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lp_pool(n):
    x = _rand(*(2, 3, 7, 6, 5)[:n + 2])
    for p in (1, 2, 3.5, float("inf"), -float("inf")):
        check(lambda F, L, x: getattr(F, f"lp_pool{n}d")(x, p, 2, ceil_mode=True), np.abs(x) + 0.1)
    check(lambda F, L, x: getattr(F, f"lp_pool{n}d")(x, float("inf"), 3, 2), x)
    # a window summing to zero has a zero gradient, not NaN
    check(lambda F, L, x: getattr(F, f"lp_pool{n}d")(x, 2, 2), np.zeros((1, 2) + (4,) * n))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_adaptive_pools_with_overlapping_windows(n):
    """Non-divisible sizes give windows that overlap (and, upsampling, repeat elements): values, indices and the
    gradients summed over the windows; ties of a ReLU's zeros go to the first element."""
    x = np.maximum(_rand(*(2, 3, 7, 6, 5)[:n + 2]), 0)
    for size in (3, 5, 9, (None,) * (n - 1) + (4,) if n > 1 else 4):
        check(lambda F, L, x: getattr(F, f"adaptive_avg_pool{n}d")(x, size), x)
        check(lambda F, L, x: getattr(F, f"adaptive_max_pool{n}d")(x, size, return_indices=True), x)
    check(lambda F, L, x: getattr(F, f"adaptive_max_pool{n}d")(x, 4, True), x[0])  # unbatched
    check(lambda F, L, x: getattr(F, f"adaptive_avg_pool{n}d")(x, 4), x, dtype="float32")


def test_adaptive_max_pool_nan_windows():
    """The last NaN of a window is its max, as torch's kernel keeps it; its gradient goes there."""
    for shape in ((1, 2, 7, 7), (1, 2, 8, 8), (1, 2, 6, 6)):
        x = _rand(*shape)
        x[_rand(*shape, seed=3) > 0.8] = np.nan
        check(lambda F, L, x: F.adaptive_max_pool2d(x, 3, return_indices=True), x)
        check(lambda F, L, x: F.adaptive_max_pool1d(x[0], 4, return_indices=True), x[0])


def test_spatial_pyramid_pooling():
    def spp(F, L, x):
        return L.cat([F.adaptive_max_pool2d(x, s).flatten(1) for s in (1, 2, 4)] +
                     [F.adaptive_avg_pool2d(x, s).flatten(1) for s in (3, 6)], 1)
    check(spp, np.maximum(_rand(2, 3, 11, 13), 0))
    check(lambda F, L, x: L.flatten(L.nn.AdaptiveAvgPool2d((1, 1))(x), 1), _rand(2, 3, 5, 7), dtype="float32")


@pytest.mark.parametrize("call", [
    lambda F, L: F.adaptive_avg_pool1d(L.zeros(1, 2, 5), (None,)),
    lambda F, L: F.adaptive_max_pool1d(L.zeros(1, 2, 5), None),
    lambda F, L: F.adaptive_avg_pool1d(L.zeros(1, 2, 5), 2.0),
    lambda F, L: F.adaptive_avg_pool2d(L.zeros(1, 2, 5, 5), (2.0, 3)),
    lambda F, L: F.adaptive_avg_pool2d(L.zeros(1, 2, 5, 5), None),
    lambda F, L: F.adaptive_avg_pool3d(L.zeros(2, 0, 4, 4, 4), 2),
    lambda F, L: F.adaptive_max_pool2d(L.zeros(2, 0, 4, 4), 2),
])
def test_adaptive_output_size_and_shape_errors(call):
    same_error(call)


def test_adaptive_pool_sizes_accepted():
    x = _rand(2, 3, 7)
    check(lambda F, L, x: F.adaptive_avg_pool1d(x, L.tensor(3)), x)
    check(lambda F, L, x: F.adaptive_max_pool1d(x, [4]), x)
    check(lambda F, L, x: F.adaptive_avg_pool2d(x, (None, None)), _rand(1, 2, 3, 4))
    check(lambda F, L, x: F.adaptive_avg_pool1d(x, 3), _rand(2, 0, 7), grad=False)  # zero channels
    check(lambda F, L, x: F.adaptive_avg_pool2d(x, (3, 2)), _rand(2, 0, 7, 5), grad=False)
    check(lambda F, L, x: F.interpolate(x, size=(3, 2), mode="area"), _rand(2, 0, 7, 5), grad=False)
    for n in (1, 2, 3):  # an empty leading dim of an unbatched input
        check(lambda F, L, x: getattr(F, f"adaptive_avg_pool{n}d")(x, 3), _rand(*(0, 7, 6, 5)[:n + 1]), grad=False)
        check(lambda F, L, x: getattr(F, f"adaptive_max_pool{n}d")(x, 3), _rand(*(0, 7, 6, 5)[:n + 1]), grad=False)


# -- unpooling, fractional pooling -------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_round_trip(n):
    x = _rand(*(2, 3, 9, 7, 7)[:n + 2])

    def unpool(F, L, x, k=3, s=2, p=1, **kw):
        y, i = getattr(F, f"max_pool{n}d")(x, k, s, p, return_indices=True)
        return getattr(F, f"max_unpool{n}d")(y, i, k, s, p, **kw)
    check(unpool, x)
    check(lambda F, L, x: unpool(F, L, x, output_size=x.shape), x)
    check(lambda F, L, x: unpool(F, L, x, 3, 1, 1), x)  # overlapping windows: an element can be the max twice
    check(lambda F, L, x: getattr(L.nn, f"MaxUnpool{n}d")(2)(*getattr(L.nn, f"MaxPool{n}d")(2, return_indices=True)(x),
                                                           output_size=x.size()), x)
    same_error(lambda F, L: getattr(F, f"max_unpool{n}d")(L.ones((1, 1) + (2,) * n),
                                                        L.zeros((1, 1) + (2,) * n, dtype=L.int32), 2))


@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_with_samples(n):
    x = np.round(_rand(*(2, 3, 9, 8, 8)[:n + 2]) * 2)
    s = np.random.default_rng(5).uniform(0, 1, (2, 3, n))
    for kw in (dict(kernel_size=2, output_size=4), dict(kernel_size=3, output_size=(5,) * n),
               dict(kernel_size=2, output_ratio=(0.5,) * n)):
        check(lambda F, L, x: getattr(F, f"fractional_max_pool{n}d")(x, return_indices=True,
                                                                     _random_samples=L.tensor(s), **kw), x)
    check(lambda F, L, x: getattr(L.nn, f"FractionalMaxPool{n}d")(2, output_ratio=0.5,
                                                                 _random_samples=L.tensor(s[:1]))(x), x[0])
    check(lambda F, L, x: getattr(F, f"fractional_max_pool{n}d")(x, 2, output_size=3, _random_samples=L.tensor(s)),
          _rand(*(0, 3, 9, 8, 8)[:n + 2]), grad=False)  # empty batch
    same_error(lambda F, L: getattr(F, f"fractional_max_pool{n}d")(
        L.tensor(x), 2, output_size=3, _random_samples=L.tensor(s, requires_grad=True)))
    with ember.no_grad():  # the check is autograd's
        getattr(ember.nn.functional, f"fractional_max_pool{n}d")(ember.tensor(x), 2, output_size=3,
                                                                 _random_samples=ember.tensor(s, requires_grad=True))


# -- interpolate -------------------------------------------------------------------------------------------------------
_MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1), ("nearest-exact", 3), ("area", 1),
          ("area", 3), ("linear", 1), ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)]


@pytest.mark.parametrize("mode,n", _MODES)
def test_interpolate_sizes_and_scales(mode, n):
    x = _rand(*(2, 3, 7, 6, 5)[:n + 2])
    aligns = (None,) if mode in ("nearest", "nearest-exact", "area") else (False, True)
    for kw in (dict(scale_factor=0.35), dict(scale_factor=1 / 3), dict(scale_factor=1.3, recompute_scale_factor=True),
               dict(scale_factor=(1.5,) * n), dict(size=11), dict(size=[2] * n), dict(size=1)):
        for a in aligns:
            extra = {} if a is None else dict(align_corners=a)
            check(lambda F, L, x: F.interpolate(x, mode=mode, **kw, **extra), x)
    check(lambda F, L, x: F.interpolate(x, scale_factor=2, mode=mode), x[0:1, 0:1])
    check(lambda F, L, x: L.nn.Upsample(scale_factor=1.7, mode=mode)(x), x, dtype="float32")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_and_uint8(mode):
    x = _rand(2, 3, 17, 13)
    for kw in (dict(scale_factor=0.3, recompute_scale_factor=True), dict(size=(5, 20)), dict(size=(4, 4))):
        for a in (False, True):
            check(lambda F, L, x: F.interpolate(x, mode=mode, antialias=True, align_corners=a, **kw), x)
    img = np.random.default_rng(0).integers(0, 256, (2, 3, 17, 13)).astype(np.uint8)
    check(lambda F, L, x: F.interpolate(x, size=(5, 7), mode=mode, antialias=True), img)
    check(lambda F, L, x: F.interpolate(x, size=(25, 27), mode=mode), img)
    check(lambda F, L, x: F.interpolate(x, scale_factor=1.5), img)


def test_interpolate_returns_a_new_tensor():
    """Resizing to the same size still gives a new tensor: writing into it leaves the input alone."""
    for mode in ("nearest", "bilinear", "nearest-exact", "area", "bicubic"):
        for lib in (torch, ember):
            x = lib.ones(1, 1, 4, 4, requires_grad=True)
            y = lib.nn.functional.interpolate(x, size=(4, 4), mode=mode)
            assert y.grad_fn is not None
            y.detach().add_(1)
            assert float(x.detach().sum()) == 16


@pytest.mark.parametrize("call", [
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), size=3.5),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), size=(3.0, 4.0)),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), size=(3, None)),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), scale_factor=float("inf")),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), scale_factor=(2.0, float("nan")), mode="bilinear"),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), scale_factor=1e30),
    lambda F, L: F.interpolate(L.zeros(2, 0, 4, 4), size=3),
    lambda F, L: F.interpolate(L.zeros(2, 0, 4), size=3, mode="linear"),
    lambda F, L: F.interpolate(L.zeros(0, 0, 4, 4, 4), size=3, mode="trilinear"),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), size=3, mode="nearest", antialias=True),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4), size=3, recompute_scale_factor=True),
    lambda F, L: F.interpolate(L.zeros(1, 1, 4, 4, dtype=L.int64), size=3, mode="bilinear"),
])
def test_interpolate_errors(call):
    same_error(call, match=False)


def test_interpolate_size_types():
    x = _rand(1, 2, 5, 6)
    check(lambda F, L, x: F.interpolate(x, size=np.int64(3)), x)
    check(lambda F, L, x: F.interpolate(x, size=(L.tensor(3), 4)), x)
    check(lambda F, L, x: F.interpolate(x, size=L.Size([3, 4]), mode="bilinear"), x)


# -- layouts -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,call", [
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d_idx", lambda F, x: F.max_pool2d(x, 2, return_indices=True)[1]),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, 2, 1)), ("adaptive_avg", lambda F, x: F.adaptive_avg_pool2d(x, 3)),
    ("adaptive_max", lambda F, x: F.adaptive_max_pool2d(x, 3)), ("lp_pool2d", lambda F, x: F.lp_pool2d(x, 2, 2)),
    ("unpool", lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)),
    ("nearest", lambda F, x: F.interpolate(x, scale_factor=2)),
    ("bilinear", lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear")),
    ("bicubic_aa", lambda F, x: F.interpolate(x, size=3, mode="bicubic", antialias=True)),
    ("area", lambda F, x: F.interpolate(x, size=3, mode="area")),
    ("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 2)),
    ("pixel_shuffle", lambda F, x: F.pixel_shuffle(x.repeat(1, 2, 1, 1), 2)),
    ("channel_shuffle", lambda F, x: F.channel_shuffle(x, 2)),
    ("grid_sample", lambda F, x: F.grid_sample(x, x.new_zeros(2, 3, 3, 2), align_corners=False)),
])
def test_channels_last_outputs(name, call):
    """A channels_last input gives the layout torch's kernels write (channels_last CNNs keep their format)."""
    x = _rand(2, 4, 8, 6)
    ye = call(ember.nn.functional, ember.tensor(x).to(memory_format=ember.channels_last))
    yt = call(torch.nn.functional, torch.tensor(x).to(memory_format=torch.channels_last))
    assert ye.stride() == yt.stride()
    np.testing.assert_allclose(ye.detach().double().numpy(), yt.detach().double().numpy(), rtol=1e-12, atol=1e-12)


def test_channels_last_3d_outputs():
    x = _rand(2, 3, 4, 6, 6)
    for call in (lambda F, x: F.max_pool3d(x, 2), lambda F, x: F.avg_pool3d(x, 2),
                 lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
                 lambda F, x: F.interpolate(x, size=3, mode="area")):
        ye = call(ember.nn.functional, ember.tensor(x).to(memory_format=ember.channels_last_3d))
        yt = call(torch.nn.functional, torch.tensor(x).to(memory_format=torch.channels_last_3d))
        assert ye.stride() == yt.stride()


def test_shuffles_by_one_are_copies():
    for call in (lambda F, x: F.pixel_shuffle(x, 1), lambda F, x: F.pixel_unshuffle(x, 1),
                 lambda F, x: F.channel_shuffle(x, 1), lambda F, x: F.channel_shuffle(x, 4)):
        for lib in (torch, ember):
            x = lib.zeros(1, 4, 3, 3)
            call(lib.nn.functional, x).add_(1)
            assert float(x.abs().sum()) == 0


# -- grid_sample / affine_grid -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_exact_and_outside_points(mode, padding_mode):
    """Points on pixel centres and borders, between pixels (ties of nearest), far outside: values and gradients."""
    g = np.random.default_rng(2).uniform(-1.6, 1.6, (2, 5, 4, 2))
    g[0, 0] = [[1.0, -1.0], [0.0, 0.0], [3.7, -4.2], [-1.0, 1.0]]
    lin = np.stack(np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-1, 1, 7)), -1)[None].repeat(2, 0)
    for align in (False, True):
        kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
        check(lambda F, L, x, g: F.grid_sample(x, g, **kw), _rand(2, 3, 6, 7), g)
        check(lambda F, L, x, g: F.grid_sample(x, g, **kw), _rand(2, 2, 4, 5), lin)
        check(lambda F, L, x, g: L.grid_sampler(x, g, ("bilinear", "nearest", "bicubic").index(mode),
                                                ("zeros", "border", "reflection").index(padding_mode), align),
              _rand(2, 3, 6, 7), g, grad=False)
    for dtype in ("float16", "bfloat16"):
        check(lambda F, L, x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=False),
              _rand(2, 3, 6, 7), g, dtype=dtype, grad=False)


@pytest.mark.parametrize("align", [False, True])
def test_spatial_transformer(align):
    """STN: affine_grid from a predicted theta, grid_sample, gradients to both the image and theta (2-D and 3-D)."""
    def stn(F, L, x, theta):
        return F.grid_sample(x, F.affine_grid(theta, x.size(), align_corners=align), align_corners=align)
    theta = np.array([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]] * 2) + _rand(2, 2, 3) * 0.1
    check(stn, _rand(2, 3, 8, 9), theta)
    theta3 = np.array([[[0.9, 0.1, 0.05, 0], [-0.1, 1.1, 0.0, 0.1], [0, 0, 1, 0]]] * 2) + _rand(2, 3, 4) * 0.1
    check(stn, _rand(2, 3, 4, 5, 6), theta3)
    check(lambda F, L, x, t: L.grid_sampler_3d(x, F.affine_grid(t, x.size(), align_corners=align), 0, 1, align),
          _rand(2, 3, 4, 5, 6), theta3)
    with pytest.warns(UserWarning, match="unit-size grids") if align else contextlib.nullcontext():
        check(lambda F, L, t: F.affine_grid(t, (2, 3, 1, 7), align_corners=align), theta, dtype="float32")


# -- forward mode ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda F, L, x: F.max_pool2d(x, 3, 2, 1), lambda F, L, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    lambda F, L, x: F.adaptive_avg_pool2d(x, 4), lambda F, L, x: F.adaptive_max_pool2d(x, 4),
    lambda F, L, x: F.interpolate(x, scale_factor=1.7, mode="bilinear"),
    lambda F, L, x: F.interpolate(x, size=(9, 4), mode="bicubic", align_corners=True),
    lambda F, L, x: F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True),
    lambda F, L, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2, output_size=(7, 6)),
])
def test_forward_mode_tangents(call):
    x, t = _rand(2, 3, 7, 6), _rand(2, 3, 7, 6, seed=1)
    out = []
    for lib in (ember, torch):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            y = call(lib.nn.functional, lib, fa.make_dual(lib.tensor(x), lib.tensor(t)))
            out.append(fa.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-12)
