"""interpolate (and the deprecated upsample aliases): resizing by nearest, linear, cubic or area sampling."""
import math
import warnings

import numpy as np

from ... import _dtype
from ..._device import array_module
from ..._kernels import compiled
from ..._kernels.parallel import get_num_threads, parallel_map
from ...autograd.function import Function
from ..._ops.memory_format import channels_last, channels_last_3d
from .pooling import _layout_of, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


# -- sampling primitives ---------------------------------------------------------------------------------------------
class Resample(Function):
    """A linear map along ``axis`` with a few taps per output: ``y = sum over taps of x[idx] * w`` (``w`` None for
    a plain gather). Each tap's ``idx`` is non-decreasing, which makes the adjoint a sum over short runs."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, taps, axis):
        xp = ctx.xp
        ctx.taps, ctx.axis, ctx.size = taps, axis, x.shape[axis]
        fused = _loop(xp, x, taps, "resample_axis")
        if fused is not None:
            return _on_blocks(fused, x, taps, axis, len(taps[0][0]), np.empty)
        y = None
        for idx, w, _, _ in taps:
            t = xp.take(x, idx, axis=axis)
            if w is not None:
                t *= w
            y = t if y is None else xp.add(y, t, out=y)
        return y

    @staticmethod
    def backward(ctx, grad):
        return ResampleAdjoint.apply(grad, taps=ctx.taps, axis=ctx.axis, size=ctx.size)


class ResampleAdjoint(Function):
    """The adjoint of Resample: each output's value times its weight, summed into the input it was read from."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, taps, axis, size):
        xp = ctx.xp
        ctx.taps, ctx.axis = taps, axis
        fused = _loop(xp, g, taps, "resample_axis_adjoint")
        if fused is not None:
            return _on_blocks(fused, g, taps, axis, size, np.zeros)
        shape = list(g.shape)
        shape[axis] = size
        out = xp.zeros(shape, g.dtype)
        lead = (slice(None),) * axis
        for _, w, targets, runs in taps:
            v = g if w is None else g * w
            # equal indices are contiguous: sum each run by its t-th elements, t = 0, 1, ... (runs are short)
            acc = None
            for sel, pos in runs:
                part = xp.take(v, pos, axis=axis)
                if acc is None:
                    acc = part
                else:
                    acc[lead + (sel,)] += part
            out[lead + (targets,)] += acc
        return out

    @staticmethod
    def backward(ctx, grad):
        return Resample.apply(grad, taps=ctx.taps, axis=ctx.axis)


class FixedPointResample(Function):
    """Resample of a uint8 image along ``axis`` in fixed point: ``clip((2**(p-1) + sum of x[idx] * w) >> p, 0,
    255)`` with integer weights ``w`` of ``precision`` p bits, one column of ``idx``/``w`` per tap."""

    @staticmethod
    def forward(ctx, x, idx, w, precision, axis):
        xp = ctx.xp
        shape = [1] * x.ndim
        shape[axis] = idx.shape[0]
        acc = xp.full(x.shape[:axis] + (idx.shape[0],) + x.shape[axis + 1:], 1 << (precision - 1), xp.int32)
        for t in range(idx.shape[1]):
            acc += xp.take(x, idx[:, t], axis=axis).astype(xp.int32) * w[:, t].reshape(shape)
        return xp.clip(acc >> precision, 0, 255).astype(xp.uint8)


_SPREAD = 1 << 18  # output elements from which the numba loops run on blocks spread over the intra-op threads


def _loop(xp, x, taps, name):
    """The numba loop ``name`` (``compiled.resample_axis`` or its adjoint) on a float NumPy array, or None (the NumPy
    code then runs; it also gathers the taps without weights, of nearest sampling)."""
    if xp is not np or x.dtype not in (np.float32, np.float64) or taps[0][1] is None and name == "resample_axis":
        return None
    return compiled.kernel(name, x.size)


