"""Elementwise ops of one input, and the special functions."""
import math

import numpy as np

from .opinfo import ALL_INTS, FLOATS, HALVES, INTS, OpInfo, Sample, make, np_dtype

SHAPES = [(), (5,), (3, 4), (0, 3)]
INF, NAN = math.inf, math.nan
# values where ops are singular, saturate or overflow; each op's row "<name>_special" runs them in every float dtype
EDGE = [0.0, -0.0, INF, -INF, NAN, 1e30, -1e30, 1e-30, 88.5, -88.5, 1.0, -1.0, 0.5, -0.5, 2.0]
TRIG_EDGE = [0.0, -0.0, INF, -INF, NAN, 1e-30, 1.0, -1.0, 1.5707964, 3.1415927, 100.0, -100.0]
UNIT_EDGE = [0.0, -0.0, 1.0, -1.0, 1.0000001, -1.5, 0.999, -0.999, 1e-30, INF, NAN, 0.5]
GAMMA_EDGE = [0.0, -0.0, -1.0, -2.0, -2.5, 1.0, 2.0, 1e-30, 1e30, INF, -INF, NAN, 0.5, 30.0]
# torch's polygamma(n >= 1) gives finite values at the poles -1, -2 and NaN at infinities: not compared
POLYGAMMA_EDGE = [0.0, -0.0, -2.5, 1.0, 2.0, 1e-30, 1e4, NAN, 0.5, 30.0]
POLE_GRAD = {"backward": "the gradient is polygamma(n + 1), whose value at the poles is not compared (see above)"}
ROUND_EDGE = [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0, INF, -INF, NAN, 1e30, 123.456, -7.5]

FLOAT_ALL = FLOATS + HALVES
WITH_INTS = FLOAT_ALL + INTS + ("bool",)
NO_HALF = FLOATS + INTS + ("bool",)  # torch has no float16/bfloat16 CPU kernel for these


def arr(shape, dtype, rng, low=-3.0, high=3.0):
    """``make`` that always gives an ndarray (0-d bools come back from it as NumPy scalars)."""
    return np.asarray(make(shape, dtype, rng, low, high))


def uniform(low=-3.0, high=3.0, lead=(), **kwargs):
    """Random inputs of every test shape in [low, high); ``lead`` are positional arguments before the tensor."""
    def samples(dtype, rng):
        return [Sample(lead + (arr(s, dtype, rng, low, high),), dict(kwargs), name=str(s)) for s in SHAPES]
    return samples


def away_from_zero(low=0.5, high=3.0, **kwargs):
    """Random inputs with |x| in [low, high) and both signs (for ops singular at 0)."""
    def samples(dtype, rng):
        out = []
        for s in SHAPES:
            x = arr(s, dtype, rng, low, high)
            sign = np.where(rng.random(s) < 0.5, -1, 1).astype(x.dtype)
            out.append(Sample((np.asarray(x * sign),), dict(kwargs), name=str(s)))
        return out
    return samples


def fixed(values, lead=(), **kwargs):
    def samples(dtype, rng):
        with np.errstate(over="ignore"):  # values past float16's range become inf, as intended
            x = np.array(values, np.float64).astype(np_dtype(dtype))
        return [Sample(lead + (x,), dict(kwargs), name="special")]
    return samples


def rows(name, fn, samples, dtypes=FLOAT_ALL, edge=EDGE, edge_skips=None, edge_dtypes=FLOAT_ALL, **kw):
    """The op's random-input row, plus a row over ``edge`` values in ``edge_dtypes`` (no gradcheck there: finite
    differences at singular points are meaningless, but the gradient is still compared with torch's)."""
    if name not in INT_VALUED:  # integer inputs give float32 results: compare them at float32's tolerance
        kw["tol"] = {**{d: (1.3e-5, 1e-5) for d in INTS + ("bool",)}, **kw.get("tol", {})}
    out = [OpInfo(name, fn, samples, dtypes, category="unary", **kw)]
    if edge is not None:
        lead = samples(FLOATS[0], np.random.default_rng(0))[0].args[:-1]
        extra = {k: v for k, v in kw.items() if k != "gradcheck"}
        if edge_skips:
            extra["skips"] = {**extra.get("skips", {}), **edge_skips}
        out.append(OpInfo(name + "_special", fn, fixed(edge, lead), edge_dtypes, gradcheck=False, category="unary",
                          **extra))
    return out


INT_VALUED = {"neg", "neg_dunder", "positive", "abs", "abs_dunder", "sign", "sgn", "floor", "ceil", "trunc", "round",
              "square"}

