"""ember.fft, the window functions and stft/istft against torch: values, dtypes, gradients and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

R = np.random.default_rng(0)


def sample(shape, dtype):
    a = R.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * R.standard_normal(shape)
    return a.astype(dtype)


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if np.dtype(dtype) in (np.float32, np.complex64) else dict(rtol=1e-9,
                                                                                               atol=1e-9)


def both(fn, a, device="cpu", **kw):
    """``fn`` of ``a`` through ember and torch, with a random (complex where the output is) output gradient; the
    outputs and the input gradients, checked to agree."""
    e = ember.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    ye, yt = fn(ember, e, **kw), fn(torch, t, **kw)
    assert str(ye.dtype).split(".")[1] == str(yt.dtype).split(".")[1]
    assert tuple(ye.shape) == tuple(yt.shape)
    np.testing.assert_allclose(ye.detach().cpu().numpy(), yt.detach().resolve_conj().numpy(), **tol(a.dtype))
    c, w = sample(tuple(yt.shape), ye.detach().cpu().numpy().dtype), sample(tuple(yt.shape), np.float64)
    # |y + C| weighed by a random W: a real loss whose gradient mixes both parts of a complex y (ember's complex
    # `*` lacks the conjugate in its backward, so the loss avoids multiplying complex tensors)
    loss_e = ((ye + ember.tensor(c, device=device)).abs() * ember.tensor(w, device=device)).sum()
    loss_t = ((yt + torch.tensor(c)).abs() * torch.tensor(w)).sum()
    loss_e.backward()
    loss_t.backward()
    assert e.grad.dtype == e.dtype
    scale = max(1.0, np.abs(t.grad.resolve_conj().numpy()).max())
    np.testing.assert_allclose(e.grad.cpu().numpy() / scale, t.grad.resolve_conj().numpy() / scale, **tol(a.dtype))
    return ye, yt


def fft_fn(name):
    return lambda lib, x, **kw: getattr(lib.fft, name)(x, **kw)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft"}


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape,dim", [((8,), -1), ((3, 7), -1), ((3, 7), 0), ((2, 5, 6), 1)])
@pytest.mark.parametrize("n,norm", [(None, None), (4, "forward"), (11, "ortho"), (5, "backward")])
def test_one_dimensional(name, dtype, shape, dim, n, norm, device):
    if name in REAL_ONLY and np.dtype(dtype).kind == "c":
        pytest.skip("real inputs only")
    both(fft_fn(name), sample(shape, dtype), device, n=n, dim=dim, norm=norm)


N_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape,s,dim,norm", [((4, 6), None, None, None), ((3, 5, 6), (4, 7), None, "forward"),
                                              ((3, 5, 6), None, (0, 2), "ortho"), ((3, 5, 6), (5, -1), (2, 0), None),
                                              ((2, 3, 4, 5), (3, 4, 6), (1, 2, 3), "backward")])
def test_n_dimensional(name, dtype, shape, s, dim, norm, device):
    if name.startswith(("rfft", "ihfft")) and np.dtype(dtype).kind == "c":
        pytest.skip("real inputs only")
    kw = {} if dim is None else dict(dim=dim)
    if name.endswith("2") and dim is None and len(shape) != 2 and s is None:
        pytest.skip("covered")
    if name.endswith("2") and (dim is not None and len(dim) != 2 or s is not None and len(s) != 2):
        pytest.skip("two dimensions only")
    both(fft_fn(name), sample(shape, dtype), device, s=s, norm=norm, **kw)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_integer_inputs_promote(dtype):
    a = (R.standard_normal((3, 6)) * 5).astype(dtype)
    for name in ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"]:
        e, t = getattr(ember.fft, name)(ember.tensor(a)), getattr(torch.fft, name)(torch.tensor(a))
        assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
        np.testing.assert_allclose(e.numpy(), t.resolve_conj().numpy(), rtol=1e-5, atol=1e-4)


def test_zero_dimensional_and_out():
    e, t = ember.fft.fftn(ember.tensor(2.5)), torch.fft.fftn(torch.tensor(2.5))
    assert e.shape == () and e.dtype is ember.complex64 and e.numpy() == t.numpy()
    out = ember.empty(0, dtype=ember.complex64)
    r = ember.fft.fft(ember.arange(4.), out=out)
    assert r is out and np.allclose(out.numpy(), np.fft.fft(np.arange(4.)))
    o = ember.empty(3)
    ember.fft.irfft(ember.ones(2, dtype=ember.complex64), out=o)
    assert o.shape == (2,) and np.allclose(o.numpy(), [1, 0])


@pytest.mark.parametrize("fn", [
    lambda L: L.fft.fft(L.ones(4), norm="foo"),
    lambda L: L.fft.fft(L.ones(4), n=0),
    lambda L: L.fft.fft(L.ones(0)),
    lambda L: L.fft.irfft(L.ones(1)),
    lambda L: L.fft.fft(L.ones(4), dim=2),
    lambda L: L.fft.fftn(L.ones(4, 3), s=(2, 2, 2)),
    lambda L: L.fft.fftn(L.ones(4, 3), s=(2, 2), dim=(0,)),
    lambda L: L.fft.fftn(L.ones(4, 3), dim=(0, 0)),
    lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)),
    lambda L: L.fft.fft(L.ones(4, dtype=L.float16)),
])
def test_errors(fn):
    with pytest.raises(Exception) as t:
        fn(torch)
    with pytest.raises(type(t.value)) as e:
        fn(ember)
    assert str(e.value) == str(t.value)


def test_higher_order_gradients():
    # real-to-real chains: ember's complex `*` lacks the conjugate in its backward, which double backward through
    # a complex loss would meet (gradgradcheck below covers the complex paths)
    a = sample((3, 8), np.float64)
    chains = [lambda L, x: L.fft.irfft(x, n=7), lambda L, x: L.fft.hfft(x, norm="ortho"),
              lambda L, x: L.fft.irfftn(L.fft.rfftn(x, s=(4, 10), norm="forward"), s=(3, 9)),
              lambda L, x: L.fft.irfft(L.fft.ihfft(x, n=6), n=11)]
    for fn in chains:
        outs = []
        for lib in (ember, torch):
            x = lib.tensor(a, requires_grad=True)
            (g,) = lib.autograd.grad(fn(lib, x).pow(3).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad(g.pow(2).sum(), x)
            outs.append((g.detach().numpy(), gg.numpy()))
        for u, v in zip(*outs):
            np.testing.assert_allclose(u, v, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfftn"])
def test_gradcheck(name):
    complex_in = name in ("fft", "irfft", "hfft", "fft2", "irfftn")
    x = ember.tensor(sample((3, 4), np.complex128 if complex_in else np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: getattr(ember.fft, name)(x), (x,))
    assert ember.autograd.gradgradcheck(lambda x: getattr(ember.fft, name)(x), (x,))


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.3])
def test_frequencies(n, d):
    for name in ["fftfreq", "rfftfreq"]:
        for kw in [{}, dict(dtype=torch.float64)]:
            t = getattr(torch.fft, name)(n, d, **kw)
            e = getattr(ember.fft, name)(n, d, **{k: getattr(ember, str(v).split(".")[1]) for k, v in kw.items()})
            assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
            np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), [1]])
def test_shifts(dim):
    a = sample((5, 6), np.float32)
    for name in ["fftshift", "ifftshift"]:
        e, t = getattr(ember.fft, name)(ember.tensor(a), dim), getattr(torch.fft, name)(torch.tensor(a), dim)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    x = ember.tensor(a)
    assert np.array_equal(ember.fft.ifftshift(ember.fft.fftshift(x, dim), dim).numpy(), a)


# -- windows ---------------------------------------------------------------------------------------------------------
WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 8, 11])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, length, periodic, dtype):
    t = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
    e = getattr(ember, name)(length, periodic, dtype=getattr(ember, dtype), requires_grad=True)
    assert e.dtype is getattr(ember, dtype) and e.requires_grad and e.is_leaf
    np.testing.assert_allclose(e.detach().numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


def test_window_options_and_errors():
    np.testing.assert_allclose(ember.hamming_window(7, False, 0.6, 0.3).numpy(),
                               torch.hamming_window(7, False, 0.6, 0.3).numpy(), atol=1e-7)
    np.testing.assert_allclose(ember.kaiser_window(9, False, 5.0).numpy(), torch.kaiser_window(9, False, 5.0).numpy(),
                               rtol=1e-6)
    assert ember.hann_window(4).dtype is ember.float32
    for fn in [lambda L: L.hann_window(-1), lambda L: L.blackman_window(3, dtype=L.int64)]:
        with pytest.raises(RuntimeError) as t:
            fn(torch)
        with pytest.raises(RuntimeError) as e:
            fn(ember)
        assert str(e.value).split(",")[0] == str(t.value).split(",")[0]


# -- stft / istft ----------------------------------------------------------------------------------------------------
STFT_CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, center=False),
    dict(n_fft=16, win_length=9, hop_length=3, pad_mode="constant"),
    dict(n_fft=15, hop_length=4, normalized=True, pad_mode="replicate"),
    dict(n_fft=16, onesided=False, pad_mode="circular"),
    dict(n_fft=16, win_length=8, hop_length=5, center=False, align_to_window=True),  # torch reads out of bounds
    # for an odd n_fft - win_length
    dict(n_fft=12, win_length=10, hop_length=4, center=False, align_to_window=False),
]


@pytest.mark.parametrize("kw", STFT_CASES)
@pytest.mark.parametrize("shape", [(64,), (3, 50)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_stft(kw, shape, dtype):
    if np.dtype(dtype).kind == "c" and kw.get("onesided", True) is not False:
        kw = dict(kw, onesided=False)
    wl = kw.get("win_length", kw["n_fft"])
    w = sample((wl,), np.float64 if dtype == np.complex128 else dtype)

    def fn(lib, x):
        return lib.stft(x, window=lib.tensor(w), return_complex=True, **kw)
    both(fn, sample(shape, dtype))
    if np.dtype(dtype).kind == "c":
        return  # ember's complex `*` lacks the conjugate in its backward: a window's gradient is wrong there
    a = sample(shape, dtype)
    grads = []
    for lib in (ember, torch):
        win = lib.tensor(w, requires_grad=True)
        lib.stft(lib.tensor(a), window=win, return_complex=True, **kw).abs().pow(2).sum().backward()
        grads.append(win.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-3)


@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_stft_defaults_and_errors():
    a = sample((40,), np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        e = ember.stft(ember.tensor(a), 8, return_complex=True)
    assert any("window was not provided" in str(r.message) for r in rec)
    t = torch.stft(torch.tensor(a), 8, return_complex=True, window=torch.ones(8))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)
    assert ember.tensor(a).stft(8, window=ember.ones(8), return_complex=True).shape == t.shape
    w = dict(window=ember.hann_window(16))
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        ember.stft(ember.tensor(a), 16, **w)
    with pytest.raises(RuntimeError, match="expected hop_length > 0"):
        ember.stft(ember.tensor(a), 16, hop_length=0, return_complex=True, **w)
    with pytest.raises(RuntimeError, match="expected 0 < win_length <= n_fft"):
        ember.stft(ember.tensor(a), 16, win_length=20, return_complex=True)
    with pytest.raises(RuntimeError, match="expected a 1D window tensor of size equal to win_length=16"):
        ember.stft(ember.tensor(a), 16, window=ember.ones(15), return_complex=True)
    with pytest.raises(RuntimeError, match="expected a 1D or 2D tensor"):
        ember.stft(ember.ones(2, 2, 40), 16, return_complex=True, **w)
    with pytest.raises(RuntimeError, match="align_to_window should only be set when center = false"):
        ember.stft(ember.tensor(a), 16, return_complex=True, align_to_window=True, **w)


ISTFT_CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=12),
    dict(n_fft=15, hop_length=3, normalized=True),
    dict(n_fft=16, hop_length=4, center=False),
    dict(n_fft=16, onesided=False),
]


@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("kw", ISTFT_CASES)
@pytest.mark.parametrize("shape", [(64,), (2, 61)])
@pytest.mark.parametrize("length", [None, "same", 70])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_istft(kw, shape, length, dtype):
    wl = kw.get("win_length", kw["n_fft"])
    a = sample(shape, dtype)
    w = np.hanning(wl + 1)[:-1].astype(dtype) + 0.1
    stft_kw = {k: v for k, v in kw.items() if k != "length"}
    length = shape[-1] if length == "same" else length
    spec = torch.stft(torch.tensor(a), window=torch.tensor(w), return_complex=True, **stft_kw).numpy()

    def fn(lib, s):
        return lib.istft(s, window=lib.tensor(w), length=length, **stft_kw)
    try:
        fn(torch, torch.tensor(spec))
    except RuntimeError:  # the window does not cover the requested length
        with pytest.raises(RuntimeError, match="window overlap add min"):
            fn(ember, ember.tensor(spec))
        return
    ye, _ = both(fn, spec)
    if length == shape[-1] and kw.get("center", True):
        np.testing.assert_allclose(ye.detach().numpy(), a, **tol(dtype))


def test_istft_complex_round_trip():
    a = sample((2, 48), np.complex128)
    w = ember.hann_window(16, dtype=ember.float64)
    spec = ember.stft(ember.tensor(a), 16, window=w, return_complex=True)
    y = ember.istft(spec, 16, window=w, length=48, return_complex=True)
    assert y.dtype is ember.complex128
    np.testing.assert_allclose(y.numpy(), a, atol=1e-10)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(spec, 16, window=ember.zeros(16, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="requires a complex-valued input"):
        ember.istft(ember.ones(9, 5), 16, window=w)


@pytest.mark.filterwarnings("ignore:stft with return_complex=False is deprecated")
def test_stft_real_output():
    if not hasattr(ember, "view_as_real"):
        pytest.skip("needs ember.view_as_real")
    a = sample((2, 40), np.float64)
    e = ember.stft(ember.tensor(a), 8, window=ember.hann_window(8, dtype=ember.float64), return_complex=False)
    t = torch.stft(torch.tensor(a), 8, window=torch.hann_window(8, dtype=torch.float64), return_complex=False)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-12)


@pytest.mark.parametrize("module", ["ember._ops.fft", "ember._ops.windows"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), extraglobs={"ember": ember},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
