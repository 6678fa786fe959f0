"""Distances and similarities between vectors: pairwise_distance, pdist, cdist, cosine_similarity, normalize."""

__all__ = ["pairwise_distance", "pdist", "cdist", "cosine_similarity", "normalize"]
from ... import _dtype
from ..._autocast import float32_inputs
from ..._device import array_module
from ..._ops.reduce import _tname, vector_norm
from ..._ops.view import broadcast_pair, broadcast_to
from ..._tensor import Tensor, write_out
from ...autograd.function import Function
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
    return _distance(input[index(i)] - input[index(j)], p)


class _MaxAbs(Function):
    """``max |x|`` over the last dimension (0 where it is empty): the ``p = inf`` distance of torch's cdist and pdist,
    whose gradient goes whole to every coordinate attaining the max (``vector_norm`` shares it out among them)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x):
        xp = ctx.xp
        d = xp.abs(x).max(-1) if x.shape[-1] else xp.zeros(x.shape[:-1], x.dtype)
        ctx.save_for_backward(x, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        x, d = ctx.saved_tensors
        return grad.unsqueeze(-1) * x.sign() * (x.abs() == d.unsqueeze(-1))


def _distance(diff, p):
    return _MaxAbs.apply(diff) if p == float("inf") else vector_norm(diff, p, -1)


class _EuclideanDist(Function):
    """``p = 2`` cdist through one matmul, ``sqrt(|x1|^2 - 2 x1.x2 + |x2|^2)``: no (*, P, R, M) differences, as
    torch's ``use_mm_for_euclid_dist`` (with its rounding near zero); the gradient at a zero distance is zero."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x1, x2):
        xp = ctx.xp
        n1, n2 = (x1 * x1).sum(-1, keepdims=True), (x2 * x2).sum(-1, keepdims=True)
        a = xp.concatenate([x1 * -2, n1, xp.ones_like(n1)], -1)
        b = xp.concatenate([x2, xp.ones_like(n2), n2], -1)
        d = xp.sqrt(xp.maximum(xp.matmul(a, xp.swapaxes(b, -1, -2)), 0))
        ctx.save_for_backward(x1, x2, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        x1, x2, d = ctx.saved_tensors
        ratio = (grad / d).masked_fill(d == 0, 0)  # (*, P, R)
        return (x1 * ratio.sum(-1, keepdim=True) - ratio @ x2,
                x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1)


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


@float32_inputs
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (*, P, M) and each row of ``x2`` (*, R, M): (*, P, R),
    batch dimensions broadcasting. For ``p = 2`` with more than 25 rows (or ``compute_mode='use_mm_for_euclid_dist'``)
    it goes through a matmul, otherwise it is computed directly; the gradient at a zero distance is zero.

    Example::

        >>> ember.cdist(ember.tensor([[0., 0.]]), ember.tensor([[3., 4.], [0., 1.]]))
        tensor([[5., 1.]])
    """
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_tname(t.dtype)}")
    mm = compute_mode == _COMPUTE_MODES[1] or compute_mode == _COMPUTE_MODES[0] and max(x1.shape[-2], x2.shape[-2]) > 25
    mm = p == 2 and mm and x1.numel() and x2.numel()
    if x1.dtype in (_dtype.float16, _dtype.bfloat16) and x1.device.type == "cpu" and not mm:
        raise NotImplementedError(f"\"cdist\" not implemented for '{_tname(x1.dtype)}'")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_tname(x1.dtype)} but found {_tname(x2.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if mm:
        batch = broadcast_pair(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
        return _EuclideanDist.apply(broadcast_to(x1, batch + tuple(x1.shape[-2:])),
                                    broadcast_to(x2, batch + tuple(x2.shape[-2:])))
    return _distance(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim`` (inputs broadcast together), computed as the
    inner product of the normalized vectors so that it stays within [-1, 1]."""
    dt = _dtype.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_tname(dt)}")
    x1, x2 = x1.to(dt), x2.to(dt)
    shape = broadcast_pair(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = broadcast_to(x1, shape), broadcast_to(x2, shape)
    n1, n2 = vector_norm(x1, 2, dim, True), vector_norm(x2, 2, dim, True)
    # The clamp changes the value only: the gradient flows as if unclamped, as torch's (a no-grad in-place clamp).
    with no_grad():
        c1, c2 = (eps - n1).clamp_min(0), (eps - n2).clamp_min(0)  # 0 for an infinite norm (not inf - inf)
    return ((x1 / (n1 + c1)) * (x2 / (n2 + c2))).sum(dim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(norm_p(input, dim), eps)``: unit ``p``-norm vectors along ``dim``.

    Example::

        >>> F.normalize(ember.tensor([[3., 4.]]))
        tensor([[0.6000, 0.8000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return write_out(input / denom, out)
