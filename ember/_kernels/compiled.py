"""Fused CPU loops compiled by numba (installed with the ``numba`` extra) for formulas NumPy runs as many passes.

``kernel(name, size)`` is the compiled loop, or None where numba is missing or the arrays are too small to be worth
loading it (``MIN_SIZE``); the caller then runs its NumPy reference, which the tests compare each loop against.
The loops release the GIL, so the callers run them on blocks spread over the intra-op threads. They are compiled
for the dtypes they are first called with, once per machine (numba's cache), and keep NaN and inf semantics (no
``nnan``/``ninf`` fast-math): only reassociation, contraction and reciprocals are allowed, so that sums vectorize.
"""
import math

import numpy as np

MIN_SIZE = 1 << 14  # elements below which the NumPy reference runs (and numba is not imported for it)
_FLAGS = {"reassoc", "contract", "arcp", "nsz"}
_ROUNDED = {"resample_axis", "resample_axis_adjoint"}  # loops whose products are rounded before they are added
_EXACT = {"grid_coords_2d", "add_scaled"}  # loops that round every operation as written (no fast-math at all)
_compiled = {}


def kernel(name, size):
    """The compiled loop ``name`` (a function of this module, less its leading underscore), or None."""
    if size < MIN_SIZE:
        return None
    fn = _compiled.get(name, False)
    if fn is False:
        try:
            import numba
        except ImportError:
            fn = None
        else:
            flags = _FLAGS - {"contract"} if name in _ROUNDED else set() if name in _EXACT else _FLAGS
            fn = numba.njit(nogil=True, fastmath=flags, error_model="numpy", cache=True)(globals()["_" + name])
        _compiled[name] = fn
    return fn


# -- GELU (float32) ---------------------------------------------------------------------------------------------------
# 1 - Phi(|x|) = e * t * poly(t), t = 1 / (|x| + 1 / P), e = exp(-x^2 / 2), to 7.5e-8 (Abramowitz & Stegun
# 26.2.17, its coefficients B scaled to this form and by 1 / sqrt(2 pi)); nn_ops._gelu_f32_numpy is the reference.
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
GELU_P = 0.2316419
GELU_B = tuple(c / GELU_P ** (k + 1) * _INV_SQRT_2PI for k, c in
               enumerate((0.319381530, -0.356563782, 1.781477937, -1.821255978, 1.330274429)))
_B0, _B1, _B2, _B3, _B4 = (np.float32(c) for c in GELU_B)
_INV_P, _S = np.float32(1 / GELU_P), np.float32(_INV_SQRT_2PI)
_HALF = np.float32(0.5)


def _half_square(x, out):
    """``out = -x^2 / 2``."""
    for i in range(x.size):
        out[i] = -_HALF * x[i] * x[i]


def _gelu_f32(x, e, y):
    """``y = x Phi(x)`` from ``e = exp(-x^2 / 2)``."""
    for i in range(x.size):
        v = x[i]
        t = np.float32(1) / (abs(v) + _INV_P)
        h = _HALF - ((((_B4 * t + _B3) * t + _B2) * t + _B1) * t + _B0) * t * e[i]  # |Phi(x) - 1/2|
        y[i] = v * (_HALF + (h if v >= 0 else -h))


def _gelu_f32_grad(x, e, y, d):
    """``y = x Phi(x)`` and ``d = Phi(x) + x phi(x)`` from ``e = exp(-x^2 / 2)``."""
    for i in range(x.size):
        v = x[i]
        ei = e[i]
        t = np.float32(1) / (abs(v) + _INV_P)
        h = _HALF - ((((_B4 * t + _B3) * t + _B2) * t + _B1) * t + _B0) * t * ei
        p = _HALF + (h if v >= 0 else -h)
        y[i] = v * p
        d[i] = p + v * ei * _S


# -- layer norm / RMS norm over the rows of an (M, N) array -----------------------------------------------------------
def _norm_rows(x, w, b, eps, center, y, mean, var):
    """Normalizes each row of ``x`` into ``y`` (``* w + b``), writing each row's mean (if ``center``, else 0 is
    used) and variance (its mean square without ``center``)."""
    m, n = x.shape
    for r in range(m):
        mu = 0.0
        if center:
            for j in range(n):
                mu += x[r, j]
            mu /= n
        s = 0.0
        for j in range(n):
            c = x[r, j] - mu
            s += c * c
        s /= n
        mean[r] = mu
        var[r] = s
        rstd = 1 / math.sqrt(var[r] + eps)
        for j in range(n):
            y[r, j] = (x[r, j] - mu) * rstd * w[j] + b[j]


