"""Export mapping of the neural network ops: linear, convolution, pooling, normalization, attention, recurrent
layers, activations, embedding, padding and resampling (see ``symbolic`` for the conventions)."""
import math

import numpy as np

from .. import _dtype
from .._ops import attention, conv, nn_norm, nn_ops, pool, rnn
from ..nn.functional.linear import Linear
from ..nn.functional.upsampling import Resample
from ..nn.functional.vision import ConstantPad
from ._dynamic import Sym, Varying, is_dynamic, static
from .exporter import Unsupported, _host, _onnx_type
from .symbolic import _slice, ints, out_dtype, rank, register

_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _value(g, op, i=0):
    return g.value(op.inputs[i], out_dtype(op))


def _fixed(v, what):
    """``v`` (possibly nested) when it holds no number that depends on a dynamic axis."""
    if is_dynamic(v):
        raise Unsupported(f"its {what} depends on a dynamic axis")
    return v


# -- linear ---------------------------------------------------------------------------------------------------------
@register(Linear)
def _linear(g, op):
    dt = out_dtype(op)
    x, w, b = op.inputs
    if rank(op) == 2:
        ins = [g.value(x, dt), g.value(w, dt)] + ([] if b is None else [g.value(b, dt)])
        return g.node("Gemm", ins, transB=1)
    y = g.node("MatMul", [g.value(x, dt), g.node("Transpose", [g.value(w, dt)], perm=[1, 0])])
    return y if b is None else g.node("Add", [y, g.value(b, dt)])


# -- convolution and pooling ----------------------------------------------------------------------------------------
def _geometry(plan):
    """kernel, stride, dilation and (low, high) pads of a conv Plan, which must not depend on dynamic axes."""
    return (list(_fixed(plan.ksize, "kernel size")), list(_fixed(plan.stride, "stride")),
            list(_fixed(plan.dilation, "dilation")), list(_fixed(plan.pads, "padding")))


def _crop_high(g, x, pads):
    """x cropped where a high pad is negative; returns (x, pads with those set to 0)."""
    neg = [(i, hi) for i, (_, hi) in enumerate(pads) if hi < 0]
    if neg:
        x = _slice(g, x, [0] * len(neg), [hi for _, hi in neg], [2 + i for i, _ in neg])
        pads = [(lo, max(hi, 0)) for lo, hi in pads]
    return x, pads


def _onnx_pads(pads):
    return [lo for lo, _ in pads] + [hi for _, hi in pads]


@register(conv.Conv, dynamic=True)
def _conv(g, op):
    dt = out_dtype(op)
    k, s, d, pads = _geometry(op.params["plan"])
    x, pads = _crop_high(g, _value(g, op), pads)
    ins = [x, g.value(op.inputs[1], dt)] + ([] if op.inputs[2] is None else [g.value(op.inputs[2], dt)])
    return g.node("Conv", ins, kernel_shape=k, strides=s, dilations=d, pads=_onnx_pads(pads),
                  group=op.params["groups"])


@register(conv.ConvInput, dynamic=True)
def _conv_transpose(g, op):
    # ConvInput is the adjoint of a Conv whose input (this op's output) has spatial sizes plan.shape[2:]: with
    # ONNX pads (lo, max(hi, 0)), the output padding is what the stride's floor division dropped plus the crop.
    plan = op.params["plan"]
    k, s, d, pads = _geometry(plan)
    out_pad = []
    for size, kk, ss, dd, (lo, hi) in zip(static(plan.shape[2:]), k, s, d, pads):
        out_pad.append((size + lo + hi - dd * (kk - 1) - 1) % ss + max(-hi, 0))
    pads = [(lo, max(hi, 0)) for lo, hi in pads]
    dt = out_dtype(op)
    return g.node("ConvTranspose", [_value(g, op), g.value(op.inputs[1], dt)], kernel_shape=k, strides=s,
                  dilations=d, pads=_onnx_pads(pads), output_padding=out_pad if any(out_pad) else None,
                  group=op.params["groups"])


