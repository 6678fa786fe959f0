"""``ember._dynamo``: the graph capturer's entry points, kept so that scripts that call them run. ember executes
eagerly (see :func:`ember.compile`): functions run as written, the markings are recorded on the tensors as torch
records them, and :mod:`config` keeps what is assigned."""
from . import config
from .._compile import OptimizedModule, compile as _compile
from ..compiler import (allow_in_graph, assume_constant_result, disable, is_compiling, reset, set_stance)

__all__ = ["OptimizedModule", "allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "graph_break", "is_compiling", "list_backends", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "optimize", "reset", "run", "set_stance"]


def _dims(index):
    return set(index) if isinstance(index, (list, tuple)) else {index}


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Marks dimension(s) ``index`` of ``t`` as dynamic for compilation (recorded in ``t._dynamo_dynamic_indices``).
    """
    dims = _dims(index)
    if not hasattr(t, "_dynamo_dynamic_indices"):
        t._dynamo_dynamic_indices = set()
    t._dynamo_dynamic_indices |= dims
    t._has_dynamo_dim_marking = True


def maybe_mark_dynamic(t, index):
    """Marks dimension(s) ``index`` of ``t`` as possibly dynamic (recorded in ``t._dynamo_weak_dynamic_indices``)."""
    if not hasattr(t, "_dynamo_weak_dynamic_indices"):
        t._dynamo_weak_dynamic_indices = set()
    t._dynamo_weak_dynamic_indices |= _dims(index)
    t._has_dynamo_dim_marking = True


def mark_static(t, index=None):
    """Marks dimension(s) ``index`` of ``t`` (all of them when None) as static, or a module class as static."""
    if isinstance(t, type):
        t._dynamo_marked_static = True
        return
    if not hasattr(t, "_dynamo_static_indices"):
        t._dynamo_static_indices = set()
    t._dynamo_static_indices |= set(range(t.dim())) if index is None else _dims(index)
    t._has_dynamo_dim_marking = True


def mark_static_address(t, guard=False):
    """Marks ``t``'s storage address as static across calls (recorded in ``t._dynamo_static_input_type``)."""
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


def disallow_in_graph(fn):
    """Marks a function to be kept out of compiled graphs; returned as is."""
    if not callable(fn):
        raise AssertionError("disallow_in_graph expects a callable")
    return fn


def graph_break(msg=""):
    """Ends the compiled graph here: ember has none, so nothing happens."""


def list_backends(exclude_tags=("debug", "experimental")):
    """The names of the compilation backends: ember's functions run eagerly, on none."""
    return []


def optimize(*args, **kwargs):
    """Deprecated spelling of :func:`ember.compile`: returns a decorator that runs what it decorates eagerly."""
    return lambda fn: _compile(fn)


def run(fn=None):
    """Runs ``fn`` without compiling new frames: returned as is."""
    return fn
