"""Index enumeration: combinations of a 1-D tensor's elements, and unravel_index (flat indices to coordinates)."""

__all__ = ["combinations", "unravel_index"]
import itertools
import math

from .. import _dtype
from .._creation import tensor


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``input``, one per row, in the order of
    ``itertools.combinations`` (``with_replacement``: ``itertools.combinations_with_replacement``).
    Differentiable in ``input``.

    Example::

        >>> ember.combinations(ember.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    index = tensor(rows, dtype=_dtype.int64, device=input.device).reshape(-1, r)
    return input[index]


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat (row-major) ``indices``: a tuple of int64 tensors,
    one per dimension, each of ``indices``' shape. Out-of-range indices wrap around, as in torch.

    Example::

        >>> ember.unravel_index(ember.tensor([4, 1]), (2, 3))
        (tensor([1, 0]), tensor([1, 1]))
    """
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(s, int) for s in shape):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise RuntimeError("ZeroDivisionError")
    coefs = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    flat = indices.to(_dtype.int64).unsqueeze(-1)
    sizes = tensor(list(shape), dtype=_dtype.int64, device=indices.device)
    return tuple((flat // tensor(coefs, dtype=_dtype.int64, device=indices.device) % sizes).unbind(-1))
