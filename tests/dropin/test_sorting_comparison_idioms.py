"""Sorting, selection and comparison idioms (sort/argsort/topk/kthvalue, order reductions, cummax, searchsorted,
bucketize, isin, unique, comparisons across dtypes, maximum/fmax, clamp, isclose, where, nonzero) against torch:
values, indices, dtypes, gradients and error types."""
import numpy as np
import pytest
import torch

import ember

nan, inf = float("nan"), float("inf")
F = np.array([3., nan, -0.0, 0.0, 1., nan, -inf, 3., inf, 1.], np.float32)
F2 = np.array([[3., nan, 1., 1.], [0.0, -0.0, 2., 2.], [nan, nan, 5., -1]], np.float32)
I = np.array([[3, 1, 3, -2, 1], [0, 0, 5, 5, -1]], np.int64)
X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
TIES = np.array([[1., 1, 1, 2, 0, 2], [0, 0, 3, 3, 3, -1], [7, 7, 7, 7, 7, 7]], np.float32)


def _np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.numpy() if t.dtype.is_complex else t.to(t.dtype if t.dtype.is_floating_point
                                                          and t.dtype.itemsize >= 4 else torch.float64).numpy()
    return t.numpy() if t.dtype.itemsize >= 4 or not t.dtype.is_floating_point else t.double().numpy()


def _same(e, t, rtol=0):
    """Equal structure, shapes, dtypes and values (NaN in place, the sign of zeros included); Python values too."""
    if isinstance(t, (tuple, list)):
        if hasattr(t, "__match_args__"):
            assert e._fields == t.__match_args__
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, rtol)
        return
    if not isinstance(t, torch.Tensor):
        assert type(e) is type(t) and (e == t or e != e and t != t)
        return
    assert isinstance(e, ember.Tensor)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    a, b = _np(e), _np(t)
    np.testing.assert_allclose(a.astype(b.dtype), b, rtol=rtol, atol=0)
    if b.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))


def _both(fn, *arrays):
    _same(*[fn(lib, *[lib.tensor(a) for a in arrays]) for lib in (ember, torch)])


