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


class Plan:
    """Where the windows of one convolution geometry lie in its input of ``shape`` (B, C, *spatial).

    With stride 1 (the common case) the padded input is flattened per channel and each kernel offset becomes one
    contiguous run: columns then cover whole padded rows (``out[0] * prod(padded[1:])`` positions, the ones past
    ``out`` in the inner dimensions being garbage), so that gathering and scatter-adding them are long contiguous
    copies rather than short strided ones. Otherwise columns are the ``prod(out)`` windows themselves.
    """

    __slots__ = ("shape", "ksize", "stride", "dilation", "pads", "padded", "out", "flat", "ncols", "offsets",
                 "length")

    def __init__(self, shape, ksize, stride, dilation, pads, flat=True):
        self.shape, self.ksize, self.stride, self.dilation, self.pads = tuple(shape), tuple(ksize), stride, \
            dilation, pads
        self.padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        self.out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi) in
                         zip(shape[2:], ksize, stride, dilation, pads))
        self.flat = flat and all(t == 1 for t in stride) and all(hi >= 0 for _, hi in pads) and min(self.out, default=1) > 0
        if self.flat:
            inner = math.prod(self.padded[1:])
            row = [math.prod(self.padded[i + 1:]) for i in range(len(ksize))]  # flat stride of each dim
            self.offsets = [sum(p * d * r for p, d, r in zip(pos, dilation, row)) for pos in _positions(ksize)]
            self.ncols = self.out[0] * inner
            self.length = max(self.offsets[-1] + self.ncols, math.prod(self.padded))
        else:
            self.ncols = math.prod(self.out)

    def widen(self, xp, g):
        """(B, O, *out) to (B, O, ncols): zeros in the garbage columns."""
        B, O = g.shape[:2]
        if not self.flat or g.shape[3:] == self.padded[1:]:
            return g.reshape(B, O, -1)
        full = xp.zeros((B, O, self.out[0]) + self.padded[1:], g.dtype)
        full[(slice(None),) * 3 + tuple(slice(0, o) for o in self.out[1:])] = g
        return full.reshape(B, O, -1)

    def narrow(self, xp, y):
        """(B, O, ncols) to (B, O, *out), dropping the garbage columns."""
        B, O = y.shape[:2]
        if not self.flat:
            return y.reshape((B, O) + self.out)
        y = y.reshape((B, O, self.out[0]) + self.padded[1:])
        if self.padded[1:] == self.out[1:]:
            return y
        return xp.ascontiguousarray(y[(slice(None),) * 3 + tuple(slice(0, o) for o in self.out[1:])])


def _positions(ksize):
    return itertools.product(*(range(k) for k in ksize))


def _inner(shape, pads):
    """The index of an unpadded input of ``shape`` inside its padded buffer."""
    return (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(shape[2:], pads))


def _pad(xp, x, pads):
    """x zero-padded by ``pads`` ((low, high) per spatial dim; a negative high pad crops)."""
    if any(hi < 0 for _, hi in pads):
        x = x[(slice(None), slice(None)) + tuple(slice(0, s + min(hi, 0)) for s, (_, hi) in zip(x.shape[2:], pads))]
        pads = tuple((lo, max(hi, 0)) for lo, hi in pads)
    if not any(lo or hi for lo, hi in pads):
        return x
    out = xp.zeros(x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)), x.dtype)
    out[_inner(x.shape, pads)] = x
    return out


def im2col(xp, x, plan, groups):
    """(B, G, C/G * prod(kernel), ncols) columns of x."""
    B, C = x.shape[:2]
    k, n = plan.ksize, len(plan.ksize)
    if plan.flat:
        size = math.prod(plan.padded)
        if plan.length == size and x.flags.c_contiguous and not any(lo or hi for lo, hi in plan.pads):
            buf = x.reshape(B, C, size)
        else:  # the padded input, flat per channel, with zeros after it for the last rows' garbage columns
            buf = xp.zeros((B, C, plan.length), x.dtype)
            buf[:, :, :size].reshape((B, C) + plan.padded)[_inner(x.shape, plan.pads)] = x
        st, item = buf.strides, buf.itemsize
        row = [math.prod(plan.padded[i + 1:]) for i in range(n)]
        v = xp.lib.stride_tricks.as_strided(buf, (B, C) + k + (plan.ncols,), st[:2] + tuple(
            d * r * item for d, r in zip(plan.dilation, row)) + (item,))
    else:
        x = _pad(xp, x, plan.pads)
        st = x.strides
        v = xp.lib.stride_tricks.as_strided(x, x.shape[:2] + k + plan.out, st[:2] + tuple(
            st[2 + i] * plan.dilation[i] for i in range(n)) + tuple(st[2 + i] * plan.stride[i] for i in range(n)))
    return v.reshape(B, groups, C // groups * math.prod(k), plan.ncols)


def col2im(xp, cols, plan):
    """The adjoint of im2col: columns (B, *, ncols) summed back into an input of ``plan.shape``."""
    shape, pads = plan.shape, plan.pads
    B, C = shape[:2]
    cols = cols.reshape((B, C, len(plan.offsets) if plan.flat else math.prod(plan.ksize), plan.ncols))
    lead = (slice(None), slice(None))
    # one add per kernel position: the windows overlap, so no single view can take the sum
    if plan.flat:
        buf = xp.zeros((B, C, plan.length), cols.dtype)
        for i, off in enumerate(plan.offsets):
            buf[:, :, off:off + plan.ncols] += cols[:, :, i]
        x = buf[:, :, :math.prod(plan.padded)].reshape((B, C) + plan.padded)
    else:
        x = xp.zeros((B, C) + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], pads)), cols.dtype)
        if cols.size:
            cols = cols.reshape((B, C) + plan.ksize + plan.out)
            for pos in _positions(plan.ksize):
                x[lead + tuple(slice(p * d, p * d + t * (o - 1) + 1, t) for p, d, t, o in
                               zip(pos, plan.dilation, plan.stride, plan.out))] += cols[lead + pos]
    return x[_inner(shape, pads)] if any(lo or hi for lo, hi in pads) else x


