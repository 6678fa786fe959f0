"""ember.special against torch.special: every name, edge values, and the aliases of top-level ops."""
import math

import numpy as np
import pytest
import torch

import ember

NAMES = ["expit", "logit", "erf", "erfc", "erfinv", "erfcx", "exp2", "expm1", "log1p", "gammaln", "digamma", "psi",
         "polygamma", "multigammaln", "i0", "xlogy", "xlog1py", "sinc", "round", "softmax", "log_softmax", "logsumexp",
         "entr", "ndtr", "ndtri", "log_ndtr", "i0e", "i1", "i1e", "zeta", "bessel_j0", "bessel_j1"]
VALUES = [0.0, -0.0, -1.0, -2.5, 0.5, 1.0, 3.0, 30.0, 1e4, math.inf, -math.inf, math.nan]
UNIT = [0.0, 1.0, 0.5, 0.1, 0.999, -0.5, 2.0, math.nan]
CALLS = {"polygamma": lambda m, f, x: f(1, x), "multigammaln": lambda m, f, x: f(x, 2),
         "xlogy": lambda m, f, x: f(x, m.tensor(2.5, dtype=x.dtype)), "xlog1py": lambda m, f, x: f(x.abs(), x),
         "zeta": lambda m, f, x: f(m.tensor(2.5, dtype=x.dtype), x), "softmax": lambda m, f, x: f(x, 0),
         "log_softmax": lambda m, f, x: f(x, 0), "logsumexp": lambda m, f, x: f(x, 0)}
FINITE = {"softmax", "log_softmax", "logsumexp"}  # reductions: one inf or nan spreads over the row
POLES = {"polygamma"}  # torch's polygamma(n >= 1) is finite at the poles and NaN at -inf: not compared (see db_unary)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(name, dtype):
    values = UNIT if name in ("logit", "erfinv", "ndtri") else VALUES
    if name in FINITE:
        values = [v for v in values if math.isfinite(v) and abs(v) < 100]
    if name in POLES:
        values = [v for v in values if v not in (-1.0, -math.inf)]
    x = np.array(values, dtype)
    call = CALLS.get(name, lambda m, f, x: f(x))
    with np.errstate(all="ignore"):
        got = call(ember, getattr(ember.special, name), ember.tensor(x)).numpy()
    want = call(torch, getattr(torch.special, name), torch.tensor(x)).numpy()
    if name == "zeta":  # torch gives NaN at other = inf, scipy the limit 0
        got, want = got[:-3], want[:-3]
    assert got.dtype == want.dtype
    rtol, atol = (1e-4, 1e-5) if dtype == "float32" else (1e-6, 1e-6)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)


ALIASES = {"expit": "sigmoid", "gammaln": "lgamma", "psi": "digamma", "multigammaln": "mvlgamma"}


@pytest.mark.parametrize("name", NAMES)
def test_aliases(name):
    top = ALIASES.get(name, name)
    if hasattr(torch, top):
        assert getattr(ember.special, name) is getattr(ember, top)
    else:
        assert not hasattr(ember, name)


def test_not_differentiable():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert not ember.special.bessel_j0(x).requires_grad and not ember.special.bessel_j1(x).requires_grad
    with pytest.raises(RuntimeError, match="derivative for 'zeta' is not implemented"):
        ember.special.zeta(x, 2.0).sum().backward()
