"""Normalization primitive: ``(x - mean) / sqrt(var + eps) * weight + bias`` over some axes, in one op.

One ``Normalize`` serves layer_norm (trailing axes), batch_norm in training (all axes but the channels),
instance_norm (the spatial axes) and group_norm (on an (N, G, -1) view); with ``center=False`` it is rms_norm.
Its backward is one formula over arrays or Tensors alike: on raw arrays when no graph is being recorded (the
common case, fast), on Tensors when ``create_graph`` asks for a differentiable gradient.
"""
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


def _contract(xp, a, b, keep):
    """``sum(a * b)`` over every axis not in ``keep``, kept as size-1 axes; no full-size temporary."""
    letters = "abcdefghijklmnopqrstuvwxyz"[:a.ndim]
    out = xp.einsum(f"{letters},{letters}->{''.join(letters[i] for i in keep)}", a, b)
    return out.reshape(tuple(s if i in keep else 1 for i, s in enumerate(a.shape)))


class Normalize(Function):
    """Outputs ``(y, mean, var)`` (``(y, mean_square)`` without ``center``); only ``y`` is differentiable."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, center=True):
        xp = ctx.xp
        keep = tuple(i for i in range(x.ndim) if i not in axes)
        n = 1
        for i in axes:
            n *= x.shape[i]
        with _quiet(xp):
            if center:
                mean = x.sum(axis=axes, keepdims=True) / n  # 0 / 0 for an empty batch, as torch's nan
                xhat = x - mean
                var = _contract(xp, xhat, xhat, keep) / n
            else:
                mean = None
                var = _contract(xp, x, x, keep) / n
            rstd = 1 / xp.sqrt(var + eps)
            xhat = xp.multiply(xhat, rstd, out=xhat) if center else x * rstd
        y = xhat if w is None else xhat * w
        if b is not None:
            y = y + b if y is xhat else xp.add(y, b, out=y)
        if ctx.needs_input_grad:
            ctx.axes, ctx.eps, ctx.center, ctx.keep, ctx.n = axes, eps, center, keep, n
            ctx.bshape = None if b is None else b.shape
            ctx.mean, ctx.rstd = mean, rstd
            ctx.xhat = xhat.copy() if y is xhat else xhat  # the output must not alias what backward reads
            ctx.save_for_backward(x, w)
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
        if STATE.enabled:  # create_graph: the Tensor formula, with mean and rstd as functions of x
            axes = ctx.axes
            mean = x.mean(axes, keepdim=True) if ctx.center else None
            xc = x - mean if ctx.center else x
            rstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            return _grads(g, x, w, mean, rstd, axes, ctx.bshape, need)
        xp = ctx.xp
        xhat, rstd = ctx.xhat, ctx.rstd
        dt = g._data.dtype
        ga = g._data.astype(xhat.dtype, copy=False)
        wa = None if w is None else w._data.astype(xhat.dtype, copy=False)
        gx = gw = gb = None
        with _quiet(xp):
            if need[1]:
                lead = ga.ndim - w.ndim  # the dims w is broadcast along
                gw = _contract(xp, ga, xhat, tuple(lead + i for i, s in enumerate(w.shape) if s != 1)).reshape(w.shape)
            if need[2]:
                gb = _sum_to(ga, ctx.bshape)
            if need[0]:
                gxhat = ga * wa if wa is not None else ga
                t = _contract(xp, gxhat, xhat, ctx.keep) / ctx.n
                gx = xhat * t
                xp.subtract(gxhat, gx, out=gx)
                if ctx.center:
                    gx -= gxhat.sum(axis=ctx.axes, keepdims=True) / ctx.n
                gx *= rstd
        wrap = lambda a: None if a is None else Tensor._make(a.astype(dt, copy=False), g.dtype, g.device)
        return wrap(gx), wrap(gw), wrap(gb)
