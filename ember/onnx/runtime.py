"""ONNX ops run with ember ops: elementwise, shape, indexing and reduction ops (the neural network ops are in
``runtime_nn``).

``OPS[op_type](ctx, inputs, attrs, n_outputs)`` computes one node: ``inputs`` are ember Tensors (None for an
omitted optional input), ``attrs`` the node's attributes as Python values. Everything is written with differentiable
ember ops, so gradients flow through a loaded model; sizes read from tensors (shapes, axes, pads) are plain ints.
"""
import math

import numpy as np

from .. import _dtype
from .. import _creation as C
from .._ops import binary, compare, index, matmul, order, reduce, scan, shape, softmax, split, unary, view
from .._ops import pointwise, scatter, sort, special

OPS = {}
CHECKS = {}  # op_type -> fn(attrs, opset, node) returning why a node cannot run, or None


def op(*names):
    def deco(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return deco


def node_function(op_type):
    return OPS[op_type]


def parse_attributes(node, base):
    """A node's attributes as Python values (strings decoded, tensors as ember Tensors)."""
    import onnx
    from .loader import to_tensor
    return {a.name: to_tensor(a.t, base) if a.type == onnx.AttributeProto.TENSOR else _attribute(a)
            for a in node.attribute}


def _attribute(a):
    from onnx import helper
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [s.decode("utf-8", "replace") for s in v]
    return v


def check_node(node, opset):
    """Why this node cannot run (an unsupported attribute value), or None."""
    check = CHECKS.get(node.op_type)
    if check is None:
        return None
    import onnx
    attrs = {a.name: a.t if a.type == onnx.AttributeProto.TENSOR else _attribute(a) for a in node.attribute}
    return check(attrs, opset, node)


# -- helpers --------------------------------------------------------------------------------------------------------
def ints(t):
    """A 1-D (or 0-d) integer tensor as a list of Python ints."""
    return [int(v) for v in np.asarray(t.detach().cpu().numpy()).reshape(-1)]


def scalar(t):
    return t.detach().cpu().numpy().reshape(-1)[0].item()


def axes_of(ctx, inputs, attrs, pos, since):
    """Axes from attribute ``axes`` (before opset ``since``) or from input ``pos``; None when absent."""
    if ctx.opset < since or "axes" in attrs:
        return attrs.get("axes")
    return ints(inputs[pos]) if len(inputs) > pos and inputs[pos] is not None else None


def dtype_of(onnx_type):
    from onnx import helper
    return _dtype.from_numpy_dtype(np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type)))


def _wrap(axis, n):
    return axis + n if axis < 0 else axis


# -- elementwise ----------------------------------------------------------------------------------------------------
def _elementwise(fn):
    return lambda ctx, x, a, n: fn(*x)


for _name, _fn in [("Add", binary.add), ("Sub", binary.sub), ("Mul", binary.mul), ("Neg", unary.neg),
                   ("Abs", unary.abs), ("Exp", unary.exp), ("Log", unary.log), ("Sqrt", unary.sqrt),
                   ("Reciprocal", unary.reciprocal), ("Floor", unary.floor), ("Ceil", unary.ceil),
                   ("Round", unary.round), ("Sign", unary.sign), ("Sin", unary.sin), ("Cos", unary.cos),
                   ("Tan", unary.tan), ("Asin", unary.asin), ("Acos", unary.acos), ("Atan", unary.atan),
                   ("Sinh", unary.sinh), ("Cosh", unary.cosh), ("Asinh", unary.asinh), ("Acosh", unary.acosh),
                   ("Atanh", unary.atanh), ("Tanh", unary.tanh), ("Sigmoid", special.sigmoid), ("Erf", special.erf),
                   ("Equal", compare.eq), ("Less", compare.lt), ("LessOrEqual", compare.le),
                   ("Greater", compare.gt), ("GreaterOrEqual", compare.ge), ("Not", compare.logical_not),
                   ("And", compare.logical_and), ("Or", compare.logical_or), ("Xor", compare.logical_xor),
                   ("BitwiseAnd", compare.bitwise_and), ("BitwiseOr", compare.bitwise_or),
                   ("BitwiseXor", compare.bitwise_xor), ("BitwiseNot", compare.bitwise_not),
                   ("IsNaN", compare.isnan), ("MatMul", matmul.matmul)]:
    OPS[_name] = _elementwise(_fn)


@op("Div")
def _div(ctx, x, a, n):
    p, q = x
    if not (p.dtype.is_floating_point or q.dtype.is_floating_point):
        return binary.div(p, q, rounding_mode="trunc")  # ONNX integer division truncates
    return binary.div(p, q)


