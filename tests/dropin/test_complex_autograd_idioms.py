"""Complex autograd in real code (complex linear and conv layers, linalg on complex matrices, complex scans, complex
Parameters trained with torch.optim, FFT convolution training) against torch, in complex64 and complex128."""
import math

import numpy as np
import pytest
import torch

import ember

_DT = ["complex64", "complex128"]


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _z(*shape, seed=0, dtype="complex64"):
    r = np.random.default_rng(seed)
    return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)


def _run(lib, fn, arrays, seed=50):
    """``fn``'s outputs and the gradients of its inputs for random (complex) output gradients."""
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    outs = fn(lib, *ts)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gs = [lib.tensor(_z(*o.shape, seed=seed + i, dtype=_np(o).dtype) if o.is_complex() else
                     np.random.default_rng(seed + i).standard_normal(o.shape).astype(_np(o).dtype))
          for i, o in enumerate(outs)]
    grads = lib.autograd.grad(outs, ts, gs, allow_unused=True)
    return outs, grads


def _compare(fn, arrays, rtol=1e-4, atol=1e-5):
    (oe, ge), (ot, gt) = _run(ember, fn, arrays), _run(torch, fn, arrays)
    assert [g is None for g in ge] == [g is None for g in gt]
    for e, t in zip(oe + ge, ot + gt):
        if t is not None:
            _close(e, t, rtol=rtol, atol=atol)


# -- layers with complex weights ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", _DT)
@pytest.mark.parametrize("fn", [
    lambda L, x, w, b: L.nn.functional.linear(x, w, b),
    lambda L, x, w, b: L.nn.functional.linear(x[0], w),
    lambda L, x, w, b: L.nn.functional.linear(x.reshape(2, 3, 4), w) * 1j,
])
def test_linear_conjugates_the_other_operand(fn, dtype):
    """grad_x = g @ conj(W), grad_W = g^T @ conj(x) (the fused real layer's formulas lack the conjugates)."""
    _compare(fn, [_z(6, 4, dtype=dtype), _z(5, 4, seed=1, dtype=dtype), _z(5, seed=2, dtype=dtype)])


@pytest.mark.parametrize("dtype", _DT)
@pytest.mark.parametrize("fn", [
    lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1, stride=2),
    lambda L, x, w, b: L.nn.functional.conv2d(x[:, :2], w[:, :1], groups=2),
    lambda L, x, w, b: L.nn.functional.conv1d(x[:, :, 0], w[:, :, 0], padding=2, dilation=2),
    lambda L, x, w, b: L.nn.functional.conv_transpose2d(x, w.transpose(0, 1), stride=2),
])
def test_complex_convolutions(fn, dtype):
    _compare(fn, [_z(2, 3, 6, 6, seed=1, dtype=dtype), _z(4, 3, 3, 3, seed=2, dtype=dtype), _z(4, seed=3, dtype=dtype)])


