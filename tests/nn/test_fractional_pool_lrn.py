"""FractionalMaxPool2d/3d (with the same ``_random_samples``) and the legacy CrossMapLRN2d against torch."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

from .torch_ref import Const, check_fn, check_module, same_error

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape)


def _samples(batch, channels, n):
    return RNG.random((batch, channels, n))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,shape,kw", [
    (2, (2, 3, 9, 8), dict(kernel_size=2, output_size=(4, 5))),
    (2, (2, 3, 9, 8), dict(kernel_size=(3, 2), output_size=(5, 6))),
    (2, (3, 11, 10), dict(kernel_size=3, output_ratio=(0.5, 0.6))),
    (2, (2, 2, 25, 17), dict(kernel_size=2, output_size=13)),
    (2, (1, 2, 6, 5), dict(kernel_size=2, output_size=(1, 1))),
    (3, (2, 3, 6, 9, 8), dict(kernel_size=2, output_size=(3, 4, 5))),
    (3, (3, 7, 9, 8), dict(kernel_size=(2, 3, 2), output_ratio=0.5)),
])
def test_fractional_max_pool_matches_torch(n, shape, kw, dtype):
    samples = _samples(shape[0] if len(shape) == n + 2 else 1, shape[-n - 1], n)
    x = _x(*shape)
    ye, yt = check_fn(lambda F, x, s: getattr(F, f"fractional_max_pool{n}d")(x, _random_samples=s, **kw),
                      x, Const(samples), dtype=dtype)
    ie = getattr(ember.nn.functional, f"fractional_max_pool{n}d_with_indices")(
        ember.tensor(x, dtype=getattr(ember, dtype)), _random_samples=ember.tensor(samples, dtype=ye.dtype), **kw)[1]
    it = getattr(torch.nn.functional, f"fractional_max_pool{n}d")(
        torch.tensor(x, dtype=getattr(torch, dtype)), return_indices=True,
        _random_samples=torch.tensor(samples, dtype=yt.dtype), **kw)[1]
    assert ie.dtype is ember.int64 and ie.tolist() == it.tolist()


def test_ties_and_nans_pick_torch_indices():
    x = np.zeros((1, 2, 7, 7))
    x[0, 1, 2, 3] = x[0, 1, 4, 5] = np.nan
    s = _samples(1, 2, 2)
    for F, lib in ((ember.nn.functional, ember), (torch.nn.functional, torch)):
        y, i = F.fractional_max_pool2d(lib.tensor(x), 3, output_size=3, return_indices=True,
                                       _random_samples=lib.tensor(s))
        if lib is ember:
            ye, ie = y, i
    assert ie.tolist() == i.tolist()
    np.testing.assert_array_equal(ye.numpy(), y.numpy())


def test_half_inputs():
    s = _samples(2, 3, 2)
    check_fn(lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=(4, 5), _random_samples=s), _x(2, 3, 9, 8),
             Const(s), dtype="float16")


@pytest.mark.parametrize("n", [2, 3])
def test_modules_with_samples_buffer(n):
    shape = (2, 3, 9, 8) if n == 2 else (2, 3, 6, 7, 8)
    samples = _samples(2, 3, n)
    out = (4, 5) if n == 2 else (3, 4, 5)
    name = f"FractionalMaxPool{n}d"
    tm = getattr(torch.nn, name)(2, output_size=out, _random_samples=torch.tensor(samples, dtype=torch.float32))
    em = getattr(ember.nn, name)(2, output_size=out, _random_samples=ember.zeros(2, 3, n))
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ["_random_samples"]
    check_module(tm, em, _x(*shape))  # copies the samples through load_state_dict
    ye, ie = getattr(ember.nn, name)(2, output_ratio=0.5, return_indices=True)(ember.tensor(_x(*shape)))
    assert tuple(ye.shape) == shape[:2] + tuple(s // 2 for s in shape[2:]) and tuple(ie.shape) == tuple(ye.shape)


def test_random_samples_drawn_when_not_given():
    x = ember.tensor(_x(2, 3, 10, 10))
    y, idx = ember.nn.functional.fractional_max_pool2d(x, 2, output_size=5, return_indices=True)
    assert tuple(y.shape) == (2, 3, 5, 5)
    assert ember.equal(x.flatten(2).gather(2, idx.flatten(2)), y.flatten(2))
    ember.manual_seed(3)
    a = ember.nn.functional.fractional_max_pool2d(x, 2, output_size=5)
    ember.manual_seed(3)
    assert ember.equal(a, ember.nn.functional.fractional_max_pool2d(x, 2, output_size=5))


def test_gradcheck():
    x = ember.tensor(_x(1, 2, 7, 6), requires_grad=True)
    s = ember.tensor(_samples(1, 2, 2))
    fn = lambda x: ember.nn.functional.fractional_max_pool2d(x, 3, output_size=(3, 3), _random_samples=s)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 5, output_size=6),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), (2, 4), output_size=(3, 6)),
    lambda F, t: F.fractional_max_pool3d(t.randn(2, 3, 4, 9, 8), 2, output_size=(2, 8, 3)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_size=(3, 6, 4)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), (2, 3, 3), output_size=(3, 6)),
    lambda F, t: F.fractional_max_pool2d(t.randn(1, 2, 3, 9, 8), 2, output_size=(3, 5)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 0, 9, 8), 2, output_size=(3, 5)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_size=(3, 5),
                                         _random_samples=t.rand(2, 3, 2, dtype=t.float64)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_size=(3, 5), _random_samples=t.rand(2, 3)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_size=(3, 5),
                                         _random_samples=t.rand(1, 3, 2)),
    lambda F, t: F.fractional_max_pool2d(t.randn(2, 3, 9, 8), 2, output_size=(3, 5),
                                         _random_samples=t.rand(2, 2, 2)),
    lambda F, t: F.fractional_max_pool3d(t.randn(2, 3, 4, 9, 8), 2, output_size=(2, 3, 3),
                                         _random_samples=t.rand(2, 3, 2)),
    lambda F, t: t.nn.FractionalMaxPool2d(2),
    lambda F, t: t.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda F, t: t.nn.FractionalMaxPool3d(2, output_ratio=1.5),
])
def test_errors_match_torch(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


@pytest.mark.parametrize("size,channels", [(5, 9), (4, 7), (2, 3), (3, 2), (12, 6), (1, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_map_lrn2d_matches_torch(size, channels, dtype):
    tm, em = torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5), ember.nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)
    assert repr(em) == repr(tm)
    x = 2 * _x(2, channels, 3, 4)
    if size == 1:  # torch's backward fails for size 1; compare outputs only
        y = em(ember.tensor(x, dtype=getattr(ember, dtype)))
        np.testing.assert_allclose(y.numpy(), tm(torch.tensor(x, dtype=getattr(torch, dtype))).numpy(), rtol=1e-6)
        return
    check_module(tm, em, x, dtype=dtype, steps=2)


def test_cross_map_lrn2d_defaults_and_errors():
    assert repr(ember.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    same_error(lambda: ember.nn.CrossMapLRN2d(3)(ember.randn(2, 3, 4)),
               lambda: torch.nn.CrossMapLRN2d(3)(torch.randn(2, 3, 4)))
