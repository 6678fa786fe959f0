"""Reductions, order statistics, cumulative ops and the softmax family."""
import numpy as np
import torch

from ember._ops.softmax import softmin as ember_softmin
from .opinfo import ALL_INTS, FLOATS, HALVES, INTS, OpInfo, Sample, make, np_dtype

NUM = FLOATS + HALVES + INTS
ALL = NUM + ("bool", "uint8")
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
NAN, INF = float("nan"), float("inf")


def distinct(shape, dtype, rng):
    """Values without ties (exact in every dtype), so that returned indices are unambiguous."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    n = int(np.prod(shape))
    v = rng.permutation(n) - (0 if dtype == "uint8" else n // 2)
    return (v * (1 if dtype in ALL_INTS else 0.5)).reshape(shape).astype(np_dtype(dtype))


def with_nans(shape, dtype, rng, low=-3, high=3):
    x = make(shape, dtype, rng, low, high)
    if x.dtype.kind == "f" or dtype == "bfloat16":
        x.reshape(-1)[::3] = np.nan
    return x


def with_zeros(shape, dtype, rng, low=0.5, high=2.0):
    x = make(shape, dtype, rng, low, high)
    flat = x.reshape(-1)
    flat[::4] = 0  # one zero in some slices, several in others
    return x


def reduce_samples(values=make, full=True, dims=True, tuples=True, empty=True, full_keep=True, **vkw):
    """Full reductions (``full_keep``: also dim=None with keepdim), single dims (negative, keepdim) and tuples of
    dims over 0-d to 3-d inputs, and empty ones."""
    def samples(dtype, rng):
        out = []
        for shape in SHAPES:
            x = np.asarray(values(shape, dtype, rng, **vkw))
            if full:
                out.append(Sample((x,), {}, f"{shape}"))
                if full_keep and len(shape) == 2:
                    out.append(Sample((x,), dict(dim=None, keepdim=True), f"{shape}-all-keep"))
            if dims:
                out.append(Sample((x,), dict(dim=-1), f"{shape}-dim-1"))
                out.append(Sample((x,), dict(dim=0, keepdim=True), f"{shape}-dim0-keep"))
            if tuples and len(shape) >= 2:
                out.append(Sample((x,), dict(dim=(0, -1)), f"{shape}-dims"))
                out.append(Sample((x,), dict(dim=(-1, 0), keepdim=True), f"{shape}-dims-keep"))
        if empty:
            e = np.asarray(values((0, 3), dtype, rng, **vkw))
            if full:
                out.append(Sample((e,), {}, "empty"))
            if dims:
                out.append(Sample((e,), dict(dim=1), "empty-dim1"))
                out.append(Sample((e,), dict(dim=0), "empty-dim0"))
        return out
    return samples


def dim_samples(values=make, keepdim=True, empty=True, **vkw):
    """Ops with a required single ``dim``."""
    def samples(dtype, rng):
        out = []
        for shape in SHAPES:
            x = np.asarray(values(shape, dtype, rng, **vkw))
            out.append(Sample((x,), {"dim": -1}, f"{shape}-dim-1"))
            if shape:
                out.append(Sample((x,), {"dim": 0, "keepdim": True} if keepdim else {"dim": 0}, f"{shape}-dim0"))
        if empty:
            out.append(Sample((values((0, 3), dtype, rng, **vkw),), {"dim": 1}, "empty-dim1"))
            out.append(Sample((values((0, 3), dtype, rng, **vkw),), {"dim": 0}, "empty-dim0"))
        return out
    return samples


def fixed(*cases):
    """Hand-written inputs: (list, kwargs) pairs, cast to the dtype under test."""
    def samples(dtype, rng):
        return [Sample((np.array(v, dtype=np_dtype(dtype)),), dict(kw), f"fixed{i}")
                for i, (v, kw) in enumerate(cases)]
    return samples


def join(*makers):
    return lambda dtype, rng: [s for m in makers for s in m(dtype, rng)]


def _quantile(m, x, q=0.5, **kw):
    if isinstance(q, list):
        q = m.tensor(q, dtype=x.dtype)
    return m.quantile(x, q, **kw)


def _nanquantile(m, x, q=0.5, **kw):
    if isinstance(q, list):
        q = m.tensor(q, dtype=x.dtype)
    return m.nanquantile(x, q, **kw)


def quantile_samples(values=make):
    def samples(dtype, rng):
        out = []
        for shape in [(), (5,), (3, 4), (2, 3, 4)]:
            x = values(shape, dtype, rng)
            out.append(Sample((x,), {"q": 0.3}, f"{shape}"))
            out.append(Sample((x,), {"q": [0.0, 0.25, 1.0], "dim": -1}, f"{shape}-qs-dim-1"))
            out.append(Sample((x,), {"q": 0.7, "dim": 0, "keepdim": True}, f"{shape}-dim0-keep"))
            out.append(Sample((x,), {"q": [0.5, 0.9], "keepdim": True}, f"{shape}-qs-keep"))
        x = values((3, 5), dtype, rng)
        for mode in ("lower", "higher", "midpoint", "nearest"):
            out.append(Sample((x,), {"q": [0.1, 0.5, 0.625], "dim": 1, "interpolation": mode}, mode))
        return out
    return samples


def quantile_q_grad(dtype, rng):
    """``q`` as a differentiable tensor (torch differentiates the linear interpolation through it)."""
    return [Sample((distinct((3, 5), dtype, rng), np.array([0.2, 0.55, 0.9], dtype=dtype)), {"dim": 1}, "qgrad"),
            Sample((distinct((6,), dtype, rng), np.array(0.45, dtype=dtype)), {}, "qgrad0d")]


def _norm(p):
    return lambda m, x, **kw: m.norm(x, p, **kw)


def softmax_samples(dtype, rng):
    out = []
    for shape in [(), (5,), (3, 4), (2, 3, 4), (0, 3)]:
        x = make(shape, dtype, rng)
        out.append(Sample((x,), {"dim": -1}, f"{shape}-dim-1"))
        if len(shape) > 1:
            out.append(Sample((x,), {"dim": 0}, f"{shape}-dim0"))
    big = make((3, 4), dtype, rng) * 1000  # logits of size 1e3..1e4 must not overflow
    big[0] = [1e4, 1e4 - 1, -1e4, 0]
    out.append(Sample((big,), {"dim": 1}, "large"))
    return out


def softmax_edge(dtype, rng):
    x = np.array([[-INF, -INF, -INF], [-INF, 1.0, 2.0], [INF, 1.0, 0.0], [NAN, 1.0, 0.0]], dtype=np.float64)
    return [Sample((x.astype(np_dtype(dtype)),), {"dim": 1}, "inf-nan")]


def ties(dtype, rng):
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [0.0, -1.0, 2.0, -1.0]])
    return [Sample((x.astype(np_dtype(dtype)),), {}, "ties-full"),
            Sample((x.astype(np_dtype(dtype)),), {"dim": 1}, "ties-dim1")]


def cum_samples(values=make, **vkw):
    def samples(dtype, rng):
        out = []
        for shape in SHAPES + [(0, 3)]:
            x = np.asarray(values(shape, dtype, rng, **vkw))
            out.append(Sample((x,), {"dim": -1}, f"{shape}-dim-1"))
            if len(shape) > 1:
                out.append(Sample((x,), {"dim": 0}, f"{shape}-dim0"))
        return out
    return samples


def diff_samples(dtype, rng):
    """diff of orders 0-3 along either dim, with prepend/append (the extra inputs come in as tensors)."""
    x = np.asarray(make((3, 5), dtype, rng))
    cases = [Sample((x,), {}, "n1"), Sample((x,), {"n": 2, "dim": 0}, "n2-dim0"), Sample((x,), {"n": 3}, "n3"),
             Sample((x,), {"n": 0}, "n0"), Sample((np.asarray(make((4,), dtype, rng)),), {"n": 6}, "past-length")]
    pre, post = np.asarray(make((3, 2), dtype, rng)), np.asarray(make((3, 1), dtype, rng))
    cases.append(Sample((x, pre, post), {"dim": 1}, "prepend-append"))
    return cases


EMPTY_CASES = [("amax", {}), ("amax", {"dim": 0}), ("amax", {"dim": 1}), ("amin", {"dim": (0, 1)}), ("max", {}),
               ("max", {"dim": 0}), ("max", {"dim": 1}), ("min", {"dim": -2}), ("aminmax", {}), ("aminmax", {"dim": 0}),
               ("aminmax", {"dim": 1}), ("argmax", {}), ("argmin", {"dim": 0}), ("argmax", {"dim": 1}),
               ("median", {}), ("median", {"dim": 0}), ("median", {"dim": 1}), ("nanmedian", {"dim": 0}),
               ("nanmedian", {}), ("mode", {"dim": 0}), ("mode", {"dim": 1}), ("quantile", {"q": 0.5}),
               ("nanquantile", {"q": 0.5, "dim": 1}), ("norm", {"p": INF}), ("norm", {"p": INF, "dim": 0}),
               ("norm", {"p": INF, "dim": 1}), ("norm", {"p": -1, "dim": 0}), ("logsumexp", {"dim": 0}),
               ("softmax", {"dim": 0}), ("log_softmax", {"dim": 1}), ("cummax", {"dim": 0}), ("cumprod", {"dim": 1}),
               ("prod", {"dim": 0}), ("var", {"dim": 1}), ("std", {}), ("mean", {}), ("sum", {"dim": 0})]


def empty_samples(dtype, rng):
    """Reductions of a (0, 3) tensor: over the empty dim most of them raise, as in torch."""
    e = np.asarray(make((0, 3), dtype, rng))
    return [Sample((e,), dict(kw, op=op), f"{op}-{kw}") for op, kw in EMPTY_CASES]


def mode_values(shape, dtype, rng):
    return make(shape, dtype, rng, 0, 3) if dtype != "bool" else rng.random(shape) < 0.5


FLOAT_ONLY = FLOATS + HALVES
FULL_ONLY = reduce_samples(dims=False, tuples=False, empty=False, full_keep=False)


def prod_samples(values=make, **vkw):
    return reduce_samples(values, tuples=False, full_keep=False, **vkw)


INT_TO_FLOAT = {d: (1.3e-6, 1e-5) for d in ALL_INTS + ("bool",)}  # integer inputs, float results
R = "reduce"
OPS = [
    # sum / mean / prod
    OpInfo("sum", lambda m, x, **kw: m.sum(x, **kw), reduce_samples(), ALL, category=R),
    OpInfo("sum_method", lambda m, x, **kw: x.sum(**kw), reduce_samples(tuples=False, empty=False), FLOATS,
           category=R),
    OpInfo("sum_dtype", lambda m, x, **kw: m.sum(x, dtype=m.float64, **kw), reduce_samples(empty=False),
           ("float32", "int32", "bool"), category=R),
    OpInfo("sum_to_int", lambda m, x, **kw: x.sum(dtype=m.int32, **kw), reduce_samples(tuples=False),
           ("float32", "int64"), grad=False, category=R),
    OpInfo("nansum", lambda m, x, **kw: m.nansum(x, **kw), reduce_samples(with_nans), FLOATS + HALVES + INTS,
           gradcheck=False, category=R),
    OpInfo("mean", lambda m, x, **kw: m.mean(x, **kw), reduce_samples(), FLOAT_ONLY + INTS, category=R),
    OpInfo("mean_dtype", lambda m, x, **kw: x.mean(dtype=m.float64, **kw), reduce_samples(empty=False),
           ("float16", "float32", "int32"), category=R),
    OpInfo("nanmean", lambda m, x, **kw: m.nanmean(x, **kw), reduce_samples(with_nans), FLOAT_ONLY + INTS,
           gradcheck=False, category=R),
    # prod takes one int dim: no tuples, and no keepdim without a dim
    OpInfo("prod", lambda m, x, **kw: m.prod(x, **kw), prod_samples(low=0.5, high=1.5), FLOAT_ONLY + INTS + ("bool",),
           category=R),
    OpInfo("prod_zeros", lambda m, x, **kw: m.prod(x, **kw), prod_samples(with_zeros), FLOATS, category=R),
    OpInfo("prod_dtype", lambda m, x, **kw: x.prod(dtype=m.float64, **kw), prod_samples(), ("float32", "int32"),
           category=R),
    # var / std
    OpInfo("var", lambda m, x, **kw: m.var(x, **kw), reduce_samples(), FLOAT_ONLY + INTS, category=R,
           tol={"float16": (2e-3, 2e-3)}),
    OpInfo("var_correction", lambda m, x, **kw: m.var(x, correction=0, **kw), reduce_samples(empty=False),
           FLOATS, category=R),
    OpInfo("var_correction2", lambda m, x, **kw: x.var(correction=2, **kw), reduce_samples(empty=False),
           FLOATS, gradcheck=False, category=R),
    OpInfo("var_unbiased", lambda m, x, **kw: m.var(x, kw.pop("dim", None), False, **kw),
           reduce_samples(full=False, empty=False), FLOATS, category=R),
    OpInfo("var_legacy", lambda m, x: m.var(x, False), FULL_ONLY, FLOATS, category=R),
    OpInfo("std", lambda m, x, **kw: m.std(x, **kw), reduce_samples(), FLOAT_ONLY, category=R,
           tol={"float16": (2e-3, 2e-3)}),
    OpInfo("std_correction", lambda m, x, **kw: x.std(correction=0.5, **kw), reduce_samples(empty=False),
           FLOATS, category=R),
    OpInfo("std_constant", lambda m, x, **kw: m.std(x, **kw), fixed(([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], {"dim": 1}),
                                                                  ([2.0], {})), FLOATS,
           gradcheck=False, category=R),
    OpInfo("var_mean", lambda m, x, **kw: m.var_mean(x, **kw), reduce_samples(empty=False), FLOATS, category=R),
    OpInfo("std_mean", lambda m, x, **kw: m.std_mean(x, correction=0, **kw), reduce_samples(empty=False), FLOATS,
           category=R),
    # norms
    OpInfo("norm", lambda m, x, **kw: m.norm(x, **kw), reduce_samples(tuples=True), FLOAT_ONLY, category=R),
    OpInfo("norm_fro", lambda m, x, **kw: x.norm("fro", **kw), reduce_samples(empty=False), FLOATS, category=R),
    OpInfo("norm_p1", _norm(1), reduce_samples(), FLOATS, category=R),
    OpInfo("norm_p3", _norm(3), reduce_samples(), FLOATS + HALVES, category=R, grad_tol={"float32": (1e-4, 1e-5)}),
    OpInfo("norm_p0.5", _norm(0.5), reduce_samples(), FLOATS, category=R, grad_tol={"float32": (1e-4, 1e-5)}),
    OpInfo("norm_p1.5", _norm(1.5), reduce_samples(), FLOATS, category=R),
    OpInfo("norm_p0", _norm(0), reduce_samples(), FLOATS, category=R),
    OpInfo("norm_inf", _norm(INF), reduce_samples(distinct, empty=False), FLOATS + HALVES, category=R),
    OpInfo("norm_-inf", _norm(-INF), reduce_samples(distinct, empty=False), FLOATS, category=R),
    OpInfo("norm_-1", _norm(-1), reduce_samples(low=0.5, high=2, empty=False), FLOATS, category=R),
    OpInfo("norm_zero", lambda m, x, p, **kw: m.norm(x, p, **kw),
           lambda dtype, rng: [Sample((np.zeros((2, 3), dtype=dtype), p), {"dim": 1}, f"zero-p{p}")
                               for p in (2, 1, 3, 1.5, INF)]
           + [Sample((np.array([[0.0, 1.0, -2.0]], dtype=dtype), p), {}, f"some-zero-p{p}") for p in (2, 3, 0.5)],
           FLOATS, gradcheck=False, category=R),
    OpInfo("norm_dtype", lambda m, x, **kw: m.norm(x, dtype=m.float64, **kw), reduce_samples(empty=False),
           ("float32",), category=R),
    # logsumexp
    OpInfo("logsumexp", lambda m, x, dim=(0, -1), **kw: m.logsumexp(x, dim, **kw),
           reduce_samples(full=False), FLOAT_ONLY + INTS + ("bool",), category=R, tol=INT_TO_FLOAT),
    OpInfo("logsumexp_large", lambda m, x, **kw: x.logsumexp(**kw),
           fixed(([[1e4, 1e4 - 1, -1e4], [-5e3, 0.0, 1.0]], {"dim": 1}),
                 ([[1e4, 1e4 - 1, -1e4], [-5e3, 0.0, 1.0]], {"dim": (0, 1), "keepdim": True})),
           FLOATS, category=R),
    OpInfo("logsumexp_inf", lambda m, x, **kw: m.logsumexp(x, **kw),
           fixed(([[-INF, -INF], [INF, 1.0], [INF, -INF], [NAN, 1.0], [-INF, 2.0]], {"dim": 1})),
           FLOATS + HALVES, gradcheck=False, category=R),
    # all / any / count_nonzero
    OpInfo("all", lambda m, x, **kw: m.all(x, **kw), reduce_samples(lambda s, d, r: make(s, d, r, 0, 2)), ALL,
           grad=False, category=R),
    OpInfo("any", lambda m, x, **kw: x.any(**kw), reduce_samples(lambda s, d, r: make(s, d, r, 0, 1.2)), ALL,
           grad=False, category=R),
    OpInfo("count_nonzero", lambda m, x, dim=None, keepdim=False: m.count_nonzero(x, dim),
           reduce_samples(lambda s, d, r: make(s, d, r, 0, 2)), ALL, grad=False, category=R),
    # max / min family (their errors on empty inputs are in the "empty" row)
    OpInfo("amax", lambda m, x, **kw: m.amax(x, **kw), reduce_samples(distinct, empty=False), ALL, category=R),
    OpInfo("amin", lambda m, x, **kw: x.amin(**kw), reduce_samples(distinct, empty=False), ALL, category=R),
    OpInfo("amax_ties", lambda m, x, **kw: m.amax(x, **kw), ties, FLOATS, gradcheck=False, category=R),
    OpInfo("max_ties", lambda m, x, **kw: m.max(x, **kw)[0] if "dim" in kw else m.max(x), ties, FLOATS,
           gradcheck=False, category=R),
    OpInfo("max", lambda m, x, **kw: m.max(x, **kw), join(dim_samples(distinct, empty=False),
                                                         reduce_samples(distinct, dims=False, tuples=False, empty=False,
                                                                        full_keep=False)),
           ALL, category=R),
    OpInfo("min", lambda m, x, **kw: x.min(**kw), join(dim_samples(distinct, empty=False),
                                                      reduce_samples(distinct, dims=False, tuples=False, empty=False,
                                                                        full_keep=False)),
           ALL, category=R),
    OpInfo("max_nan", lambda m, x, **kw: m.max(x, **kw), fixed(([[1.0, NAN, 3.0, NAN], [1.0, 2.0, 0.0, 2.0]], {}),
                                                              ([[1.0, NAN, 3.0, NAN], [1.0, 2.0, 0.0, -1.0]],
                                                               {"dim": 1})),
           FLOATS, gradcheck=False, category=R),
    OpInfo("max_binary", lambda m, a, b: m.max(a, b), lambda d, rng: [Sample((make((3, 4), d, rng),
                                                                              make((4,), d, rng)))], FLOATS,
           category=R),
    OpInfo("aminmax", lambda m, x, **kw: m.aminmax(x, **kw),
           join(reduce_samples(distinct, tuples=False, empty=False),
                fixed(([[1.0, 2.0], [3.0, 4.0]], {"dim": 0, "keepdim": True}))), ALL, category=R),
    OpInfo("argmax", lambda m, x, **kw: m.argmax(x, **kw), reduce_samples(distinct, tuples=False), ALL, grad=False,
           category=R),
    OpInfo("argmin", lambda m, x, **kw: x.argmin(**kw), reduce_samples(distinct, tuples=False), NUM, grad=False,
           category=R),
    OpInfo("argmax_keepdim", lambda m, x: m.argmax(x, keepdim=True), FULL_ONLY, FLOATS, grad=False, category=R),
    # median / mode / quantile
    OpInfo("median", lambda m, x, **kw: m.median(x, **kw), join(dim_samples(distinct, empty=False),
                                                               reduce_samples(distinct, dims=False, tuples=False,
                                                                              full_keep=False)),
           NUM + ("bool",), category=R),
    OpInfo("median_ties", lambda m, x, **kw: m.median(x), ties, FLOATS, gradcheck=False, category=R),
    OpInfo("median_nan", lambda m, x, **kw: m.median(x, **kw),
           fixed(([[NAN, 1.0, NAN], [1.0, 3.0, 2.0]], {"dim": 1}), ([[NAN, 1.0, NAN], [1.0, 3.0, 2.0]], {})),
           FLOATS, gradcheck=False, category=R),
    OpInfo("nanmedian", lambda m, x, **kw: x.nanmedian(**kw), dim_samples(distinct, empty=False),
           FLOATS + HALVES + INTS, category=R),
    OpInfo("nanmedian_nan", lambda m, x, **kw: m.nanmedian(x, **kw),
           fixed(([[NAN, NAN, NAN], [1.0, NAN, 2.0], [4.0, NAN, 3.0]], {"dim": 1}),
                 ([[1.0, NAN, 2.0], [4.0, NAN, 3.0]], {})), FLOATS + HALVES, gradcheck=False, category=R),
    OpInfo("mode", lambda m, x, **kw: m.mode(x, **kw), join(dim_samples(mode_values, empty=False),
                                                           fixed(([3, 1, 3, 1, 2, 2], {}), ([[1.0, 2.0, 1.0]], {}),
                                                                 ([[3, 1, 1, 3, 2], [5, 5, 5, 1, 1]], {"dim": 1}))),
           NUM + ("bool",), gradcheck=False, category=R),
    # torch's mode orders NaNs as std::sort leaves them (unspecified); only an unambiguous case is compared
    OpInfo("mode_nan", lambda m, x, **kw: x.mode(**kw), fixed(([1.0, NAN, 3.0, NAN], {})), FLOATS, gradcheck=False,
           category=R),
    OpInfo("quantile", _quantile, quantile_samples(distinct), FLOATS + ("int64",), category=R),
    OpInfo("quantile_q", lambda m, x, q, **kw: m.quantile(x, q, **kw), quantile_q_grad, FLOATS, category=R),
    OpInfo("quantile_nan", _quantile, fixed(([1.0, NAN, 2.0], {"q": 0.5}),
                                            ([[1.0, NAN, 2.0], [3.0, 1.0, 2.0]], {"q": [0.25, 0.5], "dim": 1})),
           FLOATS, gradcheck=False, category=R),
    OpInfo("nanquantile", _nanquantile, join(quantile_samples(distinct), fixed(
        ([[1.0, NAN, 2.0, 7.0], [NAN, NAN, NAN, NAN]], {"q": [0.3, 0.8], "dim": 1}),
        ([[1.0, NAN, 2.0, 7.0], [NAN, 4.0, NAN, NAN]], {"q": 0.5, "dim": 1, "interpolation": "midpoint"}))),
        FLOATS, gradcheck=False, category=R),
    OpInfo("empty", lambda m, x, op, **kw: getattr(m, op)(x, **kw), empty_samples, FLOATS + ("int64", "bool"),
           grad=False, category=R),
    # cumulative ops
    OpInfo("cumsum", lambda m, x, **kw: m.cumsum(x, **kw), cum_samples(), ALL, category=R),
    OpInfo("cumsum_dtype", lambda m, x, **kw: x.cumsum(dtype=m.float64, **kw), cum_samples(), ("float16", "int32"),
           category=R),
    OpInfo("cumprod", lambda m, x, **kw: m.cumprod(x, **kw), cum_samples(low=0.5, high=1.5), NUM + ("bool",),
           category=R),
    OpInfo("cumprod_zeros", lambda m, x, **kw: x.cumprod(**kw), cum_samples(with_zeros), FLOATS, category=R,
           grad_tol={"float32": (1e-4, 1e-4)}),
    OpInfo("cummax", lambda m, x, **kw: m.cummax(x, **kw), cum_samples(distinct), ALL, category=R),
    OpInfo("cummin", lambda m, x, **kw: x.cummin(**kw), cum_samples(distinct), ALL, category=R),
    OpInfo("cummax_ties", lambda m, x, **kw: m.cummax(x, **kw),
           fixed(([1.0, 3.0, 3.0, 2.0, 3.0], {"dim": 0}), ([[1.0, NAN, 3.0, NAN]], {"dim": 1}),
                 ([[3.0, 1.0, 1.0, 2.0, 1.0]], {"dim": 1})), FLOATS, gradcheck=False, category=R),
    OpInfo("cummin_ties", lambda m, x, **kw: m.cummin(x, **kw),
           fixed(([3.0, 1.0, 1.0, 2.0, 1.0], {"dim": 0}), ([[1.0, NAN, 0.0, NAN]], {"dim": 1})), FLOATS,
           gradcheck=False, category=R),
    OpInfo("logcumsumexp", lambda m, x, **kw: m.logcumsumexp(x, **kw), cum_samples(), FLOATS + HALVES + INTS,
           category=R),
    OpInfo("logcumsumexp_edge", lambda m, x, **kw: x.logcumsumexp(**kw),
           fixed(([[-1e4, 0.0, 1e4, 1e4 - 1], [-INF, -INF, 1.0, 2.0]], {"dim": 1}),
                 ([[-INF, -INF, 1.0, INF, 2.0]], {"dim": 1})),
           FLOATS, gradcheck=False, category=R),
    OpInfo("diff", lambda m, x, *extra, **kw: m.diff(x, prepend=extra[0] if extra else None,
                                                     append=extra[1] if extra else None, **kw), diff_samples, NUM + ("bool",), category=R),
    # softmax family
    OpInfo("softmax", lambda m, x, **kw: m.softmax(x, **kw), softmax_samples, FLOAT_ONLY + INTS, category=R),
    OpInfo("softmax_method_dtype", lambda m, x, **kw: x.softmax(dtype=m.float64, **kw), softmax_samples,
           ("float16", "float32", "int64"), tol=INT_TO_FLOAT, category=R),
    OpInfo("softmax_edge", lambda m, x, **kw: m.softmax(x, **kw), softmax_edge, FLOATS + HALVES, gradcheck=False,
           category=R),
    OpInfo("log_softmax", lambda m, x, **kw: m.log_softmax(x, **kw), softmax_samples, FLOAT_ONLY + INTS,
           category=R),
    OpInfo("log_softmax_method_dtype", lambda m, x, **kw: x.log_softmax(dtype=m.float64, **kw), softmax_samples,
           ("float32", "bfloat16"), category=R),
    OpInfo("log_softmax_edge", lambda m, x, **kw: m.log_softmax(x, **kw), softmax_edge, FLOATS + HALVES,
           gradcheck=False, category=R),
    OpInfo("softmin", lambda m, x, **kw: (torch.nn.functional.softmin if m is torch else ember_softmin)(x, **kw),
           softmax_samples, FLOAT_ONLY, category=R),
]
