"""Function: an op's forward on raw arrays and its backward in Tensor ops. ``apply`` is the one dispatch path."""
import numpy as np

from .. import _dtype
from .._device import CPU, array_module
from .grad_mode import STATE

_FROM_NP = _dtype._FROM_NP
_HALF = (_dtype.float16, _dtype.bfloat16)
_FLOAT32 = np.dtype(np.float32)
_ndarray = np.ndarray
Tensor = None  # set by ember._tensor once the class exists


class Function:
    """Base of every differentiable op, and of user-defined ones.

    ``forward(ctx, *args, **params)`` receives arrays (NumPy or CuPy, see ``ctx.xp``) for the Tensor arguments and
    returns arrays; ``backward(ctx, *grads)`` receives and returns Tensors, one gradient per positional argument.
    Call ``Function.apply(*args, **params)``; positional arguments are the op's inputs (Tensors, numbers or None),
    keyword arguments are non-differentiable parameters.

    Example::

        >>> class Exp(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = ctx.xp.exp(x)
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (y,) = ctx.saved_tensors
        ...         return grad * y
        >>> Exp.apply(ember.zeros(2, requires_grad=True))
        tensor([1., 1.], grad_fn=<ExpBackward>)
    """

    promote = False  # cast Tensor inputs to the op's result_type (numbers stay weak Python scalars)
    half_in_float32 = False  # compute float16/bfloat16 in float32 and round the results back
    is_view = False  # the output may alias the first input's memory

    # Node state, filled by apply when the graph is recorded.
    _edges = ()
    _saved = None
    _saved_raw = None
    _freed = False
    _out_meta = ()
    _in_meta = ()
    _pre_hooks = None
    _hooks = None
    needs_input_grad = ()
    materialize_grads = True

    def __init__(self):
        self.xp = np

    @staticmethod
    def forward(ctx, *args, **params):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    # -- ctx API -------------------------------------------------------------------------------------------------
    def save_for_backward(self, *items):
        """Keeps arrays (inputs, outputs or new ones) or Tensors for ``backward`` as ``ctx.saved_tensors``."""
        self._saved_raw = items

    def mark_non_differentiable(self, *outputs):
        self._non_diff = {id(o) for o in outputs}

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
                "a second time or if you need to access saved tensors after calling backward.")
        out = []
        for kind, obj, vc, version in self._saved or ():
            if kind == 0:  # an input Tensor
                t = obj
            elif kind == 1:  # an output: rebuilt on use so that the node does not hold its own output (no cycle)
                arr, nr = obj
                t = Tensor._make(arr, self._out_meta[nr][1], self._device, True, self, nr)
                t._vc = vc
            else:
                t = obj
            if vc is not None and vc[0] != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.dtype} {list(t.shape)}], which is output {getattr(t, '_output_nr', 0)} of "
                    f"{type(self).__name__}Backward, is at version {vc[0]}; expected version {version} instead. "
                    "Hint: the backtrace further above can point to the operation that failed to compute its "
                    "gradient.")
            out.append(t)
        return tuple(out)

    @property
    def next_functions(self):
        return tuple((e[0] if e is None or not isinstance(e[0], Tensor) else _AccumulateGrad(e[0]), e and e[1])
                     if e is not None else (None, 0) for e in self._edges)

    def name(self):
        return type(self).__name__ + "Backward"

    def register_hook(self, fn):
        """Registers ``fn(grad_inputs, grad_outputs)`` to run after this node's backward."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)`` to run before this node's backward; it may return new grad_outputs."""
        return self._add_pre_hook(-1, fn)

    def _add_pre_hook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = []
        entry = (output_nr, fn)
        self._pre_hooks.append(entry)
        return _RemovableHandle(self._pre_hooks, entry)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    # -- dispatch ------------------------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *inputs, **params):
        ctx = cls.__new__(cls)
        dev = None
        tensors = False
        grad_on = STATE.enabled
        needs = False
        for x in inputs:
            if isinstance(x, Tensor):
                if dev is None:
                    dev = x.device
                elif x.device is not dev:
                    _device_mismatch(cls, inputs)
                if grad_on and x._requires_grad:
                    needs = True
                tensors = True
        xp = ctx.xp = np if dev is None or dev is CPU else array_module(dev)
        ctx._device = dev or CPU

        if cls.promote and tensors:
            rt = _dtype.result_type(*inputs)
            npdt = rt.np
            if cls.half_in_float32 and rt in _HALF:
                npdt = _FLOAT32
            arrays = [(x._data if x._data.dtype == npdt else x._data.astype(npdt)) if isinstance(x, Tensor) else x
                      for x in inputs]
        else:
            rt = None
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
            if cls.half_in_float32:
                for i, x in enumerate(inputs):
                    if isinstance(x, Tensor) and x.dtype in _HALF:
                        rt = rt or x.dtype
                        arrays[i] = x._data.astype(_FLOAT32)

        if needs:
            ctx.needs_input_grad = tuple(isinstance(x, Tensor) and x._requires_grad for x in inputs)
        raw = cls.forward(ctx, *arrays, **params)

        single = not isinstance(raw, tuple)
        outs = (raw,) if single else raw
        back = rt if rt is not None and rt in _HALF else None
        results = []
        for o in outs:
            if not isinstance(o, _ndarray) and (xp is np or not isinstance(o, xp.ndarray)):
                o = xp.asarray(o)
            if back is not None and o.dtype == _FLOAT32:
                o = o.astype(back.np)
            results.append(o)

        non_diff = getattr(ctx, "_non_diff", None)
        if needs:
            ctx._edges = tuple(_edge(x) if isinstance(x, Tensor) and x._requires_grad else None for x in inputs)
            ctx._in_meta = tuple((x.shape, x.dtype) if isinstance(x, Tensor) and x._requires_grad else None
                                 for x in inputs)
            ctx._out_meta = tuple((o.shape, _FROM_NP[o.dtype]) for o in results)
        wrapped = []
        for nr, o in enumerate(results):
            d = _FROM_NP.get(o.dtype) or _dtype.from_numpy_dtype(o.dtype)
            diff = needs and (d.is_floating_point or d.is_complex) and (non_diff is None or id(outs[nr]) not in non_diff)
            t = Tensor._make(o, d, ctx._device, diff, ctx if diff else None, nr)
            if cls.is_view and xp.may_share_memory(o, arrays[0]):
                src = inputs[0]
                t._vc = src._vc
                t._base = src._base if src._base is not None else src
                t._view_chain = (src._view_chain or ()) + ((cls, inputs[1:], params),)
            wrapped.append(t)

        if needs:
            _pack_saved(ctx, inputs, arrays, outs, wrapped)
        else:
            ctx._saved_raw = None
        return wrapped[0] if single else tuple(wrapped)


