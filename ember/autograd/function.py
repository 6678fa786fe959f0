"""Function: an op's forward on raw arrays and its backward in Tensor ops. ``apply`` is the one dispatch path.

Every call of ``apply`` makes one instance of the op's class: it is the ``ctx`` that forward and backward see and,
when gradients are recorded, the graph node (``tensor.grad_fn``). A node keeps one edge per positional input:
``(next_node, output_nr, shape, dtype)``, where ``next_node`` is the input's grad_fn or, for a leaf, the leaf
Tensor itself; the engine sums and casts each gradient back to ``shape`` and ``dtype``.
"""
import functools
import itertools
import re
import traceback
import weakref

import numpy as np

from .. import _dtype
from .._device import CPU, META, array_module, meta_array
from .._meta import meta_forward
from .grad_mode import grad_enabled, no_grad

_FROM_NP = _dtype._FROM_NP
_F16, _BF16 = _dtype.float16, _dtype.bfloat16
_HALVES = frozenset((_F16, _BF16))
_INTEGERS = frozenset(d for d in _dtype.ALL if not (d.is_floating_point or d.is_complex))  # bool included
_BARE = frozenset(d for d in _dtype.ALL if d._bare)  # uint16/32/64 and float8: checked against torch's kernels
_COMPLEX = frozenset(d for d in _dtype.ALL if d.is_complex)
_FLOAT32 = np.dtype(np.float32)
_ndarray = np.ndarray
_new = object.__new__
ANOMALY = [False, True]  # [detect_anomaly on, check_nan]
SAVED_HOOKS = []  # the saved_tensors_hooks stack, (pack_hook, unpack_hook) pairs: the innermost, last, applies
Tensor = None  # set by ember._tensor once the class exists


class _NoGradNeeded(tuple):
    """``needs_input_grad`` of a call that records no graph: False at every index."""

    def __getitem__(self, i):
        return () if isinstance(i, slice) else False


_NONE_NEEDED = _NoGradNeeded()


def _saved_value(name):
    """The property ``grad_fn.<name>`` (``_saved_self``, ``_raw_saved_other``, ...): see ``graph.saved_attribute``."""
    def get(node):
        from .graph import saved_attribute
        return saved_attribute(node, name)
    return property(get)


