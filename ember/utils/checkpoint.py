"""Activation checkpointing: run a piece of a model without keeping its intermediate tensors, and recompute them
during backward (memory for time), as ``torch.utils.checkpoint``."""
import contextlib
import enum
import warnings

from .. import _autocast, _random, cuda
from .._tensor import Tensor
from ..autograd import Function, backward as _backward, engine as _engine
from ..autograd.graph import saved_tensors_hooks
from ..autograd.grad_mode import grad_enabled, enable_grad, no_grad
from ..nn.modules.container import Sequential

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointPolicy",
           "create_selective_checkpoint_contexts", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """Raised when a checkpointed region's recomputation saves other tensors than its forward run did."""


class _Checkpoint(Function):
    """The reentrant checkpoint: runs ``run`` without a graph in forward; in backward, runs it again with one and
    backpropagates through it (into the inputs and into the parameters ``run`` uses)."""

    @staticmethod
    def forward(ctx, run, preserve_rng_state, *args):
        ctx.run = run
        ctx.rng = _rng_states(args) if preserve_rng_state else None
        ctx.autocast = _autocast.ACTIVE.get()
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with no_grad():
            return run(*args)

    @staticmethod
    def backward(ctx, *grads):
        if _engine._TASKS and _engine._TASKS[-1][3] is not None:
            raise RuntimeError("When use_reentrant=True, ember.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        outputs = _recompute(ctx.run, args, ctx.rng, ctx.autocast, contextlib.nullcontext())
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


class _Frame:
    """The non-reentrant checkpoint of one call: the region runs with its graph recorded, but each tensor it saves
    for backward is kept as a number; the first backward use of one reruns the region (from its inputs and random
    state) and hands out the tensors that rerun saves, in the same order."""

    def __init__(self, run, args, rng, context):
        self.run, self.args, self.rng, self.context = run, args, rng, context
        self.autocast = _autocast.ACTIVE.get()
        self.count = 0
        self.values = {}

    def pack(self, tensor):
        self.count += 1
        return self.count - 1

    def unpack(self, i):
        if i not in self.values:
            stash = []
            args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in self.args]
            with saved_tensors_hooks(stash.append, _no_unpack):
                _recompute(self.run, args, self.rng, self.autocast, self.context)
            if len(stash) != self.count:
                raise CheckpointError(f"ember.utils.checkpoint: a different number of tensors was saved during the "
                                      f"original forward ({self.count}) and the recomputation ({len(stash)}).")
            self.values = dict(enumerate(stash))
        return self.values.pop(i)


def _no_unpack(packed):
    raise RuntimeError("the graph of a checkpoint's recomputation cannot be backpropagated through")


def _recompute(run, args, rng, autocast, context):
    """Reruns the region as its forward ran: recording a graph, in its random and autocast state."""
    if rng is None:
        return _rerun(run, args, autocast, context)
    with _random.fork_rng(devices=list(rng[1]), _caller="checkpoint"):
        _set_rng_states(rng)
        return _rerun(run, args, autocast, context)


def _rerun(run, args, autocast, context):
    token = _autocast.ACTIVE.set(autocast)
    try:
        with enable_grad(), context:
            return run(*args)
    finally:
        _autocast.ACTIVE.reset(token)


def _rng_states(args):
    """The CPU generator's state and the CUDA generators' of the devices ``args`` live on."""
    devices = sorted({a.device.index or 0 for a in args if isinstance(a, Tensor) and a.device.type == "cuda"})
    return _random.get_rng_state(), {d: cuda.get_rng_state(d) for d in devices}


def _set_rng_states(states):
    cpu, per_device = states
    _random.set_rng_state(cpu)
    for d, state in per_device.items():
        cuda.set_rng_state(state, d)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """Runs ``function(*args, **kwargs)`` without keeping its intermediate tensors for backward, which recomputes
    them (with the random state of the forward run when ``preserve_rng_state``, so dropout masks match).

    ``use_reentrant=True`` (the default when not given, as torch) gives the outputs a gradient only if an input
    requires one (with torch's warning otherwise), takes no keyword arguments and works with ``.backward()`` only;
    ``use_reentrant=False`` records the region's graph as usual but none of the tensors it saves, so it also works
    with ``autograd.grad``, ``create_graph=True`` and inputs that do not require grad.

    Example::

        >>> layer = ember.nn.Linear(4, 4)
        >>> y = checkpoint(layer, ember.randn(2, 4, requires_grad=True), use_reentrant=False)
        >>> y.sum().backward()
    """
    reentrant = True if use_reentrant is None else use_reentrant
    if reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not None and reentrant:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not grad_enabled():
        return run(*args)
    if reentrant:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return _Checkpoint.apply(run, preserve_rng_state, *args)
    forward_context, recompute_context = noop_context_fn() if context_fn is None else context_fn()
    frame = _Frame(run, args, _rng_states(args) if preserve_rng_state else None, recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return run(*args)


def noop_context_fn():
    """The default ``context_fn`` of :func:`checkpoint`: no context around the forward run or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointPolicy(enum.Enum):
    """What a selective checkpoint's policy function answers for an op: save its output or recompute it."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` of a selective checkpoint that saves the outputs of the ops ``policy_fn_or_list`` picks.
    Saving changes memory and speed, never values: ember recomputes the whole region, so both contexts are empty.

    Example::

        >>> import functools
        >>> ctx_fn = functools.partial(create_selective_checkpoint_contexts, lambda ctx, op, *a, **k:
        ...                            CheckpointPolicy.PREFER_RECOMPUTE)
        >>> checkpoint(ember.nn.Linear(2, 2), ember.ones(1, 2), use_reentrant=False, context_fn=ctx_fn).shape
        ember.Size([1, 2])
    """
    if not (isinstance(policy_fn_or_list, list) or callable(policy_fn_or_list)):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return noop_context_fn()


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules of ``functions`` (a ``Sequential`` or a list) in ``segments`` pieces, checkpointing every
    piece but the last."""
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for fn in functions[start:end + 1]:
                x = fn(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
