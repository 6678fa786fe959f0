"""Max, average, Lp, adaptive pooling and max unpooling against torch: values, indices, gradients of the inputs,
float64 gradchecks, tie and NaN handling, integer inputs, errors and the modules' repr."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck, gradgradcheck

from .torch_ref import check_fn, check_module, same_error

rng = np.random.default_rng(0)
SHAPES = {1: (2, 3, 9), 2: (2, 3, 7, 8), 3: (2, 2, 5, 6, 7)}


def rand(*shape):
    return rng.standard_normal(shape)


def windows(n):
    return [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), dict(kernel_size=3, stride=2, ceil_mode=True),
            dict(kernel_size=tuple(range(2, 2 + n)), stride=tuple(range(1, 1 + n)))]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_pool_matches_torch(n):
    x = rand(*SHAPES[n])
    for kw in windows(n) + [dict(kernel_size=2, stride=1, dilation=2), dict(kernel_size=3, padding=1, dilation=2)]:
        check_fn(lambda F, x: getattr(F, f"max_pool{n}d")(x, **kw), x)
        check_fn(lambda F, x: getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw)[1], x, grad=False)
    check_fn(lambda F, x: getattr(F, f"max_pool{n}d")(x, 2), x[0])  # unbatched
    check_fn(lambda F, x: getattr(F, f"max_pool{n}d_with_indices")(x, 2)[1], x, grad=False)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_avg_pool_matches_torch(n):
    x = rand(*SHAPES[n])
    for kw in windows(n):
        for cip in (True, False):
            check_fn(lambda F, x: getattr(F, f"avg_pool{n}d")(x, count_include_pad=cip, **kw), x)
        if n > 1:
            check_fn(lambda F, x: getattr(F, f"avg_pool{n}d")(x, divisor_override=3, **kw), x)
    check_fn(lambda F, x: getattr(F, f"avg_pool{n}d")(x, 2), x[0])  # unbatched


@pytest.mark.parametrize("n", [1, 2, 3])
def test_adaptive_pool_matches_torch(n):
    x = rand(*SHAPES[n])
    for size in (1, 3, 4, (None,) * (n - 1) + (2,)):
        check_fn(lambda F, x: getattr(F, f"adaptive_avg_pool{n}d")(x, size), x)
        check_fn(lambda F, x: getattr(F, f"adaptive_max_pool{n}d")(x, size), x)
        check_fn(lambda F, x: getattr(F, f"adaptive_max_pool{n}d")(x, size, return_indices=True)[1], x, grad=False)
    check_fn(lambda F, x: getattr(F, f"adaptive_avg_pool{n}d")(x, 3), x[0])
    check_fn(lambda F, x: getattr(F, f"adaptive_max_pool{n}d_with_indices")(x, 3)[0], x[0])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lp_pool_and_unpool_match_torch(n):
    x = rand(*SHAPES[n])
    check_fn(lambda F, x: getattr(F, f"lp_pool{n}d")(x, 3, 2), np.abs(x) + 0.1)
    check_fn(lambda F, x: getattr(F, f"lp_pool{n}d")(x, 2.0, 3, stride=2, ceil_mode=True), x)

    def unpool(F, x, k, s, p, **kw):
        y, i = getattr(F, f"max_pool{n}d")(x, k, s, p, return_indices=True)
        return getattr(F, f"max_unpool{n}d")(y, i, k, s, p, **kw)
    check_fn(lambda F, x: unpool(F, x, 3, 2, 1, output_size=x.shape[-n:]), x)
    even = x[(Ellipsis,) + (slice(0, 4),) * n]
    check_fn(lambda F, x: unpool(F, x, 2, 2, 0), even)
    check_fn(lambda F, x: unpool(F, x, 2, 2, 0), even[0])  # unbatched


def test_pool_half_and_integer_inputs():
    x = rand(2, 3, 6, 6)
    for dtype in ("float16", "bfloat16"):
        check_fn(lambda F, x: F.max_pool2d(x, 3, 2, 1), x, dtype=dtype)
        check_fn(lambda F, x: F.avg_pool2d(x, 3, 2, 1), x, dtype=dtype)
    xi = rng.integers(-50, 50, (2, 3, 6, 6))
    check_fn(lambda F, x: F.max_pool2d(x, 2, return_indices=True)[0], xi, grad=False)
    check_fn(lambda F, x: F.avg_pool2d(x, 3, 1, 1), xi, grad=False)  # the quotient truncates toward zero
    check_fn(lambda F, x: F.avg_pool1d(x, 2), xi[0], grad=False)


def test_max_pool_ties_and_nan():
    x = np.zeros((1, 1, 4, 4))  # all windows tied (as after a ReLU): the gradient goes to the first element
    check_fn(lambda F, x: F.max_pool2d(x, 2), x)
    check_fn(lambda F, x: F.max_pool2d(x, 3, 1, 1, return_indices=True)[1], x, grad=False)
    x = rand(1, 1, 4, 4)
    x[0, 0, 1, 1] = x[0, 0, 2, 3] = np.nan
    check_fn(lambda F, x: F.max_pool2d(x, 2), x)
    check_fn(lambda F, x: F.max_pool2d(x, 2, return_indices=True)[1], x, grad=False)


def test_pool_gradcheck():
    F = ember.nn.functional
    x = ember.tensor(rand(1, 2, 5, 6), requires_grad=True)
    for fn in (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
               lambda x: F.max_pool2d(x, 2, 1, dilation=2),
               lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
               lambda x: F.adaptive_max_pool2d(x, (3, 4)),
               lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))
    assert gradcheck(lambda x: F.lp_pool2d(x.abs() + 0.5, 2, 2), (x,))
    x3 = ember.tensor(rand(1, 1, 3, 4, 4), requires_grad=True)
    assert gradcheck(lambda x: F.max_pool3d(x, 2, 1), (x3,))
    assert gradcheck(lambda x: F.avg_pool3d(x, 2, 1, 1), (x3,))


MODULES = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1)),
    ("MaxPool2d", ((2, 3),), dict(stride=1, padding=1, dilation=2, ceil_mode=True)),
    ("MaxPool3d", (2,), {}),
    ("AvgPool1d", (3, 2, 1, True, False), {}),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("AvgPool3d", (2,), dict(divisor_override=3)),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool3d", (2,), {}),
    ("AdaptiveMaxPool1d", (3,), {}),
    ("AdaptiveMaxPool2d", (3,), {}),
    ("AdaptiveMaxPool3d", ((2, 3, 4),), {}),
    ("LPPool1d", (2, 3), dict(stride=2)),
    ("LPPool2d", (1.5, 2), {}),
    ("LPPool3d", (2, 2), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES)
def test_pool_modules_match_torch(name, args, kw):
    tm, em = getattr(torch.nn, name)(*args, **kw), getattr(ember.nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    n = int(name[-2])
    x = rand(*SHAPES[n])
    check_module(tm, em, np.abs(x) + 0.1 if name.startswith("LP") else x)


def test_pool_modules_return_indices_and_unpool():
    for n in (1, 2, 3):
        pool_t = getattr(torch.nn, f"MaxPool{n}d")(2, return_indices=True)
        pool_e = getattr(ember.nn, f"MaxPool{n}d")(2, return_indices=True)
        unpool_t, unpool_e = getattr(torch.nn, f"MaxUnpool{n}d")(2), getattr(ember.nn, f"MaxUnpool{n}d")(2)
        assert repr(unpool_e) == repr(unpool_t)
        x = rand(*SHAPES[n])
        check_fn(lambda F, x: (unpool_e if F is ember.nn.functional else unpool_t)(
            *(pool_e if F is ember.nn.functional else pool_t)(x), output_size=x.shape[-n:]), x)
        amax = getattr(ember.nn, f"AdaptiveMaxPool{n}d")(3, return_indices=True)
        assert len(amax(ember.tensor(x))) == 2


@pytest.mark.parametrize("call", [
    lambda F, t: F.max_pool2d(t.randn(3, 4), 2),
    lambda F, t: F.max_pool2d(t.randn(2, 3, 4, 4, 4), 2),
    lambda F, t: F.max_pool1d(t.randn(3), 2),
    lambda F, t: F.max_pool3d(t.randn(3, 4, 4), 2),
    lambda F, t: F.avg_pool1d(t.randn(3), 2),
    lambda F, t: F.avg_pool3d(t.randn(4, 4, 4), 2),
    lambda F, t: F.max_pool2d(t.randn(1, 0, 4, 4), 2),
    lambda F, t: F.max_pool2d(t.randn(1, 1, 4, 4), 2, padding=2),
    lambda F, t: F.avg_pool2d(t.randn(1, 1, 4, 4), 2, padding=2),
    lambda F, t: F.max_pool2d(t.randn(1, 1, 4, 4), 5),
    lambda F, t: F.avg_pool2d(t.randn(1, 1, 4, 4), 5),
    lambda F, t: F.max_pool2d(t.randn(1, 1, 4, 4), 2, dilation=0),
    lambda F, t: F.avg_pool2d(t.randn(1, 1, 4, 4), 2, divisor_override=0),
    lambda F, t: F.adaptive_avg_pool2d(t.randn(4, 4), 2),
    lambda F, t: F.adaptive_avg_pool2d(t.randn(1, 1, 4, 4), (2, 2, 2)),
    lambda F, t: F.adaptive_avg_pool2d(t.randn(1, 1, 4, 4).long(), 2),
    lambda F, t: F.adaptive_max_pool2d(t.randn(1, 1, 0, 4), (2, 2)),
    lambda F, t: F.max_unpool2d(t.randn(1, 1, 2, 2), t.zeros(1, 1, 2, 2).long() + 100, 2),
    lambda F, t: F.max_unpool2d(t.randn(1, 1, 2, 2), t.zeros(1, 1, 2, 2).long(), 2, output_size=(9, 5)),
])
def test_pool_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


def test_pool_argument_errors():
    F = ember.nn.functional
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        F.max_pool2d(ember.randn(1, 1, 4, 4), 2, stride=0)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        F.max_pool1d(ember.randn(1, 1, 4), 0)
    with pytest.raises(RuntimeError, match="kernel_size must either be a single int, or a tuple of two ints"):
        F.max_pool2d(ember.randn(1, 1, 4, 4), (2, 2, 2))


def test_pool_empty_batch():
    x = rand(0, 2, 5, 4)
    for fn in (lambda F, x: F.max_pool2d(x, 2), lambda F, x: F.avg_pool2d(x, 3, 1, 1),
               lambda F, x: F.adaptive_avg_pool2d(x, 3), lambda F, x: F.adaptive_max_pool2d(x, 3)):
        check_fn(fn, x)


def test_max_pool_routes_inf_gradients_exactly():
    x = rand(1, 2, 4, 4)
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1)):
        xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ye, yt = ember.nn.functional.max_pool2d(xe, **kw), torch.nn.functional.max_pool2d(xt, **kw)
        g = np.full(tuple(yt.shape), np.inf)
        ye.backward(ember.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())
