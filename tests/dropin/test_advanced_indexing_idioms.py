"""Advanced indexing and gather/scatter as model code uses them (mixed basic and advanced keys, masks, index_put,
the scatter family, top-k and beam-search gathers, embedding-bag sums) against torch: values, gradients, dtypes,
warnings and exception types."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-6, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _x(shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _both(fn):
    """``fn(lib)`` under ember and torch; its results compared pairwise."""
    out = [fn(lib) for lib in (ember, torch)]
    for e, t in zip(*(o if isinstance(o, tuple) else (o,) for o in out)):
        _close(e, t)


def _raises_like(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)):
        fn(ember)


def _warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
        except RuntimeError:
            pass
    return [str(x.message)[:40] for x in w if x.category is UserWarning]


_MASK = np.random.default_rng(3).random((4, 5)) > 0.5
KEYS = [
    lambda l: (slice(None), l.tensor([0, 2, 2]), slice(None), l.tensor([1, -1, 1])),  # separated: dims go first
    lambda l: (l.tensor([[0, 1], [2, 2]]), l.tensor([[1], [3]])),  # adjacent and broadcast: in place
    lambda l: (Ellipsis, l.tensor([0, -1])),
    lambda l: (l.tensor([0, -1]), Ellipsis, l.tensor([1, 2])),
    lambda l: (None, l.tensor([0, -1]), None, slice(1, 3)),
    lambda l: (1, slice(None), l.tensor([0, 1, 0])),
    lambda l: (l.tensor([0, 1]), 1, l.tensor([0, 1])),  # an int between makes them separated
    lambda l: (l.tensor(2), l.tensor([1, 2])),  # 0-d int tensor
    lambda l: (l.tensor(True), l.tensor([0, 1])),  # 0-d bool tensor: a new dimension
    lambda l: (np.array([0, 2, -1]),),
    lambda l: ([0, 1], [1, 2]),
    lambda l: (Ellipsis, l.tensor(_MASK), slice(None)),  # partial-rank mask
    lambda l: (slice(None), l.tensor(_MASK)),
    lambda l: (slice(None), l.tensor([True, False, True, False]), l.tensor([0, 4])),
    lambda l: (l.tensor([0, 1]).int(),),
]


@pytest.mark.parametrize("key", range(len(KEYS)))
def test_getitem_mixed_keys_values_and_gradients(key):
    """Where the advanced dimensions land, and the gradient scattered back (repeated indices accumulate)."""
    g = None
    out = []
    for lib in (ember, torch):
        x = lib.tensor(_x((3, 4, 5, 6)), requires_grad=True)
        y = x[KEYS[key](lib)]
        g = _x(tuple(y.shape), 1) if g is None else g
        y.backward(lib.tensor(g))
        out.append((y, x.grad))
    for e, t in zip(*out):
        _close(e, t)
    assert out[0][0].is_contiguous()


@pytest.mark.filterwarnings("ignore:indexing with dtype")
def test_uint8_masks_warn_and_a_lone_one_cannot_fill():
    """uint8 indices are masks with a deprecation warning; x[u8] = scalar is masked_fill, which wants bool."""
    def get(lib):
        return lib.arange(6.).reshape(2, 3)[lib.tensor([1, 0], dtype=lib.uint8), lib.tensor([1, 0, 1], dtype=lib.uint8)]
    _close(get(ember), get(torch))
    assert _warnings(lambda: get(ember)) == _warnings(lambda: get(torch)) and len(_warnings(lambda: get(ember))) == 2
    assert len(_warnings(lambda: ember.zeros(2, 3)[np.array([1, 0], dtype=np.uint8)])) == 1

    def put(lib, value):
        x = lib.zeros(2, 3)
        x[lib.tensor([1, 0], dtype=lib.uint8)] = value(lib)
        return x
    _close(put(ember, lambda l: l.tensor([5., 6, 7])), put(torch, lambda l: l.tensor([5., 6, 7])))
    for value in (lambda l: 3, lambda l: l.tensor(3.), lambda l: l.tensor([3.])):
        _raises_like(lambda lib: put(lib, value))
    _raises_like(lambda lib: lib.zeros(2, 3).index_put((lib.tensor([1, 0], dtype=lib.uint8),), lib.tensor(1.)))


@pytest.mark.filterwarnings("ignore:Using a non-tuple")
def test_non_tuple_sequence_index_warns():
    for key in ([0, slice(None)], [[0, 1], [1, 2]]):
        e = _warnings(lambda: ember.zeros(4, 5)[key])
        assert e == _warnings(lambda: torch.zeros(4, 5)[key]) and len(e) == 1
    _both(lambda lib: lib.tensor(_x((6, 4)))[[lib.tensor(0), lib.tensor(3)]])
    assert _warnings(lambda: ember.zeros(4, 5)[[0, 1]]) == []


SET_CASES = [  # (key, value): a one-element value through a lone mask is cast as masked_fill does
    (lambda l: (slice(None), l.tensor([True, False, True, True, False])), lambda l: l.tensor([2.], dtype=l.float64)),
    (lambda l: (1, l.tensor([True, False, True, True, False])), lambda l: l.tensor(7)),
    (lambda l: (l.tensor([True, False, True, False]),), lambda l: l.tensor([[2]])),
    (lambda l: ([True, False, True, False],), lambda l: l.tensor(7)),
    (lambda l: (np.array([True, False, True, False]), slice(1, 3)), lambda l: l.tensor([7], dtype=l.int32)),
    (lambda l: (None, l.tensor([True, False, True, False])), lambda l: l.tensor([[[[7.5]]]], dtype=l.float64)),
    (lambda l: (Ellipsis, l.tensor([True, False, True, True, False])), lambda l: 2.5),
    (lambda l: True, lambda l: l.tensor([1, 2, 3, 4, 5])),  # a plain True copies
    (lambda l: (l.tensor([0, 2, 2]),), lambda l: l.tensor([1., 2, 3, 4, 5])),  # broadcast rows, last write wins
    (lambda l: (l.tensor([[0], [2]]), l.tensor([1, 3])), lambda l: l.tensor([[1.], [2.]])),
]
SET_ERRORS = [  # index_put wants equal dtypes otherwise
    (lambda l: (l.tensor([True, False, True, False]),), lambda l: l.tensor([1, 2, 3, 4, 5])),
    (lambda l: (l.tensor([True, False, True, False]), l.tensor([0, 1])), lambda l: l.tensor(7)),
    (lambda l: (True, l.tensor([True, False, True, False])), lambda l: l.tensor([7], dtype=l.int32)),
    (lambda l: (l.tensor(True),), lambda l: l.tensor(7)),
    (lambda l: (l.tensor([0, 1]),), lambda l: l.tensor(7)),
    (lambda l: (l.tensor([[0], [2]]), l.tensor([1, 3])), lambda l: l.tensor([[1.], [2.], [3.]])),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_setitem_value_kinds(case):
    key, value = SET_CASES[case]

    def run(lib):
        x = lib.tensor(_x((4, 5)))
        x[key(lib)] = value(lib)
        return x
    _both(run)


@pytest.mark.parametrize("case", range(len(SET_ERRORS)))
def test_setitem_errors(case):
    key, value = SET_ERRORS[case]

    def run(lib):
        x = lib.tensor(_x((4, 5)))
        x[key(lib)] = value(lib)
    _raises_like(run)


def test_index_put_lone_mask_casts_and_accumulates():
    def run(lib):
        m = lib.tensor([True, False, True])
        a = lib.arange(12.).reshape(3, 4).index_put_((m,), lib.tensor(7))
        b = lib.arange(12.).reshape(3, 4).index_put((m,), lib.tensor([7.], dtype=lib.float64))
        c = lib.zeros(5, dtype=lib.long).index_put_((lib.tensor([1, 1, 4, -1]),), lib.tensor([1, 2, 3, 4]),
                                                    accumulate=True)
        return a, b, c
    _both(run)
    _raises_like(lambda lib: lib.zeros(3, 4).index_put_((lib.tensor([True, False, True]),), lib.tensor(7),
                                                        accumulate=True))


def test_setitem_half_overflow_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lib in (ember, torch):
            x = lib.zeros(4, dtype=lib.float16)
            x[lib.tensor([1, 2])] = 1e5
            x[0] = -1e5
            assert x.isinf().tolist() == [True, True, True, False]


def test_index_put_accumulate_and_setitem_gradients():
    """Duplicates add up under accumulate=True; with setitem the values' gradient reads the written positions."""
    def run(lib):
        x = lib.tensor(_x((4, 5)), requires_grad=True)
        v = lib.tensor(_x((3,), 2), requires_grad=True)
        w = lib.tensor(_x((5,), 3), requires_grad=True)
        y = x.index_put((lib.tensor([3, 1, 3]), lib.tensor([0, 0, 0])), v, accumulate=True)
        y = y * 1
        y[lib.tensor([0, 2])] = w * 2
        y[:, lib.tensor([True, False, True, True, False])] = lib.tensor(0.5, requires_grad=True).double()
        y.backward(lib.tensor(_x((4, 5), 4)))
        return y, x.grad, v.grad, w.grad
    _both(run)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_and_index_reduce_gradients(reduce, include_self):
    idx = np.array([[0, 1, 0, 2], [2, 2, 1, 0], [1, 0, 0, 0]])

    def run(lib):
        x = lib.tensor(_x((3, 5), dtype="float64"), requires_grad=True)
        s = lib.tensor(_x((3, 4), 2, dtype="float64"), requires_grad=True)
        y = x.scatter_reduce(1, lib.tensor(idx), s, reduce, include_self=include_self)
        a = lib.tensor(_x((6, 3), 5, dtype="float64"), requires_grad=True)
        b = lib.tensor(_x((4, 3), 6, dtype="float64"), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = (a.index_add(0, lib.tensor([0, 2, 0, 5]), b) if reduce == "sum" else
                 a.index_reduce(0, lib.tensor([0, 2, 0, 5]), b, reduce, include_self=include_self))
        (y * lib.tensor(_x((3, 5), 1))).sum().add((z * lib.tensor(_x((6, 3), 7))).sum()).backward()
        ints = lib.tensor(np.arange(15).reshape(3, 5)).scatter_reduce(
            1, lib.tensor(idx), lib.tensor(np.arange(12).reshape(3, 4) * 3 - 7), reduce, include_self=include_self)
        return y, x.grad, s.grad, z, a.grad, b.grad, ints
    _both(run)


def test_deprecated_scatter_reduce_argument_and_beta_index_reduce_warn_once():
    ember._settings._warned_once.clear()  # the warnings come once per process
    x = ember.zeros(3, 5)
    first = _warnings(lambda: x.scatter(1, ember.tensor([[0]]), ember.ones(1, 1), reduce="add"))
    assert len(first) == 1 and first[0].startswith("The reduce argument of torch.scatter")
    assert _warnings(lambda: x.scatter(1, ember.tensor([[0]]), ember.ones(1, 1), reduce="multiply")) == []
    assert _warnings(lambda: x.scatter(1, ember.tensor([[0]]), 2., reduce="add")) == []
    assert len(_warnings(lambda: x.index_reduce(0, ember.tensor([0]), ember.ones(1, 5), "prod"))) == 1
    assert _warnings(lambda: x.index_reduce(0, ember.tensor([0]), ember.ones(1, 5), "amax")) == []


@pytest.mark.parametrize("idx", [[[-1]], [[-4, -2]], [[4]], [[5, -5]], [[40]]])
def test_take_along_dim_wraps_indices(idx):
    def run(lib):
        x = lib.arange(12.).reshape(3, 4).requires_grad_()
        y = x.take_along_dim(lib.tensor(idx), dim=-1)
        y.backward(lib.ones_like(y))
        return y, x.grad
    _both(run)
    _raises_like(lambda lib: lib.arange(12.).reshape(3, 4).take_along_dim(lib.tensor([12])))
    _raises_like(lambda lib: lib.zeros(3, 0).take_along_dim(lib.tensor([[1]]), dim=-1))


def test_topk_top_p_and_beam_search_reorderings():
    def run(lib):
        logits = lib.tensor(_x((4, 10)), requires_grad=True)
        v, i = logits.topk(3, dim=-1)
        kept = logits.masked_fill(logits < v[..., -1, None], float("-inf")).softmax(-1)
        s, order = logits.detach().sort(descending=True)
        drop = s.softmax(-1).cumsum(-1) > 0.8
        drop[..., 1:] = drop[..., :-1].clone()
        drop[..., 0] = False
        top_p = logits.detach().masked_fill(drop.scatter(1, order, drop), -1e9)
        B, K, V = 2, 3, 10
        cand = (logits.log_softmax(-1)[:3].repeat(2, 1) + lib.tensor(_x((B * K, 1), 1))).view(B, K * V)
        top, ids = cand.topk(2 * K, dim=1)
        beam, tok = ids // V, ids % V
        flat = (beam[:, :K] + lib.tensor([0, K]).unsqueeze(1)).view(-1)
        hist = lib.cat([lib.arange(B * K * 4).view(B * K, 4)[flat], tok[:, :K].reshape(-1, 1)], -1)
        past = lib.tensor(_x((B * K, 2, 5), 2)).index_select(0, flat)
        (kept * lib.tensor(_x((4, 10), 3))).sum().add(logits.gather(-1, i).sum()).add(top.sum()).backward()
        return v, i, kept, top_p, top, hist, past, logits.grad
    _both(run)


def test_embedding_bag_style_gathers_and_one_hot():
    def run(lib):
        W = lib.tensor(_x((10, 4)), requires_grad=True)
        idx, offs = lib.tensor([1, 2, 4, 5, 4, 3, 2, 9]), lib.tensor([0, 4])
        seg = lib.zeros(8, dtype=lib.long).index_fill(0, offs[1:], 1).cumsum(0)
        manual = lib.zeros(2, 4).index_add(0, seg, W.index_select(0, idx))
        bag = lib.nn.functional.embedding_bag(idx, W, offs, mode="sum")
        one_hot = lib.zeros(4, 6).scatter_(1, lib.tensor([[1], [5], [0], [2]]), 1.0)
        (manual * lib.tensor(_x((2, 4), 1))).sum().add((bag * lib.tensor(_x((2, 4), 2))).sum()).backward()
        return manual, bag, W.grad, one_hot, lib.nn.functional.one_hot(lib.tensor([[0, 3], [2, 1]]), 5)
    _both(run)


def test_gnn_message_passing_and_last_token_gathers():
    def run(lib):
        ei = lib.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 1]])
        h = lib.tensor(_x((4, 3)), requires_grad=True)
        msg = h[ei[0]]
        agg = lib.zeros(4, 3).index_add_(0, ei[1], msg)
        deg = lib.zeros(4).scatter_add_(0, ei[1], lib.ones(5))
        mx = lib.full((4, 3), float("-inf")).scatter_reduce(0, ei[1].unsqueeze(-1).expand(-1, 3), msg, "amax")
        seq = lib.tensor(_x((3, 6, 4), 1), requires_grad=True)
        last = seq[lib.arange(3), lib.tensor([6, 2, 4]) - 1]
        pick = seq.gather(1, lib.tensor([[0, 4], [3, 3], [5, 5]]).unsqueeze(-1).expand(-1, -1, 4))
        loss = (agg / deg.clamp(min=1).unsqueeze(-1)).sum() + mx[1].sum() + (last * 2).sum() + (pick ** 2).sum()
        loss.backward()
        return agg, deg, mx, last, pick, h.grad, seq.grad
    _both(run)