@register(pool.MaxPool, dynamic=True)
def _max_pool(g, op):
    k, s, d, pads = _geometry(op.params["plan"])
    x = g.value(op.inputs[0])
    if not op.params.get("indices"):
        return g.node("MaxPool", [x], kernel_shape=k, strides=s, dilations=d, pads=_onnx_pads(pads))
    y, idx = g.node("MaxPool", [x], outputs=2, kernel_shape=k, strides=s, dilations=d, pads=_onnx_pads(pads))
    # ONNX counts indices over the whole (N, C, *spatial) tensor, ember within each (n, c) plane
    plane = g.reduce("ReduceProd", g.node("Shape", [x], start=2), [0], False)
    return y, g.node("Mod", [idx, plane])


def _is_global(g, op):
    """Whether a pooling plan is one window over all spatial dims (sizes may be dynamic)."""
    plan = op.params["plan"]
    spatial = g.shape(op.inputs[0])[2:]
    same = all((a.key() == b.key()) if isinstance(a, Sym) and isinstance(b, Sym) else a == b
               for a, b in zip(plan.ksize, spatial))
    return same and all(static(o) == 1 for o in plan.out) and not any(lo or hi for lo, hi in static(plan.pads))


@register(pool.WindowSum, dynamic=True)
def _window_sum(g, op):
    dt = out_dtype(op)
    if not dt.is_floating_point:
        raise Unsupported("average pooling of integers")
    plan, divisor = op.params["plan"], op.params.get("divisor")
    x = g.value(op.inputs[0])
    if _is_global(g, op) and divisor is not None and not isinstance(divisor, np.ndarray) and \
            static(divisor) == math.prod(static(plan.ksize)):
        return g.node("GlobalAveragePool", [x])
    k, s, d, pads = _geometry(plan)
    if any(v != 1 for v in d):
        raise Unsupported("dilated average pooling")
    y = g.node("AveragePool", [x], kernel_shape=k, strides=s, pads=_onnx_pads(pads), count_include_pad=1)
    n = math.prod(k)
    if isinstance(divisor, (int, float)) and divisor == n:
        return y
    y = g.node("Mul", [y, g.scalar(float(n), dt)])  # the window sums
    if divisor is None:
        return y
    if isinstance(divisor, (Sym, Varying)):
        raise Unsupported("an average pooling divisor that depends on a dynamic axis")
    return g.node("Div", [y, g.const(_host(divisor).astype(dt.np))])


# -- normalization --------------------------------------------------------------------------------------------------
@register(nn_norm.Normalize)
def _normalize(g, op):
    p = op.params
    axes, eps, center = tuple(p["axes"]), p["eps"], p.get("center", True)
    dt = out_dtype(op)
    x, w, b = op.inputs
    n = rank(op)
    first = n - len(axes)
    trailing = axes == tuple(range(first, n))
    norm_shape = g.shape(x)[first:]
    static_norm = not any(isinstance(v, (Sym, Varying)) for v in norm_shape)
    fits = all(t is None or tuple(t.shape) == tuple(norm_shape) for t in (w, b))
    xs = g.value(x, dt)
    outs = [None] * len(op.outputs)
    if trailing and fits and static_norm and (center or g.opset >= 23):
        scale = g.value(w, dt) if w is not None else g.const(np.ones(norm_shape, dt.np))
        if center:
            ins = [xs, scale] + ([] if b is None else [g.value(b, dt)])
            outs[0] = g.node("LayerNormalization", ins, axis=first, epsilon=float(eps))
            return outs
        y = g.node("RMSNormalization", [xs, scale], axis=first, epsilon=float(eps))
        outs[0] = y if b is None else g.node("Add", [y, g.value(b, dt)])
        return outs
    if center:
        xs = g.node("Sub", [xs, g.reduce("ReduceMean", xs, list(axes), True)])
    var = g.reduce("ReduceMean", g.node("Mul", [xs, xs]), list(axes), True)
    rstd = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, dt)])])])
    y = g.node("Mul", [xs, rstd])
    if w is not None:
        y = g.node("Mul", [y, g.value(w, dt)])
    if b is not None:
        y = g.node("Add", [y, g.value(b, dt)])
    outs[0] = y
    return outs


