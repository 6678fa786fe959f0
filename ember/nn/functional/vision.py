"""Vision functions: pad, grid_sample / affine_grid, pixel and channel shuffles."""
import functools
import math
import warnings

import numpy as np

from ... import _dtype
from ..._creation import linspace
from ..._autocast import cpu_float32, cpu_float32_inputs
from ..._device import array_module
from ..._ops.memory_format import channels_last, channels_last_3d
from ..._ops.sample import SampleGrid
from ..._ops.shape import cat
from ..._tensor import Tensor
from ...autograd.function import Function
from .pooling import _layout_of

__all__ = ["pad", "grid_sample", "affine_grid", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle"]


def _const(arr, device):
    return Tensor._make(arr, _dtype.from_numpy_dtype(arr.dtype), device)


# -- pad ---------------------------------------------------------------------------------------------------------------
class ConstantPad(Function):
    """``x`` padded by ``pads`` ((low, high) per dim, negative crops) with ``value``; its adjoint is the opposite
    padding with zeros."""

    @staticmethod
    def forward(ctx, x, pads, value):
        xp = ctx.xp
        ctx.pads = pads
        if any(s + min(lo, 0) + min(hi, 0) < 0 for s, (lo, hi) in zip(x.shape, pads)):
            raise RuntimeError("narrow(): length must be non-negative.")
        shape = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape, pads))
        out = xp.full(shape, value, x.dtype)
        src = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for s, (lo, hi) in zip(x.shape, pads))
        dst = tuple(slice(max(lo, 0), max(lo, 0) + (b.stop - b.start)) for b, (lo, _) in zip(src, pads))
        out[dst] = x[src]
        return out

    @staticmethod
    def backward(ctx, grad):
        return ConstantPad.apply(grad, pads=tuple((-lo, -hi) for lo, hi in ctx.pads), value=0)


_NON_CONSTANT = ("Supported combinations for non-constant padding:\n"
                 "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                 "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                 "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """Pads ``input``: ``pad`` is (left, right) sizes from the last dimension backwards, e.g. ``(1, 1, 2, 0)`` pads
    the last dim by 1 on both sides and the one before by 2 at its start. Negative sizes crop.

    ``mode``: ``'constant'`` (``value``, default 0), ``'reflect'``, ``'replicate'`` or ``'circular'`` (these pad
    the last 1-3 dims of a batched or unbatched input).

    Example::

        >>> F.pad(ember.tensor([[1., 2.]]), (1, 2), value=9.)
        tensor([[9., 1., 2., 9., 9.]])
        >>> F.pad(ember.tensor([[1., 2., 3.]]), (2, 1), mode='reflect')
        tensor([[3., 2., 1., 2., 3., 2.]])
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        pads = ((0, 0),) * (input.ndim - n) + tuple((pad[2 * i], pad[2 * i + 1]) for i in reversed(range(n)))
        out = ConstantPad.apply(input, pads=pads, value=0 if value is None else value)
        return _layout_of(out, input, (channels_last, channels_last_3d))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n" +
                                  _NON_CONSTANT)
    lead = 1 if input.ndim == n + 2 else 0
    if any(s == 0 for s in input.shape[lead:]):
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    # replication padding and 1-D/2-D reflection padding are on CPU autocast's float32 list
    x = cpu_float32(input) if mode == "replicate" or (mode == "reflect" and n < 3) else input
    for i in range(n):
        d = input.ndim - 1 - i
        x = _pad_dim(x, d, pad[2 * i], pad[2 * i + 1], mode, input.shape)
    return x.contiguous() if mode == "circular" else x  # circular padding does not keep channels_last


def constant_pad_nd(input, pad, value=0):
    """``pad(input, pad, "constant", value)``."""
    return _pad(input, pad, "constant", value)


_pad = pad


def _pad_dim(x, d, lo, hi, mode, shape):
    """Pads (or crops, for negative sizes) dim ``d`` of x by its own elements."""
    size = x.shape[d]
    if lo < 0:
        x, size, lo = x.narrow(d, -lo, size + lo), size + lo, 0
    if hi < 0:
        x, size, hi = x.narrow(d, 0, size + hi), size + hi, 0
    if not lo and not hi:
        return x
    if mode == "reflect":
        if lo >= size or hi >= size:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({lo}, {hi}) at dimension {d} of input {list(shape)}")
        parts = [x.narrow(d, 1, lo).flip(d), x, x.narrow(d, size - 1 - hi, hi).flip(d)]
    elif mode == "replicate":
        def rep(edge, n):
            s = list(x.shape)
            s[d] = n
            return x.narrow(d, edge, 1).expand(s)
        parts = [rep(0, lo), x, rep(size - 1, hi)]
    else:
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = [x.narrow(d, size - lo, lo), x, x.narrow(d, 0, hi)]
    return cat([p for p in parts if p.shape[d]], d)


