"""The fast paths of the nn primitives against their references and torch, at sizes that take them: blocks of a
formula spread over threads (gelu), bitwise masks (relu's backward), rows in cache (layer_norm), chunks of attention
heads, convolution chunks, linear's array backward, optimizers stepping parameters on several threads, and the BLAS
thread switch."""
import math

import numpy as np
import pytest
import scipy.special
import torch

import ember
from ember._kernels import blas as _blas, compiled, elementwise
from ember._ops import attention, conv, nn_norm, nn_ops, pool

from .torch_ref import close

RNG = np.random.default_rng(0)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request, monkeypatch):
    """One intra-op thread, or two; every op cuts its work in small blocks, and spreads them even at these sizes."""
    from ember.optim import optimizer
    before = ember.get_num_threads()
    ember.set_num_threads(request.param)
    for mod, name in ((elementwise, "MIN_SIZE"), (nn_norm, "_SPREAD"), (attention, "_SPREAD"), (conv, "_SPREAD"),
                      (conv, "_SPREAD_ADDS"), (optimizer, "_PARALLEL_MIN"), (_blas, "LARGE")):
        monkeypatch.setattr(mod, name, 0)
    monkeypatch.setattr(elementwise, "_BLOCK", 4096)
    monkeypatch.setattr(nn_norm, "_ROW_BLOCK", 2048)
    yield request.param
    ember.set_num_threads(before)


def _pair(a, grad=True):
    return (ember.tensor(a, requires_grad=grad and a.dtype.kind == "f"),
            torch.tensor(a, requires_grad=grad and a.dtype.kind == "f"))


