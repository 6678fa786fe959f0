"""Keeps the memory of freed large arrays in the process, for the next ones (glibc's malloc, on Linux).

NumPy takes array memory from malloc. glibc gives an allocation above its mmap threshold (128 KiB, raised up to the
largest block freed since) fresh pages from the OS, and returns freed memory at the top of its heap above the trim
threshold; the next array of that size then faults its pages in again, one by one. A training step frees and
allocates the same large temporaries over and over: on a GPT step (tens of arrays of 2-8 MB) the faults cost 13% of
the time, and on a small CNN 17%. So ember raises both thresholds once, at import, as a caching allocator would:
arrays up to 32 MiB come from the heap and up to 256 MiB of freed memory stays there for reuse. A process that set
either threshold itself (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``) keeps its own.
"""
import ctypes
import os

MMAP_THRESHOLD = 32 << 20  # glibc's largest allowed on 64-bit systems
TRIM_THRESHOLD = 256 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


def keep_freed_memory():
    """Raises glibc's mmap and trim thresholds unless the environment sets them; returns whether it did."""
    if any(v in os.environ for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False
    if "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, ValueError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
