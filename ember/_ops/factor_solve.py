"""Solving and inverting from a factorization: cholesky_solve, cholesky_inverse, lu_unpack, and the legacy
triangular_solve. The Cholesky ops read one triangle of the factor but, as torch's, give it a full-matrix gradient."""

__all__ = ["cholesky_solve", "cholesky_inverse", "triangular_solve", "lu_unpack", "lu", "lu_solve"]
import warnings

from .._autocast import cpu_float32_inputs
from .._creation import eye, zeros
from .._tensor import register, write_out
from ..autograd.function import Function
from ..return_types import structseq
from .decomp import _pivots_matrix, lu_factor_ex
from .decomp import lu_solve as linalg_lu_solve
from .._dtype import scalar_name
from .matmul import constant, matmul, xp_of
from .solve import _triangular, check_float, check_matrix, solve_triangular
from .view import broadcast_pair

_TriangularSolveT = structseq("triangular_solve", ("solution", "cloned_coefficient"))
_LuUnpackT = structseq("lu_unpack", ("P", "L", "U"))
_LuWithInfoT = structseq("_lu_with_info", ("LU", "pivots", "info"))


def _check_pair(B, A, op):
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead")
    check_matrix(A, op)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(B.dtype)} and "
                           f"A of type {scalar_name(A.dtype)} instead.")


class CholeskySolve(Function):
    @staticmethod
    def forward(ctx, B, L, upper):
        xp = ctx.xp
        Lh = xp.conj(xp.swapaxes(L, -1, -2))
        if upper:  # A = U^H U
            X = _triangular(xp, L, _triangular(xp, Lh, B, False, False), True, False)
        else:  # A = L L^H
            X = _triangular(xp, Lh, _triangular(xp, L, B, False, False), True, False)
        ctx.upper = upper
        ctx.save_for_backward(L, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        L, X = ctx.saved_tensors
        gB = CholeskySolve.apply(grad, L, upper=ctx.upper)
        gL = None
        if ctx.needs_input_grad[1]:  # torch's formula: with C = gB X^H, -(C + C^H) L, or -U (C + C^H)
            C = matmul(gB, X.mH)
            C = C + C.mH
            gL = -matmul(L, C) if ctx.upper else -matmul(C, L)
        return gB, gL


@cpu_float32_inputs  # on CPU autocast's float32 list
def cholesky_solve(B, L, upper=False, *, out=None):
    """The solution ``X`` of ``A X = B`` for ``A = L L^T`` (``upper``: ``A = U^T U``) given its Cholesky factor;
    only that triangle of ``L`` is read.

    Example::

        >>> L = ember.tensor([[2., 0.], [1., 1.]])
        >>> ember.cholesky_solve(L @ L.T @ ember.tensor([[1.], [2.]]), L)
        tensor([[1.],
                [2.]])
    """
    _check_pair(B, L, "cholesky_solve")
    if not (L.dtype.is_floating_point or L.dtype.is_complex) or L.dtype.itemsize < 4:
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{scalar_name(L.dtype)}'")
    return write_out(CholeskySolve.apply(B, L, upper=bool(upper)), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of ``A = L L^T`` (``upper``: ``A = U^T U``) from its Cholesky factor; only that triangle of
    ``L`` is read.

    Example::

        >>> ember.cholesky_inverse(ember.tensor([[2., 0.], [0., 1.]]))
        tensor([[0.2500, 0.0000],
                [0.0000, 1.0000]])
    """
    check_matrix(L, "cholesky_inverse")
    check_float(L, "cholesky_inverse", "cholesky_inverse_out_cpu")
    X = CholeskySolve.apply(eye(L.shape[-1], dtype=L.dtype, device=L.device), L, upper=bool(upper))
    return write_out(X, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``(solution, cloned_coefficient)``: the solution of ``A X = b`` (``transpose``: ``A^T X = b``) for the
    ``upper`` (or lower) triangular ``A``, and a copy of ``A`` broadcast to the batch shape. Deprecated in torch in
    favour of ``linalg.solve_triangular``."""
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be removed "
                  "in a future PyTorch release.", UserWarning, stacklevel=3)
    if b.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {b.ndim} "
                           "dimensions instead")
    _check_pair(b, A, "triangular_solve")
    batch = broadcast_pair(tuple(A.shape[:-2]), tuple(b.shape[:-2]))
    X = solve_triangular(A.mT if transpose else A, b, upper=upper != transpose, unitriangular=unitriangular)
    r = _TriangularSolveT(X, A.expand(tuple(batch) + tuple(A.shape[-2:])).clone())
    if out is not None:
        return _TriangularSolveT(*(write_out(t, o) for t, o in zip(r, out)))
    return r


@cpu_float32_inputs  # on CPU autocast's float32 list
def lu(A, pivot=True, get_infos=False, out=None):
    """``(LU, pivots)`` (``get_infos``: and ``info``) of ``A``, as ``linalg.lu_factor_ex``. Deprecated in torch in
    favour of ``linalg.lu_factor``."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=3)
    r = tuple(lu_factor_ex(A, pivot=pivot))[:3 if get_infos else 2]
    if out is not None:
        r = tuple(write_out(t, o) for t, o in zip(r, out))
    return _LuWithInfoT(*r) if get_infos else r


@cpu_float32_inputs  # on CPU autocast's float32 list
def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The solution of ``A X = b`` from ``(LU_data, LU_pivots) = linalg.lu_factor(A)``. Deprecated in torch in
    favour of ``linalg.lu_solve``, whose arguments are reversed."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=3)
    return linalg_lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` with ``A = P L U`` from ``(LU_data, LU_pivots) = linalg.lu_factor(A)``; ``L`` and ``U`` (or
    ``P``) are empty unless ``unpack_data`` (or ``unpack_pivots``). Differentiable in ``LU_data``.

    Example::

        >>> P, L, U = ember.lu_unpack(*ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])))
        >>> P
        tensor([[0., 1.],
                [1., 0.]])
    """
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = P = empty
    if unpack_data:
        L = LU_data.narrow(-1, 0, k).tril(-1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data.narrow(-2, 0, k).triu()
    if unpack_pivots:
        P = constant(_pivots_matrix(xp_of(LU_data), LU_pivots._data, LU_data.dtype.np, m), LU_data)
    r = _LuUnpackT(P, L, U)
    if out is not None:
        return _LuUnpackT(*(write_out(t, o) for t, o in zip(r, out)))
    return r


register(cholesky_solve, cholesky_inverse, triangular_solve, lu, lu_solve)
