"""Sorting and searching: sort, topk, kthvalue, unique, searchsorted."""
import numpy as np

from .opinfo import FLOATS, HALVES, OpInfo, Sample, make, np_dtype

NUMBERS = FLOATS + HALVES + ("int32", "int64", "uint8", "int8")


def distinct(shape, dtype, rng):
    """Values without ties (tie order is unspecified for topk), exact in every dtype."""
    n = int(np.prod(shape))
    v = rng.permutation(n) - (0 if dtype == "uint8" else n // 2)
    return (v * (0.5 if dtype in FLOATS + HALVES else 1)).reshape(shape).astype(np_dtype(dtype))


def with_specials(dtype, rng):
    a = make((3, 21), dtype, rng)  # more elements than gradcheck takes: no finite differences at inf/nan
    if dtype in FLOATS + HALVES:
        a[0, 1], a[1, 3], a[2, 0], a[2, 4], a[0, 3] = np.nan, np.inf, -np.inf, np.nan, np.nan
    return a


def sort_samples(dtype, rng):
    out = [Sample((make((3, 5), dtype, rng),), name="rows"),
           Sample((make((3, 5), dtype, rng), 0), name="dim0"),
           # torch keeps the order of equal elements (and NaNs) of long rows only when stable=True
           Sample((with_specials(dtype, rng),), {"descending": True, "stable": True}, name="specials desc"),
           Sample((with_specials(dtype, rng),), {"dim": -1, "stable": True}, name="specials"),
           Sample((np.asarray(make((), dtype, rng)),), name="0-d"),
           Sample((make((0, 3), dtype, rng), 0), name="empty"),
           Sample((make((6, 11), dtype, rng, 0, 2),), {"dim": 1, "descending": True, "stable": True},
                  name="ties desc"),  # more elements than gradcheck takes: ties have no derivative
           Sample((make((6, 11), dtype, rng, 0, 2),), {"stable": True}, name="ties")]
    return out


def topk_samples(dtype, rng):
    return [Sample((distinct((3, 5), dtype, rng), 2)),
            Sample((distinct((3, 5), dtype, rng), 3, 0), {"largest": False}),
            Sample((distinct((6,), dtype, rng), 6)),
            Sample((distinct((4,), dtype, rng), 0)),
            Sample((np.asarray(distinct((), dtype, rng)), 1)),
            Sample((distinct((2, 0), dtype, rng), 0), name="empty")]


def kth_samples(dtype, rng):
    return [Sample((distinct((3, 5), dtype, rng), 2)),
            Sample((distinct((3, 5), dtype, rng), 3, 0, True)),
            Sample((distinct((6,), dtype, rng), 6)),
            Sample((np.asarray(distinct((), dtype, rng)), 1))]


def unique_samples(dtype, rng):
    a = make((4, 3), dtype, rng, -2, 2).astype(np_dtype(dtype)) if dtype in FLOATS + HALVES else None
    small = (np.round(rng.uniform(-2, 2, (4, 3))) if dtype != "bool" else rng.random((4, 3)) < .5)
    small = small.astype(np_dtype(dtype)) if dtype != "uint8" else np.abs(small).astype("uint8")
    rows = np.concatenate([small[:2], small[:1], small[1:2]])
    out = [Sample((small,)), Sample((small,), {"return_inverse": True, "return_counts": True}),
           Sample((rows,), {"dim": 0, "return_inverse": True, "return_counts": True}),
           Sample((rows.T.copy(),), {"dim": 1, "return_counts": True}),
           Sample((np.asarray(small[0, 0]),), {"return_inverse": True}),
           Sample((small[:0],), {"return_inverse": True, "return_counts": True})]
    if a is not None:
        a[0, 0] = a[1, 1] = np.nan
        out.append(Sample((a,), {"return_counts": True}, name="nan"))
    return out


def consecutive_samples(dtype, rng):
    small = rng.random(10) < .5 if dtype == "bool" else rng.integers(0, 3, 10).astype(np_dtype(dtype))
    rows = np.repeat(small.reshape(5, 2), [2, 1, 1, 3, 1], axis=0)
    return [Sample((small,)), Sample((small,), {"return_inverse": True, "return_counts": True}),
            Sample((rows,), {"dim": 0, "return_inverse": True, "return_counts": True}),
            Sample((small[:0],), {"return_counts": True})]


def search_samples(dtype, rng):
    seq = np.sort(make((6,), dtype, rng))
    vals = make((2, 3), dtype, rng)
    vals[0, :2] = seq[[1, 4]]  # hits
    rows = np.sort(make((2, 5), dtype, rng), axis=-1)
    perm = rng.permutation(6)
    return [Sample((seq, vals)), Sample((seq, vals), {"right": True}), Sample((seq, vals), {"side": "right"}),
            Sample((rows, make((2, 3), dtype, rng))), Sample((seq, 2)), Sample((seq, vals), {"out_int32": True}),
            Sample((seq[perm], vals, np.argsort(seq[perm], kind="stable")), name="sorter"),
            Sample((seq[:0], vals)), Sample((seq, np.asarray(vals[0, 0])))]


def bucketize_samples(dtype, rng):
    bounds = np.sort(make((5,), dtype, rng))
    vals = make((3, 2), dtype, rng)
    vals[0] = bounds[[0, 3]]
    return [Sample((vals, bounds)), Sample((vals, bounds), {"right": True}), Sample((2, bounds)),
            Sample((vals, bounds), {"out_int32": True})]


def _nt(result):
    """A named (values, indices) result as a plain tuple, also checking the field names."""
    return (result.values, result.indices)


def bincount_samples(dtype, rng):
    x = rng.integers(0, 7, 20).astype(dtype)
    return [Sample((x,), {}, "counts"), Sample((x,), {"minlength": 12}, "minlength"),
            Sample((np.zeros(0, dtype),), {"minlength": 3}, "empty")]


def histc_samples(dtype, rng):
    x = np.asarray(make((50,), dtype, rng))
    return [Sample((x,), {"bins": 7}, "data-range"), Sample((x,), {"bins": 5, "min": -1, "max": 2}, "range"),
            Sample((np.full(4, 2.5, dtype),), {"bins": 3}, "constant")]


OPS = [
    OpInfo("sort", lambda m, x, *a, **k: _nt(m.sort(x, *a, **k)), sort_samples, NUMBERS + ("bool",),
           category="sort"),
    OpInfo("argsort", lambda m, x, *a, **k: m.argsort(x, *a, **k), sort_samples, NUMBERS + ("bool",), grad=False,
           category="sort"),
    OpInfo("msort", lambda m, x, *a, **k: m.msort(x), sort_samples, NUMBERS, category="sort"),
    OpInfo("topk", lambda m, x, *a, **k: _nt(m.topk(x, *a, **k)), topk_samples, NUMBERS, category="sort"),
    OpInfo("kthvalue", lambda m, x, *a, **k: _nt(m.kthvalue(x, *a, **k)), kth_samples, NUMBERS, category="sort"),
    OpInfo("unique", lambda m, x, **k: m.unique(x, **k), unique_samples, NUMBERS + ("bool",), grad=False,
           category="sort"),
    OpInfo("unique_consecutive", lambda m, x, **k: m.unique_consecutive(x, **k), consecutive_samples,
           NUMBERS + ("bool",), grad=False, category="sort"),
    OpInfo("searchsorted", lambda m, s, v, *sorter, **k: m.searchsorted(s, v, sorter=(sorter or [None])[0], **k),
           search_samples, NUMBERS, grad=False, category="sort"),
    OpInfo("bucketize", lambda m, v, b, **k: m.bucketize(v, b, **k), bucketize_samples, NUMBERS, grad=False,
           category="sort"),
    OpInfo("bincount", lambda m, x, *w, **k: m.bincount(x, *w, **k), bincount_samples, ("int32", "int64", "uint8"),
           grad=False, noncontig=False, category="sort"),
    OpInfo("bincount_weights", lambda m, w, **k: m.bincount(m.tensor([0, 2, 2, 5, 0, 1]), w, **k),
           lambda d, rng: [Sample((np.asarray(make((6,), d, rng)),), {"minlength": 8})], FLOATS + ("int32",),
           grad=False, noncontig=False, category="sort"),
    OpInfo("histc", lambda m, x, **k: m.histc(x, **k), histc_samples, FLOATS, grad=False, category="sort"),
]
