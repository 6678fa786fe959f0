"""float16/bfloat16 gradients of elementwise ops and activations against torch, bit for bit: fused backward kernels
(tanh, sigmoid, log_sigmoid, ...) compute half inputs in float32 and round once, composite ones round each step."""
import numpy as np
import pytest
import torch

import ember

N = 2000
HALVES = ["float16", "bfloat16"]


def _u(lo, hi, seed=0, n=N):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)


def _grads(fn, arrays, dtype, seed=1):
    """``fn``'s output and the gradients of its inputs (all float32 arrays), under ember and torch."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(a).to(getattr(lib, dtype)).requires_grad_() for a in arrays]
        y = fn(lib, *xs)
        g = np.random.default_rng(seed).standard_normal(tuple(y.shape)).astype(np.float32)
        y.backward(lib.tensor(g).to(y.dtype))
        assert all(str(x.grad.dtype).endswith(dtype) for x in xs)
        res.append([y.detach().float().numpy()] + [x.grad.float().numpy() for x in xs])
    return res


def _ulps(a, b, dtype):
    """The distance in units in the last place of ``dtype`` between float32 arrays holding ``dtype`` values."""
    bits = lambda v: torch.tensor(v).to(getattr(torch, dtype)).view(torch.int16).numpy().astype(np.int64)
    ia, ib = bits(a), bits(b)
    ia = np.where(ia < 0, -32768 - ia, ia)  # sign-magnitude to a monotone integer line
    ib = np.where(ib < 0, -32768 - ib, ib)
    return np.abs(ia - ib)


F = lambda lib: lib.nn.functional

EXACT = {  # gradients equal to torch's bit for bit
    "exp": (lambda l, x: x.exp(), [(-3, 3)]),
    "log": (lambda l, x: x.log(), [(0.1, 5)]),
    "sqrt": (lambda l, x: x.sqrt(), [(0.1, 5)]),
    "reciprocal": (lambda l, x: x.reciprocal(), [(0.1, 5)]),
    "sin": (lambda l, x: x.sin(), [(-3, 3)]),
    "cos": (lambda l, x: x.cos(), [(-3, 3)]),
    "tan": (lambda l, x: x.tan(), [(-1.4, 1.4)]),
    "tanh": (lambda l, x: x.tanh(), [(-3, 3)]),
    "sigmoid": (lambda l, x: x.sigmoid(), [(-3, 3)]),
    "tanhshrink": (lambda l, x: F(l).tanhshrink(x), [(-3, 3)]),
    "logsigmoid": (lambda l, x: F(l).logsigmoid(x), [(-3, 3)]),
    "elu": (lambda l, x: F(l).elu(x), [(-3, 3)]),
    "hardswish": (lambda l, x: F(l).hardswish(x), [(-4, 4)]),
    "pow_2.5": (lambda l, x: x.pow(2.5), [(0.1, 3)]),
    "pow_2": (lambda l, x: x ** 2, [(-3, 3)]),
    "pow_3": (lambda l, x: x ** 3, [(-3, 3)]),
    "pow_-2": (lambda l, x: x.pow(-2), [(0.2, 3)]),
    "rpow": (lambda l, x: 2.5 ** x, [(-3, 3)]),
    "div": (lambda l, x, y: x / y, [(-3, 3), (0.5, 3)]),
    "atan2": (lambda l, x, y: l.atan2(x, y), [(-3, 3), (-3, 3)]),
    "hypot": (lambda l, x, y: l.hypot(x, y), [(-3, 3), (-3, 3)]),
    "lerp": (lambda l, x, y, w: l.lerp(x, y, w), [(-3, 3), (-3, 3), (0, 1)]),
    "clamp": (lambda l, x: x.clamp(-1, 1), [(-3, 3)]),
    "where": (lambda l, x, y: l.where(x > 0, x, y), [(-3, 3), (-3, 3)]),
    "softmax": (lambda l, x: x.reshape(20, 100).softmax(-1), [(-3, 3)]),
    "log_softmax": (lambda l, x: x.reshape(20, 100).log_softmax(-1), [(-3, 3)]),
}


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("name", list(EXACT))
def test_half_gradient_bitwise(name, dtype):
    fn, ranges = EXACT[name]
    arrays = [_u(lo, hi, seed=i) for i, (lo, hi) in enumerate(ranges)]
    e, t = _grads(fn, arrays, dtype)
    for a, b in zip(e, t):
        assert np.array_equal(a, b, equal_nan=True)


ONE_ULP = {  # the derivative evaluated in float32 in another order: a few elements round 1 ulp apart
    "softplus": (lambda l, x: F(l).softplus(x), [(-3, 3)]),
    "silu": (lambda l, x: F(l).silu(x), [(-3, 3)]),
    "gelu": (lambda l, x: F(l).gelu(x), [(-3, 3)]),
    "gelu_tanh": (lambda l, x: F(l).gelu(x, approximate="tanh"), [(-3, 3)]),
    "mish": (lambda l, x: F(l).mish(x), [(-3, 3)]),
    "pow_tensor": (lambda l, x, y: x.pow(y), [(0.1, 3), (0.1, 3)]),
}


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("name", list(ONE_ULP))
def test_half_gradient_within_one_ulp(name, dtype):
    fn, ranges = ONE_ULP[name]
    arrays = [_u(lo, hi, seed=i) for i, (lo, hi) in enumerate(ranges)]
    e, t = _grads(fn, arrays, dtype)
    for a, b in zip(e, t):
        d = _ulps(a, b, dtype)
        assert d.max() <= 1 and (d > 0).mean() < 0.01


@pytest.mark.parametrize("dtype", HALVES)
def test_bfloat16_integer_powers_round_each_product(dtype):
    """``x ** 3`` and ``x ** -2`` of bfloat16 round after each product; float16 computes ``pow`` once."""
    x = _u(-3, 3)
    x[:3] = [1.0078125, -2.984375, 0.0]
    for e in (3, -2, 3.0):
        r = [lib.tensor(x).to(getattr(lib, dtype)) ** e for lib in (ember, torch)]
        assert r[0].dtype == getattr(ember, dtype)
        assert np.array_equal(r[0].float().numpy(), r[1].float().numpy(), equal_nan=True)
    r = [lib.tensor(x).to(getattr(lib, dtype)).pow(lib.full((N,), 3.0, dtype=getattr(lib, dtype)))
         for lib in (ember, torch)]
    assert np.array_equal(r[0].float().numpy(), r[1].float().numpy(), equal_nan=True)


@pytest.mark.parametrize("dtype", HALVES)
def test_half_grad_in_float32_keeps_graph_and_float32_paths(dtype):
    """The float32 evaluation of a half gradient stays differentiable (create_graph), and float32 inputs are
    unaffected."""
    x0 = _u(-2, 2, n=64)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(x0).to(getattr(lib, dtype)).requires_grad_()
        (g,) = lib.autograd.grad(x.tanh().sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        xf = lib.tensor(x0, requires_grad=True)
        (gf,) = lib.autograd.grad(xf.sigmoid(), xf, lib.ones(64))
        res.append((g, gg, gf))
    for a, b in zip(*res):
        assert a.dtype == getattr(ember, str(b.dtype).split(".")[1])
    assert np.array_equal(res[0][0].detach().float().numpy(), res[1][0].detach().float().numpy())
    np.testing.assert_allclose(res[0][1].float().numpy(), res[1][1].float().numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(res[0][2].numpy(), res[1][2].numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("name", ["sigmoid", "logsigmoid", "exp", "softplus", "gelu"])
def test_half_double_backward(name, dtype):
    """Second derivatives of half inputs: dtypes as torch, values within the half dtype's rounding."""
    fns = {"sigmoid": lambda l, x: x.sigmoid(), "logsigmoid": lambda l, x: F(l).logsigmoid(x),
           "exp": lambda l, x: x.exp(), "softplus": lambda l, x: F(l).softplus(x),
           "gelu": lambda l, x: F(l).gelu(x)}
    x0, v0 = _u(-2, 2, n=64), _u(-1, 1, seed=3, n=64)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(x0).to(getattr(lib, dtype)).requires_grad_()
        (g,) = lib.autograd.grad(fns[name](lib, x), x, lib.tensor(v0).to(x.dtype), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.tensor(v0).to(x.dtype))
        assert gg.dtype == x.dtype
        res.append((g.detach().float().numpy(), gg.float().numpy()))
    tol = 1e-2 if dtype == "float16" else 4e-2
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