def _on_blocks(fused, x, taps, axis, n_out, alloc):
    """Runs the resampling loop ``fused`` on ``x`` viewed as (A, n, B) around ``axis`` into a new array of
    ``n_out`` along it (``alloc``: np.empty, or np.zeros for the adjoint's sums), on blocks of A spread over the
    intra-op threads when large."""
    shape = x.shape
    a, b = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    x3 = np.ascontiguousarray(x).reshape(a, shape[axis], b)
    out = alloc((a, n_out, b), x.dtype)
    idx = np.stack([t[0] for t in taps])
    wt = np.stack([np.ones(len(t[0])) if t[1] is None else t[1].reshape(-1) for t in taps]).astype(x.dtype,
                                                                                                 copy=False)
    threads = get_num_threads()
    parts = min(4 * threads, a) if threads > 1 and out.size >= _SPREAD else 1
    step = -(-a // max(parts, 1))
    blocks = [slice(i, i + step) for i in range(0, a, step)]
    if len(blocks) > 1:
        parallel_map(lambda s: fused(x3[s], idx, wt, out[s]), blocks)
    elif a:
        fused(x3, idx, wt, out)
    return out.reshape(shape[:axis] + (n_out,) + shape[axis + 1:])


def _tap(xp, idx, w, ndim, axis):
    """A Resample tap on the device: indices, weights shaped to broadcast along ``axis``, and for the adjoint the
    distinct indices with, per offset t into their runs, (which runs are longer than t, their t-th positions)."""
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    lengths = np.diff(np.r_[starts, len(idx)])
    runs = [(_index(xp, np.flatnonzero(lengths > t)), xp.asarray(starts[lengths > t] + t))
            for t in range(int(lengths.max(initial=0)))]
    shape = [1] * ndim
    shape[axis] = len(idx)
    return (xp.asarray(idx), None if w is None else xp.asarray(w.reshape(shape)), _index(xp, idx[starts]), runs)


def _index(xp, a):
    """Distinct ascending indices as a slice when they are a range (a view instead of a fancy index)."""
    if len(a) and a[-1] - a[0] == len(a) - 1:
        return slice(int(a[0]), int(a[-1]) + 1)
    return xp.asarray(a)


# -- interpolate -------------------------------------------------------------------------------------------------------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resizes ``input`` (N, C, *spatial) to ``size`` or by ``scale_factor``.

    ``mode``: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D), ``'bilinear'``/``'bicubic'`` (4-D),
    ``'trilinear'`` (5-D), ``'lanczos'`` (4-D, Lanczos-3, antialiased only) or ``'area'`` (adaptive average
    pooling). ``align_corners`` (interpolating modes only) maps the corner pixels' centres onto each other;
    ``antialias`` (bilinear, bicubic and lanczos) widens the filter when downsampling.

    Example::

        >>> F.interpolate(ember.tensor([[[1., 2.]]]), scale_factor=2, mode='linear')
        tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                                 "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                                 "format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            if not _is_integer(size) or isinstance(size, bool):
                raise TypeError(f"upsample_{mode.replace('-', '_')}{dim}d() received an invalid combination of "
                                f"arguments - got (Tensor, list, NoneType), but expected output_size to be a tuple "
                                f"of ints, not {type(size).__name__}")
            out = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {spatial} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        if not all(abs(s * f) < 2 ** 63 for s, f in zip(spatial, scales)):  # also NaN
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        out = [int(s * f) for s, f in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and scales is not None or recompute_scale_factor:
        scales = None  # the output size computed above (floor of size * scale) is then the only input
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != dim:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input")
    if mode == "lanczos" and dim == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    elif dim not in (1, 2, 3) or mode not in ("nearest", "nearest-exact", "area") + tuple(_INTERP_DIMS):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if any(o <= 0 for o in out) or any(s <= 0 for s in spatial):
        names = ("D", "H", "W")[3 - dim:]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input (" +
                           ", ".join(f"{a}: {s}" for a, s in zip(names, spatial)) + ") output (" +
                           ", ".join(f"{a}: {o}" for a, o in zip(names, out)) + ")")
    if mode != "area" and input.numel() == 0 and math.prod(input.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, out)
    fixed_point = input.dtype is _dtype.uint8 and mode in ("bilinear", "bicubic", "lanczos")
    if not (input.dtype.is_floating_point or fixed_point or input.dtype is _dtype.uint8 and "nearest" in mode):
        kernel = f"upsample_{mode}{dim}d" if "nearest" not in mode else (
            "upsample_nearest2d_channels_last" if dim == 2 else "compute_indices_weights_nearest")
        if mode == "lanczos":
            kernel = "compute_index_ranges_weights"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_name(input.dtype)}\'')
    half = input.dtype in (_dtype.float16, _dtype.bfloat16) and "nearest" not in mode
    if half and antialias and input.device.type == "cpu":
        raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for '
                                  f"'{_dtype.scalar_name(input.dtype)}'")
    scales = scales or [None] * dim
    xp = array_module(input.device)
    # float32 index arithmetic for float32/half inputs, as torch's kernels do it
    ctype = np.float64 if input.dtype is _dtype.float64 else np.float32
    x = input.float() if half else input  # half precision is rounded once, at the end
    for d in reversed(range(dim)):  # last dim first: the same order of operations as torch's kernels
        ax, n_in, n_out, scale = 2 + d, spatial[d], out[d], scales[d]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
            if not np.array_equal(idx, np.arange(n_in)):
                x = Resample.apply(x, taps=(_tap(xp, idx, None, input.ndim, ax),), axis=ax)
            continue
        if n_in == n_out and (fixed_point or antialias or mode != "bicubic"):
            continue  # a dim keeping its size is copied, whatever the scale factor (plain bicubic resamples it)
        if fixed_point:
            idx, w, bits = _fixed_point_taps(n_in, n_out, scale, align_corners, mode, antialias)
            x = FixedPointResample.apply(x, idx=xp.asarray(idx), w=xp.asarray(w), precision=bits, axis=ax)
            continue
        if antialias:
            taps = _antialias_taps(n_in, n_out, scale, align_corners, ctype, mode)
        else:
            taps = (_cubic_taps if mode == "bicubic" else _linear_taps)(n_in, n_out, scale, align_corners, ctype)
        x = Resample.apply(x, taps=tuple(_tap(xp, idx, w, input.ndim, ax) for idx, w in taps), axis=ax)
    if x is input:  # every dim kept its size: still a new tensor, as torch's
        return input.clone()
    return _layout_of(x.to(input.dtype) if half else x, input, (channels_last, channels_last_3d))


