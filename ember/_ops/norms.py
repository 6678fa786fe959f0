"""Ops built on vector norms: dist and renorm (composites, differentiable)."""

__all__ = ["dist", "renorm"]

from .._tensor import inplace, register, wrap_dim
from .binary import _where
from .reduce import vector_norm


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast).

    Example::

        >>> ember.dist(ember.tensor([3., 0.]), ember.tensor([0., 4.]))
        tensor(5.)
    """
    return vector_norm(input - other, p)


def renorm(input, p, dim, maxnorm):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm``.

    Example::

        >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    d = wrap_dim(dim, input.ndim)
    norm = vector_norm(input, p, [i for i in range(input.ndim) if i != d], keepdim=True)
    return input * _where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)


register(dist, renorm, renorm_=inplace(renorm))
