"""Sparse gradients of embeddings (``nn.Embedding(sparse=True)``, ``nn.EmbeddingBag(sparse=True)``) against torch:
the sparse COO ``.grad`` (indices, values, nnz, its dense equivalent), accumulation over backward passes, zero_grad,
``autograd.grad``, the optimizers that take sparse gradients (SGD, SparseAdam, Adagrad) training a small recommender
step by step, and the errors of those that do not."""
import copy
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", "Sparse invariant checks")

LIBS = (ember, torch)
RNG = np.random.default_rng(0)
N, D = 9, 4
W = RNG.standard_normal((N, D)).astype(np.float32)
IDS = np.array([[1, 4, 1], [7, 2, 4]])


def _np(t):
    t = t.detach()
    return (t.to_dense() if t.is_sparse else t).numpy()


def _same_grad(e, t, rtol=1e-6, atol=1e-7):
    """Same layout; for sparse ones the same nnz, coalesced flag, indices and values; the same dense equivalent."""
    assert e.is_sparse == t.is_sparse and tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    if t.is_sparse:
        assert e._nnz() == t._nnz() and e.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
        np.testing.assert_allclose(_np(e._values()), _np(t._values()), rtol=rtol, atol=atol)
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _weight(m, dtype="float32"):
    return m.nn.Parameter(m.tensor(W, dtype=getattr(m, dtype)))


# -- the sparse gradient -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 4}, {"padding_idx": -2}, {"max_norm": 1.0}])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_sparse_grad_matches_torch(kwargs, dtype):
    g = RNG.standard_normal(IDS.shape + (D,))
    res = []
    for m in LIBS:
        emb = m.nn.Embedding(N, D, sparse=True, _weight=m.tensor(W, dtype=getattr(m, dtype)), **kwargs)
        assert "sparse=True" in repr(emb)
        emb(m.tensor(IDS)).backward(m.tensor(g, dtype=getattr(m, dtype)))
        dense = m.nn.Embedding(N, D, _weight=m.tensor(W, dtype=getattr(m, dtype)), **kwargs)
        dense(m.tensor(IDS)).backward(m.tensor(g, dtype=getattr(m, dtype)))
        res.append((emb.weight.grad, dense.weight.grad))
    (es, ed), (ts, td) = res
    assert es.is_sparse and es.layout is ember.sparse_coo and not ed.is_sparse and es.data.is_sparse
    _same_grad(es, ts)
    _same_grad(ed, td)
    np.testing.assert_allclose(es.to_dense().numpy(), ed.numpy(), rtol=1e-6, atol=1e-7)
    _same_grad(es.coalesce(), ts.coalesce())


PSW = [[0.5, 2.0, -1.0], [1.0, 3.0, 0.25]]


@pytest.mark.parametrize("call", [
    lambda m, w: m.nn.functional.embedding(m.tensor(IDS), w, sparse=True),
    lambda m, w: m.nn.functional.embedding(m.tensor(IDS, dtype=m.int32), w, padding_idx=1, sparse=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDS), w, mode="sum", sparse=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDS), w, mode="mean", sparse=True, padding_idx=4),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDS).reshape(-1), w, m.tensor([0, 2, 2]), mode="mean",
                                               sparse=True),
    lambda m, w: m.nn.functional.embedding_bag(m.tensor(IDS), w, mode="sum", sparse=True,
                                               per_sample_weights=m.tensor(PSW)),
    lambda m, w: m.embedding(w, m.tensor(IDS), sparse=True),
])
def test_functional_sparse_grads(call):
    res = []
    for m in LIBS:
        w = _weight(m)
        out = call(m, w)
        out.backward(m.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape)))
        res.append(w.grad)
    _same_grad(*res)


def test_embedding_bag_module_sparse():
    res = []
    for m in LIBS:
        bag = m.nn.EmbeddingBag(N, D, mode="mean", sparse=True, _weight=m.tensor(W))
        (bag(m.tensor([1, 3, 3, 8, 0]), m.tensor([0, 3])) ** 2).sum().backward()
        res.append((bag, bag.weight.grad))
    assert repr(res[0][0]) == repr(res[1][0])
    _same_grad(res[0][1], res[1][1])
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        ember.nn.EmbeddingBag(N, D, mode="max", sparse=True)(ember.tensor(IDS))


