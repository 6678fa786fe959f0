"""Export mapping of ember's ops onto ONNX nodes: elementwise, shape, indexing and reduction ops.

``SYMBOLIC[cls](g, op)`` emits the nodes of one recorded call of op class ``cls`` on Graph ``g`` and returns the
ONNX name of each output (None for one it cannot give). Mappings marked ``dynamic`` handle parameters that hold
``Sym`` numbers (sizes that depend on dynamic axes); the others are only called with static parameters. The neural
network ops are in ``symbolic_nn``.
"""
import math

import numpy as np

from .. import _dtype, _fill
from .._ops import (binary, compare, convert, index, matmul, order, pointwise, reduce, scan, scatter, shape, softmax,
                    special, split, unary, view)
from ..autograd.function import _DelayedError
from ..nn.modules._hooks import _HookIdentity
from ._dynamic import Sym, static
from ._trace import Value
from .exporter import INT64_MAX, Unsupported

SYMBOLIC = {}
_I64 = np.int64


def register(*classes, dynamic=False):
    def deco(fn):
        fn.dynamic = dynamic
        for cls in classes:
            SYMBOLIC[cls] = fn
        return fn
    return deco


def lookup(cls):
    """The mapping of op class ``cls`` (fill_/copy_ nodes are made per name, as subclasses of Overwrite)."""
    fn = SYMBOLIC.get(cls)
    if fn is None and issubclass(cls, _fill.Overwrite):
        fn = SYMBOLIC[_fill.Overwrite]
    return fn


def out_dtype(op, i=0):
    return op.outputs[i].dtype


def compute_dtype(op):
    """The dtype ember computed in: the promotion of the op's inputs."""
    return _dtype.result_type(*[x.tensor if isinstance(x, Value) else static(x) for x in op.inputs
                                if x is not None])


def ints(values):
    return np.array(values, dtype=_I64)


def rank(op, i=0):
    return len(op.inputs[i].shape)


# -- elementwise ----------------------------------------------------------------------------------------------------
def _nary(onnx_op, dtype=out_dtype, **attrs):
    """An op whose inputs are cast to ``dtype(op)`` and fed to one ONNX node."""
    def fn(g, op):
        dt = dtype(op)
        return g.node(onnx_op, [g.value(x, dt) for x in op.inputs], **attrs)
    return fn


for _cls, _name in [(binary.Add, "Add"), (binary.Sub, "Sub"), (binary.Mul, "Mul"), (binary.Div, "Div"),
                    (binary.Pow, "Pow"), (binary.Maximum, "Max"), (binary.Minimum, "Min"), (unary.Neg, "Neg"),
                    (unary.Abs, "Abs"), (unary.Sign, "Sign"), (unary.Floor, "Floor"), (unary.Ceil, "Ceil"),
                    (unary.Exp, "Exp"), (unary.Log, "Log"), (unary.Sqrt, "Sqrt"), (unary.Reciprocal, "Reciprocal"),
                    (unary.Sin, "Sin"), (unary.Cos, "Cos"), (unary.Tan, "Tan"), (unary.Asin, "Asin"),
                    (unary.Acos, "Acos"), (unary.Atan, "Atan"), (unary.Sinh, "Sinh"), (unary.Cosh, "Cosh"),
                    (unary.Asinh, "Asinh"), (unary.Acosh, "Acosh"), (unary.Atanh, "Atanh"), (unary.Tanh, "Tanh"),
                    (special.Sigmoid, "Sigmoid"), (special.Erf, "Erf")]:
    register(_cls)(_nary(_name))
for _cls, _name in [(compare.Eq, "Equal"), (compare.Lt, "Less"), (compare.Le, "LessOrEqual"),
                    (compare.Gt, "Greater"), (compare.Ge, "GreaterOrEqual")]:
    register(_cls)(_nary(_name, compute_dtype))
