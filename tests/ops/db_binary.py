"""Elementwise ops of two or more inputs: arithmetic, powers, extrema, clamp, lerp, addcmul/addcdiv, nan_to_num."""
import math

import numpy as np

from .db_unary import arr, away_from_zero, uniform
from .opinfo import ALL_INTS, DEFAULT_TOL, FLOATS, HALVES, INTS, OpInfo, Sample, np_dtype

SHAPES = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((0, 3), (3,)), ((3,), ()), ((), (2, 3))]
INF, NAN = math.inf, math.nan
FLOAT_GRID = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, INF, -INF, NAN, 1e30]
INT_GRID = [0, 1, -1, 2, -2, 7, -7, 3]

FLOAT_ALL = FLOATS + HALVES
ARITH = FLOAT_ALL + INTS
INT_TOL = {d: (1.3e-5, 1e-5) for d in ALL_INTS + ("bool",)}  # integer inputs may give float32 results


def _operand(shape, dtype, rng, low, high, away):
    x = arr(shape, dtype, rng, *(((0.5 if dtype in FLOAT_ALL else 1), 3.0) if away else (low, high)))
    if away:  # both signs, no zeros: divisors
        x = np.asarray(x * np.where(rng.random(shape) < 0.5, -1, 1).astype(x.dtype))
    return x


def binary(low=-3.0, high=3.0, rhs_low=None, rhs_high=None, away=False, scalars=(2.5, 3), lhs_scalars=(),
           **kwargs):
    """Random pairs over broadcasting shapes (the rhs in [rhs_low, rhs_high), or away from 0 with ``away``),
    then a tensor with each Python number in ``scalars`` (as other) and ``lhs_scalars`` (as input)."""
    rlo = low if rhs_low is None else rhs_low
    rhi = high if rhs_high is None else rhs_high

    def samples(dtype, rng):
        out = [Sample((arr(a, dtype, rng, low, high), _operand(b, dtype, rng, rlo, rhi, away)), dict(kwargs),
                      name=f"{a}x{b}") for a, b in SHAPES]
        out += [Sample((arr((3, 2), dtype, rng, low, high), s), dict(kwargs), name=f"scalar{s}") for s in scalars]
        out += [Sample((s, _operand((3, 2), dtype, rng, rlo, rhi, away)), dict(kwargs), name=f"lhs{s}")
                for s in lhs_scalars]
        return out
    return samples


def grid(values=None, **kwargs):
    """Every pair of edge values, elementwise (so that each gradient element belongs to one pair; ties included)."""
    def samples(dtype, rng):
        vals = values or (FLOAT_GRID if dtype in FLOAT_ALL else INT_GRID)
        with np.errstate(over="ignore"):
            v = np.array(vals, np.float64).astype(np_dtype(dtype))
        return [Sample((np.repeat(v, len(v)), np.tile(v, len(v))), dict(kwargs), name="grid")]
    return samples


def rows(name, fn, samples, dtypes=ARITH, edge=True, edge_dtypes=None, **kw):
    """The op's row, plus ``<name>_special`` over the edge-value grid (gradients compared, no gradcheck)."""
    kw["tol"] = {**INT_TOL, **kw.get("tol", {})}
    out = [OpInfo(name, fn, samples, dtypes, category="binary", **kw)]
    if edge:
        out.append(OpInfo(name + "_special", fn, grid() if edge is True else edge,
                          edge_dtypes or tuple(d for d in dtypes if d in FLOAT_ALL), gradcheck=False,
                          category="binary", **{k: v for k, v in kw.items() if k != "gradcheck"}))
    return out


def int_division(zero_divisor):
    """Integer pairs over the grid without a zero divisor, or one sample dividing by zero (torch raises)."""
    def samples(dtype, rng):
        v = np.array(INT_GRID).astype(dtype)  # negatives wrap around for uint8
        if zero_divisor:
            return [Sample((v, np.zeros_like(v)), name="by_zero"), Sample((v, 0), name="by_scalar_zero")]
        return [Sample((v[:, None], v[v != 0][None, :]), name="grid"), Sample((v, -2), name="scalar-2")]
    return samples


def clamp_samples(dtype, rng):
    x = lambda *s: arr(s, dtype, rng)  # noqa: E731
    out = [Sample((x(3, 4), -1, 1), name="scalars"), Sample((x(3, 4), None, 0.5), name="max_only"),
           Sample((x(3, 4), -0.5, None), name="min_only"), Sample((x(), -1, 1), name="0-d"),
           Sample((x(0, 2), -1, 1), name="empty"), Sample((x(3, 4), 1, -1), name="min>max")]
    if dtype in FLOAT_ALL:
        out += [Sample((x(3, 4), x(4), x(3, 1) + 1), name="tensor_bounds"),
                Sample((x(3, 4), x(3, 4), x(3, 4)), name="tensor_bounds_crossing"),
                Sample((x(3, 4), x(4), None), name="tensor_min"), Sample((x(2, 3), None, x(3)), name="tensor_max")]
    return out


