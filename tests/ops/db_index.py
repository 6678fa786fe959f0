"""Indexing ops: gather/scatter, index_*, masked_*, take/put, where, nonzero, and getitem/setitem patterns."""
import numpy as np

from .opinfo import FLOATS, OpInfo, Sample, make

DATA = FLOATS + ("bfloat16", "int64", "bool")
NUM = FLOATS + ("bfloat16", "int64")


def arr(shape, dtype, rng, low=-3.0, high=3.0):
    return np.asarray(make(shape, dtype, rng, low, high))


def idx(rng, high, shape):
    """int64 indices in [0, high), repeats allowed."""
    return np.asarray(rng.integers(0, max(high, 1), size=shape), dtype=np.int64)


def distinct(rng, n, shape, dim=0):
    """int64 indices in [0, n) of ``shape``, distinct along ``dim`` (so that writes never collide)."""
    full = list(shape)
    full[dim] = n
    perm = np.argsort(rng.random(full), axis=dim)
    return np.take(perm, np.arange(shape[dim]), axis=dim).astype(np.int64)


def zero_d(value=0):
    return np.asarray(value, dtype=np.int64)


def op(name, fn, samples, dtypes=DATA, **kw):
    return OpInfo(name, fn, samples, dtypes, category="index", **kw)


# -- gather / scatter ------------------------------------------------------------------------------------------------
def gather_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (2, 4))), name="dim0"),
            Sample((arr((3, 4), dtype, rng), 1, idx(rng, 4, (2, 3))), name="dim1-smaller"),
            Sample((arr((2, 3, 4), dtype, rng), -1, idx(rng, 4, (2, 3, 5))), name="dim-1-longer"),
            Sample((arr((), dtype, rng), 0, zero_d()), name="0d"),
            Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0, 4))), name="empty-index"),
            Sample((arr((0, 3), dtype, rng), 1, idx(rng, 3, (0, 2))), name="empty")]


def scatter_samples(dtype, rng):
    """Distinct targets: plain scatter writes are unordered in torch when indices repeat."""
    return [Sample((arr((3, 4), dtype, rng), 0, distinct(rng, 3, (2, 4)), arr((2, 4), dtype, rng)), name="dim0"),
            Sample((arr((3, 4), dtype, rng), 1, distinct(rng, 4, (2, 3), 1), arr((2, 3), dtype, rng)), name="dim1"),
            Sample((arr((2, 3, 4), dtype, rng), -1, distinct(rng, 4, (2, 3, 2), 2), arr((2, 3, 2), dtype, rng)),
                   name="3d"),
            Sample((arr((), dtype, rng), 0, zero_d(), arr((), dtype, rng)), name="0d"),
            Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0, 4)), arr((0, 4), dtype, rng)), name="empty")]


def scatter_value_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (2, 4))), name="dim0"),
            Sample((arr((3, 4), dtype, rng), 1, idx(rng, 4, (3, 2))), name="dim1"),
            Sample((arr((), dtype, rng), 0, zero_d()), name="0d")]


def reduce_samples(low=-3.0, high=3.0):
    """Repeated targets, an index longer than self along dim, a zero in src (prod's special case)."""
    def samples(dtype, rng):
        src = arr((4, 4), dtype, rng, low, high)
        src[1, 2] = 0
        return [Sample((arr((3, 4), dtype, rng, low, high), 0, idx(rng, 3, (4, 4)), src), name="dim0"),
                Sample((arr((3, 4), dtype, rng, low, high), 1, idx(rng, 2, (3, 3)), arr((3, 3), dtype, rng, low,
                                                                                        high)), name="dim1"),
                Sample((arr((2, 3, 2), dtype, rng, low, high), -2, idx(rng, 3, (2, 4, 2)),
                        arr((2, 4, 2), dtype, rng, low, high)), name="3d"),
                Sample((arr((), dtype, rng, low, high), 0, zero_d(), arr((), dtype, rng, low, high)), name="0d"),
                Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0, 4)), arr((0, 4), dtype, rng)), name="empty")]
    return samples


