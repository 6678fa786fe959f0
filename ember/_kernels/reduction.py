"""Reductions of large CPU arrays, computed in chunks on the intra-op threads and combined.

Each function takes the reduced ``axis`` as a tuple of distinct non-negative dims and returns what the plain NumPy
call does (the reference, and what runs for CuPy arrays, small inputs or one thread). A reduction is split along a
kept dim when one is large enough (each thread writes its slice of the result: the same values as the plain call),
else along a reduced dim, or the flat memory of a full reduction, and the per-chunk results are combined: sums then
differ from the plain call's by rounding only, as each chunk is itself summed pairwise.
"""
import math

import numpy as np

from .parallel import chunks, get_num_threads, parallel_map

_ndarray = np.ndarray
# Elements below which handing chunks to threads costs more than it saves (as for elementwise ops: waking the
# threads can take a millisecond on a busy machine).
MIN_SIZE = 1 << 20
_ALIGN = 1024  # chunk starts of a flat split, in elements
_GRAIN = 1 << 15  # elements per chunk at least: each costs a few microseconds of Python


def _threaded(x):
    return x.__class__ is _ndarray and x.size >= MIN_SIZE and get_num_threads() > 1


def _plan(x, axis):
    """How to split ``x`` reduced over ``axis``: ``(y, dim, kept)``: ``y`` is ``x``, or ``x`` flattened (a full
    reduction of C-contiguous memory), ``dim`` the dim of ``y`` to split and ``kept`` whether it is kept (else it
    is reduced: per-chunk results to combine). None when no dim is long enough."""
    threads = get_num_threads()
    if len(axis) == x.ndim and x.flags.c_contiguous:
        return x.reshape(-1), 0, False
    long = [d for d in range(x.ndim) if x.shape[d] >= 2 * threads]
    if not long:
        return None
    d = max(long, key=lambda k: abs(x.strides[k]))  # the outermost in memory: each chunk reads one block
    if d in axis:
        kept = [k for k in long if k not in axis]
        out_size = math.prod(n for k, n in enumerate(x.shape) if k not in axis)
        if kept and out_size * 16 * threads > x.size:  # per-chunk results would be large: split a kept dim
            d = max(kept, key=lambda k: abs(x.strides[k]))
    return x, d, d not in axis


def _bounds(y, d):
    """Chunks of dim ``d`` of ``y``."""
    return chunks(y.shape[d], align=_ALIGN if y.ndim == 1 else 1, grain=-(-_GRAIN * y.shape[d] // y.size))


def _split(fn, combine, x, axis, keepdims, dtype):
    """``fn(part, axis, out)`` (reducing with kept dims, into ``out`` when given) over chunks of ``x``;
    ``combine(a, b)`` merges partial results of chunks of a reduced dim into ``a``. None when ``x`` cannot be
    split."""
    plan = _plan(x, axis)
    if plan is None:
        return None
    y, d, kept = plan
    ax = (0,) if y is not x else axis
    lead = (slice(None),) * d
    bounds = _bounds(y, d)
    if kept:
        out = np.empty(tuple(1 if i in ax else n for i, n in enumerate(y.shape)), dtype)
        parallel_map(lambda r: fn(y[lead + (slice(*r),)], ax, out[lead + (slice(*r),)]), bounds)
    else:
        parts = parallel_map(lambda r: fn(y[lead + (slice(*r),)], ax, None), bounds)
        out = parts[0]
        for p in parts[1:]:
            combine(out, p)
    if y is not x:
        out = out.reshape((1,) * x.ndim)
    return out if keepdims else out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axis))


def _sum_dtype(x, dtype):
    """The dtype of ``x.sum(dtype=dtype)``: integers and bools accumulate in the platform's (u)int64."""
    if dtype is not None:
        return np.dtype(dtype)
    kind = x.dtype.kind
    if kind in "bi":
        return np.dtype(np.int_) if x.dtype.itemsize <= np.dtype(np.int_).itemsize else x.dtype
    if kind == "u":
        return np.dtype(np.uint) if x.dtype.itemsize <= np.dtype(np.uint).itemsize else x.dtype
    return x.dtype