class Function:
    """Base of every built-in differentiable op.

    ``forward(ctx, *args, **params)`` receives arrays (NumPy or CuPy, see ``ctx.xp``) for the Tensor arguments and
    returns arrays; ``backward(ctx, *grads)`` receives and returns Tensors, one gradient per positional argument.
    Call ``Function.apply(*args, **params)``; positional arguments are the op's inputs (Tensors, numbers or None),
    keyword arguments are non-differentiable parameters. (``ember.autograd.Function``, for user code, is the
    torch-style variant whose forward receives Tensors.)

    Example::

        >>> from ember.autograd.function import Function
        >>> class Exp(Function):
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
        tensor([1., 1.], grad_fn=<ExpBackward0>)
    """

    # Class flags: set them in the class body (apply reads them when the class is created).
    promote = False  # cast Tensor inputs to the op's result_type (numbers stay weak Python scalars)
    half_in_float32 = False  # compute float16/bfloat16 in float32 and round the results back
    int_to_float = False  # compute integer and bool inputs in the default float dtype (float-valued ops: exp, log)
    is_view = False  # the output may alias the first input's memory
    tensor_inputs = False  # every positional input must be a Tensor (torch's TypeError otherwise)
    # backward multiplies the gradient by f'(z), written as for real z: for complex gradients the engine runs it on
    # conj(grad) and conjugates the result, which gives torch's grad * conj(f'(z))
    holomorphic = False
    # where torch has no kernel for complex inputs: the kernel's name (torch's NotImplementedError "... not implemented
    # for 'ComplexFloat'"), or ``(exception type, message)`` with ``{}`` standing for the promoted dtype's name; apply
    # raises it before forward runs
    no_complex = None

    # Per-call state; class defaults keep apply's fast path free of stores.
    xp = np
    _device = CPU
    _edges = ()
    _out_meta = ()
    _saved = None
    _saved_raw = None
    _non_diff = None
    _needs_input_grad = None
    _freed = False
    _user = False  # torch-style Function: the engine validates what backward returns
    _trace = None
    _pre_hooks = None  # node pre-hooks: fn(grad_outputs) -> new grad_outputs or None
    _tensor_pre_hooks = None  # [(output_nr, fn)] from Tensor.register_hook on an output
    _retain = None  # {output_nr: weakref to the Tensor} from Tensor.retain_grad
    _hooks = None  # post-hooks: fn(grad_inputs, grad_outputs)
    _hooked = False  # whether any of the four above was ever set: the engine's one test for hooks
    materialize_grads = True
    _metadata = None

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
        """Marks outputs (the objects forward returns) as not requiring grad."""
        self._non_diff = {id(o) for o in outputs}

    def set_materialize_grads(self, value):
        """Whether backward receives zeros (True, the default) or None for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def needs_input_grad(self):
        """One bool per positional input of ``apply``: whether a gradient for it is needed."""
        needs = self._needs_input_grad
        if needs is None:
            edges = self._edges
            if not edges:
                return _NONE_NEEDED
            needs = self._needs_input_grad = tuple([e is not None for e in edges])
        return needs

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
            if kind == 1:  # an output: rebuilt on use so that the node does not hold its own output (no cycle)
                arr, nr, diff = obj
                t = Tensor._make(arr, self._out_meta[nr][1], self._device, diff, self if diff else None, nr)
                t._vc = vc
            elif kind == 3:  # saved through saved_tensors_hooks
                t = _unpack(self, obj)
            else:  # an input Tensor (0), or anything else (2)
                t = obj
            if vc is not None and vc[0] != version:
                fn = self if kind == 1 else t.grad_fn
                where = f", which is output {t._output_nr} of {_short_name(fn)}," if fn is not None else ""
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t.shape)}]{where} is at version {vc[0]}; expected version "
                    f"{version} instead. Hint: enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")
            out.append(t)
        return tuple(out)

    def _release(self):
        """Frees what forward saved (after backward, unless retain_graph); a later use of saved_tensors raises.
        Built-in ops that saved only None keep working, as torch's ops that save nothing do."""
        if not self._user:
            for entry in self._saved:
                if entry[1] is not None:
                    break
            else:
                return
        self._saved = None
        self._freed = True

    # -- node API ------------------------------------------------------------------------------------------------
    def name(self):
        return type(self).__name__ + ("Backward" if self._user else "Backward0")

    @property
    def next_functions(self):
        """``(node, output_nr)`` per input: the input's grad_fn, an AccumulateGrad for a leaf, or ``(None, 0)``."""
        out = []
        for e in self._edges:
            if e is None:
                out.append((None, 0))
            elif isinstance(e[0], Tensor):
                out.append((_accumulate_grad_node(e[0]), 0))
            else:
                out.append((e[0], e[1]))
        return tuple(out)

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """Registers ``fn(grad_inputs, grad_outputs)`` to run after this node's backward; it may return new
        grad_inputs."""
        if self._hooks is None:
            self._hooks = []
            self._hooked = True
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)`` to run before this node's backward; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
            self._hooked = True
        return RemovableHandle(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = []
            self._hooked = True
        return RemovableHandle(self._tensor_pre_hooks, (output_nr, fn))

    # the saved values graph tools read; properties, since a ``__getattr__`` would slow every attribute read of a node
    _saved_self, _saved_other, _saved_result, _raw_saved_self, _raw_saved_other, _raw_saved_result = (
        _saved_value(name) for name in ("_saved_self", "_saved_other", "_saved_result", "_raw_saved_self",
                                        "_raw_saved_other", "_raw_saved_result"))

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    # -- dispatch ------------------------------------------------------------------------------------------------
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if getattr(cls.apply, "dispatches", None) is not None:  # not an apply of its own (torch-style Functions)
            cls.apply = staticmethod(_dispatcher(cls))


def _dispatcher(cls):
    """``cls.apply(*inputs, **params)``: the dispatch path. Made per class, as a function over ``cls``, so that a
    call binds no classmethod (a measurable share of a small op's cost); the class flags are read here, once."""
    cast_dtypes = (_HALVES if cls.half_in_float32 else frozenset()) | (_INTEGERS if cls.int_to_float else frozenset())
    cast_dtypes |= _BARE
    if cls.no_complex is not None:
        cast_dtypes |= _COMPLEX
    is_view = cls.is_view
    tensor_inputs = cls.tensor_inputs

    def apply(*inputs, **params):
        ctx = _new(cls)
        arrays = []
        dev = dt = None
        mixed = scalars = grad = False
        for x in inputs:
            if isinstance(x, Tensor):
                arrays.append(x._data)
                if dev is None:
                    dev, dt = x.device, x.dtype
                elif x.device is not dev:
                    return apply(*_common_device(cls, inputs), **params)
                elif x.dtype is not dt:
                    mixed = True
                if x._requires_grad:
                    grad = True
            else:
                if tensor_inputs:
                    raise TypeError(f"{cls.__name__.lower()}(): argument 'input' (position {len(arrays) + 1}) must be "
                                    f"Tensor, not {_type_name(x)}")
                arrays.append(x)
                if x is not None:
                    scalars = True
        if scalars and _has_numpy_value(inputs):
            return apply(*_from_numpy_values(inputs), **params)
        forward = cls.forward
        if dev is not CPU and dev is not None:
            ctx.xp = array_module(dev)
            ctx._device = dev
            if dev is META:
                forward = meta_forward(cls)
        back = None  # the half dtype whose float32 results are rounded back
        if mixed or scalars or dt in cast_dtypes:
            arrays, back = _cast_inputs(cls, inputs, arrays, dt, mixed, scalars)

        needs = grad and grad_enabled()
        if needs:
            edges = []
            for x in inputs:
                if isinstance(x, Tensor) and x._requires_grad:
                    if x._base is not None and x._view_version != x._vc[0]:
                        _refresh_view(x)
                    fn = x.grad_fn
                    edges.append((x if fn is None else fn, x._output_nr, x._data.shape, x.dtype))
                else:
                    edges.append(None)
            ctx._edges = edges
            if ANOMALY[0]:
                ctx._trace = traceback.format_stack()[:-1]
        # Positional calls for one or two inputs: unpacking a list costs as much as a small op's arithmetic.
        n = len(arrays)
        if n == 1:
            raw = forward(ctx, arrays[0], **params) if params else forward(ctx, arrays[0])
        elif n == 2 and not params:
            raw = forward(ctx, arrays[0], arrays[1])
        else:
            raw = forward(ctx, *arrays, **params)

        if type(raw) is tuple:
            return _outputs(ctx, raw, back, needs, inputs, arrays, params)
        o = raw if type(raw) is _ndarray else _as_array(ctx.xp, raw)  # NumPy returns scalars for 0-d results
        if back is not None and o.dtype == _FLOAT32:
            o = _round_back(ctx, o, back)
        odt = o.dtype  # mostly the inputs' dtype: an identity test is cheaper than the table's lookup
        d = dt if dt is not None and odt is dt.np else _FROM_NP.get(odt) or _dtype.from_numpy_dtype(odt)
        t = _new(Tensor)  # Tensor._make, inline: this is the hot path
        t._data = o
        t.dtype = d
        t.device = ctx._device
        t.grad = None
        t._output_nr = 0
        t._vc = [0]
        t._base = t._view_chain = None
        t._view_version = 0
        if needs and (d.is_floating_point or d.is_complex) and (ctx._non_diff is None or id(raw) not in ctx._non_diff):
            t._requires_grad = True
            t.grad_fn = ctx
        else:
            t._requires_grad = False
            t.grad_fn = None
        if is_view:
            _mark_view(ctx, t, inputs, arrays, params)
        if needs:
            ctx._out_meta = ((o.shape, d),)
            if ctx._saved_raw:
                _pack_saved(ctx, inputs, arrays, (raw,), (t,))
        return t

    apply.__qualname__ = cls.__qualname__ + ".apply"
    apply.dispatches = cls
    return apply


Function.apply = staticmethod(_dispatcher(Function))


def _outputs(ctx, raw, back, needs, inputs, arrays, params):
    """The Tensors of a forward that returned several arrays."""
    outs = []
    for nr, r in enumerate(raw):
        t = _output(ctx, r, back, needs, nr)
        if ctx.is_view:
            _mark_view(ctx, t, inputs, arrays, params)
        outs.append(t)
    if needs:
        ctx._out_meta = tuple((t._data.shape, t.dtype) for t in outs)
        if ctx._saved_raw:
            _pack_saved(ctx, inputs, arrays, raw, outs)
    return tuple(outs)


def _output(ctx, raw, back, needs, nr):
    """Output ``nr`` of ``ctx``'s forward (``raw``, an array or a NumPy scalar) as a Tensor."""
    o = raw if type(raw) is _ndarray else _as_array(ctx.xp, raw)
    if back is not None and o.dtype == _FLOAT32:
        o = _round_back(ctx, o, back)
    d = _FROM_NP.get(o.dtype) or _dtype.from_numpy_dtype(o.dtype)
    diff = needs and (d.is_floating_point or d.is_complex) and (ctx._non_diff is None or id(raw) not in ctx._non_diff)
    return Tensor._make(o, d, ctx._device, diff, ctx if diff else None, nr if diff else 0)


def _cast_inputs(cls, inputs, arrays, dt, mixed, scalars):
    """Type promotion (``promote``), integers computed as floats (``int_to_float``) and float16/bfloat16 computed
    in float32 (``half_in_float32``): the arrays forward receives, and the half dtype to round results back to (or
    None)."""
    if dt is None:
        return arrays, None
    if dt.is_complex and cls.no_complex is not None:
        _refuse_complex(cls, dt)
    if dt._bare:
        rt = _dtype.result_type(*inputs) if cls.promote and (mixed or scalars) else dt
        if rt._bare:
            _dtype.check_kernel(cls, rt, scalars)
            if rt.is_floating_point and cls.__name__ in _dtype.FLOAT8_IN_FLOAT32:
                return [_dtype.float8_to_float32(np, a, _FLOAT32) if isinstance(x, Tensor) else a
                        for x, a in zip(inputs, arrays)], rt
    if cls.promote and (mixed or scalars and not _scalars_fit(inputs, dt)):
        rt = _dtype.result_type(*inputs)
        if rt.is_complex and cls.no_complex is not None:
            _refuse_complex(cls, rt)
        half = cls.half_in_float32 and (rt is _F16 or rt is _BF16)
        npdt = _FLOAT32 if half else rt.np
        return [(x._data if x._data.dtype == npdt else _astype(x, npdt)) if isinstance(x, Tensor) else x
                for x in inputs], (rt if half else None)
    if cls.int_to_float and not (dt.is_floating_point or dt.is_complex):
        default = _dtype._default[0]
        half = cls.half_in_float32 and (default is _F16 or default is _BF16)
        npdt = _FLOAT32 if half else default.np
        return [_astype(x, npdt) if isinstance(x, Tensor) else x for x in inputs], (default if half else None)
    back = None
    if cls.half_in_float32 and (mixed or dt is _F16 or dt is _BF16):
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor) and (x.dtype is _F16 or x.dtype is _BF16):
                back = back or x.dtype
                arrays[i] = _astype(x, _FLOAT32)
    return arrays, back