@op("Mod")
def _mod(ctx, x, a, n):
    return (binary.fmod if a.get("fmod", 0) else binary.remainder)(*x)


@op("Pow")
def _pow(ctx, x, a, n):
    return binary.pow(*x).to(x[0].dtype)  # the base's type, as ONNX


def _fold(fn, mean=False):
    def run(ctx, x, a, n):
        y = x[0]
        for t in x[1:]:
            y = fn(y, t)
        return y / len(x) if mean else y
    return run


OPS.update(Max=_fold(binary.maximum), Min=_fold(binary.minimum), Sum=_fold(binary.add),
           Mean=_fold(binary.add, True))


@op("IsInf")
def _isinf(ctx, x, a, n):
    pos, neg = a.get("detect_positive", 1), a.get("detect_negative", 1)
    if pos and neg:
        return compare.isinf(x[0])
    if pos:
        return compare.isposinf(x[0])
    return compare.isneginf(x[0]) if neg else C.zeros_like(x[0], dtype=_dtype.bool)


@op("Where")
def _where(ctx, x, a, n):
    return index.where(*x)


@op("Clip")
def _clip(ctx, x, a, n):
    if ctx.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    else:
        lo = scalar(x[1]) if len(x) > 1 and x[1] is not None else None
        hi = scalar(x[2]) if len(x) > 2 and x[2] is not None else None
    return pointwise.clamp(x[0], lo, hi)


@op("Cast")
def _cast(ctx, x, a, n):
    return x[0].to(dtype_of(a["to"]))


CHECKS["Cast"] = lambda a, opset, node: "cast to string" if a.get("to") == 8 else None


@op("CastLike")
def _cast_like(ctx, x, a, n):
    return x[0].to(x[1].dtype)


@op("Identity")
def _identity(ctx, x, a, n):
    return x[0]


@op("Dropout")
def _dropout(ctx, x, a, n):
    if len(x) > 2 and x[2] is not None and scalar(x[2]):
        raise NotImplementedError("ONNX Dropout with training_mode=True is not supported")
    return x[0], C.ones(x[0].shape, dtype=_dtype.bool, device=x[0].device)


# -- shapes ---------------------------------------------------------------------------------------------------------
@op("Shape")
def _shape(ctx, x, a, n):
    dims = list(x[0].shape)
    start, end = a.get("start", 0), a.get("end", len(dims))
    return C.tensor(dims[slice(start, end)], dtype=_dtype.int64, device=x[0].device)


@op("Size")
def _size(ctx, x, a, n):
    return C.tensor(x[0].numel(), dtype=_dtype.int64, device=x[0].device)


@op("Constant")
def _constant(ctx, x, a, n):
    if "value" in a:
        return a["value"].to(ctx.device)
    for key, dt in (("value_float", _dtype.float32), ("value_floats", _dtype.float32), ("value_int", _dtype.int64),
                    ("value_ints", _dtype.int64)):
        if key in a:
            return C.tensor(a[key], dtype=dt, device=ctx.device)
    raise NotImplementedError(f"ONNX Constant with attributes {list(a)}")


CHECKS["Constant"] = lambda a, opset, node: None if {"value", "value_float", "value_floats", "value_int",
                                               "value_ints"} & set(a) else f"attributes {sorted(a)}"


@op("ConstantOfShape")
def _constant_of_shape(ctx, x, a, n):
    value = a.get("value")
    fill, dt = (0.0, _dtype.float32) if value is None else (value.reshape(-1)[0].item(), value.dtype)
    return C.full(ints(x[0]), fill, dtype=dt, device=x[0].device)


@op("Reshape")
def _reshape(ctx, x, a, n):
    shape_ = ints(x[1]) if ctx.opset >= 5 else list(a["shape"])
    if not a.get("allowzero", 0):
        shape_ = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape_)]
    return view.reshape(x[0], shape_)


@op("Flatten")
def _flatten(ctx, x, a, n):
    t = x[0]
    axis = _wrap(a.get("axis", 1), t.ndim)
    return view.reshape(t, (math.prod(t.shape[:axis]), -1))


@op("Transpose")
def _transpose(ctx, x, a, n):
    perm = a.get("perm") or list(reversed(range(x[0].ndim)))
    return view.permute(x[0], perm)


@op("Squeeze")
def _squeeze(ctx, x, a, n):
    axes = axes_of(ctx, x, a, 1, 13)
    return view.squeeze(x[0]) if axes is None else view.squeeze(x[0], tuple(axes))