def scatter_reduce_row(reduce, include_self):
    return op(f"scatter_reduce_{reduce}{'' if include_self else '_noself'}",
              lambda m, x, d, i, s: m.scatter_reduce(x, d, i, s, reduce, include_self=include_self),
              reduce_samples(0.5, 2.0) if reduce == "prod" else reduce_samples(), NUM)


# -- index_* ---------------------------------------------------------------------------------------------------------
def index_select_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), 0, np.array([2, 0, 2])), name="dim0"),
            Sample((arr((3, 4), dtype, rng), -1, idx(rng, 4, (5,))), name="dim1"),
            Sample((arr((3, 4), dtype, rng), 1, zero_d(3)), name="0d-index"),
            Sample((arr((), dtype, rng), 0, np.array([0])), name="0d"),
            Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0,))), name="empty-index"),
            Sample((arr((3, 4), dtype, rng), 1, np.array([1, 3], dtype=np.int32)), name="int32")]


def index_add_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), 0, np.array([2, 0, 2, 1, 2]), arr((5, 4), dtype, rng)), name="dim0"),
            Sample((arr((3, 4), dtype, rng), 1, np.array([3, 1]), arr((3, 2), dtype, rng)), name="dim1"),
            Sample((arr((2, 3, 4), dtype, rng), -1, np.array([0, 0]), arr((2, 3, 2), dtype, rng)), name="3d"),
            Sample((arr((), dtype, rng), 0, np.array([0]), arr((), dtype, rng)), name="0d"),
            Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0,)), arr((0, 4), dtype, rng)), name="empty")]


def index_copy_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), 0, np.array([2, 0]), arr((2, 4), dtype, rng)), name="dim0"),
            Sample((arr((3, 4), dtype, rng), 1, np.array([3, 1, 0]), arr((3, 3), dtype, rng)), name="dim1"),
            Sample((arr((), dtype, rng), 0, np.array([0]), arr((), dtype, rng)), name="0d"),
            Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0,)), arr((0, 4), dtype, rng)), name="empty")]


def index_fill_samples(tensor_value):
    def samples(dtype, rng):
        value = (lambda: arr((), dtype, rng)) if tensor_value else (lambda: 2.5 if dtype != "bool" else True)
        return [Sample((arr((3, 4), dtype, rng), 0, np.array([2, 0, 2]), value()), name="dim0"),
                Sample((arr((3, 4), dtype, rng), 1, np.array([-1 if not tensor_value else 3]), value()),
                       name="dim1-negative"),  # (torch's backward fails on negative indices with a tensor value)
                Sample((arr((), dtype, rng), 0, np.array([0]), value()), name="0d"),
                Sample((arr((3, 4), dtype, rng), 0, idx(rng, 3, (0,)), value()), name="empty")]
    return samples


def index_reduce_samples(dtype, rng):
    lo, hi = (0.5, 2.0) if dtype != "int64" else (-3, 3)
    return [Sample((arr((3, 4), dtype, rng, lo, hi), 0, np.array([2, 0, 2, 2]), arr((4, 4), dtype, rng, lo, hi)),
                   name="dim0"),
            Sample((arr((3, 4), dtype, rng, lo, hi), 1, np.array([1, 1]), arr((3, 2), dtype, rng, lo, hi)),
                   name="dim1"),
            Sample((arr((3, 4), dtype, rng, lo, hi), 0, idx(rng, 3, (0,)), arr((0, 4), dtype, rng)), name="empty")]


def index_put_samples(accumulate):
    def samples(dtype, rng):
        i0 = idx(rng, 3, (5,)) if accumulate else distinct(rng, 3, (2,))
        n = len(i0)
        i1 = idx(rng, 4, (n,)) if accumulate else distinct(rng, 4, (n,))
        return [Sample((arr((3, 4), dtype, rng), (i0,), arr((n, 4), dtype, rng)), name="rows"),
                Sample((arr((3, 4), dtype, rng), (i0,), arr((4,), dtype, rng)), name="rows-broadcast"),
                Sample((arr((3, 4), dtype, rng), (i0, i1), arr((n,), dtype, rng)),
                       name="points"),
                Sample((arr((3, 4), dtype, rng), (arr((3, 4), "bool", rng),), arr((), dtype, rng)), name="mask"),
                Sample((arr((3, 4), dtype, rng), (idx(rng, 3, (0,)),), arr((0, 4), dtype, rng)), name="empty")]
    return samples