def _refuse_complex(cls, dt):
    """Raises ``cls.no_complex`` for inputs of (or promoted to) the complex dtype ``dt``."""
    spec = cls.no_complex
    exc, msg = (NotImplementedError, f'"{spec}" not implemented for \'{{}}\'') if isinstance(spec, str) else spec
    raise exc(msg.format(_dtype.scalar_name(dt)))


def _round_back(ctx, o, back):
    """A float32 result ``o`` of a half (or float8) input rounded back to its dtype ``back``."""
    if ctx._device is META:
        return meta_array(o.shape, back.np)
    return o.astype(back.np) if back.itemsize == 2 else _dtype.float32_to_float8(ctx.xp, o, back.np)


def _astype(x, npdt):
    """``x``'s array cast to ``npdt``; a meta tensor's without computing."""
    return x._data.astype(npdt) if x.device is not META else meta_array(x._data.shape, npdt)


def _has_numpy_value(inputs):
    for x in inputs:
        if isinstance(x, (np.generic, np.ndarray)):
            return True
    return False


def _from_numpy_values(inputs):
    """NumPy scalars as the Python numbers they hold (weak in type promotion, as torch takes them; a NumPy bool, as
    in torch, as a float) and NumPy arrays as CPU tensors (sharing their memory)."""
    return [(float(x) if isinstance(x, np.bool_) else x.item()) if isinstance(x, np.generic) else
            Tensor._make(x, _dtype.from_numpy_dtype(x.dtype), CPU) if isinstance(x, np.ndarray) else x
            for x in inputs]


