"""Activation checkpointing: run a piece of a model without keeping its intermediate tensors, and recompute them
during backward (memory for time), as ``torch.utils.checkpoint``."""
import contextlib
import enum
import warnings

from .. import _random, cuda
from .._creation import empty
from .._tensor import Tensor
from ..autograd import Function, backward as _backward
from ..autograd.grad_mode import grad_enabled, enable_grad, no_grad
from ..nn.modules.container import Sequential

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointPolicy", "create_selective_checkpoint_contexts",
           "noop_context_fn"]


class _Checkpoint(Function):
    """Runs ``run`` without a graph in forward; in backward, runs it again with one and backpropagates through it.
    The first input is a placeholder that requires grad, so that gradients reach the parameters ``run`` uses even
    when no input needs one (torch's non-reentrant checkpoint)."""

    @staticmethod
    def forward(ctx, placeholder, run, preserve_rng_state, contexts, *args):
        ctx.run = run
        forward_context, ctx.recompute_context = contexts
        ctx.rng = _rng_states(args) if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with no_grad(), forward_context:
            return run(*args)

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        if ctx.rng is None:
            outputs = _rerun(ctx.run, args, ctx.recompute_context)
        else:
            with _random.fork_rng(devices=list(ctx.rng[1]), _caller="checkpoint"):
                _set_rng_states(ctx.rng)
                outputs = _rerun(ctx.run, args, ctx.recompute_context)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


def _rerun(run, args, context):
    with enable_grad(), context:
        return run(*args)


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
    requires one (with torch's warning otherwise) and takes no keyword arguments; ``use_reentrant=False`` also
    sends gradients to the parameters ``function`` uses when no input requires grad.

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
    needs = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if reentrant and not needs:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    placeholder = None if reentrant else empty(0, requires_grad=True)
    contexts = noop_context_fn() if context_fn is None else context_fn()
    return _Checkpoint.apply(placeholder, run, preserve_rng_state, contexts, *args)


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