def _is_integer(v):
    """An int, a NumPy integer or a 0-d integer tensor."""
    if isinstance(v, int):
        return True
    floating = getattr(getattr(v, "dtype", None), "is_floating_point", False)
    return hasattr(v, "__index__") and not floating and getattr(v, "ndim", 0) == 0


def _source_scale(n_in, n_out, scale, align_corners, ctype):
    """torch's area_pixel_compute_scale."""
    if align_corners:
        return ctype((n_in - 1) / (n_out - 1)) if n_out > 1 else ctype(0)
    return ctype(1.0 / scale) if scale is not None and scale > 0 else ctype(n_in) / ctype(n_out)


def _source_index(scale, n_out, align_corners, ctype, cubic):
    """torch's area_pixel_compute_source_index for every output position."""
    dst = np.arange(n_out, dtype=ctype)
    if align_corners:
        return scale * dst
    src = scale * (dst + ctype(0.5)) - ctype(0.5)
    return src if cubic else np.maximum(src, ctype(0))


def _nearest_index(n_in, n_out, scale, exact):
    if not exact and n_out == n_in:
        return np.arange(n_out)
    if not exact and n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum(np.floor(dst * s).astype(np.int64), n_in - 1)


def _linear_taps(n_in, n_out, scale, align_corners, ctype):
    src = _source_index(_source_scale(n_in, n_out, scale, align_corners, ctype), n_out, align_corners, ctype, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(ctype), 0, 1).astype(ctype)
    i1 = i0 + (i0 < n_in - 1)
    return (i0, ctype(1) - lam), (i1, lam)


