"""Tracing: one run of a module's forward recorded as the list of ``Function.apply`` calls it makes.

For the duration of a trace every built-in op's ``apply`` (the class attribute, and the references the public
elementwise functions captured at import) is replaced by a recorder that calls the original and appends a
``Record``; all of it is restored afterwards, so tracing costs nothing outside ``export``. Tensors are identified by
their array (``tensor._data``): views, ``detach()`` and re-wrapped index tensors keep it, and in-place writes move
the array's identity to the value written.
"""
import contextlib
import sys
import threading
import types
import warnings

from .. import _random, _tensor
from .._device import array_module
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module, register_module_forward_hook, register_module_forward_pre_hook


class Value:
    """A tensor of the traced graph: a graph ``input``, a model ``param`` (or buffer), a ``const`` (any other
    tensor the ops read), or an ``op`` output."""

    __slots__ = ("id", "kind", "tensor", "name", "producer", "array")

    def __init__(self, id, kind, tensor, name=None, producer=None):
        # id: the creation order, the same in two traces of one graph
        self.id, self.kind, self.tensor, self.name, self.producer = id, kind, tensor, name, producer
        self.array = None  # consts: the contents when first read (later in-place writes do not change them)

    @property
    def dtype(self):
        return self.tensor.dtype

    @property
    def shape(self):
        return tuple(self.tensor.shape)

    def __repr__(self):
        return f"Value({self.id}, {self.kind}, {self.name or ''}{list(self.shape)})"


class Record:
    """One op call: its Function class, inputs (Values, Python numbers or None), keyword parameters, output Values
    (None for a non-tensor output) and the module path it ran in."""

    __slots__ = ("index", "cls", "inputs", "params", "outputs", "where")

    def __init__(self, index, cls, inputs, params, outputs, where):
        self.index, self.cls, self.inputs, self.params, self.outputs, self.where = \
            index, cls, inputs, params, outputs, where


class Trace:
    """The records of one forward run, the Values they connect, and what could not be recorded."""

    def __init__(self, model):
        self.records, self.inputs, self.outputs = [], [], []
        self.issues = []  # (what, where) that make the graph wrong: reported as unsupported
        self.consts, self.values = [], []
        self._values = {}  # id(array) -> Value
        self._alive = []  # keeps the arrays whose ids key _values alive
        self._params, self._modules = {}, {}
        if isinstance(model, Module):
            for name, t in list(model.named_parameters()) + list(model.named_buffers()):
                self._params.setdefault(id(t._data), (name, t))
            self._modules = {id(m): name for name, m in model.named_modules()}
        self._stack = [""]
        self._depth = 0
        self._thread = threading.get_ident()

    @property
    def where(self):
        return self._stack[-1]

    def _new(self, t, kind, name=None, producer=None):
        v = Value(len(self.values), kind, t, name, producer)
        self.values.append(v)
        self._alive.append(t._data)
        self._values[id(t._data)] = v
        return v

    def lookup(self, t):
        """The Value of tensor ``t`` (registering a parameter or constant on first sight)."""
        v = self._values.get(id(t._data))
        if v is not None:
            return v
        p = self._params.get(id(t._data))
        if p is not None:
            return self._new(p[1], "param", p[0])
        v = self._new(t, "const", len(self.consts))
        a = t._data
        v.array = a.get() if t.device.type != "cpu" else a.copy()  # NumPy, as the file will hold it
        self.consts.append(v)
        return v

    def add_input(self, t, name):
        v = self._new(t, "input", name)
        self.inputs.append(v)
        return v

    def traced(self, t):
        """Whether ``t`` depends on a graph input (not a parameter or constant)."""
        v = self._values.get(id(t._data))
        return v is not None and v.kind in ("input", "op")

    def record(self, cls, inputs, params, out):
        ins = tuple(self.lookup(x) if isinstance(x, Tensor) else x for x in inputs)
        rec = Record(len(self.records), cls, ins, params, None, self.where)
        outs = []
        for o in (out if isinstance(out, tuple) else (out,)):
            if isinstance(o, Tensor):
                outs.append(self._new(o, "op", producer=rec))
            else:
                outs.append(None)
        rec.outputs = tuple(outs)
        self.records.append(rec)

    def alias(self, target, src):
        """``target``'s array now holds ``src``'s values (an in-place write)."""
        if target._base is not None and (self.traced(src) or self.traced(target)):
            self.issues.append(("an in-place write into a view (Tensor._base is set)", self.where))
        v = self._values.get(id(src._data))
        if v is not None:
            self._alive.append(target._data)
            self._values[id(target._data)] = v
        elif self.traced(target):
            self.issues.append(("an in-place write whose value was not computed by recorded ops", self.where))

    # -- module paths (for names and messages) -----------------------------------------------------------------
    def _enter(self, module, args):
        if threading.get_ident() == self._thread:
            name = self._modules.get(id(module))
            self._stack.append(self.where if name is None else name)

    def _leave(self, module, args, out):
        if threading.get_ident() == self._thread and len(self._stack) > 1:
            self._stack.pop()


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _recorder(trace, cls, apply):
    def recording_apply(*inputs, **params):
        if threading.get_ident() != trace._thread:
            return apply(*inputs, **params)
        trace._depth += 1
        try:
            out = apply(*inputs, **params)
        finally:
            trace._depth -= 1
        if trace._depth == 0:  # ops run inside another op's forward are part of it
            trace.record(cls, inputs, params, out)
        return out
    return recording_apply