def _grads(fn, *arrays, seed=1):
    """Outputs and input gradients for a random output gradient."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        go = np.random.default_rng(seed).standard_normal(tuple(y.shape)).astype(np.float32)
        res.append((y,) + lib.autograd.grad(y, xs, lib.tensor(go)))
    _same(*res, rtol=1e-6)  # ties share the gradient: one rounding of grad / count


def _raises(fn, *arrays, exc):
    for lib in (ember, torch):
        with pytest.raises(exc):
            fn(lib, *[lib.tensor(a) for a in arrays])


# -- sort / argsort / msort --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, x: x.sort(), lambda L, x: x.sort(descending=True), lambda L, x: L.sort(x, stable=True),
    lambda L, x: L.sort(x, stable=True, descending=True), lambda L, x: x.sort(0, True),
    lambda L, x: x.double().sort(stable=True, descending=True), lambda L, x: x.half().sort(stable=True),
    lambda L, x: x.bfloat16().sort(descending=True), lambda L, x: x.argsort(stable=True),
    lambda L, x: L.argsort(x, descending=True, stable=True), lambda L, x: L.msort(x),
    lambda L, x: (x[0].sort(dim=-1), x[0].sort(0), x[0].argsort(), L.msort(x[0])),
], ids=range(12))
def test_sort_nan_signed_zero_and_ties(fn):
    """NaN is the largest in both orders; -0.0 and 0.0 are ties, kept in order by the stable sort."""
    _both(fn, F)


@pytest.mark.parametrize("fn", [
    lambda L, x: x.sort(dim=1, stable=True), lambda L, x: x.t().sort(dim=1, stable=True, descending=True),
    lambda L, x: L.sort(x, dim=0, descending=True, stable=True), lambda L, x: L.argsort(x, 0, descending=True),
    lambda L, x: x.msort(),
], ids=range(5))
def test_sort_2d(fn):
    _both(fn, F2)


def test_sort_integer_and_bool_dtypes():
    _both(lambda L, x: (x.sort(stable=True, descending=True), x.int().sort(dim=1, stable=True),
                        x.abs().to(L.uint8).sort(stable=True), x.argsort(1, True), x.to(L.int8).msort()), I)
    _both(lambda L, x: (x.sort(stable=True), x.sort(stable=True, descending=True), x.argsort(stable=True)),
          np.array([True, False, True, False]))


def test_sort_out_and_errors():
    for lib in (ember, torch):
        out = (lib.empty(0), lib.empty(0, dtype=lib.long))
        r = lib.sort(lib.tensor(F2), 1, out=out)
        assert r[0] is out[0] and r.indices is out[1]
    _both(lambda L, x: L.sort(x, 1, descending=True, out=(L.empty(0), L.empty(0, dtype=L.long))), F2)
    _raises(lambda L, x: x.sort(dim=5), F2, exc=IndexError)
    _raises(lambda L, x: x[0, 0].sort(1), F2, exc=IndexError)
    _raises(lambda L, x: x.sort(0, stable=True), F2, exc=TypeError)


# -- topk --------------------------------------------------------------------------------------------------------------
def test_topk_values_and_indices():
    """Distinct values (torch leaves the order among ties unspecified); NaN counts as the largest."""
    _both(lambda L, x: (x.topk(3), x.topk(2, 0, largest=False), L.topk(x, k=1, dim=-1, largest=True, sorted=True),
                        x.topk(0), x.topk(6), x[0, 0].topk(1), x[0, 0].topk(0), x.double().topk(2)), X)
    t = np.array([[1., nan, 3., 2.], [4., -1., 0., nan]], np.float32)
    _both(lambda L, x: (x.topk(2), x.topk(3, largest=False), x.half().topk(1)), t)
    _both(lambda L, x: L.topk(x, 2, dim=1, out=(L.empty(0), L.empty(0, dtype=L.long))), X)


def test_topk_unsorted_holds_the_same_set():
    for largest in (True, False):
        res = [lib.tensor(X).topk(3, 1, largest=largest, sorted=False) for lib in (ember, torch)]
        _same(res[0].values.sort(1).values, res[1].values.sort(1).values)
        _same(res[0].indices.sort(1).values, res[1].indices.sort(1).values)


def test_topk_errors():
    _raises(lambda L, x: x.topk(7), X, exc=RuntimeError)
    _raises(lambda L, x: x.topk(-1), X, exc=RuntimeError)
    _raises(lambda L, x: x.topk(2.0), X, exc=TypeError)
    _raises(lambda L, x: x.topk(2, dim=3), X, exc=IndexError)
    _raises(lambda L, x: x[0, 0].topk(2), X, exc=RuntimeError)
    _raises(lambda L, x: (x > 0).topk(2), X, exc=RuntimeError)


# -- kthvalue / median / nanmedian / mode ------------------------------------------------------------------------------
def test_kthvalue_median_mode():
    _both(lambda L, x: (x.kthvalue(2, 1), L.kthvalue(x, 3, 0, True), x.kthvalue(1), x[0, 0].kthvalue(1),
                        L.kthvalue(x, 2, 1, out=(L.empty(0), L.empty(0, dtype=L.long)))), X)
    k = np.array([[2., 1, 2, 1, 3, 1], [4, 4, nan, 1, 1, 0], [7, 7, 7, 7, 7, 7]], np.float32)
    _both(lambda L, x: (x.kthvalue(6, 1).values, x.median(1), x.median(), x.median(0, keepdim=True),
                        x.nanmedian(1), x.nanmedian(), L.full((2, 3), nan).nanmedian(1)), k)
    _both(lambda L, x: (x.median(1), x.kthvalue(1, 1).values, x.mode(1), x[:, :3].mode(0)), I)
    _both(lambda L, x: (x.mode(1), x.mode(0, keepdim=True), x[0, 0].mode()), TIES)
    _raises(lambda L, x: x.kthvalue(0), X, exc=RuntimeError)
    _raises(lambda L, x: x.kthvalue(7), X, exc=RuntimeError)
    _raises(lambda L, x: x.kthvalue(2, 5), X, exc=IndexError)


# -- max / min / amax / amin / argmax / argmin -------------------------------------------------------------------------
def test_max_min_nan_and_first_index_of_ties():
    n = np.array([[1., nan, 3., nan], [5., 5., 1., 5.], [nan, 2., nan, 2.]], np.float32)
    for a in (n, TIES):
        _both(lambda L, x: (x.max(1), x.min(1), x.max(0, keepdim=True), L.min(x, dim=-2), x.amax(1), x.amin(0),
                            x.argmax(1), x.argmin(0), x.argmax(), x.argmin(), x.argmax(keepdim=True),
                            L.argmin(x, keepdim=True), x.argmax(-1, True), x.half().argmax(1),
                            x.bfloat16().min(1), L.aminmax(x, dim=1)), a)
    _both(lambda L, x: (x.max(0), x.amax((0, 1)), x.argmin(1), (x > 0).max(0)), I)
    _raises(lambda L, x: (x > 0).argmax(), I, exc=RuntimeError)
    _both(lambda L, x: (x[0, 0].argmax(0), x[0, 0].argmax(0, keepdim=True), x.amax(dim=())), X)
    _raises(lambda L, x: x.max(dim=(0,)), X, exc=TypeError)
    _raises(lambda L, x: x.max(5), X, exc=IndexError)
    _raises(lambda L, x: x[0, 0].argmax(1), X, exc=IndexError)


# -- cummax / cummin ---------------------------------------------------------------------------------------------------
def test_cummax_cummin():
    """NaN propagates from where it occurs; on ties the later index (and its value: -0.0 after 0.0) is taken."""
    _both(lambda L, x: (x.cummax(0), x.cummin(0), x[0].cummax(0)), F)
    _both(lambda L, x: (L.cummax(x, dim=1), L.cummin(x, 0), x.cummax(-1)), F2)
    _both(lambda L, x: (x.cummax(1), x.cummin(1)), TIES)
    _both(lambda L, x: (x.cummax(1), x.to(L.int8).cummin(0), (x > 0).cummax(1)), I)
    _both(lambda L, x: (x.cummax(0), x.cummin(0), x.half().cummax(0)), np.array([0.0, -0.0, 0.0, -0.0], np.float32))


# -- gradients: where they go at ties ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, x: x.sort(1, descending=True)[0], lambda L, x: x.sort(dim=1, stable=True)[0],
    lambda L, x: x.msort(), lambda L, x: x.max(1)[0], lambda L, x: x.min(1)[0], lambda L, x: x.max(),
    lambda L, x: x.min(), lambda L, x: x.amax(1), lambda L, x: x.amin(0), lambda L, x: x.median(1)[0],
    lambda L, x: x.median(), lambda L, x: x.nanmedian(1)[0], lambda L, x: x.cummax(1)[0],
    lambda L, x: x.cummin(0)[0], lambda L, x: x.gather(1, x.argsort(dim=1, stable=True)),
], ids=range(15))
def test_gradients_at_ties_and_nan(fn):
    _grads(fn, TIES)
    _grads(fn, F2)


def test_mode_gradient_at_ties():
    _grads(lambda L, x: x.mode(1)[0] + x.mode(0)[0].sum(), TIES)


@pytest.mark.parametrize("fn", [
    lambda L, x: x.topk(3)[0], lambda L, x: x.topk(2, 0, largest=False)[0], lambda L, x: x.kthvalue(2, 1)[0],
    lambda L, x: x.kthvalue(3, 0, True)[0], lambda L, x: x.median(0)[0],
    lambda L, x: L.autograd.grad((x.sort(1)[0] ** 3).sum(), x, create_graph=True)[0],
    lambda L, x: L.autograd.grad((x.topk(2)[0] ** 3).sum(), x, create_graph=True)[0],
    lambda L, x: L.autograd.grad((x.cummax(1)[0] ** 3).sum(), x, create_graph=True)[0],
], ids=range(8))
def test_gradients_distinct(fn):
    _grads(fn, X)


# -- searchsorted / bucketize ------------------------------------------------------------------------------------------
BD = np.array([1., 3., 5., 7., 9.], np.float32)
V = np.array([[3., 6., 9.], [1., 0., 10.]], np.float32)


@pytest.mark.parametrize("fn", [
    lambda L, b, v: L.searchsorted(b, v), lambda L, b, v: L.searchsorted(b, v, right=True),
    lambda L, b, v: L.searchsorted(b, v, side="right"), lambda L, b, v: L.searchsorted(b, v, side="left"),
    lambda L, b, v: L.searchsorted(b, v, out_int32=True), lambda L, b, v: L.searchsorted(b, 4.0),
    lambda L, b, v: L.searchsorted(b, 5, right=True), lambda L, b, v: L.searchsorted(b, v[0, 0]),
    lambda L, b, v: L.searchsorted(b[[3, 0, 4, 1, 2]], v, sorter=L.tensor([1, 3, 4, 0, 2]), side="right"),
    lambda L, b, v: L.searchsorted(L.stack([b, b * 2]), v), lambda L, b, v: L.searchsorted(b, v.long()),
    lambda L, b, v: L.searchsorted(b.int(), v.int(), right=True),
    lambda L, b, v: L.searchsorted(b, v, out=L.empty(0, dtype=L.long)),
    lambda L, b, v: L.searchsorted(b, L.tensor([nan, 3.])), lambda L, b, v: L.searchsorted(b[:0], v),
    lambda L, b, v: L.bucketize(v, b), lambda L, b, v: L.bucketize(v, b, right=True, out_int32=True),
    lambda L, b, v: L.bucketize(3, b), lambda L, b, v: L.bucketize(3.5, b, right=True),
    lambda L, b, v: L.bucketize(v, b, out=L.empty(0, dtype=L.long)),
], ids=range(20))
def test_searchsorted_bucketize(fn):
    _both(fn, BD, V)


@pytest.mark.parametrize("fn", [
    lambda L, b, v: L.searchsorted(b, v, right=True, side="left"),
    lambda L, b, v: L.searchsorted(b, v, side="middle"),
    lambda L, b, v: L.searchsorted(L.stack([b, b, b]), v),
    lambda L, b, v: L.searchsorted(L.stack([b, b]), 3.0),
    lambda L, b, v: L.searchsorted(b[0], v),
    lambda L, b, v: L.searchsorted(b, v, out_int32=True, out=L.empty(0, dtype=L.long)),
    lambda L, b, v: L.searchsorted(b, v, out=L.empty(0)),
    lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0., 1, 2, 3, 4])),
    lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0, 1, 2, 3, 5])),
    lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([-1, 1, 2, 3, 4])),
    lambda L, b, v: L.searchsorted(b, v, sorter=L.tensor([0, 1])),
    lambda L, b, v: L.bucketize(v, L.stack([b, b])),
], ids=range(12))
def test_searchsorted_errors(fn):
    _raises(fn, BD, V, exc=RuntimeError)


# -- isin / unique -----------------------------------------------------------------------------------------------------
def test_isin():
    _both(lambda L, b, v: (L.isin(v, b), L.isin(v, b, invert=True), L.isin(v, b, assume_unique=True),
                           L.isin(3.0, b), L.isin(v, 3.0), L.isin(v.long(), 3), L.isin(v.long(), b),
                           L.isin(elements=v, test_elements=b), L.isin(L.tensor([nan, 1.]), L.tensor([nan, 1.])),
                           L.isin(v, b, out=L.empty(0, dtype=L.bool)), L.isin(v, b[:0]), L.isin(v[:0], b)), BD, V)
    for fn in [lambda L: L.isin(L.tensor([True]), L.tensor([True])), lambda L: L.isin(L.tensor([1]), True),
               lambda L: L.isin(L.tensor([True]), L.tensor([1]))]:
        for lib in (ember, torch):
            with pytest.raises(RuntimeError):
                fn(lib)


def test_unique_with_nan():
    u = np.array([[1., nan, 2., nan], [2., 1., nan, 3.]], np.float32)
    _both(lambda L, x: (L.unique(x), L.unique(x, return_inverse=True, return_counts=True),
                        L.unique(x, dim=0), x.bfloat16().unique(return_counts=True),
                        L.unique_consecutive(x.flatten(), return_inverse=True, return_counts=True)), u)
    _both(lambda L, x: (L.unique(x, dim=0, return_inverse=True, return_counts=True), L.unique(x, dim=1),
                        L.unique(x, dim=-1, return_inverse=True), L.unique(x[:0], dim=0, return_counts=True),
                        x.long().unique(sorted=True, return_counts=True), x[0, 0].unique(return_inverse=True),
                        L.unique(L.tensor([0.0, -0.0, 1.0]), return_counts=True)),
          np.array([[1., 2, 1], [0, 1, 0], [1, 2, 1]], np.float32))


# -- comparisons, maximum/minimum, clamp -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_across_dtypes(op):
    a = np.array([[1., nan, -0.0, 3.], [2., 2., nan, -inf]], np.float32)
    _both(lambda L, x, i: (getattr(L, op)(x, i), getattr(L, op)(i, x), getattr(L, op)(i, 2.5),
                           getattr(L, op)(i.to(L.uint8), 300), getattr(L, op)(i.to(L.uint8), -1),
                           getattr(L, op)(i > 0, i), getattr(L, op)(x.half(), x.double()),
                           getattr(L, op)(i, L.tensor(1.5)), getattr(L, op)(x, 1.0, out=L.empty(0)),
                           getattr(x.clone(), op + "_")(i), getattr(i.clone(), op + "_")(x),
                           getattr(L, op)(L.tensor([2 ** 53 + 1]), 2 ** 53),
                           getattr(L, op)(L.tensor([16777217], dtype=L.int32), 16777216.0),
                           getattr(L, op)(L.tensor([0.1]), L.tensor(0.1, dtype=L.float64)),
                           getattr(L, op)(L.tensor([0.1]), L.tensor([0.1], dtype=L.float64))),
          a, np.array([[1, 0, 0, 3], [2, 5, -1, 7]]))
    _raises(lambda L, x: getattr(L, op)(x, x[:1, :3]), a, exc=RuntimeError)


@pytest.mark.parametrize("op", ["maximum", "minimum", "fmax", "fmin"])
def test_maximum_family(op):
    a = np.array([[1., nan, 2., 3.], [2., 2., nan, -inf]], np.float32)
    b = np.array([[nan, 1., 0.5, 4.], [2., nan, nan, 1.]], np.float32)
    _both(lambda L, x, y: (getattr(L, op)(x, y), getattr(L, op)(y.long(), x), getattr(L, op)(x, L.tensor(2.)),
                           getattr(L, op)(x > 0, y > 0), getattr(L, op)(x, y, out=L.empty(0)),
                           getattr(L, op)(L.tensor([-1], dtype=L.int8), L.tensor([200], dtype=L.uint8))), a, b)
    _grads(lambda L, x, y: getattr(L, op)(x, y), np.array([1., 2., 3., nan, 1., nan], np.float32),
           np.array([1., 3., 2., 1., nan, nan], np.float32))
    _raises(lambda L, x: getattr(L, op)(x, x.to(L.complex64)), a, exc=RuntimeError)


def test_clamp_tensor_bounds_and_dtypes():
    lo, hi = np.array([0., 2., 1., 5.], np.float32), np.array([[1.], [0.5]], np.float32)
    a = np.array([[0., 1, 2, 3], [4, 0.5, 1, 6]], np.float32)
    _both(lambda L, x, l, h: (L.clamp(x, l, h), x.clamp(min=l), x.clamp(max=h), x.clamp(2., 1.),
                              x.clamp(nan, 1.), x.clone().clamp_(l, h), L.clip(x, min=l, max=h),
                              x.half().clamp(l, h), x.clamp(l.double(), h), L.clamp(x, 0., 1., out=L.empty(0))),
          a, lo, hi)
    _grads(lambda L, x, l, h: L.clamp(x, l, h), a, lo, hi)
    _grads(lambda L, x: x.clamp(2., 1.) + x.clamp(1., 2.), a)


def test_clamp_integer_inputs_and_number_bounds():
    """Float bounds on an integer tensor give a float result; a 0-d tensor beside a number acts as a number; a
    number bound must fit the computation's dtype."""
    _both(lambda L, x: (x.clamp(0.5, 2.5), x.clamp(min=0.5), x.clamp(1, 2), x.clamp(L.tensor(0.5), L.tensor([2.5])),
                        x.to(L.uint8).clamp(-1, 2), x.to(L.uint8).clamp(min=-1), x.clamp(L.tensor(2), 3.5),
                        x.clamp(1.5, L.tensor(3)), x.clone().clamp_(L.tensor(2), 3), x.to(L.uint8).clamp(300., None),
                        x.float().clamp(L.tensor(0.), 1), x.float().clip(1, L.tensor(0.)), x.half().clamp(max=inf),
                        x.clamp(min=nan), x.double().clamp(max=1e39)),
          np.array([1, 0, 3, 7]))
    for fn, exc in [(lambda L, x: x.to(L.uint8).clamp(max=256), RuntimeError),
                    (lambda L, x: x.to(L.int8).clamp(max=200), RuntimeError),
                    (lambda L, x: x.half().clamp(-1e5, 1), RuntimeError),
                    (lambda L, x: x.bfloat16().clamp(max=1e39), RuntimeError),
                    (lambda L, x: x.float().clamp(max=1e39), RuntimeError),
                    (lambda L, x: L.clamp_min(x.half(), 7e4), RuntimeError),
                    (lambda L, x: x.half().clamp_(max=1e5), RuntimeError),
                    (lambda L, x: x.clamp(2 ** 70), OverflowError),
                    (lambda L, x: x.float().clamp(L.tensor([0., 0, 0, 0]), 1.), TypeError),
                    (lambda L, x: x.float().clamp(L.tensor(0., requires_grad=True), 1.), TypeError),
                    (lambda L, x: x.clamp(), RuntimeError)]:
        _raises(fn, np.array([1, 0, 3, 7]), exc=exc)


