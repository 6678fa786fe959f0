"""Complex tensors and signal processing idioms (complex arithmetic and autograd, the ops torch refuses on complex
inputs, torch.fft, stft/istft, windows, FFT convolution, spectral layers) against torch."""
import math

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _z(*shape, seed=0, double=False):
    r = np.random.default_rng(seed)
    z = r.standard_normal(shape) + 1j * r.standard_normal(shape)
    return z.astype(np.complex128 if double else np.complex64)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _both(fn):
    return fn(ember), fn(torch)


# -- creation and views -----------------------------------------------------------------------------------------------
def test_complex_polar_and_views():
    """complex/polar values and dtypes; view_as_real/view_as_complex share memory and have torch's strides."""
    a, b = _x(3, 4), _x(3, 4, seed=1)
    for lib_e, lib_t in [_both(lambda L: L.complex(L.tensor(a), L.tensor(b))),
                         _both(lambda L: L.complex(L.tensor(a).double(), L.tensor(b).double())),
                         _both(lambda L: L.polar(L.tensor(a).abs(), L.tensor(b))),
                         _both(lambda L: L.view_as_complex(L.tensor(_x(4, 3, 2))[::2]))]:
        _close(lib_e, lib_t)
        assert lib_e.stride() == lib_t.stride()
    z = _z(3, 4)
    e, t = _both(lambda L: L.view_as_real(L.tensor(z)[:, ::2]))
    _close(e, t)
    assert e.stride() == t.stride()
    e, t = _both(lambda L: (lambda x: (L.view_as_real(x).__setitem__((0, 0, 1), 7.0), x.imag.mul_(2), x)[2])(
        L.tensor(z)))
    _close(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.view_as_complex(L.tensor(_x(3, 3))),
    lambda L: L.view_as_complex(L.tensor(_x(2, 3)).t()),
    lambda L: L.view_as_complex(L.tensor(_x(3, 2)).long()),
    lambda L: L.view_as_real(L.tensor(_x(3, 2))),
    lambda L: L.complex(L.tensor(_x(3)), L.tensor(_x(3)).double()),
])
def test_view_errors(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)):
        call(ember)