@op("Unsqueeze")
def _unsqueeze(ctx, x, a, n):
    t = x[0]
    axes = sorted(_wrap(d, t.ndim + len(axes_of(ctx, x, a, 1, 13))) for d in axes_of(ctx, x, a, 1, 13))
    for d in axes:
        t = view.unsqueeze(t, d)
    return t


@op("Concat")
def _concat(ctx, x, a, n):
    return shape.cat([t for t in x if t is not None], a["axis"])


@op("Split")
def _split(ctx, x, a, n):
    t = x[0]
    axis = _wrap(a.get("axis", 0), t.ndim)
    sizes = a.get("split") if ctx.opset < 13 else (ints(x[1]) if len(x) > 1 and x[1] is not None else None)
    if sizes is None:
        k = a.get("num_outputs", n)
        size = -(-t.shape[axis] // k)
        sizes = [min(size, t.shape[axis] - i * size) for i in range(k)]
    return split.split(t, list(sizes), axis)


@op("Slice")
def _slice(ctx, x, a, n):
    t = x[0]
    if ctx.opset < 10:
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts, ends = ints(x[1]), ints(x[2])
        axes = ints(x[3]) if len(x) > 3 and x[3] is not None else None
        steps = ints(x[4]) if len(x) > 4 and x[4] is not None else None
    axes = list(range(len(starts))) if axes is None else [_wrap(d, t.ndim) for d in axes]
    steps = [1] * len(starts) if steps is None else steps
    key = [slice(None)] * t.ndim
    flips = []
    for s, e, d, st in zip(starts, ends, axes, steps):
        size = t.shape[d]
        if st > 0:
            key[d] = slice(*slice(s, e, st).indices(size))
        else:  # a negative step: the selected indices, read with a gather
            flips.append((d, list(range(size))[s:e if e >= -size - 1 else None:st] if size else []))
    y = t[tuple(key)]
    for d, idx in flips:
        y = scatter.index_select(y, d, C.tensor(idx, dtype=_dtype.int64, device=t.device))
    return y


@op("Expand")
def _expand(ctx, x, a, n):
    target = ints(x[1])
    out = view.broadcast_pair(tuple(x[0].shape), tuple(target))
    return view.expand(x[0], out)


@op("Tile")
def _tile(ctx, x, a, n):
    return shape.tile(x[0], ints(x[1]))


@op("Range")
def _range(ctx, x, a, n):
    start, limit, delta = (scalar(t) for t in x)
    return C.arange(start, limit, delta, dtype=x[0].dtype, device=x[0].device)


@op("Trilu")
def _trilu(ctx, x, a, n):
    k = scalar(x[1]) if len(x) > 1 and x[1] is not None else 0
    return (shape.triu if a.get("upper", 1) else shape.tril)(x[0], k)


@op("CumSum")
def _cumsum(ctx, x, a, n):
    t, axis = x[0], _wrap(scalar(x[1]), x[0].ndim)
    if a.get("reverse"):
        t = shape.flip(t, (axis,))
    y = scan.cumsum(t, axis)
    if a.get("exclusive"):
        y = y - t
    return shape.flip(y, (axis,)) if a.get("reverse") else y


# -- indexing -------------------------------------------------------------------------------------------------------
def _positive(idx, size):
    """ONNX indices may be negative (counting from the end)."""
    idx = idx.to(_dtype.int64)
    return index.where(idx < 0, idx + size, idx)


@op("Gather")
def _gather(ctx, x, a, n):
    t, idx = x
    axis = _wrap(a.get("axis", 0), t.ndim)
    idx = _positive(idx, t.shape[axis])
    flat = scatter.index_select(t, axis, view.reshape(idx, (-1,)))
    return view.reshape(flat, t.shape[:axis] + tuple(idx.shape) + t.shape[axis + 1:])


@op("GatherElements")
def _gather_elements(ctx, x, a, n):
    t, idx = x
    axis = _wrap(a.get("axis", 0), t.ndim)
    return scatter.gather(t, axis, _positive(idx, t.shape[axis]))


@op("GatherND")
def _gather_nd(ctx, x, a, n):
    t, idx = x
    if a.get("batch_dims", 0):
        raise NotImplementedError("ONNX GatherND with batch_dims != 0 is not supported")
    k = idx.shape[-1]
    return t[tuple(_positive(idx[..., i], t.shape[i]) for i in range(k))]


@op("ScatterElements", "Scatter")
def _scatter_elements(ctx, x, a, n):
    t, idx, upd = x
    axis = _wrap(a.get("axis", 0), t.ndim)
    idx = _positive(idx, t.shape[axis])
    red = a.get("reduction", "none")
    if red == "none":
        return scatter.scatter(t, axis, idx, upd)
    return scatter.scatter_reduce(t, axis, idx, upd, {"add": "sum", "mul": "prod", "max": "amax",
                                                      "min": "amin"}[red])


@op("ScatterND")
def _scatter_nd(ctx, x, a, n):
    t, idx, upd = x
    k = idx.shape[-1]
    key = tuple(_positive(idx[..., i], t.shape[i]) for i in range(k))
    red = a.get("reduction", "none")
    if red not in ("none", "add"):
        raise NotImplementedError(f"ONNX ScatterND with reduction={red!r} is not supported")
    return index.index_put(t, key, upd, accumulate=red == "add")


@op("NonZero")
def _nonzero(ctx, x, a, n):
    return view.permute(index.nonzero(x[0]), (1, 0))


@op("TopK")
def _topk(ctx, x, a, n):
    r = sort.topk(x[0], scalar(x[1]), a.get("axis", -1), bool(a.get("largest", 1)), True)
    return r[0], r[1]


# -- reductions -----------------------------------------------------------------------------------------------------
def _reduction(fn, since=18):
    def run(ctx, x, a, n):
        axes = axes_of(ctx, x, a, 1, since)
        keep = bool(a.get("keepdims", 1))
        t = x[0]
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return t
            axes = list(range(t.ndim))
        return fn(t, tuple(_wrap(d, t.ndim) for d in axes), keep)
    return run


OPS.update({
    "ReduceSum": _reduction(lambda t, d, k: reduce.sum(t, d, k), 13),
    "ReduceMean": _reduction(lambda t, d, k: reduce.mean(t, d, k)),
    "ReduceMax": _reduction(lambda t, d, k: order.amax(t, d, k)),
    "ReduceMin": _reduction(lambda t, d, k: order.amin(t, d, k)),
    "ReduceProd": _reduction(lambda t, d, k: _prod(t, d, k)),
    "ReduceL1": _reduction(lambda t, d, k: reduce.sum(unary.abs(t), d, k)),
    "ReduceL2": _reduction(lambda t, d, k: unary.sqrt(reduce.sum(t * t, d, k))),
    "ReduceSumSquare": _reduction(lambda t, d, k: reduce.sum(t * t, d, k)),
    "ReduceLogSum": _reduction(lambda t, d, k: unary.log(reduce.sum(t, d, k))),
    "ReduceLogSumExp": _reduction(lambda t, d, k: reduce.logsumexp(t, d, k)),
})


def _prod(t, dims, keep):
    for d in sorted(dims, reverse=True):
        t = reduce.prod(t, d, keep)
    return t


def _arg(largest):
    def run(ctx, x, a, n):
        t = x[0]
        axis, keep = _wrap(a.get("axis", 0), t.ndim), bool(a.get("keepdims", 1))
        if a.get("select_last_index", 0):  # the last of tied extremes: search the flipped tensor
            i = order.argmax(shape.flip(t, (axis,)), axis, keep) if largest else \
                order.argmin(shape.flip(t, (axis,)), axis, keep)
            return (t.shape[axis] - 1) - i
        return order.argmax(t, axis, keep) if largest else order.argmin(t, axis, keep)
    return run


OPS.update(ArgMax=_arg(True), ArgMin=_arg(False))


def _softmax_like(fn):
    def run(ctx, x, a, n):
        t = x[0]
        if ctx.opset < 13:  # the input is seen as a matrix (dims before axis) x (dims from axis)
            axis = _wrap(a.get("axis", 1), t.ndim)
            y = fn(view.reshape(t, (math.prod(t.shape[:axis]), -1)), -1)
            return view.reshape(y, t.shape)
        return fn(t, a.get("axis", -1))
    return run


OPS.update(Softmax=_softmax_like(softmax.softmax), LogSoftmax=_softmax_like(softmax.log_softmax))


@op("Gemm")
def _gemm(ctx, x, a, n):
    p, q = x[0], x[1]
    if a.get("transA", 0):
        p = view.t(p)
    if a.get("transB", 0):
        q = view.t(q)
    y = matmul.matmul(p, q)
    if a.get("alpha", 1.0) != 1.0:
        y = y * a["alpha"]
    if len(x) > 2 and x[2] is not None:
        c = x[2]
        y = y + (c * a["beta"] if a.get("beta", 1.0) != 1.0 else c)
    return y


@op("Einsum")
def _einsum(ctx, x, a, n):
    return matmul.einsum(a["equation"].replace(" ", ""), *x)


from . import runtime_nn  # noqa: E402,F401  (registers the neural network ops)
