"""FlexAttention idioms (gpt-fast, torchtune, attention-gym): block masks from mask_mods, score_mods with captured
tensors, GQA, lse, against torch (its eager CPU path for values, a dense torch reference for gradients)."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as TF

import ember
import ember.nn.attention.flex_attention as EF

B, H, Q, KV, D = 2, 4, 37, 50, 16
_RNG = np.random.default_rng(0)
QN, KN, VN = (_RNG.standard_normal(s).astype(np.float32) for s in [(B, H, Q, D), (B, H, KV, D), (B, H, KV, D)])
GN = _RNG.standard_normal((B, H, Q, D)).astype(np.float32)
DOC = np.sort(_RNG.integers(0, 3, (B, KV)), axis=1)
SLOPES = np.exp2(-np.arange(1, H + 1)).astype(np.float32)
REL = _RNG.standard_normal((H, 2 * KV)).astype(np.float32)
_BLOCK_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
                "full_q_num_blocks", "full_q_indices"]


def _close(e, t, rtol=1e-5, atol=2e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _same_blocks(eb, tb):
    assert eb.shape == tb.shape and eb.BLOCK_SIZE == tb.BLOCK_SIZE and eb.seq_lengths == tb.seq_lengths
    for name in _BLOCK_ATTRS:
        e, t = getattr(eb, name), getattr(tb, name)
        assert (e is None) == (t is None), name
        if e is not None:
            _close(e, t, rtol=0, atol=0)


MASKS = {
    "causal": lambda lib: lambda b, h, q, kv: q >= kv,
    "sliding_window": lambda lib: lambda b, h, q, kv: (q >= kv) & (q - kv <= 8),
    "document": lambda lib: (lambda d: lambda b, h, q, kv: (d[b, q] == d[b, kv]) & (q >= kv))(lib.tensor(DOC)),
    "prefix_lm": lambda lib: (lambda p: lib.nn.attention.flex_attention.or_masks(
        lambda b, h, q, kv: kv <= p[b], lambda b, h, q, kv: q >= kv))(lib.tensor([5, 20])),
    "and_head": lambda lib: lib.nn.attention.flex_attention.and_masks(
        lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: (h % 2 == 0) | (kv % 3 != 0)),
    "none_attend": lambda lib: lambda b, h, q, kv: q < 0,
    "noop": lambda lib: lib.nn.attention.flex_attention.noop_mask,
}
SCORE_MODS = {
    "none": lambda lib: None,
    "alibi": lambda lib: (lambda s: lambda score, b, h, q, kv: score + s[h] * (kv - q))(lib.tensor(SLOPES)),
    "softcap": lambda lib: lambda score, b, h, q, kv: 5 * lib.tanh(score / 5),
    # indexes with h first, so the mod is evaluated per batch and head
    "rel_bias": lambda lib: (lambda t: lambda score, b, h, q, kv: score + t[h][q - kv + KV])(lib.tensor(REL)),
    "causal_inf": lambda lib: lambda score, b, h, q, kv: lib.where(q >= kv, score, -float("inf")),
}


def _run(lib, F, mask, score, BH=(B, H), bs=16, **kw):
    q, k, v = lib.tensor(QN), lib.tensor(KN), lib.tensor(VN)
    bm = None if mask is None else F.create_block_mask(MASKS[mask](lib), *BH, Q, KV, device="cpu", BLOCK_SIZE=bs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, aux = F.flex_attention(q, k, v, score_mod=SCORE_MODS[score](lib), block_mask=bm,
                                    return_aux=F.AuxRequest(lse=True), **kw)
    return out, aux.lse, bm


@pytest.mark.parametrize("mask", list(MASKS) + [None])
def test_block_mask_values_and_lse(mask):
    """Each mask pattern: the BlockMask's block tables, sparsity and drawing, the output and lse (-inf rows)."""
    eo, el, eb = _run(ember, EF, mask, "none", BH=(None, None) if mask == "causal" else (B, H))
    to, tl, tb = _run(torch, TF, mask, "none", BH=(None, None) if mask == "causal" else (B, H))
    _close(eo, to)
    _close(el, tl)
    if mask is not None:
        _same_blocks(eb, tb)
        assert abs(eb.sparsity() - tb.sparsity()) < 1e-9 and str(eb) == str(tb)
        _close(eb.to_dense(), tb.to_dense(), rtol=0, atol=0)


@pytest.mark.parametrize("score", [s for s in SCORE_MODS if s != "none"])
@pytest.mark.parametrize("mask", [None, "document"])
def test_score_mod_values(score, mask):
    eo, el, _ = _run(ember, EF, mask, score)
    to, tl, _ = _run(torch, TF, mask, score)
    _close(eo, to)
    _close(el, tl)


def _torch_dense(q, k, v, bias, mask, scale):
    s = (q @ k.transpose(-2, -1)) * scale + bias
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ v


