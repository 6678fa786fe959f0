"""Process-wide settings torch has at its top level: float32 matmul precision and deterministic algorithms.

ember's float32 products always run in float32 on NumPy's BLAS, and its CPU ops are deterministic (the intra-op
threads combine their pieces in a fixed order), so both settings are kept and read back, and change nothing.
"""
import warnings

_PRECISIONS = ("highest", "high", "medium")
_warned_once = set()
_precision = "highest"
_deterministic = False
_warn_only = False


def set_float32_matmul_precision(precision):
    """Sets the precision of float32 matrix products: 'highest', 'high' or 'medium' (kept; ember's products are
    always full float32)."""
    global _precision
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _precision = precision


def get_float32_matmul_precision():
    """The precision set by :func:`set_float32_matmul_precision` ('highest' by default)."""
    return _precision


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks for deterministic algorithms only (ember's are: kept and read back)."""
    global _deterministic, _warn_only
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _deterministic, _warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    """Whether :func:`use_deterministic_algorithms` was turned on."""
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """Whether :func:`use_deterministic_algorithms` was last called with ``warn_only=True``."""
    return _warn_only


def warn_once(message, stacklevel=2):
    """A UserWarning with ``message``, the first time only in this process (as torch's once-per-process warnings);
    ``stacklevel`` as ``warnings.warn``'s, counted from the caller."""
    if message not in _warned_once:
        _warned_once.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
