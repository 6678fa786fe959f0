"""x[key] and x[key] = value against torch: values, view-or-copy, gradients, writes through views, errors."""
import numpy as np
import pytest
import torch

import ember
from .util import T, array, assert_same, conv, run_both, same_error, tensors

M34 = np.random.default_rng(1).random((3, 4)) < 0.5
M3 = np.array([True, False, True])
M45 = np.random.default_rng(2).random((4, 5)) < 0.5

BASIC = [0, -1, (1, 2), (1, 2, 3), slice(None), slice(1, None), slice(None, None, 2), (slice(None), 1), (..., 1),
         (None,), (1, None, slice(None), None), (Ellipsis,), (), slice(-100, 100), slice(5, 1),
         (slice(1, 3), slice(None, None, 3), -2), (None, ..., None), (0, ..., 0), (..., None, 0), (..., 1, ...),
         T(1), (0, T(-2)), (slice(T(1), None),)]
ADVANCED = [True, False, (True, 0), (slice(None), False), (..., True), [0, 2], [[0, 1], [2, 0]], T([0, 2]),
            T([[0, 1], [2, 0]]), np.array([2, 0, 1]), (slice(None), [1, 3]), ([0, 2], [1, 3]),
            ([0, 2], slice(None), [1, 3]), (slice(None), [0, 1], [2, 3]), (0, slice(None), [1, 2]),
            ([0, 1], None, [0, 1]), (T([[0], [2]]), T([1, 2, 3])), (..., [0, 4]), T(M34), M3, [True, False, True],
            (slice(None), M45), (1, M45), (M3, slice(None), [0, 4]), (T([0, 2], "int32"),), T(M3.astype(np.uint8)),
            T(True),
            [], T([], "int64"), [-1, -3], (slice(None), [-4]), (None, [0, 1], None), (slice(1, None), [0, 0, 2]),
            (T([[1]]), slice(None), T([[[0, 1]]])), [0, True], np.array([1.7, 0.2])]


def _getitem(key):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    return run_both(lambda m: (lambda x: (x, x[conv(key, m)]))(m.tensor(a)))


@pytest.mark.parametrize("key", BASIC + ADVANCED, ids=repr)
def test_getitem(key):
    (ex, e), (tx, t) = _getitem(key)
    assert_same(e, t)
    if e.numel():  # (an empty result of basic indexing is not marked as a view)
        assert (e._base is not None) == t._is_view(), "view or copy, as torch"
        shares = np.shares_memory(e._data, ex._data)
        assert shares == any(key is k for k in BASIC), "basic indexing shares memory, advanced indexing copies"


@pytest.mark.parametrize("key", [k for k in BASIC if k != slice(5, 1)], ids=repr)
def test_basic_view_writes_through(key):
    x = ember.zeros(3, 4, 5)
    v = x[conv(key, ember)]
    v += 1  # a write into the view is a write into x
    t = torch.zeros(3, 4, 5)
    t[conv(key, torch)] += 1
    assert_same(x, t)
    assert x._version == 1


@pytest.mark.parametrize("key", [(), ..., None, True, False, (None, ...), T(True), (..., None, True)], ids=repr)
def test_getitem_0d(key):
    (_, e), (_, t) = run_both(lambda m: (None, m.tensor(5.0)[conv(key, m)]))
    assert_same(e, t)
    assert (e._base is not None) == t._is_view()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "bool"])
def test_getitem_dtypes_noncontiguous(dtype):
    a = (array((4, 6, 3), "float32") * 3).astype(np.int64).astype(dtype) if dtype != "bfloat16" else \
        array((4, 6, 3), dtype)
    e, t = tensors(a)
    e, t = e.transpose(0, 2), t.transpose(0, 2)  # (3, 6, 4), not contiguous
    for key in [(1, slice(None, None, 2)), ([2, 0], slice(1, 4), [3, 3]), (..., T([1, 0])), e.gt(0) if dtype == "bool"
                else (slice(None), [True] * 3 + [False] * 3)]:
        ke = key if isinstance(key, ember.Tensor) else conv(key, ember)
        kt = torch.from_numpy(key.numpy()) if isinstance(key, ember.Tensor) else conv(key, torch)
        assert_same(e[ke], t[kt])


# -- setitem -----------------------------------------------------------------------------------------------------------
def _no_repeats(key):
    """Whether the key writes each element once (torch's order for repeated writes is unspecified)."""
    a = torch.arange(60).reshape(3, 4, 5)[conv(key, torch)]
    return a.unique().numel() == a.numel()


SET_KEYS = [k for k in BASIC + ADVANCED if not isinstance(k, np.ndarray) or k.dtype.kind != "f"]


