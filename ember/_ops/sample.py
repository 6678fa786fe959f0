"""Sampling images at points: the core of grid_sample (2-D, bilinear or nearest), from the grid's pixel coordinates
to the gather and scatter of the neighbours, with numba loops (``compiled.grid_coords_2d``, ``neighbours_2d``,
``sample_points``) and their NumPy references."""
import numpy as np

from .._kernels import compiled
from .._kernels.parallel import get_num_threads, parallel_map
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, grad_enabled

_SPREAD = 1 << 17  # output elements from which the loop runs on blocks spread over the intra-op threads
_VECTOR = 32  # bytes per block of points whose gradients are added neighbour by neighbour (torch's AVX2 order)


class SampleGrid(Function):
    """``x`` (N, C, H, W) at the normalised locations ``grid`` (N, P, 2) (x then y, -1 and 1 the image's borders,
    or its corner pixels' centres if ``align``): (N, C, P), the bilinear interpolation of the four neighbours
    (``linear``) or the nearest pixel, with the padding ``pad`` (0 zeros: neighbours outside the image read 0, 1
    border, 2 reflection). ``pixels(grid)`` computes the pixel coordinates (px, py) in Tensor ops: differentiated
    when the backward pass builds a graph. Differentiable in ``x`` and (bilinear) in ``grid``; nearest sampling gives
    ``grid`` zeros."""

    @staticmethod
    def forward(ctx, x, grid, linear, align, pad, pixels):
        N, C, H, W = x.shape
        size = N * C * grid.shape[1]
        px, py, mx, my = grid_coords(grid, H, W, align, pad, not linear, size)
        ctx.linear, ctx.pixels, ctx.mult = linear, pixels, (mx, my)
        ctx.save_for_backward(x, grid)
        idx, wt, dist = neighbours(px, py, H, W, linear, size)
        ctx.idx, ctx.wt, ctx.dist = idx, wt, dist
        return sample_points(x.reshape(N, C, H * W), idx, wt)

    @staticmethod
    def backward(ctx, grad):
        x, grid = ctx.saved_tensors
        if grad_enabled():  # create_graph: differentiate the Tensor-op formula instead, to any order
            return _composite_vjp(ctx, (x, grid), grad)
        need_x, need_xy = ctx.needs_input_grad[0], ctx.linear and ctx.needs_input_grad[1]
        xa = x._data
        shape = xa.shape
        gx, gxy = sample_points_grad(xa.reshape(shape[:2] + (shape[2] * shape[3],)), np.ascontiguousarray(grad._data), ctx.idx,
                                     ctx.wt, ctx.dist, need_x, need_xy)
        wrap = lambda a: Tensor._make(a, grad.dtype, grad.device)  # noqa: E731
        gx = wrap(gx.reshape(shape)) if need_x else None
        if not need_xy:
            return gx, wrap(np.zeros(grid.shape, xa.dtype)) if ctx.needs_input_grad[1] else None
        mx, my = ctx.mult
        return gx, wrap(np.stack([gxy[0] * mx, gxy[1] * my], -1))


def grid_coords(grid, h, w, align, pad, nearest, size):
    """The pixel coordinates px, py (N, P) in an (h, w) image of the normalised locations ``grid`` (N, P, 2) with the
    padding ``pad`` (0 zeros, 1 border, 2 reflection; NaN clipped to 0), rounded if ``nearest``, and their
    derivatives mx, my by the grid's x and y. The numba loop for a sampling of ``size`` outputs, else
    ``grid_coords_numpy``."""
    fused = compiled.kernel("grid_coords_2d", size) if grid.dtype in (np.float32, np.float64) else None
    if fused is None:
        return grid_coords_numpy(grid, h, w, align, pad, nearest)
    whole = 2.0 ** (np.finfo(grid.dtype).nmant + 1)  # the integers from which not all are exact
    k = np.array([[1, 0, 2, 0.5, (s - 1) / 2, s / 2, low, span, s - 1, whole - 2 * span]
                  for s, (low, span) in ((w, _reflection(w, align)), (h, _reflection(h, align)))], grid.dtype)
    px, py, mx, my = (np.empty(grid.shape[:2], grid.dtype) for _ in range(4))
    fused(np.ascontiguousarray(grid), k, align, pad, nearest, px, py, mx, my)
    return px, py, mx, my


def _reflection(size, align):
    """The low end and the span of the interval pixel coordinates reflect into."""
    return [0, size - 1] if align else [-0.5, size]


def grid_coords_numpy(grid, h, w, align, pad, nearest):
    t = grid.dtype.type
    out = []
    with np.errstate(invalid="ignore"):
        for a, s in enumerate((w, h)):
            v = grid[..., a] + t(1)
            if align:
                c, m = v * t((s - 1) / 2), np.full(v.shape, (s - 1) / 2, grid.dtype)
            else:
                c, m = (v.astype(np.float64) * (s / 2) - 0.5).astype(grid.dtype), np.full(v.shape, s / 2, grid.dtype)
            if pad == 2:
                low, span = (t(e) for e in _reflection(s, align))
                if span == 0:
                    c, m = np.zeros_like(c), np.zeros_like(m)
                else:
                    d = c - low
                    even = np.fmod(np.floor(np.abs(d) / span), t(2)) == 0
                    extra = np.fmod(np.abs(d), span)
                    c = np.where(even, extra + low, span - extra + low)
                    m = np.where((d < 0) == even, -m, m)
            if pad:
                inside = (c > 0) & (c < s - 1)
                c, m = np.where(inside, c, np.where(c >= s - 1, t(s - 1), t(0))), np.where(inside, m, t(0))
            out += [np.round(c) if nearest else c, m]
    px, mx, py, my = out
    return px, py, mx, my


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
    x, grid = inputs
    with enable_grad():
        out = sample_points_reference(x, *ctx.pixels(grid), ctx.linear)
    wanted = [i for i, n in enumerate(ctx.needs_input_grad[:2]) if n]
    got = autograd_grad([out], [inputs[i] for i in wanted], [grad.reshape(out.shape)], create_graph=True,
                        allow_unused=True)
    result = [None] * 2
    for i, g in zip(wanted, got):
        result[i] = g if g is not None else inputs[i].detach() * 0
    return tuple(result)
