"""The meta device's forwards: an op's forward run on meta arrays (one element broadcast to each shape) whose outputs
become meta arrays, and, for the products, a shape rule instead of the forward so that no product is computed."""
import numpy as np

from ._device import is_meta_array, meta_array

_FORWARDS = {}  # Function class -> its forward on meta arrays
_RULES = None  # Function class -> shape rule (built on first use: the op modules import this one's importers)


def meta_forward(cls):
    """``cls``'s forward for meta inputs: arrays in, meta arrays out (read by ``Function.apply``)."""
    fn = _FORWARDS.get(cls)
    if fn is None:
        fn = _FORWARDS[cls] = _wrap(cls, _rules().get(cls, cls.forward))
    return fn


def _wrap(cls, forward):
    def meta(ctx, *arrays, **params):
        raw = forward(ctx, *arrays, **params)
        if type(raw) is tuple:
            out = tuple(_as_meta(r) for r in raw)
        else:
            out = _as_meta(raw)
        saved = ctx._saved_raw
        if saved:  # what forward saved of its outputs is their meta array
            pairs = tuple(zip(raw, out)) if type(raw) is tuple else ((raw, out),)
            ctx._saved_raw = tuple(next((m for r, m in pairs if r is s), s) for s in saved)
        return out
    meta.__qualname__ = cls.__qualname__ + ".forward"
    return meta


def _as_meta(a):
    """An output of a forward as a meta array; views of meta inputs stay as they are (and so stay views)."""
    if a is None:
        return a
    if type(a) is np.ndarray and is_meta_array(a):
        return a
    return meta_array(np.shape(a), a.dtype)


def _batch(a, b):
    return np.broadcast_shapes(a[:-2], b[:-2])


# -- shape rules: the forward's ctx state and outputs, without the products ------------------------------------
def _matmul(ctx, a, b):
    ctx.save_for_backward(a, b)
    ctx.b_ndim = b.ndim
    return meta_array(_batch(a.shape, b.shape) + (a.shape[-2], b.shape[-1]), np.result_type(a, b))


def _add_matmul(ctx, input, a, b, beta, alpha, reduce_batch):
    ctx.save_for_backward(a, b)
    ctx.beta, ctx.alpha, ctx.reduce_batch = beta, alpha, reduce_batch
    shape = _batch(a.shape, b.shape) + (a.shape[-2], b.shape[-1])
    return meta_array(shape[1:] if reduce_batch else shape, np.result_type(a, b))


def _linear(ctx, x, w, b):
    ctx.save_for_backward(x, w)
    return meta_array(x.shape[:-1] + w.shape[:-1], np.result_type(x, w))


def _conv(ctx, x, w, b, plan, groups):
    ctx.save_for_backward(x, w)
    ctx.plan, ctx.groups, ctx.cols = plan, groups, None
    return meta_array((x.shape[0], w.shape[0]) + plan.out, np.result_type(x, w))


def _conv_input(ctx, g, w, plan, groups):
    ctx.save_for_backward(g, w)
    ctx.plan, ctx.groups = plan, groups
    return meta_array((g.shape[0], w.shape[1] * groups) + plan.shape[2:], np.result_type(g, w))


def _conv_weight(ctx, x, g, plan, groups, cols=None):
    ctx.save_for_backward(x, g)
    ctx.plan, ctx.groups = plan, groups
    return meta_array((g.shape[1], x.shape[1] // groups) + plan.ksize, np.result_type(x, g))


def _attention(ctx, q, k, v, bias, keep, scale, causal, safe):
    ctx.scale, ctx.fast = scale, False
    ctx.set_materialize_grads(False)
    dt = np.result_type(q, k, v)
    p = meta_array(_batch(q.shape, k.shape) + (q.shape[-2], k.shape[-2]), dt)
    out = meta_array(_batch(p.shape, v.shape) + (q.shape[-2], v.shape[-1]), dt)
    ctx.save_for_backward(q, k, v, keep, p)
    return out, p


def _einsum(ctx, *ops, labels, output):
    ctx.labels, ctx.output, ctx.shapes = labels, output, [op.shape for op in ops]
    ctx.save_for_backward(*ops)
    sizes = {}
    for lab, op in zip(labels, ops):
        for c, n in zip(lab, op.shape):
            sizes[c] = max(n, sizes.get(c, 1))
    return meta_array(tuple(sizes[c] for c in output), np.result_type(*ops))


def data_dependent(op):
    """The error of ``op`` on meta tensors: the shape of its output depends on values, which they do not hold."""
    return NotImplementedError(f"{op}: the shape of the output depends on the input's values, which a meta tensor "
                               "does not hold")


def _unique(ctx, *arrays, **params):
    raise data_dependent("unique")


def _rules():
    global _RULES
    if _RULES is None:
        from ._ops.attention import ScaledDotProductAttention
        from ._ops.conv import Conv, ConvInput, ConvWeight
        from ._ops.matmul import AddMatmul, Einsum, Matmul
        from ._ops.sort import Unique
        from .nn.functional.linear import Linear
        _RULES = {Matmul: _matmul, AddMatmul: _add_matmul, Linear: _linear, Conv: _conv, ConvInput: _conv_input,
                  ConvWeight: _conv_weight, ScaledDotProductAttention: _attention, Einsum: _einsum,
                  Unique: _unique}
    return _RULES