def _check_grads(e_out, t_out, e_in, t_in, tol=(2e-5, 2e-5)):
    """Outputs close, and the gradients of the inputs under one random output gradient."""
    close(e_out, t_out, tol=tol, what="output")
    g = RNG.standard_normal(tuple(t_out.shape)).astype(np.float32)
    ge = ember.autograd.grad(e_out, e_in, ember.tensor(g), allow_unused=True)
    gt = torch.autograd.grad(t_out, t_in, torch.tensor(g), allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        close(a, b, tol=(tol[0] * 10, tol[1] * 10), what=f"grad {i}")


# -- gelu ------------------------------------------------------------------------------------------------------------
def test_gelu_float32_formula_against_exact():
    x = np.concatenate([np.linspace(-12, 12, 200_001), [0.0, -0.0, 1e4, -1e4, 40.0, -40.0]]).astype(np.float32)
    y, d = np.empty_like(x), np.empty_like(x)
    nn_ops._gelu_f32(x, (y, d))
    x64 = x.astype(np.float64)
    phi = scipy.special.ndtr(x64)
    assert np.abs(y - x64 * phi).max() < 1e-6  # torch's float32 gelu is off by 1.2e-6
    assert np.abs(d - (phi + x64 * np.exp(-x64 ** 2 / 2) / math.sqrt(2 * math.pi))).max() < 1e-6
    y1 = np.empty_like(x)
    nn_ops._gelu_f32(x, (y1,))  # the forward without the derivative
    assert np.abs(y1 - x64 * phi).max() < 1e-6
    special = np.array([np.inf, -np.inf, np.nan], np.float32)
    out = np.empty_like(special)
    with np.errstate(all="ignore"):
        nn_ops._gelu_f32(special, (out,))
    np.testing.assert_array_equal(out, [np.inf, np.nan, np.nan])  # inf * Phi(inf); torch's vector kernel gives nan


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_large_vs_torch(threads, approximate):
    x = (RNG.standard_normal((3, 10_001)) * 3).astype(np.float32)  # several blocks
    xe, xt = _pair(x)
    _check_grads(ember.nn.functional.gelu(xe, approximate=approximate),
                 torch.nn.functional.gelu(xt, approximate=approximate), [xe], [xt])
    with ember.no_grad():
        close(ember.nn.functional.gelu(ember.tensor(x), approximate=approximate),
              torch.nn.functional.gelu(torch.tensor(x), approximate=approximate))


@pytest.mark.parametrize("fused", [False, True], ids=["numpy", "numba"])
def test_blockwise_threads_give_the_same_bits(monkeypatch, fused):
    if fused:
        pytest.importorskip("numba")
    monkeypatch.setattr(compiled, "MIN_SIZE", 0 if fused else 1 << 40)
    monkeypatch.setattr(elementwise, "_BLOCK", 1000)
    x = RNG.standard_normal(20_003).astype(np.float32)
    runs = []
    for n, spread in ((1, 1 << 40), (2, 0)):
        monkeypatch.setattr(elementwise, "MIN_SIZE", spread)
        ember.set_num_threads(n)
        try:
            runs.append(elementwise.blockwise(np, lambda a, out: nn_ops._gelu_f32(a, out), x, nout=2))
        finally:
            ember.set_num_threads(2)
    runs.append((np.empty_like(x), np.empty_like(x)))
    nn_ops._gelu_f32(x, runs[-1])  # in one piece
    for a, b, c in zip(*runs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("name", ["silu", "mish", "softplus", "elu"])
def test_smooth_activations_large_vs_torch(threads, name):
    x = (RNG.standard_normal(20_000) * 4).astype(np.float32)
    xe, xt = _pair(x)
    _check_grads(getattr(ember.nn.functional, name)(xe), getattr(torch.nn.functional, name)(xt), [xe], [xt])


# -- masks -------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("invert", [False, True])
def test_masked_matches_where(dtype, invert):
    g = np.array([1.5, -2.0, np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0], dtype)
    mask = np.array([True, False, True, False, False, True, True, False])
    expected = np.where(mask, 0, g) if invert else np.where(mask, g, 0)
    np.testing.assert_array_equal(pool.masked(g, mask, invert), expected.astype(dtype))
    ints = np.arange(8)
    np.testing.assert_array_equal(pool.masked(ints, mask, invert), np.where(mask, 0, ints) if invert
                                  else np.where(mask, ints, 0))


@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh"])
def test_piecewise_backward_zeros_inf_and_nan_gradients(name):
    x = np.array([-1.0, 0.5, -2.0, 3.0, 7.0, 0.0], np.float32)
    g = np.array([np.inf, np.nan, np.nan, -np.inf, 2.0, np.inf], np.float32)
    xe, xt = _pair(x)
    ye, yt = getattr(ember.nn.functional, name)(xe), getattr(torch.nn.functional, name)(xt)
    (ge,) = ember.autograd.grad(ye, xe, ember.tensor(g))
    (gt,) = torch.autograd.grad(yt, xt, torch.tensor(g))
    np.testing.assert_array_equal(ge.numpy(), gt.numpy())


# -- layer_norm on rows ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,norm,affine", [((300, 257), (257,), True), ((4, 60, 7, 9), (7, 9), True),
                                               ((700, 96), (96,), False), ((3, 5), (3, 5), True)])
def test_layer_norm_rows_vs_torch(threads, shape, norm, affine):
    x = (RNG.standard_normal(shape) * 3 + 5).astype(np.float32)  # an offset the variance must not cancel
    w = RNG.standard_normal(norm).astype(np.float32) if affine else None
    b = RNG.standard_normal(norm).astype(np.float32) if affine else None
    ins = [(x, True)] + ([(w, True), (b, True)] if affine else [])
    e_in = [ember.tensor(a, requires_grad=r) for a, r in ins]
    t_in = [torch.tensor(a, requires_grad=r) for a, r in ins]
    ye = ember.nn.functional.layer_norm(e_in[0], norm, *e_in[1:], eps=1e-5)
    yt = torch.nn.functional.layer_norm(t_in[0], norm, *t_in[1:], eps=1e-5)
    _check_grads(ye, yt, e_in, t_in, tol=(1e-4, 1e-4))