def test_complex_conv_double_backward():
    """A gradient penalty through a complex convolution."""
    x, w = _z(2, 3, 5, 5, dtype="complex128"), _z(4, 3, 3, 3, seed=1, dtype="complex128")
    res = []
    for lib in (ember, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        (g,) = lib.autograd.grad((lib.nn.functional.conv2d(xt, wt, padding=1).abs() ** 2).sum(), wt, create_graph=True)
        (g.abs() ** 2).sum().backward()
        res.append((g, xt.grad, wt.grad))
    for e, t in zip(*res):
        _close(e, t, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", _DT)
def test_complex_mlp_trained_with_adam(dtype):
    """nn.Linear(dtype=cfloat) layers with a modReLU-free |z| nonlinearity, a real MSE loss, Adam steps."""
    x, y = _z(8, 4, seed=3, dtype=dtype), np.random.default_rng(4).standard_normal((8, 2)).astype(
        "float32" if dtype == "complex64" else "float64")
    params = []
    for lib in (ember, torch):
        cd = getattr(lib, dtype)
        net = lib.nn.Sequential(lib.nn.Linear(4, 6, dtype=cd), lib.nn.Linear(6, 2, dtype=cd))
        for p, v in zip(net.parameters(), [_z(6, 4, seed=5), _z(6, seed=6), _z(2, 6, seed=7), _z(2, seed=8)]):
            with lib.no_grad():
                p.copy_(lib.tensor(v.astype(dtype)) * 0.5)
        opt = lib.optim.Adam(net.parameters(), lr=0.05)
        for _ in range(4):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(net(lib.tensor(x)).abs(), lib.tensor(y))
            loss.backward()
            opt.step()
        params.append(list(net.parameters()) + [opt.state[net[0].weight]["exp_avg_sq"]])
    for e, t in zip(*params):
        _close(e, t, rtol=1e-4, atol=1e-5)


# -- elementwise and scans ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", _DT)
@pytest.mark.parametrize("fn", [
    lambda L, a, b: L.sinc(a),
    lambda L, a, b: L.lerp(a, b, a * 0.1),
    lambda L, a, b: L.lerp(a, b, 0.3 + 0.2j),
    lambda L, a, b: L.logaddexp(a * 3, b * 3),
    lambda L, a, b: a.logcumsumexp(1),
    lambda L, a, b: L.logcumsumexp(a * 4, 0),
    lambda L, a, b: (a.abs() ** 2).sum(1),
    lambda L, a, b: a.angle() + (a * b.conj()).real,
    lambda L, a, b: L.view_as_real(a * b),
    lambda L, a, b: L.view_as_complex(L.view_as_real(a) * 2).exp(),
    lambda L, a, b: (a.prod(1), a.cumprod(0), a.mean(), a.var(1)),
    lambda L, a, b: (L.sigmoid(a), L.tanh(b), a.sqrt(), a.log(), a ** 1.5),
    lambda L, a, b: L.einsum("bi,bj->ij", a, b.conj()),
])
def test_complex_elementwise_gradients(fn, dtype):
    _compare(fn, [_z(3, 4, seed=1, dtype=dtype), _z(3, 4, seed=2, dtype=dtype)])


@pytest.mark.parametrize("dtype", _DT)
def test_logcumsumexp_complex_branches_and_infinities(dtype):
    """Each step factors out the term of larger real part (a tie: the new one), so phases wrap as torch's; -inf
    terms keep the sum, +inf ones add their directions."""
    x = _z(2, 6, seed=3, dtype=dtype) * 3
    x[0, :2] = [0, 1j * math.pi]
    x[1, :4] = [complex(-math.inf, 0), complex(-math.inf, 1), complex(math.inf, 0), complex(math.inf, 1)]
    e, t = ember.tensor(x).logcumsumexp(1), torch.tensor(x).logcumsumexp(1)
    _close(e, t, rtol=1e-5, atol=1e-5)
    e, t = ember.logaddexp(ember.tensor(x[0]), ember.tensor(x[0, ::-1].copy())), \
        torch.logaddexp(torch.tensor(x[0]), torch.tensor(x[0, ::-1].copy()))
    _close(e, t, rtol=1e-5, atol=1e-5)


def test_heinsen_log_space_scan():
    """A linear recurrence h_t = a_t h_{t-1} + b_t in log space with negative b (log of a negative number is complex)."""
    a, b = np.random.default_rng(0).uniform(-1, 0, (2, 16)), np.random.default_rng(1).standard_normal((2, 16))
    res = []
    for lib in (ember, torch):
        log_a, vals = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        a_star = log_a.cumsum(-1)
        h = (a_star + (lib.log(vals.to(lib.complex128)) - a_star).logcumsumexp(-1)).exp().real
        (h * lib.tensor(np.linspace(-1, 1, 16))).sum().backward()
        res.append((h, log_a.grad, vals.grad))
    for e, t in zip(*res):
        _close(e, t, rtol=1e-9, atol=1e-10)


# -- linalg on complex matrices -----------------------------------------------------------------------------------
def _herm(n, dtype):
    a = _z(n, n, seed=9, dtype=dtype)
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", _DT)
@pytest.mark.parametrize("fn", [
    lambda L, a, h, b: L.linalg.inv(a),
    lambda L, a, h, b: L.linalg.det(a),
    lambda L, a, h, b: L.linalg.slogdet(a),
    lambda L, a, h, b: L.linalg.solve(a, b),
    lambda L, a, h, b: L.linalg.eigvalsh(h),
    lambda L, a, h, b: (lambda w, v: (w, v * (v[:1].conj() / v[:1].abs())))(*L.linalg.eigh(h)),
    lambda L, a, h, b: L.linalg.svdvals(b),
    lambda L, a, h, b: (lambda u, s, vh: (u * s.to(u.dtype)) @ vh)(*L.linalg.svd(b, full_matrices=False)),
    lambda L, a, h, b: L.linalg.cholesky(h),
    lambda L, a, h, b: (lambda q, r: q @ r)(*L.linalg.qr(b)),
    lambda L, a, h, b: L.linalg.matrix_norm(b, "nuc"),
    lambda L, a, h, b: L.linalg.matrix_exp(a * 0.3),
    lambda L, a, h, b: L.linalg.pinv(b),
])
def test_complex_linalg_gradients(fn, dtype):
    _compare(fn, [_z(4, 4, seed=1, dtype=dtype), _herm(4, dtype), _z(4, 3, seed=2, dtype=dtype)], rtol=2e-4, atol=2e-4)


# -- complex Parameters and optimizers ----------------------------------------------------------------------------
@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("NAdam", dict(lr=0.05)),
])
def test_complex_parameters_step_as_pairs_of_reals(name, kw):
    res = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.tensor(_z(4, 3, seed=1)))
        x, tgt = lib.tensor(_z(8, 4, seed=3)), lib.tensor(_z(8, 3, seed=4))
        opt = getattr(lib.optim, name)([p], **kw)
        for _ in range(4):
            opt.zero_grad()
            ((x @ p - tgt).abs() ** 2).mean().backward()
            opt.step()
        res.append((p, *[v for v in opt.state[p].values() if isinstance(v, lib.Tensor) and v.ndim]))
    assert len(res[0]) == len(res[1])
    for e, t in zip(*res):
        _close(e, t, rtol=1e-4, atol=1e-5)


