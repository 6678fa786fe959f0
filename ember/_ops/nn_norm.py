"""Normalization primitive: ``(x - mean) / sqrt(var + eps) * weight + bias`` over some axes, in one op.

One ``Normalize`` serves layer_norm (trailing axes), batch_norm in training (all axes but the channels),
instance_norm (the spatial axes) and group_norm (on an (N, G, -1) view); with ``center=False`` it is rms_norm.
Its backward is one formula over arrays or Tensors alike: on raw arrays when no graph is being recorded (the
common case, fast), on Tensors when ``create_graph`` asks for a differentiable gradient. Over trailing axes of a
C-contiguous NumPy input (layer_norm, rms_norm) both directions run on blocks of rows, in cache and on the
intra-op threads, and backward recomputes the normalized input from the saved statistics.
"""
import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .._kernels import compiled
from .._kernels.blas import spread
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
    """``sum(a * b)`` over every axis not in ``keep``, kept as size-1 axes; no full-size temporary on the CPU (CuPy's
    einsum costs more time to set up than the product and the sum take)."""
    if xp is not np:
        return (a * b).sum(axis=tuple(i for i in range(a.ndim) if i not in keep), keepdims=True)
    letters = "abcdefghijklmnopqrstuvwxyz"[:a.ndim]
    out = xp.einsum(f"{letters},{letters}->{''.join(letters[i] for i in keep)}", a, b)
    return out.reshape(tuple(s if i in keep else 1 for i, s in enumerate(a.shape)))


_ROW_BLOCK = 1 << 17  # elements per block of rows
_SPREAD = 1 << 19  # elements from which the blocks are spread over the intra-op threads


