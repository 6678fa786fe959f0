"""Anomaly detection: name the op whose backward produced NaN or Inf."""
from .engine import ANOMALY


class detect_anomaly:
    """Context manager that makes backward raise as soon as an op's gradient contains NaN or Inf, naming the op.

    Example::

        >>> x = ember.tensor([0.0], requires_grad=True)
        >>> with ember.autograd.detect_anomaly():
        ...     ember.sqrt(x).backward(ember.ones(1))   # doctest: +SKIP
        RuntimeError: Function 'SqrtBackward' returned inf values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = ANOMALY[0]
        ANOMALY[0] = self.check_nan

    def __exit__(self, *exc):
        ANOMALY[0] = self._prev


class set_detect_anomaly(detect_anomaly):
    """Turns anomaly detection on or off; usable as a function or a context manager."""

    def __init__(self, mode, check_nan=True):
        self._prev = ANOMALY[0]
        ANOMALY[0] = bool(mode) and check_nan

    def __enter__(self):
        pass


def is_anomaly_enabled():
    return ANOMALY[0]
