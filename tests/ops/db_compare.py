"""Comparisons, elementwise predicates, logical and bitwise ops (none differentiable)."""
import math

import numpy as np

from .db_binary import binary, grid
from .db_unary import EDGE, arr, fixed, uniform
from .opinfo import ALL_INTS, FLOATS, HALVES, INTS, OpInfo, Sample, np_dtype

FLOAT_ALL = FLOATS + HALVES
EVERY = FLOAT_ALL + ALL_INTS + ("bool",)


def op(name, fn, samples, dtypes=EVERY, **kw):
    return OpInfo(name, fn, samples, dtypes, grad=False, category="compare", **kw)


def with_ties(dtype, rng, scalars=True):
    """Pairs drawn from a few values, so that many elements compare equal (then Python numbers as ``other``)."""
    def draw(*shape):
        return np.asarray(rng.choice(np.array([-1.0, 0.0, 1.0, 2.0]), size=shape).astype(np_dtype(dtype)))
    return [Sample((draw(3, 4), draw(4)), name="ties"), Sample((draw(2, 1, 3), draw(4, 1)), name="broadcast"),
            Sample((draw(), draw()), name="0-d"), Sample((draw(0, 3), draw(3)), name="empty")] + \
        ([Sample((draw(3, 2), 1), name="scalar1"), Sample((draw(3, 2), 0.5), name="scalar0.5")] if scalars else [])


def with_ties_first(dtype, rng):
    return [Sample(s.args[:1], name=s.name) for s in tensors_with_ties(dtype, rng)]


def tensors_with_ties(dtype, rng):  # for ops that torch defines on two tensors only
    return with_ties(dtype, rng, scalars=False)