def _on_row_blocks(run, m, n):
    """``run((start, stop))`` over blocks of rows (on the intra-op threads if there are many): the results."""
    step = max(1, _ROW_BLOCK // max(n, 1))
    return spread(run, [(i, min(i + step, m)) for i in range(0, m, step)], m * n >= _SPREAD)


def rows_forward(x, w, b, eps, center):
    """Normalizes each row of the C-contiguous (M, N) array ``x`` (then ``* w + b``, each (N,) or None): returns
    ``(y, mean, var)``, the statistics (M,) (``mean`` None without ``center``). One fused loop with numba
    (``compiled.norm_rows``), else ``rows_forward_numpy``."""
    fused = compiled.kernel("norm_rows", x.size)
    if fused is None:
        return rows_forward_numpy(x, w, b, eps, center)
    m, n = x.shape
    y = np.empty_like(x)
    mean, var = np.empty(m, x.dtype), np.empty(m, x.dtype)
    w = np.ones(n, x.dtype) if w is None else w
    b = np.zeros(n, x.dtype) if b is None else b
    _on_row_blocks(lambda r: fused(x[r[0]:r[1]], w, b, eps, center, y[r[0]:r[1]], mean[r[0]:r[1]], var[r[0]:r[1]]),
                   m, n)
    return y, mean if center else None, var


def rows_forward_numpy(x, w, b, eps, center):
    """``rows_forward`` in NumPy. Row sums are BLAS matrix-vector products: 3x faster than NumPy's reductions of
    short rows."""
    m, n = x.shape
    y = np.empty_like(x)
    mean = np.empty(m, x.dtype) if center else None
    var = np.empty(m, x.dtype)
    inv_n = np.full(n, 1 / n, x.dtype)

    def run(rows):
        i, j = rows
        xr = x[i:j]
        if center:
            mu = xr @ inv_n
            mean[i:j] = mu
            xc = xr - mu[:, None]
        else:
            xc = xr
        v = np.einsum("ij,ij->i", xc, xc)
        v /= n
        var[i:j] = v
        v += eps
        rstd = np.sqrt(v, out=v)
        np.reciprocal(rstd, out=rstd)
        out = y[i:j]
        np.multiply(xc, rstd[:, None], out=out)
        if w is not None:
            out *= w
        if b is not None:
            out += b
    _on_row_blocks(run, m, n)
    return y, mean, var


def rows_backward(g, x, w, mean, var, eps, need):
    """Gradients ``(gx, gw, gb)`` (None where ``need`` is false) of ``rows_forward`` from the output gradient
    ``g`` (M, N), the input ``x`` and the statistics it returned. One fused loop with numba
    (``compiled.norm_rows_grad``), else ``rows_backward_numpy``."""
    fused = compiled.kernel("norm_rows_grad", x.size)
    if fused is None:
        return rows_backward_numpy(g, x, w, mean, var, eps, need)
    m, n = x.shape
    gx = np.empty_like(x) if need[0] else np.empty((0, n), x.dtype)
    center = mean is not None
    mean = np.zeros(m, x.dtype) if mean is None else mean
    w = np.ones(n, x.dtype) if w is None else w

    def run(rows):
        i, j = rows
        gw, gb = np.zeros(n), np.zeros(n)
        fused(g[i:j], x[i:j], w, mean[i:j], var[i:j], eps, center, gx[i:j], gw, gb)
        return gw, gb
    parts = _on_row_blocks(run, m, n)
    total = lambda k: sum(p[k] for p in parts).astype(x.dtype)
    return gx if need[0] else None, total(0) if need[1] else None, total(1) if need[2] else None


def rows_backward_numpy(g, x, w, mean, var, eps, need):
    """``rows_backward`` in NumPy."""
    m, n = x.shape
    gx = np.empty_like(x) if need[0] else None
    w_n = None if w is None else w / n

    def run(rows):
        i, j = rows
        xr, gr = x[i:j], g[i:j]
        rstd = var[i:j] + eps
        np.sqrt(rstd, out=rstd)
        np.reciprocal(rstd, out=rstd)
        xhat = xr - mean[i:j, None] if mean is not None else xr.copy()
        xhat *= rstd[:, None]
        p = gr * xhat
        ones = np.ones(j - i, x.dtype)
        gw = ones @ p if need[1] else None
        gb = ones @ gr if need[2] else None
        if need[0]:
            # gx = rstd (g w - xhat mean(g w xhat) - mean(g w)), the means over each row
            a = p @ w_n if w is not None else np.add.reduce(p, axis=1) / n
            out = gx[i:j]
            if w is not None:
                np.multiply(gr, w, out=out)
            else:
                out[...] = gr
            np.multiply(xhat, a[:, None], out=p)
            out -= p
            if mean is not None:
                out -= (gr @ w_n if w is not None else np.add.reduce(gr, axis=1) / n)[:, None]
            out *= rstd[:, None]
        return gw, gb
    parts = _on_row_blocks(run, m, n)
    gw = sum(p[0] for p in parts) if need[1] else None
    gb = sum(p[1] for p in parts) if need[2] else None
    return gx, gw, gb


def rows_backward_half(g, x, w, mean, var, eps, need, half, round_stats):
    """``rows_backward`` for an input of the half dtype ``half`` (arrays in float32): the input's gradient from the
    statistics rounded to ``half`` if ``round_stats`` (no float32 weight), as torch keeps them; the weight's and
    bias's gradients summed in float32."""
    n = x.shape[1]
    f = np.float32
    rstd = np.reciprocal(np.sqrt(np.maximum(var, 0) + f(eps)))
    if round_stats:
        mean, rstd = mean.astype(half).astype(f), rstd.astype(half).astype(f)
    gx = gw = gb = None
    if need[0]:
        gw_ = g if w is None else g * w
        ds = np.einsum("ij,ij->i", gw_, x, dtype=np.float64).astype(f)
        db = gw_.sum(axis=1, dtype=np.float64).astype(f)
        scale = f(1) / f(n)
        b = (db * mean - ds) * rstd * rstd * rstd * scale
        c = -b * mean - db * rstd * scale
        gx = rstd[:, None] * g
        if w is not None:
            gx *= w
        gx += b[:, None] * x
        gx += c[:, None]
    if need[1]:
        gw = (g * ((x - mean[:, None]) * rstd[:, None])).sum(0)
    if need[2]:
        gb = g.sum(0)
    return gx, gw, gb


def _rows_fit(xp, x, w, b, axes):
    """Whether the normalization runs on rows: trailing axes of a C-contiguous NumPy array, affine of their shape."""
    k = len(axes)
    if xp is not np or not k or not x.size or x.dtype.kind != "f" or not x.flags.c_contiguous:
        return False
    if axes != tuple(range(x.ndim - k, x.ndim)):
        return False
    return all(t is None or t.shape == x.shape[x.ndim - k:] for t in (w, b))


class Normalize(Function):
    """Outputs ``(y, mean, var)`` (``(y, mean_square)`` without ``center``); only ``y`` is differentiable."""
    half_in_float32 = True
    rows = None  # (N, mean, var) when forward ran on rows

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, center=True):
        xp = ctx.xp
        ctx.set_materialize_grads(False)
        if _rows_fit(xp, x, w, b, axes):
            n = math.prod(x.shape[axes[0]:])
            flat = lambda t: None if t is None else t.reshape(n)
            with _quiet(xp):
                y, mean, var = rows_forward(x.reshape(-1, n), flat(w), flat(b), eps, center)
            stat_shape = x.shape[:axes[0]] + (1,) * len(axes)
            stats = (var.reshape(stat_shape),) if mean is None else (mean.reshape(stat_shape),
                                                                     var.reshape(stat_shape))
            ctx.mark_non_differentiable(*stats)
            if ctx.needs_input_grad:
                ctx.axes, ctx.eps, ctx.center, ctx.rows = axes, eps, center, (n, mean, var)
                ctx.bshape = None if b is None else b.shape
                ctx.save_for_backward(x, w)
            return (y.reshape(x.shape),) + stats
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
        stats = (var,) if mean is None else (mean, var)
        ctx.mark_non_differentiable(*stats)
        return (y,) + stats

    @staticmethod
    def backward(ctx, g, *_):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        if g is None:
            return None, None, None
        if grad_enabled():  # create_graph: the Tensor formula, with mean and rstd as functions of x
            axes = ctx.axes
            mean = x.mean(axes, keepdim=True) if ctx.center else None
            xc = x - mean if ctx.center else x
            rstd = ((xc * xc).mean(axes, keepdim=True) + ctx.eps).rsqrt()
            return _grads(g, x, w, mean, rstd, axes, ctx.bshape, need)
        xp = ctx.xp
        dt = g._data.dtype
        wrap = lambda a: None if a is None else Tensor._make(a.astype(dt, copy=False), g.dtype, g.device)
        # the weight's and bias's gradients stay in the dtype computed in (float32 for halves): the engine casts them
        # to the parameters' dtypes, so float32 parameters of a half input get them unrounded
        keep = lambda a: None if a is None else Tensor._make(a, _dtype.from_numpy_dtype(a.dtype), g.device)
        if ctx.rows is not None:
            n, mean, var = ctx.rows
            wa = None if w is None else w._data.reshape(n).astype(var.dtype, copy=False)
            ga = xp.ascontiguousarray(g._data, dtype=var.dtype).reshape(-1, n)
            xa = x._data.astype(var.dtype, copy=False).reshape(-1, n)
            with _quiet(xp):
                if dt.itemsize == 2 and ctx.center:  # layer_norm of float16, bfloat16
                    round_stats = w is None or w._data.dtype.itemsize == 2
                    gx, gw, gb = rows_backward_half(ga, xa, wa, mean, var, ctx.eps, need, dt, round_stats)
                else:
                    gx, gw, gb = rows_backward(ga, xa, wa, mean, var, ctx.eps, need)
            shaped = lambda a, shape, as_tensor=keep: None if a is None else as_tensor(a.reshape(shape))
            return shaped(gx, x.shape, wrap), shaped(gw, None if w is None else w.shape), shaped(gb, ctx.bshape)
        xhat, rstd = ctx.xhat, ctx.rstd
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
        return wrap(gx), keep(gw), keep(gb)