def clamp_edges(dtype, rng):
    v = np.array([-2.0, -1.0, -0.5, 0.0, 1.0, 3.0, INF, -INF, NAN], np_dtype(dtype))
    lo = np.array([-1.0, -1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0], np_dtype(dtype))
    return [Sample((v, -1.0, 1.0), name="boundaries"), Sample((v, lo, np.ones_like(v)), name="tensor_min_ties"),
            Sample((v, lo, lo), name="min==max"), Sample((v, NAN, 1.0), name="nan_min")]


def lerp_samples(dtype, rng):
    x = lambda *s, lo=-3, hi=3: arr(s, dtype, rng, lo, hi)  # noqa: E731
    return [Sample((x(3, 4), x(3, 4), 0.3), name="w0.3"), Sample((x(3, 4), x(4), 0.8), name="w0.8"),
            Sample((x(), x(), 0.5), name="0-d"), Sample((x(0, 2), x(2), 0.5), name="empty"),
            Sample((x(2, 3), x(2, 3), x(2, 3, lo=-0.5, hi=1.5)), name="tensor_w"),
            Sample((x(2, 1, 3), x(4, 1), x(3, lo=0, hi=1)), name="broadcast_w")]


def addc_samples(away):
    def samples(dtype, rng):
        x = lambda *s: arr(s, dtype, rng)  # noqa: E731
        t2 = lambda *s: _operand(s, dtype, rng, -3, 3, away)  # noqa: E731
        return [Sample((x(3, 4), x(3, 4), t2(3, 4)), name="same"),
                Sample((x(3, 4), x(4), t2(3, 1)), {"value": 2}, name="broadcast_value2"),
                Sample((x(), x(), t2()), {"value": -1}, name="0-d"), Sample((x(0, 4), x(4), t2(4)), name="empty")]
    return samples


