"""The incomplete gamma functions, the Bessel family and the orthogonal polynomials of ember.special against
torch.special: values over ranges and edge values in float32 and float64, broadcasting, dtypes, gradients (and
their absence, as torch)."""
import math

import numpy as np
import pytest
import torch

import ember

DTYPES = ["float32", "float64"]
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
          "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
          "spherical_bessel_j0", "airy_ai"]
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
EDGE = [0.0, -0.0, 1e-9, -1e-9, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 8.0, -8.0, 30.0, -30.0, 700.0, math.inf, -math.inf,
        math.nan]
RNG = np.random.default_rng(0)


def _both(name, *arrays, dtype, module="special"):
    """``name`` applied to ``arrays`` as ember and as torch tensors of ``dtype``."""
    e = getattr(getattr(ember, module) if module else ember, name)(*[ember.tensor(a.astype(dtype)) for a in arrays])
    t = getattr(getattr(torch, module) if module else torch, name)(*[torch.tensor(a.astype(dtype)) for a in arrays])
    return e, t


def _close(e, t, dtype, rtol=None, atol=None):
    assert str(e.dtype)[6:] == str(t.dtype)[6:] and e.shape == t.shape
    rtol = rtol or (2e-4 if dtype == "float32" else 1e-9)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol or rtol * 1e-3, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BESSEL)
def test_bessel(name, dtype):
    x = np.concatenate([np.random.default_rng(0).uniform(-20, 20, 200), EDGE])
    if dtype == "float32":  # torch's float32 kernels lose digits far out, where the functions are small
        x = x[np.abs(x) < 50]
    e, t = _both(name, x, dtype=dtype)
    # torch's float64 kernels of j and y are accurate to ~1e-6, of Ai to ~3e-6 near -2.09 (scipy's to ~1e-15)
    loose = dtype == "float32" or name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai")
    atol = 5e-6 if name == "airy_ai" else 1e-6 if loose else 1e-9
    _close(e, t, dtype, rtol=None if dtype == "float32" else 1e-6 if loose else 1e-9, atol=atol)
    xr = ember.tensor(x[:4].astype(dtype), requires_grad=True)
    assert not getattr(ember.special, name)(xr).requires_grad


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_dtypes(name):
    e, t = _both(name, np.array([1, 2, 3]), dtype="int64")
    assert e.dtype is ember.float32 and t.dtype is torch.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        getattr(ember.special, name)(ember.ones(2, dtype=ember.float16))
    with pytest.raises(NotImplementedError):
        getattr(torch.special, name)(torch.ones(2, dtype=torch.float16))


X = np.array([-3.0, -1.0, -0.999, -0.7, -0.2, -1e-3, 0.0, 1e-3, 0.3, 0.5, 0.8, 0.999, 1.0, 1.001, 1.5, 3.0, math.inf,
              -math.inf, math.nan])
N = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.7, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 30.0, math.nan])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials(name, dtype):
    x = X if not name.startswith("shifted") else (X + 1) / 2  # the same points of the unshifted range
    e, t = _both(name, x[:, None], N, dtype=dtype)  # broadcast (19, 1) against (15,)
    assert e.shape == (len(X), len(N))
    _close(e, t, dtype, atol=1e-6 if dtype == "float32" else 1e-9)
    xs = ember.tensor(x[:5].astype(dtype), requires_grad=True)
    fn = getattr(ember.special, name)
    assert not fn(xs, 3).requires_grad and not fn(xs, ember.tensor(3.0, requires_grad=True)).requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        fn(xs, 3).sum().backward()


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_h", "legendre_polynomial_p"])
def test_polynomial_arguments(name):
    fe, ft = getattr(ember.special, name), getattr(torch.special, name)
    x = RNG.uniform(-1.2, 1.2, 6)
    for args in [(lambda m: m.tensor(x, dtype=m.float32), lambda m: 4),
                 (lambda m: 0.5, lambda m: m.tensor([0, 3, 8])),
                 (lambda m: m.tensor([1, 2]), lambda m: m.tensor([3, 2])),
                 (lambda m: m.tensor(x), lambda m: m.tensor([2.7], dtype=m.float32))]:
        e = fe(*(a(ember) for a in args))
        t = ft(*(a(torch) for a in args))
        _close(e, t, str(t.dtype)[6:])
    out = ember.empty(6, dtype=ember.float64)
    assert fe(ember.tensor(x), 3, out=out) is out
    np.testing.assert_allclose(out.numpy(), ft(torch.tensor(x), 3).numpy())
    with pytest.raises(RuntimeError, match="must match the size"):
        fe(ember.ones(2), ember.ones(3))
    with pytest.raises(NotImplementedError):
        fe(ember.ones(2, dtype=ember.float16), 2)


