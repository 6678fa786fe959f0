"""CPU autocast's own op lists against torch's: the ops it runs in float32 (linear algebra, FFTs, reflection and
replication padding, 3-D pools, losses, ...) and those it runs in the widest input dtype (stack, cat, index_copy)."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _spd(n=4):
    a = _f(n, n)
    return a @ a.T + n * np.eye(n, dtype=np.float32)


SPD = _spd()
CHOL = np.linalg.cholesky(SPD).astype(np.float32)
SQ = _f(4, 4) + 4 * np.eye(4, dtype=np.float32)
TRIL = np.tril(SQ)
B = _f(4, 3)
V = _f(8)
TARGET = [0, 1, 2, 3]

# name: (fn(module, *inputs), input arrays); every op here computes in float32 under CPU autocast
FLOAT32 = {
    "trace": (lambda m, a: m.trace(a), [SQ]),
    "Tensor.trace": (lambda m, a: a.trace(), [SQ]),
    "prod": (lambda m, a: m.prod(a), [V]),
    "quantile": (lambda m, a: m.quantile(a, 0.3), [V]),
    "nanquantile": (lambda m, a: a.nanquantile(0.7), [V]),
    "cdist": (lambda m, a, b: m.cdist(a, b), [_f(3, 4), _f(5, 4)]),
    "polar": (lambda m, a, b: m.polar(m.abs(a), b), [V, V]),
    "view_as_complex": (lambda m, a: m.view_as_complex(a), [_f(4, 2)]),
    "stft": (lambda m, a, w: m.stft(a, 8, window=w.abs(), return_complex=True), [_f(32), _f(8)]),
    "Tensor.stft": (lambda m, a: a.stft(8, window=m.hann_window(8), return_complex=True), [_f(32)]),
    "cholesky": (lambda m, a: m.cholesky(a), [SPD]),
    "cholesky_inverse": (lambda m, a: m.cholesky_inverse(a), [CHOL]),
    "cholesky_solve": (lambda m, b, a: m.cholesky_solve(b, a), [B, CHOL]),
    "inverse": (lambda m, a: m.inverse(a), [SQ]),
    "Tensor.inverse": (lambda m, a: a.inverse(), [SQ]),
    "pinverse": (lambda m, a: m.pinverse(a), [_f(4, 3)]),
    "lu": (lambda m, a: m.lu(a), [SQ]),
    "lu_solve": (lambda m, b, a: m.lu_solve(b, *m.linalg.lu_factor(a.float())), [B, SQ]),
    "geqrf": (lambda m, a: m.geqrf(a), [SQ]),
    "orgqr": (lambda m, a, t: m.orgqr(a, t), [SQ, _f(4)]),
    "ormqr": (lambda m, a, t, c: m.ormqr(a, t, c), [SQ, _f(4), _f(4, 3)]),
    "qr": (lambda m, a: m.qr(a), [SQ]),
    "svd": (lambda m, a: m.svd(a), [SQ]),
    "Tensor.svd": (lambda m, a: a.svd(), [SQ]),
    "triangular_solve": (lambda m, b, a: m.triangular_solve(b, a, upper=False), [B, TRIL]),
    "linalg.cond": (lambda m, a: m.linalg.cond(a), [SQ]),
    "linalg.cond_fro": (lambda m, a: m.linalg.cond(a, "fro"), [SQ]),
    "linalg.matrix_rank": (lambda m, a: m.linalg.matrix_rank(a), [SQ]),
    "linalg.solve": (lambda m, a, b: m.linalg.solve(a, b), [SQ, B]),
    "linalg.cholesky": (lambda m, a: m.linalg.cholesky(a), [SPD]),
    "linalg.cholesky_ex": (lambda m, a: m.linalg.cholesky_ex(a), [SPD]),
    "linalg.svdvals": (lambda m, a: m.linalg.svdvals(a), [SQ]),
    "linalg.svd": (lambda m, a: m.linalg.svd(a), [SQ]),
    "linalg.eigvals": (lambda m, a: m.linalg.eigvals(a), [SPD]),
    "linalg.eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), [SPD]),
    "linalg.eig": (lambda m, a: m.linalg.eig(a)[0], [SPD]),
    "linalg.eigh": (lambda m, a: m.linalg.eigh(a), [SPD]),
    "linalg.inv": (lambda m, a: m.linalg.inv(a), [SQ]),
    "linalg.inv_ex": (lambda m, a: m.linalg.inv_ex(a), [SQ]),
    "linalg.householder_product": (lambda m, a, t: m.linalg.householder_product(a, t), [SQ, _f(4)]),
    "linalg.tensorinv": (lambda m, a: m.linalg.tensorinv(a, ind=1), [SQ]),
    "linalg.tensorsolve": (lambda m, a, b: m.linalg.tensorsolve(a, b), [SQ, _f(4)]),
    "linalg.qr": (lambda m, a: m.linalg.qr(a), [SQ]),
    "linalg.lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, [SQ, B]),
    "fft.fft": (lambda m, a: m.fft.fft(a), [V]),
    "fft.ifft": (lambda m, a: m.fft.ifft(a, n=10), [V]),
    "fft.fft2": (lambda m, a: m.fft.fft2(a), [SQ]),
    "fft.ifft2": (lambda m, a: m.fft.ifft2(a), [SQ]),
    "fft.fftn": (lambda m, a: m.fft.fftn(a), [SQ]),
    "fft.ifftn": (lambda m, a: m.fft.ifftn(a, norm="ortho"), [SQ]),
    "fft.rfft": (lambda m, a: m.fft.rfft(a), [V]),
    "fft.irfft": (lambda m, a: m.fft.irfft(a), [V]),
    "fft.rfft2": (lambda m, a: m.fft.rfft2(a), [SQ]),
    "fft.irfft2": (lambda m, a: m.fft.irfft2(a), [SQ]),
    "fft.rfftn": (lambda m, a: m.fft.rfftn(a), [SQ]),
    "fft.irfftn": (lambda m, a: m.fft.irfftn(a), [SQ]),
    "fft.hfft": (lambda m, a: m.fft.hfft(a), [V]),
    "fft.ihfft": (lambda m, a: m.fft.ihfft(a), [V]),
    "pad_reflect1d": (lambda m, a: m.nn.functional.pad(a, (2, 2), mode="reflect"), [_f(2, 3, 6)]),
    "pad_reflect2d": (lambda m, a: m.nn.functional.pad(a, (2, 1, 1, 1), mode="reflect"), [_f(2, 3, 5, 6)]),
    "pad_replicate1d": (lambda m, a: m.nn.functional.pad(a, (2, 0), mode="replicate"), [_f(3, 6)]),
    "pad_replicate2d": (lambda m, a: m.nn.functional.pad(a, (2, 2, 1, 1), mode="replicate"), [_f(2, 3, 5, 6)]),
    "pad_replicate3d": (lambda m, a: m.nn.functional.pad(a, (1,) * 6, mode="replicate"), [_f(2, 3, 4, 5, 6)]),
    "ReflectionPad2d": (lambda m, a: m.nn.ReflectionPad2d(1)(a), [_f(2, 3, 5, 6)]),
    "ReplicationPad3d": (lambda m, a: m.nn.ReplicationPad3d(1)(a), [_f(2, 3, 4, 5, 6)]),
    "avg_pool3d": (lambda m, a: m.nn.functional.avg_pool3d(a, 2), [_f(1, 2, 4, 4, 4)]),
    "max_pool3d": (lambda m, a: m.nn.functional.max_pool3d(a, 2), [_f(1, 2, 4, 4, 4)]),
    "adaptive_avg_pool3d": (lambda m, a: m.nn.functional.adaptive_avg_pool3d(a, 2), [_f(1, 2, 4, 4, 4)]),
    "adaptive_max_pool3d": (lambda m, a: m.nn.functional.adaptive_max_pool3d(a, 2), [_f(1, 2, 4, 4, 4)]),
    "max_unpool2d": (lambda m, a: m.nn.functional.max_unpool2d(*m.nn.functional.max_pool2d(
        a, 2, return_indices=True), 2), [_f(1, 2, 4, 4)]),
    "fractional_max_pool2d": (lambda m, a: m.nn.functional.fractional_max_pool2d(
        a, 2, output_size=2, _random_samples=m.full((1, 2, 2), 0.5)), [_f(1, 2, 4, 4)]),
    "grid_sample": (lambda m, a, g: m.nn.functional.grid_sample(a, g.clamp(-1, 1), align_corners=False),
                    [_f(1, 2, 4, 4), _f(1, 3, 3, 2)]),
    "mse_loss": (lambda m, a, b: m.nn.functional.mse_loss(a, b), [V, _f(8)]),
    "l1_loss": (lambda m, a, b: m.nn.functional.l1_loss(a, b), [V, _f(8)]),
    "smooth_l1_loss": (lambda m, a, b: m.nn.functional.smooth_l1_loss(a, b), [V, _f(8)]),
    "huber_loss": (lambda m, a, b: m.nn.functional.huber_loss(a, b), [V, _f(8)]),
    "soft_margin_loss": (lambda m, a, b: m.nn.functional.soft_margin_loss(a, b.sign()), [V, _f(8)]),
    "margin_ranking_loss": (lambda m, a, b, c: m.nn.functional.margin_ranking_loss(a, b, c.sign()),
                            [V, _f(8), _f(8)]),
    "hinge_embedding_loss": (lambda m, a, b: m.nn.functional.hinge_embedding_loss(a, b.sign()), [V, _f(8)]),
    "kl_div": (lambda m, a, b: m.nn.functional.kl_div(a, b.abs(), reduction="batchmean"), [SQ, _f(4, 4)]),
    "poisson_nll_loss": (lambda m, a, b: m.nn.functional.poisson_nll_loss(a, b.abs()), [V, _f(8)]),
    "binary_cross_entropy": (lambda m, a, b: m.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
                             [V, _f(8)]),
    "binary_cross_entropy_with_logits": (lambda m, a, b: m.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()), [V, _f(8)]),
    "cosine_embedding_loss": (lambda m, a, b, c: m.nn.functional.cosine_embedding_loss(a, b, c.sign()),
                              [SQ, _f(4, 4), _f(4)]),
    "triplet_margin_loss": (lambda m, a, b, c: m.nn.functional.triplet_margin_loss(a, b, c),
                            [SQ, _f(4, 4), _f(4, 4)]),
    "cross_entropy": (lambda m, a: m.nn.functional.cross_entropy(a, m.tensor(TARGET)), [SQ]),
    "nll_loss": (lambda m, a: m.nn.functional.nll_loss(a, m.tensor(TARGET)), [SQ]),
    "nll_loss2d": (lambda m, a: m.nn.functional.nll_loss(a, m.zeros(2, 5, 6, dtype=m.long)), [_f(2, 3, 5, 6)]),
    "multi_margin_loss": (lambda m, a: m.nn.functional.multi_margin_loss(a, m.tensor(TARGET)), [SQ]),
    "multilabel_margin_loss": (lambda m, a: m.nn.functional.multilabel_margin_loss(
        a, m.tensor([[0, 1, -1, 0]] * 4)), [SQ]),
    "ctc_loss": (lambda m, a: m.nn.functional.ctc_loss(a.log_softmax(2), m.tensor([[1, 2]]), m.tensor([6]),
                                                       m.tensor([2])), [_f(6, 1, 4)]),
}

# ops on neither list that keep their (lower-precision) input dtype, next to listed relatives
NATIVE = {
    "pad_reflect3d": (lambda m, a: m.nn.functional.pad(a, (1,) * 6, mode="reflect"), [_f(2, 3, 4, 5, 6)]),
    "pad_circular": (lambda m, a: m.nn.functional.pad(a, (2, 2), mode="circular"), [_f(2, 3, 6)]),
    "pad_constant": (lambda m, a: m.nn.functional.pad(a, (2, 2)), [_f(2, 3, 6)]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [V, _f(8)]),
    "fftshift": (lambda m, a: m.fft.fftshift(a), [V]),
    "linalg.vector_norm": (lambda m, a: m.linalg.vector_norm(a), [V]),
    "cumsum": (lambda m, a: m.cumsum(a, 0), [V]),
}


def _outputs(o):
    return [x for x in (o if isinstance(o, tuple) else (o,)) if hasattr(x, "dtype")]


def _run(module, fn, arrays, in_dtype, dtype):
    inputs = [module.tensor(a).to(getattr(module, in_dtype)) for a in arrays]
    with module.autocast("cpu", dtype=getattr(module, dtype)):
        return _outputs(fn(module, *inputs))


def _np(y):
    y = y.detach().resolve_conj()
    return (y.float() if y.dtype.is_floating_point else y).numpy()


def _compare(fn, arrays, in_dtype="bfloat16", dtype="bfloat16", tol=1e-4):
    ye = _run(ember, fn, arrays, in_dtype, dtype)
    yt = _run(torch, fn, arrays, in_dtype, dtype)
    assert [str(y.dtype).split(".")[1] for y in ye] == [str(y.dtype).split(".")[1] for y in yt]
    for e, t in zip(ye, yt):
        np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol)
    return ye


@pytest.mark.parametrize("name", list(FLOAT32))
def test_float32_list_vs_torch(name):
    fn, arrays = FLOAT32[name]
    ye = _compare(fn, arrays)
    assert all(y.dtype in (ember.float32, ember.complex64, ember.int64, ember.int32) for y in ye)
    assert ye[0].dtype in (ember.float32, ember.complex64, ember.int64)  # int64: matrix_rank


@pytest.mark.parametrize("name", list(NATIVE))
def test_ops_off_the_lists_keep_bfloat16(name):
    fn, arrays = NATIVE[name]
    ye = _compare(fn, arrays, tol=1e-2)
    assert ye[0].dtype is ember.bfloat16


@pytest.mark.parametrize("name", ["trace", "inverse", "lu_solve", "ormqr", "linalg.solve", "fft.rfft",
                                  "pad_replicate2d", "cholesky_solve"])
def test_float32_inputs_stay_float32(name):
    # the products these are built on are not cast down either
    fn, arrays = FLOAT32[name]
    ye = _compare(fn, arrays, in_dtype="float32")
    assert ye[0].dtype in (ember.float32, ember.complex64)


def test_vdot_keeps_its_inputs_dtype():
    _compare(NATIVE["vdot"][0], NATIVE["vdot"][1], in_dtype="float32")
    assert _run(ember, NATIVE["vdot"][0], NATIVE["vdot"][1], "float32", "bfloat16")[0].dtype is ember.float32


@pytest.mark.parametrize("name", ["trace", "inverse", "linalg.svd", "fft.rfft", "pad_reflect2d", "polar", "stft",
                                  "mse_loss"])
def test_float16_autocast(name):
    fn, arrays = FLOAT32[name]
    _compare(fn, arrays, in_dtype="float16", dtype="float16")


WIDEST = {
    "stack": lambda m, a, b: m.stack([a, b]),
    "cat": lambda m, a, b: m.cat([b, a]),
    "index_copy": lambda m, a, b: m.index_copy(a, 0, m.tensor([2, 0]), b[:2]),
    "Tensor.index_copy": lambda m, a, b: a.index_copy(0, m.tensor([1, 3]), b[1:3]),
}


@pytest.mark.parametrize("name", list(WIDEST))
def test_widest_type_list(name):
    a, b = _f(8), _f(8)

    def run(m, b_dtype):
        with m.autocast("cpu", dtype=m.bfloat16):
            return WIDEST[name](m, m.tensor(a).bfloat16(), m.tensor(b).to(getattr(m, b_dtype)))
    for b_dtype in ("float32", "bfloat16"):
        ye, yt = run(ember, b_dtype), run(torch, b_dtype)
        assert str(ye.dtype).split(".")[1] == str(yt.dtype).split(".")[1] == b_dtype
        np.testing.assert_array_equal(ye.float().numpy(), yt.float().numpy())


def test_in_place_index_copy_is_not_autocast():
    for m in (ember, torch):
        a = m.zeros(4, dtype=m.bfloat16)
        with m.autocast("cpu", dtype=m.bfloat16), pytest.raises(RuntimeError, match="same dtype"):
            a.index_copy_(0, m.tensor([0, 1]), m.ones(2))


def test_gradients_flow_back_in_the_inputs_dtype():
    a = SQ
    xe = ember.tensor(a).bfloat16().requires_grad_()
    xt = torch.tensor(a).bfloat16().requires_grad_()
    for m, x in ((ember, xe), (torch, xt)):
        with m.autocast("cpu", dtype=m.bfloat16):
            y = m.linalg.inv(x).sum() + m.fft.rfft(x).abs().sum() + m.nn.functional.pad(
                x[None], (1, 1), mode="replicate").sum()
        assert y.dtype == m.float32
        y.backward()
    assert xe.grad.dtype is ember.bfloat16 and xt.grad.dtype is torch.bfloat16
    np.testing.assert_allclose(xe.grad.float().numpy(), xt.grad.float().numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["inverse", "svd", "fft.fft", "cholesky", "cholesky_solve", "polar"])
def test_outside_cpu_autocast_half_types_still_raise(name):
    fn, arrays = FLOAT32[name]
    errors = []
    for m in (torch, ember):
        x = [m.tensor(a).bfloat16() for a in arrays]
        for region in (m.autocast("cpu", enabled=False), m.autocast("cuda", enabled=False)):
            with region, pytest.raises(Exception) as info:
                fn(m, *x)
            errors.append(info.type)
    assert errors[2:] == errors[:2] and errors[0] in (RuntimeError, NotImplementedError)


def test_solve_ex_and_matrix_norm_are_not_listed():
    x = SQ
    for m in (ember, torch):
        with m.autocast("cpu", dtype=m.bfloat16):
            with pytest.raises(NotImplementedError):
                m.linalg.solve_ex(m.tensor(x).bfloat16(), m.tensor(B).bfloat16())
            with pytest.raises(RuntimeError, match="Low precision"):
                m.linalg.matrix_norm(m.tensor(x).bfloat16(), 2)