@contextlib.contextmanager
def _recording(trace):
    """Patches every op's dispatch (and the in-place write helpers) to record into ``trace``."""
    undo = []  # (object, attribute, original value)

    def patch(obj, name, value):
        undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)
    handles = []
    try:
        wrappers = {}
        for cls in set(_subclasses(Function)):
            sm = cls.__dict__.get("apply")
            fn = getattr(sm, "__func__", None)
            if fn is None or getattr(fn, "dispatches", None) is not cls:
                continue  # no dispatcher of its own (torch-style Functions run their ops, which are recorded)
            wrappers[fn] = _recorder(trace, cls, fn)
            undo.append((cls, "apply", sm))
            cls.apply = staticmethod(wrappers[fn])
        # Public functions that captured a dispatcher at import (``mul = public(Mul, ...)``) hold it in a closure.
        namespaces = [vars(m) for name, m in list(sys.modules.items()) if name.startswith("ember.") and m is not None]
        for ns in namespaces + [vars(Tensor)]:
            for obj in list(ns.values()):
                if type(obj) is types.FunctionType and obj.__closure__:
                    for cell in obj.__closure__:
                        try:
                            f = cell.cell_contents
                        except ValueError:  # an empty cell
                            continue
                        if type(f) is types.FunctionType and f in wrappers:
                            patch(cell, "cell_contents", wrappers[f])
        patch(_tensor, "_copy_into", _traced_copy_into(trace, _tensor._copy_into))
        patch(Tensor, "__setitem__", _traced_setitem(trace, Tensor.__setitem__))
        patch(Tensor, "__getitem__", _traced_getitem(trace, Tensor.__getitem__))
        patch(_random.Generator, "_sampler", _traced_sampler(trace, _random.Generator._sampler))
        for name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__"):
            patch(Tensor, name, _warn_on_data(trace, name, getattr(Tensor, name)))
        handles += [register_module_forward_pre_hook(trace._enter),
                    register_module_forward_hook(trace._leave, always_call=True)]
        yield
    finally:
        for h in handles:
            h.remove()
        for obj, name, old in reversed(undo):
            setattr(obj, name, old)


def _here(trace):
    """Whether the caller runs in the traced thread, outside any op's forward."""
    return threading.get_ident() == trace._thread and trace._depth == 0