@pytest.mark.parametrize("key", SET_KEYS, ids=repr)
@pytest.mark.parametrize("kind", ["number", "full", "broadcast", "leading-ones"])
def test_setitem(key, kind):
    region = torch.zeros(3, 4, 5)[conv(key, torch)].shape
    if kind != "number" and not _no_repeats(key):
        pytest.skip("repeated writes of different values")
    rng = np.random.default_rng(0)
    value = {"number": 7.5, "full": rng.standard_normal(region).astype(np.float32),
             "broadcast": rng.standard_normal(region[-1:]).astype(np.float32),
             "leading-ones": rng.standard_normal((1, 1) + tuple(region)).astype(np.float32)}[kind]

    def run(m):
        x = m.arange(60.0).reshape(3, 4, 5)
        x[conv(key, m)] = value if kind == "number" else m.tensor(value)
        return x
    e, t = run_both(run)
    if isinstance(t, Exception):
        return
    assert_same(e, t)
    assert e._version == t._version


def test_setitem_value_kinds():
    x, t = ember.zeros(2, 3), torch.zeros(2, 3)
    x[0] = ember.tensor([1, 2, 3])  # lists and arrays are refused, as torch's (tests/tensor/test_torch_edge_cases.py)
    t[0] = torch.tensor([1, 2, 3])
    x[1, :2] = ember.tensor([4.0, 5.0])
    t[1, :2] = torch.tensor([4.0, 5.0])
    x[1, 2] = ember.tensor(6, dtype=ember.int64)  # basic indexing casts the value
    t[1, 2] = torch.tensor(6)
    assert_same(x, t)
    i, ti = ember.zeros(3, dtype=ember.int64), torch.zeros(3, dtype=torch.int64)
    i[0], ti[0] = 1.7, 1.7
    i[1:], ti[1:] = -2.7, -2.7
    assert_same(i, ti)
    b, tb = ember.zeros(3, dtype=ember.bool), torch.zeros(3, dtype=torch.bool)
    b[0], tb[0] = 2, 2
    b[[1]], tb[[1]] = 0.5, 0.5
    assert_same(b, tb)
    m, tm = ember.arange(6.0), torch.arange(6.0)
    m[m > 2] = ember.tensor(1.0, dtype=ember.float64)  # a mask with a 0-d value casts (torch's masked_fill path)
    tm[tm > 2] = torch.tensor(1.0, dtype=torch.float64)
    assert_same(m, tm)


def test_setitem_overlapping_and_empty():
    x, t = ember.arange(6.0), torch.arange(6.0)
    x[1:] = x[:-1].clone()
    t[1:] = t[:-1].clone()
    x[x > 100] = 3.0
    t[t > 100] = 3.0
    x[[]] = 1.0
    t[[]] = 1.0
    assert_same(x, t)


def test_setitem_into_view_is_visible_in_base():
    x = ember.zeros(3, 4)
    x[0][1] = 5.0
    row = x[2]
    row[[0, 3]] = ember.tensor([1.0, 2.0])
    x[:, 1:][1][x[1, 1:] == 0] = 7.0
    t = torch.zeros(3, 4)
    t[0][1] = 5.0
    t[2][[0, 3]] = torch.tensor([1.0, 2.0])
    t[:, 1:][1][t[1, 1:] == 0] = 7.0
    assert_same(x, t)
    assert x._version == row._version == 3


# -- gradients ---------------------------------------------------------------------------------------------------------
GRAD_KEYS = [k for k in BASIC + ADVANCED if torch.zeros(3, 4, 5)[conv(k, torch)].numel()] + [
    T([0, 0, 2]), ([1, 1], slice(None), [2, 2])]


@pytest.mark.parametrize("key", GRAD_KEYS, ids=repr)
def test_getitem_grad(key):
    a = array((3, 4, 5), "float64")

    def run(m):
        x = m.tensor(a, requires_grad=True)
        y = x[conv(key, m)]
        g = np.random.default_rng(3).standard_normal(tuple(y.shape))
        y.backward(m.tensor(g))
        return x.grad
    e, t = run_both(run)
    assert_same(e, t, rtol=1e-12)


@pytest.mark.parametrize("key", [k for k in SET_KEYS if _no_repeats(k)], ids=repr)
def test_setitem_grad(key):
    a = array((3, 4, 5), "float64")
    region = torch.zeros(3, 4, 5)[conv(key, torch)].shape
    v = array(region[-1:], "float64", seed=1)  # broadcast: the value's gradient sums over the region
    g = array((3, 4, 5), "float64", seed=2)

    def run(m):
        x = m.tensor(a, requires_grad=True)
        val = m.tensor(v, requires_grad=True)
        y = x * 2
        y[conv(key, m)] = val
        (y * m.tensor(g)).sum().backward()
        return y, x.grad, val.grad
    (ye, xe, ve), (yt, xt, vt) = run_both(run)
    assert_same(ye, yt)
    assert_same(xe, xt)
    assert (ve is None) == (vt is None)
    if vt is not None:
        assert_same(ve, vt, atol=1e-12)