def _edge(x):
    """Where a gradient for ``x`` goes: its grad_fn output, or the leaf itself."""
    fn = x.grad_fn
    return (x, 0) if fn is None else (fn, x._output_nr)


def _pack_saved(ctx, inputs, arrays, raw_outs, outs):
    raw = ctx._saved_raw
    ctx._saved_raw = None
    if not raw:
        return
    saved = []
    for item in raw:
        entry = None
        if item is None:
            entry = (2, None, None, 0)
        elif isinstance(item, Tensor):
            entry = (2, item, item._vc, item._vc[0])
        else:
            for i, a in enumerate(arrays):
                if a is item and isinstance(inputs[i], Tensor):
                    t = inputs[i]
                    entry = (0, t, t._vc, t._vc[0])
                    break
            else:
                for nr, o in enumerate(raw_outs):
                    if o is item:
                        t = outs[nr]
                        if t.grad_fn is ctx:
                            entry = (1, (t._data, nr), t._vc, t._vc[0])
                        else:
                            entry = (2, t, t._vc, t._vc[0])
                        break
                else:
                    if hasattr(item, "dtype") and hasattr(item, "shape"):  # a new array: a constant for backward
                        item = Tensor._make(item, _dtype.from_numpy_dtype(item.dtype), ctx._device, False, None, 0)
                    entry = (2, item, None, 0)
        saved.append(entry)
    ctx._saved = saved


def _device_mismatch(cls, inputs):
    devs = [str(x.device) for x in inputs if isinstance(x, Tensor)]
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                       f"{devs[0]} and {next(d for d in devs if d != devs[0])}! (when checking arguments for "
                       f"{cls.__name__.lower()})")


class _AccumulateGrad:
    """The node a leaf's gradient flows into (exposed for ``next_functions`` only)."""

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "AccumulateGrad"

    next_functions = ()

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


class _RemovableHandle:
    def __init__(self, container, item):
        self._container, self._item = container, item

    def remove(self):
        if self._item in self._container:
            self._container.remove(self._item)


class once_differentiable:
    """Decorator for a ``backward`` that is not itself differentiable (runs without recording)."""

    def __new__(cls, fn):
        from .grad_mode import no_grad

        def wrapper(ctx, *grads):
            with no_grad():
                return fn(ctx, *grads)
        return wrapper