def _scalars_fit(inputs, dt):
    """Whether every Python number among ``inputs`` leaves the Tensors' common dtype ``dt`` unchanged."""
    for x in inputs:
        t = type(x)
        if t is float:
            if not dt.is_floating_point:
                return False
        elif t is int:
            if dt is _dtype.bool:
                return False
        elif x is not None and not isinstance(x, Tensor):
            return False
    return True


def _as_array(xp, o):
    if xp is np or not isinstance(o, xp.ndarray):
        return xp.asarray(o)
    return o


def _refresh_view(x):
    """A view whose base was modified in place since its grad_fn was set takes its place in the graph anew."""
    if x._base._requires_grad and x._view_chain is not None:
        from .._ops._strided import refresh_view
        refresh_view(x)
    elif x._view_chain is None and getattr(x.grad_fn, "_user", False):
        raise RuntimeError(f"Output {x._output_nr} of {type(x.grad_fn).__name__} is a view and its base or another "
                           "view of its base has been modified inplace. This view was created inside a custom "
                           "Function (or because an input was returned as-is) and the autograd logic to handle "
                           "view+inplace would override the custom backward associated with the custom Function, "
                           "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
                           "the output of the custom Function.")
    else:
        x._view_version = x._vc[0]


def _mark_view(ctx, t, inputs, arrays, params):
    """An output sharing memory with input 0 is a view of it: same version counter, same base."""
    src = inputs[0]
    if not isinstance(src, Tensor):
        return
    o, a = t._data, arrays[0]
    base = o.base  # NumPy's views of ``a`` have ``a``, or what ``a`` is a view of, as their base
    if base is None or (base is not a and base is not a.base):
        if not (ctx.xp.may_share_memory(o, a) or o.size == 0):
            return
    t._vc = vc = src._vc
    base = src._base
    if base is None:
        t._base = src
        t._view_chain = ((type(ctx), inputs[1:], params),)
    else:
        t._base = base
        t._view_chain = (src._view_chain or ()) + ((type(ctx), inputs[1:], params),)
    t._view_version = vc[0]