A = np.array([0.1, 0.5, 1.0, 1.5, 3.0, 10.0, 100.0, 0.0, -1.0, math.inf, math.nan])
XG = np.array([0.0, 1e-5, 0.1, 0.5, 1.0, 2.5, 10.0, 150.0, -1.0, math.inf, math.nan])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma(name, dtype):
    a, x = A[:, None], XG  # every pair
    e, t = _both(name, a, x, dtype=dtype, module=None)
    _close(e, t, dtype, rtol=1e-4 if dtype == "float32" else 1e-7, atol=1e-6 if dtype == "float32" else 1e-12)
    alias = {"igamma": "gammainc", "igammac": "gammaincc"}[name]
    aliased = getattr(ember.special, alias)(ember.tensor(a.astype(dtype)), ember.tensor(x.astype(dtype)))
    np.testing.assert_array_equal(aliased.numpy(), e.numpy())
    y = ember.tensor(a.astype(dtype))
    ref = getattr(y, name)(ember.tensor(x.astype(dtype)))
    assert getattr(y, name + "_")(ember.tensor(np.full(len(A), 2.0, dtype)[:, None])) is y
    assert ref.shape == (len(A), len(XG))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_gradients(name):
    a = RNG.uniform(0.2, 5, (3, 4))
    x = RNG.uniform(0.1, 6, 4)
    g = RNG.standard_normal((3, 4))
    grads = []
    for lib in (ember, torch):
        X = lib.tensor(x, requires_grad=True)
        y = getattr(lib, name)(lib.tensor(a), X)
        (gx,) = lib.autograd.grad(y, X, lib.tensor(g), create_graph=True)
        (gxx,) = lib.autograd.grad(gx.sum(), X)  # second order, through differentiable ops
        grads.append((gx.detach().numpy(), gxx.numpy()))
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-12)
    X = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: getattr(ember, name)(ember.tensor(a), v), (X,))
    for lib in (ember, torch):
        A_ = lib.tensor(a, requires_grad=True)
        with pytest.raises(NotImplementedError, match=f"derivative for '{name}: input' is not implemented"):
            getattr(lib, name)(A_, lib.tensor(x)).sum().backward()


def test_incomplete_gamma_dtypes_and_errors():
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError):
            lib.igamma(lib.tensor([1, 2]), lib.tensor([1, 2]))
        with pytest.raises(TypeError, match="must be Tensor"):
            lib.igamma(lib.tensor([1.0, 2.0]), 2.0)
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib.tensor([1, 2]).igamma_(lib.tensor([1.0, 2.0]))
    e = ember.igamma(ember.tensor([1.0, 2.0]), ember.tensor([0.5], dtype=ember.float64))
    assert e.dtype is ember.float64
    h = ember.igammac(ember.tensor([1.0, 2.0], dtype=ember.float16), ember.tensor([1.0, 2.0], dtype=ember.float16))
    t = torch.igammac(torch.tensor([1.0, 2.0], dtype=torch.float16), torch.tensor([1.0, 2.0], dtype=torch.float16))
    assert h.dtype is ember.float16
    np.testing.assert_allclose(h.float().numpy(), t.float().numpy(), rtol=2e-3)
