"""CPU kernels beyond one NumPy call: the intra-op thread pool and the chunked elementwise ops and reductions
built on it. Each has a plain NumPy/CuPy reference (the single call) that the tests compare against.

For other ops: ``parallel_map(fn, items)`` runs ``fn`` over ``items`` on the pool's threads, ``chunks(n)`` splits
``range(n)`` into one piece per thread, ``get_num_threads()`` is the pool's size.
"""
from .parallel import chunks, get_num_threads, parallel_map, set_num_threads

__all__ = ["chunks", "get_num_threads", "parallel_map", "set_num_threads"]
