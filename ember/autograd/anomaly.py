"""Anomaly detection: name the op whose backward produced NaN, and show where its forward was called."""
import warnings

from .function import ANOMALY


class detect_anomaly:
    """Context manager that makes backward raise as soon as an op's gradient contains NaN, naming the op; when any
    backward fails, a warning shows the traceback of that op's forward call.

    Example::

        >>> x = ember.tensor([0.0], requires_grad=True)
        >>> with ember.autograd.detect_anomaly():          # doctest: +SKIP
        ...     (ember.sqrt(x) * 0).sum().backward()
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.prev = ANOMALY[0]
        self.check_nan = check_nan
        self.prev_check_nan = ANOMALY[1]
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        ANOMALY[0], ANOMALY[1] = True, self.check_nan

    def __exit__(self, *exc):
        ANOMALY[0], ANOMALY[1] = self.prev, self.prev_check_nan


class set_detect_anomaly:
    """Turns anomaly detection on or off: takes effect when called; as a context manager, restores the previous
    setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = ANOMALY[0], ANOMALY[1]
        ANOMALY[0], ANOMALY[1] = bool(mode), check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        ANOMALY[0], ANOMALY[1] = self.prev, self.prev_check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off (for the whole process, unlike ``detect_anomaly``)."""
    ANOMALY[0], ANOMALY[1] = bool(enabled), bool(check_nan)


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return ANOMALY[0]


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks gradients for NaN."""
    return ANOMALY[1]