# -- elementwise ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, z, x: z + L.tensor(x).double(),
    lambda L, z, x: z * L.tensor(2.0, dtype=L.float64),
    lambda L, z, x: L.tensor(x) / z,
    lambda L, z, x: L.tensor(x).long() + 1j,
    lambda L, z, x: L.tensor(x) * (1 + 2j),
    lambda L, z, x: z ** 0.5,
    lambda L, z, x: 2 ** z,
    lambda L, z, x: z ** z,
    lambda L, z, x: L.where(L.tensor(x) > 0, z, 1j),
    lambda L, z, x: L.where(L.tensor(x) > 0, L.tensor(x), 1j),
    lambda L, z, x: L.isclose(z, z + 1e-7j),
    lambda L, z, x: z.sigmoid(),
    lambda L, z, x: z.tanh(),
    lambda L, z, x: z.reciprocal(),
    lambda L, z, x: z.log(),
    lambda L, z, x: L.exp(1j * L.tensor(x)),
    lambda L, z, x: z.angle(),
    lambda L, z, x: L.tensor(x).angle(),
    lambda L, z, x: z.conj_physical() * z,
    lambda L, z, x: L.tensor([complex(math.nan, math.inf), complex(-math.inf, 2), 1j]).nan_to_num(),
    lambda L, z, x: L.tensor([complex(math.nan, math.inf), 1j]).nan_to_num(1.0, 2.0, 3.0),
])
def test_elementwise(fn):
    """Values and promoted dtypes of complex arithmetic with real tensors and Python scalars."""
    e, t = fn(ember, ember.tensor(_z(3, 4)), _x(3, 4)), fn(torch, torch.tensor(_z(3, 4)), _x(3, 4))
    _close(e, t, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("double", [False, True])
def test_abs_and_sgn_round_as_torch(double):
    """|z| is hypot(re, im), correctly rounded, and sgn divides each part by it (a complex division, or NumPy's
    complex abs, is a last bit off in a third of the elements)."""
    z = _z(20000, double=double)
    z[:3] = [0, complex(math.inf, 1), complex(math.nan, 0)]
    for name in ("abs", "sgn"):
        e, t = getattr(ember.tensor(z), name)().numpy(), getattr(torch.tensor(z), name)().numpy()
        same = (e == t) | (np.isnan(e) & np.isnan(t))
        assert same.mean() > (0.99 if double else 0.9999999)


# -- ops torch refuses on complex inputs ------------------------------------------------------------------------------
_F = {ember: ember.nn.functional, torch: torch.nn.functional}


@pytest.mark.parametrize("call", [
    lambda L, z, x: z < z, lambda L, z, x: z > 0, lambda L, z, x: x <= z, lambda L, z, x: x >= 1j,
    lambda L, z, x: L.lt(z, x), lambda L, z, x: z.clone().gt_(0),
    lambda L, z, x: z.max(), lambda L, z, x: z.max(0), lambda L, z, x: z.min(dim=1), lambda L, z, x: z.amax(),
    lambda L, z, x: z.amin(0), lambda L, z, x: L.aminmax(z), lambda L, z, x: L.max(z, z), lambda L, z, x: L.maximum(x, z),
    lambda L, z, x: L.minimum(z, z), lambda L, z, x: L.fmax(z, z), lambda L, z, x: L.fmin(z, x),
    lambda L, z, x: z.argmax(), lambda L, z, x: z.argmin(1), lambda L, z, x: z.sort(), lambda L, z, x: z.argsort(),
    lambda L, z, x: L.msort(z), lambda L, z, x: z.topk(2), lambda L, z, x: z.kthvalue(2), lambda L, z, x: z.median(),
    lambda L, z, x: z.median(0), lambda L, z, x: z.mode(), lambda L, z, x: z.cummax(0), lambda L, z, x: L.unique(z),
    lambda L, z, x: L.searchsorted(z[0], z[1]), lambda L, z, x: L.bucketize(z, x[0]),
    lambda L, z, x: z.clamp(0, 1), lambda L, z, x: z.clamp(min=0), lambda L, z, x: z.clone().clamp_(max=1),
    lambda L, z, x: z.clip(-1, 1), lambda L, z, x: z.floor(), lambda L, z, x: z.ceil(), lambda L, z, x: z.trunc(),
    lambda L, z, x: z.round(), lambda L, z, x: z.round(decimals=1), lambda L, z, x: z.frac(), lambda L, z, x: z % 2,
    lambda L, z, x: x % 1j, lambda L, z, x: L.fmod(z, 2), lambda L, z, x: z // 2,
    lambda L, z, x: L.div(z, 2, rounding_mode="floor"), lambda L, z, x: L.div(z, 2, rounding_mode="trunc"),
    lambda L, z, x: L.atan2(z, z), lambda L, z, x: L.hypot(z, z), lambda L, z, x: L.copysign(z, x),
    lambda L, z, x: L.xlogy(z, z), lambda L, z, x: L.special.xlog1py(z, z), lambda L, z, x: L.heaviside(z, z),
    lambda L, z, x: z.isposinf(), lambda L, z, x: z.isneginf(), lambda L, z, x: z.signbit(),
    lambda L, z, x: L.isin(z, z), lambda L, z, x: z.deg2rad(), lambda L, z, x: z.rad2deg(),
    lambda L, z, x: z.erf(), lambda L, z, x: z.erfc(), lambda L, z, x: z.erfinv(), lambda L, z, x: z.lgamma(),
    lambda L, z, x: z.clone().abs_(), lambda L, z, x: z.sign(),
    lambda L, z, x: _F[L].relu(z), lambda L, z, x: z.clone().relu_(), lambda L, z, x: L.nn.ReLU()(z),
    lambda L, z, x: _F[L].relu6(z), lambda L, z, x: _F[L].hardtanh(z), lambda L, z, x: _F[L].leaky_relu(z),
    lambda L, z, x: _F[L].threshold(z, 0.1, 0.0), lambda L, z, x: _F[L].gelu(z),
    lambda L, z, x: _F[L].gelu(z, approximate="tanh"), lambda L, z, x: _F[L].elu(z), lambda L, z, x: _F[L].selu(z),
    lambda L, z, x: _F[L].softplus(z), lambda L, z, x: _F[L].logsigmoid(z), lambda L, z, x: _F[L].hardswish(z),
    lambda L, z, x: _F[L].hardsigmoid(z), lambda L, z, x: _F[L].mish(z), lambda L, z, x: _F[L].hardshrink(z),
    lambda L, z, x: _F[L].softshrink(z), lambda L, z, x: _F[L].mse_loss(z, z * 2),
])
@pytest.mark.parametrize("double", [False, True])
def test_complex_refused(call, double):
    """torch's exception type (NotImplementedError or RuntimeError) and message, not a lexicographic answer."""
    with pytest.raises(Exception) as want:
        call(torch, torch.tensor(_z(3, 4, double=double)), torch.tensor(_x(3, 4)))
    with pytest.raises(type(want.value)) as got:
        call(ember, ember.tensor(_z(3, 4, double=double)), ember.tensor(_x(3, 4)))
    assert str(got.value).strip() == str(want.value).strip()


def test_real_paths_still_work():
    """The same ops on real tensors (and comparisons of real tensors with real scalars) are untouched."""
    x = _x(3, 4)
    for fn in (lambda L, t: t > 0, lambda L, t: L.maximum(t, t * 2), lambda L, t: t.clamp(-0.5, 0.5),
               lambda L, t: t.sort().values, lambda L, t: t.floor(), lambda L, t: t % 0.7, lambda L, t: _F[L].gelu(t),
               lambda L, t: t.max(0).values, lambda L, t: L.unique(t.round()), lambda L, t: t.abs_()):
        e, t = fn(ember, ember.tensor(x)), fn(torch, torch.tensor(x))
        _close(e, t)


# -- complex autograd -------------------------------------------------------------------------------------------------
def _grad(lib, fn, inp, seed=11):
    t = lib.tensor(inp, requires_grad=True)
    y = fn(lib, t)
    g = _z(*y.shape, seed=seed) if y.is_complex() else _x(*y.shape, seed=seed)
    y.backward(lib.tensor(g))
    return y, t.grad


@pytest.mark.parametrize("fn,real_input", [
    (lambda L, t: (t.abs() ** 2).sum(1), False),
    (lambda L, t: t.angle(), False),
    (lambda L, t: t.real * 2 + t.imag ** 2, False),
    (lambda L, t: L.view_as_real(t), False),
    (lambda L, t: t @ t.mH, False),
    (lambda L, t: t.mean(0), False),
    (lambda L, t: t.sgn(), False),
    (lambda L, t: t.logsumexp(1), False),
    (lambda L, t: t ** t, False),
    (lambda L, t: L.zeros(3, 4, dtype=L.cfloat) ** t, False),
    (lambda L, t: 2 ** t, False),
    (lambda L, t: (1 + 1j) ** t, True),
    (lambda L, t: 0j ** t, False),
    (lambda L, t: L.polar(t.abs() + 0.1, t), True),
    (lambda L, t: L.exp(1j * t) * t, True),
    (lambda L, t: (t * 1j).abs(), True),
])
def test_complex_gradients(fn, real_input):
    """torch's conjugate Wirtinger convention for real losses and complex outputs."""
    inp = _x(3, 4) if real_input else _z(3, 4, seed=5)
    (ye, ge), (yt, gt) = _grad(ember, fn, inp), _grad(torch, fn, inp)
    _close(ye, yt, rtol=1e-5, atol=1e-5)
    _close(ge, gt, rtol=1e-4, atol=1e-5)


def test_nan_to_num_complex_refuses_autograd():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="nan_to_num does not support automatic differentiation"):
            lib.tensor([1j], requires_grad=True).nan_to_num()


