"""Switches for gradient recording: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator (of functions and of generator functions, whose body then runs in the
mode between yields); no_grad, enable_grad and inference_mode also decorate bare (``@no_grad``).
"""
import contextvars
import functools
import inspect
import sys

_ENABLED = contextvars.ContextVar("ember_grad_enabled", default=True)
_INFERENCE = contextvars.ContextVar("ember_inference_mode", default=False)


class _State:
    """The mode, per thread as torch's: a new thread starts with gradients enabled, and one thread's switches do not
    reach another's. Kept in context variables, so that work an op hands to the intra-op threads (which run it in
    the caller's context) runs in the caller's mode."""
    __slots__ = ()
    enabled = property(lambda self: _ENABLED.get(), lambda self, on: _ENABLED.set(on))
    inference = property(lambda self: _INFERENCE.get(), lambda self, on: _INFERENCE.set(on))


STATE = _State()
grad_enabled = _ENABLED.get  # STATE.enabled's read, without the property's call: for hot paths


def is_grad_enabled():
    """Whether operations are recorded for autograd now."""
    return _ENABLED.get()


def is_inference_mode_enabled():
    """Whether an ``inference_mode`` block is active."""
    return STATE.inference


class _DecoratorContextManager:
    """Base of the grad-mode switches: usable as a context manager and as a decorator."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class; decorate its methods instead")
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorate_context

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference)
        self._set()

    def __exit__(self, exc_type, exc_value, traceback):
        STATE.enabled, STATE.inference = self._prev


def _wrap_generator(make_ctx, gen_fn):
    """Runs each step of the generator inside a fresh context; the caller's code between steps runs outside."""
    @functools.wraps(gen_fn)
    def generator_context(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException:
                    with make_ctx():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator_context


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also works as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that disables gradient recording.

    Example::

        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def _set(self):
        STATE.enabled = False


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager and decorator that enables gradient recording (inside ``no_grad``)."""

    def _set(self):
        STATE.enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets gradient recording on or off: takes effect when called, and as a context manager restores the previous
    mode on exit. As a decorator, sets the mode only while the function runs."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(mode).__name__}")
        self.mode = mode
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self.mode

    def __call__(self, func):
        STATE.enabled = self._prev[0]  # used as a decorator: the mode applies inside func only
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        pass

    def _set(self):
        STATE.enabled = self.mode


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for code whose results will never take part in autograd; ``inference_mode(False)``
    switches it off again (and enables grad mode) inside an enclosing block."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used bare: @inference_mode

    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return self.__class__(self.mode)

    def _set(self):
        STATE.enabled, STATE.inference = not self.mode, self.mode


_MULTITHREADING = [True]


class set_multithreading_enabled(_DecoratorContextManager):
    """Sets whether backward may run on worker threads: takes effect when called, and as a context manager
    restores the previous setting on exit. Accepted for torch compatibility: ember's engine always runs backward on
    the calling thread."""

    def __init__(self, mode):
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = self.mode = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _MULTITHREADING[0] = self.prev

    def clone(self):
        return self.__class__(self.mode)
