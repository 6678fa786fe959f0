"""Identity, Linear, Bilinear, LazyLinear and F.linear / F.bilinear against torch: outputs and gradients, init
distributions, repr, lazy materialisation, errors."""
import math

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck, gradgradcheck

from .torch_ref import check_fn, check_module, same_error

rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_matches_torch(dtype):
    for xs in ((4, 3), (2, 5, 3), (3,), (0, 3)):
        check_fn(lambda F, x, w, b: F.linear(x, w, b), rand(*xs), rand(6, 3), rand(6), dtype=dtype)
        check_fn(lambda F, x, w: F.linear(x, w), rand(*xs), rand(6, 3), dtype=dtype)
    check_fn(lambda F, x, w, b: F.linear(x, w, b), rand(2, 4, 3), rand(3), np.asarray(rand()), dtype=dtype)  # 1-D w
    check_fn(lambda F, x, w: F.linear(x, w), rand(4, 3), rand(3), dtype=dtype)
    check_fn(lambda F, x, w, b: F.linear(x, w, b), rand(4, 3), rand(6, 3), rand(4, 6), dtype=dtype)  # 2-D bias
    check_fn(lambda F, x, w, b: F.linear(x, w, b), rand(4, 0), rand(6, 0), rand(6), dtype=dtype)


def test_linear_half_and_integer():
    for dtype in ("float16", "bfloat16"):
        check_fn(lambda F, x, w, b: F.linear(x, w, b), rand(4, 3), rand(6, 3), rand(6), dtype=dtype)
    xi, wi, bi = rng.integers(-5, 5, (4, 3)), rng.integers(-5, 5, (6, 3)), rng.integers(-5, 5, 6)
    check_fn(lambda F, x, w, b: F.linear(x, w, b), xi, wi, bi, grad=False)


def test_linear_gradcheck():
    F = ember.nn.functional
    x = ember.tensor(rand(2, 3, 4), requires_grad=True)
    w = ember.tensor(rand(5, 4), requires_grad=True)
    b = ember.tensor(rand(5), requires_grad=True)
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradcheck(F.linear, (ember.tensor(rand(4), requires_grad=True), w, b))
    x2 = ember.tensor(rand(2, 3, 3), requires_grad=True)
    wb = ember.tensor(rand(4, 4, 3), requires_grad=True)
    assert gradcheck(F.bilinear, (x, x2, wb, b[:4].detach().requires_grad_()))


@pytest.mark.parametrize("call", [
    lambda F, t: F.linear(t.randn(2, 3), t.randn(4, 5)),
    lambda F, t: F.linear(t.randn(2, 5, 3), t.randn(4, 5)),
    lambda F, t: F.linear(t.randn(3), t.randn(4, 5)),
    lambda F, t: F.linear(t.tensor(3.0), t.randn(4, 3)),
    lambda F, t: F.linear(t.randn(2, 3), t.randn(4, 3), t.randn(3)),
    lambda F, t: F.linear(t.randn(2, 3).double(), t.randn(4, 3)),
    lambda F, t: F.linear(t.randn(2, 3), t.randn(4, 3), t.randn(4).double()),
    lambda F, t: F.linear(t.randn(2, 3), t.randn(3), t.randn(())),
    lambda F, t: F.bilinear(t.randn(2, 3), t.randn(2, 4), t.randn(5, 3, 3)),
    lambda F, t: F.bilinear(t.randn(2, 3), t.randn(3, 4), t.randn(5, 3, 4)),
    lambda F, t: F.bilinear(t.randn(2, 3), t.randn(2, 4, 1), t.randn(5, 3, 4)),
    lambda F, t: F.bilinear(t.randn(2, 3), t.randn(2, 4), t.randn(5, 3, 4), t.randn(4)),
])
def test_linear_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


def test_bilinear_matches_torch():
    check_fn(lambda F, a, b, w, c: F.bilinear(a, b, w, c), rand(4, 3), rand(4, 2), rand(5, 3, 2), rand(5))
    check_fn(lambda F, a, b, w: F.bilinear(a, b, w), rand(2, 4, 3), rand(2, 4, 2), rand(5, 3, 2))
    check_fn(lambda F, a, b, w, c: F.bilinear(a, b, w, c), rand(3), rand(2), rand(5, 3, 2), rand(5))


def test_linear_modules_match_torch():
    check_module(torch.nn.Linear(3, 6), ember.nn.Linear(3, 6), rand(4, 3), steps=2)
    check_module(torch.nn.Linear(3, 6, bias=False), ember.nn.Linear(3, 6, bias=False), rand(2, 5, 3))
    check_module(torch.nn.Linear(3, 6), ember.nn.Linear(3, 6), rand(4, 3), dtype="float64")
    check_module(torch.nn.Bilinear(3, 2, 4), ember.nn.Bilinear(3, 2, 4), rand(5, 3), rand(5, 2))
    check_module(torch.nn.Bilinear(3, 2, 4, bias=False), ember.nn.Bilinear(3, 2, 4, bias=False), rand(3), rand(2))
    check_module(torch.nn.Identity(), ember.nn.Identity(7, unused=1), rand(2, 3))


def test_linear_init_repr_and_state():
    ember.manual_seed(0)
    for name, args, fan_in in (("Linear", (300, 40), 300), ("Bilinear", (30, 20, 40), 30)):
        tm, em = getattr(torch.nn, name)(*args), getattr(ember.nn, name)(*args)
        assert repr(em) == repr(tm)
        assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
        bound = 1 / math.sqrt(fan_in)  # Linear's kaiming_uniform(a=sqrt(5)) gives the same bound
        w = em.weight.detach().numpy()
        assert np.abs(w).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
        assert np.abs(em.bias.detach().numpy()).max() <= bound
    assert repr(ember.nn.Linear(2, 3, bias=False)) == repr(torch.nn.Linear(2, 3, bias=False))
    m = ember.nn.Linear(2, 3, dtype=ember.float64)
    assert m.weight.dtype is ember.float64 and m.bias.dtype is ember.float64
    from ember.nn.modules.flatten import Identity
    assert Identity is ember.nn.Identity


def test_lazy_linear():
    m = ember.nn.LazyLinear(3)
    assert repr(m) == repr(torch.nn.LazyLinear(3))
    assert isinstance(m.weight, ember.nn.UninitializedParameter) and m.has_uninitialized_params()
    assert repr(m.weight) == "<UninitializedParameter>"
    y = m(ember.randn(2, 5))
    assert type(m) is ember.nn.Linear and m.in_features == 5 and y.shape == (2, 3)
    assert type(m.weight) is ember.nn.Parameter and m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert np.abs(m.weight.detach().numpy()).max() <= 1 / math.sqrt(5)
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    y.sum().backward()
    assert m.weight.grad.shape == (3, 5)
    lazy = ember.nn.LazyLinear(4, bias=False)
    assert lazy.bias is None
    tm = torch.nn.Linear(6, 4, bias=False)
    lazy.load_state_dict(tm.state_dict())
    assert lazy.weight.shape == (4, 6)
    np.testing.assert_allclose(lazy(ember.ones(1, 6)).detach().numpy(), tm(torch.ones(1, 6)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)  # a sum of torch's random weights: near 0 at times
    opt_params = list(ember.nn.Sequential(ember.nn.LazyLinear(2)).parameters())
    assert len(opt_params) == 2