def test_fft_convolution_layer_training():
    """A global (FFT) convolution with a complex spectral filter, trained by SGD against a real target."""
    x = np.random.default_rng(0).standard_normal((4, 2, 32)).astype(np.float32)
    y = np.roll(x, 3, -1) * 0.5
    w0 = _z(2, 17, seed=5) * 0.1
    res = []
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.tensor(w0))
        opt = lib.optim.SGD([w], lr=0.5, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            out = lib.fft.irfft(lib.fft.rfft(lib.tensor(x), norm="ortho") * w, n=32, norm="ortho")
            loss = lib.nn.functional.mse_loss(out, lib.tensor(y))
            loss.backward()
            opt.step()
        res.append((w, loss))
    _close(res[0][0], res[1][0], rtol=1e-4, atol=1e-6)
    _close(res[0][1], res[1][1], rtol=1e-4, atol=1e-7)


# -- kernels torch has no complex version of ----------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L, z: L.special.i0(z), lambda L, z: z.i0(), lambda L, z: L.special.i0e(z), lambda L, z: L.special.i1(z),
    lambda L, z: L.special.i1e(z), lambda L, z: L.special.ndtr(z), lambda L, z: L.special.ndtri(z),
    lambda L, z: L.special.log_ndtr(z), lambda L, z: L.special.erfcx(z), lambda L, z: L.special.entr(z),
    lambda L, z: z.logit(), lambda L, z: z.digamma(), lambda L, z: L.polygamma(1, z), lambda L, z: L.polygamma(3, z),
    lambda L, z: L.logaddexp2(z, z), lambda L, z: L.nextafter(z, z),
])
@pytest.mark.parametrize("dtype", _DT)
def test_complex_refused_as_torch(call, dtype):
    with pytest.raises(Exception) as want:
        call(torch, torch.tensor(_z(3, dtype=dtype)))
    with pytest.raises(type(want.value)) as got:
        call(ember, ember.tensor(_z(3, dtype=dtype)))
    assert str(got.value) == str(want.value)
