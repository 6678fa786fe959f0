"""``ember.fx``: the part of ``torch.fx`` that model code calls at import time. ember has no graph tracer, so
marking a function as a leaf of the trace changes nothing."""
import inspect

__all__ = ["wrap"]


def wrap(fn_or_name):
    """Registers a global function (or its name) as a leaf of symbolic traces, from a module's top level; returns it.

    Example::

        >>> ember.fx.wrap("len")
        'len'
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    if inspect.currentframe().f_back.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    return fn_or_name
