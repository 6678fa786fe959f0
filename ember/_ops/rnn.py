"""Recurrent layers: one direction of one RNN/LSTM/GRU layer over a whole (packed) sequence as one primitive.

The input projections of all time steps come in precomputed (one GEMM outside); per step the primitive does the
hidden GEMM and the gate math in place on raw arrays, and its backward runs the reverse loop the same way, leaving
the weight gradients to one GEMM over all steps. Sequences are time-major and packed: step ``t`` holds rows
``offsets[t]:offsets[t] + batch_sizes[t]`` (a padded batch is the packed case with equal batch sizes).
"""
from .. import _autocast
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled, enable_grad
from .matmul import addmm, constant
from .reduce import _quiet
from .shape import cat

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _offsets(batch_sizes):
    offs, o = [], 0
    for b in batch_sizes:
        offs.append(o)
        o += b
    return offs


def _steps(batch_sizes, reverse):
    n = len(batch_sizes)
    return range(n - 1, -1, -1) if reverse else range(n)


class Recurrence(Function):
    """Inputs ``xg`` (N, G*H) input projections with ``bias_ih``, ``h0`` (B, P), ``c0`` (B, H) or None (LSTM only),
    ``w_hh`` (G*H, P), ``b_hh`` (G*H,) or None, ``w_hr`` (P, H) or None (LSTM projections). Returns ``(output (N, P),
    h_n (B, P))``, plus ``c_n (B, H)`` for LSTM."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, xg, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse):
        xp = ctx.xp
        ctx.mode, ctx.batch_sizes, ctx.reverse = mode, batch_sizes, reverse
        ctx.set_materialize_grads(False)
        steps = [(b, slice(o, o + b)) for b, o in _ordered(batch_sizes, reverse)]
        h = h0.copy()
        c = None if c0 is None else c0.copy()
        with _quiet(xp):
            out, saved = _FORWARD[mode](xp, xg, h, c, xp.ascontiguousarray(w_hh.T), b_hh,
                                        None if w_hr is None else xp.ascontiguousarray(w_hr.T), steps)
        ctx.save_for_backward(xg, h0, c0, w_hh, b_hh, w_hr, out, *saved)
        return (out, h, c) if mode == "LSTM" else (out, h)

    @staticmethod
    def backward(ctx, d_out, d_hn, d_cn=None):
        saved = ctx.saved_tensors
        if grad_enabled():  # create_graph: differentiate the Tensor-op recurrence instead, to any order
            return _composite_vjp(ctx, saved[:6], (d_out, d_hn, d_cn))
        xg, h0, c0, w_hh, b_hh, w_hr, out, *rest = (None if s is None else s._data for s in saved)
        xp, dt = ctx.xp, out.dtype
        dh = xp.zeros_like(h0) if d_hn is None else d_hn._data.astype(dt, copy=True)
        dc = None
        if ctx.mode == "LSTM":
            dc = xp.zeros_like(c0) if d_cn is None else d_cn._data.astype(dt, copy=True)
        dout = None if d_out is None else d_out._data.astype(dt, copy=False)
        steps = [(b, slice(o, o + b)) for b, o in _ordered(ctx.batch_sizes, ctx.reverse)][::-1]
        with _quiet(xp):
            dpre, dgh, dproj, hu = _BACKWARD[ctx.mode](xp, out, rest, dout, dh, dc, w_hh, w_hr, steps)
        hprev = rest[0]
        need = ctx.needs_input_grad
        wrap = lambda arr: constant(arr, saved[1])  # noqa: E731
        return (wrap(dpre) if need[0] else None, wrap(dh) if need[1] else None, wrap(dc) if need[2] else None,
                wrap(dgh.T @ hprev) if need[3] else None, wrap(dgh.sum(0)) if need[4] else None,
                wrap(dproj.T @ hu) if need[5] else None)


def _ordered(batch_sizes, reverse):
    """``(batch size, first row)`` of each step in processing order."""
    offs = _offsets(batch_sizes)
    return [(batch_sizes[t], offs[t]) for t in _steps(batch_sizes, reverse)]


# Per mode: forward(xp, xg, h, c, w_hh^T, b_hh, w_hr^T, steps) -> (out, saved arrays), updating the states h and c
# in place; backward(xp, out, saved, dout, dh, dc, w_hh, w_hr, steps) -> (d xg, d (h @ w_hh^T + b_hh), d out before
# the projection, unprojected out), updating dh and dc in place. Sigmoids are 0.5 * tanh(x / 2) + 0.5: one fast
# ufunc instead of exp and a division.
def _rnn_forward(xp, xg, h, c, whh_t, b_hh, whr_t, steps, relu=False):
    out = xp.empty((xg.shape[0], h.shape[1]), xg.dtype)
    hprev = xp.empty_like(out)
    xb = xg if b_hh is None else xg + b_hh
    for b, rows in steps:
        hp = h[:b]
        hprev[rows] = hp
        a = out[rows]
        xp.matmul(hp, whh_t, out=a)
        a += xb[rows]
        if relu:
            xp.maximum(a, 0, out=a)
        else:
            xp.tanh(a, out=a)
        h[:b] = a
    return out, (hprev,)


def _rnn_backward(xp, out, saved, dout, dh, dc, w_hh, w_hr, steps, relu=False):
    deriv = (out > 0).astype(out.dtype) if relu else 1 - out * out
    dpre = xp.empty_like(out)
    for b, rows in steps:
        g = dh[:b] if dout is None else dh[:b] + dout[rows]
        d = dpre[rows]
        xp.multiply(g, deriv[rows], out=d)
        xp.matmul(d, w_hh, out=dh[:b])
    return dpre, dpre, None, None


def _lstm_forward(xp, xg, h, c, whh_t, b_hh, whr_t, steps):
    N, dt = xg.shape[0], xg.dtype
    H = c.shape[1]
    out = xp.empty((N, h.shape[1]), dt)
    hprev, acts = xp.empty_like(out), xp.empty_like(xg)  # acts: the activated gates i, f, g, o
    cprev, tanh_c = xp.empty((N, H), dt), xp.empty((N, H), dt)
    hu = xp.empty((N, H), dt) if whr_t is not None else None
    scale = xp.full(4 * H, 0.5, dt)  # sigmoid for i, f, o and tanh for g through one tanh of the whole row
    scale[2 * H:3 * H] = 1
    shift = 1 - scale
    xb = xg if b_hh is None else xg + b_hh
    for b, rows in steps:
        hp = h[:b]
        hprev[rows] = hp
        a = acts[rows]
        xp.matmul(hp, whh_t, out=a)
        a += xb[rows]
        a *= scale
        xp.tanh(a, out=a)
        a *= scale
        a += shift
        cb = c[:b]
        cprev[rows] = cb
        cb *= a[:, H:2 * H]
        cb += a[:, :H] * a[:, 2 * H:3 * H]
        tc = tanh_c[rows]
        xp.tanh(cb, out=tc)
        if whr_t is None:
            new = out[rows]
            xp.multiply(tc, a[:, 3 * H:], out=new)
        else:
            xp.multiply(tc, a[:, 3 * H:], out=hu[rows])
            new = out[rows]
            xp.matmul(hu[rows], whr_t, out=new)
        h[:b] = new
    return out, (hprev, acts, cprev, tanh_c, hu)


def _lstm_backward(xp, out, saved, dout, dh, dc, w_hh, w_hr, steps):
    hprev, acts, cprev, tanh_c, hu = saved
    H = cprev.shape[1]
    i, f, gg, o = acts[:, :H], acts[:, H:2 * H], acts[:, 2 * H:3 * H], acts[:, 3 * H:]
    deriv = acts * (1 - acts)  # of the activations, for all steps at once
    xp.subtract(1, gg * gg, out=deriv[:, 2 * H:3 * H])
    o_dtanh = o * (1 - tanh_c * tanh_c)
    dpre = xp.empty_like(acts)
    dproj = xp.empty_like(out) if w_hr is not None else None
    for b, rows in steps:
        g = dh[:b] if dout is None else dh[:b] + dout[rows]
        if w_hr is not None:
            dproj[rows] = g
            g = g @ w_hr
        dct = g * o_dtanh[rows]
        dct += dc[:b]
        d = dpre[rows]
        xp.multiply(dct, gg[rows], out=d[:, :H])
        xp.multiply(dct, cprev[rows], out=d[:, H:2 * H])
        xp.multiply(dct, i[rows], out=d[:, 2 * H:3 * H])
        xp.multiply(g, tanh_c[rows], out=d[:, 3 * H:])
        d *= deriv[rows]
        xp.multiply(dct, f[rows], out=dc[:b])
        xp.matmul(d, w_hh, out=dh[:b])
    return dpre, dpre, dproj, hu


def _gru_forward(xp, xg, h, c, whh_t, b_hh, whr_t, steps):
    out = xp.empty((xg.shape[0], h.shape[1]), xg.dtype)
    H = out.shape[1]
    hprev, acts, ghn = xp.empty_like(out), xp.empty_like(xg), xp.empty_like(out)  # acts: r, z, n
    for b, rows in steps:
        hp = h[:b]
        hprev[rows] = hp
        a = acts[rows]
        xp.matmul(hp, whh_t, out=a)
        if b_hh is not None:
            a += b_hh
        x = xg[rows]
        ghn[rows] = a[:, 2 * H:]
        rz = a[:, :2 * H]
        rz += x[:, :2 * H]
        rz *= 0.5
        xp.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        n = a[:, 2 * H:]
        n *= a[:, :H]
        n += x[:, 2 * H:]
        xp.tanh(n, out=n)
        new = out[rows]  # h' = n + z * (h - n)
        xp.subtract(hp, n, out=new)
        new *= a[:, H:2 * H]
        new += n
        h[:b] = new
    return out, (hprev, acts, ghn)


def _gru_backward(xp, out, saved, dout, dh, dc, w_hh, w_hr, steps):
    hprev, acts, ghn = saved
    H = out.shape[1]
    r, z, n = acts[:, :H], acts[:, H:2 * H], acts[:, 2 * H:]
    # per-step factors of the output gradient, for all steps at once
    n_factor = (1 - z) * (1 - n * n)
    r_factor = ghn * r * (1 - r)
    z_factor = (hprev - n) * z * (1 - z)
    dpre, dgh = xp.empty_like(acts), xp.empty_like(acts)
    for b, rows in steps:
        g = dh[:b] if dout is None else dh[:b] + dout[rows]
        d, e = dpre[rows], dgh[rows]
        dn = d[:, 2 * H:]
        xp.multiply(g, n_factor[rows], out=dn)
        xp.multiply(dn, r[rows], out=e[:, 2 * H:])
        xp.multiply(dn, r_factor[rows], out=d[:, :H])
        xp.multiply(g, z_factor[rows], out=d[:, H:2 * H])
        e[:, :2 * H] = d[:, :2 * H]
        direct = g * z[rows]
        xp.matmul(e, w_hh, out=dh[:b])
        dh[:b] += direct
    return dpre, dgh, None, None


_FORWARD = {"RNN_TANH": _rnn_forward, "LSTM": _lstm_forward, "GRU": _gru_forward,
            "RNN_RELU": lambda *a: _rnn_forward(*a, relu=True)}
_BACKWARD = {"RNN_TANH": _rnn_backward, "LSTM": _lstm_backward, "GRU": _gru_backward,
             "RNN_RELU": lambda *a: _rnn_backward(*a, relu=True)}


# -- the same recurrence in Tensor ops: the reference, and what create_graph differentiates ------------------------
def cell(mode, gx, h, c, w_hh, b_hh, w_hr=None):
    """One step: ``gx`` the input projection (with ``bias_ih``). Returns ``(h', c')`` (``c'`` None unless LSTM)."""
    gh = h @ w_hh.mT if b_hh is None else addmm(b_hh, h, w_hh.mT)
    if mode == "GRU":
        xr, xz, xn = gx.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return n + z * (h - n), None
    a = gx + gh
    if mode == "RNN_TANH":
        return a.tanh(), None
    if mode == "RNN_RELU":
        return a * (a > 0), None
    i, f, g, o = a.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else h @ w_hr.mT), c


