"""scaled_dot_product_attention and MultiheadAttention against torch: outputs, attention weights and gradients of
inputs, masks and parameters (random output gradients), dropout, errors, and float64 gradchecks of the primitive."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F

RNG = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched", "ignore:enable_nested_tensor is True")


def _t(a, grad=True):
    return torch.tensor(a, requires_grad=grad and a.dtype != bool)


def _e(a, grad=True):
    return ember.tensor(a, requires_grad=grad and a.dtype != bool)


def _close(e, t, atol=2e-5, rtol=1e-4):
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=rtol, atol=atol)


def _randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _masked_rows(shape):
    m = RNG.random(shape) > 0.4
    m[..., 0, :] = False  # a query row that may attend nowhere: torch gives zeros
    return m


# name: (q shape, k shape, v shape, mask, kwargs)
SDPA_CASES = {
    "plain": ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5), None, {}),
    "causal": ((2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8), None, dict(is_causal=True)),
    "causal_rect": ((1, 2, 6, 4), (1, 2, 3, 4), (1, 2, 3, 4), None, dict(is_causal=True)),
    "bool_mask": ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), RNG.random((4, 6)) > 0.3, {}),
    "bool_mask_empty_rows": ((2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), _masked_rows((2, 1, 4, 6)), {}),
    "float_mask": ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), _randn(2, 1, 4, 6), {}),
    "float_mask_inf": ((1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8),
                       np.where(RNG.random((4, 6)) > 0.5, -np.inf, 0).astype(np.float32), {}),
    "causal_and_mask": ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), RNG.random((4, 6)) > 0.3, dict(is_causal=True)),
    "scale": ((2, 4, 8), (2, 6, 8), (2, 6, 3), None, dict(scale=0.3)),
    "2d": ((4, 8), (6, 8), (6, 8), None, {}),
    "broadcast_batch": ((2, 3, 4, 8), (3, 6, 8), (3, 6, 8), None, {}),
    "gqa": ((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8), None, dict(enable_gqa=True)),
    "empty_keys": ((2, 3, 8), (2, 0, 8), (2, 0, 8), None, {}),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    qs, ks, vs, mask, kw = SDPA_CASES[case]
    q, k, v = _randn(*qs), _randn(*ks), _randn(*vs)
    tq, tk, tv, eq, ek, ev = _t(q), _t(k), _t(v), _e(q), _e(k), _e(v)
    tm = em = None
    if mask is not None:
        tm, em = _t(mask), _e(mask)
    t = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kw)
    e = F.scaled_dot_product_attention(eq, ek, ev, attn_mask=em, **kw)
    assert tuple(e.shape) == tuple(t.shape) and e.dtype is ember.float32
    _close(e, t)
    g = _randn(*t.shape)
    t.backward(torch.tensor(g))
    e.backward(ember.tensor(g))
    for a, b in ((eq, tq), (ek, tk), (ev, tv)) + (((em, tm),) if tm is not None and tm.requires_grad else ()):
        _close(a.grad, b.grad)


@pytest.mark.parametrize("dtype,atol", [(np.float64, 1e-12), ("float16", 2e-3), ("bfloat16", 2e-2)])
def test_sdpa_dtypes(dtype, atol):
    q, k, v = _randn(2, 3, 8, dtype=np.float64), _randn(2, 5, 8, dtype=np.float64), _randn(2, 5, 8, dtype=np.float64)
    mask = RNG.random((3, 5)) > 0.3
    if dtype is np.float64:
        t = TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), attn_mask=torch.tensor(mask))
        e = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), attn_mask=ember.tensor(mask))
        assert e.dtype is ember.float64
    else:
        td, ed = getattr(torch, dtype), getattr(ember, dtype)
        t = TF.scaled_dot_product_attention(*(torch.tensor(a).to(td) for a in (q, k, v)), attn_mask=torch.tensor(mask))
        e = F.scaled_dot_product_attention(*(ember.tensor(a).to(ed) for a in (q, k, v)), attn_mask=ember.tensor(mask))
        assert e.dtype is ed
    _close(e, t, atol=atol, rtol=atol)


def test_sdpa_gradcheck():
    q, k, v = (ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True),
               ember.randn(2, 5, 4, dtype=ember.float64, requires_grad=True),
               ember.randn(2, 5, 3, dtype=ember.float64, requires_grad=True))
    mask = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3]),
                                    [q, k, v, mask])
    assert ember.autograd.gradcheck(lambda *a: F.scaled_dot_product_attention(*a, is_causal=True, scale=0.7),
                                    [q, k[:, :3], v[:, :3]])
    assert ember.autograd.gradgradcheck(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3]),
                                        [q, k, v, mask])


def test_sdpa_dropout():
    q, k, v = ember.randn(2, 4, 6, 8), ember.randn(2, 4, 6, 8), ember.randn(2, 4, 6, 8)
    assert float(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).abs().max()) == 0
    ember.manual_seed(1)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ember.manual_seed(1)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    plain = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), plain.numpy())
    # backward flows through the same dropout mask
    qg = q.clone().requires_grad_()
    ember.manual_seed(2)
    out = F.scaled_dot_product_attention(qg, k, v, dropout_p=0.3)
    out.backward(ember.ones_like(out))
    assert qg.grad is not None and np.isfinite(qg.grad.numpy()).all()


def test_sdpa_errors_match_torch():
    q, k, v = _randn(2, 4, 3, 8), _randn(2, 4, 5, 8), _randn(2, 4, 5, 8)
    cases = [
        lambda lib, f, c: f(c(q), c(k), c(v).double()),
        lambda lib, f, c: f(c(q[0, 0, 0]), c(k[0, 0, 0]), c(v[0, 0, 0])),
        lambda lib, f, c: f(c(q), c(k), c(v), attn_mask=c(np.ones((3, 5), np.int64))),
        lambda lib, f, c: f(c(q), c(k), c(v), attn_mask=c(np.ones((3, 5), np.float64))),
        lambda lib, f, c: f(c(q[0]), c(k[0]), c(v[0]), attn_mask=c(np.ones((2, 1, 3, 5), np.float32))),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as te:
            case(torch, TF.scaled_dot_product_attention, torch.tensor)
        with pytest.raises(RuntimeError) as ee:
            case(ember, F.scaled_dot_product_attention, ember.tensor)
        assert str(te.value) == str(ee.value)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k[:, :3]), ember.tensor(v[:, :3]),
                                       enable_gqa=True)


# -- MultiheadAttention ------------------------------------------------------------------------------------------
L, S, B, E = 3, 5, 2, 8
KPM = RNG.random((B, S)) > 0.6
KPM[:, 0] = False
AM = RNG.random((L, S)) > 0.7
AM[:, 0] = False
CAUSAL = np.triu(np.full((L, L), -np.inf, np.float32), 1)

# name: (module kwargs, forward kwargs, self-attention, batched)
MHA_CASES = {
    "default": ({}, {}, False, True),
    "self": ({}, {}, True, True),
    "batch_first_kpm": (dict(batch_first=True), dict(key_padding_mask=KPM), False, True),
    "batch_first_kpm_no_weights": (dict(batch_first=True), dict(key_padding_mask=KPM[:, :L], need_weights=False),
                                   True, True),
    "bool_attn_mask": ({}, dict(attn_mask=AM), False, True),
    "both_masks_no_weights": ({}, dict(attn_mask=AM, key_padding_mask=KPM, need_weights=False), False, True),
    "float_attn_mask": ({}, dict(attn_mask=_randn(L, S)), False, True),
    "3d_mask_per_head": ({}, dict(attn_mask=_randn(B * 2, L, S), average_attn_weights=False), False, True),
    "float_kpm": ({}, dict(key_padding_mask=np.where(KPM, -np.inf, 0).astype(np.float32)), False, True),
    "kdim_vdim": (dict(kdim=6, vdim=4), dict(key_padding_mask=KPM), False, True),
    "bias_kv_zero_attn": (dict(add_bias_kv=True, add_zero_attn=True), dict(key_padding_mask=KPM, attn_mask=AM),
                          False, True),
    "bias_kv_no_weights": (dict(add_bias_kv=True), dict(need_weights=False), False, True),
    "no_bias": (dict(bias=False), {}, False, True),
    "causal_hint_sdpa": ({}, dict(attn_mask=CAUSAL, is_causal=True, need_weights=False), True, True),
    "causal_hint_weights": ({}, dict(attn_mask=CAUSAL, is_causal=True), True, True),
    "unbatched": ({}, dict(key_padding_mask=KPM[0]), False, False),
    "unbatched_no_weights": ({}, dict(need_weights=False, attn_mask=AM), False, False),
}


def _mha_pair(**kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(E, 2, **kw).eval()
    em = ember.nn.MultiheadAttention(E, 2, **kw).eval()
    em.load_state_dict(tm.state_dict())
    return tm, em


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_torch(case):
    kw, fkw, self_attn, batched = MHA_CASES[case]
    tm, em = _mha_pair(**kw)
    bf = kw.get("batch_first", False)

    def shape(n, d):
        return ((B, n, d) if bf else (n, B, d)) if batched else (n, d)
    s = L if self_attn else S
    q = _randn(*shape(L, E))
    k, v = (q, q) if self_attn else (_randn(*shape(s, kw.get("kdim", E))), _randn(*shape(s, kw.get("vdim", E))))
    tq, eq = _t(q), _e(q)
    if self_attn:
        tk = tv = tq
        ek = ev = eq
    else:
        tk, tv, ek, ev = _t(k), _t(v), _e(k), _e(v)
    tf = {n: torch.tensor(a) if isinstance(a, np.ndarray) else a for n, a in fkw.items()}
    ef = {n: ember.tensor(a) if isinstance(a, np.ndarray) else a for n, a in fkw.items()}
    to, tw = tm(tq, tk, tv, **tf)
    eo, ew = em(eq, ek, ev, **ef)
    _close(eo, to)
    assert (ew is None) == (tw is None)
    if tw is not None:
        _close(ew, tw)
    g = _randn(*to.shape)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    for a, b in ((eq, tq), (ek, tk), (ev, tv)):
        _close(a.grad, b.grad)
    tp = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        _close(p.grad, tp[name].grad)


def test_mha_functional_separate_weights_matches_torch():
    q, k, v = _randn(L, B, E), _randn(S, B, 6), _randn(S, B, 4)
    ws = [_randn(E, E), _randn(E, 6), _randn(E, 4)]
    bias, out_w, out_b = _randn(3 * E), _randn(E, E), _randn(E)
    args = lambda c: dict(query=c(q), key=c(k), value=c(v), embed_dim_to_check=E, num_heads=2,  # noqa: E731
                          in_proj_weight=None, in_proj_bias=c(bias), bias_k=None, bias_v=None, add_zero_attn=False,
                          dropout_p=0.0, out_proj_weight=c(out_w), out_proj_bias=c(out_b),
                          use_separate_proj_weight=True, q_proj_weight=c(ws[0]), k_proj_weight=c(ws[1]),
                          v_proj_weight=c(ws[2]), key_padding_mask=c(KPM))
    to, tw = TF.multi_head_attention_forward(**args(torch.tensor))
    eo, ew = F.multi_head_attention_forward(**args(ember.tensor))
    _close(eo, to)
    _close(ew, tw)


def test_mha_parameters_init_repr():
    for kw in ({}, dict(kdim=6, vdim=4, bias=False), dict(add_bias_kv=True)):
        tm = torch.nn.MultiheadAttention(E, 2, **kw)
        em = ember.nn.MultiheadAttention(E, 2, **kw)
        assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert repr(em) == repr(tm)
        assert type(em.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(em.out_proj, ember.nn.Linear)
        if em.in_proj_bias is not None:
            assert float(em.in_proj_bias.abs().max()) == 0 and float(em.out_proj.bias.abs().max()) == 0
    em = ember.nn.MultiheadAttention(E, 2)
    bound = (6 / (E + 3 * E)) ** 0.5  # xavier_uniform on (3E, E)
    assert float(em.in_proj_weight.abs().max()) <= bound
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        ember.nn.MultiheadAttention(E, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        ember.nn.MultiheadAttention(0, 2)


def test_mha_dropout_train_eval():
    em = ember.nn.MultiheadAttention(E, 2, dropout=0.5)
    x = ember.randn(L, B, E)
    a, b = em(x, x, x)[0], em(x, x, x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    em.eval()
    np.testing.assert_array_equal(em(x, x, x)[0].detach().numpy(), em(x, x, x)[0].detach().numpy())


def test_mha_errors():
    em = ember.nn.MultiheadAttention(E, 2)
    tm = torch.nn.MultiheadAttention(E, 2)
    x = _randn(L, B, E)
    bad = [dict(key_padding_mask=np.zeros((B, S, 1), bool)), dict(attn_mask=np.zeros((2, L), bool)),
           dict(attn_mask=np.zeros((3, L, L), bool))]
    for fkw in bad:
        with pytest.raises((AssertionError, RuntimeError)) as te:
            tm(*[torch.tensor(x)] * 3, **{n: torch.tensor(a) for n, a in fkw.items()})
        with pytest.raises(type(te.value)) as ee:
            em(*[ember.tensor(x)] * 3, **{n: ember.tensor(a) for n, a in fkw.items()})
        assert str(ee.value) == str(te.value).replace("torch", "ember")
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        em(*[ember.tensor(x)] * 3, is_causal=True)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor"):
        em(*[ember.randn(1, L, B, E)] * 3)


@pytest.mark.parametrize("name", ["ember.nn.modules.attention", "ember.nn.functional.attention"])
def test_docstring_examples(name):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name), globs={"ember": ember},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
