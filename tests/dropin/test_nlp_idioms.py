"""Idioms of classic NLP PyTorch code (word2vec with sparse embeddings and SparseAdam, ...) run with ember and with
torch: values and gradients agree."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
V, D = 12, 4
W_IN, W_OUT = RNG.standard_normal((2, V, D)).astype(np.float32)
# batches of (center, context) pairs; row 11 is never looked up, so SparseAdam must leave it untouched
PAIRS = RNG.integers(0, V - 1, size=(3, 6, 2))


def _skipgram(m, maximize=False):
    emb_in, emb_out = m.nn.Embedding(V, D, sparse=True), m.nn.Embedding(V, D, sparse=True)
    emb_in.weight.data.copy_(m.tensor(W_IN))
    emb_out.weight.data.copy_(m.tensor(W_OUT))
    opt = m.optim.SparseAdam(list(emb_in.parameters()) + list(emb_out.parameters()), lr=0.1, maximize=maximize)
    losses = []
    for pairs in PAIRS:
        pairs = m.tensor(pairs)
        score = m.bmm(emb_in(pairs[:, :1]), emb_out(pairs[:, 1:]).transpose(1, 2)).squeeze()
        loss = -m.nn.functional.logsigmoid(score).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, emb_in.weight, emb_out.weight, opt


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_skipgram_matches_torch(maximize):
    le, *we, opt = _skipgram(ember, maximize)
    lt, *wt, _ = _skipgram(torch, maximize)
    np.testing.assert_allclose(le, lt, rtol=1e-5, atol=1e-6)
    for e, t in zip(we, wt):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(we[0].detach().numpy()[V - 1], W_IN[V - 1])
    assert opt.state[we[0]]["step"] == 3


def test_sparse_adam_argument_checks():
    w = ember.nn.Parameter(ember.zeros(2, 2))
    for kwargs, msg in [({"lr": 0.0}, "Invalid learning rate"), ({"eps": 0.0}, "Invalid epsilon"),
                        ({"betas": (1.0, 0.9)}, "index 0")]:
        with pytest.raises(ValueError, match=msg):
            ember.optim.SparseAdam([w], **kwargs)
        with pytest.raises(ValueError, match=msg):
            torch.optim.SparseAdam([torch.nn.Parameter(torch.zeros(2, 2))], **kwargs)


@pytest.mark.parametrize("expr", ["[0] * n", "n * [0]", "('<pad>',) * n", "'ab' * n", "t * None", "[0] * f"])
def test_sequence_repeat_by_integer_tensor(expr):
    """Padding a token list to ``max_len - len(seq)`` with ``max_len`` a tensor: a non-numeric operand makes ``*``
    give NotImplemented, so Python repeats the sequence through ``__index__`` or raises its own TypeError."""
    results = []
    for m in (ember, torch):
        env = {"n": m.tensor(3), "t": m.tensor([1.0, 2.0]), "f": m.tensor(2.0)}
        try:
            results.append(eval(expr, env))
        except TypeError as e:
            results.append(str(e).replace("ember", "torch"))
    assert results[0] == results[1]


def test_sparse_adam_state_dict_round_trip_keeps_int_step():
    *_, opt = _skipgram(ember)
    params = [p for g in opt.param_groups for p in g["params"]]
    fresh = ember.optim.SparseAdam(params, lr=0.1)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state[params[0]]["step"] == 3 and type(fresh.state[params[0]]["step"]) is int
    np.testing.assert_array_equal(fresh.state[params[0]]["exp_avg"].numpy(), opt.state[params[0]]["exp_avg"].numpy())