@pytest.mark.parametrize("mask", ["causal", "none_attend", "document"])
def test_gradients_through_captured_bias(mask):
    """Gradients of q, k, v and of the captured ALiBi slopes and relative-bias table (fully masked rows: zero, no
    NaN), against the same attention written densely in torch."""
    grads = []
    for lib in (ember, torch):
        q, k, v = (lib.tensor(x, requires_grad=True) for x in (QN, KN, VN))
        slopes, table = lib.tensor(SLOPES, requires_grad=True), lib.tensor(REL, requires_grad=True)
        mask_fn = MASKS[mask](lib)
        if lib is ember:
            bm = EF.create_block_mask(mask_fn, B, H, Q, KV, device="cpu", BLOCK_SIZE=16)
            out = EF.flex_attention(q, k, v, lambda s, b, h, qi, kv: s + slopes[h] * (kv - qi) + table[h, qi - kv + KV],
                                    block_mask=bm, scale=0.3)
        else:
            m = TF.create_mask(mask_fn, B, H, Q, KV, "cpu")
            qi, kv = torch.arange(Q)[:, None], torch.arange(KV)[None]
            bias = slopes[:, None, None] * (kv - qi) + table[:, qi - kv + KV]
            out = _torch_dense(q, k, v, bias, m, 0.3)
        out.backward(lib.tensor(GN))
        grads.append([out, q.grad, k.grad, v.grad, slopes.grad, table.grad])
    for e, t in zip(*grads):
        _close(e, t, rtol=1e-4, atol=1e-5)
        assert np.isfinite(e.detach().numpy()).all()


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_gqa_dtypes_and_scale(dtype):
    """GQA (8 query heads over 2 kv heads), a custom scale, float64 and bfloat16 (lse stays float32)."""
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        dt = getattr(lib, dtype)
        q = lib.tensor(np.concatenate([QN, QN[:, ::-1]], 1)).to(dt)
        k, v = lib.tensor(KN[:, :2]).to(dt), lib.tensor(VN[:, :2]).to(dt)
        bm = F.create_block_mask(lambda b, h, qi, kv: qi >= kv, 1, 8, Q, KV, device="cpu")
        out, aux = F.flex_attention(q, k, v, block_mask=bm, scale=0.2, enable_gqa=True,
                                    return_aux=F.AuxRequest(lse=True))
        res.append((out, aux.lse))
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-2, atol=1e-2)
    _close(res[0][0], res[1][0], **tol)
    _close(res[0][1], res[1][1], **(tol if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)))


def test_max_scores_and_return_lse_forms():
    """max_scores (here vs the dense reference), return_lse's tuple and FutureWarning, return_aux with no lse."""
    q, k, v = ember.tensor(QN), ember.tensor(KN), ember.tensor(VN)
    bm = EF.create_block_mask(lambda b, h, qi, kv: qi >= kv, None, None, Q, KV, device="cpu")
    out, aux = EF.flex_attention(q, k, v, block_mask=bm, return_aux=EF.AuxRequest(lse=True, max_scores=True))
    tq, tk = torch.tensor(QN), torch.tensor(KN)
    s = (tq @ tk.transpose(-2, -1) / 4).masked_fill(~torch.ones(Q, KV, dtype=torch.bool).tril(), float("-inf"))
    _close(aux.max_scores, s.amax(-1))
    _close(aux.lse, s.logsumexp(-1))
    with pytest.warns(FutureWarning):
        out2, lse = EF.flex_attention(q, k, v, block_mask=bm, return_lse=True)
    _close(out2, out, rtol=0, atol=0)
    _close(lse, aux.lse, rtol=0, atol=0)
    bm2 = EF.create_block_mask(lambda b, h, qi, kv: qi >= kv, None, None, Q, KV, device="cpu",
                               compute_dq_write_order=False, dq_kv_order=True)
    _close(EF.flex_attention(q, k, v, block_mask=bm2), out, rtol=0, atol=0)
    _, aux = EF.flex_attention(q, k, v, return_aux=EF.AuxRequest())
    assert aux == EF.AuxOutput(None, None)


