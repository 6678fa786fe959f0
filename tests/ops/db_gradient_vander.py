"""Finite differences (gradient) and the Vandermonde matrix (vander)."""
import numpy as np

from .opinfo import FLOATS, OpInfo, Sample, make

C = "calculus"


def gradient_samples(dtype, rng):
    x = make((3, 5), dtype, rng)
    coords = [(np.sort(rng.uniform(0, 4, n)) + np.arange(n)).astype(dtype) for n in (3, 5)]
    return [Sample((x,), {}, "default"), Sample((x,), {"spacing": 2.0, "dim": 1}, "scalar spacing"),
            Sample((x,), {"spacing": (0.5, 3.0), "edge_order": 2}, "per-dim spacing"),
            Sample((x, *coords), {}, "coordinates"), Sample((x, coords[1]), {"dim": -1, "edge_order": 2}, "coords 2"),
            Sample((make((2,), dtype, rng),), {}, "two points")]


def _gradient(m, x, *coords, **kw):
    if coords:
        kw["spacing"] = list(coords)
    return m.gradient(x, **kw)


def vander_samples(dtype, rng):
    x = make((4,), dtype, rng, -2, 2)
    return [Sample((x,), {}), Sample((x,), {"N": 6, "increasing": True}), Sample((x,), {"N": 1}),
            Sample((x,), {"N": 0}), Sample((make((0,), dtype, rng),), {})]


OPS = [
    OpInfo("gradient", _gradient, gradient_samples, FLOATS + ("int64",), category=C),
    # torch's own backward of vander fails (it writes in place into a saved tensor): ember's is checked by gradcheck
    OpInfo("vander", lambda m, x, **kw: m.vander(x, **kw), vander_samples, FLOATS + ("int32", "bool"), category=C,
           skips={"backward": "torch's vander backward raises (in-place write into a saved tensor)"}),
]
