"""Number-theoretic and floating-point decomposition ops: gcd, lcm, frexp."""
import numpy as np

from .db_view import cases
from .opinfo import ALL_INTS, FLOATS, HALVES, OpInfo, Sample, np_dtype


def int_pairs(dtype, rng):
    lo = 0 if dtype == "uint8" else -30
    a, b = (rng.integers(lo, 30, (4, 5)).astype(dtype) for _ in range(2))
    a[0, :2] = 0
    b[0, 1:3] = 0
    return [Sample((a, b), {}, "4x5"), Sample((a, b[:1]), {}, "broadcast"), Sample((np.asarray(a[0, 0]), b), {}, "0-d")]


def special(dtype, rng):
    x = np.array([0.0, -0.0, 1.0, -3.5, 1e-3, np.inf, -np.inf, np.nan, 1e4])
    return [Sample((x.astype(np_dtype(dtype)),), {}, "special")]


OPS = [
    OpInfo("gcd", lambda m, a, b: m.gcd(a, b), int_pairs, ALL_INTS, category="binary"),
    OpInfo("lcm", lambda m, a, b: a.lcm(b), int_pairs, ALL_INTS, category="binary"),
    OpInfo("frexp", lambda m, x: m.frexp(x), cases([((3, 4),)], [((),)], [((0, 2),)]), FLOATS + HALVES,
           category="unary"),
    OpInfo("frexp_special", lambda m, x: x.frexp(), special, FLOATS + HALVES, gradcheck=False, category="unary"),
]