# -- isclose / allclose / equal ----------------------------------------------------------------------------------------
def test_isclose_allclose_equal():
    a = np.array([1., 1.0001, nan, inf, -inf, 0., 1e-9], np.float32)
    b = np.array([1., 1., nan, inf, inf, 1e-9, 0.], np.float32)
    _both(lambda L, x, y: (L.isclose(x, y), L.isclose(x, y, equal_nan=True), L.isclose(x, y, rtol=1e-3, atol=0.),
                           L.isclose(x, y, rtol=0., atol=0.), L.isclose(x > 0, y > 0),
                           L.isclose(x[:, None], y), x.isclose(y, 1e-2, 1e-3, True), L.allclose(x, y),
                           L.allclose(x[:4], y[:4], equal_nan=True), L.allclose(x[3:4], y[3:4]),
                           L.allclose(x[:1], y[:2]), L.equal(x, y), L.equal(x, x),
                           x.equal(x.clone())), a, b)
    _both(lambda L: (L.isclose(L.tensor([1, 2, 3]), L.tensor([1, 3, 4]), atol=1),
                     L.isclose(L.tensor([100, 2]), L.tensor([101, 3]), rtol=0.01, atol=0),
                     L.isclose(L.tensor([10], dtype=L.uint8), L.tensor([12], dtype=L.uint8), rtol=0, atol=1),
                     L.isclose(L.tensor([2 ** 62]), L.tensor([2 ** 62 + 1]), rtol=0, atol=0),
                     L.equal(L.tensor([1, 2]), L.tensor([1., 2.])), L.equal(L.tensor([0.]), L.tensor([-0.])),
                     L.equal(L.tensor([1., 2.]), L.tensor([[1., 2.]])), L.equal(L.tensor([1., 1.]), L.tensor([1.])),
                     L.equal(L.tensor([True]), L.tensor([1])), L.equal(L.tensor([]), L.tensor([]))))
    for fn in [lambda L, x, y: L.isclose(x, y, rtol=-1.), lambda L, x, y: L.isclose(x, y, atol=-1.),
               lambda L, x, y: L.isclose(x, y[:2]), lambda L, x, y: L.isclose(x, y.double()),
               lambda L, x, y: L.allclose(x, y.double()),
               lambda L, x, y: L.isclose(x.long(), y)]:
        _raises(fn, a, b, exc=RuntimeError)