def _cubic_taps(n_in, n_out, scale, align_corners, ctype):
    src = _source_index(_source_scale(n_in, n_out, scale, align_corners, ctype), n_out, align_corners, ctype, True)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0.astype(ctype)).astype(ctype)
    a = ctype(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return tuple((np.clip(i0 - 1 + k, 0, n_in - 1), w.astype(ctype)) for k, w in enumerate(weights))


def _antialias_taps(n_in, n_out, scale, align_corners, ctype, mode):
    """torch's antialiased weights: the linear (triangle), cubic (Keys, A = -0.5) or Lanczos-3 filter stretched by
    the downscaling factor, normalised per output; taps beyond a window repeat its last index with weight 0."""
    idx, w = _windows(n_in, n_out, float(_source_scale(n_in, n_out, scale, align_corners, ctype)), mode, True, 0.0)
    return tuple((idx[:, t], w[:, t].astype(ctype)) for t in range(idx.shape[1]))


def _windows(n_in, n_out, s, mode, antialias, delta):
    """Per output, the input indices (n_out, k) and normalised float64 weights of the ``mode`` filter (bilinear:
    triangle, bicubic: Keys with A = -0.5, lanczos: Lanczos-3) around ``s * (i + 0.5 - delta)``, stretched by the
    downscaling factor ``s`` when ``antialias``; windows are cut at the borders, and taps beyond a window repeat its
    last index with weight 0."""
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * (max(s, 1.0) if antialias else 1.0)
    invscale = 1.0 / s if s >= 1.0 and antialias else 1.0
    center = s * (np.arange(n_out) + 0.5 - delta)
    xmin = np.maximum((center - support + 0.5 + delta).astype(np.int64), 0)
    size = np.minimum((center + support + 0.5 + delta).astype(np.int64), n_in) - xmin
    size = np.clip(size, 0, int(math.ceil(support)) * 2 + 1 if antialias else int(2 * support))
    k = int(size.max())
    j = np.arange(k)[None, :]
    x = np.abs((j + xmin[:, None] - center[:, None] + 0.5 - delta) * invscale)
    if mode == "bicubic":
        a = -0.5
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    elif mode == "lanczos":
        w = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    else:
        w = np.maximum(0.0, 1.0 - x)
    w = np.where(j < size[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    return np.minimum(xmin[:, None] + j, np.maximum(xmin + size - 1, 0)[:, None]), w


def _fixed_point_taps(n_in, n_out, scale, align_corners, mode, antialias):
    """The taps of a uint8 resize: indices (n_out, k), int32 weights (n_out, k) and their precision, the most bits
    that keep the largest weight below 2**15. Unantialiased cubic taps clamp at the borders (the weights of taps
    on one pixel add up); the others cut their windows there."""
    if mode == "bicubic" and not antialias:
        taps = _cubic_taps(n_in, n_out, scale, align_corners, np.float64)
        idx, w = np.stack([t[0] for t in taps], 1), np.stack([t[1] for t in taps], 1)
        for t in range(idx.shape[1] - 1, 0, -1):
            same = idx[:, t] == idx[:, t - 1]
            w[:, t - 1] += np.where(same, w[:, t], 0.0)
            w[:, t] = np.where(same, 0.0, w[:, t])
    else:
        s = float(_source_scale(n_in, n_out, scale, align_corners, np.float64))
        idx, w = _windows(n_in, n_out, s, mode, antialias, 0.5 if align_corners and not antialias else 0.0)
    bits, top = 0, w.max()
    while bits < 22 and int(0.5 + top * (1 << (bits + 1))) < 1 << 15:
        bits += 1
    v = w * (1 << bits)
    return idx, np.trunc(v + np.where(v < 0, -0.5, 0.5)).astype(np.int32), bits


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
