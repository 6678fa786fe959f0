"""gather/scatter, index_*, masked_*, take/put and where beyond the op table: in-place forms, autograd through
in-place writes, torch's errors."""
import numpy as np
import pytest

import ember
from .util import array, assert_same, run_both, same_error


def _i(m, data, dtype=None):
    return m.tensor(data, dtype=dtype if dtype is None else getattr(m, dtype))


INPLACE = {
    "scatter_": lambda m, x: x.scatter_(0, _i(m, [[2, 0, 1, 2]]), m.ones(1, 4)),
    "scatter_value": lambda m, x: x.scatter_(1, _i(m, [[3], [0], [1]]), -2.0),
    "scatter_add_": lambda m, x: x.scatter_add_(0, _i(m, [[0, 0, 1, 2], [0, 2, 2, 2]]), m.ones(2, 4)),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(1, _i(m, [[0, 0], [3, 3], [1, 2]]), m.full((3, 2), 3.0),
                                                      "amax", include_self=False),
    "scatter_multiply": lambda m, x: x.scatter_(0, _i(m, [[0, 0, 1, 2]]), 3.0, reduce="multiply"),
    "index_add_": lambda m, x: x.index_add_(1, _i(m, [3, 3, 0]), m.ones(3, 3), alpha=-2),
    "index_copy_": lambda m, x: x.index_copy_(0, _i(m, [2, 0]), m.zeros(2, 4)),
    "index_fill_": lambda m, x: x.index_fill_(1, _i(m, [1, -1]), 9.0),
    "index_reduce_": lambda m, x: x.index_reduce_(0, _i(m, [1, 1]), m.full((2, 4), 2.0), "prod"),
    "index_put_": lambda m, x: x.index_put_((_i(m, [0, 0]), _i(m, [1, 1])), m.tensor([1.0, 2.0]), accumulate=True),
    "masked_fill_": lambda m, x: x.masked_fill_(x > 0, m.tensor(0.5)),
    "masked_scatter_": lambda m, x: x.masked_scatter_(x > 0, m.arange(12.0)),
    "put_": lambda m, x: x.put_(_i(m, [0, -1]), m.tensor([7.0, 8.0])),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace(name):
    a = array((3, 4))

    def run(m):
        x = m.tensor(a)
        out = INPLACE[name](m, x)
        assert out is x
        return x
    e, t = run_both(run)
    assert_same(e, t)
    assert e._version == t._version


@pytest.mark.parametrize("name", [n for n in INPLACE if n != "scatter_multiply"])  # no derivative in torch
def test_inplace_grad(name):
    a, g = array((3, 4)), array((3, 4), seed=1)

    def run(m):
        x = m.tensor(a, requires_grad=True)
        y = x * 1.5
        INPLACE[name](m, y)
        (y * m.tensor(g)).sum().backward()
        return y, x.grad
    (ye, ge), (yt, gt) = run_both(run)
    assert_same(ye, yt, rtol=1e-6)
    assert_same(ge, gt, rtol=1e-6)


def test_inplace_on_leaf_raises():
    same_error(lambda m: m.zeros(3, requires_grad=True).index_fill_(0, _i(m, [0]), 1.0))
    same_error(lambda m: m.zeros(4).masked_fill_(m.ones(3, 4, dtype=m.bool), 1.0))


def test_scatter_src_larger_than_index_grad():
    """Only src's leading corner is read; the rest gets a zero gradient (torch refuses to compute this one)."""
    src = ember.tensor(array((3, 3), "float64"), requires_grad=True)
    out = ember.zeros(3, 4, dtype=ember.float64).scatter(1, ember.tensor([[0, 1], [2, 3]]), src)
    out.backward(ember.ones_like(out))
    assert src.grad.tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 0]]
    assert out.tolist()[0][:2] == src.tolist()[0][:2]


