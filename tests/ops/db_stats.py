"""Statistics, norms of differences, integration and combinations: cov, corrcoef, dist, renorm, trapezoid,
cumulative_trapezoid, combinations (histogram is in test_histogram.py)."""
import numpy as np

from .db_view import cases
from .opinfo import FLOATS, HALVES, INTS, OpInfo, Sample, make

C = "stats"


def cov_samples(dtype, rng):
    x = make((3, 6), dtype, rng)
    out = [Sample((x,), {}, "3x6"), Sample((make((5,), dtype, rng),), {}, "1-D"),
           Sample((x,), {"correction": 0}, "correction0"), Sample((x,), {"correction": 2}, "correction2"),
           Sample((make((2, 1), dtype, rng),), {}, "one-observation")]
    fw = rng.integers(0, 4, 6)
    aw = rng.uniform(0.5, 2.0, 6).astype(np.float64 if dtype == "float64" else np.float32)
    if dtype in FLOATS:
        out += [Sample((x, fw), {}, "fweights"), Sample((x, None, aw), {}, "aweights"),
                Sample((x, fw, aw), {"correction": 3}, "both")]
    return out


def _cov(m, x, fw=None, aw=None, **kw):
    return m.cov(x, fweights=fw, aweights=aw, **kw)


def trapezoid_samples(dtype, rng):
    y = make((3, 5), dtype, rng)
    x1 = np.sort(make((5,), dtype, rng))
    return [Sample((y,), {}, "dx1"), Sample((y,), {"dx": 0.5, "dim": 0}, "dx"), Sample((y, x1), {}, "x-1d"),
            Sample((y, make((3, 5), dtype, rng)), {}, "x-same"), Sample((y, make((3, 1), dtype, rng)), {"dim": 0},
                                                                      "x-broadcast"),
            Sample((make((4,), dtype, rng),), {}, "1-D"), Sample((make((2, 0), dtype, rng),), {}, "empty"),
            Sample((make((2, 1), dtype, rng),), {}, "one-point")]


def renorm_samples(dtype, rng):
    x = make((3, 4), dtype, rng)
    x[1] *= 0.05  # a row under maxnorm
    return [Sample((x, 2, 0, 1.5), {}, "p2-dim0"), Sample((x, 1, -1, 2.0), {}, "p1-dim-1"),
            Sample((make((2, 3, 2), dtype, rng), 3, 1, 1.0), {}, "3-D"), Sample((x, float("inf"), 0, 1.0), {}, "inf")]


OPS = [
    OpInfo("cov", _cov, cov_samples, FLOATS + ("int64",), category=C),
    OpInfo("corrcoef", lambda m, x: m.corrcoef(x), cases([((3, 6),)], [((4,),)], [((2, 5),)]), FLOATS + ("int64",),
           category=C),
    OpInfo("dist", lambda m, x, y, *p: m.dist(x, y, *p) if p else x.dist(y),
           cases([((3, 4), (3, 4))], [((3, 4), (4,)), 1], [((2, 3), (2, 3)), float("inf")], [((5,), (5,)), 3.5]),
           FLOATS + HALVES, category=C),
    OpInfo("dist_p0", lambda m, x, y: m.dist(x, y, 0), cases([((2, 3), (2, 3))]), FLOATS, grad=False, category=C,
           skips={"backward": "torch's autograd fails on the 0-norm's undefined gradient"}),
    OpInfo("renorm", lambda m, x, *a: x.renorm(*a), renorm_samples, FLOATS, category=C),
    OpInfo("trapezoid", lambda m, y, x=None, **kw: m.trapezoid(y, x, **kw) if x is not None else m.trapezoid(y, **kw),
           trapezoid_samples, FLOATS + INTS, category=C),
    OpInfo("trapz", lambda m, y, x=None, **kw: m.trapz(y, x, **kw) if x is not None else m.trapz(y, **kw),
           trapezoid_samples, FLOATS, category=C),
    OpInfo("cumulative_trapezoid",
           lambda m, y, x=None, **kw: m.cumulative_trapezoid(y, x, **kw) if x is not None
           else m.cumulative_trapezoid(y, **kw), trapezoid_samples, FLOATS + INTS, category=C),
    OpInfo("combinations", lambda m, x, *a: m.combinations(x, *a),
           cases([((4,),)], [((4,),), 3], [((3,),), 2, True], [((3,),), 1], [((3,),), 4], [((3,),), 0], [((0,),)]),
           FLOATS + INTS + ("bool",), category=C),
]