# -- logical ops, count_nonzero, where, nonzero, argwhere --------------------------------------------------------------
A = np.array([[1., nan, -0.0, 3.], [0., 2., nan, -inf]], np.float32)
AI = np.array([[1, 0, 0, 3], [2, 5, -1, 0]])


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_on_non_bool(op):
    _both(lambda L, x, i: (getattr(L, op)(x, i), getattr(x, op)(i), getattr(L, op)(x, i, out=L.empty(0)),
                           getattr(L, op)(x, i, out=L.empty(0, dtype=L.int32)), getattr(x.clone(), op + "_")(i),
                           getattr(i.clone(), op + "_")(x), getattr(L, op)(x.to(L.complex64), i)), A, AI)


def test_logical_not_count_nonzero():
    _both(lambda L, x, i: (L.logical_not(x), i.logical_not(), L.logical_not(x, out=L.empty(0, dtype=L.int16)),
                           x.clone().logical_not_(), L.count_nonzero(x), x.count_nonzero(1),
                           L.count_nonzero(i, dim=(0, 1)), L.count_nonzero(i, [0, 1]), i.count_nonzero(dim=-1),
                           L.count_nonzero(i[0, 0]), (i > 0).count_nonzero(0)), A, AI)
    _raises(lambda L, i: L.count_nonzero(i, (1, -1)), AI, exc=RuntimeError)
    _raises(lambda L, i: L.count_nonzero(i, 2), AI, exc=IndexError)