def test_rms_norm_rows_vs_torch():
    x, w = RNG.standard_normal((500, 64)).astype(np.float32), RNG.standard_normal(64).astype(np.float32)
    (xe, xt), (we, wt) = _pair(x), _pair(w)
    _check_grads(ember.nn.functional.rms_norm(xe, (64,), we, eps=1e-6),
                 torch.nn.functional.rms_norm(xt, (64,), wt, eps=1e-6), [xe, we], [xt, wt], tol=(1e-4, 1e-4))


def test_layer_norm_rows_match_the_general_path():
    x = RNG.standard_normal((40, 33)).astype(np.float32)
    w, b = RNG.standard_normal(33).astype(np.float32), RNG.standard_normal(33).astype(np.float32)
    y, mean, var = nn_norm.rows_forward(x, w, b, 1e-5, True)
    mu = x.mean(1, keepdims=True)
    v = ((x - mu) ** 2).mean(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(v + 1e-5) * w + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(var, v[:, 0], rtol=1e-5, atol=1e-6)
    # a transposed (non-contiguous) input takes the general path: the same values
    xt = np.ascontiguousarray(x.T).T
    ye = ember.nn.functional.layer_norm(ember.tensor(xt), (33,), ember.tensor(w), ember.tensor(b))
    np.testing.assert_allclose(ye.numpy(), y, rtol=1e-5, atol=1e-5)


def test_layer_norm_rows_second_derivative_vs_torch():
    x = RNG.standard_normal((6, 8))
    w, b = RNG.standard_normal(8), RNG.standard_normal(8)
    (xe, xt), (we, wt), (be, bt) = _pair(x), _pair(w), _pair(b)
    ge, = ember.autograd.grad(ember.nn.functional.layer_norm(xe, (8,), we, be).pow(2).sum(), xe, create_graph=True)
    gt, = torch.autograd.grad(torch.nn.functional.layer_norm(xt, (8,), wt, bt).pow(2).sum(), xt, create_graph=True)
    close(ge, gt, "float64")
    h = RNG.standard_normal(x.shape)
    close(ember.autograd.grad(ge, we, ember.tensor(h))[0], torch.autograd.grad(gt, wt, torch.tensor(h))[0], "float64")


# -- attention ---------------------------------------------------------------------------------------------------------
def _qkv(batch, L, S, E, Ev, dtype=np.float32):
    return (RNG.standard_normal(batch + (L, E)).astype(dtype), RNG.standard_normal(batch + (S, E)).astype(dtype),
            RNG.standard_normal(batch + (S, Ev)).astype(dtype))


@pytest.mark.parametrize("batch,L,S,causal,mask", [((9, 4), 40, 40, True, False), ((3,), 17, 29, False, True),
                                                   ((2, 2), 30, 12, True, True), ((40, 3), 33, 33, False, False),
                                                   ((1, 6), 50, 50, True, False)])
def test_sdpa_fast_path_vs_reference_and_torch(threads, monkeypatch, batch, L, S, causal, mask):
    monkeypatch.setattr(attention, "_CHUNK", 3000)  # chunks of dim 0, and of dim 1 where one index is larger
    q, k, v = _qkv(batch, L, S, 16, 8)
    bias = np.where(RNG.random((L, S)) > 0.2, 0, -np.inf).astype(np.float32) if mask else None
    if mask:
        bias[:, 0] = 0  # every row sees a key: torch's reference has no zero rows
    assert attention._fits(np, q, k, v)
    out, p = attention.fast_forward(q, k, v, bias, None, 0.3, causal, True)
    ref_out, ref_p = attention.reference(np, q, k, v, bias, None, 0.3, causal, True)
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p, ref_p, rtol=1e-5, atol=1e-6)
    (qe, qt), (ke, kt), (ve, vt) = _pair(q), _pair(k), _pair(v)
    me, mt = (ember.tensor(bias), torch.tensor(bias)) if mask else (None, None)
    ye = ember.nn.functional.scaled_dot_product_attention(qe, ke, ve, me, is_causal=causal, scale=0.3)
    if causal and mask:  # torch takes one or the other: the two masks as one
        mt, causal = torch.tensor(bias + np.where(np.tri(L, S, dtype=bool), 0, -np.inf).astype(np.float32)), False
    yt = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, mt, is_causal=causal, scale=0.3)
    _check_grads(ye, yt, [qe, ke, ve], [qt, kt, vt], tol=(1e-4, 1e-5))


