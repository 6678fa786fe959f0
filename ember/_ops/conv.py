"""N-d convolution as im2col + one matmul per group, with its two adjoints as ops of their own.

``Conv`` (y = w * x), ``ConvInput`` (its adjoint in x: the transposed convolution) and ``ConvWeight`` (its adjoint in
w) differentiate into one another, so every order of gradient is a convolution. ``Im2col``/``Col2im`` are
``F.unfold``/``F.fold``. Geometry, per spatial dimension: ``stride``, ``dilation`` and ``pads`` as (low, high) pairs;
the input is (B, C, *spatial), the weight (O, C / groups, *kernel).

On NumPy the work is cut in chunks (of images, or of input channels for ``ConvInput``) whose columns fit in cache,
spread over the intra-op threads, each running its products on one BLAS thread.
"""
import itertools
import math

import numpy as np

from .._kernels import compiled, get_num_threads
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .._kernels.blas import spread

# Columns of the weight gradient are kept from forward up to this size (bytes); larger ones are recomputed.
_KEEP_COLS = 1 << 27
_CHUNK = 1 << 18  # column elements per chunk of images
_PIECE = 1 << 22  # column elements per piece of channels at most
# Column elements from which the work is spread over the intra-op threads: a LeNet-sized layer (batch 64, about
# 1M column elements, a millisecond of work) already gains (bench/train.py lenet: 8.3 ms a step against 9-10 ms
# with 2M/4M here).
_SPREAD = _SPREAD_ADDS = 1 << 17


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
    cols = xp.empty((B, groups, C // groups * math.prod(plan.ksize), math.prod(plan.out)), x.dtype)
    _fill_columns(xp, _pad(xp, x, plan.pads), plan, cols)
    return cols


def _fill_columns(xp, xpad, plan, cols):
    """Writes the windows of the padded input ``xpad`` (B, C, *padded) into ``cols`` (B, G, C/G * prod(kernel),
    prod(out)): one strided copy."""
    v = plan.windows(xp, xpad)  # (B, C, *kernel, *out)
    cols.reshape(v.shape)[...] = v


def _over_images(xp, fn, batch, per_image):
    """``fn(images)`` over slices of the batch whose columns hold about ``_CHUNK`` elements (in cache), on the
    intra-op threads when there is enough work (at least one slice per thread then); at once off NumPy."""
    if xp is not np or batch <= 1:
        return [fn(slice(None))]
    threads = batch * per_image >= _SPREAD
    step = max(1, _CHUNK // max(per_image, 1))
    if threads:
        step = min(step, -(-batch // get_num_threads()))
    return spread(fn, [slice(i, i + step) for i in range(0, batch, step)], threads)


def _padded_buffer(xp, plan, dtype):
    """Zeros (C, *padded spatial, B): what col2im adds columns into."""
    shape, pads = plan.shape, plan.pads
    return xp.zeros((shape[1],) + tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(shape[2:], pads)) + shape[:1],
                    dtype)


def _add_columns(xp, buf, cols, plan):
    """Adds columns laid out (c, *kernel, *out, B) into ``buf`` (c, *padded, B) at each kernel position: with the
    batch last, the strided adds run over contiguous (out[-1] * B) rows rather than short image rows. A numba loop
    for 2-D windows (``compiled.add_windows_2d``), 3x faster."""
    fused = None
    if xp is np and len(plan.ksize) == 2 and cols.dtype in (np.float32, np.float64) and buf.dtype == cols.dtype:
        fused = compiled.kernel("add_windows_2d", cols.size)
    if fused is not None and buf.flags.c_contiguous:
        c = np.ascontiguousarray(cols).reshape(buf.shape[0] * math.prod(plan.ksize), -1)
        fused(c, *plan.ksize, *plan.stride, *plan.dilation, plan.out[0], buf)
        return
    cols = cols.reshape(buf.shape[:1] + plan.ksize + plan.out + buf.shape[-1:])
    if cols.size:
        # one add per kernel position: the windows overlap, so no single view can take the sum
        for pos in itertools.product(*(range(k) for k in plan.ksize)):
            buf[(slice(None),) + plan.slices(pos)] += cols[(slice(None),) + pos]


def _unpad(xp, buf, plan):
    """(B, C, *spatial) from the padded buffer of col2im."""
    shape, pads = plan.shape, plan.pads
    buf = buf[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(shape[2:], pads))]
    return xp.ascontiguousarray(xp.moveaxis(buf, buf.ndim - 1, 0))


def col2im(xp, cols, plan):
    """The adjoint of im2col, from columns laid out (C, *kernel, *out, B) with the batch last. Returns
    (B, C, *spatial)."""
    buf = _padded_buffer(xp, plan, cols.dtype)
    _add_columns(xp, buf, cols, plan)
    return _unpad(xp, buf, plan)


class Conv(Function):
    """y = conv(x, w) + b, with ``plan`` the geometry of x."""
    half_in_float32 = True
    holomorphic = True

    @staticmethod
    def forward(ctx, x, w, b, plan, groups):
        xp = ctx.xp
        (B, C), O = x.shape[:2], w.shape[0]
        K, L = C // groups * math.prod(plan.ksize), math.prod(plan.out)
        wg = w.reshape(groups, O // groups, K)
        y = xp.empty((B, O) + plan.out, xp.result_type(x, w))
        keep = ctx.needs_input_grad[1] and B * C * math.prod(plan.ksize) * L * x.itemsize <= _KEEP_COLS
        cols = xp.empty((B, groups, K, L), x.dtype) if keep else None
        xpad = _pad(xp, x, plan.pads)
        bias = None if b is None else b.reshape((O,) + (1,) * len(plan.out))

        def run(sl):
            xs = xpad[sl]
            c = xp.empty((xs.shape[0], groups, K, L), x.dtype) if cols is None else cols[sl]
            _fill_columns(xp, xs, plan, c)
            yc = y[sl]
            xp.matmul(wg, c, out=yc.reshape(yc.shape[0], groups, O // groups, L))
            if bias is not None:
                yc += bias
        _over_images(xp, run, B, groups * K * L)
        ctx.save_for_backward(x, w)
        ctx.plan, ctx.groups, ctx.cols = plan, groups, cols
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need, plan, groups = ctx.needs_input_grad, ctx.plan, ctx.groups
        cols, ctx.cols = ctx.cols, None  # freed now; a second backward (retain_graph) recomputes them
        tasks = []
        if need[0]:
            tasks.append(lambda: ConvInput.apply(grad, w, plan=plan, groups=groups))
        if need[1]:
            tasks.append(lambda: ConvWeight.apply(x, grad, plan=plan, groups=groups, cols=cols))
        # with no graph to record, the two adjoints run side by side on the intra-op threads (each a millisecond
        # or so of work: they hand over better than the pieces of one)
        side_by_side = not grad_enabled() and ctx.xp is np and grad._data.size * w._data[0].size >= _SPREAD
        done = spread(lambda task: task(), tasks, side_by_side)
        gx = done.pop(0) if need[0] else None
        gw = done.pop(0) if need[1] else None
        gb = None
        if need[2]:
            axes = (0,) + tuple(range(2, grad.ndim))
            # on the array when no graph is recorded: a sum of a few hundred thousand elements is not worth waking
            # the intra-op threads for
            gb = grad.sum(axes) if grad_enabled() else Tensor._make(_bias_grad(ctx.xp, grad._data), grad.dtype,
                                                                     grad.device)
        return gx, gw, gb


def _bias_grad(xp, g):
    """The sum of g (B, O, *out) over all but its channels: as products with a vector of ones, the rows' sums run at
    the BLAS's speed (NumPy's sum over axes (0, 2, 3) is 3x slower)."""
    if g.dtype.itemsize == 2:  # float16/bfloat16: accumulated in float32, rounded once
        return g.sum((0,) + tuple(range(2, g.ndim)), dtype=xp.float32).astype(g.dtype)
    if g.dtype.kind != "f":
        return g.sum((0,) + tuple(range(2, g.ndim)))
    rows = g.reshape(g.shape[:2] + (math.prod(g.shape[2:]),))
    return (rows @ xp.ones(rows.shape[2], g.dtype)).sum(0)


class ConvInput(Function):
    """The adjoint of ``Conv`` in its input (the transposed convolution): g (B, O, *out) to (B, C, *spatial)."""
    half_in_float32 = True
    holomorphic = True

    @staticmethod
    def forward(ctx, g, w, plan, groups):
        xp = ctx.xp
        O, Cg, P = g.shape[1], w.shape[1], math.prod(plan.ksize)
        wt = w.reshape(groups, O // groups, Cg * P).transpose(0, 2, 1)  # (G, C/G * prod(k), O/G)
        gt = xp.moveaxis(g, 0, -1).reshape(groups, O // groups, g.size // O)  # (G, O/G, prod(out) * B)
        buf = _padded_buffer(xp, plan, xp.result_type(g, w))
        # pieces of input channels, one per thread if there is enough work (and their columns are not too large):
        # each a GEMM of its columns, added into its own channels of buf
        threads = xp is np and Cg * groups * P * gt.shape[2] >= _SPREAD_ADDS
        per = max(1, _PIECE // max(P * gt.shape[2], 1))
        per = min(per, -(-Cg // get_num_threads())) if threads else min(per, Cg)
        pieces = [(k, c, min(c + per, Cg)) for k in range(groups) for c in range(0, Cg, per)]

        def run(piece):
            k, c0, c1 = piece
            _add_columns(xp, buf[k * Cg + c0:k * Cg + c1], xp.matmul(wt[k, c0 * P:c1 * P], gt[k]), plan)
        spread(run, pieces, threads)
        ctx.save_for_backward(g, w)
        ctx.plan, ctx.groups = plan, groups
        return _unpad(xp, buf, plan)

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
    holomorphic = True

    @staticmethod
    def forward(ctx, x, g, plan, groups, cols=None):
        xp = ctx.xp
        (B, O), L = g.shape[:2], math.prod(plan.out)
        gt = g.reshape(B, groups, O // groups, L).transpose(0, 1, 3, 2)

        def run(sl):  # this chunk's share of the sum over images: (G, C/G * prod(k), O/G)
            c = im2col(xp, x[sl], plan, groups) if cols is None else cols[sl]
            return xp.matmul(c, gt[sl]).sum(0)
        parts = _over_images(xp, run, B, x.shape[1] * math.prod(plan.ksize) * L)
        gw = sum(parts[1:], parts[0]).transpose(0, 2, 1)  # (G, O/G, C/G * prod(k))
        ctx.save_for_backward(x, g)
        ctx.plan, ctx.groups = plan, groups
        return xp.ascontiguousarray(gw.reshape((O, x.shape[1] // groups) + plan.ksize))  # laid out as the weight

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
