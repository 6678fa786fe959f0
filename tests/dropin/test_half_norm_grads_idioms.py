"""Half-precision (float16/bfloat16) gradients of normalization layers against torch: the input's gradient bit for
bit (computed from the statistics rounded to the half dtype, as torch keeps them). The weight's and bias's gradients
are sums over rows, which torch accumulates row by row in the half dtype (in an order set by its thread count) and
ember in float32: they agree within the half dtype's rounding of such sums."""
import numpy as np
import pytest
import torch

import ember


def _layer_norm_grads(lib, dtype, shape, k, seed, affine=True, wdtype=None):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    g = rng.standard_normal(shape).astype(np.float32)
    tail = shape[len(shape) - k:]
    w, b = rng.standard_normal(tail).astype(np.float32), rng.standard_normal(tail).astype(np.float32)
    dt = getattr(lib, dtype)
    wdt = dt if wdtype is None else getattr(lib, wdtype)
    xt = lib.tensor(x).to(dt).requires_grad_()
    wt = lib.tensor(w).to(wdt).requires_grad_() if affine else None
    bt = lib.tensor(b).to(wdt).requires_grad_() if affine else None
    y = lib.nn.functional.layer_norm(xt, tail, wt, bt)
    y.backward(lib.tensor(g).to(dt))
    out = [y, xt.grad] + ([wt.grad, bt.grad] if affine else [])
    return [(str(t.dtype).split(".")[-1], t.detach().float().numpy()) for t in out]


def _check(e, t, half):
    """Output and input gradient exact; weight and bias gradients (float32 sums in ember) within their dtype's
    rounding of torch's half-precision accumulation."""
    assert [d for d, _ in e] == [d for d, _ in t]
    for (_, ea), (_, ta) in zip(e[:2], t[:2]):
        np.testing.assert_array_equal(ea, ta)
    tol = {"float16": 4e-3, "bfloat16": 3e-2}[half]
    for (_, ea), (_, ta) in zip(e[2:], t[2:]):
        np.testing.assert_allclose(ea, ta, rtol=tol, atol=tol * np.abs(ta).max())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,k,seed", [((8, 16), 1, 0), ((8, 16), 1, 1), ((4, 5, 64), 1, 0), ((4, 5, 64), 1, 1),
                                          ((20, 64), 1, 2), ((3, 40), 1, 0)])
def test_layer_norm_half_grads_exact(dtype, shape, k, seed):
    """Transformer LayerNorm in half: the input, weight and bias gradients equal torch's exactly."""
    e, t = (_layer_norm_grads(lib, dtype, shape, k, seed) for lib in (ember, torch))
    _check(e, t, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 1])
def test_layer_norm_half_no_affine_exact(dtype, seed):
    """``elementwise_affine=False`` over two trailing dims."""
    e, t = (_layer_norm_grads(lib, dtype, (3, 4, 8), 2, seed, affine=False) for lib in (ember, torch))
    for (_, ea), (_, ta) in zip(e, t):
        np.testing.assert_array_equal(ea, ta)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layer_norm_half_input_float32_params(dtype):
    """Half activations with float32 LayerNorm parameters: float32 weight/bias gradients, equal to torch's."""
    e, t = (_layer_norm_grads(lib, dtype, (8, 16), 1, 0, wdtype="float32") for lib in (ember, torch))
    _check(e, t, dtype)  # torch accumulates them in the input's dtype even so


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
def test_layer_norm_full_precision_unchanged(dtype, tol):
    """float32/float64 keep their (unrounded) statistics."""
    e, t = (_layer_norm_grads(lib, dtype, (4, 5, 64), 1, 0) for lib in (ember, torch))
    for (edt, ea), (tdt, ta) in zip(e, t):
        assert str(edt) == str(tdt)
        np.testing.assert_allclose(ea, ta, rtol=tol, atol=tol)


def test_layer_norm_half_module_training_step():
    """``nn.LayerNorm(...).half()`` inside a small residual block: parameter gradients match torch exactly."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 32)).astype(np.float32)
    w = rng.standard_normal(32).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        ln = lib.nn.LayerNorm(32).half()
        with lib.no_grad():
            ln.weight.copy_(lib.tensor(w))
        xt = lib.tensor(x).half().requires_grad_()
        (ln(xt) * xt).sum().backward()
        grads.append([t.float().numpy() for t in (xt.grad, ln.weight.grad, ln.bias.grad)])
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1:], grads[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)
