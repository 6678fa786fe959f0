"""Linear + cross entropy over chunks of batch rows: only a ``(chunk, C)`` block of the ``(N, C)`` logits exists at a
time, so a large-vocabulary head costs ``O(chunk * C)`` memory instead of ``O(N * C)``."""
import numpy as np

from .. import _dtype
from .._kernels import blas as _blas
from .._tensor import Tensor
from ..autograd.function import Function
from .reduce import _quiet


def _wrap(arr, like):
    return None if arr is None else Tensor._make(arr, _dtype.from_numpy_dtype(arr.dtype), like.device)


def _chunks(xp, x, w, b, t, a, size, need, rows=None):
    """Over chunks of ``size`` rows: the loss ``sum_n a_n * (logsumexp(z_n) - z_n[t_n])`` of the logits
    ``z = x @ w.T + b`` and its gradients for x, w and b (those ``need`` asks for); with ``rows`` given, each row's
    term is written there instead and no gradient is computed."""
    n, c = x.shape[0], w.shape[0]
    gx = xp.empty_like(x) if need[0] else None
    gw = xp.zeros(w.shape, x.dtype) if need[1] else None
    gb = xp.zeros(c, x.dtype) if need[2] else None
    grads = any(need)
    buf = xp.empty((min(size, n), c), x.dtype)  # the logits block, reused by every chunk
    tmp = xp.empty(w.shape, x.dtype) if need[1] and n > size else None
    total = xp.zeros((), x.dtype)
    # NumPy's BLAS threads cost more than they save on a chunk's thin products (up to 100x on a busy machine)
    with _blas.one_thread(xp is np and buf.size * x.shape[1] < _blas.LARGE):
        for lo in range(0, n, size):
            xc, tc, ac = x[lo:lo + size], t[lo:lo + size], a[lo:lo + size]
            m = xc.shape[0]
            z, r = buf[:m], xp.arange(m)
            xp.matmul(xc, w.T, out=z)
            if b is not None:
                z += b
            z -= z.max(axis=1, keepdims=True)
            zt = z[r, tc]
            xp.exp(z, out=z)
            den = z.sum(axis=1)
            loss = ac * (xp.log(den) - zt)
            if rows is not None:
                rows[lo:lo + m] = loss
                continue
            total += loss.sum()
            if not grads:
                continue
            z *= (ac / den)[:, None]  # d loss / d z: a_n * (softmax(z_n) - onehot(t_n))
            z[r, tc] -= ac
            if gx is not None:
                xp.matmul(z, w, out=gx[lo:lo + m])
            if gb is not None:
                gb += z.sum(axis=0)
            if gw is not None:
                if tmp is None:
                    xp.matmul(z.T, xc, out=gw)
                else:
                    gw += xp.matmul(z.T, xc, out=tmp)
    return total, gx, gw, gb


class LinearCrossEntropy(Function):
    """``cross_entropy(x @ w.T + b, t, weight, ignore_index, reduction)`` of ``(N, d)`` inputs, ``(C, d)`` weights
    and ``(N,)`` class indices, computed over chunks of ``chunk`` rows.

    For 'mean' and 'sum' the forward computes the gradients of x, w and b along with the loss, and backward only
    scales them by the incoming gradient (in place unless ``allow_retain_graph``, so a second backward raises).
    For 'none' the forward keeps its inputs and backward recomputes the chunks with the per-row gradient folded in.
    """
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, t, b, weight, reduction, ignore_index, chunk, allow_retain_graph):
        xp = ctx.xp
        c = w.shape[0]
        valid = t != ignore_index
        t = xp.where(valid, t, 0)
        bad = (t < 0) | (t >= c)
        if bad.any():
            raise RuntimeError(f"index {int(t[bad][0])} is out of bounds for dimension 1 with size {c}")
        wt = valid.astype(x.dtype) if weight is None else xp.where(valid, weight[t], 0).astype(x.dtype)
        ctx.reduction, ctx.chunk, ctx.t, ctx.wt = reduction, chunk, t, wt
        if reduction == "none":
            ctx.save_for_backward(x, w, b)
            out = xp.empty(x.shape[0], x.dtype)
            with _quiet(xp):
                _chunks(xp, x, w, b, t, wt, chunk, (False,) * 3, rows=out)
            return out
        need = ctx.needs_input_grad
        with _quiet(xp):
            a = wt / wt.sum() if reduction == "mean" else wt
            loss, *grads = _chunks(xp, x, w, b, t, a, chunk, (need[0], need[1], need[3]))
            if reduction == "mean" and not wt.sum():  # no rows count: torch's NaN, also for an empty batch
                loss = xp.asarray(xp.nan, x.dtype)
        ctx.allow_retain_graph, ctx.grads = allow_retain_graph, grads
        return loss

    @staticmethod
    def backward(ctx, grad):
        xp = ctx.xp
        if ctx.reduction == "none":
            x, w, b = ctx.saved_tensors
            need = ctx.needs_input_grad
            arrays = [None if v is None else v._data.astype(ctx.wt.dtype, copy=False) for v in (x, w, b)]
            a = ctx.wt * grad._data.astype(ctx.wt.dtype, copy=False)
            with _quiet(xp):
                _, gx, gw, gb = _chunks(xp, *arrays, ctx.t, a, ctx.chunk, (need[0], need[1], need[3]))
            return _wrap(gx, grad), _wrap(gw, grad), None, _wrap(gb, grad), None
        grads = ctx.grads
        if grads is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
                               "backward are not supported.")
        g = grad._data
        if ctx.allow_retain_graph:
            grads = [None if v is None else v * g for v in grads]
        else:
            ctx.grads = None
            for v in grads:
                if v is not None:
                    v *= g
        gx, gw, gb = grads
        return _wrap(gx, grad), _wrap(gw, grad), None, _wrap(gb, grad), None