register(view.Clone, convert.To, _DelayedError)(lambda g, op: g.value(op.inputs[0], out_dtype(op)))
register(unary.Conj)(lambda g, op: g.node("Identity", [g.value(op.inputs[0])]))
register(_HookIdentity)(lambda g, op: [g.node("Identity", [g.value(x)]) for x in op.inputs])


@register(binary.AddScaled, binary.SubScaled)
def _add_scaled(g, op):
    dt = out_dtype(op)
    scaled = g.node("Mul", [g.value(op.inputs[1], dt), g.scalar(op.params["alpha"], dt)])
    return g.node("Add", [g.value(op.inputs[0], dt), scaled])


@register(compare.Ne)
def _ne(g, op):
    return g.node("Not", [_nary("Equal", compute_dtype)(g, op)])


def _unary(build):
    """A one-input op computed by ``build(g, x, dtype)`` on the input cast to the output dtype."""
    def fn(g, op):
        dt = out_dtype(op)
        return build(g, g.value(op.inputs[0], dt), dt)
    return fn


def _c(g, v, dt):
    return g.scalar(v, dt)


register(unary.Rsqrt)(_unary(lambda g, x, dt: g.node("Reciprocal", [g.node("Sqrt", [x])])))
register(unary.Log2)(_unary(lambda g, x, dt: g.node("Div", [g.node("Log", [x]), _c(g, math.log(2), dt)])))
register(unary.Log10)(_unary(lambda g, x, dt: g.node("Div", [g.node("Log", [x]), _c(g, math.log(10), dt)])))
register(unary.Log1p)(_unary(lambda g, x, dt: g.node("Log", [g.node("Add", [x, _c(g, 1, dt)])])))
register(unary.Expm1)(_unary(lambda g, x, dt: g.node("Sub", [g.node("Exp", [x]), _c(g, 1, dt)])))
register(unary.Exp2)(_unary(lambda g, x, dt: g.node("Pow", [_c(g, 2, dt), x])))
register(special.Erfc)(_unary(lambda g, x, dt: g.node("Sub", [_c(g, 1, dt), g.node("Erf", [x])])))


def _trunc(g, x, dt):
    if not dt.is_floating_point:
        return x
    return g.node("Mul", [g.node("Sign", [x]), g.node("Floor", [g.node("Abs", [x])])])


register(unary.Trunc)(_unary(_trunc))
register(unary.Frac)(_unary(lambda g, x, dt: g.node("Sub", [x, _trunc(g, x, dt)])))


@register(unary.Round)
def _round(g, op):
    dt, decimals = out_dtype(op), op.params.get("decimals", 0)
    x = g.value(op.inputs[0], dt)
    if not dt.is_floating_point:
        return g.node("Identity", [x])
    if not decimals:
        return g.node("Round", [x])
    scale = _c(g, 10.0 ** decimals, dt)
    return g.node("Div", [g.node("Round", [g.node("Mul", [x, scale])]), scale])


@register(binary.DivFloor, binary.FloorDivide)
def _div_floor(g, op):
    dt = out_dtype(op)
    a, b = (g.value(x, dt) for x in op.inputs)
    if dt.is_floating_point:
        return g.node("Floor", [g.node("Div", [a, b])])
    return g.node("Div", [g.node("Sub", [a, g.node("Mod", [a, b], fmod=0)]), b])  # exact for integers


@register(binary.DivTrunc)
def _div_trunc(g, op):
    dt = out_dtype(op)
    q = g.node("Div", [g.value(x, dt) for x in op.inputs])  # integer Div truncates
    return _trunc(g, q, dt)


@register(binary.Remainder)
def _remainder(g, op):
    dt = out_dtype(op)
    a, b = (g.value(x, dt) for x in op.inputs)
    if not dt.is_floating_point:
        return g.node("Mod", [a, b], fmod=0)
    return g.node("Sub", [a, g.node("Mul", [g.node("Floor", [g.node("Div", [a, b])]), b])])


register(binary.Fmod)(_nary("Mod", fmod=1))


