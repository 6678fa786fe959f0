"""Float GEMMs through Intel's MKL when the ``mkl`` package is installed (the ``ember[mkl]`` extra).

NumPy's OpenBLAS runs a float32 product of 256 x 256 matrices at about 0.7 of the rate torch's MKL reaches on the
same cores; MKL's own ``cblas_sgemm``, called here on NumPy's arrays, closes that gap. MKL runs on GNU OpenMP (as
torch does; without it on the system, NumPy is used): its idle threads sleep within milliseconds, where Intel's
spin for 0.2 s, each taking a core from the intra-op threads. GNU OpenMP's threads do not survive ``fork`` (a
parallel region in the child would wait on them forever), so a child of a process that ran MKL on several threads
uses NumPy. ``gemm`` gives None where MKL is absent or the operands do not suit it, and the caller uses NumPy.
"""
import ctypes
import os

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_GNU = 3  # MKL's code for its GNU OpenMP threading layer
MIN_MACS = 1 << 20  # multiply-adds below which NumPy's call costs less (~64 x 128 x 128)
_routines = None  # {dtype: cblas_?gemm}, empty when MKL is not installed
_set_threads = None  # MKL_Set_Num_Threads_Local
_threaded = False  # whether MKL ran on several threads in this process


def _load():
    """MKL's GEMMs by dtype from the installed ``mkl`` package, or {} without one."""
    global _set_threads
    from importlib import metadata
    try:
        files = metadata.distribution("mkl").files or ()
    except metadata.PackageNotFoundError:
        return {}
    paths = [f.locate() for f in files if f.name.startswith("libmkl_rt.so")]
    try:
        ctypes.CDLL("libgomp.so.1")  # without it MKL would run on Intel's OpenMP
        lib = ctypes.CDLL(str(paths[0]))
    except (IndexError, OSError):
        return {}
    lib.MKL_Set_Threading_Layer(_GNU)  # before any other call into MKL
    routines = {}
    for dtype, name, scalar in ((np.dtype(np.float32), "cblas_sgemm", ctypes.c_float),
                                (np.dtype(np.float64), "cblas_dgemm", ctypes.c_double)):
        fn = getattr(lib, name)
        i, p = ctypes.c_int, ctypes.c_void_p
        fn.argtypes = [i, i, i, i, i, i, scalar, p, i, p, i, scalar, p, i]
        fn.restype = None
        routines[dtype] = fn
    _set_threads = lib.MKL_Set_Num_Threads_Local
    _set_threads.argtypes = [ctypes.c_int]
    os.register_at_fork(after_in_child=_after_fork_in_child)
    return routines


def available():
    """Whether MKL's GEMMs are installed (loads them on the first call)."""
    global _routines
    if _routines is None:
        _routines = _load()
    return bool(_routines)


def _layout(x):
    """(transpose flag, leading dimension) of a 2-D operand MKL reads in place, or None."""
    item = x.itemsize
    s0, s1 = x.strides
    if s1 == item and s0 % item == 0 and s0 // item >= max(1, x.shape[1]):
        return _NO_TRANS, s0 // item
    if s0 == item and s1 % item == 0 and s1 // item >= max(1, x.shape[0]):
        return _TRANS, s1 // item
    return None


def gemm(a, b, threads, out=None):
    """``a @ b`` of two 2-D NumPy arrays of one float dtype on ``threads`` of MKL's threads (into ``out``, rows of
    unit stride, if given), or None where MKL is absent or cannot take them (another dtype, a product below
    ``MIN_MACS``, strides it cannot read)."""
    if _routines is None:
        available()
    fn = _routines.get(a.dtype)
    m, k = a.shape
    n = b.shape[1]
    if fn is None or b.dtype != a.dtype or m * k * n < MIN_MACS:
        return None
    la, lb = _layout(a), _layout(b)
    if la is None or lb is None:
        return None
    if out is None:
        out = np.empty((m, n), a.dtype)
    if threads > 1:
        global _threaded
        _threaded = True
    _set_threads(threads)
    fn(_ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, a.ctypes.data, la[1], b.ctypes.data, lb[1], 0.0, out.ctypes.data,
       out.strides[0] // out.itemsize)
    return out


def _after_fork_in_child():
    global _routines
    if _threaded:
        _routines = {}