# -- attention ------------------------------------------------------------------------------------------------------
@register(attention.ScaledDotProductAttention)
def _sdpa(g, op):
    q, k, v, bias, keep = op.inputs
    p = op.params
    if keep is not None:
        raise Unsupported("attention dropout (export the model in eval mode)")
    dt = out_dtype(op)
    kt = g.node("Transpose", [g.value(k, dt)], perm=list(range(rank(op, 1) - 2)) + [rank(op, 1) - 1,
                                                                                    rank(op, 1) - 2])
    s = g.node("Mul", [g.node("MatMul", [g.value(q, dt), kt]), g.scalar(float(p["scale"]), dt)])
    masked = p["causal"] or bias is not None
    if p["causal"]:
        ls = g.node("Shape", [s], start=-2)
        ones = g.node("ConstantOfShape", [ls], value=g.helper.make_tensor("value", _onnx_type(np.dtype(np.int64)),
                                                                          [1], [1]))
        tri = g.as_type(g.node("Trilu", [ones], upper=0), _dtype.bool)
        s = g.node("Where", [tri, s, g.scalar(-math.inf, dt)])
    if bias is not None:
        s = g.node("Add", [s, g.value(bias, dt)])
    if masked and p.get("safe"):  # rows that mask every key give zero weights, not NaN
        m = g.reduce("ReduceMax", s, [-1], True)
        m = g.node("Where", [g.node("Equal", [m, g.scalar(-math.inf, dt)]), g.scalar(0.0, dt), m])
        e = g.node("Exp", [g.node("Sub", [s, m])])
        total = g.reduce("ReduceSum", e, [-1], True)
        total = g.node("Where", [g.node("Equal", [total, g.scalar(0.0, dt)]), g.scalar(1.0, dt), total])
        w = g.node("Div", [e, total])
    else:
        w = g.node("Softmax", [s], axis=-1)
    return g.node("MatMul", [w, g.value(v, dt)]), w


# -- recurrent layers -----------------------------------------------------------------------------------------------
# ember keeps the gates as (i, f, g, o) for LSTM and (r, z, n) for GRU; ONNX as (i, o, f, c) and (z, r, h).
_GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}


def _input_projection(g, op, xg):
    """(x (N, I), W (G*H, I), bias or None) when ``xg`` is x @ W^T + bias as the RNN layers compute it, else None."""
    from .._ops import matmul, view
    rec = xg.producer
    if rec is None or rec.cls not in (matmul.AddMatmul, matmul.Matmul):
        return None
    if rec.cls is matmul.AddMatmul:
        if rec.params["alpha"] != 1 or rec.params["beta"] != 1 or rec.params["reduce_batch"]:
            return None
        bias, x, wt = rec.inputs
    else:
        (x, wt), bias = rec.inputs, None
    tr = getattr(wt, "producer", None)
    if tr is None or tr.cls is not view.Permute or tuple(tr.params["dims"]) != (1, 0):
        return None
    if bias is not None and (not hasattr(bias, "shape") or len(bias.shape) != 1):
        return None
    return x, tr.inputs[0], bias


