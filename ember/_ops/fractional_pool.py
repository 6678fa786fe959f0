"""Fractional max pooling (Graham, 2014): max pooling over windows of a fixed size whose starts step
pseudo-randomly, drawn per (batch, channel) plane from given samples in [0, 1)."""
import math

from .. import _creation, _dtype
from .._tensor import Tensor
from ..autograd.function import Function


def _starts(xp, u, size, out, k):
    """Window starts along one dim for samples ``u`` (B, C): (B, C, out). torch's sequence ``int((i + u) * alpha) -
    int(u * alpha)`` with ``alpha = (size - k) / (out - 1)``, in the samples' dtype (float32 for halves); the last
    window ends at the input's end."""
    ct = xp.float64 if u.dtype == xp.float64 else xp.float32
    starts = xp.full(u.shape + (out,), size - k, xp.int64)
    if out > 1:
        alpha = ct(u.dtype.type(ct(size - k) / ct(out - 1)))
        u = u.astype(ct)[..., None]
        i = xp.arange(out - 1, dtype=ct)
        starts[..., :-1] = xp.trunc((i + u) * alpha).astype(xp.int64) - xp.trunc(u * alpha).astype(xp.int64)
    return starts


def _windows(xp, samples, sizes, out, ksize, order):
    """The flat spatial index of every window element: (B, C, *out, prod(ksize)), built as (B, C, *out, *ksize).
    Dim ``d`` reads its sample from ``samples[..., order[d]]``."""
    n = len(sizes)
    idx = 0
    for d in range(n):
        start = _starts(xp, samples[..., order[d]], sizes[d], out[d], ksize[d])  # (B, C, out_d)
        start = start.reshape(start.shape[:2] + (1,) * d + (out[d],) + (1,) * (2 * n - 1 - d))
        offset = xp.arange(ksize[d], dtype=xp.int64).reshape((1,) * d + (-1,) + (1,) * (n - 1 - d))
        idx = idx * sizes[d] + start + offset
    return idx.reshape(idx.shape[:2 + n] + (math.prod(ksize),))


class FractionalMaxPool(Function):
    """The max of each window and its flat input index (not differentiable); ``samples`` is (>= B, C, n)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, ksize, out, samples, order):
        xp = ctx.xp
        B, C, sizes = x.shape[0], x.shape[1], x.shape[2:]
        win = _windows(xp, samples[:B], sizes, out, ksize, order)
        flat = x.reshape(B, C, math.prod(sizes))  # explicit sizes: B may be 0
        values = xp.take_along_axis(flat, win.reshape(B, C, math.prod(win.shape[2:])), axis=2).reshape(win.shape)
        arg = xp.argmax(values, axis=-1)[..., None]  # the first max, as torch
        if x.dtype.kind == "f" and values.size and xp.isnan(values).any():  # torch keeps the last NaN
            nan = xp.isnan(values)[..., ::-1]
            last = values.shape[-1] - 1 - xp.argmax(nan, axis=-1)[..., None]
            arg = xp.where(nan.any(-1, keepdims=True), last, arg)
        y = xp.take_along_axis(values, arg, axis=-1)[..., 0]
        idx = xp.take_along_axis(win, arg, axis=-1)[..., 0]
        ctx.idx, ctx.input_shape = idx, x.shape
        ctx.mark_non_differentiable(idx)
        return y, idx

    @staticmethod
    def backward(ctx, grad, _):
        shape = ctx.input_shape
        B, C = shape[:2]
        points = math.prod(ctx.idx.shape[2:])
        idx = Tensor._make(ctx.idx.reshape(B, C, points), _dtype.int64, grad.device)
        gx = _creation.zeros((B, C, math.prod(shape[2:])), dtype=grad.dtype, device=grad.device)
        return gx.scatter_add(2, idx, grad.reshape(B, C, points)).reshape(shape)