def test_scatter_reduce_gradients_at_ties_and_zeros():
    """amax/amin share the gradient among ties; prod is exact with one zero per target."""
    def run(m, reduce, x, src, include_self):
        x = m.tensor(x, dtype=m.float64, requires_grad=True)
        s = m.tensor(src, dtype=m.float64, requires_grad=True)
        y = x.scatter_reduce(0, m.tensor([0, 0, 1, 1]), s, reduce, include_self=include_self)
        y.backward(m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
        return y, x.grad, s.grad
    for reduce, x, src in [("amax", [2.0, 1.0, 5.0], [2.0, 2.0, 0.5, 1.0]),
                           ("amin", [2.0, 1.0, 5.0], [2.0, 3.0, 1.0, 1.0]),
                           ("prod", [2.0, 0.0, 5.0], [0.0, 3.0, 4.0, 2.0]), ("mean", [1.0, 2.0, 3.0], [4, 5, 6, 7])]:
        for include_self in (True, False):
            e, t = run_both(lambda m: run(m, reduce, x, src, include_self))
            for a, b in zip(e, t):
                assert_same(a, b, rtol=1e-12)


def test_where_and_masked_fill_dtypes():
    c = [True, False, True]
    for make in [lambda m: m.where(m.tensor(c), m.tensor([1, 2, 3], dtype=m.int32), 2.5),
                 lambda m: m.where(m.tensor(c), 1, 0),
                 lambda m: m.where(m.tensor(c), 1.0, 0),
                 lambda m: m.where(m.tensor(c), True, 0),
                 lambda m: m.where(m.tensor(c), m.ones(3, dtype=m.float16), m.tensor(1, dtype=m.float64)),
                 lambda m: m.where(m.tensor(c), m.ones(3, dtype=m.float16), m.ones(1, dtype=m.float64)),
                 lambda m: m.where(m.tensor(c), m.ones(3, dtype=m.bfloat16), m.ones(3, dtype=m.float16)),
                 lambda m: m.where(m.tensor(c, dtype=m.uint8), m.ones(3), 0.0),
                 lambda m: m.arange(3).masked_fill(m.tensor(c), 2.7),
                 lambda m: m.arange(3.0).masked_fill(m.tensor(c), True),
                 lambda m: m.arange(3.0).masked_fill(m.tensor(c), m.tensor(2, dtype=m.float64)),
                 lambda m: m.arange(3).index_fill(0, m.tensor([1]), m.tensor(3.5)),
                 lambda m: m.zeros(3, dtype=m.int64).scatter(0, m.tensor([1]), 2.7, reduce="add")]:
        e, t = run_both(make)
        assert_same(e, t)


def test_where_single_argument_and_nonzero():
    a = np.array([[0, 1.5], [0, -2]])
    e, t = run_both(lambda m: m.where(m.tensor(a)))
    for x, y in zip(e, t):
        assert_same(x, y)
    e, t = run_both(lambda m: (m.nonzero(m.tensor(0.0)), m.nonzero(m.tensor(3), as_tuple=True)[0]))
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


def test_where_gradient_to_broadcast_and_scalar_inputs():
    a, b = array((3, 1), "float64"), array((4,), "float64", 1)
    c = np.random.default_rng(0).random((3, 4)) < 0.5

    def run(m):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        out = m.where(m.tensor(c), x, y) * m.where(m.tensor(c), 2.0, y)
        out.backward(m.ones(3, 4, dtype=m.float64))
        return x.grad, y.grad
    e, t = run_both(run)
    assert_same(e[0], t[0])
    assert_same(e[1], t[1])


ERRORS = [
    lambda m: m.zeros(3, 4).gather(0, m.tensor([[0.0]])),
    lambda m: m.zeros(3, 4).gather(0, m.tensor([[5]])),
    lambda m: m.zeros(3, 4).gather(1, m.tensor([[-1]])),
    lambda m: m.zeros(3, 4).gather(0, m.zeros(2, 5, dtype=m.long)),
    lambda m: m.zeros(3, 4).gather(0, m.zeros(2, dtype=m.long)),
    lambda m: m.zeros(3, 4).gather(2, m.zeros(2, 2, dtype=m.long)),
    lambda m: m.zeros(3, 4).scatter(0, m.tensor([[5]]), 1.0),
    lambda m: m.zeros(3, 4).scatter(0, m.tensor([[0.0]]), 1.0),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.long), m.ones(1, 1)),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(4, 5, dtype=m.long), 1.0),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.long), m.ones(2, 2, dtype=m.float64)),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, dtype=m.long), 1.0),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.long), m.ones(2)),
    lambda m: m.zeros(3, 4).scatter(0, m.zeros(2, 2, dtype=m.long), 1.0, reduce="max"),
    lambda m: m.zeros(3, 4).scatter_add(0, m.zeros(2, 2, dtype=m.long), m.ones(2, 2, dtype=m.float64)),
    lambda m: m.zeros(3, 4).scatter_reduce(0, m.zeros(1, 1, dtype=m.long), m.ones(1, 1), "foo"),
    lambda m: m.zeros(3, 4).scatter_reduce(0, m.zeros(1, 1, dtype=m.long), 1.0, "sum"),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([0.0])),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([[0]])),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([3])),
    lambda m: m.zeros(3, 4).index_select(0, m.tensor([-1])),
    lambda m: m.tensor(2.0).index_select(0, m.tensor([0, 0])),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([3]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([-1]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([1]), m.ones(2, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([1]), m.ones(1, 4, dtype=m.float64)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([0.0]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([[0]]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_add(0, m.tensor([1]), m.ones(1, 5)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([3]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([-1]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([1], dtype=m.int32), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([[0]]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([1]), m.ones(1, 5)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([1, 0]), m.ones(1, 4)),
    lambda m: m.zeros(3, 4).index_copy(0, m.tensor([1]), m.ones(1, 4, dtype=m.float64)),
    lambda m: m.tensor(1.0).index_copy(0, m.tensor([0, 0]), m.tensor(2.0)),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([3]), 1.0),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([1], dtype=m.int32), 1.0),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([1]), m.tensor([1.0])),
    lambda m: m.zeros(3, 4).index_fill(0, m.tensor([[0]]), 1.0),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([0]), m.ones(1, 4), "sum"),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([3]), m.ones(1, 4), "amax"),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([0.0]), m.ones(1, 4), "amax"),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([[0]]), m.ones(1, 4), "amax"),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([0]), m.ones(1, 4, dtype=m.float64), "amax"),
    lambda m: m.zeros(3, 4).index_reduce(0, m.tensor([0]), m.ones(2, 4), "amax"),
    lambda m: m.zeros(3, 4).index_put((m.tensor([0, 0]),), m.tensor(1.0, dtype=m.float64)),
    lambda m: m.zeros(3, 4).index_put([m.tensor([0])] * 4, m.tensor(1.0)),
    lambda m: m.zeros(3, 4).index_put([m.tensor([0.0])], m.tensor(1.0)),
    lambda m: m.zeros(3, 4).index_put([m.tensor([5])], m.tensor(1.0)),
    lambda m: m.zeros(3, 4).index_put((None, m.tensor([0, 1])), m.tensor(1.0)),
    lambda m: m.zeros(3, 4).index_put((m.tensor([0, 1]),), m.ones(3)),
    lambda m: m.zeros(3, 4).masked_fill(m.zeros(3, 4), 1.0),
    lambda m: m.zeros(3, 4).masked_fill(m.zeros(3, 4, dtype=m.uint8), 1.0),
    lambda m: m.zeros(3, 4).masked_fill(m.zeros(3, 4, dtype=m.int64), 1.0),
    lambda m: m.zeros(3, 4).masked_fill(m.zeros(3, 4, dtype=m.bool), m.tensor([1.0])),
    lambda m: m.zeros(3, 4).masked_fill(m.zeros(5, dtype=m.bool), 1.0),
    lambda m: m.zeros(4).masked_select(m.ones(3, 4)),
    lambda m: m.zeros(3, 4).masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(3)),
    lambda m: m.zeros(3, 4).masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(30, dtype=m.float64)),
    lambda m: m.zeros(3, 4).masked_scatter(m.ones(3, 4), m.ones(12)),
    lambda m: m.zeros(3, 4).take(m.tensor([12])),
    lambda m: m.zeros(3, 4).take(m.tensor([-13])),
    lambda m: m.zeros(3, 4).take(m.tensor([1], dtype=m.int32)),
    lambda m: m.zeros(3, 4).put_(m.tensor([12]), m.tensor([1.0])),
    lambda m: m.zeros(3, 4).put_(m.tensor([1, 2]), m.tensor([1.0])),
    lambda m: m.zeros(3, 4).put_(m.tensor([1]), m.tensor([1.0], dtype=m.float64)),
    lambda m: m.zeros(3, 4).put_(m.tensor([1], dtype=m.int32), m.tensor([1.0])),
    lambda m: m.take_along_dim(m.zeros(3, 4), m.zeros(2, 1)),
    lambda m: m.take_along_dim(m.zeros(3, 4), m.zeros(2, 1, dtype=m.int32), dim=1),
    lambda m: m.take_along_dim(m.zeros(3, 4), m.zeros(2, dtype=m.long), dim=1),
    lambda m: m.take_along_dim(m.zeros(3, 4), m.tensor([[1], [2]]), dim=1),
    lambda m: m.where(m.zeros(3), m.zeros(3), m.zeros(3)),
    lambda m: m.where(m.zeros(3, dtype=m.bool), m.zeros(3), m.zeros(2)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    same_error(ERRORS[case])


SECOND_ORDER = {
    "gather": lambda m, x, s: (x ** 2).gather(0, m.tensor([[0, 2, 1, 0], [2, 2, 0, 1]])),
    "getitem": lambda m, x, s: (x ** 2)[[0, 0, 2], 1:],
    "scatter": lambda m, x, s: (x ** 2).scatter(0, m.tensor([[0, 1, 2, 0]]), s[:1] ** 2),
    "scatter_reduce_prod": lambda m, x, s: (x ** 2).scatter_reduce(0, m.tensor([[0, 2, 1, 0], [2, 2, 0, 1]]), s ** 2,
                                                                   "prod"),
    "scatter_reduce_amax": lambda m, x, s: (x ** 2).scatter_reduce(0, m.tensor([[0, 2, 1, 0], [2, 2, 0, 1]]),
                                                                   s ** 2, "amax", include_self=False),
    "index_copy": lambda m, x, s: (x ** 2).index_copy(0, m.tensor([2, 0]), s ** 2),
    "masked_scatter": lambda m, x, s: (x ** 2).masked_scatter(x > 0.5, s ** 2),
    "where": lambda m, x, s: m.where(x > 0.5, x ** 2, s[0] ** 2),
    "index_put": lambda m, x, s: (x ** 2).index_put((m.tensor([0, 0]), m.tensor([1, 1])), s[0, :2] ** 2,
                                                    accumulate=True),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.random((3, 4)), requires_grad=True)
    s = ember.tensor(rng.random((2, 4)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x, s: SECOND_ORDER[name](ember, x, s), (x, s))


def test_out_arguments():
    def run(m):
        x, i = m.arange(12.0).reshape(3, 4), m.tensor([[2, 0, 1, 1]])
        outs = [m.empty(1, 4), m.empty(2, 4), m.empty(3, 4), m.empty(0), m.empty(3, 4), m.empty(1, 4),
                m.empty(0, dtype=m.int64)]
        m.gather(x, 0, i, out=outs[0])
        m.index_select(x, 0, m.tensor([2, 2]), out=outs[1])
        m.where(x > 4, x, -x, out=outs[2])
        m.masked_select(x, x > 4, out=outs[3])
        m.index_add(x, 1, m.tensor([0]), m.ones(3, 1), out=outs[4])
        m.take_along_dim(x, i, 0, out=outs[5])
        m.nonzero(x > 9, out=outs[6])
        return outs
    e, t = run_both(run)
    for a, b in zip(e, t):
        assert_same(a, b)
