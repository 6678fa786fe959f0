"""``ember.compiler``: ``torch.compiler``'s entry points, accepted so that scripts written for them run. ember executes
eagerly (see :func:`ember.compile`): nothing is ever being compiled, the decorators return what they decorate and the
switches change nothing."""
from ._compile import compile

__all__ = ["compile", "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "reset", "set_stance"]


def _check_callable(fn):
    if not callable(fn):
        raise AssertionError("fn must be callable")
    return fn


class _DisableContext:
    """What ``disable()`` returns without a function: a decorator; it is not a context manager."""

    def __call__(self, fn):
        return _check_callable(fn)

    def __enter__(self):
        raise RuntimeError("disable(...) is used with a context manager. Use it as an annotation/decorator "
                           "(@disable) instead.")

    def __exit__(self, *exc_info):
        return None


def disable(fn=None, recursive=True, *, reason=None):
    """``@disable`` or ``@disable(recursive=..., reason=...)``: keeps a function out of compilation; it is returned
    as is."""
    return _DisableContext() if fn is None else _check_callable(fn)


def allow_in_graph(fn):
    """Marks a function (or each of a list or tuple of them) to be put in a compiled graph unexamined; returned as
    is (a list for a list or tuple)."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """Marks a function whose result compilation may treat as a constant; returned as is."""
    return fn


def is_compiling():
    """False: ember code never runs inside a compiler's trace."""
    return False


def is_dynamo_compiling():
    """False: ember code never runs inside a compiler's trace."""
    return False


def is_exporting():
    """False: ember never exports a graph."""
    return False


def reset():
    """Clears compilation caches: ember has none."""


def cudagraph_mark_step_begin():
    """Marks the start of a step for CUDA graphs: ember records none."""


class set_stance:
    """Sets how compiled functions run (``'default'``, ``'force_eager'``, ``'eager_on_recompile'``,
    ``'fail_on_recompile'``, ...): callable as a function, a context manager or a decorator. ember's functions
    always run eagerly, so every stance behaves as ``'force_eager'``.

    Example::

        >>> with ember.compiler.set_stance("force_eager"):
        ...     pass
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return None