def recurrence_reference(xg, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse):
    """``Recurrence`` step by step in Tensor ops."""
    offs = _offsets(batch_sizes)
    h, c, outs = h0, c0, [None] * len(batch_sizes)
    for t in _steps(batch_sizes, reverse):
        b = batch_sizes[t]
        hn, cn = cell(mode, xg[offs[t]:offs[t] + b], h[:b], None if c is None else c[:b], w_hh, b_hh, w_hr)
        outs[t] = hn
        h = hn if b == h.shape[0] else cat([hn, h[b:]])
        if c is not None:
            c = cn if b == c.shape[0] else cat([cn, c[b:]])
    return (cat(outs), h, c) if mode == "LSTM" else (cat(outs), h)


def _composite_vjp(ctx, inputs, grads):
    from ..autograd.engine import grad
    with enable_grad():
        outs = recurrence_reference(*inputs, mode=ctx.mode, batch_sizes=ctx.batch_sizes, reverse=ctx.reverse)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    wanted = [i for i, n in enumerate(ctx.needs_input_grad[:6]) if n]
    got = grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs], create_graph=True,
               allow_unused=True)
    result = [None] * 6
    for i, g in zip(wanted, got):
        result[i] = g
    return tuple(result)


def recurrence(xg, h0, c0, w_hh, b_hh, w_hr, mode, batch_sizes, reverse=False):
    """One direction of one layer: ``(output, h_n)`` or, for LSTM, ``(output, h_n, c_n)``; see ``Recurrence``."""
    if _autocast.ACTIVE.get() is not None:  # step by step, so that autocast casts each step's GEMM (as torch's cells)
        return recurrence_reference(xg, h0, c0, w_hh, b_hh, w_hr, mode, tuple(batch_sizes), reverse)
    return Recurrence.apply(xg, h0, c0, w_hh, b_hh, w_hr, mode=mode, batch_sizes=tuple(batch_sizes),
                            reverse=reverse)
