"""Scaled dot-product attention: one primitive whose backward recomputes nothing and keeps the (L, S) weights only."""
from ..autograd.function import Function
from .reduce import _quiet
from .softmax import SoftmaxBackward


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
        s = xp.matmul(q, xp.swapaxes(k, -1, -2))  # (..., L, S)
        s *= s.dtype.type(scale)
        L, S = s.shape[-2:]
        if causal:
            s += xp.where(xp.tri(L, S, dtype=bool), 0, -xp.inf).astype(s.dtype)
        if bias is not None:
            s += bias
        with _quiet(xp):
            if S == 0:
                p = xp.zeros_like(s)
            else:
                m = xp.amax(s, axis=-1, keepdims=True)
                if safe:
                    m[m == -xp.inf] = 0  # an all-masked row then exps to zeros, not NaN
                s -= m
                p = xp.exp(s, out=s)
                total = xp.sum(p, axis=-1, keepdims=True)
                if safe:
                    total[total == 0] = 1
                p /= total
            out = xp.matmul(p if keep is None else p * keep, v)
        ctx.save_for_backward(q, k, v, keep, p)
        return out, p

    @staticmethod
    def backward(ctx, g_out, g_p):
        q, k, v, keep, p = ctx.saved_tensors
        need = ctx.needs_input_grad
        gq = gk = gv = gbias = None
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
