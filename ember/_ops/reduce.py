"""Reductions over dimensions (dim, keepdim, dtype as torch)."""

__all__ = ["sum"]
from .. import _dtype
from .._tensor import register
from ..autograd.function import Function
from .view import expand, reshape


def _dims(dim, ndim):
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = ndim or 1
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out) if ndim else ()


def _unsqueeze_to(grad, in_shape, dims, keepdim):
    if not keepdim:
        shape = list(in_shape)
        for d in dims:
            shape[d] = 1
        grad = reshape(grad, tuple(shape))
    return expand(grad, in_shape)


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if dtype is None and x.dtype.kind in "biu":
            dtype = _dtype.int64
        if dtype is not None:
            x = x.astype(dtype.np)
        elif x.dtype in (_dtype.float16.np, _dtype.bfloat16.np):
            return ctx.xp.sum(x, axis=dims, keepdims=keepdim, dtype="float32").astype(x.dtype)
        return ctx.xp.sum(x, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _unsqueeze_to(grad, ctx.in_shape, ctx.dims, ctx.keepdim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all elements when None); integers and bools sum to int64.

    Example::

        >>> ember.tensor([[1., 2.], [3., 4.]]).sum(1)
        tensor([3., 7.])
    """
    dt = _dtype.to_dtype(dtype) if dtype is not None else None
    return Sum.apply(input, dims=_dims(dim, input.ndim), keepdim=keepdim, dtype=dt)


register(sum)