def direct_view(cls, src, o, params):
    """The Tensor ``cls.apply(src, **params)`` returns when its forward gives ``o``, a NumPy view of ``src``'s
    array, built without the general dispatch: the hot path of reshape and basic indexing. When a graph is recorded,
    the node is a ``cls`` instance holding what such a forward stores on ctx: ``params`` as attributes, and
    ``in_shape``. ``apply`` runs instead while it is traced, under anomaly detection, and for a view whose base
    changed in place."""
    t = _direct(cls, src, o, params)
    if t is None:
        return cls.apply(src, **params)
    t._vc = vc = src._vc
    link = ((cls, (), params),)
    base = src._base
    if base is None:
        t._base = src
        t._view_chain = link
    else:
        t._base = base
        t._view_chain = (src._view_chain or ()) + link
    t._view_version = vc[0]
    return t


def direct_result(cls, src, o, params):
    """As :func:`direct_view`, for ``o`` a new NumPy array (or scalar) of ``src``'s dtype: the hot path of small
    reductions. ``o`` is not used while ``apply`` is traced or anomaly detection is on."""
    t = _direct(cls, src, o if type(o) is _ndarray or src.device.type != "cpu" else np.asarray(o), params)
    if t is None:
        return cls.apply(src, **params)
    t._vc = [0]
    t._base = t._view_chain = None
    t._view_version = 0
    return t


def _direct(cls, src, o, params):
    """The Tensor of :func:`direct_view` and :func:`direct_result` and its node, without its version counter and
    view fields; None where ``apply`` must run."""
    needs = src._requires_grad and grad_enabled()
    if getattr(cls.apply, "dispatches", None) is not cls or needs and (
            ANOMALY[0] or src._base is not None and src._view_version != src._vc[0]):
        return None
    t = _new(Tensor)
    t._data = o
    t.dtype = d = src.dtype
    t.device = src.device
    t.grad = None
    t._output_nr = 0
    if needs:
        ctx = _new(cls)
        ctx.__dict__.update(params)
        ctx.in_shape = src._data.shape
        fn = src.grad_fn
        ctx._edges = [(src if fn is None else fn, src._output_nr, src._data.shape, d)]
        ctx._out_meta = ((o.shape, d),)
        t._requires_grad = True
        t.grad_fn = ctx
    else:
        t._requires_grad = False
        t.grad_fn = None
    return t


