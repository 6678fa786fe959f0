"""Distances and similarities between vectors: pairwise_distance, pdist, cosine_similarity, normalize."""

__all__ = ["pairwise_distance", "pdist", "cosine_similarity", "normalize"]
from ... import _dtype
from ..._device import array_module
from ..._ops.index import _broadcast_shape
from ..._ops.reduce import _tname, vector_norm
from ..._ops.view import broadcast_to
from ..._tensor import Tensor, write_out
from ...autograd.grad_mode import no_grad


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dimension (inputs broadcast together).

    Example::

        >>> F.pairwise_distance(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.]]), eps=0.)
        tensor([5.])
    """
    return vector_norm(x1 - x2 + eps, p, -1 if max(x1.ndim, x2.ndim) else None, keepdim)


def pdist(input, p=2):
    """The ``p``-norm distances between every pair of rows of a 2-D ``input``: the upper triangle of
    ``cdist(input, input)`` without its diagonal, as a vector of ``N * (N - 1) / 2``."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = array_module(input.device).triu_indices(input.shape[0], 1)
    index = lambda a: Tensor._make(a.astype("int64"), _dtype.int64, input.device)
    return vector_norm(input[index(i)] - input[index(j)], p, 1)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim`` (inputs broadcast together), computed as the
    inner product of the normalized vectors so that it stays within [-1, 1]."""
    dt = _dtype.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_tname(dt)}")
    x1, x2 = x1.to(dt), x2.to(dt)
    shape = _broadcast_shape(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    n1, n2 = vector_norm(x1, 2, dim, True), vector_norm(x2, 2, dim, True)
    # The clamp changes the value only: the gradient flows as if unclamped, as torch's (a no-grad in-place clamp).
    with no_grad():
        c1, c2 = n1.clamp_min(eps) - n1, n2.clamp_min(eps) - n2
    return ((x1 / (n1 + c1)) * (x2 / (n2 + c2))).sum(dim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(norm_p(input, dim), eps)``: unit ``p``-norm vectors along ``dim``.

    Example::

        >>> F.normalize(ember.tensor([[3., 4.]]))
        tensor([[0.6000, 0.8000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return write_out(input / denom, out)
