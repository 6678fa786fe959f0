"""ONNX neural network ops run with ember ops: convolution, pooling, normalization, activations, padding, resizing
and the recurrent layers (see ``runtime`` for the conventions)."""
import math

import numpy as np

from .. import _creation as C, _dtype
from .._ops import index, matmul, order, reduce, shape, unary, view
from .._ops.rnn import recurrence
from ..nn import functional as F
from .runtime import CHECKS, OPS, _wrap, op, scalar

_FLOAT_MIN = -math.inf


# -- convolution ----------------------------------------------------------------------------------------------------
def _geometry(a, x, kernel):
    """(strides, dilations, low pads, high pads) of a conv or pool node over input ``x``."""
    nd = len(kernel)
    s, d = list(a.get("strides") or [1] * nd), list(a.get("dilations") or [1] * nd)
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        lo, hi = [], []
        for size, k, ss, dd in zip(x.shape[2:], kernel, s, d):
            total = max((-(-size // ss) - 1) * ss + (k - 1) * dd + 1 - size, 0)
            small, big = total // 2, total - total // 2
            lo.append(small if auto == "SAME_UPPER" else big)
            hi.append(big if auto == "SAME_UPPER" else small)
        return s, d, lo, hi
    pads = list(a.get("pads") or [0] * (2 * nd)) if auto != "VALID" else [0] * (2 * nd)
    return s, d, pads[:nd], pads[nd:]


def _torch_pads(lo, hi):
    """Per-dim (low, high) pads in F.pad's order (last dim first)."""
    out = []
    for p, q in reversed(list(zip(lo, hi))):
        out += [p, q]
    return out


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@op("Conv")
def _conv(ctx, x, a, n):
    t, w = x[0], x[1]
    b = x[2] if len(x) > 2 else None
    kernel = a.get("kernel_shape") or list(w.shape[2:])
    s, d, lo, hi = _geometry(a, t, kernel)
    if lo != hi:
        t, lo = F.pad(t, _torch_pads(lo, hi)), [0] * len(lo)
    return _CONV[len(kernel)](t, w, b, s, lo, d, a.get("group", 1))


@op("ConvTranspose")
def _conv_transpose(ctx, x, a, n):
    t, w = x[0], x[1]
    b = x[2] if len(x) > 2 else None
    kernel = a.get("kernel_shape") or list(w.shape[2:])
    nd = len(kernel)
    s, d = list(a.get("strides") or [1] * nd), list(a.get("dilations") or [1] * nd)
    out_pad = list(a.get("output_padding") or [0] * nd)
    full = [ss * (size - 1) + (k - 1) * dd + 1 for size, k, ss, dd in zip(t.shape[2:], kernel, s, d)]
    if a.get("output_shape"):
        total = [f + op_ - o for f, op_, o in zip(full, out_pad, a["output_shape"][-nd:])]
        upper = a.get("auto_pad", "NOTSET") == "SAME_UPPER"
        lo = [q // 2 if upper else q - q // 2 for q in total]
        hi = [q - p for q, p in zip(total, lo)]
    elif a.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        total = [f + op_ - size * ss for f, op_, size, ss in zip(full, out_pad, t.shape[2:], s)]
        upper = a["auto_pad"] == "SAME_UPPER"
        lo = [q // 2 if upper else q - q // 2 for q in total]
        hi = [q - p for q, p in zip(total, lo)]
    else:
        pads = list(a.get("pads") or [0] * (2 * nd))
        lo, hi = pads[:nd], pads[nd:]
    y = _CONV_T[nd](t, w, None, s, 0, 0, a.get("group", 1), d)
    # the full output, extended by the output padding (no input reaches it), cropped by the pads
    y = F.pad(y, _torch_pads([-p for p in lo], [op_ - q for op_, q in zip(out_pad, hi)]))
    return y if b is None else y + view.reshape(b, (-1,) + (1,) * nd)


# -- pooling --------------------------------------------------------------------------------------------------------
_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


@op("MaxPool")
def _max_pool(ctx, x, a, n):
    t, kernel = x[0], a["kernel_shape"]
    s, d, lo, hi = _geometry(a, t, kernel)
    ceil = bool(a.get("ceil_mode", 0))
    pool = _MAX[len(kernel)]
    if lo != hi or any(p > (dd * (k - 1) + 1) // 2 for p, k, dd in zip(lo, kernel, d)):
        if n > 1:
            raise NotImplementedError("ONNX MaxPool indices with asymmetric or large pads are not supported")
        t, lo = F.pad(t, _torch_pads(lo, hi), value=_FLOAT_MIN), [0] * len(lo)
    if n == 1:
        return pool(t, kernel, s, lo, d, ceil)
    y, idx = pool(t, kernel, s, lo, d, ceil, return_indices=True)
    # ONNX counts indices over the whole (N, C, *spatial) tensor, ember within each (n, c) plane
    plane = math.prod(t.shape[2:])
    offsets = C.arange(t.shape[0] * t.shape[1], dtype=_dtype.int64, device=t.device) * plane
    return y, idx + view.reshape(offsets, tuple(t.shape[:2]) + (1,) * len(kernel))


CHECKS["MaxPool"] = lambda a, opset, node: ("storage_order=1" if a.get("storage_order", 0) and len(node.output) > 1
                                            else None)


@op("AveragePool")
def _avg_pool(ctx, x, a, n):
    t, kernel = x[0], a["kernel_shape"]
    s, d, lo, hi = _geometry(a, t, kernel)
    if any(v != 1 for v in d):
        raise NotImplementedError("ONNX AveragePool with dilations is not supported")
    ceil, include = bool(a.get("ceil_mode", 0)), bool(a.get("count_include_pad", 0))
    pool = _AVG[len(kernel)]
    if lo == hi and all(p <= k // 2 for p, k in zip(lo, kernel)) and (ceil or include or not any(lo)):
        return pool(t, kernel, s, lo, ceil, include)
    if ceil:
        raise NotImplementedError("ONNX AveragePool with ceil_mode and asymmetric or large pads is not supported")
    padded = F.pad(t, _torch_pads(lo, hi))
    y = pool(padded, kernel, s)
    if include:
        return y
    ones = F.pad(C.ones((1, 1) + tuple(t.shape[2:]), dtype=t.dtype, device=t.device), _torch_pads(lo, hi))
    return y / pool(ones, kernel, s)  # the mean over the window's input elements only


@op("GlobalAveragePool")
def _global_avg(ctx, x, a, n):
    return reduce.mean(x[0], tuple(range(2, x[0].ndim)), True)


@op("GlobalMaxPool")
def _global_max(ctx, x, a, n):
    return order.amax(x[0], tuple(range(2, x[0].ndim)), True)


# -- normalization --------------------------------------------------------------------------------------------------
def _channel(t, nd):
    return view.reshape(t, (-1,) + (1,) * nd)


@op("BatchNormalization")
def _batch_norm(ctx, x, a, n):
    t, scale, bias, mean, var = x[:5]
    nd = t.ndim - 2
    inv = unary.rsqrt(var + a.get("epsilon", 1e-5))
    return (t - _channel(mean, nd)) * _channel(inv * scale, nd) + _channel(bias, nd)


CHECKS["BatchNormalization"] = lambda a, opset, node: ("training_mode" if a.get("training_mode", 0) or
                                                       len([o for o in node.output if o]) > 1 else None)


@op("InstanceNormalization")
def _instance_norm(ctx, x, a, n):
    return F.instance_norm(x[0], weight=x[1], bias=x[2], eps=a.get("epsilon", 1e-5))


def _normalize(t, axes, eps, center=True):
    """(normalized t, mean or None, 1 / std) over ``axes``."""
    mean = reduce.mean(t, axes, True) if center else None
    xc = t - mean if center else t
    inv = unary.rsqrt(reduce.mean(xc * xc, axes, True) + eps)
    return xc * inv, mean, inv


@op("LayerNormalization")
def _layer_norm(ctx, x, a, n):
    t, scale = x[0], x[1]
    bias = x[2] if len(x) > 2 else None
    axis = _wrap(a.get("axis", -1), t.ndim)
    eps = a.get("epsilon", 1e-5)
    norm_shape = tuple(t.shape[axis:])
    if n == 1 and tuple(scale.shape) == norm_shape and (bias is None or tuple(bias.shape) == norm_shape):
        return F.layer_norm(t, norm_shape, scale, bias, eps)
    y, mean, inv = _normalize(t, tuple(range(axis, t.ndim)), eps)
    y = y * scale
    return (y if bias is None else y + bias), mean, inv


@op("RMSNormalization")
def _rms_norm(ctx, x, a, n):
    t = x[0]
    axis = _wrap(a.get("axis", -1), t.ndim)
    y, _, _ = _normalize(t, tuple(range(axis, t.ndim)), a.get("epsilon", 1e-5), center=False)
    return y * x[1]


@op("GroupNormalization")
def _group_norm(ctx, x, a, n):
    t, scale, bias = x
    groups, N, ch = a["num_groups"], t.shape[0], t.shape[1]
    y, _, _ = _normalize(view.reshape(t, (N, groups, -1)), (2,), a.get("epsilon", 1e-5))
    y = view.reshape(y, t.shape)
    if scale.shape[0] != ch:  # opset 18: one scale per group
        rep = C.tensor(np.repeat(np.arange(groups), ch // groups), dtype=_dtype.int64, device=t.device)
        scale, bias = scale.index_select(0, rep), bias.index_select(0, rep)
    nd = t.ndim - 2
    return y * _channel(scale, nd) + _channel(bias, nd)


@op("LpNormalization")
def _lp_norm(ctx, x, a, n):
    t, p = x[0], a.get("p", 2)
    axis = a.get("axis", -1)
    norm = reduce.sum(unary.abs(t), axis, True) if p == 1 else unary.sqrt(reduce.sum(t * t, axis, True))
    return t / norm


# -- activations ----------------------------------------------------------------------------------------------------
OPS.update({
    "Relu": lambda ctx, x, a, n: F.relu(x[0]),
    "LeakyRelu": lambda ctx, x, a, n: F.leaky_relu(x[0], a.get("alpha", 0.01)),
    "Elu": lambda ctx, x, a, n: F.elu(x[0], a.get("alpha", 1.0)),
    "Celu": lambda ctx, x, a, n: F.celu(x[0], a.get("alpha", 1.0)),
    "Softplus": lambda ctx, x, a, n: F.softplus(x[0]),
    "Softsign": lambda ctx, x, a, n: F.softsign(x[0]),
    "HardSwish": lambda ctx, x, a, n: F.hardswish(x[0]),
    "Mish": lambda ctx, x, a, n: F.mish(x[0]),
    "Gelu": lambda ctx, x, a, n: F.gelu(x[0], approximate=a.get("approximate", "none")),
    "PRelu": lambda ctx, x, a, n: index.where(x[0] < 0, x[0] * x[1], x[0]),
    "ThresholdedRelu": lambda ctx, x, a, n: index.where(x[0] > a.get("alpha", 1.0), x[0], 0.0),
})


@op("Selu")
def _selu(ctx, x, a, n):
    alpha, gamma = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
    t = x[0]
    return gamma * index.where(t > 0, t, alpha * unary.expm1(t))


@op("HardSigmoid")
def _hard_sigmoid(ctx, x, a, n):
    return (x[0] * a.get("alpha", 0.2) + a.get("beta", 0.5)).clamp(0.0, 1.0)


@op("Shrink")
def _shrink(ctx, x, a, n):
    t, lambd, bias = x[0], a.get("lambd", 0.5), a.get("bias", 0.0)
    return index.where(t < -lambd, t + bias, index.where(t > lambd, t - bias, 0.0))


# -- padding and resizing -------------------------------------------------------------------------------------------
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


@op("Pad")
def _pad(ctx, x, a, n):
    from .runtime import ints
    t = x[0]
    if ctx.opset < 11:
        pads, value, axes = list(a["pads"]), a.get("value", 0.0), None
    else:
        pads = ints(x[1])
        value = scalar(x[2]) if len(x) > 2 and x[2] is not None else 0
        axes = ints(x[3]) if len(x) > 3 and x[3] is not None else None
    axes = list(range(t.ndim)) if axes is None else [_wrap(d, t.ndim) for d in axes]
    k = len(axes)
    lo, hi = [0] * t.ndim, [0] * t.ndim
    for i, d in enumerate(axes):
        lo[d], hi[d] = pads[i], pads[k + i]
    mode = _PAD_MODES[a.get("mode", "constant")]
    first = next((d for d in range(t.ndim) if lo[d] or hi[d]), t.ndim)
    torch_pads = _torch_pads(lo[first:], hi[first:])
    if mode == "constant":
        return F.pad(t, torch_pads, value=value)
    return F.pad(t, torch_pads, mode=mode)


CHECKS["Pad"] = lambda a, opset, node: (None if a.get("mode", "constant") in _PAD_MODES
                                        else f"mode={a.get('mode')!r}")


def _source_coords(mode, size, out, scale):
    """Where each output position of one axis samples the input (ONNX's coordinate_transformation_mode)."""
    xo = np.arange(out, dtype=np.float64)
    if mode == "half_pixel":
        return (xo + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (xo + 0.5) / scale - 0.5 if out > 1 else np.zeros(out)
    if mode == "align_corners":
        return xo * (size - 1) / (out - 1) if out > 1 else np.zeros(out)
    if mode == "asymmetric":
        return xo / scale
    if mode == "half_pixel_symmetric":
        adjust = out / (scale * size)
        return size / 2 * (1 - adjust) + (xo + 0.5) / scale - 0.5
    raise NotImplementedError(f"ONNX Resize coordinate_transformation_mode={mode!r}")


_ROUND = {"round_prefer_floor": lambda v: np.ceil(v - 0.5), "round_prefer_ceil": lambda v: np.floor(v + 0.5),
          "floor": np.floor, "ceil": np.ceil}


@op("Resize")
def _resize(ctx, x, a, n):
    t = x[0]
    scales = sizes = None
    if ctx.opset < 11:
        scales = x[1].tolist()
    else:
        if len(x) > 2 and x[2] is not None and x[2].numel():
            scales = x[2].tolist()
        if len(x) > 3 and x[3] is not None and x[3].numel():
            sizes = [int(v) for v in x[3].tolist()]
    axes = [_wrap(d, t.ndim) for d in a.get("axes") or range(t.ndim)]
    mode, coord = a.get("mode", "nearest"), a.get("coordinate_transformation_mode", "half_pixel")
    rounding = _ROUND[a.get("nearest_mode", "round_prefer_floor")]
    for i, d in enumerate(axes):
        size = t.shape[d]
        out = sizes[i] if sizes is not None else int(math.floor(size * scales[i]))
        scale = out / size if sizes is not None else scales[i]
        if out == size and scale == 1:
            continue
        src = _source_coords(coord, size, out, scale)
        if mode == "nearest":
            idx = np.clip(rounding(src), 0, size - 1).astype(np.int64)
            t = t.index_select(d, C.tensor(idx, dtype=_dtype.int64, device=t.device))
            continue
        src = np.clip(src, 0, size - 1)
        i0 = np.floor(src).astype(np.int64)
        i1 = np.minimum(i0 + 1, size - 1)
        w = C.tensor((src - i0).reshape((-1,) + (1,) * (t.ndim - d - 1)), dtype=t.dtype, device=t.device)
        lo_, hi_ = (t.index_select(d, C.tensor(i, dtype=_dtype.int64, device=t.device)) for i in (i0, i1))
        t = lo_ + (hi_ - lo_) * w
    return t


def _check_resize(a, opset, node):
    if a.get("mode", "nearest") not in ("nearest", "linear"):
        return f"mode={a.get('mode')!r}"
    if a.get("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize":
        return "coordinate_transformation_mode='tf_crop_and_resize'"
    if a.get("antialias", 0):
        return "antialias"
    if a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        return f"keep_aspect_ratio_policy={a.get('keep_aspect_ratio_policy')!r}"
    return None


CHECKS["Resize"] = _check_resize


# -- recurrent layers -----------------------------------------------------------------------------------------------
# ONNX orders the gates (i, o, f, c) for LSTM and (z, r, h) for GRU; ember's recurrence (i, f, g, o) and (r, z, n).
_FROM_ONNX = {"LSTM": (0, 2, 3, 1), "GRU": (1, 0, 2), "RNN": (0,)}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}


def _gates(t, order_, hidden):
    """Rows of ``t`` (G*H, ...) regrouped from ONNX's gate order to ember's."""
    idx = np.concatenate([np.arange(g * hidden, (g + 1) * hidden) for g in order_])
    return t.index_select(0, C.tensor(idx, dtype=_dtype.int64, device=t.device))


def _recurrent(kind):
    def run(ctx, x, a, n):
        xs, w, r = x[0], x[1], x[2]
        b, lens, h0, c0 = (x[i] if len(x) > i else None for i in (3, 4, 5, 6))
        if len(x) > 7 and x[7] is not None:
            raise NotImplementedError("ONNX LSTM peephole weights (input P) are not supported")
        hidden, direction = a["hidden_size"], a.get("direction", "forward")
        if a.get("layout", 0):
            xs = view.permute(xs, (1, 0, 2))
            h0, c0 = (None if s is None else view.permute(s, (1, 0, 2)) for s in (h0, c0))
        T, B, size_in = xs.shape
        if lens is not None and any(v != T for v in lens.tolist()):
            raise NotImplementedError("ONNX recurrent layers with sequence_lens shorter than the sequence")
        mode = kind if kind != "RNN" else ("RNN_RELU" if (a.get("activations") or ["Tanh"])[0] == "Relu"
                                           else "RNN_TANH")
        G = len(_FROM_ONNX[kind])
        flat = view.reshape(xs, (T * B, size_in))
        ys, hs, cs = [], [], []
        for d in range(w.shape[0]):
            wd, rd = _gates(w[d], _FROM_ONNX[kind], hidden), _gates(r[d], _FROM_ONNX[kind], hidden)
            wb = rb = None
            if b is not None:
                wb = _gates(b[d, :G * hidden], _FROM_ONNX[kind], hidden)
                rb = _gates(b[d, G * hidden:], _FROM_ONNX[kind], hidden)
            hd = C.zeros(B, hidden, dtype=xs.dtype, device=xs.device) if h0 is None else h0[d]
            cd = None if kind != "LSTM" else (C.zeros(B, hidden, dtype=xs.dtype, device=xs.device) if c0 is None
                                              else c0[d])
            xg = matmul.matmul(flat, view.t(wd))
            if wb is not None:
                xg = xg + wb
            reverse = direction == "reverse" or d == 1
            if kind == "GRU" and not a.get("linear_before_reset", 0):
                out, hn = _gru_reset_first(xg, hd, rd, rb, T, B, reverse)
                res = (out, hn)
            else:
                res = recurrence(xg, hd, cd, rd, rb, None, mode, (B,) * T, reverse)
            ys.append(view.reshape(res[0], (T, B, hidden)))
            hs.append(res[1])
            if kind == "LSTM":
                cs.append(res[2])
        y, h = shape.stack(ys, 1), shape.stack(hs, 0)
        c = shape.stack(cs, 0) if cs else None
        if a.get("layout", 0):
            y, h = view.permute(y, (2, 0, 1, 3)), view.permute(h, (1, 0, 2))
            c = None if c is None else view.permute(c, (1, 0, 2))
        return (y, h, c) if kind == "LSTM" else (y, h)
    return run


def _gru_reset_first(xg, h, r, rb, T, B, reverse):
    """GRU with the reset gate applied before the hidden projection (linear_before_reset=0), step by step."""
    H = h.shape[1]
    wr, wz, wn = r[:H], r[H:2 * H], r[2 * H:]
    br = [None] * 3 if rb is None else [rb[:H], rb[H:2 * H], rb[2 * H:]]
    outs = [None] * T
    for step in (range(T - 1, -1, -1) if reverse else range(T)):
        gx = xg[step * B:(step + 1) * B]
        pr, pz = (matmul.matmul(h, view.t(m)) for m in (wr, wz))
        if br[0] is not None:
            pr, pz = pr + br[0], pz + br[1]
        rg = (gx[:, :H] + pr).sigmoid()
        zg = (gx[:, H:2 * H] + pz).sigmoid()
        pn = matmul.matmul(rg * h, view.t(wn))
        if br[2] is not None:
            pn = pn + br[2]
        ng = (gx[:, 2 * H:] + pn).tanh()
        h = ng + zg * (h - ng)
        outs[step] = h
    return shape.cat(outs, 0), h


def _check_recurrent(kind):
    def check(a, opset, node):
        if a.get("clip") is not None:
            return "clip"
        if a.get("input_forget", 0):
            return "input_forget"
        acts = a.get("activations")
        if kind == "RNN":
            ok = acts is None or all(v in ("Tanh", "Relu") for v in acts) and len(set(acts)) == 1
        else:
            default = _DEFAULT_ACTS[kind]
            ok = acts is None or acts in (default, default * 2)
        return None if ok else f"activations={acts}"
    return check


for _kind in ("LSTM", "GRU", "RNN"):
    OPS[_kind] = _recurrent(_kind)
    CHECKS[_kind] = _check_recurrent(_kind)