def _pack_saved(ctx, inputs, arrays, raw_outs, outs):
    """Turns what forward passed to save_for_backward into entries ``(kind, obj, version_counter, version)``:
    kind 0 an input Tensor, 1 an output (rebuilt on use, so that a node does not hold its own output), 2 anything
    else."""
    saved = []
    n = len(arrays)
    for item in ctx._saved_raw:
        # Ops mostly save their first inputs: test those by identity before the general search.
        if n and item is arrays[0]:
            t = inputs[0]
        elif n > 1 and item is arrays[1]:
            t = inputs[1]
        elif raw_outs and item is raw_outs[0] and outs[0].grad_fn is ctx:
            saved.append((1, (outs[0]._data, 0, True), outs[0]._vc, outs[0]._vc[0]))
            continue
        else:
            t = None
        if t is not None and isinstance(t, Tensor):
            vc = t._vc
            saved.append((0, t, vc, vc[0]))
        else:
            saved.append(_saved_entry(ctx, item, inputs, arrays, raw_outs, outs))
    ctx._saved = _hooked_entries(ctx, saved) if SAVED_HOOKS else saved
    ctx._saved_raw = None


def _saved_entry(ctx, item, inputs, arrays, raw_outs, outs):
    if item is None:
        return (2, None, None, 0)
    if isinstance(item, Tensor):
        return _saved_tensor(ctx, item, inputs, outs)
    for i, a in enumerate(arrays):
        if a is item and isinstance(inputs[i], Tensor):
            t = inputs[i]
            return (0, t, t._vc, t._vc[0])
    for nr, o in enumerate(raw_outs):
        if o is item:
            return _saved_tensor(ctx, outs[nr], inputs, outs)
    if hasattr(item, "dtype") and hasattr(item, "shape"):  # a new array: a constant for backward
        item = Tensor._make(_as_array(ctx.xp, item), _dtype.from_numpy_dtype(item.dtype), ctx._device)
    return (2, item, None, 0)


def _saved_tensor(ctx, t, inputs, outs):
    for nr, o in enumerate(outs):
        if o is t and t.grad_fn is ctx:
            return (1, (t._data, nr, True), t._vc, t._vc[0])
    for x in inputs:
        if x is t:
            return (0, t, t._vc, t._vc[0])
    return (2, t, t._vc, t._vc[0])


def _hooked_entries(ctx, saved):
    """Saved entries passed through the innermost ``saved_tensors_hooks``' pack hook (run, as torch does, with
    gradients off): kind 3, whose object is ``(packed, unpack_hook, link)``; ``link`` says how the unpacked Tensor
    rejoins the graph (see :func:`_unpack`)."""
    with no_grad():
        return _pack_entries(ctx, saved, *SAVED_HOOKS[-1])


def _pack_entries(ctx, saved, pack, unpack):
    out = []
    for entry in saved:
        kind, obj, vc, version = entry
        if kind == 1:
            arr, nr, diff = obj
            t = Tensor._make(arr, ctx._out_meta[nr][1], ctx._device, diff, ctx if diff else None, nr)
            t._vc = vc
            link = (1, nr, diff)
        elif isinstance(obj, Tensor):
            t = obj
            link = (0, t.grad_fn, t._output_nr) if t.grad_fn is not None else (2, t, None) if t._requires_grad else None
        else:
            out.append(entry)
            continue
        out.append((3, (pack(t), unpack, link), vc, version))
    return out


def _unpack(node, obj):
    """The Tensor a kind-3 saved entry gives back: the unpack hook's result, in the saved tensor's place in the
    graph (as an output of ``node``, of its grad_fn, or flowing into its leaf)."""
    packed, unpack, link = obj
    u = unpack(packed)
    if not isinstance(u, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(u).__name__}")
    if link is None:
        return u
    kind, a, b = link
    if kind == 1:  # output a of node, differentiable or not (b)
        return Tensor._make(u._data, u.dtype, u.device, b, node if b else None, a)
    if kind == 0:  # output b of the node a
        return Tensor._make(u._data, u.dtype, u.device, True, a, b)
    if u is a or not grad_enabled():  # the leaf a
        return u
    return _Unpacked.apply(a, u.detach())


