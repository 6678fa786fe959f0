"""Statistics of samples: cov, corrcoef (composites, differentiable), histogram and histogramdd."""

__all__ = ["cov", "corrcoef", "histogram", "histogramdd"]
import warnings

from .. import _dtype
from .._creation import linspace
from .._tensor import Tensor, register, write_out
from ..autograd.function import Function
from ..return_types import structseq
from .complex import complex
from .matmul import matmul
from .reduce import _tname

_HistogramT = structseq("histogram", ("hist", "bin_edges"))
_HistogramddT = structseq("histogramdd", ("hist", "bin_edges"))


def _check_weights(w, name, n, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           "dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if integral and (w.dtype.is_floating_point or w.dtype.is_complex):
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                           f"{_tname(w.dtype)} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{_tname(w.dtype)} dtype")
    if bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in its columns), with
    ``correction`` subtracted from the number of observations (1: Bessel's correction) and optional integer
    frequency weights ``fweights`` and float observation weights ``aweights``.

    Example::

        >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        avg, w_sum = x.sum(1) / n, n
    else:
        avg, w_sum = (x * w).sum(1) / w.sum(), w.sum()
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    return (matmul(xm, xw.t().conj() if xw.dtype.is_complex else xw.t()) / norm).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in the rows of ``input``, clipped to [-1, 1] (the real
    and imaginary parts separately for complex input).

    Example::

        >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.dtype.is_complex:
        return complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


class Histogram(Function):
    @staticmethod
    def forward(ctx, x, edges, weight, density):
        xp = ctx.xp
        hist, _ = xp.histogram(x.reshape(-1), bins=edges, weights=None if weight is None else weight.reshape(-1),
                               density=density)
        return hist.astype(x.dtype, copy=False)


def _edges(values, bins, range, dim):
    """The bin edges of dimension ``dim``: the 1-D tensor ``bins``, or ``bins`` equal-width bins over ``range`` (by
    default the smallest to the largest of ``values``)."""
    if isinstance(bins, Tensor):
        if bins.dtype is not values.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_tname(values.dtype).lower()} and bins for dimension {dim} with "
                               f"dtype {_tname(bins.dtype).lower()}")
        return bins.detach()
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension {dim}")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif values.numel():
        lo, hi = values.detach().min().item(), values.detach().max().item()
    else:
        lo, hi = 0.0, 1.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                           f"dimension {dim}")
    if not (abs(lo) < float("inf") and abs(hi) < float("inf")):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{lo:g}, {hi:g}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, bins + 1, dtype=values.dtype, device=values.device)


def _check_dtypes(input, weight):
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_tname(input.dtype)}'")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_tname(input.dtype).lower()}), and "
                           f"weight({_tname(weight.dtype).lower()})")


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)``: the histogram of the values of ``input`` over ``bins`` equal-width bins spanning
    ``range`` (default: the smallest and largest value), or over the increasing edges of the 1-D tensor ``bins``.
    Each value counts ``weight`` (default 1); ``density`` normalizes the histogram to integrate to 1. The last bin
    includes its right edge; values outside the edges are ignored.

    Example::

        >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
        ember.return_types.histogram(
        hist=tensor([0., 2., 1., 0.]),
        bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    _check_dtypes(input, weight)
    if weight is not None and weight.shape != input.shape:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape) + [1]} and weight with shape {list(weight.shape)}")
    edges = _edges(input, bins, range, 0)
    hist = Histogram.apply(input.detach(), edges, None if weight is None else weight.detach(), density=density)
    if out is not None:
        write_out(hist, out[0])
        write_out(edges, out[1])
        return _HistogramT(*out)
    return _HistogramT(hist, edges.clone() if isinstance(bins, Tensor) else edges)


class HistogramDD(Function):
    @staticmethod
    def forward(ctx, x, weight, edges, density):
        hist, _ = ctx.xp.histogramdd(x, bins=list(edges), weights=weight, density=density)
        return hist.astype(x.dtype, copy=False)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: the ``D``-dimensional histogram of the points in the rows of ``input`` (``(..., D)``):
    per dimension, ``bins`` (an int, or a list of ``D`` ints or of ``D`` 1-D edge tensors) over ``range`` (a flat
    list ``[lo_0, hi_0, lo_1, ...]``, default: each dimension's smallest and largest value). ``weight`` (of
    ``input.shape[:-1]``) and ``density`` as in :func:`histogram`.

    Example::

        >>> ember.histogramdd(ember.tensor([[0., 0.], [1., 1.], [1., 0.]]), bins=2).hist
        tensor([[1., 0.],
                [1., 1.]])
    """
    _check_dtypes(input, weight)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(per_dim) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} elements, "
                           f"but got {len(range)}")
    if weight is not None and weight.shape != input.shape[:-1]:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    points = input.detach().reshape(-1, d)
    edges = tuple(_edges(points[:, i], b, None if range is None else range[2 * i:2 * i + 2], i)
                  for i, b in enumerate(per_dim))
    w = None if weight is None else weight.detach().reshape(-1)
    hist = HistogramDD.apply(points, w, edges=tuple(e._data for e in edges), density=density)
    return _HistogramddT(hist, tuple(e.clone() if isinstance(b, Tensor) else e for e, b in zip(edges, per_dim)))


register(cov, corrcoef, histogram, histogramdd)