def _norm_rows_grad(g, x, w, mean, var, eps, center, gx, gw, gb):
    """The gradients of ``norm_rows``: writes ``gx`` (if it has rows) and adds the rows' ``g * xhat`` and ``g``
    to the float64 ``gw`` and ``gb``."""
    m, n = x.shape
    want_x = gx.shape[0] == m
    for r in range(m):
        mu = mean[r]
        rstd = 1 / math.sqrt(var[r] + eps)
        a = 0.0
        c = 0.0
        for j in range(n):
            xh = (x[r, j] - mu) * rstd
            gxh = g[r, j] * w[j]
            a += gxh * xh
            c += gxh
            gw[j] += g[r, j] * xh
            gb[j] += g[r, j]
        if want_x:
            a /= n
            c = c / n if center else 0.0
            for j in range(n):
                xh = (x[r, j] - mu) * rstd
                gx[r, j] = (g[r, j] * w[j] - xh * a - c) * rstd


# -- convolution columns (2-D) -----------------------------------------------------------------------------------------
def _add_windows_2d(cols, kh, kw, sh, sw, dh, dw, oh, out):
    """Adds the columns ``cols`` (C * kh * kw, oh * ow * B), batch last, into the padded images ``out``
    (C, H, W, B) at their windows (col2im: the adjoint of copying each window out of the images)."""
    c_, b_ = out.shape[0], out.shape[3]
    ow = cols.shape[1] // (oh * b_)
    for c in range(c_):
        for i in range(kh):
            for j in range(kw):
                row = (c * kh + i) * kw + j
                for oy in range(oh):
                    iy = oy * sh + i * dh
                    for ox in range(ow):
                        ix = ox * sw + j * dw
                        base = (oy * ow + ox) * b_
                        for b in range(b_):
                            out[c, iy, ix, b] += cols[row, base + b]


# -- add / sub with alpha ----------------------------------------------------------------------------------------------
def _add_scaled(a, b, alpha, out):
    """``out = a + alpha * b`` of flat float32 arrays, rounded once to float32 (``alpha`` a float64 holding a
    float32, so the product is exact). ``binary.add_scaled_numpy`` is the reference."""
    for i in range(a.size):
        out[i] = np.float32(np.float64(a[i]) + alpha * np.float64(b[i]))


