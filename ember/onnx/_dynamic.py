"""Dynamic axes: which numbers of a trace are functions of the dynamic input sizes.

The module is traced once at the example sizes and, per dynamic axis, twice more with that axis resized. The traces
must record the same ops; a number (a shape entry, a slice bound, a Python scalar, a constant's shape) that differs
between them is fitted as ``k * prod(axes) + c`` (affine in one axis, or a product of several) and becomes a
``Sym``, which the exporter emits as arithmetic on ``Shape`` of the inputs. What fits no such form is ``Varying``:
an op that receives one reports it as unsupported with a dynamic axis.
"""
import copy
import math
from fractions import Fraction

import numpy as np

from .._tensor import Tensor
from ._trace import Value


class Sym:
    """A number equal to ``k * prod(symbols) + c`` (``value`` at the traced sizes)."""

    __slots__ = ("symbols", "k", "c", "value")

    def __init__(self, symbols, k, c, value):
        self.symbols, self.k, self.c, self.value = tuple(symbols), k, c, value

    def key(self):
        return self.symbols, self.k, self.c, type(self.value)

    def is_axis(self):
        """Whether this is exactly one dynamic axis (its name then labels output dims)."""
        return len(self.symbols) == 1 and self.k == 1 and self.c == 0

    def __repr__(self):
        term = "*".join(self.symbols)
        k = "" if self.k == 1 else f"{self.k}*"
        c = "" if self.c == 0 else f"{self.c:+}"
        return f"Sym({k}{term}{c})"