def test_where_scalars_and_promotion():
    _both(lambda L, x, i: (L.where(x > 0, x, 0.), L.where(x > 0, 1., 0.), L.where(x > 0, 1, 0),
                           L.where(x > 0, 1, 0.5), L.where(x > 0, True, False), L.where(i > 0, i, 0.5),
                           L.where(i > 0, i, x), L.where(i > 0, x.half(), 1e5),
                           L.where(i > 0, x.half(), L.tensor(2., dtype=L.float64)), L.where(i > 0, i.int(), 7),
                           L.where(i > 0, i > 1, 2),
                           L.where(i), x.where(x > 0, 0.), x.where(x > 0, i)), A, AI)
    _grads(lambda L, x: L.where(x > 0, x, x * 2) + L.where(x > 0, 2., x), np.array([1., -2, 3], np.float32))
    _raises(lambda L, x: L.where(x > 0, x, x[:1, :3]), A, exc=RuntimeError)
    _raises(lambda L, i: L.where(i > 0, i.to(L.uint8), 1000), AI, exc=RuntimeError)
    _raises(lambda L, i: L.where(i, i, 0), AI, exc=RuntimeError)


def test_nonzero_argwhere():
    _both(lambda L, x, i: (L.nonzero(x), i.nonzero(), L.nonzero(i, as_tuple=True), x.nonzero(as_tuple=True),
                           i[0, 0].nonzero(), i[0, 1].nonzero(), i[0, 0].nonzero(as_tuple=True),
                           i[0, 1].nonzero(as_tuple=True), i[:0].nonzero(), i[:0].nonzero(as_tuple=True),
                           L.nonzero(i, out=L.empty(0, dtype=L.long)), L.argwhere(x), i.argwhere(),
                           L.argwhere(i[0, 0]), L.argwhere(i[:0]), L.argwhere(i > 1)), A, AI)