# -- masked ----------------------------------------------------------------------------------------------------------
def masked_samples(value):
    def samples(dtype, rng):
        v = value(dtype, rng)
        return [Sample((arr((3, 4), dtype, rng), arr((3, 4), "bool", rng), v()), name="same"),
                Sample((arr((3, 4), dtype, rng), arr((4,), "bool", rng), v()), name="mask-broadcast"),
                Sample((arr((4,), dtype, rng), arr((3, 4), "bool", rng), v()), name="input-broadcast"),
                Sample((arr((), dtype, rng), np.asarray(True), v()), name="0d"),
                Sample((arr((0, 4), dtype, rng), arr((0, 4), "bool", rng), v()), name="empty")]
    return samples


def _number(dtype, rng):
    return lambda: {"bool": True, "int64": 7}.get(dtype, -1.5)


def _tensor0d(dtype, rng):
    return lambda: arr((), dtype, rng)


def masked_select_samples(dtype, rng):
    return [Sample(s.args[:2], name=s.name) for s in masked_samples(_number)(dtype, rng)]


def masked_scatter_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), arr((3, 4), "bool", rng), arr((12,), dtype, rng)), name="same"),
            Sample((arr((3, 4), dtype, rng), arr((4,), "bool", rng), arr((4, 4), dtype, rng)), name="mask-broadcast"),
            Sample((arr((4,), dtype, rng), arr((3, 4), "bool", rng), arr((3, 4), dtype, rng)),
                   name="input-broadcast"),
            Sample((arr((), dtype, rng), np.asarray(True), arr((2,), dtype, rng)), name="0d"),
            Sample((arr((0, 4), dtype, rng), arr((0, 4), "bool", rng), arr((3,), dtype, rng)), name="empty")]


# -- take / put / where / nonzero --------------------------------------------------------------------------------------
def take_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), np.asarray(rng.integers(-12, 12, (2, 3)))), name="2d"),
            Sample((arr((), dtype, rng), np.array([0, -1, 0])), name="0d"),
            Sample((arr((3, 4), dtype, rng), zero_d(5)), name="0d-index"),
            Sample((arr((3, 4), dtype, rng), idx(rng, 3, (0,))), name="empty")]


def take_along_dim_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), idx(rng, 12, (5,))), name="flat"),
            Sample((arr((3, 4), dtype, rng), idx(rng, 4, (3, 2)), 1), name="dim1"),
            Sample((arr((3, 4), dtype, rng), idx(rng, 4, (1, 2)), -1), name="broadcast-index"),
            Sample((arr((3, 1), dtype, rng), idx(rng, 3, (2, 5)), 0), name="broadcast-input"),
            Sample((arr((3, 4), dtype, rng), idx(rng, 3, (0, 4)), 0), name="empty")]


def put_samples(accumulate):
    def samples(dtype, rng):
        i = np.asarray(rng.integers(-12, 12, (2, 3))) if accumulate else rng.permutation(12)[:6].reshape(2, 3)
        return [Sample((arr((3, 4), dtype, rng), i.astype(np.int64), arr((6,), dtype, rng)), name="2d"),
                Sample((arr((), dtype, rng), np.array([0]), arr((1,), dtype, rng)), name="0d"),
                Sample((arr((3, 4), dtype, rng), idx(rng, 3, (0,)), arr((0,), dtype, rng)), name="empty")]
    return samples