class Varying:
    """A parameter that changes with a dynamic axis in a way no ``Sym`` expresses."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Varying({self.value!r})"


class DynamicError(RuntimeError):
    pass


def is_dynamic(obj):
    """Whether ``obj`` (a parameter, possibly nested) holds a Sym or Varying."""
    if isinstance(obj, (Sym, Varying)):
        return True
    if isinstance(obj, (tuple, list)):
        return any(is_dynamic(o) for o in obj)
    if isinstance(obj, dict):
        return any(is_dynamic(o) for o in obj.values())
    if isinstance(obj, slice):
        return is_dynamic((obj.start, obj.stop, obj.step))
    slots = getattr(type(obj), "__slots__", None)
    if slots and not isinstance(obj, (Tensor, Value)):
        return any(is_dynamic(getattr(obj, s, None)) for s in slots)
    return False


def static(obj):
    """``obj`` with every Sym replaced by its traced value."""
    if isinstance(obj, Sym):
        return obj.value
    if isinstance(obj, Varying):
        return obj.value
    if isinstance(obj, tuple):
        return tuple(static(o) for o in obj)
    if isinstance(obj, list):
        return [static(o) for o in obj]
    if isinstance(obj, slice):
        return slice(static(obj.start), static(obj.stop), static(obj.step))
    return obj


class Fitter:
    """Fits the numbers of the traces: the base sizes, and per variant trace the sizes it was run at (each variant
    changes one axis)."""

    def __init__(self, base_sizes, variant_sizes):
        self.base = base_sizes
        self.variants = variant_sizes

    def fit(self, v0, vs):
        """``v0`` if all of ``vs`` equal it, else a Sym, else a Varying."""
        if all(_same(v, v0) for v in vs):
            return v0
        if not _number(v0) or not all(_number(v) for v in vs):
            return Varying(v0)
        changed = sorted({s for sizes, v in zip(self.variants, vs) if v != v0
                          for s in sizes if sizes[s] != self.base[s]})
        points = [(sizes, _fraction(v)) for sizes, v in zip(self.variants, vs)] + [(self.base, _fraction(v0))]
        if len(changed) == 1:
            s = changed[0]
            other = next((sz, v) for sz, v in points if sz[s] != self.base[s])
            k = (other[1] - _fraction(v0)) / (other[0][s] - self.base[s])
            c = _fraction(v0) - k * self.base[s]
        else:
            k, c = _fraction(v0) / math.prod(self.base[s] for s in changed), Fraction(0)
        if k == 0 or any(k * math.prod(sz[s] for s in changed) + c != v for sz, v in points):
            return Varying(v0)
        return Sym(changed, k, c, v0)

    def merge(self, base, others):
        """``base`` (a parameter, possibly nested) with the numbers that differ in ``others`` fitted."""
        if all(_same(o, base) for o in others):
            return base
        if isinstance(base, (tuple, list)):
            if not all(type(o) is type(base) and len(o) == len(base) for o in others):
                return Varying(base)
            merged = [self.merge(b, [o[i] for o in others]) for i, b in enumerate(base)]
            return tuple(merged) if isinstance(base, tuple) else merged
        if isinstance(base, dict):
            if not all(isinstance(o, dict) and o.keys() == base.keys() for o in others):
                return Varying(base)
            return {k: self.merge(v, [o[k] for o in others]) for k, v in base.items()}
        if isinstance(base, slice):
            parts = self.merge((base.start, base.stop, base.step), [(o.start, o.stop, o.step) for o in others])
            return Varying(base) if isinstance(parts, Varying) else slice(*parts)
        if _number(base):
            return self.fit(base, others)
        slots = getattr(type(base), "__slots__", None)
        if slots and all(type(o) is type(base) for o in others):  # e.g. a conv Plan: attribute by attribute
            new = copy.copy(base)
            for s in slots:
                setattr(new, s, self.merge(getattr(base, s), [getattr(o, s) for o in others]))
            return new
        return Varying(base)


def _fraction(v):
    return Fraction(v.item() if isinstance(v, np.generic) else v)


def _number(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, slice):
        return _same((a.start, a.stop, a.step), (b.start, b.stop, b.step))
    if isinstance(a, float) and a != a:
        return b != b
    slots = getattr(type(a), "__slots__", None)
    if slots and not isinstance(a, Tensor):
        return all(_same(getattr(a, s, None), getattr(b, s, None)) for s in slots)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


class Dynamic:
    """What comparing the traces found: merged parameters per record, Python-number inputs per record, symbolic
    shapes per Value, and how each constant that changes is rebuilt (``('full', fill)`` or ``('arange', start,
    step)`` over a symbolic shape)."""

    def __init__(self, base, variants, fitter):
        self.params, self.scalars, self.shapes, self.consts = {}, {}, {}, {}
        _check_structure(base, variants)
        for i, rec in enumerate(base.records):
            others = [t.records[i] for t in variants]
            params = fitter.merge(rec.params, [o.params for o in others])
            if params is not rec.params:
                self.params[i] = params
            for j, x in enumerate(rec.inputs):
                if not isinstance(x, Value) and x is not None:
                    v = fitter.merge(x, [o.inputs[j] for o in others])
                    if v is not x:
                        self.scalars[(i, j)] = v
        for v in base.values:
            shape = fitter.merge(v.shape, [t.values[v.id].shape for t in variants])
            if shape != v.shape:
                self.shapes[v.id] = shape
        for c in base.consts:
            arrays = [t.values[c.id].array for t in variants]
            if all(_same(a, c.array) for a in arrays):
                continue
            self.consts[c.id] = _rebuild(c, arrays, self.shapes.get(c.id))


def _rebuild(c, arrays, shape):
    """How a constant that changes with the sizes is made at run time, or None."""
    if shape is None or any(isinstance(s, Varying) for s in shape):
        return None
    flat = [c.array.reshape(-1)] + [a.reshape(-1) for a in arrays]
    if all(f.size and (f == f[0]).all() and f[0] == flat[0][0] for f in flat):
        return ("full", c.array.reshape(-1)[0].item(), shape)
    if c.array.ndim == 1 and all(f.size >= 2 for f in flat):
        start, step = flat[0][0], flat[0][1] - flat[0][0]
        if all((f == start + step * np.arange(f.size, dtype=f.dtype)).all() for f in flat):
            return ("arange", start.item(), step.item(), shape)
    return None


def _check_structure(base, variants):
    for t in variants:
        if len(t.records) != len(base.records):
            raise DynamicError(f"the traced graph has {len(base.records)} ops at the example sizes and "
                               f"{len(t.records)} at other sizes of the dynamic axes: the model's control flow "
                               "depends on them, so it cannot be exported with those axes dynamic")
        if len(t.outputs) != len(base.outputs):
            raise DynamicError(f"the model returns {len(base.outputs)} tensors at the example sizes and "
                               f"{len(t.outputs)} at other sizes of the dynamic axes, so it cannot be exported with "
                               "those axes dynamic")
        for a, b in zip(base.records, t.records):
            ins_a = [x.id if isinstance(x, Value) else type(x).__name__ for x in a.inputs]
            ins_b = [x.id if isinstance(x, Value) else type(x).__name__ for x in b.inputs]
            if a.cls is not b.cls or ins_a != ins_b or len(a.outputs) != len(b.outputs):
                raise DynamicError(f"op #{a.index} is {a.cls.__name__}{tuple(ins_a)} at the example sizes but "
                                   f"{b.cls.__name__}{tuple(ins_b)} at other sizes of the dynamic axes (in "
                                   f"{a.where!r}): the model's control flow depends on them, so it cannot be "
                                   "exported with those axes dynamic")
        if [v.id for v in t.outputs] != [v.id for v in base.outputs]:
            raise DynamicError("the model returns different tensors at other sizes of the dynamic axes")