def test_create_mask_and_block_mask_api():
    """create_mask of a mask_mod and of a score_mod, BlockMask indexing, _adjust, from_kv_blocks, as_tuple, numel."""
    causal = {lib: (lambda b, h, q, kv: q >= kv) for lib in (ember, torch)}
    for mod in (lambda b, h, q, kv: (q >= kv) & (h > 0),
                lambda lib: lambda score, b, h, q, kv: lib.where(q >= kv, score, -float("inf"))):
        e = EF.create_mask(mod if mod.__code__.co_argcount == 4 else mod(ember), 2, 3, 5, 7, "cpu")
        t = TF.create_mask(mod if mod.__code__.co_argcount == 4 else mod(torch), 2, 3, 5, 7, "cpu")
        _close(e, t, rtol=0, atol=0)
    eb = EF.create_block_mask(causal[ember], B, H, 256, 384, device="cpu", BLOCK_SIZE=(64, 128))
    tb = TF.create_block_mask(causal[torch], B, H, 256, 384, device="cpu", BLOCK_SIZE=(64, 128))
    assert eb.numel() == tb.numel() and len(eb.as_tuple()) == len(tb.as_tuple())
    assert eb.as_tuple()[:2] == tb.as_tuple()[:2] and eb.as_tuple()[-3:-1] == tb.as_tuple()[-3:-1]
    for index in (0, (1, 2), (slice(0, 2), slice(1, 2)), (-1, slice(None), torch.tensor([1, 3]))):
        ei = tuple(ember.tensor(i.numpy()) if isinstance(i, torch.Tensor) else i for i in
                   (index if isinstance(index, tuple) else (index,)))
        _same_blocks(eb[ei], tb[index])
    _same_blocks(eb._adjust(130, 200), tb._adjust(130, 200))
    assert repr(eb).replace("ember.", "torch.") == repr(tb)
    en, ei = ember.tensor([[[1, 2]]], dtype=ember.int32), ember.tensor([[[[0, 1], [0, 1]]]], dtype=ember.int32)
    tn, ti = torch.tensor([[[1, 2]]], dtype=torch.int32), torch.tensor([[[[0, 1], [0, 1]]]], dtype=torch.int32)
    _same_blocks(EF.BlockMask.from_kv_blocks(en, ei, BLOCK_SIZE=32), TF.BlockMask.from_kv_blocks(tn, ti, BLOCK_SIZE=32))
    assert EF.BlockMask.from_kv_blocks(en, ei).mask_mod is EF.noop_mask
    assert len(EF.create_block_mask(causal[ember], 1, 1, 8, 8, device="cpu").to("cpu").as_tuple()) == 17


def test_batch_broadcast_kv_and_decoding_slice():
    """kv of batch 1 against a batch-2 query with a batch-2 block mask; gpt-fast decoding: the query-block row of the
    cache position sliced out of a full causal BlockMask, its mask_mod offset by that position."""
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        q, k, v = lib.tensor(QN), lib.tensor(KN[:1]), lib.tensor(VN[:1])
        bm = F.create_block_mask(lambda b, h, qi, kv: (qi >= kv) | (b == 1), B, None, Q, KV, device="cpu")
        pos = lib.tensor([20])
        q1 = lib.tensor(QN[:, :, 20:21])
        full = F.create_block_mask(lambda b, h, qi, kv: qi >= kv, None, None, KV, KV, device="cpu", BLOCK_SIZE=16)
        bm1 = full[:, :, pos // full.BLOCK_SIZE[0]]
        bm1.mask_mod = (lambda mm, off: lambda b, h, qi, kv: mm(b, h, qi + off, kv))(full.mask_mod, pos[0])
        bm1.seq_lengths = (1, KV)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append((F.flex_attention(q, k, v, block_mask=bm), F.flex_attention(q1, lib.tensor(KN),
                                                                                    lib.tensor(VN), block_mask=bm1)))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


@pytest.mark.parametrize("case, exc", [
    ("heads", ValueError), ("gqa_groups", ValueError), ("embed", ValueError), ("dims", NotImplementedError),
    ("batch", ValueError), ("longer", ValueError), ("shorter", ValueError), ("sliced", RuntimeError),
    ("lse_and_aux", ValueError), ("block_score_mod", AssertionError), ("not_callable", RuntimeError),
])
def test_errors(case, exc):
    for lib, F in ((ember, EF), (torch, TF)):
        q, k, v = lib.zeros(2, 4, 8, 16), lib.zeros(2, 4, 8, 16), lib.zeros(2, 4, 8, 16)
        bm = F.create_block_mask(lambda b, h, qi, kv: qi >= kv, None, None, 8, 8, device="cpu")
        calls = {
            "heads": lambda: F.flex_attention(q, k[:, :2], v[:, :2]),
            "gqa_groups": lambda: F.flex_attention(q, k[:, :3], v[:, :3], enable_gqa=True),
            "embed": lambda: F.flex_attention(q, k[..., :8], v),
            "dims": lambda: F.flex_attention(q[0], k[0], v[0]),
            "batch": lambda: F.flex_attention(q, k[:1], v[:1]),
            "longer": lambda: F.flex_attention(lib.zeros(2, 4, 9, 16), k, v, block_mask=bm),
            "shorter": lambda: F.flex_attention(q[:, :, :4], k, v, block_mask=bm),
            "sliced": lambda: F.flex_attention(q, k, v, block_mask=bm[0]),
            "lse_and_aux": lambda: F.flex_attention(q, k, v, return_lse=True, return_aux=F.AuxRequest(lse=True)),
            "block_score_mod": lambda: F.create_block_mask(lambda s, b, h, qi, kv: s, 1, 1, 8, 8, device="cpu"),
            "not_callable": lambda: F.and_masks(1),
        }
        with pytest.raises(exc):
            calls[case]()


def test_docstring_examples():
    import doctest
    result = doctest.testmod(EF, globs={"ember": ember}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