def where_samples(dtype, rng):
    scalar = {"bool": False, "int64": 3}.get(dtype, 2.5)
    return [Sample((arr((3, 4), "bool", rng), arr((3, 4), dtype, rng), arr((3, 4), dtype, rng)), name="same"),
            Sample((arr((4,), "bool", rng), arr((3, 1), dtype, rng), arr((), dtype, rng)), name="broadcast"),
            Sample((arr((3, 4), "bool", rng), arr((3, 4), dtype, rng), scalar), name="scalar-other"),
            Sample((arr((3, 4), "bool", rng), 1.5, arr((3, 4), dtype, rng)), name="float-input"),
            Sample((np.asarray(True), arr((), dtype, rng), arr((), dtype, rng)), name="0d"),
            Sample((arr((0, 4), "bool", rng), arr((0, 4), dtype, rng), arr((4,), dtype, rng)), name="empty")]


def where_promote_samples(dtype, rng):
    return [Sample((arr((3, 4), "bool", rng), arr((3, 4), dtype, rng), arr((4,), "float64", rng)), name="f64"),
            Sample((arr((3, 4), "bool", rng), arr((3, 4), dtype, rng), arr((), "int32", rng)), name="int32-0d"),
            Sample((arr((3, 4), "bool", rng), arr((3, 4), "float32", rng), arr((3, 4), dtype, rng)), name="f32")]


def nonzero_samples(dtype, rng):
    def sparse(shape):
        return np.asarray(rng.integers(-1, 2, size=shape)).astype(arr((), dtype, rng).dtype)
    return [Sample((sparse((3, 4)),), name="2d"), Sample((sparse((5,)),), name="1d"),
            Sample((sparse(()),), name="0d"), Sample((np.ones((), arr((), dtype, rng).dtype),), name="0d-one"),
            Sample((sparse((0, 3)),), name="empty"), Sample((sparse((2, 3, 2)),), name="3d")]


# -- getitem / setitem -------------------------------------------------------------------------------------------------
def x_only(*shapes):
    def samples(dtype, rng):
        return [Sample((arr(s, dtype, rng),), name=str(s)) for s in shapes]
    return samples


def with_mask(dtype, rng):
    return [Sample((arr((3, 4, 2), dtype, rng), arr((3, 4), "bool", rng)), name="2d-mask"),
            Sample((arr((3, 4, 2), dtype, rng), arr((3,), "bool", rng)), name="1d-mask"),
            Sample((arr((), dtype, rng), np.asarray(True)), name="0d")]


def with_index(dtype, rng):
    return [Sample((arr((3, 4, 2), dtype, rng), idx(rng, 3, (2, 2))), name="2d-index"),
            Sample((arr((3, 4, 2), dtype, rng), np.asarray(rng.integers(-3, 3, (4,)))), name="negative")]


def with_value(value_shape):
    def samples(dtype, rng):
        return [Sample((arr((3, 3, 4), dtype, rng), arr(value_shape, dtype, rng)), name=str(value_shape))]
    return samples


def setter(key):
    def fn(m, x, v):
        y = x.clone()
        y[key] = v
        return y
    return fn


def mask_setter(m, x, mask, v):
    y = x.clone()
    y[mask] = v
    return y


def mask_set_samples(dtype, rng):
    return [Sample((arr((3, 4), dtype, rng), arr((3, 4), "bool", rng), arr((), dtype, rng)), name="0d-value"),
            Sample((arr((3, 4), dtype, rng), arr((3,), "bool", rng), arr((4,), dtype, rng)), name="row-value")]


