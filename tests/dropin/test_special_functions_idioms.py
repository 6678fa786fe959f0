"""Special and mathematical functions (``torch.special`` and the matching ``torch.*`` names) against torch: values at
ordinary, tiny, huge, negative, integer, signed-zero, infinite and NaN inputs, result dtypes, gradients and errors."""
import numpy as np
import pytest
import torch

import ember

_EDGE = [0.5, 2.0, -2.5, -3.0, 0.0, -0.0, 1e-30, 30.0, 1e4, -1e4, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.999, -0.999,
         0.1]


def _same(e, t, rtol, atol=0.0):
    """Same dtype, shape, values (NaN where torch has NaN) and signs of zeros."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    en, tn = e.detach().numpy(), t.detach().numpy()
    np.testing.assert_allclose(en, tn, rtol=rtol, atol=atol, equal_nan=True)
    if en.dtype.kind == "f":
        zeros = tn == 0
        assert (np.signbit(en[zeros]) == np.signbit(tn[zeros])).all()


def _both(f, *arrays, **kw):
    return [f(lib, *[lib.tensor(a) for a in arrays], **kw) for lib in (ember, torch)]


_UNARY = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "exp2", "expm1", "log1p",
          "entr", "sinc", "gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
          "scaled_modified_bessel_k1", "spherical_bessel_j0"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("name", _UNARY)
def test_special_unary_edge_values(name, dtype):
    """Every value in the edge set (erfinv(-0.0) is -0.0); integer and bool inputs give the default float dtype."""
    x = np.array(_EDGE, dtype=np.float64)
    x = x.astype(dtype) if dtype.startswith("float") else (np.array([-3, -1, 0, 1, 2, 5]) if dtype == "int64"
                                                            else np.array([True, False]))
    e, t = _both(lambda lib, a: getattr(lib.special, name)(a), x)
    _same(e, t, rtol=2e-6 if dtype != "float64" else 1e-10)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"])
def test_bessel_airy_ordinary_range(name):
    """The unscaled Bessel and Airy functions over their oscillating range (torch's far-tail float32 is coarser)."""
    x = np.array([0.0, -0.0, 0.1, 0.5, 1.0, 2.5, 7.3, 20.0, -1.5, -4.0, np.inf, np.nan])
    if name.endswith(("y0", "y1")):
        x = np.abs(x)
    for dt in ("float32", "float64"):
        e, t = _both(lambda lib, a: getattr(lib.special, name)(a), x.astype(dt))
        _same(e, t, rtol=1e-5 if dt == "float32" else 1e-6, atol=1e-7)
        assert not e.requires_grad


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polygamma_values_and_infinities(n, dtype):
    """polygamma(n, x) with torch's NaNs at +inf (n >= 2) and -inf (n = 1); the three spellings agree."""
    x = np.array([0.5, 2.0, -2.5, 0.0, -0.0, 1e-3, 30.0, 1e4, np.inf, -np.inf, np.nan, 1.0], dtype=dtype)
    for f in (lambda lib, a: lib.polygamma(n, a), lambda lib, a: lib.special.polygamma(n, a),
              lambda lib, a: a.polygamma(n)):
        e, t = _both(f, x)
        _same(e, t, rtol=2e-6 if dtype == "float32" else 1e-8)  # torch's trigamma is good to ~5e-10


def test_polygamma_mvlgamma_errors():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.polygamma(-1, lib.tensor([1.0]))
        with pytest.raises(RuntimeError):
            lib.special.multigammaln(lib.tensor([3.0]), 0)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_multigammaln_values_and_grad(p):
    x = np.array([3.0, 5.5, 10.0, 1.7])
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.special.multigammaln(xt, p)
        y.backward(lib.tensor([0.3, -1.2, 0.7, 2.0], dtype=lib.float64))
        res.append((y, xt.grad, xt.float().mvlgamma(p)))
    for a, b in zip(*res):
        _same(a, b, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_values(dtype):
    """Hurwitz zeta incl. q = inf (NaN), poles, negative q, Python-number operands and integer tensors."""
    x = np.array([2.0, 3.0, 1.0, 0.5, 30.0, 2.0, 2.0, 2.0, 4.5, np.nan], dtype=dtype)
    q = np.array([1.0, 0.5, 2.0, 1.0, 2.0, np.inf, -1.0, -1.5, 1e4, 1.0], dtype=dtype)
    e, t = _both(lambda lib, a, b: lib.special.zeta(a, b), x, q)
    _same(e, t, rtol=2e-6 if dtype == "float32" else 1e-10)
    e, t = _both(lambda lib, b: lib.special.zeta(2.0, b), q)
    _same(e, t, rtol=2e-6 if dtype == "float32" else 1e-10)
    e, t = _both(lambda lib, a: lib.special.zeta(a, 3), x)
    _same(e, t, rtol=2e-6 if dtype == "float32" else 1e-10)
    e, t = _both(lambda lib, a, b: lib.special.zeta(a, b), np.array([2, 3, 4]), np.array([1, 2, 3]))
    _same(e, t, rtol=1e-6)


def test_zeta_gradient_only_for_q():
    res = []
    for lib in (ember, torch):
        x, q = lib.tensor([2.0, 3.5], dtype=lib.float64), lib.tensor([1.5, 0.7], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.special.zeta(x, q), q, lib.tensor([0.4, -1.0], dtype=lib.float64))
        res.append(g)
        with pytest.raises(NotImplementedError, match="zeta"):
            lib.special.zeta(x.requires_grad_(), q.detach()).sum().backward()
    _same(*res, rtol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_incomplete_gamma(upper):
    """gammainc/gammaincc values at edges, the gradient for x and the refused gradient for a and Python numbers."""
    name = "gammaincc" if upper else "gammainc"
    a = np.array([0.5, 2.0, 1.0, 3.0, np.nan, np.inf, 5.0, 1e-3, 10.0])
    x = np.array([0.1, 2.0, 0.0, np.inf, 0.0, np.nan, 30.0, 1.0, 9.5])
    for dt in ("float32", "float64"):
        e, t = _both(lambda lib, p, q: getattr(lib.special, name)(p, q), a.astype(dt), x.astype(dt))
        _same(e, t, rtol=2e-4 if dt == "float32" else 1e-10)  # torch's float32 Q(1e-3, 1) is 1e-4 off
    res = []
    for lib in (ember, torch):
        at, xt = lib.tensor(a[:4] + 0.5), lib.tensor([0.3, 1.0, 2.0, 4.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.special, name)(at, xt), xt, lib.tensor([1.0, -0.5, 0.2, 2.0],
                                                                                     dtype=lib.float64))
        res.append(g)
        with pytest.raises(NotImplementedError):
            getattr(lib.special, name)(at.requires_grad_(), xt.detach()).sum().backward()
        with pytest.raises(TypeError):
            getattr(lib.special, name)(at.detach(), 2.0)
    _same(*res, rtol=1e-10)


@pytest.mark.parametrize("eps", [None, 1e-6, 0.2, 0.6, -0.1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logit_eps_values_and_grad(eps, dtype):
    """logit clamps to [eps, 1 - eps] (the lower bound first when eps > 0.5); clamped inputs get no gradient."""
    x = np.array([0.5, 0.3, 0.7, 0.0, 1.0, -0.5, 1.5, 1e-8, 0.9999, np.nan], dtype=dtype)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.logit(xt, eps) if eps is not None else lib.special.logit(xt)
        y.backward(lib.tensor(np.linspace(-1, 1, x.size), dtype=xt.dtype))
        res.append((y, xt.grad, xt.logit(eps)))
    for a, b in zip(*res):
        _same(a, b, rtol=2e-6 if dtype == "float32" else 1e-10)


_GRAD_UNARY = {"erf": 1, "erfc": 1, "erfcx": 1, "erfinv": 0, "ndtr": 1, "ndtri": 0, "log_ndtr": 1, "expit": 1,
               "logit": 0, "exp2": 1, "expm1": 1, "log1p": 1, "entr": 0, "sinc": 1, "gammaln": 1, "digamma": 1,
               "i0": 1, "i0e": 1, "i1": 1, "i1e": 1, "xlog1py": 0}


@pytest.mark.parametrize("name", sorted(_GRAD_UNARY))
def test_special_gradients_first_and_second_order(name):
    """Backward with a random output gradient, then the gradient of the gradient's squared norm."""
    x = np.array([0.3, 0.7, 0.1, 0.9, 0.45, 0.05]) if _GRAD_UNARY[name] == 0 else \
        np.array([0.3, 0.7, 1.5, 2.5, -0.4, 4.0])
    go = np.random.default_rng(0).standard_normal(x.shape)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        f = getattr(lib.special, name)
        y = f(xt, xt + 0.5) if name == "xlog1py" else f(xt)
        (g,) = lib.autograd.grad(y, xt, lib.tensor(go), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), xt)
        res.append((y, g, gg))
    for a, b in zip(*res):
        _same(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["bessel_j0", "modified_bessel_k1", "airy_ai", "spherical_bessel_j0"])
def test_functions_without_derivative_do_not_require_grad(name):
    for lib in (ember, torch):
        y = getattr(lib.special, name)(lib.tensor([0.5, 1.5], requires_grad=True))
        assert not y.requires_grad and y.grad_fn is None


_POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w"]


@pytest.mark.parametrize("name", _POLY)
def test_orthogonal_polynomials(name):
    """Degrees as Python ints, floats (truncated), negative (0) and tensors; x at +-1, inside, outside and inf."""
    x = np.array([0.3, -0.7, 1.0, -1.0, 0.0, 2.5, -2.5, 0.95, np.inf, -np.inf])
    for dt in ("float32", "float64"):
        for n in (0, 1, 2, 3, 7, 12, -1, 2.5):
            e, t = _both(lambda lib, a: getattr(lib.special, name)(a, n), x.astype(dt))
            _same(e, t, rtol=2e-5 if dt == "float32" else 1e-10, atol=1e-5 if dt == "float32" else 1e-10)
    ns = np.array([0, 1, 3, 5, 9, -2, 4, 2, 1, 0])
    e, t = _both(lambda lib, a, k: getattr(lib.special, name)(a, k), x, ns)
    _same(e, t, rtol=1e-10)
    e, t = _both(lambda lib, k: getattr(lib.special, name)(0.4, k), ns)
    _same(e, t, rtol=1e-5, atol=1e-6)
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            getattr(lib.special, name)(0.5, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_remainder_fmod_signs_and_zeros(dtype):
    """remainder takes the divisor's sign but a zero result keeps the dividend's; fmod the dividend's."""
    a = np.array([-0.0, 0.0, -0.0, 0.0, -4.0, 4.0, -4.0, 4.0, 5.0, np.inf, 3.0, -3.0, -7.5, 7.5, 1e-30],
                 dtype=dtype)
    b = np.array([2.0, 2.0, -2.0, -2.0, 2.0, -2.0, -2.0, 2.0, np.inf, 2.0, -np.inf, np.inf, 2.0, -2.0, -1.0],
                 dtype=dtype)
    for f in (lambda lib, x, y: lib.remainder(x, y), lambda lib, x, y: x % y, lambda lib, x, y: lib.fmod(x, y),
              lambda lib, x, y: x % 2.0, lambda lib, x, y: x % -2, lambda lib, x, y: lib.remainder(-4.0, y),
              lambda lib, x, y: lib.fmod(x, -0.0)):
        e, t = _both(f, a, b)
        _same(e, t, rtol=0)
    ints = np.array([-7, -4, 0, 3, 7])
    for f in (lambda lib, x: lib.remainder(x, -3), lambda lib, x: lib.fmod(x, -3), lambda lib, x: x % 2.5):
        e, t = _both(f, ints)
        _same(e, t, rtol=0)


def test_binary_math_dtypes_and_values():
    """copysign/nextafter/hypot/logaddexp(2)/float_power/true_divide/xlogy/ldexp at signed zeros, inf and NaN."""
    a = np.array([0.5, 2.0, -2.5, 0.0, -0.0, 1e-30, np.inf, -np.inf, np.nan, 1.0, -1e4], dtype=np.float32)
    b = np.array([-0.0, 0.0, 1.0, -1.0, 2.0, np.nan, -np.inf, np.inf, 3.0, 0.0, 1e4], dtype=np.float32)
    ints = np.array([-3, -1, 0, 1, 2, 5])
    for name in ("copysign", "nextafter", "hypot", "logaddexp", "logaddexp2", "float_power", "true_divide", "xlogy",
                 "atan2"):
        for x, y in ((a, b), (a.astype(np.float64), b.astype(np.float64)), (ints, ints[::-1].copy())):
            if name in ("nextafter", "hypot", "logaddexp", "logaddexp2") and x.dtype.kind == "i":
                continue
            e, t = _both(lambda lib, p, q: getattr(lib, name)(p, q), x, y)
            _same(e, t, rtol=1e-6)
    for f in (lambda lib, x: lib.float_power(x, 2), lambda lib, x: lib.float_power(2, x),
              lambda lib, x: lib.true_divide(x, 2), lambda lib, x: lib.copysign(x, -0.0),
              lambda lib, x: lib.xlogy(x, 2), lambda lib, x: lib.special.xlogy(2, x),
              lambda lib, x: lib.ldexp(x, lib.tensor(3)), lambda lib, x: lib.ldexp(x.float(), x.nan_to_num(0.0, 9.0, -9.0).int())):
        for x in (a, ints):
            e, t = _both(f, x)
            _same(e, t, rtol=1e-6)
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.igamma(lib.tensor([1.0]), 2.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_nan_to_num_round(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375, 1234.5678, -0.0, 0.0, 1e-30, np.inf, -np.inf, np.nan,
                  25.0, 15.0, -7.0], dtype=dtype)
    e, t = _both(lambda lib, a: lib.frexp(a), x[np.isfinite(x)])
    _same(e[0], t[0], rtol=0)
    _same(e[1], t[1], rtol=0)
    for f in (lambda lib, a: lib.round(a), lambda lib, a: lib.special.round(a, decimals=2),
              lambda lib, a: lib.round(a, decimals=-1), lambda lib, a: a.round(decimals=1),
              lambda lib, a: lib.nan_to_num(a), lambda lib, a: lib.nan_to_num(a, nan=1.0, posinf=2.0),
              lambda lib, a: a.nan_to_num(neginf=-5.0)):
        e, t = _both(f, x)
        _same(e, t, rtol=0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_logsumexp_dtype_and_infinities(dim):
    m = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    inf = np.array([[np.inf, 1.0, -np.inf], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 0.0]], dtype=np.float32)
    for f in (lambda lib, a: lib.special.softmax(a, dim, dtype=lib.float64),
              lambda lib, a: lib.special.log_softmax(a, dim, dtype=lib.float64),
              lambda lib, a: lib.special.softmax(a, dim), lambda lib, a: lib.special.logsumexp(a, dim),
              lambda lib, a: lib.special.logsumexp(a, (0, 1), keepdim=True)):
        for x in (m, inf):
            e, t = _both(f, x)
            _same(e, t, rtol=1e-6)
    e, t = _both(lambda lib, a: lib.logsumexp(a, 0), np.array([1, 2, 3]))
    _same(e, t, rtol=1e-6)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(np.array([[-np.inf, -np.inf], [np.inf, 1.0]]), requires_grad=True)
        xt.logsumexp(1).backward(lib.tensor([1.0, 2.0], dtype=lib.float64))
        res.append(xt.grad)
    _same(*res, rtol=0)
