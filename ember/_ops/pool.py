"""Pooling primitives over the windows of (B, C, *spatial) inputs: max with its window argmax, and window sums.

Each op loops over the kernel positions with one strided array op per position (no copy of the windows); the
geometry is a ``conv.Plan`` whose pads may extend past the input (``ceil_mode``). The max-pool routing of 2-D
windows runs as one compiled loop where numba is installed (``compiled.scatter_windows_2d``, 2.5x faster). Ops come in adjoint pairs, so
gradients of every order are pooling ops: ``WindowGather``/``WindowScatter`` (the max-pool routing, by the argmax
``arg`` of each window) and ``WindowSum``/``WindowSpread`` (sums scaled per window, for average and Lp pooling).
"""
import itertools
import math

import numpy as np

from .._creation import zeros_like
from .._kernels import compiled
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled


def _positions(plan):
    return itertools.product(*(range(k) for k in plan.ksize))


def _padded(xp, x, plan, fill):
    """x in a buffer of the padded size filled with ``fill`` outside it."""
    pads = plan.pads
    if not any(lo or hi for lo, hi in pads):
        return x
    buf = xp.full(x.shape[:2] + plan.padded, fill, x.dtype)
    buf[_inner(x.shape, pads)] = x
    return buf


def _inner(shape, pads):
    return (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(shape[2:], pads))


def _lowest(xp, dtype):
    return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min


def max_windows(xp, x, plan):
    """The max of each window and its position in the window (row-major over the kernel; ties pick the first, a
    NaN wins, as in torch).

    The max is separable: one dim at a time from the last, so that each strided op runs over whole rows.
    ``idx`` follows the position of the running max within the dims reduced so far."""
    shape, lowest = x.shape, _lowest(xp, x.dtype)
    x = _padded(xp, x, plan, lowest)
    itype = xp.uint8 if math.prod(plan.ksize) <= 256 else xp.int32
    cur, idx, done = x, None, 1
    for d in reversed(range(len(plan.ksize))):
        k, s, dil, o = plan.ksize[d], plan.stride[d], plan.dilation[d], plan.out[d]
        lead = (slice(None),) * (2 + d)
        best = new = None
        for j in range(k):
            sl = lead + (slice(j * dil, j * dil + s * (o - 1) + 1, s),)
            v = cur[sl]
            if best is None:
                best, new = v.copy(), None if idx is None else idx[sl].copy()
                continue
            m = v > best
            xp.maximum(best, v, out=best)
            cand = itype(j * done) if idx is None else idx[sl] + itype(j * done)
            # masked selection by arithmetic (wrapping in the unsigned type): far faster than where/copyto
            new = m * cand if new is None else xp.add(new, m * (cand - new), out=new)
        cur, idx, done = best, new, done * k
    if idx is None:  # every kernel size is 1
        idx = xp.zeros(cur.shape, itype)
    lead = (slice(None), slice(None))
    if x.shape != shape and cur.size and (cur == lowest).any():  # rare: the max ties with the padding, whose
        # positions come first: point at the window's first element inside the input, as torch
        inside, low = _padded(xp, xp.ones(shape, bool), plan, False), cur == lowest
        for p, pos in reversed(list(enumerate(_positions(plan)))):
            xp.copyto(idx, itype(p), where=low & inside[lead + plan.slices(pos)])
    if x.dtype.kind == "f" and cur.size and xp.isnan(cur).any():  # rare: point at a NaN, as torch
        for p, pos in enumerate(_positions(plan)):
            xp.copyto(idx, itype(p), where=xp.isnan(x[lead + plan.slices(pos)]))
    return cur, idx


_INTS = {2: "int16", 4: "int32", 8: "int64"}


def masked(g, mask, invert=False):
    """``where(mask, g, 0)`` (``where(mask, 0, g)`` with ``invert``) by a bitwise and with the mask's bits: exact,
    inf and NaN of ``g`` zeroed too, and ~10x faster than a where on an unpredictable mask."""
    ints = _INTS.get(g.dtype.itemsize) if g.dtype.kind == "f" else None
    if ints is None:
        return g * (~mask if invert else mask)
    m = mask.view("int8")
    bits = m - m.dtype.type(1) if invert else -m  # all bits set where g is kept
    return (g.view(ints) & bits).view(g.dtype)