OPS = [
    op("gather", lambda m, x, d, i: m.gather(x, d, i), gather_samples),
    op("scatter", lambda m, x, d, i, s: m.scatter(x, d, i, s), scatter_samples),
    op("scatter_value", lambda m, x, d, i: m.scatter(x, d, i, value=1.5), scatter_value_samples),
    op("scatter_reduce_add", lambda m, x, d, i, s: m.scatter(x, d, i, s, reduce="add"), reduce_samples(), NUM,
       grad=False),
    op("scatter_reduce_multiply", lambda m, x, d, i: x.scatter(d, i, 2.0, reduce="multiply"),
       scatter_value_samples, NUM, grad=False),
    op("scatter_add", lambda m, x, d, i, s: m.scatter_add(x, d, i, s), reduce_samples(), NUM),
    *[scatter_reduce_row(r, s) for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)],
    op("index_select", lambda m, x, d, i: m.index_select(x, d, i), index_select_samples),
    op("index_add", lambda m, x, d, i, s: m.index_add(x, d, i, s), index_add_samples, NUM),
    op("index_add_alpha", lambda m, x, d, i, s: x.index_add(d, i, s, alpha=2), index_add_samples, NUM),
    op("index_copy", lambda m, x, d, i, s: m.index_copy(x, d, i, s), index_copy_samples),
    op("index_fill", lambda m, x, d, i, v: m.index_fill(x, d, i, v), index_fill_samples(False)),
    op("index_fill_tensor", lambda m, x, d, i, v: x.index_fill(d, i, v), index_fill_samples(True)),
    *[op(f"index_reduce_{r}", lambda m, x, d, i, s, r=r: x.index_reduce(d, i, s, r), index_reduce_samples, NUM)
      for r in ("prod", "mean", "amax", "amin")],
    op("index_put", lambda m, x, i, v: m.index_put(x, i, v), index_put_samples(False)),
    op("index_put_accumulate", lambda m, x, i, v: x.index_put(i, v, accumulate=True), index_put_samples(True), NUM),
    op("masked_fill", lambda m, x, mask, v: m.masked_fill(x, mask, v), masked_samples(_number)),
    op("masked_fill_tensor", lambda m, x, mask, v: x.masked_fill(mask, v), masked_samples(_tensor0d)),
    op("masked_select", lambda m, x, mask: m.masked_select(x, mask), masked_select_samples),
    op("masked_scatter", lambda m, x, mask, s: x.masked_scatter(mask, s), masked_scatter_samples),
    op("take", lambda m, x, i: m.take(x, i), take_samples),
    op("take_along_dim", lambda m, x, i, *d: m.take_along_dim(x, i, *d), take_along_dim_samples),
    op("put", lambda m, x, i, s: x.put(i, s), put_samples(False)),
    op("put_accumulate", lambda m, x, i, s: x.put(i, s, accumulate=True), put_samples(True), NUM),
    op("where", lambda m, c, x, y: m.where(c, x, y), where_samples),
    op("where_promote", lambda m, c, x, y: m.where(c, x, y), where_promote_samples, FLOATS + ("bfloat16", "int64"),
       gradcheck=False),  # mixes in float32 inputs
    op("where_method", lambda m, c, x, y: x.where(c, y), lambda d, r: where_samples(d, r)[:3]),
    op("where_single", lambda m, x: m.where(x), nonzero_samples, grad=False),
    op("nonzero", lambda m, x: m.nonzero(x), nonzero_samples, grad=False),
    op("nonzero_tuple", lambda m, x: m.nonzero(x, as_tuple=True), nonzero_samples, grad=False),
    op("argwhere", lambda m, x: m.argwhere(x), nonzero_samples, grad=False),
    op("getitem_basic", lambda m, x: x[1:, None, ::2, -1], x_only((3, 4, 5), (0, 4, 5))),
    op("getitem_ellipsis", lambda m, x: x[..., 1, None], x_only((3, 4, 5), (2,))),
    op("getitem_advanced_front", lambda m, x: x[[0, 2], :, [1, 1]], x_only((3, 4, 5))),
    op("getitem_advanced_adjacent", lambda m, x: x[:, [0, 2, 1, 0], [1, 0, 3, 1]], x_only((3, 4, 5))),
    op("getitem_int_and_list", lambda m, x: x[1, :, [2, 0, 2]], x_only((3, 4, 5))),
    op("getitem_bool_scalars", lambda m, x: x[True, ..., False], x_only((3, 4), ())),
    op("getitem_0d", lambda m, x: x[None, ...], x_only(())),
    op("getitem_mask", lambda m, x, mask: x[mask], with_mask),
    op("getitem_index_tensor", lambda m, x, i: x[i, 1:], with_index),
    op("setitem_basic", setter((0, slice(1, None))), with_value((2, 4))),
    op("setitem_broadcast", setter((slice(None), 1)), with_value((1, 4))),
    op("setitem_advanced", setter(([0, 2], slice(None), [1, 3])), with_value((2, 3))),
    op("setitem_mask", mask_setter, mask_set_samples),
]