@register(rnn.Recurrence, dynamic=True)
def _recurrence(g, op):
    xg, h0, c0, w_hh, b_hh, w_hr = op.inputs
    p = op.params
    mode = p["mode"]
    sizes = static(p["batch_sizes"]) if not isinstance(p["batch_sizes"], Varying) else p["batch_sizes"].value
    if len(set(sizes)) > 1:
        raise Unsupported("packed sequences of different lengths")
    if w_hr is not None:
        raise Unsupported("LSTM projections (proj_size)")
    dt = out_dtype(op)
    hidden = h0.shape[-1]
    gates = rnn.GATES[mode]
    perm = g.const(np.concatenate([np.arange(i * hidden, (i + 1) * hidden) for i in _GATE_ORDER[mode]]))
    zero_axis = g.const(ints([0]))

    def reorder(t):
        return g.node("Unsqueeze", [g.node("Gather", [g.value(t, dt), perm], axis=0), zero_axis])

    proj = _input_projection(g, op, xg)
    if proj is not None:
        x2d, w_ih, b_ih = proj
        w = reorder(w_ih)
        size_in = x2d.shape[-1]
    else:  # the projections as the input, through an identity input weight
        x2d, b_ih, size_in = xg, None, xg.shape[-1]
        w = g.node("Unsqueeze", [g.const(np.eye(gates * hidden, dtype=dt.np)), zero_axis])
    batch = g.node("Shape", [g.value(h0)], start=0, end=1)
    seq_shape = g.node("Concat", [g.const(ints([-1])), batch, g.const(ints([size_in]))], axis=0)
    x = g.node("Reshape", [g.value(x2d, dt), seq_shape])
    zeros = g.const(np.zeros(gates * hidden, dt.np))
    bias = g.node("Unsqueeze", [g.node("Concat", [
        zeros if b_ih is None else g.node("Gather", [g.value(b_ih, dt), perm], axis=0),
        zeros if b_hh is None else g.node("Gather", [g.value(b_hh, dt), perm], axis=0)], axis=0), zero_axis])
    ins = [x, w, reorder(w_hh), bias, "", g.node("Unsqueeze", [g.value(h0, dt), zero_axis])]
    attrs = {"hidden_size": hidden, "direction": "reverse" if p["reverse"] else "forward"}
    if mode == "LSTM":
        ins.append(g.node("Unsqueeze", [g.value(c0, dt), zero_axis]))
        outs = g.node("LSTM", ins, outputs=3, **attrs)
    elif mode == "GRU":
        outs = g.node("GRU", ins, outputs=2, linear_before_reset=1, **attrs)
    else:
        outs = g.node("RNN", ins, outputs=2, activations=["Tanh" if mode == "RNN_TANH" else "Relu"], **attrs)
    y = g.node("Reshape", [outs[0], g.const(ints([-1, hidden]))])
    return [y] + [g.node("Squeeze", [o, zero_axis]) for o in outs[1:]]


# -- activations ----------------------------------------------------------------------------------------------------
def _act(build):
    """An activation computed by ``build(g, x, dtype, params)``."""
    def fn(g, op):
        dt = out_dtype(op)
        return build(g, g.value(op.inputs[0], dt), dt, op.params)
    return fn


def _gelu(g, x, dt, p):
    if g.opset >= 20:
        return g.node("Gelu", [x])
    cdf = g.node("Add", [g.scalar(1.0, dt), g.node("Erf", [g.node("Mul", [x, g.scalar(math.sqrt(0.5), dt)])])])
    return g.node("Mul", [g.node("Mul", [x, g.scalar(0.5, dt)]), cdf])


def _gelu_tanh(g, x, dt, p):
    if g.opset >= 20:
        return g.node("Gelu", [x], approximate="tanh")
    cube = g.node("Mul", [g.node("Mul", [x, x]), x])
    inner = g.node("Mul", [g.node("Add", [x, g.node("Mul", [cube, g.scalar(0.044715, dt)])]),
                           g.scalar(math.sqrt(2 / math.pi), dt)])
    return g.node("Mul", [g.node("Mul", [x, g.scalar(0.5, dt)]),
                          g.node("Add", [g.scalar(1.0, dt), g.node("Tanh", [inner])])])


def _elu(g, x, dt, p):
    alpha, scale, input_scale = p["alpha"], p["scale"], p["input_scale"]
    if scale == 1 and input_scale == 1:
        return g.node("Elu", [x], alpha=float(alpha))
    if input_scale == 1 and math.isclose(alpha, _SELU_ALPHA) and math.isclose(scale, _SELU_SCALE):
        return g.node("Selu", [x], alpha=float(alpha), gamma=float(scale))
    if scale == 1 and math.isclose(input_scale, 1 / alpha):
        return g.node("Celu", [x], alpha=float(alpha))
    neg = g.node("Mul", [g.node("Sub", [g.node("Exp", [g.node("Mul", [x, g.scalar(input_scale, dt)])]),
                                        g.scalar(1.0, dt)]), g.scalar(alpha * scale, dt)])
    return g.node("Where", [g.node("Greater", [x, g.scalar(0.0, dt)]), g.node("Mul", [x, g.scalar(scale, dt)]), neg])


