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
    """The geometry of one convolution over an input of ``shape`` (B, C, *spatial): kernel size, stride, dilation,
    (low, high) pads per spatial dim (a negative high pad crops), and the padded and output sizes."""

    __slots__ = ("shape", "ksize", "stride", "dilation", "pads", "padded", "out")

    def __init__(self, shape, ksize, stride, dilation, pads):
        self.shape, self.ksize, self.stride, self.dilation, self.pads = tuple(shape), tuple(ksize), tuple(stride), \
            tuple(dilation), tuple(pads)
        self.padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape[2:], pads))
        self.out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi) in
                         zip(shape[2:], ksize, stride, dilation, pads))

    def windows(self, xp, x):
        """The strided view (B, C, *kernel, *out) of the windows of the padded input x (B, C, *padded)."""
        st = x.strides[2:]
        return xp.lib.stride_tricks.as_strided(
            x, x.shape[:2] + self.ksize + self.out, x.strides[:2] + tuple(s * d for s, d in zip(st, self.dilation)) +
            tuple(s * t for s, t in zip(st, self.stride)))

    def slices(self, pos):
        """The index (over the padded spatial dims) of the inputs that kernel position ``pos`` reads."""
        return tuple(slice(p * d, p * d + t * (o - 1) + 1, t) for p, d, t, o in
                     zip(pos, self.dilation, self.stride, self.out))


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
    """(B, G, C/G * prod(kernel), prod(out)) columns of x (one GEMM per image then works in cache)."""
    B, C = x.shape[:2]
    v = plan.windows(xp, _pad(xp, x, plan.pads))
    return v.reshape(B, groups, C // groups * math.prod(plan.ksize), math.prod(plan.out))


def col2im(xp, cols, plan):
    """The adjoint of im2col, from columns laid out (C, *kernel, *out, B) with the batch last: the strided adds
    per kernel position then run over contiguous (out[-1] * B) rows rather than short image rows. Returns
    (B, C, *spatial)."""
    shape, pads = plan.shape, plan.pads
    B, C = shape[:2]
    n = len(plan.ksize)
    buf = xp.zeros((C,) + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], pads)) + (B,), cols.dtype)
    cols = cols.reshape((C,) + plan.ksize + plan.out + (B,))
    if cols.size:
        # one add per kernel position: the windows overlap, so no single view can take the sum
        for pos in itertools.product(*(range(k) for k in plan.ksize)):
            buf[(slice(None),) + plan.slices(pos)] += cols[(slice(None),) + pos]
    buf = buf[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(shape[2:], pads))]
    return xp.ascontiguousarray(xp.moveaxis(buf, n + 1, 0))


class Conv(Function):
    """y = conv(x, w) + b, with ``plan`` the geometry of x."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b, plan, groups):
        xp = ctx.xp
        B, O = x.shape[0], w.shape[0]
        cols = im2col(xp, x, plan, groups)
        y = xp.matmul(w.reshape(groups, O // groups, cols.shape[2]), cols).reshape((B, O) + plan.out)
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
        cols, ctx.cols = ctx.cols, None  # freed now; a second backward (retain_graph) recomputes them
        gw = ConvWeight.apply(x, grad, plan=plan, groups=groups, cols=cols) if need[1] else None
        gb = grad.sum((0,) + tuple(range(2, grad.ndim))) if need[2] else None
        return gx, gw, gb


class ConvInput(Function):
    """The adjoint of ``Conv`` in its input (the transposed convolution): g (B, O, *out) to (B, C, *spatial)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, w, plan, groups):
        xp = ctx.xp
        O = g.shape[1]
        K = w.shape[1] * math.prod(plan.ksize)
        wt = w.reshape(groups, O // groups, K).transpose(0, 2, 1)  # (G, C/G * prod(k), O/G)
        gt = xp.moveaxis(g, 0, -1).reshape(groups, O // groups, g.size // O)  # (G, O/G, prod(out) * B): one GEMM
        cols = xp.matmul(wt, gt)
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
        gt = g.reshape(B, groups, O // groups, math.prod(plan.out)).transpose(0, 1, 3, 2)
        gw = xp.matmul(cols, gt).sum(0).transpose(0, 2, 1)  # (G, O/G, C/G * prod(k))
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
    """``F.unfold``: (B, C, *spatial) to (B, C * prod(kernel), L)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, plan):
        ctx.plan = plan
        return im2col(ctx.xp, x, plan, 1).reshape(x.shape[0], x.shape[1] * math.prod(plan.ksize), math.prod(plan.out))

    @staticmethod
    def backward(ctx, grad):
        return Col2im.apply(grad, plan=ctx.plan)


class Col2im(Function):
    """``F.fold``: (B, C * prod(kernel), L) summed into (B, C, *spatial) of ``plan.shape``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, cols, plan):
        ctx.plan = plan
        return col2im(ctx.xp, ctx.xp.moveaxis(cols, 0, -1), plan)

    @staticmethod
    def backward(ctx, grad):
        return Im2col.apply(grad, plan=ctx.plan)
