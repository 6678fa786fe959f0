"""``cupyx.scipy.special`` with SciPy's values (those of ember's CPU path and of torch) where CuPy's differ.

CuPy's Bessel functions are CUDA's, which give 0 or ±inf at ±inf where SciPy gives NaN, and its exponentially
scaled ones multiply ``exp(-|x|)`` by an I0 or I1 that overflows: NaN from |x| ~ 89 in float32 (713 in float64),
where SciPy's are finite. Here those are computed in float64 up to |x| = 700, and past it from their asymptotic
series, whose eight terms are exact to float64's precision there.
"""
import math

import numpy as np

_SERIES_FROM = 700.0


def _series(nu, terms=8):
    """Coefficients c_k of ``I_nu(t) exp(-t) ~ sum(c_k / t**k) / sqrt(2 pi t)`` for large t."""
    c, out = 1.0, [1.0]
    for k in range(1, terms):
        c *= -(4 * nu * nu - (2 * k - 1) ** 2) / (8 * k)
        out.append(c)
    return out


_I0E_SERIES, _I1E_SERIES = _series(0), _series(1)


class CudaSpecial:
    """``cupyx.scipy.special`` (``sp``, for the array module ``xp``) with SciPy's values for the functions below."""

    def __init__(self, sp, xp):
        self._sp, self._xp = sp, xp

    def __getattr__(self, name):
        return getattr(self._sp, name)

    def _nan_at_inf(self, fn, x):
        return self._xp.where(self._xp.isinf(x), math.nan, fn(x))

    def i0(self, x):
        return self._nan_at_inf(self._sp.i0, x)

    def i1(self, x):
        return self._nan_at_inf(self._sp.i1, x)

    def j0(self, x):
        return self._nan_at_inf(self._sp.j0, x)

    def j1(self, x):
        return self._nan_at_inf(self._sp.j1, x)

    def y0(self, x):
        return self._nan_at_inf(self._sp.y0, x)

    def y1(self, x):
        return self._nan_at_inf(self._sp.y1, x)

    def _scaled(self, bessel, series, x):
        """``exp(-|x|) * bessel(|x|)`` in float64, from ``series`` past ``_SERIES_FROM``; in x's float dtype."""
        xp = self._xp
        t = xp.abs(x).astype(np.float64)
        near = xp.minimum(t, _SERIES_FROM)  # NaN stays NaN
        u = 1 / xp.maximum(t, _SERIES_FROM)
        far = series[-1]
        for c in reversed(series[:-1]):
            far = far * u + c
        far = far * xp.sqrt(u / (2 * math.pi))
        y = xp.where(t > _SERIES_FROM, far, xp.exp(-near) * bessel(near))
        return y.astype(x.dtype if x.dtype.kind == "f" and x.dtype.itemsize >= 4 else np.float64, copy=False)

    def i0e(self, x):
        return self._scaled(self._sp.i0, _I0E_SERIES, x)

    def i1e(self, x):
        y = self._scaled(self._sp.i1, _I1E_SERIES, x)
        return self._xp.where(x < 0, -y, y)  # +0 at -0, as SciPy
