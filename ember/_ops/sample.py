"""Sampling images at points: the gather and scatter core of grid_sample (2-D, bilinear or nearest), with a numba
loop (``compiled.sample_points``) and its NumPy reference."""
import numpy as np

from .._kernels import compiled
from .._kernels.parallel import get_num_threads, parallel_map
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, grad_enabled

_SPREAD = 1 << 17  # output elements from which the loop runs on blocks spread over the intra-op threads
_VECTOR = 32  # bytes per block of points whose gradients are added neighbour by neighbour (torch's AVX2 order)


class SamplePoints(Function):
    """``x`` (N, C, H, W) at the pixel coordinates ``px``, ``py`` (N, P): (N, C, P), the bilinear interpolation of
    the four neighbours (``linear``) or the pixel at the (rounded) point; neighbours outside the image read 0.
    Differentiable in ``x`` and (bilinear) in the coordinates; the coordinates of nearest sampling get zeros."""

    @staticmethod
    def forward(ctx, x, px, py, linear):
        ctx.linear = linear
        ctx.save_for_backward(x, px, py)
        idx, wt, dist = neighbours(px, py, *x.shape[2:], linear, x.shape[0] * x.shape[1] * px.shape[1])
        ctx.idx, ctx.wt, ctx.dist = idx, wt, dist
        return sample_points(x.reshape(x.shape[:2] + (x.shape[2] * x.shape[3],)), idx, wt)

    @staticmethod
    def backward(ctx, grad):
        x, px, py = ctx.saved_tensors
        if grad_enabled():  # create_graph: differentiate the Tensor-op formula instead, to any order
            return _composite_vjp(ctx, (x, px, py), grad)
        need_x, need_xy = ctx.needs_input_grad[0], ctx.linear and any(ctx.needs_input_grad[1:])
        xa = x._data
        shape = xa.shape
        gx, gxy = sample_points_grad(xa.reshape(shape[:2] + (shape[2] * shape[3],)), np.ascontiguousarray(grad._data), ctx.idx,
                                     ctx.wt, ctx.dist, need_x, need_xy)
        wrap = lambda a: Tensor._make(a, grad.dtype, grad.device)  # noqa: E731
        gx = wrap(gx.reshape(shape)) if need_x else None
        if not ctx.linear:
            gxy = np.zeros((2,) + px.shape, xa.dtype)
        return gx, wrap(gxy[0]), wrap(gxy[1])


def neighbours(px, py, h, w, linear, size):
    """The flat indices (K, N, P) of each point's neighbours in an (h, w) image (-1 outside it), their weights (K, N,
    P) and, bilinear, the distances (fy, 1 - fy, fx, 1 - fx) to them (4, N, P): K = 4 neighbours (north-west,
    north-east, south-west, south-east) or 1 (the pixel at the rounded point, weight 1). The numba loop for a
    sampling of ``size`` outputs that runs it, else ``neighbours_numpy``."""
    fused = compiled.kernel("neighbours_2d", size) if px.dtype in (np.float32, np.float64) else None
    if fused is None:
        return neighbours_numpy(px, py, h, w, linear)
    k = 4 if linear else 1
    idx, wt = np.empty((k,) + px.shape, np.int64), np.empty((k,) + px.shape, px.dtype)
    dist = np.empty((k,) + px.shape, px.dtype) if linear else None
    fused(np.ascontiguousarray(px), np.ascontiguousarray(py), h, w, px.dtype.type(1), idx, wt, wt if dist is None
          else dist)
    return idx, wt, dist


def neighbours_numpy(px, py, h, w, linear):
    one = px.dtype.type(1)
    with np.errstate(invalid="ignore"):
        x0, y0 = (np.floor(px), np.floor(py)) if linear else (px, py)
        idx = []
        for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)) if linear else ((0, 0),):
            cx, cy = x0 + dx, y0 + dy
            inside = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)  # False for NaN
            i = np.where(inside, cy, 0).astype(np.int64) * w + np.where(inside, cx, 0).astype(np.int64)
            idx.append(np.where(inside, i, -1))
        if not linear:
            return np.stack(idx), np.ones((1,) + px.shape, px.dtype), None
        fx, fy = px - x0, py - y0
        ex, sy = one - fx, one - fy
    return np.stack(idx), np.stack([sy * ex, sy * fx, fy * ex, fy * fx]), np.stack([fy, sy, fx, ex])