class _Unpacked(Function):
    """A leaf's unpacked saved value that, under create_graph, passes its gradient on to that leaf."""

    @staticmethod
    def forward(ctx, leaf, value):
        return value

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def rebind_saved_output(out, target):
    """``out`` was just written into ``target`` (an in-place op): entries of ``out``'s node that saved ``out`` now
    refer to ``target``'s memory and version counter."""
    saved = out.grad_fn._saved if out.grad_fn is not None else None
    for i, entry in enumerate(saved or ()):
        if entry[0] == 1 and entry[1][1] == out._output_nr:
            saved[i] = (1, (target._data, out._output_nr, entry[1][2]), target._vc, target._vc[0])


def _short_name(fn):
    return re.sub(r"Backward\d*$", "", fn.name())


def _type_name(x):
    """``x``'s type as torch's argument errors name it (``list``, ``numpy.ndarray``)."""
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"


def _common_device(cls, inputs):
    """The inputs of a call mixing meta tensors with 0-d CPU ones, which take part as scalars do (torch's rule),
    on the meta device; raises for any other mix of devices."""
    devs = [x.device for x in inputs if isinstance(x, Tensor) and not (x.device is CPU and x._data.ndim == 0)]
    if META not in devs:
        _device_mismatch(cls, inputs)
    for d in devs:
        if d is not META:
            raise RuntimeError(f"Tensor on device {d} is not on the expected device {devs[0]}!"
                               if devs[0] is META else f"Tensor on device meta is not on the expected device {d}!")
    return [x.to(META) if isinstance(x, Tensor) and x.device is CPU else x for x in inputs]


def _device_mismatch(cls, inputs):
    devs = [str(x.device) for x in inputs if isinstance(x, Tensor)]
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                       f"{devs[0]} and {next(d for d in devs if d != devs[0])}! (when checking arguments for "
                       f"{cls.__name__.lower()})")


def once_differentiable(fn):
    """Decorator for a custom Function's ``backward`` that cannot itself be differentiated: it runs without
    recording, and differentiating its result (double backward) raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        with no_grad():
            outputs = fn(ctx, *grads)
        if not grad_enabled() or not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = tuple(_DelayedError.apply(o.detach().requires_grad_()) if isinstance(o, Tensor)
                     and (o.dtype.is_floating_point or o.dtype.is_complex) else o
                     for o in ((outputs,) if single else outputs))
        return outs[0] if single else outs
    return wrapper


FunctionCtx = Function  # the type of ``ctx``: each call's node


class _DelayedError(Function):
    """Passes its input through; differentiating it raises (the result of a @once_differentiable backward)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


class AccumulateGrad:
    """The node a leaf's gradient flows into (as seen through ``next_functions``)."""

    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"  # torch's name, which graph tools match on

    @property
    def metadata(self):
        return self.__dict__.setdefault("_metadata", {})

    def register_prehook(self, fn):
        """Registers ``fn(grad_outputs)`` to run on the leaf's gradient before it is accumulated; it may return new
        grad_outputs."""
        def hook(g):
            new = fn((g,))
            return None if new is None else new[0]
        return self.variable.register_hook(hook)

    def register_hook(self, fn):
        """Registers ``fn(grad_inputs, grad_outputs)`` to run after the leaf's gradient was accumulated into its
        ``.grad``: ``grad_inputs`` is ``()``, ``grad_outputs`` holds the incoming gradient."""
        from .graph import _MultiHandle
        incoming = []

        def record(g):
            incoming[:] = [g]

        def hook(leaf):
            fn((), tuple(incoming))
        return _MultiHandle((self.variable.register_hook(record),
                             self.variable.register_post_accumulate_grad_hook(hook)))

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


_ACC_NODES = weakref.WeakValueDictionary()  # id(leaf) -> its AccumulateGrad while someone holds that node


def _accumulate_grad_node(leaf):
    node = _ACC_NODES.get(id(leaf))
    if node is None:
        node = _ACC_NODES[id(leaf)] = AccumulateGrad(leaf)
    return node


class RemovableHandle:
    """Returned by ``register_hook``: ``remove()`` unregisters the hook; also a context manager."""

    _ids = itertools.count()

    def __init__(self, container, item):
        container.append(item)
        self._container, self._item = container, item
        self.id = next(RemovableHandle._ids)

    def remove(self):
        for i, x in enumerate(self._container):
            if x is self._item:
                del self._container[i]
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