@register(binary.Hypot)
def _hypot(g, op):
    dt = out_dtype(op)
    a, b = (g.value(x, dt) for x in op.inputs)
    return g.node("Sqrt", [g.node("Add", [g.node("Mul", [a, a]), g.node("Mul", [b, b])])])


@register(binary.Where, index.Where)
def _where(g, op):
    dt = out_dtype(op)
    cond = g.value(op.inputs[0], _dtype.bool)
    return g.node("Where", [cond] + [g.value(x, dt) for x in op.inputs[1:3]])


@register(pointwise.Clamp)
def _clamp(g, op):
    dt = out_dtype(op)
    x, lo, hi = op.inputs
    y = g.value(x, dt)
    if not isinstance(lo, Value) and not isinstance(hi, Value):
        return g.node("Clip", [y, "" if lo is None else g.value(lo, dt), "" if hi is None else g.value(hi, dt)])
    if lo is not None:
        y = g.node("Max", [y, g.value(lo, dt)])
    return y if hi is None else g.node("Min", [y, g.value(hi, dt)])


@register(pointwise.Lerp)
def _lerp(g, op):
    dt = out_dtype(op)
    a, b, w = (g.value(x, dt) for x in op.inputs)
    return g.node("Add", [a, g.node("Mul", [w, g.node("Sub", [b, a])])])


def _logical(onnx_op):
    def fn(g, op):
        return g.node(onnx_op, [g.value(x, _dtype.bool) for x in op.inputs])
    return fn


for _cls, _name in [(compare.LogicalAnd, "And"), (compare.LogicalOr, "Or"), (compare.LogicalXor, "Xor"),
                    (compare.LogicalNot, "Not")]:
    register(_cls)(_logical(_name))


def _bitwise(logical, onnx_op):
    def fn(g, op):
        dt = out_dtype(op)
        if dt is _dtype.bool:
            return _logical(logical)(g, op)
        if g.opset < 18:
            raise Unsupported(f"bitwise ops on integers need opset 18 (got {g.opset})")
        return _nary(onnx_op)(g, op)
    return fn


for _cls, _l, _b in [(compare.BitwiseAnd, "And", "BitwiseAnd"), (compare.BitwiseOr, "Or", "BitwiseOr"),
                     (compare.BitwiseXor, "Xor", "BitwiseXor"), (compare.BitwiseNot, "Not", "BitwiseNot")]:
    register(_cls)(_bitwise(_l, _b))


def _float_input(g, op):
    x = op.inputs[0]
    return g.value(x, None if x.dtype.is_floating_point else _dtype.float32)


register(compare.IsNan)(lambda g, op: g.node("IsNaN", [_float_input(g, op)]))
register(compare.IsInf)(lambda g, op: g.node("IsInf", [_float_input(g, op)]))
register(compare.IsPosInf)(lambda g, op: g.node("IsInf", [_float_input(g, op)], detect_negative=0))
register(compare.IsNegInf)(lambda g, op: g.node("IsInf", [_float_input(g, op)], detect_positive=0))


@register(compare.IsFinite)
def _isfinite(g, op):
    x = _float_input(g, op)
    return g.node("Not", [g.node("Or", [g.node("IsNaN", [x]), g.node("IsInf", [x])])])


@register(_fill.Overwrite)
def _overwrite(g, op):
    x, value = op.inputs
    return g.node("Expand", [g.value(value, out_dtype(op)), g.node("Shape", [g.value(x)])])


# -- views and shapes -----------------------------------------------------------------------------------------------
@register(view.Reshape, dynamic=True)
def _reshape(g, op):
    shape = op.params["shape"]
    zero = 0 in static(shape)
    return g.node("Reshape", [g.value(op.inputs[0]), g.ints(shape, infer=not zero)], allowzero=1 if zero else None)


@register(view.Expand, dynamic=True)
def _expand(g, op):
    return g.node("Expand", [g.value(op.inputs[0]), g.ints(op.params["shape"])])


register(view.Permute)(lambda g, op: g.node("Transpose", [g.value(op.inputs[0])], perm=list(op.params["dims"])))