def test_sdpa_fast_path_merges_heads_as_a_view():
    q, k, v = _qkv((2, 3), 5, 5, 4, 4)
    y = ember.nn.functional.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v))
    merged = y.transpose(1, 2)
    assert merged.is_contiguous()  # torch's layout: (B, L, H, E) memory


def test_sdpa_fast_backward_with_dropout_matches_the_tensor_formula():
    q, k, v = _qkv((3, 2), 6, 7, 4, 5)
    keep = (RNG.random((3, 2, 6, 7)) > 0.3) / 0.7
    g = RNG.standard_normal((3, 2, 6, 5)).astype(np.float32)
    _, p = attention.fast_forward(q, k, v, None, keep, 0.5, False, True)
    fast = attention.fast_backward(g, q, k, v, p, keep, 0.5, (True, True, True))
    pk = p * keep
    ds = p * (g @ np.swapaxes(v, -1, -2) * keep)
    ds -= p * ds.sum(-1, keepdims=True)
    for a, b in zip(fast, (ds @ k * 0.5, np.swapaxes(ds, -1, -2) @ q * 0.5, np.swapaxes(pk, -1, -2) @ g)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sdpa_fast_path_half(dtype):
    q, k, v = _qkv((2, 2), 6, 6, 8, 8, np.float64)
    te = [ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True) for a in (q, k, v)]
    tt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (q, k, v)]
    ye = ember.nn.functional.scaled_dot_product_attention(*te, is_causal=True)
    yt = torch.nn.functional.scaled_dot_product_attention(*tt, is_causal=True)
    assert ye.dtype.name == dtype
    g = RNG.standard_normal(tuple(yt.shape))
    ge = ember.autograd.grad(ye, te, ember.tensor(g, dtype=ye.dtype))
    gt = torch.autograd.grad(yt, tt, torch.tensor(g, dtype=yt.dtype))
    for a, b in zip((ye,) + ge, (yt,) + gt):
        close(a, b, dtype)


# -- convolution chunks ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ws,kw", [((70, 3, 12, 12), (8, 3, 3, 3), dict(padding=1)),
                                      ((33, 6, 9, 9), (6, 2, 3, 3), dict(stride=2, groups=3)),
                                      ((20, 12, 8, 8), (4, 12, 3, 3), dict(dilation=2, padding=2))])
def test_conv2d_chunks_vs_torch(threads, monkeypatch, xs, ws, kw):
    monkeypatch.setattr(conv, "_CHUNK", 4096)  # many chunks of images and of channels
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in (xs, ws, ws[:1]))
    (xe, xt), (we, wt), (be, bt) = _pair(x), _pair(w), _pair(b)
    _check_grads(ember.nn.functional.conv2d(xe, we, be, **kw), torch.nn.functional.conv2d(xt, wt, bt, **kw),
                 [xe, we, be], [xt, wt, bt], tol=(1e-4, 1e-4))


def test_conv_transpose2d_channel_pieces_vs_torch(threads, monkeypatch):
    monkeypatch.setattr(conv, "_CHUNK", 2048)
    x, w = RNG.standard_normal((5, 6, 7, 7)).astype(np.float32), RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)
    (xe, xt), (we, wt) = _pair(x), _pair(w)
    _check_grads(ember.nn.functional.conv_transpose2d(xe, we, stride=2, groups=2),
                 torch.nn.functional.conv_transpose2d(xt, wt, stride=2, groups=2), [xe, we], [xt, wt],
                 tol=(1e-4, 1e-4))