def _reduce(op, combine):
    """``op.reduce(x, axis, dtype, keepdims=keepdims)`` for NumPy arrays, an array even when 0-d (which spares the
    caller a conversion of NumPy's scalar); threaded when large."""
    reduce = op.reduce

    def part(piece, axis, out, dtype=None):
        return reduce(piece, axis, dtype, out, True)

    def run(x, axis, keepdims, dtype=None):
        if x.size >= MIN_SIZE and get_num_threads() > 1:
            if op is np.add or op is np.multiply:
                dt = _sum_dtype(x, dtype)
            else:
                dt = x.dtype if dtype is None else np.dtype(dtype)
            y = _split(lambda piece, ax, out: part(piece, ax, out, dt), combine, x, axis, keepdims, dt)
            if y is not None:
                return _c_order(y)
        return _c_order(reduce(x, axis, dtype, out=..., keepdims=keepdims))
    return run


def _c_order(y):
    """``y``, a reduction of a permuted array (which NumPy lays out as its input), in C order: the result's layout
    whatever the input's."""
    return y if y.flags.c_contiguous else np.ascontiguousarray(y)


def _combine(op):
    def combine(a, b):
        op(a, b, out=a)
    return combine


_sum = _reduce(np.add, _combine(np.add))
_add_reduce = np.add.reduce
_prod = _reduce(np.multiply, _combine(np.multiply))
_amax = _reduce(np.maximum, _combine(np.maximum))
_amin = _reduce(np.minimum, _combine(np.minimum))
_all = _reduce(np.logical_and, _combine(np.logical_and))
_any = _reduce(np.logical_or, _combine(np.logical_or))


def sum(x, axis, keepdims=False, dtype=None):
    """``x.sum(axis, dtype, keepdims=keepdims)``."""
    if x.__class__ is _ndarray:
        if x.size < MIN_SIZE and x.flags.c_contiguous:  # the common small case, one call
            return _add_reduce(x, axis, dtype, out=..., keepdims=keepdims)
        return _sum(x, axis, keepdims, dtype)
    return x.sum(axis, dtype, None, keepdims)


def prod(x, axis, keepdims=False, dtype=None):
    """``x.prod(axis, dtype, keepdims=keepdims)``."""
    if x.__class__ is _ndarray:
        return _prod(x, axis, keepdims, dtype)
    return x.prod(axis=axis, dtype=dtype, keepdims=keepdims)


def amax(x, axis, keepdims=False):
    """``x.max(axis, keepdims=keepdims)`` (NaN wherever a NaN is reduced)."""
    if x.__class__ is _ndarray:
        return _amax(x, axis, keepdims)
    return x.max(axis=axis, keepdims=keepdims)


def amin(x, axis, keepdims=False):
    """``x.min(axis, keepdims=keepdims)`` (NaN wherever a NaN is reduced)."""
    if x.__class__ is _ndarray:
        return _amin(x, axis, keepdims)
    return x.min(axis=axis, keepdims=keepdims)


def all(x, axis, keepdims=False):
    """``x.all(axis, keepdims=keepdims)``."""
    if x.__class__ is _ndarray:
        return _all(x, axis, keepdims, bool)
    return x.all(axis=axis, keepdims=keepdims)


def any(x, axis, keepdims=False):
    """``x.any(axis, keepdims=keepdims)``."""
    if x.__class__ is _ndarray:
        return _any(x, axis, keepdims, bool)
    return x.any(axis=axis, keepdims=keepdims)