# -- accumulation, zero_grad, autograd.grad ----------------------------------------------------------------------
def test_accumulation_over_backwards_stays_sparse():
    """Each backward appends its entries (torch may instead interleave two entry lists, by a merge that sums equal
    heads, when both hold contiguous values): the same tensor, coalesced, and the same nnz here."""
    res = []
    for m in LIBS:
        emb = m.nn.Embedding(N, D, sparse=True, _weight=m.tensor(W))
        emb(m.tensor(IDS)).sum().backward()
        first = emb.weight.grad
        grads = [first.clone()]
        emb(m.tensor([[3, 1]])).mul(2).sum().backward()
        assert emb.weight.grad is first  # accumulated in place, as torch's AccumulateGrad
        grads.append(first.clone())
        emb(m.tensor([0])).sum().backward()
        grads.append(emb.weight.grad)
        grads.append(grads[0].clone().mul_(0.5).add_(grads[1], alpha=-2.0))  # the in-place sparse ops
        res.append(grads)
    _same_grad(res[0][0], res[1][0])
    for e, t in zip(res[0][1:], res[1][1:]):
        assert e.is_sparse and not e.is_coalesced()
        _same_grad(e.coalesce(), t.coalesce())
    assert [g._nnz() for g in res[0][1:3]] == [g._nnz() for g in res[1][1:3]]


def test_sparse_and_dense_contributions():
    """A table used by a sparse lookup and densely (weight tying) gets a dense gradient; a dense gradient
    accumulated onto a sparse one makes it dense, a sparse one is added into a dense one."""
    res = []
    for m in LIBS:
        F = m.nn.functional
        w = _weight(m)
        x = F.embedding(m.tensor(IDS), w, sparse=True)
        (x @ w.t()).tanh().sum().backward()
        tied = w.grad
        w.grad = None
        F.embedding(m.tensor(IDS), w, sparse=True).sum().backward()
        (w * 3).sum().backward()
        sparse_then_dense = w.grad
        w.grad = None
        (w * 3).sum().backward()
        before = w.grad
        F.embedding(m.tensor(IDS), w, sparse=True).pow(2).sum().backward()
        assert w.grad is before
        res.append((tied, sparse_then_dense, w.grad))
    for e, t in zip(*res):
        _same_grad(e, t, rtol=1e-5, atol=1e-6)


def test_zero_grad_and_autograd_grad():
    res = []
    for m in LIBS:
        emb = m.nn.Embedding(N, D, sparse=True, _weight=m.tensor(W))
        opt = m.optim.SGD(emb.parameters(), lr=0.1)
        emb(m.tensor(IDS)).sum().backward()
        opt.zero_grad()
        assert emb.weight.grad is None
        emb(m.tensor(IDS)).sum().backward()
        opt.zero_grad(set_to_none=False)
        zeroed = emb.weight.grad.clone()
        emb(m.tensor([5, 5])).sum().backward()
        after = emb.weight.grad.clone()
        emb.zero_grad(set_to_none=False)
        assert emb.weight.grad._nnz() == 0
        seen = []
        h = emb.weight.register_hook(lambda g: seen.append(g.is_sparse))
        gw, = m.autograd.grad(emb(m.tensor(IDS)).pow(2).sum(), emb.weight)
        h.remove()
        assert seen == [True]
        res.append((zeroed, after, gw))
    for e, t in zip(*res):
        _same_grad(e, t)


def test_create_graph_keeps_sparse_grad_on_the_graph():
    res = []
    for m in LIBS:
        w = _weight(m)
        m.nn.functional.embedding(m.tensor(IDS), w, sparse=True).pow(3).sum().backward(create_graph=True)
        assert w.grad.is_sparse and w.grad.requires_grad
        res.append(w.grad)
    _same_grad(*res)


# -- training a small recommender --------------------------------------------------------------------------------
U, I, H = 7, 11, 4
U_W, I_W = (RNG.standard_normal((n, H)).astype(np.float32) * 0.5 for n in (U, I))
LIN_W, LIN_B = RNG.standard_normal((1, 2 * H)).astype(np.float32) * 0.5, np.array([0.1], np.float32)
BATCHES = [(RNG.integers(0, U, 5), RNG.integers(1, I, (5, 3)), RNG.random(5).astype(np.float32))
           for _ in range(4)]