def _traced_copy_into(trace, copy_into):
    def traced_copy_into(self, out, opname):
        copy_into(self, out, opname)
        if _here(trace):
            trace.alias(self, out)
    return traced_copy_into


def _traced_setitem(trace, setitem):
    def traced_setitem(self, key, value):
        parts = key if isinstance(key, tuple) else (key,)
        if _here(trace) and any(isinstance(x, Tensor) and trace.traced(x) for x in (self, value) + parts):
            trace.issues.append(("Tensor.__setitem__ (an indexed in-place write)", trace.where))
        return setitem(self, key, value)
    return traced_setitem


def _traced_getitem(trace, getitem):
    def traced_getitem(self, key):
        parts = key if isinstance(key, tuple) else (key,)
        if _here(trace) and any(isinstance(k, Tensor) and k.dtype.name in ("bool", "uint8") and trace.traced(k)
                                for k in parts):
            trace.issues.append(("indexing with a boolean mask computed from the inputs (data-dependent shape)",
                                 trace.where))
        return getitem(self, key)
    return traced_getitem


def _traced_sampler(trace, sampler):
    def traced_sampler(self):
        if threading.get_ident() == trace._thread:
            trace.issues.append(("random sampling (dropout or another random op in training mode? export after "
                                 "model.eval())", trace.where))
        return sampler(self)
    return traced_sampler


def _warn_on_data(trace, name, method):
    def reading(self, *args, **kwargs):
        if _here(trace) and trace.traced(self):
            warnings.warn(f"ember.onnx.export: Tensor.{name}() on a value computed from the inputs (in "
                          f"{trace.where or 'the model'}): the exported graph keeps the traced result as a constant "
                          "and will not follow the inputs here.", UserWarning, stacklevel=2)
        return method(self, *args, **kwargs)
    return reading


def flatten(obj):
    """The tensors of a nested tuple/list/dict, in order."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for o in obj for t in flatten(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in flatten(o)]
    return []


_LOCK = threading.Lock()  # the patches are global: one trace at a time


def run(model, args, kwargs, input_names):
    """Runs ``model(*args, **kwargs)`` once, recording it; tensors among ``args``/``kwargs`` are the graph inputs."""
    with _LOCK:
        return _run(model, args, kwargs, input_names)


def _run(model, args, kwargs, input_names):
    for _ in range(2):
        known = set(_subclasses(Function))
        trace = Trace(model)
        for t, name in zip(input_tensors(args, kwargs), input_names):
            trace.add_input(t, name)
        with no_grad(), _recording(trace):
            out = model(*args, **kwargs)
        if set(_subclasses(Function)) <= known:
            break  # else ops were defined during the run (a lazy import): run again to record them too
    trace.outputs = [trace.lookup(t) for t in flatten(out)]
    return trace


def input_tensors(args, kwargs):
    """The graph inputs: the tensors among ``args`` and ``kwargs`` (nested in tuples, lists and dicts), in order."""
    return flatten(list(args)) + flatten(list(kwargs.values()))


def resized(args, kwargs, axes):
    """``args``/``kwargs`` with tensor axes resized: ``axes`` maps (input position, dim) to a new size. Entries are
    taken cyclically along the dim, so values stay valid (token ids, masks)."""
    count = [0]

    def resize(x):
        if isinstance(x, (tuple, list)):
            return type(x)(resize(v) for v in x)
        if isinstance(x, dict):
            return {k: resize(v) for k, v in x.items()}
        if not isinstance(x, Tensor):
            return x
        i = count[0]
        count[0] += 1
        a, xp = x._data, array_module(x.device)
        for (j, dim), n in axes.items():
            if j == i:
                a = xp.take(a, xp.arange(n) % a.shape[dim], axis=dim)
        return Tensor._make(xp.ascontiguousarray(a), x.dtype, x.device) if a is not x._data else x
    return resize(tuple(args)), resize(dict(kwargs))
