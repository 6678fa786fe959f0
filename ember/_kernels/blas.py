"""Products on the intra-op threads, each on one thread of NumPy's BLAS.

OpenBLAS splits every GEMM above ~0.26 M multiply-adds over threads of its own. For a small product the hand-off
costs more than it saves, and on a busy machine each one waits for a descheduled thread: a batch of 64
(128 x 64 x 128) products (NumPy's matmul runs one GEMM per matrix) takes 10x longer on two threads than on one.
And after each product its threads spin for ~0.1 s, each taking a core from the intra-op threads that run the
elementwise work in between (a GPT training step: 15% slower). So ops run their products with ``one_thread()``,
spreading a batch, or the blocks of one large product (``matmul``), over the intra-op threads themselves. Only
where nothing ran on the intra-op threads of late (``spread``) are medium products left to the BLAS's own threads:
spinning, they take up a run of products sooner than the intra-op threads wake (which can take a millisecond, so
``spread`` is for work of several).
"""
import ctypes
import os
import time

import numpy as np

from . import mkl
from .parallel import chunks, get_num_threads, parallel_map

SMALL = 1 << 23  # multiply-adds below which a product runs on one BLAS thread (~0.1 ms)
LARGE = 1 << 27  # multiply-adds from which a product always runs on the intra-op threads (~1 ms)
_RECENT = 1.0  # seconds after elementwise work on the intra-op threads during which products keep off BLAS threads
_last_pool_use = -_RECENT
_fns = None  # (get, set) of OpenBLAS's thread count, () when unavailable


def _openblas():
    """OpenBLAS's (get_num_threads, set_num_threads) as NumPy loaded it, or () if NumPy uses another BLAS."""
    here = os.path.dirname(os.path.dirname(np.__file__))
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line}
    except OSError:
        return ()
    # NumPy's own copy first (SciPy may load another)
    for path in sorted(paths, key=lambda p: not p.startswith(here + os.sep + "numpy")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"),
                               ("openblas", "")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                return get, put
    return ()


class one_thread:
    """Context manager: NumPy's BLAS on one thread inside (unless ``when`` is false); its count restored after."""
    __slots__ = ("when", "before")

    def __init__(self, when=True):
        self.when, self.before = when, None

    def __enter__(self):
        global _fns
        if not self.when:
            return self
        if _fns is None:
            _fns = _openblas()
        if _fns:
            self.before = _fns[0]()
            if self.before != 1:
                _fns[1](1)
        return self

    def __exit__(self, *exc):
        if self.before is not None and self.before != 1:
            _fns[1](self.before)


def spread(fn, items, threads=True):
    """``[fn(item) for item in items]`` on the intra-op threads (if ``threads``: the work should be worth waking
    them, several milliseconds), each product inside on one BLAS thread."""
    global _last_pool_use
    items = list(items)
    if len(items) < 2 or not threads or get_num_threads() == 1:
        return [fn(item) for item in items]
    _last_pool_use = time.monotonic()
    with one_thread():
        return parallel_map(fn, items)


def matmul(a, b):
    """``a @ b`` of 2-D NumPy arrays: a large product cut into blocks of rows of ``a`` or columns of ``b`` (the
    longer side, so that each block's packed operand stays small), or into pieces of a long inner dimension whose
    products are summed, on the intra-op threads, each on one BLAS thread; a medium one on the BLAS's threads if the
    intra-op threads were idle of late, else on one, as a small one."""
    m, k = a.shape
    n = b.shape[1]
    threads, macs = get_num_threads(), m * k * n
    if threads == 1 or max(m, n) < 32 * threads or macs < LARGE:
        alone = macs < SMALL or time.monotonic() - _last_pool_use < _RECENT
        y = mkl.gemm(a, b, 1 if alone else threads)
        if y is not None:
            return y
        with one_thread(alone):
            return a @ b
    if k >= 2 * max(m, n):  # a long inner dimension (a weight gradient's tokens): products over pieces of it, summed
        parts = spread(lambda r: _product(a[:, r[0]:r[1]], b[r[0]:r[1]]), chunks(k, threads, align=16))
        for p in parts[1:]:
            parts[0] += p
        return parts[0]
    out = np.empty((m, n), np.result_type(a, b))
    if m >= n:
        part = lambda r: _product(a[r[0]:r[1]], b, out[r[0]:r[1]])
    else:
        part = lambda r: _product(a, b[:, r[0]:r[1]], out[:, r[0]:r[1]])
    spread(part, chunks(max(m, n), 2 * threads, align=16))
    return out


def _product(a, b, out=None):
    """``a @ b`` on one thread (inside ``spread``): MKL's where installed, else NumPy's."""
    y = mkl.gemm(a, b, 1, out)
    return np.matmul(a, b, out=out) if y is None else y
