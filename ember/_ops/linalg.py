"""Linear algebra: products (matmul.py), solvers (solve.py), decompositions (decomp.py), and matrix norms, cross
and vecdot here."""
import math
import warnings

from .. import _dtype
from .._autocast import cpu_float32_inputs
from .._tensor import register, write_out
from .decomp import *  # noqa: F401,F403
from .decomp import __all__ as _decomp_all
from .decomp import svdvals
from .scan import cumprod
from .shape import cat
from .solve import check_float, check_matrix, inv, inv_ex, solve
from .matmul import *  # noqa: F401,F403
from .matmul import __all__ as _matmul_all
from .view import broadcast_pair
from .matmul import constant, scalar_name, write_same, xp_of
from .solve import *  # noqa: F401,F403
from .solve import __all__ as _solve_all
from .reduce import vector_norm
from .view import reshape

__all__ = list(_matmul_all) + list(_solve_all) + list(_decomp_all) + ["cross"]

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of the matrices in dimensions ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column sum of ``|A|``), inf / -inf (row sums).

    Example::

        >>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), ord=1)
        tensor(6.)
    """
    op = "linalg.matrix_norm"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    d0, d1 = A._wrap_dim(dims[0]), A._wrap_dim(dims[1])
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    if ord == "fro" or A.numel() == 0:  # every matrix norm of an empty matrix is 0
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype, out=out)
    if ord in ("nuc", 2, -2):
        check_float(A, op)  # not on CPU autocast's float32 list, unlike the svdvals it is built on
        if dtype is not None:
            dt = _dtype.to_dtype(dtype)
            if _dtype.promote_types(A.dtype, dt) is not dt:
                raise RuntimeError(f"{op}: the dtype of the input ({scalar_name(A.dtype)}) should be convertible "
                                   f"without narrowing to the specified dtype ({scalar_name(dt)})")
            A = A.to(dt)
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = vector_norm(s, {"nuc": 1, 2: math.inf, -2: -math.inf}[ord], -1)
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return write_out(r, out)
    summed, maxed = (d0, d1) if ord in (1, -1) else (d1, d0)
    r = vector_norm(vector_norm(A, 1, summed, True, dtype=dtype), math.inf if ord > 0 else -math.inf, maxed, True)
    if not keepdim:
        r = reshape(r, tuple(s for i, s in enumerate(r.shape) if i not in (d0, d1)))
    return write_out(r, out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (``dim`` of length 1, or a 1-D ``A``) or a matrix norm (``dim`` of length 2, a 2-D ``A``, or
    a string ``ord``). Without ``ord`` and ``dim``, the 2-norm of all elements."""
    if dim is None and ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    else:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
        dims = tuple(range(A.ndim))
    if isinstance(ord, str) or len(dims) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim if dim is not None else dims, keepdim,
                           dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)


def linalg_cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim``; other dimensions broadcast."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = input._wrap_dim(dim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(other.dtype)}")
    broadcast_pair(input.shape, other.shape)
    # (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), each product rounded in the inputs' dtype
    r = input.roll(-1, d) * other.roll(1, d) - input.roll(1, d) * other.roll(-1, d)
    return write_same(r, out)


def cross(input, other, dim=None, *, out=None):
    """The cross product along ``dim`` (by default, with a warning, the first dimension of size 3)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(broadcast_pair(input.shape, other.shape)) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim`` (the first conjugated), broadcasting the other dimensions."""
    for t in (x, y):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                               f"{scalar_name(t.dtype)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{scalar_name(x.dtype)} and y of type {scalar_name(y.dtype)} instead")
    n, m = x.shape[x._wrap_dim(dim)], y.shape[y._wrap_dim(dim)]
    if n != m and n != 1 and m != 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
                           f"elements, but got {n} and {m} elements respectively")
    return write_same((x.conj() * y).sum(dim), out, lambda r, o: f"linalg.vecdot: Expected out of dtype"
                                                                  f"{scalar_name(r)} but found {scalar_name(o)}")


_COND_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


@cpu_float32_inputs  # on CPU autocast's float32 list
def cond(A, p=None, *, out=None):
    """The condition number of each matrix in norm ``p``: the ratio of extreme singular values for ``p`` None,
    2 or -2 (any shape), else ``norm(A, p) * norm(inv(A), p)`` (square ``A``; inf where ``A`` is singular)."""
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    check_matrix(A, f"linalg.cond(ord={p})", square=p not in (None, 2, -2))
    check_float(A, "linalg.cond")
    if p in (None, 2, -2):
        s = svdvals(A)
        r = s.narrow(-1, 0, 1) / s.narrow(-1, s.shape[-1] - 1, 1)
        r = reshape(r if p != -2 else 1 / r, tuple(A.shape[:-2]))
        return write_out(r, out)
    Ainv, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    bad = info._data > 0
    if bad.any():
        r = r.masked_fill(constant(bad, A), math.inf)
    return write_out(r, out)


def vander(x, *, N=None):
    """The Vandermonde matrices ``[1, x, x^2, ..., x^(N-1)]`` of the vectors in ``x`` (``N`` defaults to
    ``x.shape[-1]``)."""
    N = (x.shape[-1] if x.ndim else 1) if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    dt = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else _dtype.int64
    col = reshape(x, tuple(x.shape) + (1,))
    ones = constant(xp_of(x).ones(tuple(x.shape) + (1,), dt.np), x)
    return cat([ones, cumprod(col.expand(*x.shape, N - 1), -1, dtype=dt)], -1)


@cpu_float32_inputs  # on CPU autocast's float32 list
def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` for ``tensordot(A, ., ind)``: ``A`` reshaped to a square matrix of
    ``prod(shape[:ind])`` rows and inverted; the result has shape ``shape[ind:] + shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    r = inv(reshape(A, (rows, cols)))
    return write_out(reshape(r, tuple(A.shape[ind:]) + tuple(A.shape[:ind])), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims`` are dimensions of ``A`` moved to the end first."""
    if dims is not None:
        dims = [A._wrap_dim(d) for d in dims]
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim:])
    rows, cols = B.numel(), math.prod(shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    X = solve(reshape(A, (rows, cols)), reshape(B, (rows,)))
    return write_out(reshape(X, shape), out)


register(cross)