class Conv(Function):
    """y = conv(x, w) + b, with ``plan`` the geometry of x."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b, plan, groups):
        xp = ctx.xp
        B, O = x.shape[0], w.shape[0]
        cols = im2col(xp, x, plan, groups)
        y = plan.narrow(xp, xp.matmul(w.reshape(groups, O // groups, -1), cols).reshape(B, O, -1))
        if b is not None:
            y += b.reshape((O,) + (1,) * len(plan.out))
        ctx.save_for_backward(x, w)
        ctx.plan, ctx.groups = plan, groups
        ctx.cols = cols if ctx.needs_input_grad[1] and cols.nbytes <= _KEEP_COLS else None
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need, plan, groups = ctx.needs_input_grad, ctx.plan, ctx.groups
        gx = ConvInput.apply(grad, w, plan=plan, groups=groups) if need[0] else None
        gw = ConvWeight.apply(x, grad, plan=plan, groups=groups, cols=ctx.cols) if need[1] else None
        gb = grad.sum((0,) + tuple(range(2, grad.ndim))) if need[2] else None
        return gx, gw, gb


class ConvInput(Function):
    """The adjoint of ``Conv`` in its input (the transposed convolution): g (B, O, *out) to (B, C, *spatial)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, w, plan, groups):
        xp = ctx.xp
        B, O = g.shape[:2]
        wt = w.reshape(groups, O // groups, -1).transpose(0, 2, 1)  # (G, C/G * prod(k), O/G)
        cols = xp.matmul(wt, plan.widen(xp, g).reshape(B, groups, O // groups, -1))
        ctx.save_for_backward(g, w)
        ctx.plan, ctx.groups = plan, groups
        return col2im(xp, cols, plan)

    @staticmethod
    def backward(ctx, grad):
        g, w = ctx.saved_tensors
        need, plan, groups = ctx.needs_input_grad, ctx.plan, ctx.groups
        gg = Conv.apply(grad, w, None, plan=plan, groups=groups) if need[0] else None
        gw = ConvWeight.apply(grad, g, plan=plan, groups=groups) if need[1] else None
        return gg, gw


class ConvWeight(Function):
    """The adjoint of ``Conv`` in its weight: the weight gradient from the input x and the output gradient g."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, g, plan, groups, cols=None):
        xp = ctx.xp
        if cols is None:
            cols = im2col(xp, x, plan, groups)
        B, O = g.shape[:2]
        gf = plan.widen(xp, g).reshape(B, groups, O // groups, -1)
        gw = xp.matmul(gf, cols.transpose(0, 1, 3, 2)).sum(0)  # (G, O/G, C/G * prod(k))
        ctx.save_for_backward(x, g)
        ctx.plan, ctx.groups = plan, groups
        return gw.reshape((O, x.shape[1] // groups) + plan.ksize)

    @staticmethod
    def backward(ctx, grad):
        x, g = ctx.saved_tensors
        need, plan, groups = ctx.needs_input_grad, ctx.plan, ctx.groups
        gx = ConvInput.apply(g, grad, plan=plan, groups=groups) if need[0] else None
        gg = Conv.apply(x, grad, None, plan=plan, groups=groups) if need[1] else None
        return gx, gg


class Im2col(Function):
    """``F.unfold``: (B, C, *spatial) to (B, C * prod(kernel), L); ``plan`` must not be flat."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, plan):
        ctx.plan = plan
        return im2col(ctx.xp, x, plan, 1).reshape(x.shape[0], -1, plan.ncols)

    @staticmethod
    def backward(ctx, grad):
        return Col2im.apply(grad, plan=ctx.plan)


class Col2im(Function):
    """``F.fold``: (B, C * prod(kernel), L) summed into (B, C, *spatial) of ``plan.shape``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, cols, plan):
        ctx.plan = plan
        return col2im(ctx.xp, cols, plan)

    @staticmethod
    def backward(ctx, grad):
        return Im2col.apply(grad, plan=ctx.plan)
