"""LLM inference and parameter-efficient fine-tuning idioms (LLaMA-style decoders, KV caches, sampling, LoRA, bf16
training) against torch."""
import math

import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _llama(lib, dim=32, n_layers=2, n_heads=4, n_kv_heads=2, vocab=50, max_seq=32):
    """A LLaMA-style decoder: RMSNorm in float32, complex RoPE, GQA by expand+reshape, a preallocated KV cache,
    SwiGLU and tied embeddings."""
    nn, F = lib.nn, lib.nn.functional
    hd = dim // n_heads

    class RMSNorm(nn.Module):
        def __init__(self, d, eps=1e-5):
            super().__init__()
            self.eps, self.weight = eps, nn.Parameter(lib.ones(d))

        def forward(self, x):
            xf = x.float()
            return (xf * lib.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight

    def rope(x, freqs_cis):
        x_ = lib.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return lib.view_as_real(x_ * freqs_cis.view(1, x_.shape[1], 1, x_.shape[-1])).flatten(3).type_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq, self.wo = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
            self.wk, self.wv = nn.Linear(dim, n_kv_heads * hd, bias=False), nn.Linear(dim, n_kv_heads * hd, bias=False)
            self.w1, self.w3 = nn.Linear(dim, 64, bias=False), nn.Linear(dim, 64, bias=False)
            self.w2 = nn.Linear(64, dim, bias=False)
            self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)
            self.register_buffer("cache_k", lib.zeros(2, max_seq, n_kv_heads, hd), persistent=False)
            self.register_buffer("cache_v", lib.zeros(2, max_seq, n_kv_heads, hd), persistent=False)

        def forward(self, x, start, freqs_cis, mask, use_cache):
            b, t, _ = x.shape
            h = self.n1(x)
            q = rope(self.wq(h).view(b, t, n_heads, hd), freqs_cis)
            k = rope(self.wk(h).view(b, t, n_kv_heads, hd), freqs_cis)
            v = self.wv(h).view(b, t, n_kv_heads, hd)
            if use_cache:
                self.cache_k, self.cache_v = self.cache_k.to(q), self.cache_v.to(q)
                self.cache_k[:b, start:start + t], self.cache_v[:b, start:start + t] = k, v
                k, v = self.cache_k[:b, :start + t], self.cache_v[:b, :start + t]
            rep = n_heads // n_kv_heads
            k, v = (z[:, :, :, None, :].expand(b, z.shape[1], n_kv_heads, rep, hd).reshape(b, z.shape[1], -1, hd)
                    for z in (k, v))
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            scores = lib.matmul(q, k.transpose(2, 3)) / math.sqrt(hd)
            if mask is not None:
                scores = scores + mask
            att = F.softmax(scores.float(), dim=-1).type_as(q) @ v  # (B, nh, T, hd)
            x = x + self.wo(att.transpose(1, 2).contiguous().view(b, t, -1))
            h = self.n2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, dim)
            self.layers = nn.ModuleList([Block() for _ in range(n_layers)])
            self.norm = RMSNorm(dim)
            self.output = nn.Linear(dim, vocab, bias=False)
            self.output.weight = self.tok_embeddings.weight
            freqs = 1.0 / (10000.0 ** (lib.arange(0, hd, 2)[: hd // 2].float() / hd))
            freqs = lib.outer(lib.arange(max_seq * 2), freqs).float()
            self.freqs_cis = lib.polar(lib.ones_like(freqs), freqs)
            self.checkpointing = False

        def forward(self, tokens, start=0, use_cache=False):
            t = tokens.shape[1]
            h = self.tok_embeddings(tokens)
            mask = None
            if t > 1:
                mask = lib.triu(lib.full((t, t), float("-inf")), diagonal=1)
                mask = lib.hstack([lib.zeros((t, start)), mask]).type_as(h)
            fc = self.freqs_cis[start:start + t]
            for layer in self.layers:
                if self.checkpointing and self.training:
                    h = lib.utils.checkpoint.checkpoint(layer, h, start, fc, mask, False, use_reentrant=False)
                else:
                    h = layer(h, start, fc, mask, use_cache)
            return self.output(self.norm(h)).float()

    return Llama()


def _pair_llama(**kw):
    torch.manual_seed(0)
    tm, em = _llama(torch, **kw), _llama(ember, **kw)
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return em, tm


@ember.inference_mode()
def _greedy_ember(model, prompt, n):
    return _greedy(ember, model, prompt, n)


@torch.inference_mode()
def _greedy_torch(model, prompt, n):
    return _greedy(torch, model, prompt, n)


def _greedy(lib, model, tokens, n):
    prev = 0
    for cur in range(tokens.shape[1], tokens.shape[1] + n):
        logits = model(tokens[:, prev:cur], prev, use_cache=True)
        tokens = lib.cat([tokens, lib.argmax(logits[:, -1], dim=-1, keepdim=True)], dim=1)
        prev = cur
    return tokens


def test_llama_logits_loss_and_gradients():
    em, tm = _pair_llama()
    assert em.output.weight is em.tok_embeddings.weight and len(list(em.parameters())) == len(list(tm.parameters()))
    rng = np.random.default_rng(0)
    tok, tgt = rng.integers(0, 50, (2, 10)), rng.integers(0, 50, (2, 10))
    tgt[0, :3] = -100
    losses = []
    for lib, m in ((ember, em), (torch, tm)):
        logits = m(lib.tensor(tok))
        loss = lib.nn.functional.cross_entropy(logits.view(-1, 50), lib.tensor(tgt).view(-1), ignore_index=-100)
        loss.backward()
        losses.append((logits, loss))
    _close(losses[0][0], losses[1][0], rtol=1e-4, atol=2e-5)
    _close(losses[0][1], losses[1][1], rtol=1e-5)
    for (n, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        _close(pe.grad, pt.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_llama_greedy_generation_with_kv_cache(dtype):
    em, tm = _pair_llama()
    em.to(getattr(ember, dtype)), tm.to(getattr(torch, dtype))
    assert em.layers[0].wq.weight.dtype is getattr(ember, dtype) and em.freqs_cis.dtype is ember.complex64
    prompt = np.random.default_rng(2).integers(0, 50, (2, 4))
    out_e, out_t = _greedy_ember(em, ember.tensor(prompt), 6), _greedy_torch(tm, torch.tensor(prompt), 6)
    assert out_e.dtype is ember.int64 and out_e.tolist() == out_t.tolist()
    # the cached pass gives the full pass's last logits
    full = em(out_e[:, :-1])[:, -1]
    with ember.inference_mode():
        step = em(out_e[:, -2:-1], out_e.shape[1] - 2, use_cache=True)[:, -1]
    tol = 2e-2 if dtype == "bfloat16" else 1e-5
    np.testing.assert_allclose(step.numpy(), full.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape,dim", [((40, 37), -1), ((40, 37), 0), ((4, 5, 300), 2), ((5, 37, 1), 1)])
def test_half_log_softmax_rounds_as_torch(dtype, shape, dim):
    """Along the last dim a half input's sum of exponentials and its log are rounded to the half dtype."""
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(shape).astype(np.float32) * 3, rng.standard_normal(shape).astype(np.float32)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        y = lib.log_softmax(xt, dim)
        y.backward(lib.tensor(g).to(y.dtype))
        res.append((y, xt.grad))
    _close(res[0][0], res[1][0], rtol=0, atol=0)
    _close(res[0][1], res[1][1], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("shape", [(64, 50), (4, 50, 6), (50,)])
def test_half_cross_entropy_matches_torch_exactly(dtype, reduction, smoothing, shape):
    """Pure-bf16 training computes the loss on bf16 logits: values, dtype and gradients bit for bit."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32) * 3
    y = rng.integers(0, 50, (shape[0],) + shape[2:] if len(shape) > 1 else ())
    if y.ndim:
        y.flat[:5] = -100
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(y), reduction=reduction, label_smoothing=smoothing)
        loss.backward(lib.ones_like(loss))
        res.append((loss, xt.grad))
    _close(res[0][0], res[1][0], rtol=0, atol=0)
    _close(res[0][1], res[1][1], rtol=0, atol=0)


@pytest.mark.parametrize("n", [257, 1001])
def test_bf16_nll_loss_counts_rows_in_bf16(n):
    """The mean of a bf16 loss divides by the row count rounded to bf16 (257 rows count 256)."""
    rng = np.random.default_rng(n)
    x, y = -rng.random((n, 5)).astype(np.float32), rng.integers(0, 5, n)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x).bfloat16().requires_grad_()
        lib.nn.functional.nll_loss(xt, lib.tensor(y)).backward()
        res.append(xt.grad)
    _close(res[0], res[1], rtol=0, atol=0)


def _processors(lib, logits, ids, att):
    out = {}
    v, _ = lib.topk(logits, 5)
    topk = logits.clone()
    topk[topk < v[:, [-1]]] = -float("Inf")
    out["top_k"] = topk
    probs = lib.softmax(logits / 0.7, dim=-1)
    probs_sort, probs_idx = lib.sort(probs, dim=-1, descending=True)
    mask = lib.cumsum(probs_sort, dim=-1) - probs_sort > 0.8
    probs_sort[mask] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    out["top_p"], out["top_p_idx"] = probs_sort, probs_idx
    score = lib.gather(logits, 1, ids)
    out["rep"] = logits.clone().scatter_(1, ids, lib.where(score < 0, score * 1.3, score / 1.3))
    top = probs.max(dim=-1, keepdim=True)[0]
    idx = lib.argsort(logits, descending=True, dim=-1)
    remove = lib.gather(probs < 0.1 * top, dim=-1, index=idx)
    remove[..., :1] = False
    out["min_p"] = logits.masked_fill(remove.scatter(1, idx, remove), -float("inf"))
    pos = att.long().cumsum(-1) - 1
    pos.masked_fill_(att == 0, 1)
    out["pos"] = pos
    unfinished = lib.ones(3, dtype=lib.long) & ~lib.isin(ids[:, -1], lib.tensor([2, 7]))
    out["unfinished"], out["done"] = unfinished, (unfinished.max() == 0) | lib.all(ids[:, 0] == 7)
    min_dtype = lib.finfo(lib.bfloat16).min
    causal = lib.triu(lib.full((5, 7), min_dtype, dtype=lib.bfloat16), diagonal=1)
    causal *= lib.arange(7) > lib.arange(5).reshape(-1, 1)
    causal = causal[None, None].expand(3, 1, -1, -1).clone()
    padding = (causal[..., :5] + att[:, None, None, :]) == 0
    causal[..., :5] = causal[..., :5].masked_fill(padding, min_dtype)
    out["causal"] = lib.mul(causal, ~lib.all(causal == min_dtype, dim=-1, keepdim=True))
    return out


def test_sampling_processors_and_left_padding():
    rng = np.random.default_rng(0)
    logits, ids = rng.standard_normal((3, 20)).astype(np.float32), rng.integers(0, 20, (3, 5))
    att = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1]])
    e = _processors(ember, ember.tensor(logits), ember.tensor(ids), ember.tensor(att))
    t = _processors(torch, torch.tensor(logits), torch.tensor(ids), torch.tensor(att))
    for k in t:
        _close(e[k], t[k], rtol=1e-6, atol=0)


def test_seeded_multinomial_sampling_distribution():
    g = ember.Generator().manual_seed(0)
    probs = ember.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]).repeat(4000, 1)
    s = ember.multinomial(probs, num_samples=1, generator=g)
    assert s.dtype is ember.int64 and s.shape == (8000, 1)
    freq = [ember.bincount(s[i::2, 0], minlength=3).float() / 4000 for i in (0, 1)]
    np.testing.assert_allclose(freq[0].numpy(), [0.1, 0.2, 0.7], atol=0.03)
    assert freq[1][2] == 0 and abs(freq[1][0] - 0.5) < 0.03
    again = ember.multinomial(probs, 1, generator=ember.Generator().manual_seed(0))
    assert ember.equal(s, again)


def test_gqa_sdpa_with_scale_matches_torch():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 8, 6, 4), (2, 2, 6, 4), (2, 2, 6, 4)))
    g = rng.standard_normal((2, 8, 2, 4)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        qt, kt, vt = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        o = lib.nn.functional.scaled_dot_product_attention(qt[:, :, -2:], kt, vt, is_causal=True, enable_gqa=True,
                                                           scale=0.3)
        o.backward(lib.tensor(g))
        res.append((o, qt.grad, kt.grad, vt.grad))
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-6)


def _lora_wrap(lib, base, r=4, alpha=16):
    nn = lib.nn

    class LoRA(nn.Module):
        def __init__(self):
            super().__init__()
            self.base_layer = base
            self.lora_A = nn.Linear(base.in_features, r, bias=False)
            self.lora_B = nn.Linear(r, base.out_features, bias=False)
            self.scaling = alpha / r
            nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B.weight)

        def forward(self, x):
            return self.base_layer(x) + self.lora_B(self.lora_A(x.to(self.lora_A.weight.dtype))) * self.scaling

        def merge(self):
            self.base_layer.weight.data += (self.lora_B.weight @ self.lora_A.weight * self.scaling).to(
                self.base_layer.weight.dtype)
    return LoRA()


def _lora_steps(lib, model, dtype, checkpointing):
    for blk in model.layers:
        blk.wq, blk.wv = _lora_wrap(lib, blk.wq), _lora_wrap(lib, blk.wv)
    for n, p in model.named_parameters():
        if "lora_" in n:  # kaiming_uniform_ draws from each library's own generator: set both factors alike
            assert "lora_A" in n or not p.any()
            with lib.no_grad():
                p.copy_(lib.arange(p.numel()).reshape(p.shape).float().sin() / 10)
        p.requires_grad_("lora_" in n)
    model.checkpointing = checkpointing
    model.to(getattr(lib, dtype))
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=1e-2, betas=(0.9, 0.95), eps=1e-8)

    def lr_lambda(step, warmup=2, total=6):
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup))))
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    rng, log = np.random.default_rng(3), []
    for _ in range(3):
        tok = rng.integers(0, 50, (2, 9))
        y = tok[:, 1:].copy()
        y[0, :2] = -100
        logits = model(lib.tensor(tok[:, :-1]))
        loss = lib.nn.functional.cross_entropy(logits.view(-1, 50), lib.tensor(y).reshape(-1), ignore_index=-100)
        loss.backward()
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        log.append((loss.detach(), norm, sched.get_last_lr()))
    lora = {k: v for k, v in model.state_dict().items() if "lora_" in k}
    for blk in model.layers:
        blk.wq.merge()
    return log, lora, model.layers[0].wq.base_layer.weight


@pytest.mark.parametrize("dtype,checkpointing", [("float32", False), ("float32", True), ("bfloat16", True)])
def test_lora_fine_tuning_steps(dtype, checkpointing):
    """LoRA on q/v projections: frozen base, AdamW groups by ``p.dim() < 2``, warmup-cosine LambdaLR, clipped
    gradients, optional activation checkpointing; losses, norms, LoRA weights and the merged weight."""
    em, tm = _pair_llama()
    le, lora_e, merged_e = _lora_steps(ember, em, dtype, checkpointing)
    lt, lora_t, merged_t = _lora_steps(torch, tm, dtype, checkpointing)
    tol = 3e-2 if dtype == "bfloat16" else 1e-4
    for (loss_e, norm_e, lr_e), (loss_t, norm_t, lr_t) in zip(le, lt):
        _close(loss_e, loss_t, rtol=tol, atol=tol)
        _close(norm_e, norm_t, rtol=tol, atol=tol)
        assert lr_e == pytest.approx(lr_t)
    assert sorted(lora_e) == sorted(lora_t) and len(lora_e) == 8
    assert not em.layers[0].wq.base_layer.weight.requires_grad and em.layers[0].wq.base_layer.weight.grad is None
    for k in lora_t:
        _close(lora_e[k], lora_t[k], rtol=tol, atol=tol)
    _close(merged_e, merged_t, rtol=tol, atol=tol)