OPS = [
    *rows("neg", lambda m, x: m.neg(x), uniform(), FLOAT_ALL + ALL_INTS),
    *rows("neg_dunder", lambda m, x: -x, uniform(), FLOAT_ALL + INTS, edge=None),
    *rows("positive", lambda m, x: +x, uniform(), FLOAT_ALL + INTS, edge=None),
    *rows("abs", lambda m, x: m.abs(x), uniform(), FLOAT_ALL + ALL_INTS),
    *rows("abs_dunder", lambda m, x: abs(x), uniform(), FLOATS, edge=None),
    *rows("sign", lambda m, x: m.sign(x), uniform(), WITH_INTS),
    *rows("sgn", lambda m, x: m.sgn(x), uniform(), FLOATS + INTS),
    *rows("floor", lambda m, x: m.floor(x), uniform(), FLOAT_ALL + INTS, edge=ROUND_EDGE),
    *rows("ceil", lambda m, x: m.ceil(x), uniform(), FLOAT_ALL + INTS, edge=ROUND_EDGE),
    *rows("trunc", lambda m, x: m.trunc(x), uniform(), FLOAT_ALL + INTS, edge=ROUND_EDGE),
    *rows("fix", lambda m, x: m.fix(x), uniform(), FLOATS, edge=None),
    *rows("round", lambda m, x: m.round(x), uniform(), FLOAT_ALL + INTS, edge=ROUND_EDGE),
    *rows("round_decimals", lambda m, x: m.round(x, decimals=2), uniform(), FLOAT_ALL, edge=ROUND_EDGE),
    *rows("round_neg_decimals", lambda m, x: m.round(x, decimals=-1), uniform(-300, 300), FLOATS, edge=ROUND_EDGE),
    *rows("frac", lambda m, x: m.frac(x), uniform(), FLOAT_ALL, edge=ROUND_EDGE),
    *rows("exp", lambda m, x: m.exp(x), uniform(), WITH_INTS),
    *rows("exp2", lambda m, x: m.exp2(x), uniform(), WITH_INTS),
    *rows("expm1", lambda m, x: m.expm1(x), uniform(), WITH_INTS),
    *rows("log", lambda m, x: m.log(x), uniform(0.1, 3), WITH_INTS),
    *rows("log2", lambda m, x: m.log2(x), uniform(0.1, 3), WITH_INTS),
    *rows("log10", lambda m, x: m.log10(x), uniform(0.1, 3), WITH_INTS),
    *rows("log1p", lambda m, x: m.log1p(x), uniform(-0.9, 3), WITH_INTS),
    *rows("sqrt", lambda m, x: m.sqrt(x), uniform(0.1, 3), WITH_INTS),
    *rows("rsqrt", lambda m, x: m.rsqrt(x), uniform(0.1, 3), WITH_INTS),
    *rows("square", lambda m, x: m.square(x), uniform(), WITH_INTS),
    *rows("reciprocal", lambda m, x: m.reciprocal(x), away_from_zero(), WITH_INTS),
    *rows("sin", lambda m, x: m.sin(x), uniform(), WITH_INTS, edge=TRIG_EDGE),
    *rows("cos", lambda m, x: m.cos(x), uniform(), WITH_INTS, edge=TRIG_EDGE),
    *rows("tan", lambda m, x: m.tan(x), uniform(-1.4, 1.4), WITH_INTS, edge=TRIG_EDGE,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("asin", lambda m, x: m.asin(x), uniform(-0.9, 0.9), WITH_INTS, edge=UNIT_EDGE),
    *rows("acos", lambda m, x: m.acos(x), uniform(-0.9, 0.9), WITH_INTS, edge=UNIT_EDGE),
    *rows("atan", lambda m, x: m.atan(x), uniform(), WITH_INTS),
    *rows("sinh", lambda m, x: m.sinh(x), uniform(), WITH_INTS),
    *rows("cosh", lambda m, x: m.cosh(x), uniform(), WITH_INTS),
    *rows("tanh", lambda m, x: m.tanh(x), uniform(), WITH_INTS),
    *rows("asinh", lambda m, x: m.asinh(x), uniform(), WITH_INTS),
    *rows("acosh", lambda m, x: m.acosh(x), uniform(1.1, 3), WITH_INTS, edge=UNIT_EDGE),
    *rows("atanh", lambda m, x: m.atanh(x), uniform(-0.9, 0.9), WITH_INTS, edge=UNIT_EDGE),
    *rows("sigmoid", lambda m, x: m.sigmoid(x), uniform(), WITH_INTS,
          edge=EDGE + [-1000.0, 1000.0, -100.0, 100.0, 30.0, -30.0]),
    *rows("logit", lambda m, x: m.logit(x), uniform(0.05, 0.95), WITH_INTS, edge=UNIT_EDGE + [2.0, 1e-8]),
    *rows("logit_eps", lambda m, x: m.logit(x, eps=0.1), uniform(0.15, 0.85), FLOAT_ALL,
          edge=UNIT_EDGE + [0.1, 0.9, 2.0]),
    *rows("erf", lambda m, x: m.erf(x), uniform(), WITH_INTS),
    *rows("erfc", lambda m, x: m.erfc(x), uniform(), WITH_INTS, edge=EDGE + [5.0, 9.0, 10.0, -5.0]),
    *rows("erfinv", lambda m, x: m.erfinv(x), uniform(-0.9, 0.9), WITH_INTS, edge=UNIT_EDGE + [0.9999, -0.9999],
          tol={"float32": (1e-4, 1e-5)}),
    *rows("lgamma", lambda m, x: m.lgamma(x), uniform(0.1, 4), WITH_INTS, edge=GAMMA_EDGE,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("lgamma_negative", lambda m, x: m.lgamma(x), uniform(-3.9, -3.1), FLOATS, edge=None),
    *rows("digamma", lambda m, x: m.digamma(x), uniform(0.1, 4), WITH_INTS, edge=GAMMA_EDGE, edge_skips=POLE_GRAD,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("polygamma_0", lambda m, n, x: m.polygamma(n, x), uniform(0.1, 4, lead=(0,)), FLOATS, edge=GAMMA_EDGE,
          edge_skips=POLE_GRAD),
    *rows("polygamma_1", lambda m, n, x: m.polygamma(n, x), uniform(0.1, 4, lead=(1,)), FLOAT_ALL + INTS,
          edge=POLYGAMMA_EDGE, tol={"float32": (1e-4, 1e-5)}),
    *rows("polygamma_2", lambda m, n, x: m.polygamma(n, x), uniform(0.2, 4, lead=(2,)), FLOATS, edge=POLYGAMMA_EDGE,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("polygamma_method", lambda m, n, x: x.polygamma(n), uniform(0.2, 4, lead=(3,)), FLOATS, edge=None,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("i0", lambda m, x: m.i0(x), uniform(), WITH_INTS, edge=EDGE + [100.0, -100.0]),
    *rows("i0e", lambda m, x: m.special.i0e(x), uniform(), WITH_INTS, edge=EDGE + [100.0, -100.0, 1e-8]),
    *rows("i1", lambda m, x: m.special.i1(x), uniform(), WITH_INTS, edge=EDGE + [50.0, -50.0, 1e-8]),
    *rows("i1e", lambda m, x: m.special.i1e(x), uniform(), WITH_INTS, edge=EDGE + [100.0, -100.0, 1e-8]),
    *rows("bessel_j0", lambda m, x: m.special.bessel_j0(x), uniform(-10, 10), NO_HALF, grad=False,
          tol={"float64": (1e-6, 1e-6)},  # scipy's and torch's kernels differ by ~1e-7 near the zeros
          edge=EDGE + [2.404825557695773, 100.0], edge_dtypes=FLOATS),
    *rows("bessel_j1", lambda m, x: m.special.bessel_j1(x), uniform(-10, 10), NO_HALF, grad=False,
          tol={"float64": (1e-6, 1e-6)},  # scipy's and torch's kernels differ by ~1e-7 near the zeros
          edge=EDGE + [3.8317059702075125, 100.0], edge_dtypes=FLOATS),
    *rows("erfcx", lambda m, x: m.special.erfcx(x), uniform(), NO_HALF, edge=EDGE + [-10.0, 10.0, 30.0, -30.0, 1e10],
          edge_dtypes=FLOATS),
    *rows("ndtr", lambda m, x: m.special.ndtr(x), uniform(), WITH_INTS, edge=EDGE + [-10.0, 10.0, -40.0]),
    *rows("ndtri", lambda m, x: m.special.ndtri(x), uniform(0.05, 0.95), NO_HALF, edge=UNIT_EDGE + [1e-10, 0.9999],
          edge_dtypes=FLOATS, tol={"float32": (1e-4, 1e-5)}),
    *rows("log_ndtr", lambda m, x: m.special.log_ndtr(x), uniform(), NO_HALF, edge=EDGE + [-10.0, 10.0, -40.0],
          edge_dtypes=FLOATS, grad_tol={"float32": (1e-3, 1e-5)}),
    *rows("entr", lambda m, x: m.special.entr(x), uniform(0.1, 3), WITH_INTS, edge=EDGE),
    *rows("mvlgamma", lambda m, x: m.mvlgamma(x, 3), uniform(1.1, 4), FLOATS, edge=GAMMA_EDGE + [1.5, 1.0000001],
          edge_skips=POLE_GRAD, tol={"float32": (1e-4, 1e-5)}),
    *rows("mvlgamma_method", lambda m, x: x.mvlgamma(2), uniform(0.6, 4), FLOATS, edge=None,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("special_multigammaln", lambda m, x: m.special.multigammaln(x, 1), uniform(0.1, 4), FLOATS, edge=None,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("deg2rad", lambda m, x: m.deg2rad(x), uniform(-360, 360), FLOAT_ALL + INTS, edge=None),
    *rows("rad2deg", lambda m, x: m.rad2deg(x), uniform(), FLOAT_ALL + INTS, edge=None),
    *rows("sinc", lambda m, x: m.sinc(x), uniform(), WITH_INTS, edge=EDGE + [1e-20, 3.0]),
    *rows("exp_method", lambda m, x: x.exp(), uniform(), FLOATS, edge=None),
    *rows("sqrt_method", lambda m, x: x.sqrt(), uniform(0.1, 3), FLOATS, edge=None),
    *rows("arctanh_method", lambda m, x: x.arctanh(), uniform(-0.9, 0.9), FLOATS, edge=None),
]
