"""Embedding, EmbeddingBag and one_hot against torch: lookups, weight gradients (padding_idx, max_norm,
scale_grad_by_freq), bags (sum/mean/max, offsets, per-sample weights), initialisation, errors and reprs."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from .torch_ref import Const, check_fn, check_module, close, same_error

E = ember.nn.modules
EF = ember.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(0)

EMBEDDING_OPTIONS = [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                     {"padding_idx": 0, "scale_grad_by_freq": True}, {"max_norm": 1.0},
                     {"max_norm": 1.5, "norm_type": 1.0}, {"sparse": True}]


@pytest.mark.parametrize("kwargs", EMBEDDING_OPTIONS, ids=[str(k) for k in EMBEDDING_OPTIONS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_vs_torch(kwargs, dtype):
    tm, em = torch.nn.Embedding(7, 4, **kwargs), E.Embedding(7, 4, **kwargs)
    assert repr(em) == repr(tm)
    idx = RNG.integers(0, 7, (3, 5))
    idx[0, :3] = [2, 2, 6]
    check_module(tm, em, Const(idx), dtype=dtype, steps=2)
    close(em.weight, tm.weight, dtype)  # max_norm renormalizes the looked-up rows in place
    if kwargs.get("padding_idx") is not None:
        em(ember.tensor(idx)).sum().backward()
        assert not em.weight.grad.numpy()[em.padding_idx].any()


def test_embedding_shapes_and_index_dtypes():
    w = RNG.standard_normal((5, 3))
    for idx in (np.array(3), np.array([1, 4]), RNG.integers(0, 5, (2, 3, 2)), np.array([], dtype=np.int64),
                np.array([0, 4], dtype=np.int32)):
        check_fn(lambda F, i, w: F.embedding(i, w), Const(idx), w)


def test_embedding_gradients():
    w = ember.tensor(RNG.standard_normal((5, 3)), requires_grad=True)
    idx = ember.tensor([[1, 1, 3], [0, 4, 1]])
    assert gradcheck(lambda w: EF.embedding(idx, w), (w,))
    assert gradgradcheck(lambda w: EF.embedding(idx, w) ** 2, (w,))
    # padding rows get no gradient; scale_grad_by_freq divides by each index's count in the batch
    y = EF.embedding(idx, w, padding_idx=1, scale_grad_by_freq=True)
    y.backward(ember.ones(2, 3, 3))
    assert w.grad.numpy()[:, 0].tolist() == [1.0, 0.0, 0.0, 1.0, 1.0]
    # double backward with padding: the gradient's own derivative skips the padding row too
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    we = ember.tensor(w.detach().numpy(), requires_grad=True)
    outs = []
    for lib, F, ww in ((torch, TF, wt), (ember, EF, we)):
        g = lib.ones(2, 3, 3, dtype=lib.float64, requires_grad=True)
        gw, = lib.autograd.grad(F.embedding(lib.tensor([[1, 1, 3], [0, 4, 1]]), ww, padding_idx=3), ww, g,
                                create_graph=True)
        outs.append(lib.autograd.grad((gw * gw).sum(), g)[0])
    close(outs[1], outs[0], "float64")


def test_from_pretrained_and_init():
    weights = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = E.Embedding.from_pretrained(weights)
    assert not emb.weight.requires_grad and emb(ember.tensor([1])).tolist() == [[3.0, 4.0]]
    emb = E.Embedding.from_pretrained(weights, freeze=False, padding_idx=0)
    assert emb.weight.requires_grad and emb.padding_idx == 0
    assert repr(emb) == "Embedding(2, 2, padding_idx=0)"
    bag = E.EmbeddingBag.from_pretrained(weights, mode="sum")
    assert not bag.weight.requires_grad and bag(ember.tensor([[0, 1]])).tolist() == [[4.0, 6.0]]
    ember.manual_seed(0)
    emb = E.Embedding(1000, 20, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert not w[3].any() and abs(w.std() - 1) < 0.02 and abs(w.mean()) < 0.02
    assert emb.weight.shape == (1000, 20) and emb.weight.requires_grad
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        E.Embedding.from_pretrained(ember.ones(3))
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        E.Embedding(3, 2, _weight=ember.ones(2, 2))
    assert E.Embedding(3, 2, _freeze=True).weight.requires_grad is False


def test_embedding_errors():
    w, wt = ember.randn(5, 3), torch.randn(5, 3)
    same_error(lambda: EF.embedding(ember.tensor([1, 5]), w), lambda: TF.embedding(torch.tensor([1, 5]), wt))
    same_error(lambda: EF.embedding(ember.tensor([-1]), w), lambda: TF.embedding(torch.tensor([-1]), wt))
    same_error(lambda: EF.embedding(ember.tensor([1.0]), w), lambda: TF.embedding(torch.tensor([1.0]), wt))
    same_error(lambda: EF.embedding(ember.tensor([1]), ember.randn(5)),
               lambda: TF.embedding(torch.tensor([1]), torch.randn(5)))
    same_error(lambda: E.Embedding(5, 3, padding_idx=5), lambda: torch.nn.Embedding(5, 3, padding_idx=5))
    same_error(lambda: E.Embedding(5, 3, padding_idx=-6), lambda: torch.nn.Embedding(5, 3, padding_idx=-6))


BAGS = [("sum", {}), ("mean", {}), ("max", {}), ("sum", {"padding_idx": 1}), ("mean", {"padding_idx": 1}),
        ("max", {"padding_idx": 1}), ("sum", {"include_last_offset": True}), ("mean", {"include_last_offset": True}),
        ("sum", {"max_norm": 1.0})]


@pytest.mark.parametrize("mode,kwargs", BAGS, ids=[f"{m}-{k}" for m, k in BAGS])
def test_embedding_bag_vs_torch(mode, kwargs):
    tm, em = torch.nn.EmbeddingBag(6, 4, mode=mode, **kwargs), E.EmbeddingBag(6, 4, mode=mode, **kwargs)
    assert repr(em) == repr(tm)
    inp = np.array([1, 2, 4, 5, 1, 0, 3, 1, 3, 2])
    offsets = np.array([0, 3, 3, 7, 10] if kwargs.get("include_last_offset") else [0, 3, 3, 7])
    check_module(tm, em, Const(inp), Const(offsets), dtype="float64")
    check_module(tm, em, Const(RNG.integers(0, 6, (3, 4))), dtype="float64")  # fixed-length bags


def test_embedding_bag_per_sample_weights_and_functional():
    inp, offsets = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2])
    w, psw = RNG.standard_normal((6, 3)), RNG.standard_normal(6)
    check_fn(lambda F, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p), Const(inp), w,
             Const(offsets), psw, dtype="float64")
    check_fn(lambda F, i, w, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p), Const(inp.reshape(2, 3)),
             w, psw.reshape(2, 3), dtype="float64")
    check_fn(lambda F, i, w, o: F.embedding_bag(i, w, o), Const(inp), w, Const(np.array([0, 6, 6])),
             dtype="float64")  # empty bags give zeros
    check_fn(lambda F, i, w, o: F.embedding_bag(i, w, o, mode="max"), Const(inp), w, Const(np.array([0, 0, 4])),
             dtype="float64")
    # scale_grad_by_freq divides each row's gradient by its index's count (torch's bag kernel miscounts some rows)
    wt = ember.tensor(np.ones((6, 1)), requires_grad=True)
    EF.embedding_bag(ember.tensor([1, 2, 4, 5, 1, 0, 3, 1, 3, 2]), wt, ember.tensor([0]), mode="sum",
                     scale_grad_by_freq=True).sum().backward()
    assert wt.grad.flatten().tolist() == [1.0] * 6
    wt = ember.tensor(w, requires_grad=True)
    assert gradcheck(lambda w: EF.embedding_bag(ember.tensor(inp), w, ember.tensor(offsets), mode="mean"), (wt,))


def test_embedding_bag_errors():
    i, w, wt, it = ember.tensor([1, 2, 3]), ember.randn(5, 3), torch.randn(5, 3), torch.tensor([1, 2, 3])
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([1, 2])), lambda: TF.embedding_bag(it, wt,
                                                                                             torch.tensor([1, 2])))
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([0, 5])), lambda: TF.embedding_bag(it, wt,
                                                                                             torch.tensor([0, 5])))
    same_error(lambda: EF.embedding_bag(i, w), lambda: TF.embedding_bag(it, wt))
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([0]), mode="foo"),
               lambda: TF.embedding_bag(it, wt, torch.tensor([0]), mode="foo"))
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([0]), mode="max", scale_grad_by_freq=True),
               lambda: TF.embedding_bag(it, wt, torch.tensor([0]), mode="max", scale_grad_by_freq=True))
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([0]), mode="mean", per_sample_weights=ember.ones(3)),
               lambda: TF.embedding_bag(it, wt, torch.tensor([0]), mode="mean", per_sample_weights=torch.ones(3)))
    same_error(lambda: EF.embedding_bag(i, w, ember.tensor([0]), per_sample_weights=ember.ones(2)),
               lambda: TF.embedding_bag(it, wt, torch.tensor([0]), per_sample_weights=torch.ones(2)),
               match_message=False)
    same_error(lambda: EF.embedding_bag(i.reshape(1, 3), w, ember.tensor([0])),
               lambda: TF.embedding_bag(it.reshape(1, 3), wt, torch.tensor([0])), match_message=False)
    same_error(lambda: EF.embedding_bag(i, ember.randn(5)), lambda: TF.embedding_bag(it, torch.randn(5)))
    same_error(lambda: E.EmbeddingBag(5, 3, padding_idx=7), lambda: torch.nn.EmbeddingBag(5, 3, padding_idx=7))


def test_one_hot():
    for x, n in [([0, 3, 1], -1), ([[1], [2]], 4), ([], 3), (2, 5)]:
        e, t = EF.one_hot(ember.tensor(x, dtype=ember.int64), n), TF.one_hot(torch.tensor(x, dtype=torch.long), n)
        assert e.dtype is ember.int64 and e.tolist() == t.tolist() and e.shape == t.shape
    for x, n in [([1, 2], 2), ([1, -2], -1), ([], -1)]:
        same_error(lambda: EF.one_hot(ember.tensor(x, dtype=ember.int64), n),
                   lambda: TF.one_hot(torch.tensor(x, dtype=torch.long), n))
    same_error(lambda: EF.one_hot(ember.tensor([1.0])), lambda: TF.one_hot(torch.tensor([1.0])))
