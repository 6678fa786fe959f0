"""Scaled dot-product attention: one primitive whose backward recomputes nothing and keeps the (L, S) weights only.

On NumPy, inputs whose batch dims agree take a fast path: the scores of a few batch rows at a time, so that the
softmax passes run in cache, the chunks spread over the intra-op threads (each product on one BLAS thread); the
scores are laid out transposed (..., S, L) so that the softmax's reductions run along rows of memory rather than
over short rows one at a time (3x faster); the output, and the gradients of q, k and v, are written in (B, L, H, E)
memory (torch's layout), so that merging the heads afterwards is a view. ``reference`` is the plain formula, for
everything else.
"""
import functools
import math

import numpy as np

from .._kernels import get_num_threads
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .._kernels.blas import spread
from .reduce import _quiet
from .softmax import SoftmaxBackward

_CHUNK = 1 << 17  # score elements per chunk of batch rows
_SPREAD = 1 << 19  # score elements from which the chunks are spread over the intra-op threads


def reference(xp, q, k, v, bias, keep, scale, causal, safe):
    """``(output, weights)`` by the plain formula, on arrays of any (broadcasting) batch shape."""
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))  # (..., L, S)
    s *= s.dtype.type(scale)
    L, S = s.shape[-2:]
    if causal:
        s += xp.where(xp.tri(L, S, dtype=bool), 0, -xp.inf).astype(s.dtype)
    if bias is not None:
        s += bias
    if S == 0:
        p = xp.zeros_like(s)
    else:
        m = xp.amax(s, axis=-1, keepdims=True)
        if safe:
            xp.copyto(m, 0, where=m == -xp.inf)  # an all-masked row then exps to zeros, not NaN (CuPy: no sync)
        s -= m
        p = xp.exp(s, out=s)
        total = xp.sum(p, axis=-1, keepdims=True)
        if safe:
            xp.copyto(total, 1, where=total == 0)
        p /= total
    return xp.matmul(p if keep is None else p * keep, v), p


@functools.lru_cache(maxsize=16)
def _causal_t(S, L, dtype):
    """The causal mask, transposed (S, L): 0 where key s may be seen from query l (s <= l), else -inf."""
    m = np.ascontiguousarray(np.where(np.tri(L, S, dtype=bool).T, 0, -np.inf), dtype)
    m.setflags(write=False)
    return m


def _fits(xp, q, k, v):
    """Whether the fast path applies: NumPy floats, equal batch dims (no broadcasting), no empty dims."""
    if xp is not np or q.ndim < 3 or not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        return False
    return q.dtype.kind == "f" and min(q.shape[:-1] + k.shape[-2:-1]) > 0