def _blocks(n, c, per_plane, whole_images):
    """(batch slice, channel slice) blocks for the intra-op threads: whole images (every channel) when the points'
    gradient sums over the channels, else channel blocks too when the batch is short."""
    threads = get_num_threads()
    parts = 4 * threads if threads > 1 and n * c * per_plane >= _SPREAD else 1
    if whole_images or n >= parts:
        step = -(-n // min(parts, n))
        return [(slice(i, i + step), slice(None)) for i in range(0, n, step)]
    step = -(-c // -(-parts // n))
    return [(slice(i, i + 1), slice(j, j + step)) for i in range(n) for j in range(0, c, step)]


def sample_points(x, idx, wt):
    """``out[n, c, p] = sum over k of x[n, c, idx[k, n, p]] * wt[k, n, p]`` (0 at index -1) of x (N, C, S): the
    numba loop, else ``sample_points_numpy``."""
    N, C = x.shape[:2]
    size = N * C * idx.shape[2]
    fused = compiled.kernel("sample_points", size) if x.dtype in (np.float32, np.float64) else None
    if fused is None:
        return sample_points_numpy(x, idx, wt)
    out = np.empty((N, C, idx.shape[2]), x.dtype)
    x, zero = np.ascontiguousarray(x), x.dtype.type(0)

    def run(block):
        b, c = block
        fused(x[b, c], idx[:, b], wt[:, b], zero, out[b, c])
    _spread(run, _blocks(N, C, idx.shape[2], False))
    return out


def sample_points_numpy(x, idx, wt):
    out = None
    for i, w in zip(idx, wt):
        inside = (i >= 0)[:, None, :]
        v = np.take_along_axis(x, np.maximum(i, 0)[:, None, :], 2)
        term = np.where(inside, v, x.dtype.type(0)) * w[:, None, :]
        out = term if out is None else np.add(out, term, out=out)
    return out


def sample_points_grad(x, g, idx, wt, dist, need_x, need_xy):
    """The gradients of ``sample_points`` under ``g`` (N, C, P): of ``x`` (N, C, S) if ``need_x``, and (bilinear,
    ``need_xy``) the stacked gradients (2, N, P) of the points' x and y coordinates (else zeros). The numba loop,
    else ``sample_points_grad_numpy``."""
    N, C, S = x.shape
    fused = compiled.kernel("sample_points_grad", g.size) if x.dtype in (np.float32, np.float64) else None
    if fused is None:
        return sample_points_grad_numpy(x, g, idx, wt, dist, need_x, need_xy)
    gx = np.zeros((N, C, S) if need_x else (0, C, S), x.dtype)
    gxy = np.zeros((2, N, idx.shape[2]) if need_xy else (2, 0, 0), x.dtype)
    x, zero = np.ascontiguousarray(x), x.dtype.type(0)
    dist = wt if dist is None else dist

    def run(block):
        b, c = block
        fused(x[b, c], g[b, c], idx[:, b], wt[:, b], dist[:, b], zero, _VECTOR // x.itemsize,
              gx[b, c] if need_x else gx, gxy[:, b] if need_xy else gxy)
    _spread(run, _blocks(N, C, idx.shape[2], need_xy))
    return gx, gxy if need_xy else np.zeros((2, N, idx.shape[2]), x.dtype)


def sample_points_grad_numpy(x, g, idx, wt, dist, need_x, need_xy):
    N, C, S = x.shape
    gx = None
    if need_x:
        gx = np.zeros(N * C * S, x.dtype)
        planes = np.arange(N * C).reshape(N, C, 1) * S
        for i, w in zip(idx, wt):  # each neighbour's contributions, added in the order of the points
            key = planes + i[:, None, :]
            inside = np.broadcast_to((i >= 0)[:, None, :], key.shape)
            np.add.at(gx, key[inside], (w[:, None, :] * g)[inside])
        gx = gx.reshape(N, C, S)
    gxy = np.zeros((2, N, idx.shape[2]), x.dtype)
    if need_xy:
        zero = x.dtype.type(0)
        nw, ne, sw, se = (np.where((i >= 0)[:, None, :], np.take_along_axis(x, np.maximum(i, 0)[:, None, :], 2),
                                   zero) for i in idx)
        fy, sy, fx, ex = (d[:, None, :] for d in dist)
        gxy[0] = (((ne - nw) * sy + (se - sw) * fy) * g).sum(1)
        gxy[1] = (((sw - nw) * ex + (se - ne) * fx) * g).sum(1)
    return gx, gxy


def _spread(run, blocks):
    if len(blocks) > 1:
        parallel_map(run, blocks)
    else:
        run(blocks[0])


def sample_points_reference(x, px, py, linear):
    """``SamplePoints`` in Tensor ops (differentiable to any order)."""
    N, C, H, W = x.shape
    flat = x.reshape(N, C, H * W)
    if linear:
        x0, y0 = px.floor(), py.floor()
        fx, fy = px - x0, py - y0
        ex, sy = 1 - fx, 1 - fy
        corners = [(x0, y0, sy * ex), (x0 + 1, y0, sy * fx), (x0, y0 + 1, fy * ex), (x0 + 1, y0 + 1, fy * fx)]
    else:
        corners = [(px.detach(), py.detach(), None)]
    out = None
    for cx, cy, w in corners:
        cx, cy = cx.detach(), cy.detach()
        inside = ((cx >= 0) & (cx <= W - 1) & (cy >= 0) & (cy <= H - 1)).unsqueeze(1)
        index = (cy.nan_to_num(0).clamp(0, H - 1) * W + cx.nan_to_num(0).clamp(0, W - 1)).long()
        vals = flat.gather(2, index.unsqueeze(1).expand(N, C, index.shape[1]))
        vals = vals.where(inside, vals.new_zeros(()))
        term = vals if w is None else vals * w.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _composite_vjp(ctx, inputs, grad):
    from ..autograd.engine import grad as autograd_grad
    x, px, py = inputs
    with enable_grad():
        out = sample_points_reference(x, px, py, ctx.linear)
    wanted = [i for i, n in enumerate(ctx.needs_input_grad[:3]) if n]
    got = autograd_grad([out], [inputs[i] for i in wanted], [grad.reshape(out.shape)], create_graph=True,
                        allow_unused=True)
    result = [None] * 3
    for i, g in zip(wanted, got):
        result[i] = g if g is not None else inputs[i].detach() * 0
    return tuple(result)
