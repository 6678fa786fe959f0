"""Normalization primitive: ``(x - mean) / sqrt(var + eps) * weight + bias`` over some axes, in one op.

One ``Normalize`` serves layer_norm (trailing axes), batch_norm in training (all axes but the channels),
instance_norm (the spatial axes) and group_norm (on an (N, G, -1) view); with ``center=False`` it is rms_norm.
Its backward is one formula over arrays or Tensors alike: on raw arrays when no graph is being recorded (the
common case, fast), on Tensors when ``create_graph`` asks for a differentiable gradient.
"""
from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from .reduce import _quiet


def _sum_to(a, shape):
    """``a`` summed over the axes along which an array of ``shape`` was broadcast to it (arrays or Tensors)."""
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and a.shape[lead + i] != 1)
    r = a.sum(axis=axes, keepdims=True) if axes else a
    return r.reshape(shape)


def _grads(g, x, w, mean, rstd, axes, bshape, need):
    """Gradients for (x, weight, bias) of the normalization; every argument an array, or every one a Tensor."""
    xhat = (x - mean) * rstd if mean is not None else x * rstd
    gx = gw = gb = None
    if need[0]:
        gxhat = g if w is None else g * w
        gx = gxhat - xhat * (gxhat * xhat).mean(axis=axes, keepdims=True)
        if mean is not None:
            gx = gx - gxhat.mean(axis=axes, keepdims=True)
        gx = gx * rstd
    if need[1]:
        gw = _sum_to(g * xhat, w.shape)
    if need[2]:
        gb = _sum_to(g, bshape)
    return gx, gw, gb


class Normalize(Function):
    """Outputs ``(y, mean, var)`` (``(y, mean_square)`` without ``center``); only ``y`` is differentiable."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, center=True):
        xp = ctx.xp
        ctx.axes, ctx.eps, ctx.center = axes, eps, center
        ctx.bshape = None if b is None else b.shape
        with _quiet(xp):
            if center:
                mean = x.mean(axis=axes, keepdims=True)
                xc = x - mean
                var = xp.mean(xc * xc, axis=axes, keepdims=True)
            else:
                xc, mean = x, None
                var = xp.mean(x * x, axis=axes, keepdims=True)
            rstd = 1 / xp.sqrt(var + eps)
            y = xc * rstd
        if ctx.needs_input_grad:
            ctx.mean, ctx.rstd = mean, rstd
            ctx.save_for_backward(x, w)
        if w is not None:
            y *= w
        if b is not None:
            y += b
        ctx.set_materialize_grads(False)
        stats = (var,) if mean is None else (mean, var)
        ctx.mark_non_differentiable(*stats)
        return (y,) + stats

    @staticmethod
    def backward(ctx, g, *_):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        if g is None:
            return None, None, None
        if STATE.enabled:  # create_graph: the same formula on Tensors, with mean and rstd as functions of x
            axes = ctx.axes
            mean = x.mean(axes, keepdim=True) if ctx.center else None
            xc = x - mean if ctx.center else x
            rstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            return _grads(g, x, w, mean, rstd, axes, ctx.bshape, need)
        work = _dtype.float32.np if g.dtype in (_dtype.float16, _dtype.bfloat16) else g._data.dtype
        arrays = [None if t is None else t._data.astype(work, copy=False) for t in (g, x, w)]
        out = _grads(*arrays, ctx.mean, ctx.rstd, ctx.axes, ctx.bshape, need)
        return tuple(None if a is None else Tensor._make(a.astype(g._data.dtype, copy=False), g.dtype, g.device)
                     for a in out)
