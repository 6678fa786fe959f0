"""Sparse COO tensors: ``ember.sparse_coo_tensor`` builds a :class:`SparseCooTensor`, a Tensor holding ``indices``
(int64, ``(sparse_dim, nnz)``), ``values`` (``(nnz, *dense_shape)``) and a size. Autograd flows through the values:
every op here is written with dense ops on them, so gradients reach the tensor the values were built from."""
import math

import numpy as np

from . import _dtype
from ._creation import tensor, zeros
from ._device import array_module
from ._layout import sparse_coo
from ._tensor import Size, Tensor, register
from .autograd.function import Function
from .autograd.grad_mode import grad_enabled

__all__ = ["sparse_coo_tensor", "spmm"]

_UNSUPPORTED = ("this operation does not support sparse COO tensors (layout=ember.sparse_coo); use the ember.sparse "
                "functions or convert with .to_dense() first")


class SparseCooTensor(Tensor):
    """A sparse COO tensor (``layout=ember.sparse_coo``); make one with :func:`ember.sparse_coo_tensor` or
    ``Tensor.to_sparse()``. Dense ops refuse it with a RuntimeError."""

    __slots__ = ("_i", "_v", "_size", "_coalesced")

    @property
    def _data(self):  # a NotImplementedError (a RuntimeError), as torch's for an op without a sparse kernel
        raise NotImplementedError(_UNSUPPORTED)

    # -- autograd state lives on the values ----------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._v._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._v.requires_grad = value

    _requires_grad = requires_grad

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def grad(self):
        g = self._v.grad
        return None if g is None else _make(self._i, g, self._size, self._coalesced)

    @grad.setter
    def grad(self, value):
        if value is not None and not (isinstance(value, SparseCooTensor) and value._i is self._i):
            raise RuntimeError("assigned grad of a sparse tensor must be a sparse tensor with the same indices")
        self._v.grad = None if value is None else value._v.detach()

    def detach(self):
        return _make(self._i, self._v.detach(), self._size, self._coalesced)

    @property
    def data(self):
        return self.detach()

    def detach_(self):
        self._v = self._v.detach()
        return self

    def clone(self, *, memory_format=None):
        return _make(self._i.clone(), self._v.clone(), self._size, self._coalesced)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = _make(self._i.__deepcopy__(memo), self._v.__deepcopy__(memo), self._size,
                                   self._coalesced)
        return memo[id(self)]

    def zero_(self):
        """Makes this tensor all zeros, in place: no specified elements."""
        self._i = self._i[:, :0]
        self._v = self._v.detach()[:0].clone()
        self._coalesced = True
        self._vc[0] += 1
        return self

    def to(self, *args, **kwargs):
        """This tensor with its values converted (``to(dtype)``, ``to(device)``, ...); itself if nothing changes."""
        v = self._v.to(*args, **kwargs)
        if v is self._v:
            return self
        i = self._i if v.device is self._i.device else self._i.to(v.device)
        return _make(i, v, self._size, self._coalesced)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return self._v.type().replace("torch.", "torch.sparse.", 1)
        return self.to(dtype)

    # -- metadata ------------------------------------------------------------------------------------------------
    layout = sparse_coo
    is_sparse = True

    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[self._wrap_dim(dim)]

    @property
    def ndim(self):
        return len(self._size)

    def dim(self):
        return len(self._size)

    ndimension = dim

    def _wrap_dim(self, dim, ndim=None):
        n = len(self._size) if ndim is None else ndim
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {dim})")
        return dim % max(n, 1)

    def numel(self):
        return math.prod(self._size)

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def sparse_dim(self):
        """The number of sparse dimensions (rows of ``indices``)."""
        return self._i.shape[0]

    def dense_dim(self):
        """The number of dense dimensions (those of each value)."""
        return self._v.ndim - 1

    def _nnz(self):
        """The number of specified elements (duplicates counted until :meth:`coalesce`)."""
        return self._i.shape[1]

    def is_coalesced(self):
        """Whether the indices are sorted and unique."""
        return self._coalesced

    def is_contiguous(self, memory_format=None):
        return False

    def _indices(self):
        return self._i

    def _values(self):
        return self._v

    def indices(self):
        """The indices of this coalesced tensor, ``(sparse_dim, nnz)`` int64."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._i

    def values(self):
        """The values of this coalesced tensor, ``(nnz, *dense_shape)``."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._v

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __repr__(self, *, tensor_contents=None):
        from ._print import _add_suffixes, _tensor_str
        indent = 7
        suffixes = [] if self.device.type == "cpu" else [f"device='{self.device}'"]
        suffixes += [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        if self.dtype not in (_dtype.get_default_dtype(), _dtype.complex_default(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append(f"layout={sparse_coo}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        parts = []
        for name, t in (("indices", self._i), ("values", self._v)):
            a = t.detach().cpu().numpy()
            s = _tensor_str(a, indent + len(name) + 8)
            parts.append(f"{name}=tensor({s}{f', size={tuple(a.shape)}' if a.size == 0 else ''})")
        body = "tensor(" + parts[0] + ",\n" + " " * indent + parts[1] + ",\n" + " " * indent + suffixes[0]
        return _add_suffixes(body, suffixes[1:], indent)  # the size always starts a line

    # -- ops -----------------------------------------------------------------------------------------------------
    def coalesce(self):
        """This tensor with sorted, unique indices: duplicate entries summed."""
        if self._coalesced:
            return self
        xp = array_module(self.device)
        sd = self.sparse_dim()
        lin = _linear(xp, self._i._data, self._size[:sd])
        uniq, inv = xp.unique(lin, return_inverse=True)
        idx = xp.stack(xp.unravel_index(uniq, self._size[:sd])) if sd else xp.zeros((0, len(uniq)), np.int64)
        v = self._v
        vals = zeros((len(uniq),) + tuple(v.shape[1:]), dtype=v.dtype, device=v.device).index_add(
            0, _long(inv.reshape(-1), v.device), v)
        return _make(_long(idx, v.device), vals, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=True):
        """The dense tensor this one stands for (duplicate entries summed)."""
        v = self._v if dtype is None else self._v.to(dtype)
        sd = self.sparse_dim()
        lin = _linear(array_module(self.device), self._i._data, self._size[:sd])
        flat = zeros((math.prod(self._size[:sd]),) + tuple(v.shape[1:]), dtype=v.dtype, device=v.device)
        return flat.index_add(0, _long(lin, v.device), v).reshape(self._size)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout not in (None, sparse_coo):
            raise NotImplementedError(f"to_sparse: conversion to {layout} is not supported")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self."
                               "sparse_dim() is not supported")
        return self

    def to_sparse_coo(self):
        return self

    def transpose(self, dim0, dim1):
        """This tensor with sparse dimensions (or dense dimensions) ``dim0`` and ``dim1`` swapped."""
        d0, d1 = self._wrap_dim(dim0), self._wrap_dim(dim1)
        sd = self.sparse_dim()
        if d0 == d1:
            return _make(self._i, _derived(self._v), self._size, self._coalesced)
        if (d0 < sd) != (d1 < sd):
            raise RuntimeError(f"transpose(): sparse_dim {d0 if d0 < sd else d1} and dense_dim "
                               f"{d1 if d0 < sd else d0} cannot be transposed")
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        if d0 < sd:
            perm = list(range(sd))
            perm[d0], perm[d1] = d1, d0
            return _make(self._i[perm], _derived(self._v), size, False)
        return _make(self._i, self._v.transpose(d0 - sd + 1, d1 - sd + 1), size, self._coalesced)

    def t(self):
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return self.transpose(0, 1) if self.ndim == 2 else self

    @property
    def T(self):
        return self.t()

    def sum(self, dim=None, keepdim=False, dtype=None):
        """:func:`ember.sparse.sum` as a method."""
        if keepdim:
            raise RuntimeError("sum(): keepdim=True is not supported for sparse tensors")
        return sparse_sum(self, dim, dtype)

    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        return _mm(self, other)

    __matmul__ = matmul

    def __rmatmul__(self, other):
        return _mm(other, self) if isinstance(other, Tensor) else NotImplemented

    def mul(self, other):
        """Elementwise product with a number, a dense tensor broadcast to this shape, or a sparse tensor."""
        if isinstance(other, SparseCooTensor):
            return _mul_sparse(self, other)
        if isinstance(other, Tensor) and other.ndim:
            return _mul_dense(self, other)
        return _make(self._i, self._v * other, self._size, self._coalesced)

    __mul__ = __rmul__ = mul

    def div(self, other):
        if isinstance(other, Tensor) and other.ndim:
            raise RuntimeError("div(sparse, dense) is only supported for a 0-d (scalar) divisor")
        return _make(self._i, self._v / other, self._size, self._coalesced)

    __truediv__ = div

    def neg(self):
        return _make(self._i, -self._v, self._size, self._coalesced)

    __neg__ = neg

    def add(self, other, *, alpha=1):
        """The sum with another sparse tensor of the same size (``alpha`` scales ``other``)."""
        if not isinstance(other, SparseCooTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        if self._size != other._size:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(self._size)} while other has size {list(other._size)} (FYI: dense-sparse "
                               f"addition does not currently support broadcasting)")
        if self.sparse_dim() != other.sparse_dim():
            raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but got "
                               f"{self.sparse_dim()} and {other.sparse_dim()}")
        dt = _dtype.promote_types(self.dtype, other.dtype)
        ov = other._v if alpha == 1 else other._v * alpha
        v = _cat(self._v.to(dt), ov.to(dt))
        out = _make(_cat(self._i, other._i, dim=1), v, self._size, False)
        return out.coalesce() if self._coalesced and other._coalesced else out

    __add__ = add

    def add_(self, other, *, alpha=1):
        """Adds the sparse ``other`` (scaled by ``alpha``) in place: its entries appended (uncoalesced), summed
        into one entry per index once they outnumber the elements."""
        if not isinstance(other, SparseCooTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        out = self.add(other, alpha=alpha) if other._nnz() else self
        if out._nnz() > self.numel():
            out = out.coalesce()
        v = out._v.to(self.dtype)
        self._i, self._v, self._coalesced = out._i, v if v._requires_grad else v.detach(), out._coalesced
        self._vc[0] += 1
        return self

    def mul_(self, other):
        """Multiplies the values by the number (or 0-d tensor) ``other``, in place."""
        if isinstance(other, Tensor) and other.ndim:
            raise RuntimeError("mul_(sparse, dense) is only supported for a number or a 0-d tensor")
        v = self._v * other
        self._v = v.to(self.dtype) if v._requires_grad else v.detach().to(self.dtype)
        self._vc[0] += 1
        return self

    def __radd__(self, other):  # dense + sparse: dense (Python asks this subclass first)
        return other + self.to_dense() if isinstance(other, Tensor) else self.add(other)

    def __rsub__(self, other):
        return other - self.to_dense() if isinstance(other, Tensor) else self.neg().add(other)

    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    __sub__ = sub


def _cat(a, b, dim=0):
    from ._ops.shape import cat
    return cat([a, b], dim)


def _long(arr, device):
    return Tensor._make(arr.astype(np.int64, copy=False), _dtype.int64, device)


def _linear(xp, idx, dims):
    """The row-major linear position of each column of ``idx`` in an array of shape ``dims``."""
    lin = xp.zeros(idx.shape[1], np.int64)
    for d, n in enumerate(dims):
        lin = lin * n + idx[d]
    return lin


def _derived(v):
    """The values of a tensor made from another's: a Tensor of their own, on the graph when ``v`` is."""
    return v.view_as(v) if v._requires_grad and grad_enabled() else v.detach()


def _make(indices, values, size, coalesced):
    t = object.__new__(SparseCooTensor)
    t._i, t._v, t._size, t._coalesced = indices, values, Size(size), coalesced
    t.dtype, t.device = values.dtype, values.device
    t._output_nr = 0
    t._vc = [0]
    t._base = t._view_chain = None
    t._view_version = 0
    return t


class SparseCooTensorWithDimsAndTensors(Function):
    """The values of a sparse tensor built from values that require grad: an identity on the graph."""

    @staticmethod
    def forward(ctx, values):
        return values

    @staticmethod
    def backward(ctx, grad):
        return grad


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values`` (``(nnz, *dense_shape)``) at ``indices`` (``(sparse_dim, nnz)``) in a
    tensor of ``size`` (by default the smallest that holds the indices). Duplicate indices add up.

    Example::

        >>> ember.sparse_coo_tensor([[0, 1], [2, 0]], [3., 4.], (2, 3)).to_dense()
        tensor([[0., 0., 3.],
                [4., 0., 0.]])
    """
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=dtype, device=device)
    if isinstance(values, SparseCooTensor):
        raise TypeError("sparse_coo_tensor(): values must be a strided (dense) tensor")
    if dtype is not None or device is not None:
        values = values.to(dtype=dtype, device=device)
    if not isinstance(indices, Tensor):
        indices = tensor(indices, dtype=_dtype.int64)
    if isinstance(indices, SparseCooTensor):
        raise TypeError("sparse_coo_tensor(): indices must be a strided (dense) tensor")
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim == 0:
        raise RuntimeError("values must have at least 1 dimension (nnz, *dense_shape), but got a 0-d tensor")
    idx = indices.to(_dtype.int64, device=values.device)
    sd, nnz = idx.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0]}")
    a = idx._data
    if nnz and sd and (low := a.min(axis=1)).min() < 0:
        d = int((low < 0).argmax())
        raise RuntimeError(f"found negative index {int(low[d])} for dim {d}")
    if size is None:
        size = tuple(int(m) + 1 for m in (a.max(axis=1) if nnz else [-1] * sd)) + tuple(values.shape[1:])
    size = Size(size)
    if len(size) != sd + values.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sd}, dense_dim = {values.ndim - 1}")
    if tuple(size[sd:]) != tuple(values.shape[1:]):
        raise RuntimeError(f"values has incorrect size, expected {[nnz] + list(size[sd:])}, got "
                           f"{list(values.shape)}")
    if nnz and sd:
        high = a.max(axis=1)
        for d in range(sd):
            if high[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {int(high[d])}")
    if requires_grad:
        v = values.detach().requires_grad_()
    elif values._requires_grad and grad_enabled():
        v = SparseCooTensorWithDimsAndTensors.apply(values)
    else:
        v = values.detach()
    return _make(idx, v, size, nnz < 2 if is_coalesced is None else bool(is_coalesced))


# -- products ----------------------------------------------------------------------------------------------------
_SCIPY_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128, np.int32,
                                                np.int64))


def spmm_reference(xp, rows, cols, values, dense, n):
    """``A @ dense`` for the ``(n, m)`` COO matrix ``A`` (entries ``values`` at ``rows``, ``cols``): pure xp."""
    out = xp.zeros((n,) + dense.shape[1:], dtype=np.result_type(values, dense))
    xp.add.at(out, rows, values.reshape((-1,) + (1,) * (dense.ndim - 1)) * dense[cols])
    return out


def _spmm(xp, rows, cols, values, dense, n):
    if xp is np and values.dtype in _SCIPY_DTYPES:
        import scipy.sparse
        a = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n, dense.shape[0]))
        return np.asarray(a @ dense, dtype=values.dtype)
    return spmm_reference(xp, rows, cols, values, dense, n)


class SparseAddmm(Function):
    """``A @ dense`` for the COO matrix ``A`` with entries ``values`` at (``rows``, ``cols``), ``n`` rows."""

    @staticmethod
    def forward(ctx, values, dense, rows, cols, n):
        ctx.rows, ctx.cols, ctx.n, ctx.m = rows, cols, n, dense.shape[0]
        ctx.save_for_backward(values, dense)
        return _spmm(ctx.xp, rows, cols, values, dense, n)

    @staticmethod
    def backward(ctx, grad):
        values, dense = ctx.saved_tensors
        gv = gd = None
        if ctx.needs_input_grad[0]:  # (nnz,): <grad[row], dense[col]> per entry
            r, c = _long(ctx.rows, grad.device), _long(ctx.cols, grad.device)
            gv = (grad.index_select(0, r) * dense.index_select(0, c).conj()).sum(-1)
        if ctx.needs_input_grad[1]:
            gd = SparseAddmm.apply(values.conj(), grad, rows=ctx.cols, cols=ctx.rows, n=ctx.m)
        return gv, gd


def _check_matrix(a, what):
    if a.ndim != 2 or a.dense_dim():
        raise RuntimeError(f"{what}: matrices expected, got {a.sparse_dim()} sparse and {a.dense_dim()} dense "
                           f"dimensions")


def mm(mat1, mat2):
    """Matrix product of a sparse COO matrix and a dense (or sparse) matrix: dense (or sparse).

    Example::

        >>> a = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
        >>> ember.sparse.mm(a, ember.ones(2, 1))
        tensor([[2.],
                [3.]])
    """
    for t in (mat1, mat2):
        if t.ndim != 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    return _mm(mat1, mat2)


def _mm(mat1, mat2):
    if not isinstance(mat1, SparseCooTensor):  # dense @ sparse = (sparse^T @ dense^T)^T
        if not isinstance(mat2, SparseCooTensor):
            from ._ops.matmul import mm as dense_mm
            return dense_mm(mat1, mat2)
        if mat1.ndim != 2:
            raise RuntimeError(f"mm: expected a 2-D dense matrix, got a {mat1.ndim}-D tensor")
        return _mm(mat2.t(), mat1.t()).t()
    _check_matrix(mat1, "addmm")
    if isinstance(mat2, SparseCooTensor):
        return _mm_sparse(mat1, mat2)
    if mat2.ndim not in (1, 2):
        raise RuntimeError(f"addmm: matrices expected, got {mat2.ndim}D tensor")
    if mat2.shape[0] != mat1._size[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1._size[1]}, got {mat2.shape[0]}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_name(mat1.dtype)} but found "
                           f"{_dtype.scalar_name(mat2.dtype)}")
    if mat1.device is not mat2.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{mat1.device} and {mat2.device}!")
    dense = mat2 if mat2.ndim == 2 else mat2.unsqueeze(1)
    idx = mat1._i._data
    out = SparseAddmm.apply(mat1._v, dense, rows=idx[0], cols=idx[1], n=mat1._size[0])
    return out if mat2.ndim == 2 else out.squeeze(1)


def _mm_sparse(a, b):
    """sparse @ sparse: a coalesced sparse matrix with an entry wherever a row of ``a`` meets a column of ``b``."""
    _check_matrix(b, "addmm")
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mm: Argument #3 (sparse): Expected dim 0 size {a._size[1]}, got {b._size[0]}")
    a, b = a.coalesce(), b.coalesce()
    xp = array_module(a.device)
    (ar, ac), (br, bc) = a._i._data, b._i._data
    start = xp.searchsorted(br, xp.arange(b._size[0] + 1))  # b's entries by row: br is sorted
    count = (start[1:] - start[:-1])[ac]  # for each entry of a, the entries of b in the row it meets
    pa = xp.repeat(xp.arange(len(ac)), count)  # the pairs (entry of a, entry of b) that multiply
    pb = xp.arange(len(pa)) - xp.repeat(xp.cumsum(count) - count, count) + xp.repeat(start[:-1][ac], count)
    lin = ar[pa] * b._size[1] + bc[pb]
    uniq, inv = xp.unique(lin, return_inverse=True)
    dev = a.device
    prod = a._v.index_select(0, _long(pa, dev)) * b._v.index_select(0, _long(pb, dev))
    vals = zeros(len(uniq), dtype=prod.dtype, device=dev).index_add(0, _long(inv.reshape(-1), dev), prod)
    idx = xp.stack([uniq // b._size[1], uniq % b._size[1]])
    return _make(_long(idx, dev), vals, (a._size[0], b._size[1]), True)


def spmm(input, mat2):
    """Product of the sparse COO matrix ``input`` and the dense matrix ``mat2``: a dense matrix."""
    return mm(input, mat2)


# -- elementwise -------------------------------------------------------------------------------------------------
def _mul_dense(s, d):
    """sparse * dense: the dense factor read at the sparse entries (broadcast to the sparse shape)."""
    from ._ops.view import broadcast_shapes
    if broadcast_shapes(s._size, d.shape) != s._size:
        raise RuntimeError(f"mul(sparse, dense): the dense shape {list(d.shape)} does not broadcast to the sparse "
                           f"shape {list(s._size)}")
    sd = s.sparse_dim()
    lin = _linear(array_module(s.device), s._i._data, s._size[:sd])
    at = d.expand(s._size).reshape((-1,) + tuple(s._size[sd:])).index_select(0, _long(lin, s.device))
    return _make(s._i, s._v * at, s._size, s._coalesced)


def _mul_sparse(a, b):
    """sparse * sparse: the entries both specify."""
    if a._size != b._size:
        raise RuntimeError(f"mul: expected 'self' and 'other' to have same size, but {list(a._size)} != "
                           f"{list(b._size)}")
    a, b = a.coalesce(), b.coalesce()
    xp = array_module(a.device)
    sd = a.sparse_dim()
    la, lb = _linear(xp, a._i._data, a._size[:sd]), _linear(xp, b._i._data, b._size[:sd])
    both = xp.isin(la, lb)
    ia, ib = xp.nonzero(both)[0], xp.searchsorted(lb, la[both])
    dev = a.device
    v = a._v.index_select(0, _long(ia, dev)) * b._v.index_select(0, _long(ib, dev))
    return _make(_long(a._i._data[:, ia], dev), v, a._size, True)


def sparse_sum(input, dim=None, dtype=None):
    """Sum of the entries of the sparse tensor ``input`` over ``dim`` (all dimensions by default): a sparse tensor
    while sparse dimensions remain, else a dense one."""
    v = input._v if dtype is None else input._v.to(dtype)
    if dim is None:
        return v.sum()
    dims = {input._wrap_dim(d) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    sd = input.sparse_dim()
    dense_dims = sorted(d - sd + 1 for d in dims if d >= sd)
    if dense_dims:
        v = v.sum(dense_dims)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return v.sum(0)
    size = [input._size[d] for d in keep] + [n for d, n in enumerate(input._size) if d >= sd and d not in dims]
    return _make(input._i[keep], _derived(v), size, False).coalesce()


# -- dense tensors' conversions ----------------------------------------------------------------------------------
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """This tensor as a sparse COO tensor holding its nonzero entries (``sparse_dim`` leading dimensions sparse,
    the rest dense)."""
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"to_sparse: conversion to {layout} is not supported")
    sd = self.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= self.ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {self.ndim}], but got {sd}")
    xp = array_module(self.device)
    a = self._data
    mask = a != 0 if sd == a.ndim else (a != 0).reshape(a.shape[:sd] + (-1,)).any(-1)
    idx = xp.stack(xp.nonzero(mask)) if sd else xp.zeros((0, int(mask)), np.int64)
    lin = _linear(xp, idx, a.shape[:sd])
    v = self.reshape((-1,) + tuple(a.shape[sd:])).index_select(0, _long(lin, self.device))
    return _make(_long(idx, self.device), v, self.shape, True)


def to_sparse_coo(self):
    """This tensor as a sparse COO tensor."""
    return to_sparse(self)


register(to_sparse, to_sparse_coo)
