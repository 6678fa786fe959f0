"""Chunked reductions against the plain NumPy call: values (exact where no rounding is involved), dtypes and shapes
for every way of splitting, NaN and tie handling, summation accuracy; and ember's reductions on tensors large
enough to be threaded, against torch."""
import numpy as np
import pytest
import torch

import ember
from ember._kernels import reduction
from tests.ops.opinfo import assert_close

# (shape, axis): a full reduction (flat memory), a kept dim to split, only a reduced dim to split (small kept dims)
CASES = [((300,), (0,)), ((12, 50), (0, 1)), ((12, 50), (1,)), ((12, 50), (0,)), ((3, 200), (1,)), ((200, 3), (0,)),
         ((4, 6, 20), (0, 2)), ((4, 6, 20), (1,)), ((2, 3, 100), (0, 2)), ((2, 150), (0, 1))]


def _layouts(x):
    return [x, x.T.copy().T]  # C order, and the same values in F order (no flat split)


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_prod_close(shape, axis, keepdims, small, rng):
    for x in _layouts(rng.standard_normal(shape).astype(np.float32)):
        near_one = 1 + x * 1e-3  # a product that neither overflows nor underflows
        for got, want in ((reduction.sum(x, axis, keepdims), x.sum(axis, keepdims=keepdims)),
                          (reduction.prod(near_one, axis, keepdims), near_one.prod(axis, keepdims=keepdims))):
            assert got.dtype == want.dtype and got.shape == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert small


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_exact_reductions(shape, axis, keepdims, small, rng):
    ints = rng.integers(-50, 50, shape).astype(np.int32)
    for x in _layouts(ints):
        for fn, ref in ((reduction.amax, np.amax), (reduction.amin, np.amin), (reduction.all, np.all),
                        (reduction.any, np.any)):
            got, want = fn(x % 7 if fn in (reduction.all, reduction.any) else x, axis, keepdims), \
                ref(x % 7 if fn in (reduction.all, reduction.any) else x, axis, keepdims=keepdims)
            assert got.dtype == want.dtype and got.shape == np.shape(want) and np.array_equal(got, want)
        for dtype in (None, np.int64, np.int16):
            got, want = reduction.sum(x, axis, keepdims, dtype), x.sum(axis, dtype, keepdims=keepdims)
            assert got.dtype == want.dtype and np.array_equal(got, want)
    b = ints > 0
    assert np.array_equal(reduction.sum(b, axis, keepdims), b.sum(axis, keepdims=keepdims))
    assert reduction.sum(b, axis, keepdims).dtype == b.sum(axis).dtype


def test_results_are_arrays(rng):
    x = np.ones(5, np.float32)
    for y in (reduction.sum(x, (0,)), reduction.amax(x, (0,)), reduction.all(x, (0,))):
        assert isinstance(y, np.ndarray) and y.shape == ()


@pytest.mark.parametrize("fn,ref", [(reduction.amax, np.amax), (reduction.amin, np.amin)])
def test_nan_propagates_from_any_chunk(fn, ref, small):
    for pos in (0, 150, 299):
        x = np.arange(300, dtype=np.float64)
        x[pos] = np.nan
        assert np.isnan(fn(x, (0,)))
        y = x.reshape(3, 100)
        assert np.array_equal(fn(y, (1,)), ref(y, 1), equal_nan=True)


@pytest.mark.parametrize("fn,ref", [(reduction.argmax, np.argmax), (reduction.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_arg_reductions(fn, ref, axis, small, rng):
    ties = rng.integers(0, 3, (4, 90)).astype(np.float32)  # many ties: the first index must win
    with_nan = ties.copy()
    with_nan[1, 70], with_nan[2, 10], with_nan[3, 80] = np.nan, np.nan, np.nan
    ints = rng.integers(-5, 5, (90, 4))
    for x in (ties, with_nan, ties.T, ints, np.ascontiguousarray(ties[:2])):
        for keepdims in (False, True):
            got, want = fn(x, axis, keepdims), ref(x, axis, keepdims=keepdims)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert small


@pytest.mark.parametrize("shape,axis", CASES)
def test_moments(shape, axis, small, rng):
    for x in _layouts((rng.standard_normal(shape) * 10 + 1000).astype(np.float32)):
        mean, m2 = reduction.moments(x, axis)
        x64 = x.astype(np.float64)
        assert mean.dtype == m2.dtype == np.float32
        assert mean.shape == m2.shape == np.mean(x, axis, keepdims=True).shape
        np.testing.assert_allclose(mean, x64.mean(axis, keepdims=True), rtol=1e-6)
        np.testing.assert_allclose(m2, ((x64 - x64.mean(axis, keepdims=True)) ** 2).sum(axis, keepdims=True),
                                   rtol=1e-4)
    assert small


def test_summation_accuracy_not_worse(threads, rng):
    # Pairwise partials, summed: an error no larger than that of NumPy's one pairwise sum (with some slack).
    x = (rng.random(1 << 21) + 1e3).astype(np.float32)
    exact = x.astype(np.float64).sum()
    assert abs(float(reduction.sum(x, (0,))) - exact) <= 1.5 * abs(float(x.sum()) - exact) + abs(exact) * 1e-7
    y = x.reshape(64, -1)
    exact = y.astype(np.float64).sum(0)
    assert np.abs(reduction.sum(y, (0,)) - exact).max() <= 1.5 * np.abs(y.sum(0) - exact).max() + 1e-2


def test_cannot_split_falls_back(small):
    x = np.ones((2, 2, 2, 2, 2), np.float32).transpose(1, 0, 2, 3, 4)  # no dim long enough for 3 threads
    assert reduction.sum(x, (0, 1, 2, 3, 4)) == 32 and not small


@pytest.mark.parametrize("op,kwargs", [("sum", {}), ("mean", {}), ("sum", {"dim": 1}), ("mean", {"dim": 0}),
                                       ("amax", {}), ("amin", {"dim": 1}), ("var", {}), ("std", {"dim": 1}),
                                       ("var", {"dim": 0}), ("prod", {"dim": 1}), ("norm", {}),
                                       ("logsumexp", {"dim": 1}), ("all", {}), ("any", {"dim": 0})])
def test_large_reductions_match_torch(op, kwargs, threads, rng):
    x = (rng.standard_normal((1024, 512)) * 0.5 + (1.0 if op == "prod" else 3.0)).astype(np.float32)
    if op == "prod":
        x = 1 + (x - 1) * 0.002
    e, t = getattr(ember, op)(ember.from_numpy(x), **kwargs), getattr(torch, op)(torch.from_numpy(x), **kwargs)
    assert_close(e, t, 1e-5, 1e-4)
