"""``ember.sparse``: functions of sparse COO tensors (``mm``, ``sum``, ``softmax``, ...) and the legacy sparse
tensor types (``ember.sparse.FloatTensor(indices, values, size)``)."""
import numpy as np

from .. import _dtype
from .._creation import tensor, zeros
from .._device import array_module
from .._sparse import SparseCooTensor, _linear, _long, _make, mm, sparse_coo_tensor, sparse_sum
from .._tensor import _LEGACY_NAMES

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "FloatTensor", "DoubleTensor", "HalfTensor",
           "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for the sparse COO matrix ``mat1`` and dense ``mat`` and ``mat2``."""
    return beta * mat + alpha * mm(mat1, mat2)


def sum(input, dim=None, dtype=None):
    """Sum of the sparse COO tensor ``input`` over ``dim`` (all dimensions by default): sparse while sparse
    dimensions remain, dense otherwise.

    Example::

        >>> a = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4., 5.], (2, 3))
        >>> ember.sparse.sum(a, dim=1).to_dense()
        tensor([3., 9.])
    """
    return sparse_sum(input, dim, dtype)


def _groups(input, dim):
    """For the coalesced ``input`` and its sparse dimension ``dim``: each entry's group (the entries that share
    every other index) and the number of groups."""
    xp = array_module(input.device)
    keep = [d for d in range(input.sparse_dim()) if d != dim]
    lin = _linear(xp, input._i._data[keep], [input._size[d] for d in keep])
    uniq, inv = xp.unique(lin, return_inverse=True)
    return inv.reshape(-1), len(uniq)


def _shifted(input, dim, dtype):
    """``(values - max of their group, group index Tensor, group count)``: softmax's stable form."""
    if not isinstance(input, SparseCooTensor):
        raise TypeError("ember.sparse.softmax: expected a sparse COO tensor")
    d = input._wrap_dim(dim)
    if input.dense_dim() or d >= input.sparse_dim():
        raise NotImplementedError("ember.sparse.softmax: only sparse tensors without dense dimensions are supported")
    input = input.coalesce()
    v = input._v if dtype is None else input._v.to(dtype)
    g, n = _groups(input, d)
    xp = array_module(input.device)
    top = xp.full(n, -np.inf, dtype=v._data.dtype)
    xp.maximum.at(top, g, v.detach()._data)
    gt = _long(g, input.device)
    return input, v - tensor(top, device=input.device).index_select(0, gt), gt, n


def softmax(input, dim, *, dtype=None):
    """Softmax over ``dim`` of the specified entries of the sparse COO tensor ``input`` (unspecified ones count as
    ``-inf``): a sparse tensor with the same entries."""
    input, z, g, n = _shifted(input, dim, dtype)
    e = z.exp()
    total = zeros(n, dtype=e.dtype, device=e.device).index_add(0, g, e)
    return _make(input._i, e / total.index_select(0, g), input._size, True)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax over ``dim`` of the specified entries of the sparse COO tensor ``input``."""
    input, z, g, n = _shifted(input, dim, dtype)
    total = zeros(n, dtype=z.dtype, device=z.device).index_add(0, g, z.exp())
    return _make(input._i, z - total.log().index_select(0, g), input._size, True)


class _SparseType(type):
    """The metaclass of the legacy sparse types: ``ember.sparse.FloatTensor(indices, values, size)`` builds a
    sparse COO tensor, ``isinstance(x, ember.sparse.FloatTensor)`` holds for float32 sparse tensors."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, SparseCooTensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        if args and not isinstance(args[0], (int, tuple, list)):  # (indices, values[, size])
            return sparse_coo_tensor(*args, device=device)
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return sparse_coo_tensor(zeros((len(size), 0), dtype=_dtype.int64, device=device),
                                 zeros(0, dtype=cls.dtype, device=device), size)


def _sparse_type(dtype, name):
    short = name.rpartition(".")[2]
    return _SparseType(short, (), {"dtype": dtype, "is_sparse": True, "__module__": __name__,
                                   "__doc__": f"The legacy sparse {dtype.name} tensor type."})


_TYPES = {name.rpartition(".")[2]: _sparse_type(d, name) for d, name in _LEGACY_NAMES.items()}
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_TYPES[n] for n in __all__[5:])