def test_conv_weight_gradient_without_kept_columns(monkeypatch):
    monkeypatch.setattr(conv, "_KEEP_COLS", 0)  # recomputed per chunk in backward
    x, w = RNG.standard_normal((9, 2, 6, 6)).astype(np.float32), RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    (xe, xt), (we, wt) = _pair(x), _pair(w)
    _check_grads(ember.nn.functional.conv2d(xe, we), torch.nn.functional.conv2d(xt, wt), [xe, we], [xt, wt],
                 tol=(1e-4, 1e-4))


# -- linear's array backward -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [("float32", None), ("bfloat16", None), ("float64", None)])
def test_linear_backward_vs_torch(dtype, tol):
    x, w, b = RNG.standard_normal((3, 5, 7)), RNG.standard_normal((4, 7)), RNG.standard_normal(4)
    te = [ember.tensor(a, dtype=getattr(ember, dtype), requires_grad=True) for a in (x, w, b)]
    tt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (x, w, b)]
    ye, yt = ember.nn.functional.linear(*te), torch.nn.functional.linear(*tt)
    g = RNG.standard_normal(tuple(yt.shape))
    ge = ember.autograd.grad(ye, te, ember.tensor(g, dtype=ye.dtype))
    gt = torch.autograd.grad(yt, tt, torch.tensor(g, dtype=yt.dtype))
    for a, c in zip((ye,) + ge, (yt,) + gt):
        assert a.dtype.name == dtype and a.is_contiguous()
        close(a, c, dtype)


# -- optimizers on threads ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kwargs", [("AdamW", dict(lr=0.01)), ("SGD", dict(lr=0.1, momentum=0.9))])
def test_optimizer_threads_vs_torch(threads, monkeypatch, name, kwargs):
    from ember.optim import optimizer
    monkeypatch.setattr(optimizer, "_PARALLEL_MIN", 1000)  # parameters spread over threads
    shapes = [(30, 20), (200,), (64, 30), (7,)]
    init = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    ep = [ember.nn.Parameter(ember.tensor(a)) for a in init]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    eo, to = getattr(ember.optim, name)(ep, **kwargs), getattr(torch.optim, name)(tp, **kwargs)
    versions = [p._version for p in ep]
    for _ in range(3):
        for e, t in zip(ep, tp):
            g = RNG.standard_normal(t.shape).astype(np.float32)
            e.grad, t.grad = ember.tensor(g), torch.tensor(g)
        eo.step()
        to.step()
    for e, t, v in zip(ep, tp, versions):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)
        assert e._version == v + 3


# -- BLAS threads ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m,k,n", [(300, 20, 70), (70, 20, 300), (64, 9, 64), (70, 500, 90), (64, 4099, 64)])
def test_matmul_blocks_match_the_product(threads, m, k, n):
    """Blocks of rows or columns, pieces of a long inner dimension (k >= 2 max(m, n)), or the whole product."""
    a, b = RNG.standard_normal((m, k)).astype(np.float32), RNG.standard_normal((n, k)).astype(np.float32).T
    exact = a.astype(np.float64) @ b.astype(np.float64)
    tol = dict(rtol=1e-5, atol=5e-6 * math.sqrt(k))  # float32 sums of k products of N(0, 1) values
    np.testing.assert_allclose(_blas.matmul(a, b), exact, **tol)
    np.testing.assert_allclose(_blas.matmul(b.T, a.T), exact.T, **tol)


def test_one_thread_restores_the_blas_thread_count():
    fns = _blas._openblas()
    if not fns:
        pytest.skip("NumPy's BLAS has no settable thread count")
    get, put = fns
    before = get()
    put(2)
    try:
        with _blas.one_thread():
            assert get() == 1
        assert get() == 2
        with _blas.one_thread(when=False):
            assert get() == 2
        with pytest.raises(ValueError):
            with _blas.one_thread():
                raise ValueError
        assert get() == 2
    finally:
        put(before)