@register(view.Squeeze)
def _squeeze(g, op):
    dims = op.params["dims"]
    x = g.value(op.inputs[0])
    return g.node("Squeeze", [x, g.const(ints(dims))]) if dims else g.node("Identity", [x])


register(view.Unsqueeze)(lambda g, op: g.node("Unsqueeze", [g.value(op.inputs[0]),
                                                            g.const(ints([op.params["dim"]]))]))


@register(view.SumToSize)
def _sum_to_size(g, op):
    x, target = g.static_shape(op.inputs[0]), op.params["shape"]
    lead = len(x) - len(target)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(target) if s == 1 and x[lead + i] != 1]
    y = g.reduce("ReduceSum", g.value(op.inputs[0]), axes, True)
    return g.node("Reshape", [y, g.const(ints(target))])


def _slice(g, x, starts, ends, axes, steps=None):
    inputs = [x, g.ints(starts), g.ints(ends), g.const(ints(axes))]
    if steps is not None and any(s != 1 for s in steps):
        inputs.append(g.const(ints(steps)))
    return g.node("Slice", inputs)


def _next(i):
    """The end of a one-element slice starting at ``i`` (an int or Sym)."""
    if isinstance(i, Sym):
        return Sym(i.symbols, i.k, i.c + 1, i.value + 1)
    return INT64_MAX if i == -1 else i + 1


@register(index.BasicIndex, dynamic=True)
def _basic_index(g, op):
    y = g.value(op.inputs[0])
    starts, ends, axes, steps, drop, new = [], [], [], [], [], []
    d = out = 0
    for k in op.params["key"]:
        if k is None:
            new.append(out)
            out += 1
            continue
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, k.step
            if not (start in (None, 0) and stop is None and step in (None, 1)):
                starts.append(0 if start is None else start)
                ends.append(INT64_MAX if stop is None else stop)
                axes.append(d)
                steps.append(1 if step is None else step)
            out += 1
        else:
            starts.append(k)
            ends.append(_next(k))
            axes.append(d)
            steps.append(1)
            drop.append(d)
        d += 1
    if axes:
        y = _slice(g, y, starts, ends, axes, steps)
    if drop:
        y = g.node("Squeeze", [y, g.const(ints(drop))])
    if new:
        y = g.node("Unsqueeze", [y, g.const(ints(new))])
    return y if axes or drop or new else g.node("Identity", [y])


@register(view.Narrow, dynamic=True)
def _narrow(g, op):
    p = op.params
    start, length = p["start"], p["length"]
    end = start + length if not isinstance(start, Sym) and not isinstance(length, Sym) else None
    if end is None:
        raise Unsupported("narrow() bounds that depend on a dynamic axis")
    return _slice(g, g.value(op.inputs[0]), [start], [end], [p["dim"]])


@register(view.Select, dynamic=True)
def _select(g, op):
    return g.node("Gather", [g.value(op.inputs[0]), g.scalar(op.params["index"], _dtype.int64)],
                  axis=op.params["dim"])


@register(split.Split, dynamic=True)
def _split(g, op):
    x, dim, pieces = g.value(op.inputs[0]), op.params["dim"], op.params["pieces"]
    starts = [static(s) for s, _ in pieces]
    lengths = [static(n) for _, n in pieces]
    size = static(g.shape(op.inputs[0])[dim])
    if starts == [sum(lengths[:i]) for i in range(len(lengths))] and sum(lengths) == size and len(pieces) > 1:
        return g.node("Split", [x, g.ints([n for _, n in pieces])], outputs=len(pieces), axis=dim)
    out = []
    for s, n in pieces:
        if isinstance(s, Sym) or isinstance(n, Sym):
            raise Unsupported("split pieces that depend on a dynamic axis")
        out.append(_slice(g, x, [s], [s + n], [dim]))
    return out