def test_setitem_through_views_grad():
    a, w0, w1 = array((3, 4), "float64"), array((2,), "float64", 1), array((), "float64", 2)
    g = array((3, 4), "float64", 3)

    def run(m):
        x = m.tensor(a, requires_grad=True)
        w, u = m.tensor(w0, requires_grad=True), m.tensor(w1, requires_grad=True)
        y = x * 3
        row = y[1]
        row[1:3] = w * 2  # a basic write into a view of y
        y[0][[0, 3]] = u  # an advanced write into a view
        y[:, 0][y[:, 0] > 0] = u * 5  # a mask write into a column view
        out = (y * m.tensor(g)).sum() + (row * row).sum()
        out.backward()
        return y, row, x.grad, w.grad, u.grad
    e, t = run_both(run)
    for a_, b_ in zip(e, t):
        assert_same(a_, b_, rtol=1e-12)


def test_setitem_leaf_and_no_grad():
    same_error(lambda m: m.zeros(3, requires_grad=True).__setitem__(0, 1.0))
    x = ember.zeros(3, requires_grad=True)
    with ember.no_grad():
        x[1] = 2.0
    assert x.tolist() == [0.0, 2.0, 0.0] and x._version == 1 and x.grad_fn is None
    y = ember.zeros(3)
    y[0] = ember.tensor(1.0, requires_grad=True)  # a constant tensor takes part in the graph once written into
    assert y.requires_grad and y.grad_fn is not None


def test_grad_accumulates_repeats_and_double_backward():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x[[0, 0, 2, 0]] ** 2
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * m.tensor([1.0, 2.0, 3.0])).sum(), x)
        return g, gg
    e, t = run_both(run)
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


# -- errors ------------------------------------------------------------------------------------------------------------
BAD_KEYS = [3, (0, 5), (..., 5), [3], (slice(None), [4]), (slice(None), [-5]), ([0], slice(None), [7]),
            T([1.0]), 1.5, (0, 0, 0, 0), T(np.ones((3, 3), bool)), (slice(None), T(np.ones((3, 5), bool))),
            slice(None, None, -1), slice(None, None, 0), ([0, 1], [0, 1, 2]), (T([[0, 1]]), [0, 1, 2]),
            T([0], "int8"), (slice(None), slice(None), T(np.ones((5, 2), bool)))]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_getitem_errors(key):
    same_error(lambda m: m.zeros(3, 4, 5)[conv(key, m)])


def test_errors_misc():
    same_error(lambda m: m.tensor(5.0)[0])
    same_error(lambda m: m.zeros(3)[None, ..., 3])
    same_error(lambda m: m.zeros(3, 4).__setitem__(0, m.ones(2)))
    same_error(lambda m: m.zeros(3, 4).__setitem__([0, 1], m.ones(5)))
    same_error(lambda m: m.zeros(3, 4).__setitem__([0, 1], m.ones(3, 2, 4)))
    same_error(lambda m: m.zeros(3, 4).__setitem__([0], m.ones(4, dtype=m.float64)))
    same_error(lambda m: m.zeros(3, 4).__setitem__((0, [1]), m.tensor(1)))
    same_error(lambda m: m.zeros(3, 4).__setitem__(m.zeros(3, 4) == 0, m.ones(2)))
    same_error(lambda m: m.zeros(3, 4).__setitem__(5, 1.0))
    e, t = run_both(lambda m: m.zeros(3, 4).__setitem__(0, m.ones(2, 3, 4)))
    assert isinstance(e, RuntimeError) and isinstance(t, RuntimeError)


def test_augmented_assignment():
    """``y[key] op= v`` reads, updates in place and writes back, through views and copies alike."""
    a, w, g = array((3, 4), "float64"), array((4,), "float64", 1), array((3, 4), "float64", 2)

    def run(m):
        x, v = m.tensor(a, requires_grad=True), m.tensor(w, requires_grad=True)
        y = x * 2
        y[0] += v
        y[[1, 2]] += v * 3
        y[:, 1] *= 2
        y[y > 3] -= 1
        (y * m.tensor(g)).sum().backward()
        return y, x.grad, v.grad
    e, t = run_both(run)
    for a_, b_ in zip(e, t):
        assert_same(a_, b_, rtol=1e-12)
    assert e[0]._version == t[0]._version
