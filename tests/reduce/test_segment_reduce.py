"""segment_reduce against torch: the values of empty segments, ties, zeros and nans, their gradients, and the
errors (the op table, tests/ops/db_segment.py, covers random inputs, axes, offsets and gradcheck)."""
import doctest

import numpy as np
import pytest
import torch

import ember
from ember._ops import segment

NAN = float("nan")
REDUCES = ("sum", "mean", "max", "min", "prod")


def _both(data, reduce, grad=None, **kw):
    """(value, gradient) from torch and from ember; array keyword arguments become tensors."""
    out = []
    for lib in (torch, ember):
        x = lib.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)
        args = {k: lib.tensor(v) if isinstance(v, (list, np.ndarray)) else v for k, v in kw.items()}
        y = lib.segment_reduce(x, reduce, **args)
        g = np.ones(tuple(y.shape)) if grad is None else np.asarray(grad, dtype=np.float64)
        (gx,) = lib.autograd.grad(y, x, lib.tensor(g))
        out.append((y.detach().numpy(), gx.numpy()))
    return out


def _assert_same(data, reduce, grad=None, **kw):
    (ty, tg), (ey, eg) = _both(data, reduce, grad, **kw)
    np.testing.assert_allclose(ey, ty, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{reduce} value")
    np.testing.assert_allclose(eg, tg, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{reduce} grad")
    return ey


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("initial", [None, 2.0])
def test_empty_segments(reduce, initial):
    y = _assert_same([1., 2., 3., 4., 5., 6.], reduce, [1., -2., 3., -4.], lengths=[2, 0, 3, 1], initial=initial)
    empty = {"sum": 0.0, "mean": NAN, "max": -np.inf, "min": np.inf, "prod": 1.0}[reduce]
    np.testing.assert_equal(y[1], empty if initial is None else initial)


@pytest.mark.parametrize("reduce", ["max", "min", "amax", "amin"])
def test_ties_share_positive_gradients(reduce):
    # torch divides a positive gradient among the tied elements and gives a negative one to each in full
    _assert_same([3., 3., 1., 1., 2., 2., 2., 1.], reduce, [-1., 2.], lengths=[4, 4])


@pytest.mark.parametrize("reduce", REDUCES)
def test_nan_propagates(reduce):
    y = _assert_same([NAN, 3., 1., 2., 5., NAN], reduce, [-1., 2., 0.5], lengths=[2, 2, 2])
    assert np.isnan(y[0]) and np.isnan(y[2]) and not np.isnan(y[1])


@pytest.mark.parametrize("initial", [None, 2.0])
def test_prod_gradient_at_zeros(initial):
    # one zero: the product of the rest; several: zero (nan where a nan is among them)
    _assert_same([0., 3., 0., 2., 0., 2., 0., 4., 5., NAN, 0.], "prod", [-1., 2., 3., 4., 0.5],
                 lengths=[2, 2, 3, 2, 2], initial=initial)


def test_axis_and_offsets():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3))
    g = rng.standard_normal((2, 3, 3))
    for reduce in REDUCES:
        _assert_same(x, reduce, g, lengths=np.array([[2, 0, 4], [1, 2, 3]]), axis=1)
        _assert_same(x, reduce, g, offsets=np.array([[0, 2, 2, 6], [1, 3, 4, 5]]), axis=-2)


def test_second_derivatives():
    x = ember.tensor(np.random.default_rng(1).uniform(0.5, 2, (3, 4)), requires_grad=True)
    for reduce in ("mean", "max", "prod"):
        fn = lambda t: ember.segment_reduce(t, reduce, lengths=ember.tensor([[1, 3], [2, 2], [4, 0]]), axis=1,
                                            initial=0.25)
        assert ember.autograd.gradgradcheck(fn, (x,))


def test_half_precision():
    x = np.linspace(-2, 3, 12).astype(np.float32)
    for dt in ("float16", "bfloat16"):
        for reduce in REDUCES:
            t = torch.segment_reduce(torch.tensor(x).to(getattr(torch, dt)), reduce, lengths=torch.tensor([5, 0, 7]))
            e = ember.segment_reduce(ember.tensor(x).to(getattr(ember, dt)), reduce, lengths=ember.tensor([5, 0, 7]))
            assert e.dtype is getattr(ember, dt)
            np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2e-2, equal_nan=True)


@pytest.mark.parametrize("data,reduce,kw", [
    ([1., 2., 3.], "sum", {}),
    ([1., 2., 3.], "sum", {"indices": [0, 0, 1]}),
    ([1., 2., 3.], "median", {"lengths": [3]}),
    ([1., 2., 3.], "sum", {"lengths": [1, 1]}),
    ([1., 2., 3.], "sum", {"lengths": [4, -1]}),
    ([1., 2., 3.], "sum", {"lengths": [3.0]}),
    ([1, 2, 3], "sum", {"lengths": [3]}),
    ([[1., 2.], [3., 4.]], "sum", {"lengths": [1, 1], "axis": 1}),
    ([1., 2., 3.], "sum", {"lengths": [3], "axis": 1}),
    ([1., 2., 3.], "sum", {"offsets": [0, 2, 1]}),
])
def test_errors(data, reduce, kw):
    with pytest.raises(Exception) as expected:
        torch.segment_reduce(torch.tensor(data), reduce, **{k: torch.tensor(v) for k, v in kw.items()
                                                            if k != "axis"}, axis=kw.get("axis", 0))
    with pytest.raises(expected.type):
        ember.segment_reduce(ember.tensor(data), reduce, **{k: ember.tensor(v) for k, v in kw.items()
                                                            if k != "axis"}, axis=kw.get("axis", 0))


def test_docstring_example():
    result = doctest.testmod(segment, globs={"ember": ember}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted and not result.failed