@register(split.Unbind)
def _unbind(g, op):
    dim = op.params["dim"]
    n = g.shape(op.inputs[0])[dim]
    if isinstance(n, Sym):
        raise Unsupported("unbind along a dynamic axis (the number of outputs would change)")
    x = g.value(op.inputs[0])
    parts = [x] if n == 1 else g.node("Split", [x, g.const(ints([1] * n))], outputs=n, axis=dim)
    return [g.node("Squeeze", [p, g.const(ints([dim]))]) for p in parts]


@register(shape.Cat)
def _cat(g, op):
    dt = out_dtype(op)
    xs = [x for x in op.inputs if not (len(x.shape) == 1 and x.shape[0] == 0)]
    if not xs:
        return g.node("Identity", [g.value(op.inputs[0], dt)])
    return g.node("Concat", [g.value(x, dt) for x in xs], axis=op.params["dim"])


@register(shape.Flip)
def _flip(g, op):
    dims = op.params["dims"]
    x = g.value(op.inputs[0])
    if not dims:
        return g.node("Identity", [x])
    n = len(dims)
    return _slice(g, x, [-1] * n, [np.iinfo(_I64).min] * n, list(dims), [-1] * n)


@register(shape.Roll)
def _roll(g, op):
    shifts, dims = op.params["shifts"], op.params["dims"]
    x, shp = g.value(op.inputs[0]), g.shape(op.inputs[0])
    flat = dims is None or dims == () or dims == []
    if flat:
        shp = g.static_shape(op.inputs[0], "roll without dims")
        x, dims, shp = g.node("Reshape", [x, g.const(ints([-1]))]), (0,), (math.prod(shp),)
    for s, d in zip(shifts, dims):
        n = shp[d]
        if isinstance(n, Sym):
            raise Unsupported("roll along a dynamic axis")
        s %= n or 1
        if s:
            x = g.node("Concat", [_slice(g, x, [n - s], [n], [d]), _slice(g, x, [0], [n - s], [d])], axis=d)
    return g.node("Reshape", [x, g.const(ints(op.inputs[0].shape))]) if flat else x


@register(shape.Repeat, dynamic=True)
def _repeat(g, op):
    sizes = op.params["sizes"]
    x = g.value(op.inputs[0])
    lead = len(sizes) - rank(op)
    if lead:
        x = g.node("Unsqueeze", [x, g.const(ints(range(lead)))])
    return g.node("Tile", [x, g.ints(sizes)])


@register(shape.Tril)
def _tril(g, op):
    return g.node("Trilu", [g.value(op.inputs[0]), g.const(np.array(op.params["diagonal"], _I64))],
                  upper=int(op.params["upper"]))


# -- indexing -------------------------------------------------------------------------------------------------------
@register(index.Index)
def _index(g, op):
    x, idx, dims = op.inputs[0], op.inputs[1:], list(op.params["dims"])
    y = g.value(x)
    names = [g.value(i, _dtype.int64) for i in idx]
    if len(dims) == 1:
        return g.node("Gather", [y, names[0]], axis=dims[0])
    n = len(x.shape)
    b = np.broadcast_shapes(*(tuple(g.static_shape(i, "indexing with several index tensors")) for i in idx))
    front = dims + [d for d in range(n) if d not in dims]
    if front != list(range(n)):
        y = g.node("Transpose", [y], perm=front)
    target = g.const(ints(b))
    cols = [g.node("Unsqueeze", [g.node("Expand", [i, target]), g.const(ints([-1]))]) for i in names]
    y = g.node("GatherND", [y, g.node("Concat", cols, axis=-1)])
    if dims == list(range(dims[0], dims[0] + len(dims))) and dims[0]:  # adjacent: the result dims stay in place
        nb, lead = len(b), dims[0]
        perm = list(range(nb, nb + lead)) + list(range(nb)) + list(range(nb + lead, n - len(dims) + nb))
        y = g.node("Transpose", [y], perm=perm)
    return y


@register(index.IndexPut)
def _index_put(g, op):
    raise Unsupported("indexed assignment (index_put) is not exported")