def moments(x, axis):
    """``(mean, m2)`` of ``x`` over ``axis`` (at least one element), with kept dims: the mean and the sum of squared
    deviations from it; each chunk's by two passes over it, combined by Chan et al.'s formula."""
    plan = _plan(x, axis) if _threaded(x) and x.dtype.kind == "f" else None
    if plan is None:
        mean = x.sum(axis, None, None, True) / math.prod(x.shape[d] for d in axis)
        dev = x - mean
        return mean, (dev * dev).sum(axis, None, None, True)
    y, d, kept = plan
    ax = (0,) if y is not x else axis
    lead = (slice(None),) * d
    parts = parallel_map(lambda r: _two_pass(y[lead + (slice(*r),)], ax), _bounds(y, d))
    if kept:
        return np.concatenate([p[1] for p in parts], d), np.concatenate([p[2] for p in parts], d)
    n_a, mean, m2 = parts[0]
    for n_b, mean_b, m2_b in parts[1:]:
        delta = mean_b - mean
        total = n_a + n_b
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (n_a * n_b / total)
        n_a = total
    if y is not x:
        mean, m2 = mean.reshape((1,) * x.ndim), m2.reshape((1,) * x.ndim)
    return mean, m2


def _two_pass(part, axis):
    """``(count, mean, m2)`` of one chunk, with kept dims."""
    n = math.prod(part.shape[d] for d in axis)
    mean = part.sum(axis, None, None, True)
    np.true_divide(mean, n, out=mean)
    dev = np.subtract(part, mean)
    np.multiply(dev, dev, out=dev)
    return n, mean, dev.sum(axis, None, None, True)


def _arg_combine(largest):
    """Merges (values, indices) of a later chunk into an earlier one's: the first maximum (minimum) wins, and NaN
    counts as above (below) every number, as in NumPy's argmax (argmin)."""
    def combine(a, b):
        va, ia = a
        vb, ib = b
        better = (vb > va) if largest else (vb < va)
        if va.dtype.kind in "fc":
            better = (better | np.isnan(vb)) & ~np.isnan(va)
        np.copyto(va, vb, where=better)
        np.copyto(ia, ib, where=better)
    return combine


def _argreduce(x, axis, keepdims, largest):
    find = np.argmax if largest else np.argmin

    def fn(part, ax, out):
        (d,) = ax
        if out is not None:
            return find(part, axis=d, keepdims=True, out=out)
        idx = find(part, axis=d, keepdims=True)
        return np.take_along_axis(part, idx, d), idx

    plan = _plan(x, axis)
    if plan is None:
        return None
    y, d, kept = plan
    ax = (0,) if y is not x else axis
    lead = (slice(None),) * d
    bounds = _bounds(y, d)
    if kept:
        out = np.empty(tuple(1 if i in ax else n for i, n in enumerate(y.shape)), np.intp)
        parallel_map(lambda r: fn(y[lead + (slice(*r),)], ax, out[lead + (slice(*r),)]), bounds)
    else:
        parts = parallel_map(lambda r: fn(y[lead + (slice(*r),)], ax, None), bounds)
        for (start, _), (_, idx) in zip(bounds, parts):
            idx += start
        combine = _arg_combine(largest)
        for p in parts[1:]:
            combine(parts[0], p)
        out = parts[0][1]
        if y is not x:
            out = out.reshape((1,) * x.ndim)
    return out if keepdims else out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axis))


def argmax(x, axis=None, keepdims=False):
    """``numpy.argmax(x, axis, keepdims=keepdims)``: ``axis`` an int, or None for the flat index."""
    return _arg(x, axis, keepdims, True)


def argmin(x, axis=None, keepdims=False):
    """``numpy.argmin(x, axis, keepdims=keepdims)``: ``axis`` an int, or None for the flat index."""
    return _arg(x, axis, keepdims, False)


def _arg(x, axis, keepdims, largest):
    if _threaded(x) and x.dtype.kind != "c":
        if axis is None:
            out = _argreduce(x.reshape(-1), (0,), False, largest) if x.flags.c_contiguous else None
            if out is not None:
                return out.reshape((1,) * x.ndim) if keepdims else out
        else:
            out = _argreduce(x, (axis,), keepdims, largest)
            if out is not None:
                return out
    return (x.argmax if largest else x.argmin)(axis=axis, keepdims=keepdims)
