"""``ember.autograd.Function``: user-defined differentiable functions written as in torch.

Its ``forward`` receives the Tensors themselves (with gradient recording off) and returns Tensors; built-in ops
instead subclass ``ember.autograd.function.Function``, whose forward computes on raw arrays.
"""
import traceback
import warnings

from . import function as _fn
from .function import ANOMALY, Function as _Primitive
from .grad_mode import grad_enabled, no_grad


class Function(_Primitive):
    """Records a custom differentiable operation, as ``torch.autograd.Function``.

    Subclass it with static ``forward(ctx, *args, **kwargs)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``, then call ``apply``. ``forward``
    runs with gradient recording off and computes with ember ops on the input Tensors; ``backward`` returns one
    gradient (or None) per argument of ``forward``. The ctx offers ``save_for_backward`` / ``saved_tensors``,
    ``needs_input_grad``, ``mark_dirty``, ``mark_non_differentiable`` and ``set_materialize_grads``. A Function
    that defines only ``jvp(ctx, *tangents)`` (forward mode) gets its backward from it, as the transpose of that
    linear map; ``jvp`` reads what forward passed to ``ctx.save_for_forward`` as ``ctx.saved_tensors``.

    Example::

        >>> class Exp(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (result,) = ctx.saved_tensors
        ...         return grad_output * result
        >>> Exp.apply(ember.zeros(2, requires_grad=True))
        tensor([1., 1.], grad_fn=<ExpBackward>)
    """

    _user = True
    _dirty = None
    _in_meta = None
    _for_forward = None
    _in_jvp = False

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so you "
                      f"should invoke them on the class itself.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method: call "
                           f"{type(self).__name__}.apply(...) instead.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        if type(ctx).vjp is not Function.vjp:
            return type(ctx).vjp(ctx, *grad_outputs)
        if type(ctx).jvp is not Function.jvp:
            return _vjp_from_jvp(ctx, grad_outputs)
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    def save_for_forward(self, *tensors):
        """Keeps Tensors (or None) for ``jvp``; read them back there with ``ctx.saved_tensors``."""
        self._for_forward = tensors

    @property
    def saved_tensors(self):
        return self._for_forward if self._in_jvp else _Primitive.saved_tensors.fget(self)

    def save_for_backward(self, *tensors):
        """Keeps Tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _fn.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved_raw = tensors

    def mark_dirty(self, *tensors):
        """Declares inputs that forward modified in place (and returns)."""
        self._dirty = {id(t) for t in tensors}

    @property
    def needs_input_grad(self):
        return self._needs

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = _fn.Tensor
        ctx = _fn._new(cls)
        dev = None
        for a in args:
            if isinstance(a, Tensor):
                if dev is None:
                    dev = a.device
                elif a.device is not dev:
                    _fn._device_mismatch(cls, args)
        if dev is not None and dev.type != "cpu":
            ctx.xp, ctx._device = _fn.array_module(dev), dev
        ctx._needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        needs = grad_enabled() and any(ctx._needs)
        if needs and cls.jvp is not Function.jvp:
            ctx._in_meta = tuple((a.shape, a.dtype, a.device) if isinstance(a, Tensor) else None for a in args)
        if needs:
            ctx._edges = tuple((a if a.grad_fn is None else a.grad_fn, a._output_nr, a._data.shape, a.dtype)
                               if r else None for a, r in zip(args, ctx._needs))
            if ANOMALY[0]:
                ctx._trace = traceback.format_stack()[:-1]
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not needs:
            return out
        single = not isinstance(out, tuple)
        outs = _wrap_outputs(ctx, args, (out,) if single else out)
        ctx._out_meta = tuple((o._data.shape, o.dtype) if isinstance(o, Tensor) else None for o in outs)
        if ctx._saved_raw:
            ctx._saved = [(2, None, None, 0) if t is None else _fn._saved_tensor(ctx, t, args, outs)
                          for t in ctx._saved_raw]
            if _fn.SAVED_HOOKS:
                ctx._saved = _fn._hooked_entries(ctx, ctx._saved)
            ctx._saved_raw = None
        return outs[0] if single else outs

    @property
    def next_functions(self):
        """As torch: one entry per Tensor argument of forward (other arguments have no edge)."""
        return tuple(f for f, was_tensor in zip(_Primitive.next_functions.fget(self), self._input_was_tensor)
                     if was_tensor)

    def _check_grads(self, grads):
        for i, g in enumerate(grads):
            if g is None:
                continue
            if not isinstance(g, _fn.Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(g).__name__} at position "
                                f"{i + 1}; expected a Tensor or None")
            if not self._input_was_tensor[i]:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")


def _vjp_from_jvp(ctx, grad_outputs):
    """The backward of a Function that defines only ``jvp``: ``jvp`` is linear in the tangents ``t``, so the
    gradient of ``<jvp(ctx, *t), grad_outputs>`` with respect to ``t`` (taken at ``t = 0``) is the vjp. Tangents of
    Tensor inputs are materialized as zeros, as torch does; other inputs get None."""
    from .._creation import zeros
    from .engine import grad
    from .grad_mode import enable_grad
    create_graph = grad_enabled()
    with enable_grad():
        tangents = [None if m is None else zeros(m[0], dtype=m[1], device=m[2], requires_grad=True)
                    for m in ctx._in_meta]
        ctx._in_jvp = True
        try:
            outs = type(ctx).jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
    outs = outs if isinstance(outs, tuple) else (outs,)
    live = [(o, g) for o, g in zip(outs, grad_outputs)
            if isinstance(o, _fn.Tensor) and o.requires_grad and g is not None]
    wanted = [t for t, n in zip(tangents, ctx._needs) if n]
    got = iter(grad([o for o, _ in live], wanted, [g for _, g in live], create_graph=create_graph,
                    allow_unused=True) if live else [None] * len(wanted))
    return tuple(next(got) if n else None for n in ctx._needs)


def _wrap_outputs(ctx, args, outs):
    """Makes the Tensors forward returned outputs of ``ctx``: a fresh Tensor gets ``grad_fn``; an input returned
    as is becomes a new view of it; an input marked dirty moves onto ``ctx`` in place."""
    Tensor = _fn.Tensor
    dirty = ctx._dirty or ()
    non_diff = ctx._non_diff or ()
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    ctx._input_was_tensor = tuple(isinstance(a, Tensor) for a in args)
    result = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        diff = (o.dtype.is_floating_point or o.dtype.is_complex) and id(o) not in non_diff
        if id(o) in dirty:
            if o.grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            o._vc[0] += 1
            t = o
        elif id(o) in inputs or o.grad_fn is not None or o._requires_grad:
            t = _fn.Tensor._make(o._data, o.dtype, o.device)  # a view of the input, not the input itself
            t._vc, t._base = o._vc, (o._base if o._base is not None else o)
        else:
            t = o
        t._requires_grad = diff
        t.grad_fn = ctx if diff else None
        t._output_nr = nr
        if diff and t._base is not None and id(o) not in dirty:
            t._view_chain = None  # not replayable: in-place writes into it or its base are refused
            t._view_version = t._vc[0]
        result.append(t)
    return tuple(result)