def _gather_like(onnx_op):
    def fn(g, op):
        return g.node(onnx_op, [g.value(op.inputs[0]), g.value(op.inputs[1], _dtype.int64)], axis=op.params["dim"])
    return fn


register(scatter.IndexSelect)(_gather_like("Gather"))
register(scatter.Gather)(_gather_like("GatherElements"))


# -- reductions -----------------------------------------------------------------------------------------------------
@register(reduce.Sum)
def _sum(g, op):
    p = op.params
    if p.get("nan"):
        raise Unsupported("nansum/nanmean")
    x = g.value(op.inputs[0], out_dtype(op))
    return g.reduce("ReduceMean" if p.get("mean") else "ReduceSum", x, list(p["dims"]), p["keepdim"])


@register(reduce.Prod)
def _prod(g, op):
    return g.reduce("ReduceProd", g.value(op.inputs[0], out_dtype(op)), list(op.params["dims"]),
                    op.params["keepdim"])


@register(reduce.LogSumExp)
def _logsumexp(g, op):
    return g.reduce("ReduceLogSumExp", g.value(op.inputs[0], out_dtype(op)), list(op.params["dims"]),
                    op.params["keepdim"])


@register(order.Extreme)
def _extreme(g, op):
    name = getattr(op.params["pick"], "__name__", "")
    if name not in ("_amax", "_amin"):
        raise Unsupported(f"reduction {name}")
    return g.reduce("ReduceMax" if name == "_amax" else "ReduceMin", g.value(op.inputs[0]),
                    list(op.params["dims"]), op.params["keepdim"])


@register(order.SelectAlong)
def _select_along(g, op):
    name = getattr(op.params["pick"], "__name__", "")
    if name not in ("_argmax", "_argmin") or not rank(op):
        raise Unsupported(f"selection {name or op.params['pick']!r}")
    dim, keep = op.params["dim"], op.params["keepdim"]
    x = g.value(op.inputs[0])
    idx = g.node("ArgMax" if name == "_argmax" else "ArgMin", [x], axis=dim, keepdims=1)
    vals = g.node("GatherElements", [x, idx], axis=dim)
    if not keep:
        axes = g.const(ints([dim]))
        vals, idx = g.node("Squeeze", [vals, axes]), g.node("Squeeze", [idx, axes])
    return vals, idx


@register(order.ArgExtreme)
def _arg_extreme(g, op):
    dim, keep, onnx_op = op.params["dim"], op.params["keepdim"], "ArgMax" if op.params["largest"] else "ArgMin"
    x = g.value(op.inputs[0])
    if dim is None:
        y = g.node(onnx_op, [g.node("Reshape", [x, g.const(ints([-1]))])], axis=0, keepdims=0)
        return g.node("Reshape", [y, g.const(ints([1] * rank(op)))]) if keep else y
    return g.node(onnx_op, [x], axis=dim, keepdims=int(keep))


@register(reduce.Var)
def _var(g, op):
    p = op.params
    dims = list(p["dims"])
    shp = g.shape(op.inputs[0])
    dt = out_dtype(op)
    x = g.value(op.inputs[0], dt)
    d = g.node("Sub", [x, g.reduce("ReduceMean", x, dims, True)])
    ss = g.reduce("ReduceSum", g.node("Mul", [d, d]), dims, p["keepdim"])
    if any(isinstance(shp[i], Sym) for i in dims):  # the count from the run-time shape
        n = g.reduce("ReduceProd", g.node("Gather", [g.node("Shape", [x]), g.const(ints(dims))], axis=0), [0],
                     False)
        dof = g.node("Max", [g.node("Sub", [g.as_type(n, dt), g.scalar(p["correction"], dt)]),
                             g.scalar(0, dt)])
    else:
        dof = g.scalar(float(max(math.prod(shp[i] for i in dims) - p["correction"], 0)), dt)
    y = g.node("Div", [ss, dof])
    return g.node("Sqrt", [y]) if p["sqrt"] else y