def int_pairs(low, high, rhs_low, rhs_high, scalars=()):
    def samples(dtype, rng):
        out = [Sample((arr(a, dtype, rng, low, high), arr(b, dtype, rng, rhs_low, rhs_high)), name=f"{a}x{b}")
               for a, b in [((), ()), ((6,), (6,)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((0, 3), (3,))]]
        return out + [Sample((arr((3, 2), dtype, rng, low, high), s), name=f"scalar{s}") for s in scalars]
    return samples


def isclose_samples(dtype, rng):
    a = arr((3, 4), dtype, rng)
    near = np.asarray(a + np.asarray(rng.uniform(-1e-3, 1e-3, a.shape)).astype(a.dtype)) if dtype in FLOAT_ALL \
        else np.asarray(a + rng.integers(0, 2, a.shape).astype(a.dtype))
    out = [Sample((a, near), name="near"), Sample((a, near), {"rtol": 1e-2, "atol": 1e-3}, name="loose"),
           Sample((a, near), {"rtol": 0, "atol": 0}, name="exact")]
    if dtype in FLOAT_ALL:
        v = np.array([0.0, math.nan, math.inf, -math.inf, 1.0, 1e-9], a.dtype)
        w = np.array([-0.0, math.nan, math.inf, math.inf, 1.0 + 1e-6, 0.0], a.dtype)
        out += [Sample((v, w), name="special"), Sample((v, w), {"equal_nan": True}, name="equal_nan")]
    return out


SHIFTS = int_pairs(-8, 8, 0, 9, scalars=(1, 3))
SHIFT_EDGE = op("bitwise_left_shift_wide", lambda m, a, b: a << b,
                lambda d, rng: [Sample((np.array([1, -1, 5, 127]).astype(d), np.array([7, 8, 63, 64]).astype(d)))],
                INTS + ("int8", "uint8"))

OPS = [
    op("eq", lambda m, a, b: m.eq(a, b), with_ties),
    op("ne", lambda m, a, b: a != b, with_ties),
    op("lt", lambda m, a, b: m.lt(a, b), with_ties),
    op("le", lambda m, a, b: a <= b, with_ties),
    op("gt", lambda m, a, b: a > b, with_ties),
    op("ge", lambda m, a, b: m.greater_equal(a, b), with_ties),
    op("greater", lambda m, a, b: m.greater(a, b), binary(), FLOATS),
    op("less_equal", lambda m, a, b: a.less_equal(b), binary(), FLOATS),
    op("not_equal", lambda m, a, b: m.not_equal(a, b), binary(), FLOATS),
    op("eq_special", lambda m, a, b: a == b, grid(), FLOAT_ALL),
    op("lt_special", lambda m, a, b: a < b, grid(), FLOAT_ALL + INTS),
    op("eq_mixed_dtypes", lambda m, a, b: a == b.double(), with_ties, FLOATS + INTS),
    op("isclose", lambda m, a, b, **k: m.isclose(a, b, **k), isclose_samples, FLOAT_ALL + INTS),
    op("allclose", lambda m, a, b, **k: m.allclose(a, b, **k), isclose_samples, FLOAT_ALL + INTS,
       compare_dtype=False),
    op("equal", lambda m, a, b: m.equal(a, b), tensors_with_ties, FLOATS + INTS + ("bool",), compare_dtype=False),
    op("equal_same", lambda m, a: m.equal(a, a.clone()), uniform(), FLOATS + INTS, compare_dtype=False),
    op("isnan", lambda m, x: m.isnan(x), fixed(EDGE), FLOAT_ALL),
    op("isnan_int", lambda m, x: x.isnan(), uniform(), ALL_INTS + ("bool",)),
    op("isinf", lambda m, x: m.isinf(x), fixed(EDGE), FLOAT_ALL),
    op("isposinf", lambda m, x: m.isposinf(x), fixed(EDGE), FLOAT_ALL),
    op("isneginf", lambda m, x: m.isneginf(x), fixed(EDGE), FLOAT_ALL),
    op("isfinite", lambda m, x: m.isfinite(x), fixed(EDGE), FLOAT_ALL),
    op("is_predicates_int", lambda m, x: (m.isinf(x), m.isposinf(x), m.isneginf(x), m.isfinite(x)), uniform(),
       ALL_INTS + ("bool",)),
    op("isreal", lambda m, x: m.isreal(x), uniform(), EVERY),
    # bfloat16 left out: torch's float -> bfloat16 conversion sets NaN's sign bit
    op("signbit", lambda m, x: m.signbit(x), fixed(EDGE), FLOATS + ("float16",)),
    op("signbit_int", lambda m, x: m.signbit(x), uniform(), ALL_INTS + ("bool",)),
    op("logical_and", lambda m, a, b: m.logical_and(a, b), tensors_with_ties),
    op("logical_or", lambda m, a, b: m.logical_or(a, b), tensors_with_ties),
    op("logical_xor", lambda m, a, b: m.logical_xor(a, b), tensors_with_ties),
    op("logical_not", lambda m, x: m.logical_not(x), fixed(EDGE), FLOAT_ALL),
    op("logical_not_int", lambda m, x: x.logical_not(), uniform(), ALL_INTS + ("bool",)),
    op("bitwise_and", lambda m, a, b: m.bitwise_and(a, b), int_pairs(-8, 8, -8, 8, (3, True)),
       ALL_INTS + ("bool",)),
    op("bitwise_or", lambda m, a, b: a | b, int_pairs(-8, 8, -8, 8, (3,)), ALL_INTS + ("bool",)),
    op("bitwise_xor", lambda m, a, b: a ^ b, int_pairs(-8, 8, -8, 8, (3,)), ALL_INTS + ("bool",)),
    op("bitwise_and_reflected", lambda m, a: 6 & a, uniform(-8, 8), INTS + ("bool",)),
    op("bitwise_or_reflected", lambda m, a: True | a, uniform(-8, 8), INTS + ("bool",)),
    op("bitwise_xor_reflected", lambda m, a: 5 ^ a, uniform(-8, 8), INTS),
    op("bitwise_not", lambda m, x: m.bitwise_not(x), uniform(-8, 8), ALL_INTS + ("bool",)),
    op("invert", lambda m, x: ~x, uniform(-8, 8), ALL_INTS + ("bool",)),
    op("bitwise_float_rejected", lambda m, a, b: m.bitwise_and(a, b), binary(scalars=()), FLOATS),
    op("invert_float_rejected", lambda m, x: ~x, uniform(), FLOATS),
    op("bitwise_left_shift", lambda m, a, b: m.bitwise_left_shift(a, b), SHIFTS, ALL_INTS),
    op("bitwise_right_shift", lambda m, a, b: a >> b, SHIFTS, ALL_INTS),
    op("lshift_reflected", lambda m, a: 3 << a, uniform(0, 9), INTS),
    op("rshift_reflected", lambda m, a: -100 >> a, uniform(0, 9), INTS),
    SHIFT_EDGE,
    op("bitwise_right_shift_wide", lambda m, a, b: a >> b,
       lambda d, rng: [Sample((np.array([1, -1, -128, 127]).astype(d), np.array([7, 8, 63, 64]).astype(d)))],
       INTS + ("int8", "uint8")),
    op("shift_grid", lambda m, a, b: a << b, grid([0, 1, 2, 3, 5]), INTS),
    op("isin", lambda m, a, b, **k: m.isin(a, b, **k), lambda d, rng: [
        Sample(s.args, {"invert": inv}, f"{s.name}-invert{inv}") for s in tensors_with_ties(d, rng)
        for inv in (False, True)], FLOAT_ALL + INTS),
    op("isin_scalar", lambda m, a: m.isin(a, 1), with_ties_first, FLOATS + INTS),
]