def nan_to_num_samples(dtype, rng):
    v = np.array([NAN, INF, -INF, 1.0, -2.5, 0.0], np_dtype(dtype))
    return [Sample((v,), name="defaults"), Sample((v,), {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, name="given"),
            Sample((v, 2.0), name="nan_only"), Sample((arr((3, 4), dtype, rng),), name="finite")]


def ldexp_samples(low):
    def samples(dtype, rng):
        exps = lambda *s: arr(s, "int64", rng, low, 5)  # noqa: E731
        return [Sample((arr((3, 4), dtype, rng), exps(3, 4)), name="int_exponents"),
                Sample((arr((2, 1, 3), dtype, rng), exps(4, 1)), name="broadcast"),
                Sample((arr((), dtype, rng), exps()), name="0-d"),
                Sample((arr((3,), dtype, rng), arr((3,), dtype, rng)), name="float_exponents")]
    return samples


OPS = [
    *rows("add", lambda m, a, b: m.add(a, b), binary(lhs_scalars=(2,)), ARITH + ("bool", "uint8", "int8")),
    *rows("add_alpha", lambda m, a, b: m.add(a, b, alpha=2), binary(scalars=()), FLOATS + INTS, edge=False),
    *rows("add_alpha_float", lambda m, a, b: m.add(a, b, alpha=0.5), binary(scalars=()), FLOATS, edge=False),
    *rows("sub", lambda m, a, b: a - b, binary(), ARITH + ("uint8",)),
    *rows("sub_alpha", lambda m, a, b: m.sub(a, b, alpha=3), binary(scalars=()), FLOATS + INTS, edge=False),
    *rows("rsub", lambda m, a, b: m.rsub(a, b), binary(), FLOATS + INTS, edge=False),
    *rows("mul", lambda m, a, b: a * b, binary(), ARITH + ("bool",)),
    *rows("div", lambda m, a, b: m.div(a, b), binary(away=True), ARITH + ("bool",)),
    *rows("true_divide", lambda m, a, b: m.true_divide(a, b), binary(away=True), FLOATS + INTS, edge=False),
    *rows("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), binary(away=True), ARITH),
    *rows("div_floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"), binary(away=True), ARITH),
    *rows("div_trunc_int", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), int_division(False), ALL_INTS,
          edge=False),
    *rows("div_floor_int", lambda m, a, b: m.div(a, b, rounding_mode="floor"), int_division(False), INTS,
          edge=False),
    *rows("div_by_zero_int", lambda m, a, b: m.div(a, b, rounding_mode="floor"), int_division(True), INTS,
          edge=False),
    *rows("floor_divide", lambda m, a, b: m.floor_divide(a, b), binary(away=True), ARITH, grad=False),
    *rows("floor_divide_int", lambda m, a, b: a // b, int_division(False), ALL_INTS, edge=False),
    *rows("floor_divide_by_zero", lambda m, a, b: a // b, int_division(True), INTS, edge=False),
    *rows("remainder", lambda m, a, b: m.remainder(a, b), binary(away=True), ARITH),
    *rows("remainder_number_input", lambda m, a, b: m.remainder(a, b), binary(away=True, lhs_scalars=(2.5, -3)),
          FLOATS + INTS, edge=False, grad=False),
    *rows("remainder_int", lambda m, a, b: a % b, int_division(False), ALL_INTS, edge=False),
    *rows("remainder_by_zero", lambda m, a, b: a % b, int_division(True), INTS, edge=False),
    *rows("fmod", lambda m, a, b: m.fmod(a, b), binary(away=True), ARITH),
    *rows("fmod_int", lambda m, a, b: m.fmod(a, b), int_division(False), ALL_INTS, edge=False),
    *rows("fmod_by_zero", lambda m, a, b: m.fmod(a, b), int_division(True), INTS, edge=False),
    *rows("pow", lambda m, a, b: m.pow(a, b), binary(0.1, 3, scalars=(2, 0.5, -1, 0, 3.5), lhs_scalars=(2.5,)),
          FLOAT_ALL),
    *rows("pow_signed_base", lambda m, a, b: a ** b, binary(-3, 3, -3, 3, scalars=(2, 3, -2, 0.5)), FLOATS,
          edge=False, gradcheck=False),
    *rows("pow_int", lambda m, a, b: m.pow(a, b), binary(-3, 3, 0, 4, scalars=(2, 0, 2.5), lhs_scalars=(2, 1.5)),
          ALL_INTS + ("bool",), edge=grid(INT_GRID[:5]), edge_dtypes=INTS),
    *rows("pow_int_negative_scalar", lambda m, a, b: m.pow(a, b), binary(scalars=(-1,)), INTS, edge=False),
    *rows("rpow", lambda m, a: 2.5 ** a, uniform(), FLOATS + INTS, edge=False),
    *rows("float_power", lambda m, a, b: m.float_power(a, b), binary(0.1, 3, scalars=(2, -1, 0.5),
                                                                    lhs_scalars=(2,)), FLOATS + INTS),
    *rows("atan2", lambda m, a, b: m.atan2(a, b), binary(scalars=()), ARITH),
    *rows("arctan2", lambda m, a, b: a.arctan2(b), binary(scalars=()), FLOATS, edge=False),
    *rows("hypot", lambda m, a, b: m.hypot(a, b), binary(scalars=()), FLOAT_ALL),
    *rows("xlogy", lambda m, a, b: m.xlogy(a, b), binary(-3, 3, 0.1, 3, scalars=(2.5,), lhs_scalars=(3,)), ARITH),
    *rows("xlog1py", lambda m, a, b: m.special.xlog1py(a, b),
          binary(-3, 3, -0.9, 3, scalars=(2.5,), lhs_scalars=(3,)), ARITH),
    # torch has no derivative in the first input: it is detached, and zeta_other gradchecks the second;
    # torch's NaN at large input and other (inf, 1e30) where scipy gives the limit 0 is not compared
    *rows("zeta", lambda m, x, q: m.special.zeta(x.detach(), q), binary(1.1, 4, 0.5, 3, scalars=(2.5,)), FLOATS,
          edge=grid([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.5, 3.0, -INF, NAN, 30.0]), tol={"float32": (1e-4, 1e-5)},
          skips={"gradcheck": "no derivative in input, as torch; see zeta_other"}),
    *rows("zeta_other", lambda m, q: m.special.zeta(2.5, q), uniform(0.5, 3), FLOATS, edge=False,
          tol={"float32": (1e-4, 1e-5)}),
    # as zeta: torch has no derivative in the first input, igamma_other/igammac_other gradcheck the second
    *rows("igamma", lambda m, a, x: m.igamma(a.detach(), x), binary(0.1, 4, 0.1, 4, scalars=()), FLOATS,
          edge=grid([0.0, 1.0, -1.0, 0.5, 3.0, 30.0, INF, NAN]), tol={"float32": (1e-4, 1e-5)},
          skips={"gradcheck": "no derivative in input, as torch; see igamma_other"}),
    *rows("igammac", lambda m, a, x: m.igammac(a.detach(), x), binary(0.1, 4, 0.1, 4, scalars=()), FLOATS,
          edge=grid([0.0, 1.0, -1.0, 0.5, 3.0, 30.0, INF, NAN]), tol={"float32": (1e-4, 1e-5)},
          skips={"gradcheck": "no derivative in input, as torch; see igammac_other"}),
    *rows("igamma_other", lambda m, x: m.igamma(m.full_like(x, 2.5), x), uniform(0.1, 4), FLOATS, edge=False,
          tol={"float32": (1e-4, 1e-5)}),
    *rows("igammac_other", lambda m, x: m.special.gammaincc(m.full_like(x, 2.5), x), uniform(0.1, 4), FLOATS,
          edge=False, tol={"float32": (1e-4, 1e-5)}),
    # bfloat16 edges left out: torch's float -> bfloat16 conversion sets NaN's sign bit, which copysign exposes
    *rows("copysign", lambda m, a, b: m.copysign(a, b), binary(scalars=(-1.0, 2)), ARITH,
          edge_dtypes=FLOATS + ("float16",)),
    *rows("maximum", lambda m, a, b: m.maximum(a, b), binary(scalars=()), ARITH + ("bool",)),
    *rows("minimum", lambda m, a, b: m.minimum(a, b), binary(scalars=()), ARITH + ("bool",)),
    *rows("fmax", lambda m, a, b: m.fmax(a, b), binary(scalars=()), ARITH),
    *rows("fmin", lambda m, a, b: m.fmin(a, b), binary(scalars=()), ARITH),
    *rows("clamp", lambda m, x, lo, hi: m.clamp(x, lo, hi), clamp_samples, ARITH, edge=clamp_edges),
    *rows("clamp_method", lambda m, x, lo, hi: x.clamp(min=lo, max=hi), clamp_samples, FLOATS, edge=False),
    *rows("clip", lambda m, x, lo, hi: m.clip(x, lo, hi), clamp_samples, FLOATS, edge=False),
    *rows("clamp_min", lambda m, a, b: m.clamp_min(a, b), binary(scalars=(0.5, 1)), FLOATS + INTS, edge=False),
    *rows("clamp_max", lambda m, a, b: m.clamp_max(a, b), binary(scalars=(0.5, 1)), FLOATS + INTS, edge=False),
    *rows("lerp", lambda m, a, b, w: m.lerp(a, b, w), lerp_samples, FLOAT_ALL, edge=False),
    *rows("addcmul", lambda m, x, a, b, **k: m.addcmul(x, a, b, **k), addc_samples(False), ARITH, edge=False),
    *rows("addcdiv", lambda m, x, a, b, **k: m.addcdiv(x, a, b, **k), addc_samples(True), FLOAT_ALL, edge=False),
    *rows("nan_to_num", lambda m, x, *a, **k: m.nan_to_num(x, *a, **k), nan_to_num_samples, FLOAT_ALL, edge=False),
    *rows("logaddexp", lambda m, a, b: m.logaddexp(a, b), binary(scalars=()), FLOAT_ALL),
    *rows("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), binary(scalars=()), FLOAT_ALL),
    *rows("logaddexp_large", lambda m, a, b: m.logaddexp(a, b), binary(-1e4, 1e4, scalars=()), FLOATS, edge=False,
          gradcheck=False),
    *rows("heaviside", lambda m, a, b: m.heaviside(a, b), binary(scalars=()), ARITH, grad=False),
    *rows("ldexp", lambda m, a, b: m.ldexp(a, b), ldexp_samples(0), FLOAT_ALL + INTS, edge=False),
    # torch's gradient is 0 for negative integer exponents (it multiplies by the integer power 2 ** -k = 0)
    *rows("ldexp_negative", lambda m, a, b: m.ldexp(a, b), ldexp_samples(-4), FLOAT_ALL + INTS, edge=False,
          grad=False),
    *rows("nextafter", lambda m, a, b: m.nextafter(a, b), binary(scalars=()), FLOAT_ALL,
          tol={d: (0, 5e-324) for d in FLOAT_ALL},  # exact, subnormals included ((0, 0) reads as the default)
          grad_tol=DEFAULT_TOL),
    *rows("radd", lambda m, a: 2.5 + a, uniform(), FLOATS + INTS, edge=False),
    *rows("rsub_dunder", lambda m, a: 2 - a, uniform(), FLOATS + INTS, edge=False),
    *rows("rmul", lambda m, a: 3 * a, uniform(), FLOATS + INTS + ("bool",), edge=False),
    *rows("rtruediv", lambda m, a: 2 / a, away_from_zero(), FLOATS + INTS, edge=False),
    *rows("rfloordiv", lambda m, a: 7.5 // a, uniform(0.5, 3), FLOATS, edge=False, grad=False),
    *rows("rmod", lambda m, a: 7.5 % a, uniform(0.5, 3), FLOATS, edge=False,
          skips={"backward": "torch has no derivative for remainder(Number, Tensor); ember's is -grad * (7.5 // a)"}),
]
