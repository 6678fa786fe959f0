"""Chunked elementwise ufuncs against the plain NumPy call: bitwise equal results, dtypes and layouts, broadcasting;
and ember's ops on tensors large enough to be threaded, against torch."""
import numpy as np
import pytest
import scipy.special as sp
import torch

import ember
from ember._kernels import elementwise
from tests.ops.opinfo import assert_close


def _values(rng, shape, dtype):
    x = np.asarray(rng.standard_normal(shape) * 3, dtype)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30 if dtype == np.float64 else 6e4], dtype)
    flat = x.reshape(-1)
    flat[:6] = special[:flat.size]
    return x


def _same(a, b):
    """Equal dtype, shape and bits (NaN payloads included)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


UNARY = [np.exp, np.log, np.tanh, np.sin, np.sqrt, np.expm1, np.reciprocal, np.negative, np.rint, np.arctan,
         sp.expit, sp.erf, sp.erfinv, sp.gammaln]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_bitwise(fn, dtype, small, rng):
    x = _values(rng, (5, 37), dtype)
    with np.errstate(all="ignore"):
        _same(elementwise.unary(fn, x), fn(x))
    assert small and small[0] > 3  # several chunks per thread


@pytest.mark.parametrize("shapes", [((6, 40), (6, 40)), ((6, 40), (40,)), ((6, 40), (6, 1)), ((2, 9, 8), (9, 1)),
                                    ((6, 40), ()), ((40,), (6, 40))])
@pytest.mark.parametrize("fn", [np.add, np.multiply, np.true_divide, np.power, np.arctan2, np.maximum],
                         ids=lambda f: f.__name__)
def test_binary_bitwise(fn, shapes, small, rng):
    a, b = (_values(rng, s, np.float32) for s in shapes)
    with np.errstate(all="ignore"):
        _same(elementwise.binary(fn, a, b), fn(a, b))
    assert small


@pytest.mark.parametrize("a,b", [(np.arange(90, dtype=np.int32), 2.5), (np.arange(90, dtype=np.int8), 3),
                                 (np.arange(90, dtype=np.float16), 1.5), (np.ones(90, bool), True),
                                 (2.0, np.arange(90, dtype=np.float32)), (np.arange(90), np.float32(2))])
def test_binary_dtypes_with_scalars(a, b, small):
    _same(elementwise.binary(np.add, a, b), np.add(a, b))
    with np.errstate(divide="ignore"):
        _same(elementwise.binary(np.true_divide, a, b), np.true_divide(a, b))


def test_plain_call_keeps_layout(small):
    x = np.asfortranarray(np.arange(60, dtype=np.float32).reshape(6, 10))
    y = elementwise.unary(np.exp, x)
    assert y.flags.f_contiguous and np.array_equal(y, np.exp(x))
    assert not small  # non C-contiguous: the plain call


def test_errors_are_numpy_s(small):
    with pytest.raises(ValueError):
        elementwise.binary(np.add, np.ones((6, 40)), np.ones((6, 39)))
    with pytest.raises(OverflowError):
        elementwise.binary(np.add, np.ones(90, np.int8), 1000)


def test_small_arrays_are_not_threaded(threads, monkeypatch):
    monkeypatch.setattr(elementwise, "parallel_map", lambda *a: pytest.fail("threaded a small array"))
    x = np.ones(100, np.float32)
    _same(elementwise.unary(np.exp, x), np.exp(x))
    _same(elementwise.binary(np.add, x, x), x + x)


@pytest.mark.parametrize("op", ["exp", "log", "sigmoid", "tanh", "erf", "sqrt", "neg", "frac", "rsqrt"])
def test_large_unary_ops_match_torch(op, threads, rng):
    x = np.abs(rng.standard_normal(1 << 18).astype(np.float32)) + 0.01
    assert_close(getattr(ember, op)(ember.from_numpy(x)), getattr(torch, op)(torch.from_numpy(x)), 1e-5, 1e-6)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "atan2", "remainder"])
def test_large_binary_ops_match_torch(op, threads, rng):
    a = np.abs(rng.standard_normal((512, 512)).astype(np.float32)) + 0.5
    b = np.abs(rng.standard_normal(512).astype(np.float32)) + 0.5
    for x, y in ((a, b), (a, a[::-1].copy())):
        assert_close(getattr(ember, op)(ember.from_numpy(x), ember.from_numpy(y)),
                     getattr(torch, op)(torch.from_numpy(x), torch.from_numpy(y)), 1e-5, 1e-6)
    if op not in ("maximum", "atan2"):  # torch's take a tensor only
        assert_close(getattr(ember, op)(ember.from_numpy(a), 1.5), getattr(torch, op)(torch.from_numpy(a), 1.5),
                     1e-5, 1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_formula(dtype, threads, rng):
    x = _values(rng, (3, 70001), dtype)
    want = np.reciprocal(1 + np.exp(-x))  # the reference: torch's formula, unfused
    with np.errstate(over="ignore"):
        got = elementwise.sigmoid(np, x, sp.expit)
    _same(got, want.astype(dtype))
    np.testing.assert_allclose(got, sp.expit(x), rtol=4 * np.finfo(dtype).eps, atol=0)
    small = x[:2, :10]
    _same(elementwise.sigmoid(np, small, sp.expit), sp.expit(small))


def test_blockwise_two_outputs(threads, rng):
    a, b = rng.standard_normal((300, 1000)), rng.standard_normal((300, 1000)).astype(np.float32)

    def formula(a, b, out):
        np.add(a, b, out=out[0])
        np.multiply(out[0], b, out=out[1])
    s, p = elementwise.blockwise(np, formula, a, b, nout=2)
    assert s.dtype == p.dtype == np.float64
    _same(s, a + b)
    _same(p, (a + b) * b)