# -- grid_sample / affine_grid -----------------------------------------------------------------------------------------
class GatherPoints(Function):
    """x (N, C, S) at the flat positions ``key`` (N * C * points of them, see ``_point_key``): (N, C, points)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, key, points):
        ctx.key, ctx.size = key, x.shape[2]
        return x.reshape(-1)[key].reshape(x.shape[0], x.shape[1], points)

    @staticmethod
    def backward(ctx, grad):
        return ScatterPoints.apply(grad, key=ctx.key, size=ctx.size)


class ScatterPoints(Function):
    """The adjoint of GatherPoints: (N, C, points) summed into (N, C, size) at the flat positions ``key``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, key, size):
        N, C, P = g.shape
        ctx.key, ctx.points = key, P
        out = ctx.xp.zeros(N * C * size, g.dtype)
        ctx.xp.add.at(out, key, g.reshape(-1))
        return out.reshape(N, C, size)

    @staticmethod
    def backward(ctx, grad):
        return GatherPoints.apply(grad, key=ctx.key, points=ctx.points)


class NearestMask(Function):
    """``vals`` times ``mask`` (the points inside the input, or 1): nearest sampling, piecewise constant in ``grid``,
    gives ``grid`` the zero gradient torch gives it."""

    @staticmethod
    def forward(ctx, vals, mask, grid):
        ctx.mask, ctx.grid_shape = mask, grid.shape
        return vals * (vals.dtype.type(mask) if isinstance(mask, float) else mask)  # a bfloat16 times a float: float32

    @staticmethod
    def backward(ctx, grad):
        mask = ctx.mask if isinstance(ctx.mask, float) else _const(ctx.mask, grad.device)
        return grad * mask, None, _const(ctx.xp.zeros(ctx.grid_shape, grad.dtype.np), grad.device)