@register(reduce.VectorNorm)
def _vector_norm(g, op):
    p = op.params
    ordv, dims, keep = p["ord"], p["dims"], p["keepdim"]
    dims = None if dims is None else list(dims)
    dt = out_dtype(op)
    x = g.value(op.inputs[0], dt)
    if ordv == 2:
        return g.reduce("ReduceL2", x, dims, keep)
    if ordv == 1:
        return g.reduce("ReduceL1", x, dims, keep)
    a = g.node("Abs", [x])
    if ordv in (math.inf, -math.inf):
        return g.reduce("ReduceMax" if ordv > 0 else "ReduceMin", a, dims, keep)
    if ordv == 0:
        nz = g.as_type(g.node("Not", [g.node("Equal", [a, g.scalar(0, dt)])]), dt)
        return g.reduce("ReduceSum", nz, dims, keep)
    s = g.reduce("ReduceSum", g.node("Pow", [a, g.scalar(ordv, dt)]), dims, keep)
    return g.node("Pow", [s, g.scalar(1.0 / ordv, dt)])


@register(reduce.AllAny)
def _all_any(g, op):
    p = op.params
    x = g.as_type(g.value(op.inputs[0], _dtype.bool), _dtype.int32)
    dims = None if p["dims"] is None else list(p["dims"])
    y = g.reduce("ReduceMax" if p["any"] else "ReduceMin", x, dims, p["keepdim"])
    return g.as_type(y, _dtype.bool)


@register(reduce.CountNonzero)
def _count_nonzero(g, op):
    x = op.inputs[0]
    nz = g.node("Not", [g.node("Equal", [g.value(x), g.scalar(0, x.dtype)])])
    dims = op.params["dims"]
    return g.reduce("ReduceSum", g.as_type(nz, _dtype.int64),
                    None if dims is None else list(dims), False)


@register(scan.Cumsum)
def _cumsum(g, op):
    p = op.params
    return g.node("CumSum", [g.value(op.inputs[0], out_dtype(op)), g.const(np.array(p["dim"], _I64))],
                  reverse=int(bool(p.get("reverse"))))


def _softmax(onnx_op):
    def fn(g, op):
        return g.node(onnx_op, [g.value(op.inputs[0], out_dtype(op))], axis=op.params["dim"])
    return fn


register(softmax.Softmax)(_softmax("Softmax"))
register(softmax.LogSoftmax)(_softmax("LogSoftmax"))


# -- products -------------------------------------------------------------------------------------------------------
register(matmul.Matmul)(_nary("MatMul"))


@register(matmul.AddMatmul)
def _add_matmul(g, op):
    dt, p = out_dtype(op), op.params
    c, a, b = op.inputs
    if rank(op, 1) == 2 and rank(op, 2) == 2 and not p["reduce_batch"]:
        return g.node("Gemm", [g.value(a, dt), g.value(b, dt), g.value(c, dt)], alpha=float(p["alpha"]),
                      beta=float(p["beta"]))
    y = g.node("MatMul", [g.value(a, dt), g.value(b, dt)])
    if p["reduce_batch"]:
        y = g.reduce("ReduceSum", y, [0], False)
    if p["alpha"] != 1:
        y = g.node("Mul", [y, g.scalar(p["alpha"], dt)])
    c = g.value(c, dt)
    if p["beta"] != 1:
        c = g.node("Mul", [c, g.scalar(p["beta"], dt)])
    return g.node("Add", [y, c])


@register(matmul.Einsum)
def _einsum(g, op):
    letters = {}
    pool = iter("abcdefghijklmnopqrstuvwxyz")

    def relabel(s):
        return "".join(letters.setdefault(ch, next(pool)) for ch in s)
    eq = ",".join(relabel(s) for s in op.params["labels"]) + "->" + relabel(op.params["output"])
    return g.node("Einsum", [g.value(x, out_dtype(op)) for x in op.inputs], equation=eq)


from . import symbolic_nn  # noqa: E402,F401  (registers the neural network ops)