def _softplus(g, x, dt, p):
    beta, threshold = p["beta"], p["threshold"]
    bx = x if beta == 1 else g.node("Mul", [x, g.scalar(beta, dt)])
    sp = g.node("Softplus", [bx])
    if beta != 1:
        sp = g.node("Div", [sp, g.scalar(beta, dt)])
    return g.node("Where", [g.node("Greater", [bx, g.scalar(threshold, dt)]), x, sp])


def _mish(g, x, dt, p):
    if g.opset >= 18:
        return g.node("Mish", [x])
    return g.node("Mul", [x, g.node("Tanh", [g.node("Softplus", [x])])])


register(nn_ops.Relu)(_act(lambda g, x, dt, p: g.node("Relu", [x])))
register(nn_ops.Hardtanh)(_act(lambda g, x, dt, p: g.node("Clip", [x, g.scalar(p["lo"], dt), g.scalar(p["hi"], dt)])))
register(nn_ops.Threshold)(_act(lambda g, x, dt, p: g.node(
    "Where", [g.node("LessOrEqual", [x, g.scalar(p["threshold"], dt)]), g.scalar(p["value"], dt), x])))
register(nn_ops.LeakyRelu)(_act(lambda g, x, dt, p: g.node("LeakyRelu", [x], alpha=float(p["slope"]))))
register(nn_ops.PreluKernel)(lambda g, op: g.node("PRelu", [g.value(op.inputs[0]), g.value(op.inputs[1])]))
register(nn_ops.Hardshrink)(_act(lambda g, x, dt, p: g.node("Shrink", [x], lambd=float(p["lambd"]), bias=0.0)))
register(nn_ops.Softshrink)(_act(lambda g, x, dt, p: g.node("Shrink", [x], lambd=float(p["lambd"]),
                                                             bias=float(p["lambd"]))))
register(nn_ops.Hardsigmoid)(_act(lambda g, x, dt, p: g.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5)))
register(nn_ops.Hardswish)(_act(lambda g, x, dt, p: g.node("HardSwish", [x])))
register(nn_ops.Silu)(_act(lambda g, x, dt, p: g.node("Mul", [x, g.node("Sigmoid", [x])])))
register(nn_ops.LogSigmoid)(_act(lambda g, x, dt, p: g.node("Neg", [g.node("Softplus", [g.node("Neg", [x])])])))
register(nn_ops.Gelu)(_act(_gelu))
register(nn_ops.GeluTanh)(_act(_gelu_tanh))
register(nn_ops.Elu)(_act(_elu))
register(nn_ops.Softplus)(_act(_softplus))
register(nn_ops.Mish)(_act(_mish))


@register(nn_ops.Embedding)
def _embedding(g, op):
    return g.node("Gather", [g.value(op.inputs[0]), g.value(op.inputs[1], _dtype.int64)], axis=0)


# -- padding and resampling -----------------------------------------------------------------------------------------
@register(ConstantPad, dynamic=True)
def _constant_pad(g, op):
    pads = op.params["pads"]
    x = op.inputs[0]
    return g.node("Pad", [g.value(x), g.ints([lo for lo, _ in pads] + [hi for _, hi in pads]),
                          g.scalar(op.params["value"], x.dtype)], mode="constant")


@register(Resample)
def _resample(g, op):
    dt = out_dtype(op)
    x, axis = g.value(op.inputs[0], dt), op.params["axis"]
    y = None
    for idx, w, _, _ in op.params["taps"]:
        t = g.node("Gather", [x, g.const(_host(idx).astype(np.int64))], axis=axis)
        if w is not None:
            t = g.node("Mul", [t, g.const(_host(w).astype(dt.np))])
        y = t if y is None else g.node("Add", [y, t])
    return y