# -- optimizer steps ---------------------------------------------------------------------------------------------------
def _sgd(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """One SGD step of the flat parameter ``p`` from its gradient ``g``, in one pass: ``buf`` is the momentum buffer
    (started from the gradient on the ``first`` step; unused without momentum). ``optim.sgd._step_numpy`` is the
    reference."""
    for i in range(p.size):
        d = -g[i] if maximize else g[i]
        if weight_decay != 0:
            d += weight_decay * p[i]
        if momentum != 0:
            b = d if first else buf[i] * momentum + (1 - dampening) * d
            buf[i] = b
            d = d + momentum * b if nesterov else b
        p[i] -= lr * d


# -- max-pool routing (2-D) --------------------------------------------------------------------------------------------
def _scatter_windows_2d(g, arg, dy, dx, sh, sw, ph, pw, disjoint, out):
    """Adds each window's value ``g`` (N, oh, ow) into the element of ``out`` (N, H, W) that its window position
    ``arg`` points at: row ``oy * sh - ph + dy[arg]``, column ``ox * sw - pw + dx[arg]`` (positions outside ``out``,
    in the padding, are dropped). ``disjoint`` windows are written rather than added. ``pool.WindowScatter`` holds
    the reference."""
    n_, oh, ow = g.shape
    h_, w_ = out.shape[1], out.shape[2]
    for n in range(n_):
        for oy in range(oh):
            y0 = oy * sh - ph
            for ox in range(ow):
                p = arg[n, oy, ox]
                iy = y0 + dy[p]
                ix = ox * sw - pw + dx[p]
                if 0 <= iy < h_ and 0 <= ix < w_:
                    if disjoint:
                        out[n, iy, ix] = g[n, oy, ox]
                    else:
                        out[n, iy, ix] += g[n, oy, ox]


# -- sampling at points (grid_sample, 2-D) -----------------------------------------------------------------------------
def _grid_coords_2d(grid, k, align, pad, nearest, px, py, mx, my):
    """The pixel coordinates ``px``, ``py`` (N, P) of the normalised locations ``grid`` (N, P, 2) in an image, and
    their derivatives ``mx``, ``my`` by the grid's x and y (0 where the padding clips). ``k`` (2, 10) holds, for x
    then y, the constants (1, 0, 2, 0.5, (size - 1) / 2, size / 2, low, span, size - 1, quick) of the image's width or
    height, low and span being those of the reflection, ``quick`` the distances below which the reflection's
    remainder is exact without fmod (2 ** mantissa digits - 2 * span); ``pad``: 0 zeros, 1 border, 2 reflection;
    ``nearest``: rounded (half to even). ``sample.grid_coords_numpy`` is the reference."""
    n_, p_ = px.shape
    for n in range(n_):
        for p in range(p_):
            for a in range(2):
                out = px if a == 0 else py
                one, zero, two, half_one, scale, half, low, span, hi, quick = k[a, 0], k[a, 1], k[a, 2], k[a, 3], \
                    k[a, 4], k[a, 5], k[a, 6], k[a, 7], k[a, 8], k[a, 9]
                v = grid[n, p, a] + one
                if align:
                    c, m = v * scale, scale
                else:  # one rounding after the product and the difference
                    out[n, p] = np.float64(v) * np.float64(half) - 0.5
                    c, m = out[n, p], half
                if pad == 2:
                    if span == zero:
                        c, m = zero, zero
                    else:
                        d = c - low
                        if d < zero:
                            m = -m
                        d = abs(d)
                        flips = np.floor(d / span)
                        if d < quick:  # fmod(d, span), faster: the quotient is at most 1 too large, the rest exact
                            extra = d - flips * span
                            if extra < zero:
                                extra += span
                        else:
                            extra = np.fmod(d, span)
                        if flips - two * np.floor(flips * half_one) == zero:  # an even number of flips
                            c = extra + low
                        else:
                            c, m = span - extra + low, -m
                if pad != 0 and not (c > zero and c < hi):  # clipped (NaN to 0): no derivative
                    c, m = hi if c >= hi else zero, zero
                out[n, p] = np.rint(c) if nearest else c
                if a == 0:
                    mx[n, p] = m
                else:
                    my[n, p] = m


def _neighbours_2d(px, py, h, w, one, idx, wt, dist):
    """Per point of the pixel coordinates ``px``, ``py`` (N, P): the flat indices ``idx`` (K, N, P) of its
    neighbours in an (h, w) image (-1 outside), their weights ``wt`` and, for K = 4 (bilinear: north-west,
    north-east, south-west, south-east), the distances ``dist`` (fy, 1 - fy, fx, 1 - fx) to them; K = 1: the pixel
    at the (rounded) point, weight 1. ``sample._neighbours_numpy`` is the reference."""
    k_, n_, p_ = idx.shape
    for n in range(n_):
        for p in range(p_):
            x, y = px[n, p], py[n, p]
            if k_ == 1:
                inside = x >= 0 and x < w and y >= 0 and y < h  # False for NaN
                idx[0, n, p] = int(y) * w + int(x) if inside else -1
                wt[0, n, p] = one
                continue
            x0, y0 = np.floor(x), np.floor(y)
            fx, fy = x - x0, y - y0
            ex, sy = one - fx, one - fy
            wt[0, n, p], wt[1, n, p], wt[2, n, p], wt[3, n, p] = sy * ex, sy * fx, fy * ex, fy * fx
            dist[0, n, p], dist[1, n, p], dist[2, n, p], dist[3, n, p] = fy, sy, fx, ex
            ix = int(x0) if x0 >= -1 and x0 < w else -2  # -2: neither column inside
            iy = int(y0) if y0 >= -1 and y0 < h else -2
            for k in range(4):
                cx, cy = ix + (k & 1), iy + (k >> 1)
                inside = ix > -2 and iy > -2 and cx >= 0 and cx < w and cy >= 0 and cy < h
                idx[k, n, p] = cy * w + cx if inside else -1


def _sample_points(x, idx, wt, zero, out):
    """``out[n, c, p] = sum over k of x[n, c, idx[k, n, p]] * wt[k, n, p]``, a value at index -1 (outside the
    image) being ``zero``: x (N, C, S), idx and wt (K, N, P), K = 4 or 1. ``sample.sample_points_numpy`` is the
    reference."""
    k_, n_, p_ = idx.shape
    for n in range(n_):
        for c in range(x.shape[1]):
            if k_ == 1:
                for p in range(p_):
                    i = idx[0, n, p]
                    out[n, c, p] = (x[n, c, i] if i >= 0 else zero) * wt[0, n, p]
                continue
            for p in range(p_):
                i0, i1, i2, i3 = idx[0, n, p], idx[1, n, p], idx[2, n, p], idx[3, n, p]
                v0 = x[n, c, i0] if i0 >= 0 else zero
                v1 = x[n, c, i1] if i1 >= 0 else zero
                v2 = x[n, c, i2] if i2 >= 0 else zero
                v3 = x[n, c, i3] if i3 >= 0 else zero
                out[n, c, p] = v0 * wt[0, n, p] + v1 * wt[1, n, p] + v2 * wt[2, n, p] + v3 * wt[3, n, p]


def _sample_points_grad(x, g, idx, wt, dist, zero, lanes, gx, gxy):
    """The gradients of ``sample_points`` under ``g`` (N, C, P): adds ``wt * g`` into ``gx`` (N, C, S) at the
    points' neighbours (if it has N rows), block of ``lanes`` points by block, one neighbour after the other within
    a block (the order of a vectorized loop); and, for 4 bilinear neighbours and ``gxy`` of N rows, the derivatives
    of the output by the points' x and y times ``g``, summed over the channels, into ``gxy[0]`` and ``gxy[1]`` (N,
    P); ``dist`` holds each point's distances (fy, 1 - fy, fx, 1 - fx) to its neighbours."""
    k_, n_, p_ = idx.shape
    want_x, want_xy = gx.shape[0] == n_, gxy.shape[1] == n_ and k_ == 4
    part = np.empty((k_, p_), gx.dtype)  # the products, rounded before they are added (no fused multiply-add)
    for n in range(n_):
        for c in range(x.shape[1]):
            if want_x:
                for k in range(k_):
                    for p in range(p_):
                        part[k, p] = wt[k, n, p] * g[n, c, p]
                for s in range(0, p_, lanes):
                    e = min(s + lanes, p_)
                    for k in range(k_):
                        for p in range(s, e):
                            i = idx[k, n, p]
                            if i >= 0:
                                gx[n, c, i] += part[k, p]
    if not want_xy:
        return
    for n in range(n_):
        for c in range(x.shape[1]):
            for p in range(p_):
                go = g[n, c, p]
                i = idx[0, n, p]
                nw = x[n, c, i] if i >= 0 else zero
                i = idx[1, n, p]
                ne = x[n, c, i] if i >= 0 else zero
                i = idx[2, n, p]
                sw = x[n, c, i] if i >= 0 else zero
                i = idx[3, n, p]
                se = x[n, c, i] if i >= 0 else zero
                gxy[0, n, p] += ((ne - nw) * dist[1, n, p] + (se - sw) * dist[0, n, p]) * go
                gxy[1, n, p] += ((sw - nw) * dist[3, n, p] + (se - ne) * dist[2, n, p]) * go


# -- resampling along one axis (interpolate) ---------------------------------------------------------------------------
def _resample_axis(x, idx, wt, out):
    """``out[a, o, b] = sum over t of x[a, idx[t, o], b] * wt[t, o]``: x (A, n_in, B), idx and wt (T, n_out).
    ``upsampling.Resample`` holds the reference."""
    a_, b_ = x.shape[0], x.shape[2]
    t_, o_ = idx.shape
    if b_ == 1:  # the last axis: tap by tap over a row (a gather that vectorizes)
        for a in range(a_):
            for t in range(t_):
                for o in range(o_):
                    v = x[a, idx[t, o], 0] * wt[t, o]
                    out[a, o, 0] = v if t == 0 else out[a, o, 0] + v
        return
    for a in range(a_):
        for o in range(o_):
            i, w = idx[0, o], wt[0, o]
            for b in range(b_):
                out[a, o, b] = x[a, i, b] * w
            for t in range(1, t_):
                i, w = idx[t, o], wt[t, o]
                for b in range(b_):
                    out[a, o, b] += x[a, i, b] * w


def _resample_axis_adjoint(g, idx, wt, out):
    """The adjoint of ``resample_axis``: adds ``g[a, o, b] * wt[t, o]`` into the zeros ``out[a, idx[t, o], b]``."""
    a_, b_ = g.shape[0], g.shape[2]
    t_, o_ = idx.shape
    if b_ == 1:
        for a in range(a_):
            for t in range(t_):
                for o in range(o_):
                    out[a, idx[t, o], 0] += g[a, o, 0] * wt[t, o]
        return
    for a in range(a_):
        for o in range(o_):
            for t in range(t_):
                i, w = idx[t, o], wt[t, o]
                for b in range(b_):
                    out[a, i, b] += g[a, o, b] * w
