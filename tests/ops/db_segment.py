"""segment_reduce: each reduction over 1-D, 2-D (axis > 0) lengths and offsets, empty segments and ``initial``."""
import numpy as np

from .opinfo import FLOATS, HALVES, OpInfo, Sample, make

C = "segment"
REDUCES = ("sum", "mean", "max", "min", "prod")


def _call(reduce):
    def fn(m, x, bounds, by="lengths", **kw):
        return m.segment_reduce(x, reduce, **{by: bounds}, **kw)
    return fn


def _samples(reduce):
    # an empty segment's max, min or mean is -inf, inf or nan without ``initial``: finite differences cannot check
    # it (tests/reduce/test_segment_reduce.py compares those values with torch's)
    empty = {"initial": {"max": -2.5, "min": 2.5, "mean": 0.5}[reduce]} if reduce in ("max", "min", "mean") else {}

    def samples(dtype, rng):
        def case(shape, bounds, name, **kw):
            x = make(shape, dtype, rng)
            if reduce == "prod" and x.size > 2:
                x.reshape(-1)[::5] = 0  # zeros take the exact-product branch of the gradient
            return Sample((x, np.array(bounds)), kw, name)
        return [
            case((6,), [2, 1, 3], "1d"),
            case((6,), [2, 0, 3, 1], "1d-empty", **empty),
            case((6,), [2, 0, 4], "1d-initial", initial=0.5),
            case((6, 2), [3, 3], "1d-trailing"),
            case((2, 5, 3), [[2, 0, 3], [1, 4, 0]], "2d-axis1", axis=1, **empty),
            case((2, 3, 4), [[[1, 3], [4, 0], [0, 4]]] * 2, "3d-axis2", axis=-1, **empty),
            case((6,), [0, 2, 2, 5, 6], "offsets", by="offsets", **empty),
            case((2, 4, 3), [[0, 1, 4], [1, 3, 3]], "offsets-2d", by="offsets", axis=1, **empty),
            case((6,), [2, 2], "unsafe", unsafe=True),
            case((6,), np.array([1, 5], dtype=np.int32), "int32-lengths"),
            case((0, 2), [0, 0], "empty-data", initial=1.0),
        ]
    return samples


OPS = [OpInfo(f"segment_reduce({r})", _call(r), _samples(r), FLOATS + HALVES, category=C,
              tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}) for r in REDUCES]
