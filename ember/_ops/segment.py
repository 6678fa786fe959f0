"""segment_reduce: reductions over consecutive segments of one dimension, with torch's values for empty segments
and its gradients (max/min shared among ties, prod exact at zeros)."""
import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from ..autograd.function import Function
from .index import _const, _xp, where
from .shape import cat
from .view import reshape
from ._ufunc_at import ufunc_at

__all__ = ["segment_reduce"]

_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}
_START = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}
_FLOATS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


def _per_segment(xp, seg, S, values):
    """``values (B, N, K)`` summed into their segments: ``(B, S + 1, K)``, the last row collecting what lies
    outside every segment."""
    out = xp.zeros((seg.shape[0], S + 1) + values.shape[2:], values.dtype)
    ufunc_at(xp, "add", out, (xp.arange(seg.shape[0])[:, None], seg), values)
    return out


class SegmentReduce(Function):
    """``x (B, N, K)`` reduced over the segments ``seg (B, N)`` numbers (``S`` for elements outside every segment)
    into ``(B, S, K)``; ``counts (B, S)`` are the segments' lengths."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, seg, counts, reduce, initial):
        xp = ctx.xp
        B, S = counts.shape
        ctx.seg, ctx.counts, ctx.reduce, ctx.initial = seg, counts, reduce, initial
        out = xp.full((B, S + 1, x.shape[2]), _START[reduce] if initial is None else initial, x.dtype)
        ufunc_at(xp, _UFUNC[reduce], out, (xp.arange(B)[:, None], seg), x)
        out = out[:, :S]
        if reduce == "mean":
            n = counts[..., None]
            out = xp.where(n > 0, out / xp.maximum(n, 1), out if initial is not None else xp.nan).astype(x.dtype)
        out = xp.ascontiguousarray(out)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        xp, dev, seg, reduce = ctx.xp, grad.device, ctx.seg, ctx.reduce
        B, S = ctx.counts.shape
        index = _const(xp.ascontiguousarray(xp.broadcast_to(seg[..., None], x.shape)), dev)

        def at_elements(t):  # (B, S, K) -> (B, N, K): each element's segment's value, 0 outside segments
            return cat([t, t.new_zeros((B, 1, t.shape[2]))], 1).gather(1, index)

        def counted(mask):  # how many elements of each element's segment have ``mask``
            return xp.take_along_axis(_per_segment(xp, seg, S, mask.astype(x._data.dtype)), index._data, 1)

        if reduce == "sum":
            return at_elements(grad)
        if reduce == "mean":
            n = xp.maximum(ctx.counts, 1)[..., None].astype(grad._data.dtype)
            return at_elements(grad / _const(n, dev))
        xa, g = x._data, at_elements(grad)
        if reduce in ("max", "min"):
            # the elements equal to the result share its gradient; torch divides only positive gradients
            hit = (xa == at_elements(out)._data) | xp.isnan(xa)
            share = xp.where(hit, 1 / xp.maximum(counted(hit), 1), 0).astype(xa.dtype)
            return where(g > 0, g * _const(share, dev), g * _const(hit.astype(xa.dtype), dev))
        # prod: grad * out / x, or, at a zero or nan, grad times the product of the rest of its segment
        nan = xp.isnan(xa)
        special = (xa == 0) | nan
        safe = where(_const(special, dev), 1, x)
        regular = g * at_elements(out) / safe
        if not special.any():
            return regular
        rest = SegmentReduce.apply(safe, seg=seg, counts=ctx.counts, reduce="prod", initial=ctx.initial)
        # the other zeros and nans of the segment: none (1), a nan among them (nan), else zeros (0); a constant, so
        # the second derivative misses the terms of segments holding several zeros (torch has none at all)
        others = xp.where(counted(special) == 1, 1, xp.where(counted(nan) - nan > 0, xp.nan, 0)).astype(xa.dtype)
        return where(_const(special, dev), g * at_elements(rest) * _const(others, dev), regular)


def _bounds(xp, lengths, offsets, N, unsafe):
    """``(starts, lengths)`` of the segments, ``(B, S)`` int64 arrays, from ``lengths (B, S)`` or
    ``offsets (B, S + 1)``."""
    if lengths is not None:
        L = lengths.astype(np.int64)
        if not unsafe:
            if L.size and int(L.min()) < 0:
                raise RuntimeError("lengths contains negative value!")
            if bool((L.sum(-1) != N).any()):
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                                   "data.size(lengths.dim()-1) when !unsafe.")
        starts = xp.cumsum(L, -1) - L
    else:
        O = offsets.astype(np.int64)
        if O.shape[-1] == 0:
            raise RuntimeError("Trying to create tensor with negative dimension -1: [-1]")
        starts, L = O[..., :-1], xp.diff(O, axis=-1)
    if L.size and (int(L.min()) < 0 or int(starts.min()) < 0 or int((starts + L).max()) > N):
        raise RuntimeError(f"segment_reduce(): segments must be consecutive, of non-negative length, and lie "
                           f"within data.size(axis) = {N}")
    return starts, L


def _segment_of(xp, starts, counts, N):
    """Each element's segment number, ``(B, N)``: the number of segments of its row that end at or before it, and
    ``S`` for the elements before the first segment or after the last."""
    B, S = counts.shape
    ends = starts + counts
    r = xp.arange(B)[:, None]
    j = xp.arange(N)[None, :]
    # rows shifted apart, so that one sorted search serves them all
    seg = xp.searchsorted((ends + r * (N + 1)).ravel(), (j + r * (N + 1)).ravel(), side="right").reshape(B, N)
    seg = seg - r * S
    return xp.where(j < starts[:, :1], S, seg) if S else seg


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """``data`` reduced over consecutive segments of dimension ``axis``: 'sum', 'mean', 'max', 'min' or 'prod'.
    The segments are given by ``lengths`` or by ``offsets`` (their boundaries), of shape
    ``data.shape[:axis] + (S,)`` (``(S + 1,)`` for offsets); ``initial`` starts every reduction. An empty segment
    gives ``initial``, or 0 (sum), 1 (prod), -inf (max), inf (min), nan (mean). ``unsafe`` skips the checks that
    lengths are non-negative and sum to ``data.shape[axis]``.

    Example::

        >>> ember.segment_reduce(ember.tensor([1., 2., 3., 4.]), 'max', lengths=ember.tensor([1, 0, 3]))
        tensor([1., -inf, 4.])
    """
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    r = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if r not in _UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    bounds, name = (lengths, "lengths") if lengths is not None else (offsets, "offsets")
    if not isinstance(bounds, Tensor):
        raise TypeError(f"segment_reduce(): argument '{name}' must be Tensor, not {type(bounds).__name__}")
    ax = wrap_dim(axis, data.ndim)
    if data.ndim < bounds.ndim:
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.")
    if bounds.ndim - 1 != ax:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} but got {ax}.")
    if bounds.dtype not in (_dtype.int32, _dtype.int64):
        raise NotImplementedError(f'"_segment_reduce_{name}_cpu_kernel1" not implemented for '
                                  f"'{_dtype.scalar_name(bounds.dtype)}'")
    if data.dtype not in _FLOATS:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{_dtype.scalar_name(data.dtype)}'")
    outer, N, inner = tuple(data.shape[:ax]), data.shape[ax], tuple(data.shape[ax + 1:])
    if tuple(bounds.shape[:-1]) != outer:
        raise RuntimeError(f"segment_reduce(): Expected {name} of shape {list(outer) + [bounds.shape[-1]]} for data "
                           f"of shape {list(data.shape)}, got {list(bounds.shape)}")
    xp = _xp(data)
    B = math.prod(outer)
    arr = xp.asarray(bounds._data).reshape((B,) + tuple(bounds.shape[-1:]))
    starts, counts = _bounds(xp, arr if lengths is not None else None, arr if lengths is None else None, N, unsafe)
    seg = _segment_of(xp, starts, counts, N)
    if isinstance(initial, Tensor):
        initial = initial.item()
    x = reshape(data, (B, N, math.prod(inner)))
    out = SegmentReduce.apply(x, seg=seg, counts=counts, reduce=r, initial=initial)
    return reshape(out, outer + (counts.shape[-1],) + inner)