def _disjoint(plan):
    """Whether no input element lies in two windows (then gradients are written, not added)."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(plan.ksize, plan.stride, plan.dilation))


def flat_indices(xp, arg, plan):
    """Each window's argmax as a flat index into the (unpadded) spatial dims of the input, as torch returns."""
    shape = plan.shape[2:]
    n = len(shape)
    idx = xp.zeros(arg.shape, xp.int64)
    arg = arg.astype(xp.int64)
    for d in range(n):
        o = xp.arange(plan.out[d], dtype=xp.int64).reshape((-1,) + (1,) * (n - 1 - d))
        k = (arg // math.prod(plan.ksize[d + 1:])) % plan.ksize[d]
        idx = idx * shape[d] + o * plan.stride[d] - plan.pads[d][0] + k * plan.dilation[d]
    return idx


class MaxPool(Function):
    """The max of each window; with ``indices`` also its flat input index (not differentiable)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, plan, indices=False):
        xp = ctx.xp
        y, arg = max_windows(xp, x, plan)
        ctx.arg, ctx.plan = arg, plan
        ctx.save_for_backward(x)  # joins the graph of a create_graph backward, as torch's
        if not indices:
            return y
        idx = flat_indices(xp, arg, plan)
        ctx.mark_non_differentiable(idx)
        return y, idx

    @staticmethod
    def backward(ctx, grad, *_):
        x = ctx.saved_tensors if grad_enabled() else ()  # create_graph
        return WindowScatter.apply(grad, *x, arg=ctx.arg, plan=ctx.plan)


class WindowScatter(Function):
    """Adds each window's value into the input element its ``arg`` points at (the adjoint of WindowGather). The
    pooled input ``x``, when given, gets a zero gradient."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, x=None, *, arg, plan):
        xp = ctx.xp
        ctx.arg, ctx.plan, ctx.joined = arg, plan, x is not None
        shape = plan.shape
        fused = None
        if xp is np and len(shape) == 4 and g.dtype in (np.float32, np.float64):
            fused = compiled.kernel("scatter_windows_2d", g.size)
        if fused is not None:
            return _scatter_windows_2d(fused, g, arg, plan)
        gx = xp.zeros(shape[:2] + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], plan.pads)), g.dtype)
        lead = (slice(None), slice(None))
        disjoint = _disjoint(plan)
        for p, pos in enumerate(_positions(plan)):
            view = gx[lead + plan.slices(pos)]
            if disjoint:
                view[...] = masked(g, arg == p)
            else:
                view += masked(g, arg == p)
        return gx[_inner(shape, plan.pads)]

    @staticmethod
    def backward(ctx, grad):
        g = WindowGather.apply(grad, arg=ctx.arg, plan=ctx.plan)
        return (g, zeros_like(grad)) if ctx.joined else g


def _scatter_windows_2d(fused, g, arg, plan):
    """``WindowScatter`` of 2-D windows by the compiled loop: one pass over the windows."""
    (B, C, H, W), (kh, kw) = plan.shape, plan.ksize
    p = np.arange(kh * kw)
    dy, dx = p // kw * plan.dilation[0], p % kw * plan.dilation[1]
    gx = np.zeros((B * C, H, W), g.dtype)
    fused(np.ascontiguousarray(g).reshape(B * C, *plan.out), np.ascontiguousarray(arg).reshape(B * C, *plan.out), dy,
          dx, *plan.stride, plan.pads[0][0], plan.pads[1][0], _disjoint(plan), gx)
    return gx.reshape(plan.shape)


class WindowGather(Function):
    """Each window's element at its ``arg``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, arg, plan):
        xp = ctx.xp
        ctx.arg, ctx.plan = arg, plan
        x = _padded(xp, x, plan, 0)
        lead = (slice(None), slice(None))
        out = xp.zeros(arg.shape, x.dtype)
        for p, pos in enumerate(_positions(plan)):
            out = xp.where(arg == p, x[lead + plan.slices(pos)], out)
        return out

    @staticmethod
    def backward(ctx, grad):
        return WindowScatter.apply(grad, arg=ctx.arg, plan=ctx.plan)


class WindowSum(Function):
    """The sum of each window (zero padding), divided by ``divisor`` (a number or an array broadcasting to the
    output; integer inputs divide truncating, as torch)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, plan, divisor=None):
        xp = ctx.xp
        ctx.plan, ctx.divisor = plan, divisor
        x = _padded(xp, x, plan, 0)
        lead = (slice(None), slice(None))
        out = None
        for pos in _positions(plan):
            v = x[lead + plan.slices(pos)]
            out = v.copy() if out is None else xp.add(out, v, out=out)
        if divisor is None:
            return out
        if x.dtype.kind != "f":
            return xp.trunc(out / divisor).astype(x.dtype)
        return xp.divide(out, divisor, out=out)

    @staticmethod
    def backward(ctx, grad):
        return WindowSpread.apply(grad, plan=ctx.plan, divisor=ctx.divisor)


class WindowSpread(Function):
    """Adds each window's value, divided by ``divisor``, to every input element of the window (the adjoint of
    WindowSum)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, plan, divisor=None):
        xp = ctx.xp
        ctx.plan, ctx.divisor = plan, divisor
        if divisor is not None:
            g = g / xp.asarray(divisor, g.dtype)
        shape = plan.shape
        gx = xp.zeros(shape[:2] + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], plan.pads)), g.dtype)
        lead = (slice(None), slice(None))
        for pos in _positions(plan):
            view = gx[lead + plan.slices(pos)]
            view += g
        return gx[_inner(shape, plan.pads)]

    @staticmethod
    def backward(ctx, grad):
        return WindowSum.apply(grad, plan=ctx.plan, divisor=ctx.divisor)