def _point_key(xp, N, C, S, index):
    """Flat positions in (N, C, S) of ``index`` (N, P), the same for every channel."""
    return (xp.arange(N * C).reshape(N, C, 1) * S + index.reshape(N, 1, index.size // N if N else 0)).reshape(-1)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


@cpu_float32_inputs  # on CPU autocast's float32 list
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples ``input`` (N, C, H, W) — or (N, C, D, H, W) — at the normalised locations ``grid`` (N, H_out, W_out,
    2) — or (N, D_out, H_out, W_out, 3) —, (-1, -1) being the top-left corner.

    ``mode``: ``'bilinear'`` (trilinear for 5-D), ``'nearest'`` or ``'bicubic'`` (4-D); ``padding_mode``:
    ``'zeros'``, ``'border'`` or ``'reflection'`` for locations outside the input.

    Example::

        >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
        >>> F.grid_sample(x, ember.zeros(1, 1, 1, 2), align_corners=True)
        tensor([[[[1.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=3)
        align_corners = False
    n = input.ndim - 2
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in last dimension, but got grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if n == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_name(input.dtype)}\'')
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_name(input.dtype)} but found "
                           f"{_dtype.scalar_name(grid.dtype)}")
    if mode == "bicubic" and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    N, C = input.shape[:2]
    sizes = input.shape[2:]
    out_shape = grid.shape[1:-1]
    # grid's last dim lists x (width) first: coordinate k addresses spatial dim n - 1 - k
    if n == 2 and mode != "bicubic" and input.device.type == "cpu" and input.dtype in (_dtype.float32, _dtype.float64):
        pixels = functools.partial(_pixels, sizes=sizes, align_corners=align_corners, padding_mode=padding_mode,
                                   nearest=mode == "nearest")
        out = SampleGrid.apply(input, grid.reshape(N, math.prod(out_shape), 2), linear=mode == "bilinear",
                               align=bool(align_corners), pad=_PADS.index(padding_mode), pixels=pixels)
        return out.reshape((N, C) + tuple(out_shape))
    coords = [_unnormalize(grid[..., n - 1 - d], sizes[d], align_corners) for d in range(n)]
    if n == 3:  # the volumetric kernel sends NaN and infinite coordinates to fixed pixels
        coords = [_finite_coord(c, sizes[d], padding_mode) for d, c in enumerate(coords)]
    if mode != "bicubic":  # bicubic applies the padding mode to each tap instead
        coords = [_pad_coord(c, sizes[d], align_corners, padding_mode) for d, c in enumerate(coords)]
    flat = input.reshape(N, C, math.prod(sizes))
    strides = [math.prod(sizes[d + 1:]) for d in range(n)]

    xp = array_module(input.device)
    points = math.prod(out_shape)

    def sample(corner):
        """input at integer coordinates ``corner`` (one per dim), and whether each lies inside the input."""
        index, inside = 0, None
        for d, c in enumerate(corner):
            ok = (c >= 0) & (c <= sizes[d] - 1)
            inside = ok if inside is None else inside & ok
            index = index + c.clamp(0, sizes[d] - 1).long() * strides[d]
        key = _point_key(xp, N, C, flat.shape[2], index._data)
        vals = GatherPoints.apply(flat, key=key, points=points)
        return vals.reshape((N, C) + tuple(out_shape)), inside.unsqueeze(1)

    if mode == "nearest":
        vals, inside = sample([c.round() for c in coords])
        return NearestMask.apply(vals, inside.to(vals.dtype) if padding_mode == "zeros" else 1.0, grid)
    lows = [c.floor() for c in coords]
    result = None
    if mode == "bicubic":  # 4 x 4 taps around the point, weighted by the cubic convolution kernel (A = -0.75)
        weights = [_cubic_kernel(c - lo) for c, lo in zip(coords, lows)]
        for i in range(4):  # each row of taps interpolated along x, then the rows along y
            row = None
            for j in range(4):
                tap = [_pad_coord(lows[0] + (i - 1), sizes[0], align_corners, padding_mode),
                       _pad_coord(lows[1] + (j - 1), sizes[1], align_corners, padding_mode)]
                vals, inside = sample(tap)
                weight = weights[1][j]
                if padding_mode == "zeros":
                    weight = weight * inside.squeeze(1).to(weight.dtype)
                term = vals * weight.unsqueeze(1)
                row = term if row is None else row + term
            term = row * weights[0][i].unsqueeze(1)
            result = term if result is None else result + term
        return result
    for corner in range(2 ** n):
        bits = [(corner >> (n - 1 - d)) & 1 for d in range(n)]
        weight = None
        for d, b in enumerate(bits):
            w = coords[d] - lows[d] if b else lows[d] + 1 - coords[d]
            weight = w if weight is None else weight * w
        vals, inside = sample([lows[d] + b for d, b in enumerate(bits)])
        if padding_mode == "zeros":
            weight = weight * inside.squeeze(1).to(weight.dtype)
        term = vals * weight.unsqueeze(1)
        result = term if result is None else result + term
    return result


_PADS = ("zeros", "border", "reflection")


def _pixels(grid, sizes, align_corners, padding_mode, nearest):
    """The pixel coordinates (px, py) (N, P) of the 2-D sampling grid (N, P, 2), in Tensor ops (``SampleGrid``'s
    loops compute them, this is what a backward pass that builds a graph differentiates)."""
    coords = [_pad_coord(_unnormalize(grid[..., 1 - d], sizes[d], align_corners, True), sizes[d], align_corners,
                         padding_mode) for d in range(2)]
    if padding_mode != "zeros":  # NaN (and reflected infinite) locations clip to 0, as torch's 2-D kernel
        coords = [c.nan_to_num(0.0) for c in coords]
    px, py = coords[1], coords[0]
    return (px.round(), py.round()) if nearest else (px, py)


def _unnormalize(coord, size, align_corners, scaled=False):
    """A normalised coordinate in [-1, 1] as a pixel coordinate; ``scaled``: rounded as torch's vectorized 2-D
    kernels compute it, ``(coord + 1) * (size / 2) - 0.5`` with one rounding after the product and the difference
    (fused multiply-add, exact for float32 through float64)."""
    if scaled:
        if align_corners:
            return (coord + 1) * ((size - 1) / 2)
        return ((coord + 1).double() * (size / 2) - 0.5).to(coord.dtype)
    return (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _cubic_kernel(t):
    """The weights of the taps at -1, 0, 1, 2 for a point at fraction ``t`` past tap 0."""
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    u = 1 - t
    return far(t + 1), near(t), near(u), far(u + 1)


def _finite_coord(coord, size, padding_mode):
    """NaN and infinite pixel coordinates made finite (with a zero gradient): far outside the input for zero padding,
    on the border they clip to for border padding, on the last pixel for reflection."""
    if padding_mode == "zeros":
        return coord.nan_to_num(-2.0, size + 1.0, -2.0)
    return coord.nan_to_num(size - 1.0, size - 1.0, 0.0 if padding_mode == "border" else size - 1.0)


def _pad_coord(coord, size, align_corners, padding_mode):
    """A pixel coordinate with the padding mode applied (clipped or reflected into the input)."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        lo, hi = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        return _clip(_reflect(coord, lo, hi), size)
    return coord


def _clip(coord, size):
    """``coord`` clipped to [0, size - 1]; the borders count as outside, where the gradient is 0."""
    return coord.where((coord > 0) & (coord < size - 1), coord.detach().clamp(0, size - 1))


def _reflect(coord, twice_low, twice_high):
    """torch's reflect_coordinates: reflects ``coord`` into [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - low).abs()
    extra = c.fmod(span)
    flips = (c / span).floor()
    even = flips.fmod(2) == 0
    return (extra + low).where(even, span - extra + low)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) — or (N, D, H, W, 3) — of the affine maps ``theta`` (N, 2, 3) — or (N, 3, 4)
    — for an output of ``size`` (N, C, H, W) — or (N, C, D, H, W) —, for :func:`grid_sample`.

    Example::

        >>> theta = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]])
        >>> F.affine_grid(theta, (1, 1, 2, 2), align_corners=True)[0, 0]
        tensor([[-1., -1.],
                [ 1., -1.]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    size = tuple(int(s) for s in size)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    n = len(size) - 2
    if theta.ndim != 3 or theta.shape[1:] != (n, n + 1):
        raise ValueError(f"Expected a batch of {n}D affine matrices of shape Nx{n}x{n + 1} for size {size}. Got "
                         f"{theta.shape}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    xp = array_module(theta.device)
    spatial = size[2:]
    # base grid (*spatial, n + 1): x (the last spatial dim) first, then y (and z), then 1
    axes = []  # in theta's dtype, rounded at each step as torch's
    for s in spatial:
        v = linspace(-1, 1, s, dtype=theta.dtype)._data if s > 1 else np.zeros(1, theta.dtype.np)
        axes.append(v if align_corners else v * (s - 1) / s)
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m for m in reversed(mesh)] + [np.ones(spatial)], axis=-1).reshape(-1, n + 1)
    base = _const(xp.asarray(base.astype(theta.dtype.np)), theta.device)
    grid = base @ theta.mT  # (N, prod(spatial), n)
    return grid.reshape((size[0],) + spatial + (n,))


# -- shuffles ----------------------------------------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    """Rearranges (*, C * r^2, H, W) into (*, C, H * r, W * r).

    Example::

        >>> F.pixel_shuffle(ember.arange(8.).reshape(1, 4, 1, 2), 2)[0, 0]
        tensor([[0., 2., 1., 3.],
                [4., 6., 5., 7.]])
    """
    r = upscale_factor
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return _shuffled(x.reshape(lead + (c // (r * r), h * r, w * r)), input, r == 1)


def pixel_unshuffle(input, downscale_factor):
    """Rearranges (*, C, H * r, W * r) into (*, C * r^2, H, W), the inverse of :func:`pixel_shuffle`.

    Example::

        >>> F.pixel_unshuffle(ember.ones(1, 1, 4, 4), 2).shape
        ember.Size([1, 4, 2, 2])
    """
    r = downscale_factor
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return _shuffled(x.reshape(lead + (c * r * r, h // r, w // r)), input, r == 1)


def channel_shuffle(input, groups):
    """Splits the channels of (N, C, *) into ``groups`` and interleaves them.

    Example::

        >>> F.channel_shuffle(ember.arange(4.).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((input.shape[0], groups, c // groups) + rest).transpose(1, 2)
    return _shuffled(x.reshape(input.shape), input, groups in (1, c))


def _shuffled(y, input, moved_nothing):
    """A shuffle's result as torch gives it: a new tensor (not a view of ``input``, even when ``moved_nothing``),
    channels_last when ``input`` is."""
    return _layout_of(y.clone() if moved_nothing else y, input)


native_channel_shuffle = channel_shuffle
