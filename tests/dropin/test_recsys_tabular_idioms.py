"""Recommendation-system and tabular idioms (DLRM, DeepCTR, RecBole, TabNet, FT-Transformer) against torch."""
import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_max_norm_renorm_reduced_precision_bitwise(dtype, norm_type):
    """``Embedding(max_norm=...)`` in half precision: the norm and scale are rounded to the table's dtype as torch's."""
    a = np.random.default_rng(0).standard_normal((64, 7)) * 2
    idx = np.array([3, 5, 3, 9, 40, 63, 0])
    tables = []
    for lib in (torch, ember):
        w = lib.tensor(a).to(getattr(lib, dtype))
        lib.nn.functional.embedding(lib.tensor(idx), w, max_norm=1.3, norm_type=norm_type)
        tables.append(w.float().numpy())
    np.testing.assert_array_equal(tables[1], tables[0])


def test_embedding_bag_refuses_mismatched_per_sample_weights():
    """float64 ``per_sample_weights`` on a float32 table raise as torch's instead of promoting the bags."""
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="same type as tensor for argument #1 'per_sample_weights'"):
            lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.ones(5, 2), lib.tensor([0, 2]), mode="sum",
                                            per_sample_weights=lib.ones(3, dtype=lib.float64))


@pytest.mark.parametrize("inp,offsets", [([1, 7, 2], [0, 2]), ([[0, 1], [2, -1]], None)])
def test_embedding_bag_index_out_of_range_is_runtime_error(inp, offsets):
    """An index past the table raises torch's RuntimeError (not IndexError) from embedding_bag."""
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            lib.nn.functional.embedding_bag(lib.tensor(inp), lib.ones(5, 2),
                                            None if offsets is None else lib.tensor(offsets))


def _dlrm_fm_step(lib, w_np, x_np, idx, offs, g_np):
    """DLRM's bag lookups + dot interaction gathered by tril_indices, plus an FM term and BCE-with-logits."""
    bag = lib.nn.EmbeddingBag(10, 4, mode="sum", include_last_offset=True)
    bag.load_state_dict({"weight": lib.tensor(w_np)})
    x = lib.tensor(x_np, requires_grad=True)
    psw = lib.tensor(np.linspace(0.5, 1.5, len(idx)).astype(np.float32))
    ly = bag(lib.tensor(idx), lib.tensor(offs), per_sample_weights=psw)
    T = lib.stack([x, ly, ly * 0.5], 1)                                  # (B, 3, d)
    Z = lib.bmm(T, T.transpose(1, 2))
    li, lj = lib.tril_indices(3, 3, offset=-1)
    fm = 0.5 * (T.sum(1).pow(2) - T.pow(2).sum(1)).sum(1, keepdim=True)
    logit = lib.cat([x, Z[:, li, lj]], 1).sum(1, keepdim=True) + fm
    loss = lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([2.0]))(logit, lib.tensor(g_np))
    loss.backward()
    return loss, bag.weight.grad, x.grad


def test_dlrm_interaction_and_fm_match_torch():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((10, 4)).astype(np.float32)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    idx, offs = rng.integers(0, 10, 7), np.array([0, 2, 2, 7])
    y = rng.integers(0, 2, (3, 1)).astype(np.float32)
    for e, t in zip(_dlrm_fm_step(ember, w, x, idx, offs, y), _dlrm_fm_step(torch, w, x, idx, offs, y)):
        _close(e, t, rtol=1e-4, atol=1e-5)
