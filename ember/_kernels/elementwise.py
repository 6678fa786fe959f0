"""Elementwise ufuncs on large CPU arrays, computed in chunks on the intra-op threads.

``unary(fn, x)`` is ``fn(x)`` and ``binary(fn, a, b)`` is ``fn(a, b)``: the plain call is the reference, and what
runs for CuPy arrays, small or non-contiguous inputs, or one thread. Each chunk runs the same NumPy loop on its
slice, writing into one output, so the result is bitwise that of the plain call.
"""
import numpy as np

from .parallel import chunks, get_num_threads, parallel_map

_ndarray = np.ndarray
# Elements below which handing chunks to threads costs more than it saves: waking them takes 10-30 us on an idle
# machine but up to a millisecond on a busy one, where a step of many sub-millisecond ops then loses.
MIN_SIZE = 1 << 20
_ALIGN = 1024  # chunk starts in elements: 4-8 KiB apart
_GRAIN = 1 << 15  # elements per chunk at least: each costs a few microseconds of Python
_BLOCK = 1 << 17  # elements per block of a formula of several passes: its temporaries stay in the CPU (L2) cache,
# and the blocks are long enough that threads running them rarely wait for each other (GELU on 2M elements: 6.6 ms
# on 2 threads against 10.3 with blocks of 32K)


def unary(fn, x):
    """``fn(x)`` for a single-output NumPy ufunc (also scipy.special's) of one array."""
    if x.__class__ is not _ndarray or x.size < MIN_SIZE:
        return fn(x)
    return _chunked(fn, (x,))


def binary(fn, a, b):
    """``fn(a, b)`` for a single-output NumPy ufunc of two arrays (broadcasting) or an array and a Python number."""
    if (a.__class__ is _ndarray and a.size >= MIN_SIZE) or (b.__class__ is _ndarray and b.size >= MIN_SIZE):
        return _chunked(fn, (a, b))
    return fn(a, b)


def _chunked(fn, args):
    """``fn(*args)`` computed in chunks on the intra-op threads when the arrays among ``args`` are CPU arrays in C
    order (the plain call keeps other layouts: NumPy's 'K' order)."""
    big = None
    for a in args:
        if a.__class__ is _ndarray:
            if big is None or a.size > big.size:
                big = a
        elif hasattr(a, "shape"):  # a CuPy array or a NumPy scalar
            return fn(*args)
    if get_num_threads() == 1:
        return fn(*args)
    arrays = [a for a in args if a.__class__ is _ndarray]
    if not all(a.flags.c_contiguous for a in arrays):
        return fn(*args)
    shape = big.shape if all(a.shape == big.shape for a in arrays) else np.broadcast_shapes(*(a.shape for a in arrays))
    if 0 in shape:
        return fn(*args)
    dtype = fn.resolve_dtypes(tuple(a.dtype if a.__class__ is _ndarray else np.dtype(bool) if a.__class__ is bool
                                    else type(a) for a in args) + (None,))[-1]
    out = np.empty(shape, dtype)
    if all(a.shape == shape for a in arrays):  # no broadcasting: split the flat memory evenly
        flat = [a.reshape(-1) if a.__class__ is _ndarray else a for a in args]
        out_flat = out.reshape(-1)
        parallel_map(lambda r: fn(*[a[r[0]:r[1]] if a.__class__ is _ndarray else a for a in flat],
                                  out=out_flat[r[0]:r[1]]), chunks(out.size, align=_ALIGN, grain=_GRAIN))
        return out
    d = next((i for i, n in enumerate(shape) if n >= 2 * get_num_threads()), None)
    if d is None:
        return fn(*args)
    # Split along dim d of the output; an input broadcast along d is passed whole.
    lead = [len(shape) - (a.ndim if a.__class__ is _ndarray else 0) for a in args]

    def part(r):
        sl = (slice(None),) * d + (slice(*r),)
        ins = [a[sl[k:]] if a.__class__ is _ndarray and d >= k and a.shape[d - k] != 1 else a
               for a, k in zip(args, lead)]
        fn(*ins, out=out[sl])
    parallel_map(part, chunks(shape[d], grain=-(-_GRAIN * shape[d] // out.size)))
    return out


def blockwise(xp, fn, *arrays, nout=1):
    """Runs ``fn(*arrays, out=outs)``, an elementwise formula over same-shape arrays that writes its ``nout``
    results into ``outs`` (new arrays of the arrays' result type, laid out as the first array's dims ordered by
    stride: channels_last in, channels_last out), and returns ``outs`` (or its one array). On NumPy the formula runs
    block by block, so that its several passes run in cache, the blocks spread over the intra-op threads; the
    result is bitwise that of one call over the whole arrays."""
    a = arrays[0]
    if not a.flags.c_contiguous and a.ndim > 1 and min(a.strides) > 0:
        perm = sorted(range(a.ndim), key=lambda d: -a.strides[d])
        if perm != list(range(a.ndim)):
            inv = np.argsort(perm)
            r = blockwise(xp, fn, *(b.transpose(perm) for b in arrays), nout=nout)
            return tuple(o.transpose(inv) for o in r) if nout > 1 else r.transpose(inv)
    shape = a.shape
    outs = tuple(xp.empty(shape, xp.result_type(*arrays)) for _ in range(nout))
    n = arrays[0].size
    if xp is not np or n <= 2 * _BLOCK:
        fn(*arrays, out=outs)
        return outs if nout > 1 else outs[0]
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    flat_outs = [o.reshape(-1) for o in outs]

    def run(r):
        for i in range(r[0], r[1], _BLOCK):
            j = min(i + _BLOCK, r[1])
            fn(*(a[i:j] for a in flat), out=tuple(o[i:j] for o in flat_outs))
    bounds = chunks(n, align=_BLOCK) if n >= MIN_SIZE else [(0, n)]
    parallel_map(run, bounds)
    return outs if nout > 1 else outs[0]


def _sigmoid_formula(x, out):
    (o,) = out
    np.negative(x, out=o)
    np.exp(o, out=o)  # overflows to inf for x < -88 (float32): the result is then 0, as torch's
    o += 1
    np.reciprocal(o, out=o)


def sigmoid(xp, x, expit):
    """``1 / (1 + exp(-x))``, torch's formula, on NumPy arrays of floats above a few thousand elements (3x faster
    than scipy's ``expit``, within an ulp of it); ``expit(x)`` otherwise."""
    if x.__class__ is not _ndarray or x.size <= _BLOCK or x.dtype.kind != "f":
        return expit(x)
    return blockwise(xp, _sigmoid_formula, x)
