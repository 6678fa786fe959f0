"""Loss primitives: class-index cross entropy / nll (fused log_softmax + nll + label smoothing), binary cross
entropy with torch's gradient, and CTC (the forward-backward algorithm in log space, vectorised over the batch)."""
from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .reduce import _quiet


def _const(arr, like):
    """A Tensor (outside the graph) holding ``arr`` on ``like``'s device."""
    return Tensor._make(arr, _dtype.from_numpy_dtype(arr.dtype), like.device)


def _log_softmax(xp, x):
    s = x - xp.amax(x, axis=1, keepdims=True)
    s -= xp.log(xp.sum(xp.exp(s), axis=1, keepdims=True))
    return s


class ClassNLL(Function):
    """Loss of ``(M, C)`` scores against ``(M,)`` class indices: ``-w[t] * logp[t]`` per row, where ``logp`` is
    ``log_softmax(x)`` (``logits``) or ``x`` itself, mixed with ``label_smoothing`` of the uniform target; rows whose
    target is ``ignore_index`` count for nothing. ``reduction`` 'mean' divides by the summed weights of the rows.

    The gradient is ``gi * (softmax(x) * a - b)`` (logits) or ``-gi * b``, with ``b`` the weighted (smoothed)
    target distribution and ``a`` its row sum.
    """
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, smoothing, logits, half=None):
        xp = ctx.xp
        m, c = x.shape
        valid = target != ignore_index
        t = xp.where(valid, target, 0)
        if m and c:
            bad = valid & ((target < 0) | (target >= c))
            if bad.any():
                raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
        elif m and valid.any():
            raise IndexError(f"Target {int(target[valid][0])} is out of bounds.")
        with _quiet(xp):
            logp = _log_softmax(xp, x) if logits else x
        w = None if weight is None else weight.astype(x.dtype, copy=False)
        wt = valid.astype(x.dtype) if w is None else w[t] * valid
        picked = xp.take_along_axis(logp, t[:, None], axis=1)[:, 0] if c else xp.zeros(m, x.dtype)
        with _quiet(xp):  # an ignored row counts 0, even where its log-probabilities are -inf
            loss = xp.where(valid, -picked * wt, 0)
            if smoothing:
                smooth = xp.where(valid, -(logp.sum(axis=1) if w is None else logp @ w), 0)
                loss = loss * (1 - smoothing) + smooth * (smoothing / c)
        total = None
        if reduction != "none":
            loss = loss.sum()
            if reduction == "mean":
                total = wt.sum()
                if half is not None and w is None:  # torch counts a half input's rows in its dtype: 257 as 256
                    total = total.astype(half).astype(x.dtype)
                with _quiet(xp):  # nothing counted: NaN, the smoothing term included
                    loss = loss / total if total else loss * xp.nan
        ctx.reduction, ctx.smoothing, ctx.logits, ctx.total = reduction, smoothing, logits, total
        ctx.t, ctx.valid, ctx.wt, ctx.w = t, valid, wt, w
        if ctx.needs_input_grad[0]:
            ctx.logp = logp if logits else None
            ctx.save_for_backward(x)
        return xp.asarray(loss, dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        xp = ctx.xp
        m, c = x.shape
        eps, t, valid, wt, w = ctx.smoothing, ctx.t, ctx.valid, ctx.wt, ctx.w
        rows = xp.arange(m)
        undefined = None  # counted rows whose weights sum to 0: their gradient is 0 / 0, NaN
        if ctx.reduction == "mean":  # nothing counts when every row is ignored: a zero gradient, as torch's
            total = float(ctx.total)
            gi = grad / total if total else grad * 0
            if not total and valid.any():
                undefined = valid[:, None] if ctx.logits else valid[:, None] & (xp.arange(c) == t[:, None])
        else:
            gi = grad
        # b: the weighted (smoothed) target distribution of each row; a: its row sums
        a = wt * (1 - eps)
        if eps:
            a = a + valid * ((eps / c) * (c if w is None else w.sum()))
        if grad_enabled():  # create_graph: the same formula on Tensors, differentiable in x and grad
            b = xp.zeros((m, c), x._data.dtype)
            b[rows, t] = wt * (1 - eps)
            if eps:
                b += (valid * (eps / c))[:, None] * (1 if w is None else w)
            gi = gi.reshape(-1, 1) if gi.ndim else gi
            if not ctx.logits:
                out = -gi * _const(b, x)
            else:
                out = gi * (x.softmax(1) * _const(a[:, None].astype(b.dtype), x) - _const(b, x))
            return (out if undefined is None else out.masked_fill(_const(undefined, x), float("nan"))), None, None
        work = x._data.dtype if x.dtype not in (_dtype.float16, _dtype.bfloat16) else xp.float32
        g = gi._data.astype(work)
        g = g[:, None] if g.ndim else g
        if ctx.logits:
            out = xp.exp(ctx.logp)
            out *= a[:, None] * g
        else:
            out = xp.zeros((m, c), work)
        out[rows, t] -= (wt * (1 - eps) * (g[:, 0] if g.ndim else g)).astype(work)
        if eps:
            out -= ((valid * (eps / c))[:, None] * g) * (1 if w is None else w)
        if undefined is not None:
            out = xp.where(undefined, xp.nan, out)
        return Tensor._make(out.astype(x._data.dtype, copy=False), x.dtype, x.device), None, None


class BinaryCrossEntropy(Function):
    """Elementwise ``-w * (t * log(x) + (1 - t) * log(1 - x))`` with the logs clamped to >= -100, and torch's
    gradient ``w * (x - t) / max(x * (1 - x), 1e-12)``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, t, w):
        xp = ctx.xp
        if x.size and not ((x >= 0) & (x <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
        if t.size and not ((t >= 0) & (t <= 1)).all():
            raise RuntimeError("all elements of target should be between 0 and 1")
        ctx.save_for_backward(x, t, w)
        with _quiet(xp):
            loss = (t - 1) * xp.maximum(xp.log1p(-x), -100) - t * xp.maximum(xp.log(x), -100)
        return loss if w is None else loss * w

    @staticmethod
    def backward(ctx, grad):
        x, t, w = ctx.saved_tensors
        g = grad if w is None else grad * w
        # the clamp is 1e-12 rounded to float32, in every dtype
        gx = g * (x - t) / ((1 - x) * x).clamp_min(9.999999960041972e-13) if ctx.needs_input_grad[0] else None
        gt = -g * x.logit() if ctx.needs_input_grad[1] else None
        return gx, gt, None


class CTC(Function):
    """Per-sample negative log likelihood of the CTC alignments of ``targets`` (``(N, S)`` padded) under
    ``log_probs`` ``(T, N, C)``, and torch's gradient ``exp(lp) - exp(log(alpha * beta) - lp + nll)``."""

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        xp = ctx.xp
        lp = log_probs
        big_t, n, _ = lp.shape
        s = 2 * (int(target_lengths.max()) if n else 0) + 1
        # the extended label sequence: blanks around every target
        ext = xp.full((n, s), blank, dtype=xp.int64)
        if s > 1:
            ext[:, 1::2] = targets[:, : (s - 1) // 2]
        pos = xp.arange(s)
        inside = pos[None, :] < (2 * target_lengths[:, None] + 1)  # (N, S') positions of each sample's path
        # a skip from s-2 is allowed onto a label that differs from the label two back
        skip = xp.zeros((n, s), bool)
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        rows = xp.arange(n)[:, None]
        neg_inf = xp.asarray(-xp.inf, lp.dtype)
        emit = lambda t: lp[t][rows, ext]  # (N, S') log-probability of each position's label at time t
        alpha = xp.full((big_t, n, s), neg_inf, lp.dtype)
        with _quiet(xp):
            if big_t:
                alpha[0, :, :2] = emit(0)[:, :2]
                alpha[0] = xp.where(inside & (pos < 2), alpha[0], neg_inf)
            for t in range(1, big_t):
                a = alpha[t - 1]
                acc = a.copy()
                acc[:, 1:] = xp.logaddexp(acc[:, 1:], a[:, :-1])
                acc[:, 2:] = xp.where(skip[:, 2:], xp.logaddexp(acc[:, 2:], a[:, :-2]), acc[:, 2:])
                alpha[t] = xp.where(inside, acc + emit(t), neg_inf)
            last = xp.clip(input_lengths - 1, 0, None)
            end = alpha[last, xp.arange(n)] if big_t else xp.full((n, s), neg_inf, lp.dtype)
            l2 = 2 * target_lengths
            ll = xp.logaddexp(end[xp.arange(n), l2], xp.where(l2 > 0, end[xp.arange(n), xp.maximum(l2 - 1, 0)],
                                                                 neg_inf))
        nll = -ll
        if big_t == 0 or n == 0:
            nll = xp.where(target_lengths > 0, xp.inf, 0.0).astype(lp.dtype) if n else nll
        ctx.args = (ext, inside, skip, alpha, nll, blank, zero_infinity)
        ctx.save_for_backward(log_probs, input_lengths, target_lengths)
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, input_lengths, target_lengths = ctx.saved_tensors
        ext, inside, skip, alpha, nll, blank, zero_infinity = ctx.args
        xp = ctx.xp
        lp, il, tl = log_probs._data, input_lengths._data, target_lengths._data
        big_t, n, c = lp.shape
        s = ext.shape[1]
        rows = xp.arange(n)[:, None]
        neg_inf = xp.asarray(-xp.inf, lp.dtype)
        l2 = 2 * tl
        pos = xp.arange(s)
        start = (pos[None, :] == l2[:, None]) | ((pos[None, :] == l2[:, None] - 1) & (l2[:, None] > 0))
        # skips backwards: from s+2 onto s, where the label at s+2 may be reached from s
        skip_back = xp.zeros((n, s), bool)
        skip_back[:, :-2] = skip[:, 2:]
        betas = xp.full((big_t, n, s), neg_inf, lp.dtype)
        beta = betas[0]
        with _quiet(xp):
            for t in range(big_t - 1, -1, -1):
                e = lp[t][rows, ext]
                acc = beta.copy()
                acc[:, :-1] = xp.logaddexp(acc[:, :-1], beta[:, 1:])
                acc[:, :-2] = xp.where(skip_back[:, :-2], xp.logaddexp(acc[:, :-2], beta[:, 2:]), acc[:, :-2])
                first = (t == il - 1)[:, None] & start
                beta = betas[t] = xp.where(first, e, xp.where((t < il - 1)[:, None] & inside, acc + e, neg_inf))
            # log of the summed alpha * beta over the positions that carry each label: (T, N, C)
            ab = alpha + betas
            mx = ab.max(axis=2, keepdims=True) if s else ab[..., :1]
            mx = xp.where(xp.isfinite(mx), mx, 0)
            onehot = (ext[:, :, None] == xp.arange(c)).astype(lp.dtype)  # (N, S', C)
            lcab = xp.log(xp.einsum("tns,nsc->tnc", xp.exp(ab - mx), onehot)) + mx
            g = xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)
        g = xp.where((xp.arange(big_t)[:, None] < il[None, :])[:, :, None], g, 0)
        if zero_infinity:
            g = xp.where(xp.isinf(nll)[None, :, None], 0, g)
        g = Tensor._make(g.astype(lp.dtype, copy=False), log_probs.dtype, log_probs.device)
        if grad_enabled():  # create_graph: differentiable in the incoming gradient
            return g * grad.reshape(1, n, 1), None, None, None
        with _quiet(xp):  # impossible alignments have NaN gradients, as torch's
            g._data *= grad._data.reshape(1, n, 1)
        return g, None, None, None