# -- torch.fft --------------------------------------------------------------------------------------------------------
_FFT1 = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_FFTN = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn",
         "ihfftn"]
_REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", _FFT1)
@pytest.mark.parametrize("kw", [{}, {"n": 11}, {"n": 21, "dim": 0}])
def test_fft_1d(name, norm, kw):
    """Values, dtypes and gradients (irfft's and hfft's Hermitian handling included), with padding/trimming."""
    inp = _x(4, 16) if name in _REAL_IN else _z(4, 16, seed=3)
    (ye, ge), (yt, gt) = [_grad(L, lambda L, t: getattr(L.fft, name)(t, norm=norm, **kw), inp) for L in (ember, torch)]
    _close(ye, yt, rtol=1e-4, atol=1e-5)
    _close(ge, gt, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", _FFTN)
@pytest.mark.parametrize("kw", [{}, {"s": (5, 7)}, {"s": (4, 9), "dim": (0, 2), "norm": "ortho"},
                                {"dim": (-1, 0), "norm": "forward"}])
def test_fft_nd(name, kw):
    inp = _x(2, 6, 8) if name in _REAL_IN else _z(2, 6, 8, seed=4)
    (ye, ge), (yt, gt) = [_grad(L, lambda L, t: getattr(L.fft, name)(t, **kw), inp) for L in (ember, torch)]
    _close(ye, yt, rtol=1e-4, atol=1e-5)
    _close(ge, gt, rtol=1e-4, atol=1e-5)


def test_fft_helpers():
    for fn in (lambda L: L.fft.fftfreq(9, d=0.1), lambda L: L.fft.fftfreq(8, dtype=L.float64),
               lambda L: L.fft.rfftfreq(9, 1 / 16000), lambda L: L.fft.fftshift(L.tensor(_x(3, 4, 5))),
               lambda L: L.fft.fftshift(L.tensor(_x(3, 4, 5)), dim=1),
               lambda L: L.fft.ifftshift(L.tensor(_z(3, 4, 5)), dim=(0, 2)),
               lambda L: L.fft.fft(L.tensor(_x(4, 6)).long()), lambda L: L.fft.fft(L.tensor(_x(5)).double(), n=7)):
        e, t = _both(fn)
        _close(e, t)


@pytest.mark.parametrize("call", [
    lambda L: L.fft.fftfreq(4, dtype=L.int64),
    lambda L: L.fft.rfftfreq(4, dtype=L.bool),
    lambda L: L.fft.fft(L.ones(4, dtype=L.cfloat), n=0),
    lambda L: L.fft.fft(L.ones(4), norm="bad"),
    lambda L: L.fft.fftn(L.ones(2, 3), dim=(0, 0)),
    lambda L: L.fft.fftn(L.ones(2, 3), s=(3,), dim=(0, 1)),
    lambda L: L.fft.rfft(L.ones(4, dtype=L.cfloat)),
    lambda L: L.hann_window(5, dtype=L.complex64),
    lambda L: L.hann_window(5, dtype=L.int64),
])
def test_fft_errors(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)):
        call(ember)