BATCHES[1][1][0] = 0  # the padding item


def _recommender(m, make_opt, steps=4):
    nn = m.nn

    class Recommender(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(U, H, sparse=True)
            self.items = nn.EmbeddingBag(I, H, mode="mean", sparse=True, padding_idx=0)
            self.out = nn.Linear(2 * H, 1)

        def forward(self, users, items):
            return self.out(m.cat([self.user(users), self.items(items)], 1)).squeeze(1)

    model = Recommender()
    with m.no_grad():
        for p, a in zip(model.parameters(), (U_W, I_W, LIN_W, LIN_B)):
            p.copy_(m.tensor(a))
    opts = make_opt(m, model)
    history = []
    for users, items, target in BATCHES[:steps]:
        for o in opts:
            o.zero_grad()
        loss = m.nn.functional.mse_loss(model(m.tensor(users), m.tensor(items)), m.tensor(target))
        loss.backward()
        assert model.user.weight.grad.is_sparse and model.items.weight.grad.is_sparse
        for o in opts:
            o.step()
        history.append([loss.item()] + [p.detach().numpy().copy() for p in model.parameters()])
    return history, opts


def _sparse_dense(m, model, sparse_opt, dense_opt):
    emb = [model.user.weight, model.items.weight]
    return [sparse_opt(emb), dense_opt(list(model.out.parameters()))]


OPTIMIZERS = {
    "sgd": lambda m, model: [m.optim.SGD(model.parameters(), lr=0.5)],
    "sgd_maximize": lambda m, model: [m.optim.SGD(model.parameters(), lr=0.1, maximize=True)],
    "sgd_momentum": lambda m, model: [m.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)],
    "sgd_nesterov": lambda m, model: [m.optim.SGD(model.parameters(), lr=0.3, momentum=0.8, nesterov=True)],
    "sgd_dampening": lambda m, model: [m.optim.SGD(model.parameters(), lr=0.3, momentum=0.5, dampening=0.3,
                                                   maximize=True)],
    "sparse_adam+adam": lambda m, model: _sparse_dense(m, model, lambda p: m.optim.SparseAdam(p, lr=0.05),
                                                       lambda p: m.optim.Adam(p, lr=0.05)),
    "sparse_adam_maximize+adamw": lambda m, model: _sparse_dense(
        m, model, lambda p: m.optim.SparseAdam(p, lr=0.05, betas=(0.8, 0.99), maximize=True),
        lambda p: m.optim.AdamW(p, lr=0.05)),
    "adagrad": lambda m, model: [m.optim.Adagrad(model.parameters(), lr=0.3)],
    "adagrad_options": lambda m, model: [m.optim.Adagrad(model.parameters(), lr=0.3, lr_decay=0.1,
                                                         initial_accumulator_value=0.2, eps=1e-6, maximize=True)],
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_recommender_training_matches_torch(name):
    (he, oe), (ht, ot) = (_recommender(m, OPTIMIZERS[name]) for m in LIBS)
    for step, (e, t) in enumerate(zip(he, ht)):
        np.testing.assert_allclose(e[0], t[0], rtol=1e-5, err_msg=f"loss at step {step}")
        for a, b in zip(e[1:], t[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"parameters after step {step}")
    assert not np.array_equal(he[-1][1], U_W) and not np.array_equal(he[-1][2], I_W)
    for o_e, o_t in zip(oe, ot):
        states = copy.deepcopy(o_e.state_dict())["state"].values(), o_t.state_dict()["state"].values()
        for se, st in zip(*states):
            assert sorted(se) == sorted(st)
            for k in se:
                if isinstance(st[k], torch.Tensor):
                    assert se[k].is_sparse == st[k].is_sparse
                    np.testing.assert_allclose(_np(se[k]), _np(st[k]), rtol=1e-5, atol=1e-6, err_msg=k)
                else:
                    assert se[k] == st[k]


def test_rows_not_looked_up_stay_untouched():
    """Sparse updates leave the rows no batch looks up (item 0 is padding, and never in a gradient) unchanged,
    even with momentum."""
    for name in ("sgd_momentum", "sparse_adam+adam", "adagrad"):
        history, _ = _recommender(ember, OPTIMIZERS[name])
        np.testing.assert_array_equal(history[-1][2][0], I_W[0])


def test_lbfgs_takes_sparse_gradients():
    res = []
    for m in LIBS:
        emb = m.nn.Embedding(N, D, sparse=True, _weight=m.tensor(W))
        opt = m.optim.LBFGS(emb.parameters(), lr=0.5, max_iter=3)

        def closure():
            opt.zero_grad()
            loss = (emb(m.tensor(IDS)) - 1).pow(2).mean()
            loss.backward()
            return loss
        opt.step(closure)
        res.append(emb.weight.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6)


# -- errors ----------------------------------------------------------------------------------------------------
def _sparse_grad_step(m, make_opt, sparse=True):
    emb = m.nn.Embedding(N, D, sparse=sparse, _weight=m.tensor(W))
    opt = make_opt(m, list(emb.parameters()))
    emb(m.tensor(IDS)).sum().backward()
    opt.step()


@pytest.mark.parametrize("make_opt", [
    lambda m, p: m.optim.Adam(p),
    lambda m, p: m.optim.AdamW(p),
    lambda m, p: m.optim.RMSprop(p),
    lambda m, p: m.optim.Adamax(p),
    lambda m, p: m.optim.NAdam(p),
    lambda m, p: m.optim.RAdam(p),
    lambda m, p: m.optim.Adadelta(p),
    lambda m, p: m.optim.Rprop(p),
    lambda m, p: m.optim.ASGD(p),
    lambda m, p: m.optim.SGD(p, lr=0.1, weight_decay=0.01),
    lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda m, p: m.optim.Adagrad(p, weight_decay=0.01),
])
def test_optimizers_refusing_sparse_gradients(make_opt):
    with pytest.raises(RuntimeError) as te:
        _sparse_grad_step(torch, make_opt)
    with pytest.raises(RuntimeError) as ee:
        _sparse_grad_step(ember, make_opt)
    assert str(ee.value) == str(te.value)
    assert type(ee.value) is type(te.value)


def test_refused_sparse_gradient_leaves_parameters_unchanged():
    emb = ember.nn.Embedding(N, D, sparse=True, _weight=ember.tensor(W))
    lin = ember.nn.Linear(D, 1)
    opt = ember.optim.Adam(list(lin.parameters()) + list(emb.parameters()))
    lin(emb(ember.tensor(IDS))).sum().backward()
    before = lin.weight.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="please consider SparseAdam instead"):
        opt.step()
    np.testing.assert_array_equal(lin.weight.detach().numpy(), before)


def test_sparse_adam_refuses_dense_gradients():
    make = lambda m, p: m.optim.SparseAdam(p)  # noqa: E731
    with pytest.raises(RuntimeError) as te:
        _sparse_grad_step(torch, make, sparse=False)
    with pytest.raises(RuntimeError) as ee:
        _sparse_grad_step(ember, make, sparse=False)
    assert str(ee.value) == str(te.value) == "SparseAdam does not support dense gradients, please consider Adam instead"


def test_scale_grad_by_freq_with_sparse_raises():
    for m in LIBS:
        emb = m.nn.Embedding(N, D, sparse=True, scale_grad_by_freq=True)
        y = emb(m.tensor(IDS)).sum()
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            y.backward()


@pytest.mark.parametrize("clip", [
    lambda m, ps: m.nn.utils.clip_grad_norm_(ps, 0.5),
    lambda m, ps: m.nn.utils.clip_grad_norm_(ps, 0.5, foreach=False),
    lambda m, ps: m.nn.utils.clip_grad_value_(ps, 0.1),
])
def test_gradient_clipping_of_sparse_gradients_is_not_implemented(clip):
    """torch has no sparse kernel for the norm (or clamp) the clipping functions take: NotImplementedError."""
    for m in LIBS:
        emb, lin = m.nn.Embedding(N, D, sparse=True), m.nn.Linear(D, 1)
        lin(emb(m.tensor(IDS))).sum().backward()
        with pytest.raises(NotImplementedError):
            clip(m, list(emb.parameters()) + list(lin.parameters()))
