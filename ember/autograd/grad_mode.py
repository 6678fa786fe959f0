"""Switches for gradient recording: no_grad, enable_grad, set_grad_enabled, inference_mode."""
import functools


class _State:
    __slots__ = ("enabled", "inference")

    def __init__(self):
        self.enabled = True
        self.inference = False


STATE = _State()


def is_grad_enabled():
    """Whether operations are recorded for autograd now."""
    return STATE.enabled


def is_inference_mode_enabled():
    return STATE.inference


class _GradModeContext:
    """Base for the grad-mode switches: usable as a context manager and as a decorator."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference)
        self._set()

    def __exit__(self, *exc):
        STATE.enabled, STATE.inference = self._prev


class no_grad(_GradModeContext):
    """Context manager and decorator that disables gradient recording.

    Example::

        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # used bare: @no_grad

    def _set(self):
        STATE.enabled = False


class enable_grad(_GradModeContext):
    """Context manager and decorator that enables gradient recording inside ``no_grad``."""

    def _set(self):
        STATE.enabled = True


class set_grad_enabled(_GradModeContext):
    """Sets gradient recording on or off; works as a function, a context manager and a decorator."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self.mode

    def __call__(self, fn):
        STATE.enabled = self._prev[0]  # used as a decorator: don't switch now
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def _set(self):
        STATE.enabled = self.mode


class inference_mode(_GradModeContext):
    """Like ``no_grad``, for code that will never need gradients of what it computes."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def clone(self):
        return inference_mode(self.mode)

    def _set(self):
        if self.mode:
            STATE.enabled, STATE.inference = False, True
