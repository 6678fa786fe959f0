"""Elementwise ops of two inputs."""
from .opinfo import FLOATS, HALVES, INTS, OpInfo, Sample, make

SHAPES = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((0, 3), (3,)), ((3,), ())]


def binary_samples(low=-3, high=3, rhs_low=None, rhs_high=None, scalars=(2.5, 3)):
    def samples(dtype, rng):
        out = [Sample((make(a, dtype, rng, low, high), make(b, dtype, rng, rhs_low if rhs_low is not None else low,
                                                             rhs_high if rhs_high is not None else high)),
                      name=f"{a}x{b}") for a, b in SHAPES]
        out += [Sample((make((3, 2), dtype, rng, low, high), s), name=f"scalar{s}") for s in scalars]
        return out
    return samples


ARITH = FLOATS + HALVES + INTS

OPS = [
    OpInfo("add", lambda m, a, b: m.add(a, b), binary_samples(), ARITH, category="binary"),
    OpInfo("add_alpha", lambda m, a, b: m.add(a, b, alpha=2), binary_samples(scalars=()), FLOATS, category="binary"),
    OpInfo("sub", lambda m, a, b: a - b, binary_samples(), ARITH, category="binary"),
    OpInfo("mul", lambda m, a, b: a * b, binary_samples(), ARITH, category="binary"),
    OpInfo("div", lambda m, a, b: m.div(a, b), binary_samples(rhs_low=0.5, rhs_high=3), FLOATS + HALVES,
           category="binary"),
]
