"""Idioms of Hugging Face-style transformer code (modeling files, generation loops, training scripts) against
torch."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(a), torch.tensor(a)


def test_ddp_importable_and_refused_without_process_group():
    """nanoGPT's train.py imports DDP and the process-group functions at the top, then takes the single-process
    path; ``isinstance(model, DistributedDataParallel)`` unwraps models."""
    from ember.distributed import destroy_process_group, init_process_group  # noqa: F401
    from ember.nn.parallel import DistributedDataParallel as DDP
    assert not isinstance(ember.nn.Linear(2, 2), DDP) and issubclass(DDP, ember.nn.Module)
    with pytest.raises(ValueError) as e_err:
        DDP(ember.nn.Linear(2, 2))
    with pytest.raises(ValueError) as t_err:
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    assert str(e_err.value) == str(t_err.value)
    with pytest.raises(RuntimeError, match="init_process_group"):
        init_process_group(backend="gloo")
    with pytest.raises(ValueError):
        destroy_process_group()


def test_is_autocast_cpu_enabled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for lib in (ember, torch):
            assert lib.is_autocast_cpu_enabled() is False
            with lib.autocast("cpu", dtype=lib.bfloat16):
                assert lib.is_autocast_cpu_enabled() is True
            with lib.autocast("cpu", enabled=False):
                assert lib.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning, match="is_autocast_enabled"):
        ember.is_autocast_cpu_enabled()


def _extended_mask(lib, mask, dtype):
    m = mask[:, None, None, :].to(dtype=dtype)
    return (1.0 - m) * lib.finfo(dtype).min


def _top_p(lib, scores, top_p):
    sorted_logits, sorted_indices = lib.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cumulative_probs <= (1 - top_p)
    remove[..., -1:] = 0
    return scores.masked_fill(remove.scatter(1, sorted_indices, remove), -float("inf"))


def _repetition_penalty(lib, input_ids, scores, penalty):
    score = lib.gather(scores, 1, input_ids)
    score = lib.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_extended_attention_mask_with_finfo_min(dtype):
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]])
    e = _extended_mask(ember, ember.tensor(mask), getattr(ember, dtype))
    t = _extended_mask(torch, torch.tensor(mask), getattr(torch, dtype))
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] == dtype
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


def test_logits_processors_top_p_and_repetition_penalty():
    (le, lt), ids = _pair((3, 20)), np.random.default_rng(1).integers(0, 20, (3, 5))
    pe = _top_p(ember, _repetition_penalty(ember, ember.tensor(ids), le, 1.3), 0.7)
    pt = _top_p(torch, _repetition_penalty(torch, torch.tensor(ids), lt, 1.3), 0.7)
    np.testing.assert_allclose(pe.numpy(), pt.numpy(), rtol=1e-6)
    assert 0 < np.isinf(pt.numpy()).sum() < pt.numel()


def _rope_gqa_step(lib, x, wq, wk, wv, start, cache_k, cache_v):
    """One LLaMA attention step: cos/sin RoPE, a KV cache written in place, GQA through ``enable_gqa``."""
    B, T, D = x.shape
    hd = 4
    q = (x @ wq).view(B, T, 4, hd).transpose(1, 2)
    k = (x @ wk).view(B, T, 2, hd).transpose(1, 2)
    v = (x @ wv).view(B, T, 2, hd).transpose(1, 2)
    inv_freq = 1.0 / (10000 ** (lib.arange(0, hd, 2, dtype=lib.int64).float() / hd))
    freqs = lib.outer(lib.arange(start, start + T).float(), inv_freq)
    emb = lib.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]

    def rot(t):
        return lib.cat((-t[..., hd // 2:], t[..., : hd // 2]), dim=-1)
    q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
    cache_k[:, :, start: start + T] = k
    cache_v[:, :, start: start + T] = v
    keys, values = cache_k[:, :, : start + T], cache_v[:, :, : start + T]
    allowed = lib.arange(start + T)[None, :] <= lib.arange(start, start + T)[:, None]
    out = lib.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=allowed, enable_gqa=True)
    return out.transpose(1, 2).reshape(B, T, -1)


def test_llama_attention_with_kv_cache_matches_full_pass():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 16)).astype(np.float32)
    w = [rng.standard_normal((16, n)).astype(np.float32) / 4 for n in (16, 8, 8)]
    outs = {}
    for lib in (ember, torch):
        ws = [lib.tensor(a) for a in w]
        full = _rope_gqa_step(lib, lib.tensor(x), *ws, 0, lib.zeros(2, 2, 8, 4), lib.zeros(2, 2, 8, 4))
        ck, cv = lib.zeros(2, 2, 8, 4), lib.zeros(2, 2, 8, 4)
        parts = [_rope_gqa_step(lib, lib.tensor(x[:, a:b]), *ws, a, ck, cv) for a, b in ((0, 4), (4, 5), (5, 6))]
        outs[lib.__name__] = (full.numpy(), lib.cat(parts, 1).numpy())
    np.testing.assert_allclose(outs["ember"][0], outs["torch"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs["ember"][1], outs["ember"][0], rtol=1e-5, atol=1e-6)


def test_t5_relative_position_buckets():
    def bucket(lib, relative_position, bidirectional, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(lib.long) * num_buckets
            relative_position = lib.abs(relative_position)
        else:
            relative_position = -lib.min(relative_position, lib.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        large = max_exact + (lib.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                             * (num_buckets - max_exact)).to(lib.long)
        large = lib.min(large, lib.full_like(large, num_buckets - 1))
        return relative_buckets + lib.where(is_small, relative_position, large)

    for bidirectional in (True, False):
        e = bucket(ember, ember.arange(-200, 200)[None, :], bidirectional)
        t = bucket(torch, torch.arange(-200, 200)[None, :], bidirectional)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
