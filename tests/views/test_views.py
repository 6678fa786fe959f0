"""Views share memory with their base exactly as torch's do: layouts (stride, storage_offset, is_contiguous), writes
in both directions, version counters, and autograd through in-place writes into views."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import ember


def pair(shape=(3, 4), dtype="float64", requires_grad=False, seed=0):
    """The same values as a torch and an ember tensor (separate memory)."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (torch.tensor(a, requires_grad=requires_grad), ember.tensor(a, requires_grad=requires_grad))


def layout(t):
    # an empty view's strides and offset are history in torch (unsqueeze of a (0,) tensor gives strides (0, 1)); ember's
    # are torch's contiguous ones
    if not t.numel():
        return tuple(t.shape), t.is_contiguous()
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous()


def np_of(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


VIEWS = {
    "transpose": lambda m, x: x.transpose(0, 2),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "swapdims": lambda m, x: x.swapdims(1, 2),
    "movedim": lambda m, x: m.movedim(x, 0, -1),
    "mT": lambda m, x: x.mT,
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "narrow_last": lambda m, x: x.narrow(-1, 2, 2),
    "select": lambda m, x: x.select(1, 2),
    "select_last": lambda m, x: x.select(-1, -1),
    "diagonal": lambda m, x: x.diagonal(),
    "diagonal_offset": lambda m, x: x.diagonal(1, 1, 2),
    "diagonal_negative": lambda m, x: x.diagonal(-1, 2, 1),
    "unfold": lambda m, x: x.unfold(2, 2, 2),
    "unfold_overlapping": lambda m, x: x.unfold(1, 2, 1),
    "as_strided": lambda m, x: x.as_strided((2, 3), (4, 1), 5),
    "squeeze": lambda m, x: x.narrow(0, 0, 1).squeeze(0),
    "unsqueeze": lambda m, x: x.unsqueeze(1),
    "flatten": lambda m, x: x.flatten(1),
    "unflatten": lambda m, x: x.unflatten(2, (2, 2)),
    "view": lambda m, x: x.view(6, 4),
    "reshape": lambda m, x: x.reshape(-1),
    "split": lambda m, x: x.split(2, 2)[1],
    "chunk": lambda m, x: x.chunk(3, 1)[2],
    "tensor_split": lambda m, x: m.tensor_split(x, [1, 3], 2)[1],
    "unbind": lambda m, x: x.unbind(1)[1],
    "expand": lambda m, x: x.select(2, 0).unsqueeze(-1).expand(2, 3, 5),
    "chain": lambda m, x: x.transpose(0, 1).narrow(0, 1, 2).select(2, 1).unsqueeze(0).mT,
    "chain2": lambda m, x: x.permute(2, 1, 0).diagonal(0, 0, 1).unfold(1, 1, 1).squeeze(-1),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_layout_matches_torch(name):
    t, e = pair((2, 3, 4))
    tv, ev = VIEWS[name](torch, t), VIEWS[name](ember, e)
    assert layout(ev) == layout(tv)
    np.testing.assert_array_equal(np_of(ev), np_of(tv))
    assert ev._base is e


@pytest.mark.parametrize("name", [n for n in VIEWS if n not in ("expand", "unfold_overlapping")])
def test_writes_go_both_ways(name):
    t, e = pair((2, 3, 4))
    tv, ev = VIEWS[name](torch, t), VIEWS[name](ember, e)
    tv.mul_(-2)
    ev.mul_(-2)
    np.testing.assert_array_equal(np_of(e), np_of(t))  # the view's write reached the base
    t.add_(1)
    e.add_(1)
    np.testing.assert_array_equal(np_of(ev), np_of(tv))  # the base's write is seen by the view
    assert ev._version == e._version == 2


def test_write_to_overlapping_view_raises():
    for lib in (torch, ember):
        v = lib.zeros(3, 1).expand(3, 4)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            v.add_(1)
        with pytest.raises(RuntimeError, match="more than one element"):
            lib.zeros(4).as_strided((2, 2), (0, 1)).mul_(2)


def test_version_counter_is_shared():
    x = ember.zeros(3, 4)
    v = x.t().narrow(0, 1, 2)
    w = x.select(0, 1)
    assert x._version == v._version == w._version == 0
    v.add_(1)
    assert x._version == v._version == w._version == 1
    x.mul_(2)
    assert x._version == v._version == w._version == 2
    assert x.contiguous() is x and x.t().contiguous() is not x


@pytest.mark.parametrize("make", [lambda x: x.reshape(12), lambda x: x[1], lambda x: x.reshape(2, 6)[1][2:][0]],
                         ids=["reshape", "index", "chain"])
def test_views_without_a_graph_are_views_like_recorded_ones(make):
    """Reshape and integer indexing build views without a node when no graph is recorded: the same base, version
    counter, view chain and values as through a node, and in-place writes still reach the base."""
    x = ember.arange(12.0).reshape(3, 4).clone()
    leaf = x.clone().requires_grad_()
    fast = make(x)  # no input requires grad
    with ember.no_grad():
        fast_nograd = make(leaf)
    recorded = make(leaf)
    for v in (fast, fast_nograd):
        assert not v.requires_grad and v.grad_fn is None
        assert v._base is (x if v is fast else leaf) and v._vc is v._base._vc
        assert [c[0] for c in v._view_chain] == [c[0] for c in recorded._view_chain]
        np.testing.assert_array_equal(v.numpy(), recorded.detach().numpy())
    fast.add_(100)
    assert x._version == 1 and fast._version == 1
    assert (x > 99).sum().item() == fast.numel()
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        make(leaf).mul_(2)  # recorded again once grad mode is on


def test_modified_saved_tensor_raises():
    for lib in (torch, ember):
        x = lib.ones(2, 3, requires_grad=True)
        y = x.exp()  # saves its output
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = x.exp()
        y.select(1, 0).mul_(2)  # through a view
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        z = x * 1
        v = z.t()
        w = v * v  # saves the view
        z.add_(1)  # the base changes under it
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            w.sum().backward()


def test_inplace_on_view_of_leaf_raises():
    for lib in (torch, ember):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x.narrow(1, 0, 2).mul_(2)
        with torch.no_grad(), ember.no_grad():
            x.select(0, 0).mul_(2)  # allowed without recording


def test_inplace_on_multi_output_view_raises():
    for lib in (torch, ember):
        y = lib.ones(3, 4, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
            y.split(2, 1)[0].mul_(2)
        with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
            y.unbind(1)[1].mul_(2)
    y = ember.ones(3, 4)
    y.chunk(2, 1)[1].mul_(2)  # nothing records: allowed
    assert y.sum().item() == 18


INPLACE_CASES = {
    "select": lambda v: v.select(1, 0).mul_(2),
    "narrow": lambda v: v.narrow(0, 1, 2).add_(v.narrow(0, 0, 2).detach().clone()),
    "transpose_narrow_diag": lambda v: v.narrow(0, 1, 2).t().diagonal().mul_(3),
    "unfold": lambda v: v.unfold(1, 2, 2).mul_(2),
    "as_strided": lambda v: v.as_strided((2, 2), (1, 4), 1).mul_(-1),
    "unsqueeze_squeeze": lambda v: v.unsqueeze(0).squeeze(0).select(0, 2).exp_(),
    "view": lambda v: v.view(2, 6).select(1, 5).mul_(4),
    "permute_flatten": lambda v: v.permute(1, 0).flatten().narrow(0, 2, 3).mul_(0),
    "twice": lambda v: (v.select(0, 0).mul_(2), v.select(1, 1).mul_(3)),
    "then_view_again": lambda v: (v.select(0, 0).mul_(2), v.narrow(0, 0, 2).mul_(5)),
}


@pytest.mark.parametrize("name", list(INPLACE_CASES))
def test_inplace_through_view_gradients_match_torch(name):
    t, e = pair((3, 4), requires_grad=True)
    w = np.random.default_rng(1).standard_normal((3, 4))
    for lib, x in ((torch, t), (ember, e)):
        y = x * 2  # a non-leaf base
        INPLACE_CASES[name](y)
        (y * y * lib.tensor(w)).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_inplace_as_strided_gets_gradients_of_any_layout():
    w = np.random.default_rng(3).standard_normal((4, 6))
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        base = lib.from_numpy(w.copy()[:, ::2])  # a non-contiguous base: as_strided addresses its memory
        base.as_strided((3,), (8,), 0).mul_(0).add_(x * x)
        y = lib.tensor(w) * 1
        y.as_strided((2, 2), (1, 6), 1).mul_(0).add_(x[:2].unsqueeze(0))
        (base.sum() + y.sum()).backward()  # gradients that reach the bases expanded (stride 0)
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_inplace_copy_of_grad_requiring_value_into_view():
    grads = []
    for lib in (torch, ember):
        base = lib.zeros(3, 4)  # does not require grad itself
        src = lib.tensor([1., 2., 3.], requires_grad=True)
        base.select(1, 2).mul_(0).add_(src)
        assert base.requires_grad
        (base * base).sum().backward()
        grads.append(src.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


@pytest.mark.parametrize("op,args", [("t_", ()), ("transpose_", (0, 1)), ("swapdims_", (1, 0)),
                                     ("unsqueeze_", (1,)), ("squeeze_", ()), ("squeeze_", (0,))])
def test_inplace_view_ops(op, args):
    t, e = pair((1, 3), requires_grad=True)
    for lib, x in ((torch, t), (ember, e)):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            getattr(x, op)(*args)
    w = np.random.default_rng(2).standard_normal(3)
    outs = []
    for lib, x in ((torch, t), (ember, e)):
        y = x * 1
        v0 = y._version
        assert getattr(y, op)(*args) is y
        assert y._version == v0 + 1
        outs.append(layout(y))
        (y.reshape(-1) * lib.tensor(w)).sum().backward()
    assert outs[0] == outs[1]
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


def test_clone_and_contiguous_layouts():
    t, e = pair((2, 3, 4, 5))
    for fn in (lambda m, x: x.transpose(1, 3).clone(), lambda m, x: x.transpose(1, 3).contiguous(),
               lambda m, x: x.narrow(2, 1, 2).transpose(0, 3).clone(),
               lambda m, x: m.clone(x, memory_format=m.channels_last),
               lambda m, x: x.permute(0, 2, 3, 1).clone(memory_format=m.contiguous_format),
               lambda m, x: x.contiguous(memory_format=m.channels_last)):
        tv, ev = fn(torch, t), fn(ember, e)
        assert layout(ev)[:2] == layout(tv)[:2]
        assert ev._base is None and ev.data_ptr() != e.data_ptr()
        np.testing.assert_array_equal(np_of(ev), np_of(tv))


def test_T_warns_like_torch():
    with pytest.warns(UserWarning, match="x.T"):
        ember.zeros(2, 3, 4).T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.zeros(2, 3).T


def test_backward_through_views_twice_differentiable():
    t, e = pair((3, 4), requires_grad=True)
    for lib, x in ((torch, t), (ember, e)):
        y = (x.t().unfold(0, 2, 1).diagonal(0, 1, 2) ** 2).as_strided((2, 2), (1, 2)).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())


# -- property tests: random chains of views ----------------------------------------------------------------------------
@st.composite
def view_chain(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    steps = []
    cur = list(shape)
    for _ in range(draw(st.integers(1, 5))):
        n = len(cur)
        kinds = ["unsqueeze", "squeeze", "flatten", "expand"] + (
            ["transpose", "permute", "narrow", "movedim"] if n else []) + (
            ["select"] if n and any(cur) else []) + (["diagonal", "mT"] if n >= 2 else []) + (
            ["unfold"] if n else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "transpose":
            args = (draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1)))
            cur[args[0]], cur[args[1]] = cur[args[1]], cur[args[0]]
        elif kind == "permute":
            args = tuple(draw(st.permutations(range(n))))
            cur = [cur[p] for p in args]
        elif kind == "movedim":
            args = (draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1)))
            cur.insert(args[1] % n, cur.pop(args[0] % n))
        elif kind == "narrow":
            d = draw(st.integers(0, n - 1))
            start = draw(st.integers(0, cur[d]))
            length = draw(st.integers(0, cur[d] - start))
            args = (d, start, length)
            cur[d] = length
        elif kind == "select":
            d = draw(st.sampled_from([i for i in range(n) if cur[i]]))
            args = (d, draw(st.integers(-cur[d], cur[d] - 1)))
            cur.pop(d)
        elif kind == "unsqueeze":
            args = (draw(st.integers(-n - 1, n)),)
            cur.insert(args[0] % (n + 1), 1)
        elif kind == "squeeze":
            args = () if draw(st.booleans()) or not n else (draw(st.integers(-n, n - 1)),)
            cur = [s for i, s in enumerate(cur) if s != 1 or (args and i != args[0] % n)]
        elif kind == "flatten":
            if n == 0:
                args, cur = (), [1]
            else:
                s = draw(st.integers(0, n - 1))
                e = draw(st.integers(s, n - 1))
                args = (s, e)
                cur = cur[:s] + [int(np.prod(cur[s:e + 1]))] + cur[e + 1:]
        elif kind == "expand":
            lead = draw(st.lists(st.integers(0, 3), max_size=2))
            new = [draw(st.integers(0, 3)) if s == 1 else s for s in cur]
            args = (tuple(lead + new),)
            cur = lead + new
        elif kind == "diagonal":
            d1, d2 = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            off = draw(st.integers(-3, 3))
            args = (off, d1, d2)
            a, b = cur[d1], cur[d2]
            size = max(min(a, b - off) if off >= 0 else min(a + off, b), 0)
            cur = [s for i, s in enumerate(cur) if i not in (d1, d2)] + [size]
        elif kind == "mT":
            args = ()
            cur[-1], cur[-2] = cur[-2], cur[-1]
        else:  # unfold
            d = draw(st.integers(0, n - 1))
            size = draw(st.integers(0, cur[d]))
            step = draw(st.integers(1, 3))
            args = (d, size, step)
            cur[d] = (cur[d] - size) // step + 1
            cur.append(size)
        steps.append((kind, args))
    return shape, steps


def _apply(lib, x, steps):
    for kind, args in steps:
        if kind == "mT":
            x = x.mT
        elif kind == "movedim":
            x = lib.movedim(x, *args)
        else:
            x = getattr(x, kind)(*args)
    return x


def _distinct_memory(t):
    idx = np.full(tuple(t.shape), t.storage_offset(), dtype=np.int64)
    for d, (n, s) in enumerate(zip(t.shape, t.stride())):
        idx += (np.arange(n) * s).reshape((n,) + (1,) * (t.dim() - d - 1))
    return len(np.unique(idx)) == idx.size


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_chain())
def test_random_view_chains_match_torch(chain):
    shape, steps = chain
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t, e = torch.from_numpy(base.copy()), ember.from_numpy(base.copy())
    tv, ev = _apply(torch, t, steps), _apply(ember, e, steps)
    assert layout(ev) == layout(tv), steps
    np.testing.assert_array_equal(np_of(ev), np_of(tv))
    if tv.numel() and _distinct_memory(tv):
        tv.add_(1000)
        ev.add_(1000)
        np.testing.assert_array_equal(np_of(e), np_of(t))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_chain())
def test_random_inplace_through_view_chains_gradients_match_torch(chain):
    shape, steps = chain
    base = np.random.default_rng(len(steps)).standard_normal(shape)
    weight = np.random.default_rng(1).standard_normal(shape)
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(base, requires_grad=True)
        y = x * 2
        v = _apply(lib, y, steps)
        if lib is torch:
            assume(v.numel() and _distinct_memory(v))
        v.mul_(3)
        (y * y * lib.tensor(weight)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_broadcast_shapes_like_torch():
    for shapes in [((2, 1), (3,), 1), ((), (4, 1)), ((0, 1), (3,)), ()]:
        assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert isinstance(ember.broadcast_shapes((2,), (1,)), ember.Size)
    for shapes in [((2,), (3,)), ((2, 3), (4, 1, 2))]:
        with pytest.raises(RuntimeError) as t:
            torch.broadcast_shapes(*shapes)
        with pytest.raises(RuntimeError) as e:
            ember.broadcast_shapes(*shapes)
        assert str(e.value) == str(t.value)