def test_masked_take_put_unfold_and_view_scatters():
    m = np.random.default_rng(3).random((3, 4)) > 0.5

    def run(lib):
        x = lib.tensor(_x((3, 4)), requires_grad=True)
        s = lib.tensor(_x((12,), 1), requires_grad=True)
        outs = [x.masked_scatter(lib.tensor(m), s), lib.masked_select(x, lib.tensor([True, False, True, True])),
                x.take(lib.tensor([[0, -1], [5, 5]])), x.put(lib.tensor([5, -1, 5]), s[:3], accumulate=True),
                x.unfold(1, 2, 1), x.t().narrow_copy(1, 1, 2), lib.select_scatter(x, s[:3], 1, -1),
                lib.slice_scatter(x, s[:6].view(3, 2), 1, 0, 4, 2), lib.diagonal_scatter(x, s[:3], 1),
                x.as_strided((2, 3), (4, 2), 1)]
        sum(((o * lib.tensor(_x(tuple(o.shape), k + 2))).sum() for k, o in enumerate(outs))).backward()
        return tuple(outs) + (x.grad, s.grad)
    _both(run)


ERRORS = [
    lambda l: l.zeros(4, 5)[l.tensor([0, 5])],
    lambda l: l.zeros(4, 5)[:, l.tensor([-6])],
    lambda l: l.zeros(4, 5)[l.tensor([0, 1]), l.tensor([0, 1, 2])],
    lambda l: l.zeros(4, 5)[l.tensor([True, False])],
    lambda l: l.zeros(4, 5)[l.tensor([0.])],
    lambda l: l.zeros(4, 5)[l.tensor([1]).short()],
    lambda l: l.zeros(4, 5).gather(2, l.tensor([[0]])),
    lambda l: l.zeros(4, 5).gather(1, l.tensor([[5]])),
    lambda l: l.zeros(4, 5).scatter(1, l.tensor([[0, 1]]), l.zeros(1, 1)),
    lambda l: l.zeros(4, 5).scatter_(1, l.tensor([[0]]), l.zeros(1, 1).double()),
    lambda l: l.zeros(4, 5).index_add(0, l.tensor([1, 7]), l.zeros(2, 5)),
    lambda l: l.zeros(4, 5).index_select(0, l.tensor([4])),
    lambda l: l.zeros(4, 5).index_fill(0, l.tensor([4]), 1.),
    lambda l: l.zeros(4, 5).take(l.tensor([20])),
    lambda l: l.zeros(4, 5).masked_scatter_(l.ones(4, 5, dtype=l.bool), l.zeros(3)),
    lambda l: l.zeros(4, 5).index_put_((l.tensor([0]), l.tensor([5])), l.tensor(1.)),
    lambda l: l.zeros(4, 5).take_along_dim(l.tensor([[0]]).int(), 1),
    lambda l: l.zeros(4, 5).scatter_reduce(1, l.tensor([[0]]), l.zeros(1, 1), "foo"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_index_errors(case):
    _raises_like(ERRORS[case])
