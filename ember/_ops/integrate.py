"""Numerical integration along a dimension by the trapezoidal rule: trapezoid (trapz) and cumulative_trapezoid."""

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid"]

from .. import _dtype
from .._creation import zeros
from .._tensor import wrap_dim
from .scan import cumsum


def _ends(t, d):
    """``t`` without its last and without its first entry along ``d`` (empty when ``t`` is)."""
    n = t.shape[d]
    return t.narrow(d, 0, max(n - 1, 0)), t.narrow(d, min(n, 1), max(n - 1, 0))


def _spacing(y, x, d):
    """The widths ``x[i + 1] - x[i]`` along ``d``, shaped to broadcast against ``y``'s intervals."""
    if x.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        x = x.reshape([-1 if i == d else 1 for i in range(y.ndim)])
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    left, right = _ends(x, d)
    return right - left


def _pairs(y, d):
    if y.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    left, right = _ends(y, d)
    return left + right


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at sample points ``x`` (a tensor) or spaced
    ``dx`` apart (default 1).

    Example::

        >>> ember.trapezoid(ember.tensor([1., 2., 3.]))
        tensor(4.)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received both x and dx")
    d = wrap_dim(dim, y.ndim)
    if y.shape[d] == 0:
        return zeros([s for i, s in enumerate(y.shape) if i != d], dtype=y.dtype, device=y.device)
    if x is not None:
        return (_spacing(y, x, d) * _pairs(y, d)).sum(d) / 2.0
    if y.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * (1.0 if dx is None else dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule (one entry fewer than ``y``), at sample
    points ``x`` or spaced ``dx`` apart (default 1).

    Example::

        >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 3.]))
        tensor([1.5000, 4.0000])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received both x and dx")
    d = wrap_dim(dim, y.ndim)
    if x is not None:
        return cumsum(_spacing(y, x, d) * _pairs(y, d) / 2.0, d)
    return cumsum((1.0 if dx is None else dx) / 2.0 * _pairs(y, d), d)
