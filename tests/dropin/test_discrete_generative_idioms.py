"""Discrete generative-model idioms (VQ-VAE, PixelCNN, Gumbel-softmax, top-k/top-p sampling) against torch."""
import numpy as np
import torch

import ember


def test_legacy_contiguous_format_in_hand_written_gumbel_softmax():
    """Straight-through Gumbel-softmax copied from torch's source: ``zeros_like(..., memory_format=
    torch.legacy_contiguous_format).scatter_(-1, index, 1.0)`` with shared Gumbel noise."""
    assert ember.legacy_contiguous_format is ember.contiguous_format
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 6)).astype(np.float32)
    gumbels = -np.log(-np.log(rng.random((4, 6)).astype(np.float32)))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(logits, requires_grad=True)
        y = lib.nn.functional.softmax((x + lib.tensor(gumbels)) / 0.5, dim=-1)
        index = y.max(-1, keepdim=True)[1]
        hard = lib.zeros_like(x, memory_format=lib.legacy_contiguous_format).scatter_(-1, index, 1.0)
        out = hard - y.detach() + y
        (out * lib.arange(6.0)).sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


def test_multinomial_without_replacement_past_the_nonzero_categories():
    """Drawing more distinct tokens than survive top-k filtering: torch draws every positive category first, then
    those of probability 0, rather than raising."""
    probs = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]], np.float32)
    for lib in (ember, torch):
        draws = lib.multinomial(lib.tensor(probs), 4).numpy()
        assert draws.dtype == np.int64
        assert sorted(draws[0, :2]) == [0, 1] and draws[1, 0] == 3
        assert (np.sort(draws, axis=1) == np.arange(4)).all()
