"""Inverses, determinants and linear solvers, with torch's gradients and LAPACK's errors.

Forward passes run LAPACK through ``xp.linalg``; backward passes are torch's formulas written with differentiable
ops, so they differentiate again.
"""

__all__ = ["det", "logdet", "slogdet", "inverse"]
import math

import numpy as np

from .. import _dtype
from .._autocast import cpu_float32_inputs
from .._creation import zeros
from .._tensor import register, write_out
from ..autograd.function import Function
from ..return_types import structseq
from .view import broadcast_pair
from .._dtype import scalar_name
from .matmul import constant, matmul, xp_of
from .view import reshape

_SlogdetT = structseq("linalg_slogdet", ("sign", "logabsdet"))
_LegacySlogdetT = structseq("slogdet", ("sign", "logabsdet"))
_InvExT = structseq("linalg_inv_ex", ("inverse", "info"))
_SolveExT = structseq("linalg_solve_ex", ("result", "info"))


class LinAlgError(RuntimeError):
    """Raised when a decomposition or solver meets a singular or non positive-definite matrix."""


# -- checks and LAPACK helpers -----------------------------------------------------------------------------------
def check_float(A, op, kernel=None):
    """torch's dtype errors: integers are refused; half types too (by name of the missing ``kernel`` if given)."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {scalar_name(A.dtype)}")
    if A.dtype in (_dtype.float16, _dtype.bfloat16):
        if kernel:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(A.dtype)}'")
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {scalar_name(A.dtype)}")


def check_matrix(A, op, square=True):
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _host(a):
    return a if type(a).__module__ == "numpy" else a.get()


def lapack_info(a, routine):
    """LAPACK's ``info`` of ``getrf`` or ``potrf`` (lower) for each matrix of ``a``, with the factors. Computed on the
    host, matrix by matrix: only failures take this path."""
    import numpy as np
    import scipy.linalg
    a = _host(a)
    flat = a.reshape((-1,) + a.shape[-2:])
    fn = scipy.linalg.get_lapack_funcs(routine, (flat,))
    infos, factors = np.zeros(len(flat), np.int32), np.empty_like(flat)
    for i, m in enumerate(flat):
        out = fn(m, lower=1) if routine == "potrf" else fn(m)
        factors[i], infos[i] = out[0], out[-1]
    return infos.reshape(a.shape[:-2]), factors.reshape(a.shape)


def raise_first(infos, message):
    import numpy as np
    bad = np.flatnonzero(infos.reshape(-1) > 0)
    if bad.size:
        where_ = f"(Batch element {bad[0]}): " if infos.ndim else ""
        raise LinAlgError(message(where_, int(infos.reshape(-1)[bad[0]])))


def _singular_inv(op, a):
    infos, _ = lapack_info(a, "getrf")
    raise_first(infos, lambda b, i: f"{op}: {b}The diagonal element {i} is zero, the inversion could not be "
                                     "completed because the input matrix is singular.")
    raise LinAlgError(f"{op}: The inversion could not be completed because the input matrix is singular.")


def is_linalg_error(e):
    return type(e).__name__ == "LinAlgError"


# -- inverse, determinants, solvers ------------------------------------------------------------------------------
class Inv(Function):
    @staticmethod
    def forward(ctx, A):
        try:
            Y = ctx.xp.linalg.inv(A)
        except Exception as e:
            if not is_linalg_error(e):
                raise
            _singular_inv("linalg.inv", A)
        ctx.save_for_backward(Y)
        return Y

    @staticmethod
    def backward(ctx, grad):
        (Y,) = ctx.saved_tensors
        Yh = Y.mH
        return -matmul(Yh, matmul(grad, Yh))


@cpu_float32_inputs  # on CPU autocast's float32 list
def inv(A, *, out=None):
    """The inverse of each square matrix in ``A``; raises ``LinAlgError`` for singular ones.

    Example::

        >>> ember.linalg.inv(ember.tensor([[2., 0.], [0., 4.]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    check_matrix(A, "linalg.inv")
    check_float(A, "linalg.inv")
    return write_out(Inv.apply(A), out)


inverse = inv


@cpu_float32_inputs  # on CPU autocast's float32 list
def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``info`` is 0, or the 1-based index of the zero pivot that makes a matrix singular."""
    check_matrix(A, "linalg.inv_ex")
    check_float(A, "linalg.inv_ex")
    xp = xp_of(A)
    try:
        Y = Inv.apply(A)
        info = xp.zeros(A.shape[:-2], "int32")
    except LinAlgError:
        if check_errors:
            _singular_inv("linalg.inv_ex", A._data)
        info, bad = _singular_mask(A, xp)
        Y = constant(xp.where(bad, math.nan, xp.linalg.inv(_replace_singular(A, bad, xp))), A)
    return _InvExT(Y, constant(info, A))


def _singular_mask(A, xp):
    """getrf's ``info`` per matrix, and where it is nonzero as a mask broadcasting against the matrices."""
    infos, _ = lapack_info(A._data, "getrf")
    info = xp.asarray(infos)
    return info, (info > 0)[..., None, None]


def _replace_singular(A, bad, xp):
    return xp.where(bad, xp.eye(A.shape[-1], dtype=A._data.dtype), A._data)


def _cofactor(a, xp):
    """The cofactor matrix ``d det / dA`` of every matrix in ``a`` (valid for singular ones), through the SVD."""
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones_like(s[..., :1])
    left = xp.concatenate([ones, xp.cumprod(s, -1)[..., :-1]], -1)
    right = xp.concatenate([xp.cumprod(s[..., ::-1], -1)[..., -2::-1], ones], -1)
    d = left * right * (xp.linalg.det(u) * xp.linalg.det(vh))[..., None]
    return xp.matmul(u * d[..., None, :], vh)


class Det(Function):
    @staticmethod
    def forward(ctx, A):
        d = ctx.xp.linalg.det(A)
        ctx.save_for_backward(A, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        A, d = ctx.saved_tensors
        if A.numel() == 0:
            return zeros(tuple(A.shape), dtype=A.dtype, device=A.device)
        xp = xp_of(A)
        g = reshape(grad, tuple(grad.shape) + (1, 1))
        singular = xp.abs(d._data) < 100 * xp.finfo(d._data.dtype).eps
        if not singular.any():
            return g * reshape(d.conj(), tuple(d.shape) + (1, 1)) * inv(A).mH
        # Singular matrices: the cofactor matrix, a constant here (not differentiable again).
        cof = constant(xp.conj(_cofactor(A._data, xp)), A)
        if singular.all():
            return g * cof
        mask = constant(singular[..., None, None].astype(A._data.dtype), A)
        safe = A * (1 - mask) + constant(xp.eye(A.shape[-1], dtype=A._data.dtype), A) * mask
        return g * (reshape(d.conj(), tuple(d.shape) + (1, 1)) * inv(safe).mH * (1 - mask) + cof * mask)


def det(A, *, out=None):
    """The determinant of each square matrix in ``A``."""
    check_matrix(A, "linalg.det")
    check_float(A, "linalg.det", "lu_cpu")
    return write_out(Det.apply(A), out)


class Slogdet(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.set_materialize_grads(False)
        sign, logabs = ctx.xp.linalg.slogdet(A)
        ctx.save_for_backward(A, sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, gsign, glogabs):
        A, sign = ctx.saved_tensors
        if gsign is not None and A.dtype.is_complex:  # sign = exp(i Im log det) moves with the phase of det
            g = (gsign * sign.conj()).imag * 1j
            g = g if glogabs is None else g + glogabs
        elif glogabs is None:  # the sign of a real determinant is locally constant
            return None
        else:
            g = glogabs
        return reshape(g, tuple(g.shape) + (1, 1)) * inv(A).mH


def _slogdet(A, op):
    check_matrix(A, op)
    check_float(A, op)
    return Slogdet.apply(A)


def linalg_slogdet(A):
    """``(sign, logabsdet)`` of the determinant of each square matrix in ``A``."""
    return _SlogdetT(*_slogdet(A, "linalg.slogdet"))


def slogdet(input):
    """``(sign, logabsdet)`` of the determinant of each square matrix in ``input``."""
    return _LegacySlogdetT(*_slogdet(input, "linalg.slogdet"))


def logdet(input):
    """The log of the determinant of each square matrix: nan where it is negative, -inf where it is zero; complex
    for complex matrices."""
    sign, logabs = _slogdet(input, "logdet")
    if input.dtype.is_complex:
        return sign.log() + logabs
    return logabs + constant(xp_of(input).where(sign._data < 0, math.nan, 0).astype(logabs._data.dtype), input)


def _solve(xp, A, B):
    """``xp.linalg.solve`` of ``A (*, n, n)`` and ``B (*, n, k)`` with batch dimensions broadcast (CuPy's needs them
    equal)."""
    if xp is not np:
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        A, B = xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(B, batch + B.shape[-2:])
    return xp.linalg.solve(A, B)


class Solve(Function):
    """``A^{-1} B`` for ``A (*, n, n)`` and ``B (*, n, k)``, broadcasting batch dimensions."""

    @staticmethod
    def forward(ctx, A, B):
        try:
            X = _solve(ctx.xp, A, B)
        except Exception as e:
            if not is_linalg_error(e):
                raise
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        gB = Solve.apply(A.mH, grad)
        gA = -matmul(gB, X.mH) if ctx.needs_input_grad[0] else None
        return gA, gB


@cpu_float32_inputs  # on CPU autocast's float32 list
def solve(A, B, *, left=True, out=None):
    """The solution ``X`` of ``A X = B`` (``X A = B`` when ``left=False``); ``B`` may be a (batch of) vector(s).

    Example::

        >>> ember.linalg.solve(ember.tensor([[2., 0.], [0., 4.]]), ember.tensor([2., 2.]))
        tensor([1.0000, 0.5000])
    """
    check_matrix(A, "linalg.solve")
    check_float(A, "linalg.solve", "lu_cpu")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_name(A.dtype)} and B of type {scalar_name(B.dtype)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = reshape(B, tuple(B.shape) + (1,)) if vector else B
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    broadcast_pair(A.shape[:-2], Bm.shape[:-2])
    X = Solve.apply(A, Bm) if left else Solve.apply(A.mT, Bm.mT).mT
    return write_out(reshape(X, tuple(X.shape[:-1])) if vector else X, out)


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)`` of ``solve``; ``info`` is nonzero for singular matrices (and ``result`` nan)."""
    check_float(A, "linalg.solve_ex", "lu_cpu")  # not on CPU autocast's float32 list, unlike solve
    xp = xp_of(A)
    try:
        X = solve(A, B, left=left)
        info = xp.zeros(A.shape[:-2], "int32")
    except LinAlgError:
        if check_errors:
            raise
        info, bad = _singular_mask(A, xp)
        X = solve(constant(_replace_singular(A, bad, xp), A), B.detach(), left=left)
        bad = bad if X.ndim == A.ndim else bad[..., 0]
        X = constant(xp.where(bad, math.nan, X._data), A)
    return _SolveExT(X, constant(info, A))


def _triangular(xp, A, B, upper, unit):
    """Solves with the ``upper`` (or lower) triangle of ``A``, unit diagonal if ``unit``, broadcasting batches."""
    T = xp.triu(A) if upper else xp.tril(A)
    if unit:
        idx = xp.arange(T.shape[-1])
        T[..., idx, idx] = 1
    if not upper:  # reversing rows and columns makes it upper triangular: LU then pivots nothing, as trsm
        T, B = T[..., ::-1, ::-1], B[..., ::-1, :]
    try:
        X = _solve(xp, T, B)
    except Exception as e:
        if not is_linalg_error(e):
            raise
        X = _back_substitute(xp, T, B)
    return X if upper else X[..., ::-1, :]


def _back_substitute(xp, T, B):
    """Back substitution with no singularity check, so that a zero pivot gives inf and nan as in torch."""
    n = T.shape[-1]
    X = xp.zeros(xp.broadcast_shapes(T.shape[:-2], B.shape[:-2]) + B.shape[-2:], xp.result_type(T, B))
    with np.errstate(divide="ignore", invalid="ignore"):  # CuPy has no errstate: it never warns
        for i in range(n - 1, -1, -1):
            acc = xp.matmul(T[..., i:i + 1, i + 1:], X[..., i + 1:, :])[..., 0, :]
            X[..., i, :] = (B[..., i, :] - acc) / T[..., i, i:i + 1]
    return X


class SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        xp = ctx.xp
        if left:
            X = _triangular(xp, A, B, upper, unitriangular)
        else:  # X A = B  <=>  A^T X^T = B^T
            X = xp.swapaxes(_triangular(xp, xp.swapaxes(A, -1, -2), xp.swapaxes(B, -1, -2), not upper, unitriangular),
                            -1, -2)
        ctx.upper, ctx.left, ctx.unit = upper, left, unitriangular
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.upper, ctx.left, ctx.unit
        gB = SolveTriangular.apply(A.mH, grad, upper=not upper, left=left, unitriangular=unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -matmul(gB, X.mH) if left else -matmul(X.mH, gB)
            gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
        return gA, gB


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """The solution of ``A X = B`` (``X A = B`` when ``left=False``) for triangular ``A``: only the ``upper``
    (or lower) triangle of ``A`` is read, and its diagonal is taken as ones when ``unitriangular``."""
    op = "linalg.solve_triangular"
    check_matrix(A, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    check_float(A, op, "triangular_solve_cpu")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_name(A.dtype)} and B of type {scalar_name(B.dtype)} instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    broadcast_pair(A.shape[:-2], B.shape[:-2])
    return write_out(SolveTriangular.apply(A, B, upper=upper, left=left, unitriangular=unitriangular), out)


register(det, logdet, slogdet, inverse=inv)
