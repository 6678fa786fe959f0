"""Recurrent layers: one direction of one RNN/LSTM/GRU layer over a whole (packed) sequence as one primitive.

The input projections of all time steps come in precomputed (one GEMM outside); per step the primitive does the
hidden GEMM and the gate math in place on raw arrays, and its backward runs the reverse loop the same way, leaving
the weight gradients to one GEMM over all steps. Sequences are time-major and packed: step ``t`` holds rows
``offsets[t]:offsets[t] + batch_sizes[t]`` (a padded batch is the packed case with equal batch sizes).
"""
from .._device import special_module
from ..autograd.function import Function
from ..autograd.grad_mode import STATE, enable_grad
from .matmul import constant
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
        sig = special_module(xp).expit
        N, H = xg.shape[0], w_hh.shape[0] // GATES[mode]
        dt = xg.dtype
        whh_t = xp.ascontiguousarray(w_hh.T)
        whr_t = None if w_hr is None else xp.ascontiguousarray(w_hr.T)
        h = h0.copy()
        out = xp.empty((N, h0.shape[1]), dt)
        hprev = xp.empty_like(out)
        acts = out if mode[:3] == "RNN" else xp.empty((N, w_hh.shape[0]), dt)  # activated gates
        c = cprev = cs = hu = ghn = None
        if mode == "LSTM":
            c = c0.copy()
            cprev, cs = xp.empty((N, H), dt), xp.empty((N, H), dt)
            hu = xp.empty((N, H), dt) if w_hr is not None else None
        elif mode == "GRU":
            ghn = xp.empty((N, H), dt)
        offs = _offsets(batch_sizes)
        with _quiet(xp):
            for t in _steps(batch_sizes, reverse):
                b = batch_sizes[t]
                rows = slice(offs[t], offs[t] + b)
                hp = h[:b]
                hprev[rows] = hp
                a = acts[rows]
                xp.matmul(hp, whh_t, out=a)
                if b_hh is not None:
                    a += b_hh
                if mode == "GRU":
                    x = xg[rows]
                    ghn[rows] = a[:, 2 * H:]
                    a[:, :2 * H] += x[:, :2 * H]
                    sig(a[:, :2 * H], out=a[:, :2 * H])  # r, z
                    n = a[:, 2 * H:]
                    n *= a[:, :H]
                    n += x[:, 2 * H:]
                    xp.tanh(n, out=n)
                    new = hp - n  # h' = n + z * (h - n)
                    new *= a[:, H:2 * H]
                    new += n
                    out[rows] = new
                    h[:b] = new
                    continue
                a += xg[rows]
                if mode == "RNN_TANH":
                    xp.tanh(a, out=a)
                elif mode == "RNN_RELU":
                    xp.maximum(a, 0, out=a)
                if mode != "LSTM":
                    h[:b] = a
                    continue
                sig(a[:, :2 * H], out=a[:, :2 * H])  # i, f
                xp.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])  # g
                sig(a[:, 3 * H:], out=a[:, 3 * H:])  # o
                cp = c[:b]
                cprev[rows] = cp
                cn = cs[rows]
                xp.multiply(a[:, H:2 * H], cp, out=cn)
                cn += a[:, :H] * a[:, 2 * H:3 * H]
                c[:b] = cn
                new = xp.tanh(cn)
                new *= a[:, 3 * H:]
                if w_hr is not None:
                    hu[rows] = new
                    new = new @ whr_t
                out[rows] = new
                h[:b] = new
        ctx.save_for_backward(xg, h0, c0, w_hh, b_hh, w_hr, out, hprev, acts, cprev, cs, hu, ghn)
        return (out, h, c) if mode == "LSTM" else (out, h)

    @staticmethod
    def backward(ctx, d_out, d_hn, d_cn=None):
        saved = ctx.saved_tensors
        if STATE.enabled:  # create_graph: differentiate the Tensor-op recurrence instead, to any order
            return _composite_vjp(ctx, saved[:6], (d_out, d_hn, d_cn))
        xg, h0, c0, w_hh, b_hh, w_hr, out, hprev, acts, cprev, cs, hu, ghn = (
            None if s is None else s._data for s in saved)
        mode, batch_sizes = ctx.mode, ctx.batch_sizes
        xp = ctx.xp
        dt = acts.dtype
        N, B, H = out.shape[0], h0.shape[0], w_hh.shape[0] // GATES[mode]
        dh = xp.zeros_like(h0) if d_hn is None else d_hn._data.astype(dt, copy=True)
        dc = None
        if mode == "LSTM":
            dc = xp.zeros_like(c0) if d_cn is None else d_cn._data.astype(dt, copy=True)
        dout = None if d_out is None else d_out._data.astype(dt, copy=False)
        dpre = xp.empty((N, w_hh.shape[0]), dt)  # gradient of the gate pre-activations (= of xg)
        dgh = xp.empty_like(dpre) if mode == "GRU" else dpre  # of h @ w_hh^T + b_hh
        dproj = xp.empty_like(out) if w_hr is not None else None
        offs = _offsets(batch_sizes)
        with _quiet(xp):
            for t in reversed(_steps(batch_sizes, ctx.reverse)):
                b = batch_sizes[t]
                rows = slice(offs[t], offs[t] + b)
                g = dh[:b] if dout is None else dh[:b] + dout[rows]
                a, d = acts[rows], dpre[rows]
                if mode == "RNN_TANH":
                    xp.multiply(g, 1 - a * a, out=d)
                elif mode == "RNN_RELU":
                    xp.multiply(g, a > 0, out=d)
                elif mode == "LSTM":
                    if w_hr is not None:
                        dproj[rows] = g
                        g = g @ w_hr
                    i, f, gg, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
                    tc = xp.tanh(cs[rows])
                    dct = g * o
                    dct *= 1 - tc * tc
                    dct += dc[:b]
                    xp.multiply(g * tc, o * (1 - o), out=d[:, 3 * H:])
                    xp.multiply(dct * gg, i * (1 - i), out=d[:, :H])
                    xp.multiply(dct * cprev[rows], f * (1 - f), out=d[:, H:2 * H])
                    xp.multiply(dct * i, 1 - gg * gg, out=d[:, 2 * H:3 * H])
                    dc[:b] = dct * f
                else:  # GRU
                    r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
                    dn = g * (1 - z)
                    dn *= 1 - n * n
                    d[:, 2 * H:] = dn
                    dgh_t = dgh[rows]
                    xp.multiply(dn, r, out=dgh_t[:, 2 * H:])
                    xp.multiply(dn * ghn[rows], r * (1 - r), out=d[:, :H])
                    xp.multiply(g * (hprev[rows] - n), z * (1 - z), out=d[:, H:2 * H])
                    dgh_t[:, :2 * H] = d[:, :2 * H]
                    dh[:b] = g * z + dgh_t @ w_hh
                    continue
                dh[:b] = d @ w_hh
        need = ctx.needs_input_grad
        wrap = lambda arr: constant(arr, saved[1])  # noqa: E731
        grads = [wrap(dpre) if need[0] else None, wrap(dh) if need[1] else None,
                 wrap(dc) if need[2] else None, wrap(dgh.T @ hprev) if need[3] else None,
                 wrap(dgh.sum(0)) if need[4] else None, wrap(dproj.T @ hu) if need[5] else None]
        return tuple(grads)


# -- the same recurrence in Tensor ops: the reference, and what create_graph differentiates ------------------------
def cell(mode, gx, h, c, w_hh, b_hh, w_hr=None):
    """One step: ``gx`` the input projection (with ``bias_ih``). Returns ``(h', c')`` (``c'`` None unless LSTM)."""
    gh = h @ w_hh.mT
    if b_hh is not None:
        gh = gh + b_hh
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
    out = cat(outs) if outs else xg[:, :h0.shape[1]] * 0
    return (out, h, c) if mode == "LSTM" else (out, h)


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
    return Recurrence.apply(xg, h0, c0, w_hh, b_hh, w_hr, mode=mode, batch_sizes=tuple(batch_sizes),
                            reverse=reverse)