# -- windows, stft, istft ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_windows(name):
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            e, t = _both(lambda L: getattr(L, name)(n, periodic=periodic))
            _close(e, t, rtol=1e-6, atol=1e-7)
    e, t = _both(lambda L: getattr(L, name)(9, dtype=L.float64))
    _close(e, t, rtol=1e-12, atol=0)


@pytest.mark.parametrize("center,pad_mode", [(True, "reflect"), (True, "constant"), (True, "replicate"),
                                             (False, "reflect")])
@pytest.mark.parametrize("normalized,onesided", [(False, True), (True, True), (False, False)])
def test_stft_istft_round_trip(center, pad_mode, normalized, onesided):
    sig = _x(2, 400, seed=3)
    res = []
    for L in (ember, torch):
        w = L.hamming_window(64)  # nonzero at its ends: without centering, the first sample is recovered too
        S = L.stft(L.tensor(sig), 64, hop_length=16, win_length=64, window=w, center=center, pad_mode=pad_mode,
                   normalized=normalized, onesided=onesided, return_complex=True)
        y = L.istft(S, 64, hop_length=16, window=w, center=center, normalized=normalized, onesided=onesided,
                    length=400 if center else None)
        res.append((S, y))
    _close(res[0][0], res[1][0], rtol=1e-4, atol=1e-4)
    _close(res[0][1], res[1][1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res[0][1].numpy(), sig[:, :res[0][1].shape[-1]], atol=1e-5)


def test_stft_istft_gradients():
    sig = _x(2, 400, seed=3)
    out = []
    for L in (ember, torch):
        x = L.tensor(sig, requires_grad=True)
        w = L.hann_window(64).requires_grad_()
        S = L.stft(x, 64, hop_length=16, window=w, return_complex=True)
        ((S.abs() + 1e-3).log().mean() + L.view_as_real(S).pow(2).mean()).backward()
        Sd = S.detach().requires_grad_()
        y = L.istft(Sd, 64, hop_length=16, window=L.hann_window(64), length=400)
        y.backward(L.tensor(_x(2, 400, seed=9)))
        out.append((x.grad, w.grad, Sd.grad))
    for e, t in zip(*out):
        _close(e, t, rtol=1e-3, atol=1e-5)


# -- DSP idioms -------------------------------------------------------------------------------------------------------
def test_fft_convolution_and_filtering():
    """Linear convolution through zero-padded rfft, and an FFT band-pass with an rfftfreq mask."""
    sig, ker = _x(2, 500, seed=3), _x(2, 33, seed=4)
    out = []
    for L in (ember, torch):
        x, k = L.tensor(sig, requires_grad=True), L.tensor(ker, requires_grad=True)
        n = x.shape[-1] + k.shape[-1] - 1
        N = 1 << (n - 1).bit_length()
        y = L.fft.irfft(L.fft.rfft(x, n=N) * L.fft.rfft(k, n=N), n=N)[..., :n]
        y.backward(L.tensor(_x(*y.shape, seed=1)))
        f = L.fft.rfftfreq(x.shape[-1], d=1 / 8000)
        band = L.fft.irfft(L.fft.rfft(x.detach()) * ((f > 300) & (f < 2000)), n=x.shape[-1])
        out.append((y, x.grad, k.grad, band))
    for e, t in zip(*out):
        _close(e, t, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[0][0].detach().numpy(), np.stack([np.convolve(s, k) for s, k in zip(sig, ker)]),
                               rtol=1e-4, atol=1e-4)


def test_log_mel_spectrogram():
    sig, fb = _x(2, 1000, seed=3), np.abs(_x(65, 20, seed=2))
    out = []
    for L in (ember, torch):
        x = L.tensor(sig, requires_grad=True)
        S = L.stft(x, n_fft=128, hop_length=32, window=L.hann_window(128), return_complex=True)
        M = (S.abs().pow(2.0).transpose(-1, -2) @ L.tensor(fb)).transpose(-1, -2)
        db = 10.0 * L.log10(L.clamp(M, min=1e-10))
        db = L.max(db, db.amax(dim=(-2, -1), keepdim=True) - 80.0)
        db.mean().backward()
        out.append((db, x.grad))
    for e, t in zip(*out):
        _close(e, t, rtol=1e-4, atol=1e-4)


def test_phase_vocoder():
    """Time stretching: angles, phase unwrapping with round, polar, and istft."""
    sig = _x(1, 2000, seed=3)
    out = []
    for L in (ember, torch):
        S = L.stft(L.tensor(sig), 256, hop_length=64, window=L.hann_window(256), return_complex=True)
        steps = L.arange(0, S.size(-1), 1.3, dtype=S.real.dtype)
        advance = L.linspace(0, math.pi * 64, S.size(-2))[..., None]
        Sp = L.nn.functional.pad(S, [0, 2])
        s0, s1 = Sp.index_select(-1, steps.long()), Sp.index_select(-1, (steps + 1).long())
        dphase = s1.angle() - s0.angle() - advance
        dphase = dphase - 2 * math.pi * L.round(dphase / (2 * math.pi))
        phase = L.cumsum(L.cat([S[..., :1].angle(), (dphase + advance)[..., :-1]], -1), -1)
        alphas = steps % 1.0
        out.append(L.istft(L.polar(alphas * s1.abs() + (1 - alphas) * s0.abs(), phase), 256, hop_length=64,
                           window=L.hann_window(256)))
    _close(out[0], out[1], rtol=1e-3, atol=2e-3)


def test_spectral_conv_layer():
    """A Fourier neural operator layer: rfft2, a complex einsum with complex weights, irfft2; gradients of both."""
    xin, win = _x(2, 3, 16, 16, seed=1), _z(3, 4, 5, 5, seed=2) * 0.1
    out = []
    for L in (ember, torch):
        x, w = L.tensor(xin, requires_grad=True), L.tensor(win, requires_grad=True)
        xf = L.fft.rfft2(x)
        of = L.zeros(2, 4, 16, 9, dtype=L.cfloat)
        of[:, :, :5, :5] = L.einsum("bixy,ioxy->boxy", xf[:, :, :5, :5], w)
        y = L.fft.irfft2(of, s=(16, 16))
        y.backward(L.tensor(_x(*y.shape, seed=3)))
        out.append((y, x.grad, w.grad))
    for e, t in zip(*out):
        _close(e, t, rtol=1e-4, atol=1e-5)
