"""N-d convolution as im2col + one matmul per group, with its two adjoints as ops of their own.

``Conv`` (y = w * x), ``ConvInput`` (its adjoint in x: the transposed convolution) and ``ConvWeight`` (its adjoint in
w) differentiate into one another, so every order of gradient is a convolution. ``Im2col``/``Col2im`` are
``F.unfold``/``F.fold``. Geometry, per spatial dimension: ``stride``, ``dilation`` and ``pads`` as (low, high) pairs;
the input is (B, C, *spatial), the weight (O, C / groups, *kernel).
"""
import itertools
import math

from ..autograd.function import Function

# Columns of the weight gradient are kept from forward up to this size (bytes); larger ones are recomputed.
_KEEP_COLS = 1 << 27


def out_size(size, k, stride, dilation, lo, hi):
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def _pad(xp, x, pads):
    """x zero-padded by ``pads`` ((low, high) per spatial dim; a negative high pad crops)."""
    if any(hi < 0 for _, hi in pads):
        x = x[(slice(None), slice(None)) + tuple(slice(0, s + min(hi, 0)) for s, (_, hi) in zip(x.shape[2:], pads))]
        pads = tuple((lo, max(hi, 0)) for lo, hi in pads)
    if not any(lo or hi for lo, hi in pads):
        return x
    shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads))
    out = xp.zeros(shape, x.dtype)
    out[_inner(x.shape, pads)] = x
    return out


def _inner(shape, pads):
    """The index of an unpadded input of ``shape`` inside its padded buffer."""
    return (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(shape[2:], pads))


def _windows(xp, x, ksize, stride, dilation, out):
    """The (B, C, *kernel, *out) strided view of the windows of the padded input x."""
    st = x.strides
    n = len(ksize)
    strides = st[:2] + tuple(st[2 + i] * dilation[i] for i in range(n)) + tuple(st[2 + i] * stride[i]
                                                                                 for i in range(n))
    return xp.lib.stride_tricks.as_strided(x, x.shape[:2] + tuple(ksize) + tuple(out), strides)


def im2col(xp, x, ksize, stride, dilation, pads, groups):
    """(B, G, C/G * prod(kernel), prod(out)) columns of x, and the output spatial shape."""
    out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi) in
                zip(x.shape[2:], ksize, stride, dilation, pads))
    B, C = x.shape[:2]
    v = _windows(xp, _pad(xp, x, pads), ksize, stride, dilation, out)
    return v.reshape(B, groups, C // groups * math.prod(ksize), math.prod(out)), out


def col2im(xp, cols, shape, ksize, stride, dilation, pads):
    """The adjoint of im2col: columns (B, *, prod(out)) summed back into an input of ``shape`` (B, C, *spatial)."""
    B, C = shape[:2]
    out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi) in
                zip(shape[2:], ksize, stride, dilation, pads))
    x = xp.zeros((B, C) + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], pads)), cols.dtype)
    if cols.size:
        cols = cols.reshape((B, C) + tuple(ksize) + out)
        lead = (slice(None), slice(None))
        # one strided add per kernel position: the windows overlap, so no single view can take the sum
        for pos in itertools.product(*(range(k) for k in ksize)):
            x[lead + tuple(slice(p * d, p * d + t * (o - 1) + 1, t) for p, d, t, o in
                           zip(pos, dilation, stride, out))] += cols[lead + pos]
    return x[_inner(shape, pads)] if any(lo or hi for lo, hi in pads) else x


class Conv(Function):
    """y = conv(x, w) + b."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b, stride, dilation, pads, groups):
        xp = ctx.xp
        O, k = w.shape[0], w.shape[2:]
        cols, out = im2col(xp, x, k, stride, dilation, pads, groups)
        y = xp.matmul(w.reshape(groups, O // groups, -1), cols).reshape((x.shape[0], O) + out)  # (B, G, O/G, L)
        if b is not None:
            y += b.reshape((O,) + (1,) * len(k))
        ctx.save_for_backward(x, w)
        ctx.geom = dict(stride=stride, dilation=dilation, pads=pads, groups=groups)
        ctx.cols = cols if ctx.needs_input_grad[1] and cols.nbytes <= _KEEP_COLS else None
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = ConvInput.apply(grad, w, shape=x.shape, **ctx.geom) if need[0] else None
        gw = ConvWeight.apply(x, grad, shape=w.shape, cols=ctx.cols, **ctx.geom) if need[1] else None
        gb = grad.sum((0,) + tuple(range(2, grad.ndim))) if need[2] else None
        return gx, gw, gb


class ConvInput(Function):
    """The adjoint of ``Conv`` in its input: ``g`` (B, O, *out) to an input of ``shape`` (the transposed
    convolution)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, w, shape, stride, dilation, pads, groups):
        xp = ctx.xp
        O, k = w.shape[0], w.shape[2:]
        B = g.shape[0]
        wt = w.reshape(groups, O // groups, -1).transpose(0, 2, 1)  # (G, C/G * prod(k), O/G)
        cols = xp.matmul(wt, g.reshape(B, groups, O // groups, -1))
        ctx.save_for_backward(g, w)
        ctx.geom = dict(stride=stride, dilation=dilation, pads=pads, groups=groups)
        return col2im(xp, cols, shape, k, stride, dilation, pads)

    @staticmethod
    def backward(ctx, grad):
        g, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gg = Conv.apply(grad, w, None, **ctx.geom) if need[0] else None
        gw = ConvWeight.apply(grad, g, shape=w.shape, cols=None, **ctx.geom) if need[1] else None
        return gg, gw


class ConvWeight(Function):
    """The adjoint of ``Conv`` in its weight: the weight gradient from the input x and the output gradient g."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, g, shape, stride, dilation, pads, groups, cols=None):
        xp = ctx.xp
        if cols is None:
            cols = im2col(xp, x, shape[2:], stride, dilation, pads, groups)[0]
        B, O = g.shape[:2]
        gw = xp.matmul(g.reshape(B, groups, O // groups, -1), cols.transpose(0, 1, 3, 2)).sum(0)
        ctx.save_for_backward(x, g)
        ctx.geom = dict(stride=stride, dilation=dilation, pads=pads, groups=groups)
        return gw.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        x, g = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = ConvInput.apply(g, grad, shape=x.shape, **ctx.geom) if need[0] else None
        gg = Conv.apply(x, grad, None, **ctx.geom) if need[1] else None
        return gx, gg


class Im2col(Function):
    """``F.unfold``: (B, C, *spatial) to (B, C * prod(kernel), L)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, ksize, stride, dilation, pads):
        ctx.shape, ctx.geom = x.shape, dict(ksize=ksize, stride=stride, dilation=dilation, pads=pads)
        cols = im2col(ctx.xp, x, ksize, stride, dilation, pads, 1)[0]
        return cols.reshape(x.shape[0], -1, cols.shape[-1])

    @staticmethod
    def backward(ctx, grad):
        return Col2im.apply(grad, shape=ctx.shape, **ctx.geom)


class Col2im(Function):
    """``F.fold``: (B, C * prod(kernel), L) summed into (B, C, *spatial) of ``shape``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, cols, shape, ksize, stride, dilation, pads):
        ctx.geom = dict(ksize=ksize, stride=stride, dilation=dilation, pads=pads)
        return col2im(ctx.xp, cols, shape, ksize, stride, dilation, pads)

    @staticmethod
    def backward(ctx, grad):
        return Im2col.apply(grad, **ctx.geom)