def _chunks(shape):
    """Indexes of the batch dims of the scores ``shape`` that hold about ``_CHUNK`` elements each, at least one per
    thread: slices of dim 0, or of dim 1 at each index of dim 0 when one index of dim 0 holds more."""
    per = math.prod(shape[1:])
    if per > _CHUNK and len(shape) > 3 and shape[1] > 1:
        step = max(1, _CHUNK // math.prod(shape[2:]))
        return [(i, slice(j, j + step)) for i in range(shape[0]) for j in range(0, shape[1], step)]
    step = max(1, min(_CHUNK // max(per, 1), -(-shape[0] // get_num_threads())))
    return [slice(i, i + step) for i in range(0, shape[0], step)]


def _heads_last(shape, dtype):
    """An array of ``shape`` (..., H, L, E) laid out in memory as (..., L, H, E) when it has a head dim."""
    if len(shape) < 4:
        return np.empty(shape, dtype)
    buf = np.empty(shape[:-3] + (shape[-2], shape[-3], shape[-1]), dtype)
    return np.swapaxes(buf, -2, -3)


def _bcast_t(a, shape):
    """``a`` broadcast to ``shape`` (..., L, S), as its transposed view (..., S, L)."""
    return np.swapaxes(np.broadcast_to(a, shape), -1, -2)


def fast_forward(q, k, v, bias, keep, scale, causal, safe):
    """``(output, weights)`` as ``reference``, the weights a transposed view of (..., S, L) memory."""
    L, S = q.shape[-2], k.shape[-2]
    batch = q.shape[:-2]
    pt = np.empty(batch + (S, L), q.dtype)
    out = _heads_last(batch + (L, v.shape[-1]), q.dtype)
    shape = batch + (L, S)
    bias_t = None if bias is None else _bcast_t(bias, shape)
    keep_t = None if keep is None else _bcast_t(keep, shape)
    scale = q.dtype.type(scale)

    def run(c):
        st = pt[c]
        np.matmul(k[c], np.swapaxes(q[c], -1, -2), out=st)
        st *= scale
        if causal:
            st += _causal_t(S, L, q.dtype)
        if bias_t is not None:
            st += bias_t[c]
        m = np.amax(st, axis=-2, keepdims=True)
        if safe:
            m[m == -np.inf] = 0
        st -= m
        np.exp(st, out=st)
        total = np.sum(st, axis=-2, keepdims=True)
        if safe:
            total[total == 0] = 1
        st /= total
        w = st if keep_t is None else st * keep_t[c]
        np.matmul(np.swapaxes(w, -1, -2), v[c], out=out[c])
    spread(run, _chunks(pt.shape), pt.size >= _SPREAD)
    return out, np.swapaxes(pt, -1, -2)


def fast_backward(g, q, k, v, p, keep, scale, need):
    """Gradients of q, k and v (None where ``need`` is false) of ``fast_forward`` from the output gradient ``g``
    and the weights ``p`` it returned; no gradient flows into the weights output."""
    pt = np.swapaxes(p, -1, -2)
    keep_t = None if keep is None else _bcast_t(keep, p.shape)
    gq = _heads_last(q.shape, q.dtype) if need[0] else None
    gk = _heads_last(k.shape, k.dtype) if need[1] else None
    gv = _heads_last(v.shape, v.dtype) if need[2] else None
    scale = q.dtype.type(scale)

    def run(c):
        st = pt[c]
        kt = None if keep_t is None else keep_t[c]
        if gv is not None:
            np.matmul(st if kt is None else st * kt, g[c], out=gv[c])
        if gq is None and gk is None:
            return
        ds = np.matmul(v[c], np.swapaxes(g[c], -1, -2))  # dp, transposed (..., S, L)
        if kt is not None:
            ds *= kt
        ds *= st
        r = np.sum(ds, axis=-2, keepdims=True)
        ds -= st * r  # the softmax's backward: p * (dp - sum(dp * p))
        if gq is not None:
            np.matmul(np.swapaxes(ds, -1, -2), k[c], out=gq[c])
            gq[c] *= scale
        if gk is not None:
            np.matmul(ds, q[c], out=gk[c])
            gk[c] *= scale
    spread(run, _chunks(pt.shape), pt.size >= _SPREAD)
    return gq, gk, gv


class ScaledDotProductAttention(Function):
    """``softmax(q @ k^T * scale + bias) * keep @ v`` over the last two dimensions, batch dimensions broadcasting.

    Returns ``(output, weights)``: the weights (before ``keep``, the scaled dropout mask) are an output so that the
    backward written with them stays differentiable. ``bias`` is an additive float mask or None, broadcasting to the
    scores' shape (not beyond it); ``keep`` has the scores' shape; ``causal`` adds the
    top-left aligned lower-triangular mask. With ``safe``, rows that mask out every key get zero weights (torch's
    sdpa); without, they are NaN (plain softmax, as MultiheadAttention's explicit-weights path).
    """
    half_in_float32 = True  # torch's math backend keeps half intermediates in float32 too

    @staticmethod
    def forward(ctx, q, k, v, bias, keep, scale, causal, safe):
        xp = ctx.xp
        ctx.scale = scale
        ctx.set_materialize_grads(False)
        ctx.fast = _fits(xp, q, k, v)
        with _quiet(xp):
            if ctx.fast:
                out, p = fast_forward(q, k, v, bias, keep, scale, causal, safe)
            else:
                out, p = reference(xp, q, k, v, bias, keep, scale, causal, safe)
        ctx.save_for_backward(q, k, v, keep, p)
        return out, p

    @staticmethod
    def backward(ctx, g_out, g_p):
        q, k, v, keep, p = ctx.saved_tensors
        need = ctx.needs_input_grad
        gq = gk = gv = gbias = None
        if ctx.fast and g_out is not None and g_p is None and not need[3] and not grad_enabled():
            dt, work = g_out._data.dtype, np.result_type(p._data.dtype, np.float32)  # half computes in float32
            a = lambda t: t._data.astype(work, copy=False)
            with _quiet(np):
                grads = fast_backward(a(g_out), a(q), a(k), a(v), p._data, None if keep is None else keep._data,
                                      ctx.scale, need)
            wrap = lambda a, t: None if a is None else Tensor._make(a.astype(dt, copy=False), g_out.dtype, t.device)
            return wrap(grads[0], q), wrap(grads[1], k), wrap(grads[2], v), None, None
        if g_out is not None:
            dropped = p if keep is None else p * keep
            if need[2]:
                gv = dropped.mT @ g_out
            dp = g_out @ v.mT  # (..., L, S)
            if keep is not None:
                dp = dp * keep
            if g_p is not None:
                dp = dp + g_p
        else:
            dp = g_p
        if dp is None or not (need[0] or need[1] or need[3]):
            return gq, gk, gv, gbias, None
        ds = SoftmaxBackward.apply(dp, p, dim=-1)
        if need[0]:
            gq = (ds @ k) * ctx.scale
        if need[1]:
            gk = (ds.mT @ q) * ctx.scale
        if need[3]:
            gbias = ds
        return gq, gk, gv, gbias, None
