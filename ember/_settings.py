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


def set_deterministic_debug_mode(debug_mode):
    """Sets the deterministic mode by number or name: 0 / 'default' (off), 1 / 'warn' (warn only), 2 / 'error'."""
    if isinstance(debug_mode, str):
        modes = ("default", "warn", "error")
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The deterministic mode as a number: 0 (off), 1 (warn only) or 2 (error)."""
    return 0 if not _deterministic else 1 if _warn_only else 2


def warn_once(message, stacklevel=2):
    """A UserWarning with ``message``, the first time only in this process (as torch's once-per-process warnings);
    ``stacklevel`` as ``warnings.warn``'s, counted from the caller."""
    if message not in _warned_once:
        _warned_once.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
