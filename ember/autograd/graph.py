"""As ``torch.autograd.graph``: the Node type, gradient edges, version bumps, hooks on saved tensors and
multi-gradient hooks."""
import contextlib
import functools
from abc import ABC
from typing import NamedTuple

from . import engine as _engine, function as _fn, grad_mode as _grad_mode


class Node(ABC):
    """The type of every backward node: ``tensor.grad_fn`` and the AccumulateGrad nodes of leaves."""

    def name(self):
        raise NotImplementedError


Node.register(_fn.Function)
Node.register(_fn.AccumulateGrad)


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: a node and which of its outputs."""

    node: object
    output_nr: int


def get_gradient_edge(tensor):
    """The GradientEdge of ``tensor``: its grad_fn and output number, or its AccumulateGrad for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    if tensor.grad_fn is None:
        return GradientEdge(_fn._accumulate_grad_node(tensor), 0)
    return GradientEdge(tensor.grad_fn, tensor._output_nr)


def increment_version(tensor):
    """Marks ``tensor`` as modified in place (for writes autograd cannot see)."""
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._vc[0] += 1


def _is_output(entry):
    return entry[0] == 1 or entry[0] == 3 and entry[1][2] is not None and entry[1][2][0] == 1


def saved_attribute(node, name):
    """``node._saved_self``, ``_saved_other`` (the first and second saved values that are not outputs),
    ``_saved_result`` (the first saved output), or as ``_raw_saved_*`` their :class:`SavedTensor`."""
    raw = name.startswith("_raw_")
    key = name[len("_raw_saved_") if raw else len("_saved_"):]
    pos = {"self": 0, "other": 1, "result": 0}.get(key)
    if pos is not None and node._freed:
        node.saved_tensors  # raises: freed by backward
    entries = [i for i, e in enumerate(node._saved or ()) if _is_output(e) == (key == "result")]
    if pos is None or pos >= len(entries):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    return SavedTensor(node, entries[pos]) if raw else node.saved_tensors[entries[pos]]


class SavedTensor:
    """A tensor a node saved for backward (``grad_fn._raw_saved_self``)."""

    def __init__(self, node, index):
        self._node, self._index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        """Stores the saved tensor as ``pack_hook(tensor)`` (called now) and gives it back to backward as
        ``unpack_hook(packed)``."""
        node = self._node
        if node._freed:
            node.saved_tensors  # raises: freed by backward
        entry = node._saved[self._index]
        if entry[0] == 3:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        if entry[1] is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        with _grad_mode.no_grad():
            node._saved[self._index] = _fn._pack_entries(node, [entry], pack_hook, unpack_hook)[0]


_DISABLED = [None]  # the error message of an active disable_saved_tensors_hooks


class saved_tensors_hooks:
    """Context manager: each tensor saved for backward inside it is stored as ``pack_hook(tensor)`` and given back
    to backward as ``unpack_hook(packed)``, a Tensor of the same content.

    Example::

        >>> def pack_hook(x):
        ...     return x.detach()
        >>> def unpack_hook(x):
        ...     return x
        >>> a = ember.ones(5, requires_grad=True)
        >>> with ember.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        ...     y = a * a
        >>> y.sum().backward()
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _DISABLED[0] is not None:
            raise RuntimeError(_DISABLED[0])
        _fn.SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        _fn.SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Context manager: tensors saved for backward are kept on the CPU (copied there from an accelerator) and moved
    back to their device when backward needs them. ``pin_memory`` is accepted; ember's copies are synchronous."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.cpu()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager under which ``saved_tensors_hooks`` cannot be used: entering one (or entering this while
    one is active) raises ``RuntimeError(error_message)``."""
    prev = _DISABLED[0]
    if _fn.SAVED_HOOKS:
        raise RuntimeError(error_message)
    _DISABLED[0] = error_message
    try:
        yield
    finally:
        _DISABLED[0] = prev


class _MultiHandle:
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes the hook from every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Registers a hook over several tensors' gradients.

    ``mode="all"``: ``fn(grads)`` runs once per backward, after the gradients of all of ``tensors`` that this
    backward computes are ready; ``grads`` holds None for the others. ``mode="any"``: ``fn(grad)`` runs once per
    backward, with the first of their gradients computed. Returns a handle whose ``remove()`` unregisters it.

    Example::

        >>> a = ember.rand(2, 3, requires_grad=True)
        >>> b = ember.rand(2, 3, requires_grad=True)
        >>> c, d = a * b, a * b
        >>> def fn(grads):
        ...     print([g is not None for g in grads])
        >>> h = ember.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    if mode == "any":
        ran = set()

        @functools.wraps(fn)
        def wrapped_fn(grad):
            task = _engine._current_graph_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            if task not in ran:
                ran.add(task)
                fn(grad)
        return _MultiHandle(tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad))

    count, expected, buffer = {}, {}, {}
    nodes = [None if not t.requires_grad else get_gradient_edge(t).node for t in tensors]
    n = len(tensors)

    def inner_hook(idx, grad):
        task = _engine._current_graph_task_id()
        if task == -1:
            raise AssertionError("expected this hook to be called inside a backward call")
        if task not in count:
            count[task] = 0
            buffer[task] = [None] * n
            expected[task] = sum(node is not None and _engine._will_engine_execute_node(node) for node in nodes)
        buffer[task][idx] = grad
        count[task] += 1
        if count[task] == expected[task]:
            grads = buffer.pop(task)
            del count[task], expected[task]
            fn(grads)
    return _MultiHandle(tuple(t.register_hook(functools.partial(inner_hook, i)) for i, t in enumerate(tensors)))
