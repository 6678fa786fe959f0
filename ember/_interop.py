"""The inter-op thread count torch scripts set at start-up. ember runs one op at a time (its threads work inside
ops, :func:`ember.set_num_threads`), so the count is recorded and reported, as torch's, but changes nothing."""
from ._kernels.parallel import get_num_threads

_interop = None


def get_num_interop_threads():
    """The number of threads for inter-op parallelism (by default that of intra-op parallelism)."""
    return get_num_threads() if _interop is None else _interop


def set_num_interop_threads(n):
    """Sets the number of inter-op threads; allowed once per process, as torch."""
    global _interop
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop = n
