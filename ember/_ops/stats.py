"""Statistics of samples: cov, corrcoef (composites, differentiable) and histogram."""

__all__ = ["cov", "corrcoef", "histogram"]
import warnings

from .. import _dtype
from .._creation import linspace
from .._tensor import Tensor, register, write_out
from ..autograd.function import Function
from ..return_types import structseq
from .matmul import matmul
from .reduce import _tname

_HistogramT = structseq("histogram", ("hist", "bin_edges"))


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
    return (matmul(xm, (xm if w is None else xm * w).t()) / norm).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in the rows of ``input``, clipped to [-1, 1].

    Example::

        >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)


class Histogram(Function):
    @staticmethod
    def forward(ctx, x, edges, weight, density):
        xp = ctx.xp
        hist, _ = xp.histogram(x.reshape(-1), bins=edges, weights=None if weight is None else weight.reshape(-1),
                               density=density)
        return hist.astype(x.dtype, copy=False)


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
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_tname(input.dtype)}'")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_tname(input.dtype).lower()}), and "
                           f"weight({_tname(weight.dtype).lower()})")
    if isinstance(bins, Tensor):
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_tname(input.dtype).lower()} and bins for dimension 0 with dtype "
                               f"{_tname(bins.dtype).lower()}")
        edges = bins.detach()
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif input.numel():
            lo, hi = input.detach().min().item(), input.detach().max().item()
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               "dimension 0")
        if not (abs(lo) < float("inf") and abs(hi) < float("inf")):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    hist = Histogram.apply(input.detach(), edges, None if weight is None else weight.detach(), density=density)
    if out is not None:
        write_out(hist, out[0])
        write_out(edges, out[1])
        return _HistogramT(*out)
    return _HistogramT(hist, edges.clone() if isinstance(bins, Tensor) else edges)


register(cov, corrcoef, histogram)
