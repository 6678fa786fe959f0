"""Matrix decompositions (Cholesky, QR, eigh, SVD) and what is built on them: pseudo-inverse, least squares,
rank, powers and exponential, with torch's gradients.

Forward passes run LAPACK through ``xp.linalg``; backward passes are torch's formulas written with differentiable
ops, so they differentiate again.
"""

__all__ = ["cholesky", "qr", "svd", "pinverse", "matrix_power", "matrix_exp", "orgqr", "geqrf", "ormqr"]
import warnings

from .. import _dtype
from .._autocast import cpu_float32_inputs, input_precision
from .._creation import zeros
from .._tensor import Tensor, register, write_out
from ..autograd.function import Function
from ..return_types import structseq
from .view import broadcast_pair
from .matmul import constant, matmul, scalar_name, write_same_all, xp_of
from .solve import (LinAlgError, _host, check_float, check_matrix, inv, is_linalg_error, lapack_info, raise_first,
                    solve_triangular)
from .view import reshape

_CholeskyExT = structseq("linalg_cholesky_ex", ("L", "info"))
_QrT = structseq("linalg_qr", ("Q", "R"))
_LegacyQrT = structseq("qr", ("Q", "R"))
_GeqrfT = structseq("geqrf", ("a", "tau"))
_EighT = structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
_SvdT = structseq("linalg_svd", ("U", "S", "Vh"))
_LegacySvdT = structseq("svd", ("U", "S", "V"))
_LstsqT = structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_LuFactorT = structseq("linalg_lu_factor", ("LU", "pivots"))
_LuFactorExT = structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LuT = structseq("linalg_lu", ("P", "L", "U"))


def _scipy_linalg(xp):
    if xp.__name__ == "numpy":
        import scipy.linalg
        return scipy.linalg
    import cupyx.scipy.linalg
    return cupyx.scipy.linalg


def _not_pd(op, a):
    infos, _ = lapack_info(a, "potrf")
    raise_first(infos, lambda b, i: f"{op}: {b}The factorization could not be completed because the input is not "
                                     f"positive-definite (the leading minor of order {i} is not positive-definite).")
    raise LinAlgError(f"{op}: The factorization could not be completed because the input is not positive-definite.")


def _place(X, rows, cols, r0=0, c0=0):
    """``X (*, m, n)`` placed at row ``r0``, column ``c0`` of zero matrices ``(*, rows, cols)``: a product with
    constant selection matrices, so that it differentiates like any product."""
    xp, dt = xp_of(X), X.dtype.np
    m, n = X.shape[-2:]
    if (rows, r0) != (m, 0):
        X = matmul(constant(xp.eye(rows, m, -r0, dtype=dt), X), X)
    if (cols, c0) != (n, 0):
        X = matmul(X, constant(xp.eye(n, cols, c0, dtype=dt), X))
    return X


# -- Cholesky, QR, eigh, SVD -------------------------------------------------------------------------------------
class Cholesky(Function):
    @staticmethod
    def forward(ctx, A, upper):
        xp = ctx.xp
        src = xp.swapaxes(A, -1, -2) if upper else A  # the factor is read from the triangle it lives in
        try:
            L = xp.linalg.cholesky(src)
        except Exception as e:
            if not is_linalg_error(e):
                raise
            _not_pd("linalg.cholesky", src)
        out = xp.ascontiguousarray(xp.swapaxes(L, -1, -2)) if upper else L
        ctx.upper = upper
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (L,) = ctx.saved_tensors
        if ctx.upper:
            L, grad = L.mH, grad.mH
        gA = matmul(L.mH, grad).tril()
        gA = 0.5 * (gA + gA.tril(-1).mH)
        gA = solve_triangular(L.mH, gA, upper=True)
        return solve_triangular(L, gA, upper=False, left=False)


@cpu_float32_inputs  # on CPU autocast's float32 list
def linalg_cholesky(A, *, upper=False, out=None):
    """The Cholesky factor ``L`` (lower triangular, ``A = L L^T``) of each symmetric positive-definite matrix, or
    ``U = L^T`` when ``upper``.

    Example::

        >>> ember.linalg.cholesky(ember.tensor([[4., 2.], [2., 2.]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    check_matrix(A, "linalg.cholesky")
    check_float(A, "linalg.cholesky", "cholesky_cpu")
    return write_out(Cholesky.apply(A, upper=upper), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: ``info`` is 0, or the order of the leading minor that is not positive-definite."""
    try:
        L = linalg_cholesky(A, upper=upper)
        info = xp_of(A).zeros(A.shape[:-2], "int32")
    except LinAlgError:
        if check_errors:
            raise
        xp = xp_of(A)
        src = xp.swapaxes(A._data, -1, -2) if upper else A._data
        infos, factors = lapack_info(src, "potrf")
        factors = xp.tril(xp.asarray(factors))
        L = constant(xp.ascontiguousarray(xp.swapaxes(factors, -1, -2)) if upper else factors, A)
        info = xp.asarray(infos)
    return _CholeskyExT(L, constant(info, A))


class Qr(Function):
    @staticmethod
    def forward(ctx, A, mode):
        xp = ctx.xp
        ctx.set_materialize_grads(False)
        ctx.mode = mode
        if mode == "r":
            R = xp.linalg.qr(A, mode="r")
            Q = xp.empty((0,), A.dtype)
        else:
            Q, R = xp.linalg.qr(A, mode=mode)
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if gQ is None and gR is None:
            return None
        terms = ([matmul(gR, R.mH)] if gR is not None else []) + ([-matmul(Q.mH, gQ)] if gQ is not None else [])
        gA = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        if m >= n:
            X = gA.triu()
            gA = matmul(Q, X + X.mH - X.diagonal(0, -2, -1).real.diag_embed())
            if gQ is not None:
                gA = gA + gQ
            return solve_triangular(R.mH, gA, upper=False, left=False)
        X = (gA.mH - gA).tril()
        if X.dtype.is_complex:  # half the (imaginary) diagonal of the skew-Hermitian part
            X = X - 0.5j * X.diagonal(0, -2, -1).imag.diag_embed()
        gA = matmul(Q, X)
        gA = solve_triangular(R.narrow(-1, 0, m).mH, gA, upper=False, left=False)
        gA = _place(gA, m, n)
        return gA + matmul(Q, gR) if gR is not None else gA


def _qr(A, mode, op):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    check_matrix(A, op, square=False)
    check_float(A, op, "geqrf_cpu")
    return Qr.apply(A, mode=mode)


@cpu_float32_inputs  # on CPU autocast's float32 list
def linalg_qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal, ``R`` upper triangular. ``mode`` is 'reduced', 'complete'
    (square ``Q``) or 'r' (``R`` only; ``Q`` empty)."""
    return write_same_all(_QrT(*_qr(A, mode, "linalg.qr")), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def qr(input, some=True):
    """``(Q, R)`` of ``input`` (deprecated: use ``linalg.qr``); ``some=False`` gives the complete decomposition."""
    return _LegacyQrT(*_qr(input, "reduced" if some else "complete", "linalg.qr"))


class Eigh(Function):
    @staticmethod
    def forward(ctx, A, UPLO):
        ctx.set_materialize_grads(False)
        L, V = ctx.xp.linalg.eigh(A, UPLO=UPLO)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        return _eigh_backward(gL, gV, L, V)


def _eigh_backward(gL, gV, L, V):
    if gV is None:
        return None if gL is None else matmul(V * gL.unsqueeze(-2), V.mH)
    VhgV = matmul(V.mH, gV)
    VhgV = 0.5 * (VhgV - VhgV.mH)  # onto the skew-Hermitian matrices: the tangent space of unitary V
    n = L.shape[-1]
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + constant(xp_of(L).eye(n, dtype=L._data.dtype), L)
    ret = VhgV / E
    if gL is not None:
        ret = ret + gL.diag_embed()
    return matmul(V, matmul(ret, V.mH))


class Eigvalsh(Function):
    @staticmethod
    def forward(ctx, A, UPLO):
        ctx.uplo = UPLO
        ctx.save_for_backward(A)
        return ctx.xp.linalg.eigvalsh(A, UPLO=UPLO)

    @staticmethod
    def backward(ctx, grad):
        (A,) = ctx.saved_tensors
        L, V = Eigh.apply(A, UPLO=ctx.uplo)  # recomputed so that the gradient differentiates again
        return _eigh_backward(grad, None, L, V)


def _check_eigh(A, UPLO, op):
    check_matrix(A, op)
    check_float(A, op, "linalg_eigh_cpu")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@cpu_float32_inputs  # on CPU autocast's float32 list
def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, eigenvalues ascending; only the ``UPLO`` triangle
    is read. Eigenvectors are defined up to sign: differentiate losses that do not depend on it."""
    _check_eigh(A, UPLO, "linalg.eigh")
    return write_same_all(_EighT(*Eigh.apply(A, UPLO=UPLO)), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of each symmetric matrix, ascending."""
    _check_eigh(A, UPLO, "linalg.eigvalsh")
    return write_out(Eigvalsh.apply(A, UPLO=UPLO), out)


class Svd(Function):
    @staticmethod
    def forward(ctx, A, full_matrices):
        ctx.set_materialize_grads(False)
        ctx.full = full_matrices
        U, S, Vh = ctx.xp.linalg.svd(A, full_matrices=full_matrices)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        if ctx.full:  # only the first k singular vectors are determined
            k = S.shape[-1]
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
            gU = gU.narrow(-1, 0, k) if gU is not None else None
            gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
        return _svd_backward(gU, gS, gVh, U, S, Vh)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    k = S.shape[-1]
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + constant(xp_of(S).eye(k, dtype=S._data.dtype), S)
    ret = 0
    if gU is not None:
        UhgU = matmul(U.mH, gU)
        UhgU = UhgU - UhgU.mH
        ret = UhgU * S.unsqueeze(-2)
    if gVh is not None:
        VhgV = matmul(Vh, gVh.mH)
        ret = ret + S.unsqueeze(-1) * (VhgV - VhgV.mH)
    ret = ret / E
    if gS is not None:
        ret = ret + gS.diag_embed()
    if gU is not None and U.dtype.is_complex:  # the phase of each singular pair
        ret = ret + (0.5j * UhgU.diagonal(0, -2, -1).imag / S).diag_embed()
    if m > n and gU is not None:
        gA = matmul(U, ret)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(U.mH, gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(ret, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, Vh.mH), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(ret, Vh)) if m >= n else matmul(matmul(U, ret), Vh)


class Svdvals(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return ctx.xp.linalg.svd(A, compute_uv=False)

    @staticmethod
    def backward(ctx, grad):
        (A,) = ctx.saved_tensors
        U, S, Vh = Svd.apply(A, full_matrices=False)  # recomputed so that the gradient differentiates again
        return _svd_backward(None, grad, None, U, S, Vh)


def _check_svd(A, op, driver=None):
    check_matrix(A, op, square=False)
    check_float(A, op, "linalg_svd_cpu")
    if driver is not None and A.device.type != "cuda":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


@cpu_float32_inputs  # on CPU autocast's float32 list
def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending. Singular vectors are defined up to
    sign: differentiate losses that do not depend on it (``S``, or ``U diag(S) Vh``)."""
    _check_svd(A, "linalg.svd", driver)
    return write_same_all(_SvdT(*Svd.apply(A, full_matrices=full_matrices)), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix, descending."""
    _check_svd(A, "linalg.svdvals", driver)
    return write_out(Svdvals.apply(A), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def svd(input, some=True, compute_uv=True):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (note: ``V``, not ``Vh``); ``some=False`` gives square
    ``U``, ``V``. With ``compute_uv=False``, ``U`` and ``V`` are zero-filled."""
    _check_svd(input, "linalg.svd")
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _LegacySvdT(zeros(batch + (m, m), dtype=input.dtype, device=input.device), svdvals(input),
                           zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    U, S, Vh = Svd.apply(input, full_matrices=not some)
    return _LegacySvdT(U, S, Vh.mH)


# -- LU ----------------------------------------------------------------------------------------------------------
def _getrf(xp, a):
    """LAPACK's ``getrf`` of each matrix of ``a``, on the host: the packed factors, 1-based int32 pivots, ``info``
    and the row permutation ``perm`` (``A[perm] = L U``)."""
    import numpy as np
    import scipy.linalg
    h = a if xp.__name__ == "numpy" else a.get()
    m, n = h.shape[-2:]
    k = min(m, n)
    flat = h.reshape((-1, m, n))
    lus, pivs = np.empty_like(flat), np.empty((len(flat), k), np.int32)
    infos, perms = np.zeros(len(flat), np.int32), np.tile(np.arange(m), (len(flat), 1))
    if m and n:
        getrf = scipy.linalg.get_lapack_funcs("getrf", (flat,))
        for i, mat in enumerate(flat):
            lus[i], piv, infos[i] = getrf(mat)
            pivs[i] = piv + 1
            for j, q in enumerate(piv):
                perms[i, [j, q]] = perms[i, [q, j]]
    batch = h.shape[:-2]
    return (xp.asarray(lus.reshape(h.shape)), xp.asarray(pivs.reshape(batch + (k,))),
            xp.asarray(infos.reshape(batch)), perms.reshape(batch + (m,)))


def _perm_matrix(xp, perm, dtype):
    """``P`` with ``A = P L U`` from the permutation ``A[perm] = L U``."""
    import numpy as np
    m = perm.shape[-1]
    P = np.zeros(perm.shape + (m,), dtype)
    np.put_along_axis(P, perm[..., None], 1, -1)
    return xp.asarray(np.swapaxes(P, -1, -2))


def _pivots_matrix(xp, pivots, dtype, m):
    """``P`` (``A = P L U``) from 1-based LAPACK ``pivots`` (an array)."""
    import numpy as np
    piv = _host(pivots) - 1
    perm = np.tile(np.arange(m), piv.shape[:-1] + (1,))
    flat, fp = perm.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for i in range(len(flat)):
        for j, q in enumerate(fp[i]):
            flat[i, [j, q]] = flat[i, [q, j]]
    return _perm_matrix(xp, flat.reshape(perm.shape), dtype)


class Lu(Function):
    """``(P, L, U, LU, pivots, info)`` of ``A = P L U``; only ``L`` and ``U`` carry gradients."""

    @staticmethod
    def forward(ctx, A):
        xp = ctx.xp
        LU, pivots, info, perm = _getrf(xp, A)
        m, n = A.shape[-2:]
        k = min(m, n)
        L = xp.tril(LU[..., :, :k], -1) + xp.eye(m, k, dtype=A.dtype)
        U = xp.triu(LU[..., :k, :])
        P = _perm_matrix(xp, perm, A.dtype)
        ctx.mark_non_differentiable(P, LU, pivots, info)
        ctx.save_for_backward(P, L, U)
        return P, L, U, LU, pivots, info

    @staticmethod
    def backward(ctx, gP, gL, gU, gLU, gpiv, ginfo):
        P, L, U = ctx.saved_tensors
        return _lu_backward(gL, gU, P, L, U)


def _lu_backward(gL, gU, P, L, U):
    """The gradient of ``A = P L U`` from those of ``L`` and ``U``."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = matmul(L.mH, gL).tril(-1) + matmul(gU, U.mH).triu()
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = (matmul(L.mH, gL) - matmul(gU.triu(), U.mH)).tril(-1)
        gA = solve_triangular(U1.mH, gA, upper=False, left=False)
        gA = _place(gA + gU.narrow(-1, 0, k).triu(), k, n) + _place(gU.narrow(-1, k, n - k), k, n, 0, k)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
    else:
        L1 = L.narrow(-2, 0, k)
        gA = (matmul(gU, U.mH) - matmul(L.mH, gL.tril(-1))).triu()
        gA = solve_triangular(L1.mH, gA, upper=True, unitriangular=True)
        gA = _place(gA + gL.narrow(-2, 0, k).tril(-1), m, k) + _place(gL.narrow(-2, k, m - k), m, k, k, 0)
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
    return matmul(P, gA)


def _lu(A, pivot, op):
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           "instead")
    check_float(A, op, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return Lu.apply(A)


def _raise_zero_pivot(info, op):
    raise_first(_host(info._data), lambda b, i: f"{op}: {b}U[{i},{i}] is zero and using it on lu_solve would "
                                                "result in a division by zero. If you still want to perform the "
                                                "factorization, consider calling linalg.lu(A, pivot) or "
                                                "linalg.lu_factor_ex(A, pivot)")


def _packed(L, U):
    """``LU``: the strict lower triangle of ``L`` and the upper triangle of ``U`` in one ``(*, m, n)`` matrix."""
    m, n = L.shape[-2], U.shape[-1]
    return _place(L.tril(-1), m, n) + _place(U, m, n)


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation, ``L`` unit lower and ``U`` upper triangular (or
    trapezoidal for rectangular ``A``)."""
    P, L, U = _lu(A, pivot, "linalg.lu")[:3]
    return _LuT(P, L, U)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: the packed LU factors, 1-based row swaps, and LAPACK's ``info`` (0, or the 1-based
    index of the first zero on the diagonal of ``U``)."""
    P, L, U, LU, pivots, info = _lu(A, pivot, "linalg.lu_factor_ex")
    if check_errors:
        _raise_zero_pivot(info, "torch.linalg.lu_factor_ex")
    return _LuFactorExT(_packed(L, U) if L.requires_grad or U.requires_grad else LU, pivots, info)


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``: the packed LU factors of ``A`` and the 1-based row swaps, as LAPACK's ``getrf``; raises
    for exactly singular matrices (see ``lu_factor_ex``).

    Example::

        >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]]))
        >>> pivots
        tensor([2, 2], dtype=ember.int32)
    """
    P, L, U, LU, pivots, info = _lu(A, pivot, "linalg.lu_factor")
    _raise_zero_pivot(info, "torch.linalg.lu_factor")
    return _LuFactorT(_packed(L, U) if L.requires_grad or U.requires_grad else LU, pivots)


@input_precision  # built on products that autocast would cast
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """The solution of ``A X = B`` from ``(LU, pivots) = lu_factor(A)``; ``X A = B`` when ``left=False``, and
    ``A^T`` in place of ``A`` when ``adjoint``. Differentiable in ``LU`` and ``B``."""
    op = "linalg.lu_solve"
    check_matrix(LU, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    check_float(LU, op, "lu_solve_cpu")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"{op}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{scalar_name(LU.dtype)} and B of type {scalar_name(B.dtype)} instead")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{op}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.shape)} instead")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return write_out(lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH, out)
    P = constant(_pivots_matrix(xp_of(LU), pivots._data, LU.dtype.np, n), LU)
    if adjoint:  # U^H L^H P^T X = B
        Y = solve_triangular(LU.mH, B, upper=False)
        X = matmul(P, solve_triangular(LU.mH, Y, upper=True, unitriangular=True))
    else:  # P L U X = B
        Y = solve_triangular(LU, matmul(P.mT, B), upper=False, unitriangular=True)
        X = solve_triangular(LU, Y, upper=True)
    return write_out(X, out)


# -- pseudo-inverse, least squares, rank -------------------------------------------------------------------------
def _tolerances(A, atol, rtol, xp):
    """torch's rule: rtol defaults to eps * max(m, n), or to 0 where atol > 0 is given; tensors become arrays."""
    atol, rtol = (t._data if isinstance(t, Tensor) else t for t in (atol, rtol))
    if rtol is None:
        default = xp.finfo(A.dtype.np).eps * max(A.shape[-2:])
        rtol = default if atol is None else xp.where(xp.asarray(atol) > 0, 0.0, default)
    return 0.0 if atol is None else atol, rtol


def _cutoff(xp, s, atol, rtol):
    """The per-matrix threshold ``max(atol, rtol * max(s))`` shaped to compare with ``s (*, k)``."""
    smax = xp.max(s, axis=-1) if s.shape[-1] else xp.zeros(s.shape[:-1], s.dtype)
    return xp.maximum(xp.asarray(atol, s.dtype), xp.asarray(rtol, s.dtype) * smax)[..., None]


def _pinv_raw(xp, A, atol, rtol, hermitian=False):
    """The pseudo-inverse of raw ``A``, and the singular values (absolute eigenvalues) it kept or dropped."""
    if hermitian:
        w, V = xp.linalg.eigh(A)
        s = xp.abs(w)
        keep = s > _cutoff(xp, s, atol, rtol)
        winv = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(A.dtype)
        return xp.matmul(V * winv[..., None, :], xp.conj(xp.swapaxes(V, -1, -2))), s, keep
    U, s, Vh = xp.linalg.svd(A, full_matrices=False)
    keep = s > _cutoff(xp, s, atol, rtol)
    sinv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(A.dtype)
    return xp.matmul(xp.conj(xp.swapaxes(Vh, -1, -2)) * sinv[..., None, :], xp.conj(xp.swapaxes(U, -1, -2))), s, keep


def _pinv_backward(grad, P, A):
    m, n = A.shape[-2:]
    Ph, gh = P.mH, grad.mH
    if m <= n:
        K = matmul(gh, P)
        KPh = matmul(K, Ph)
        return -matmul(P, K).mH + KPh - matmul(matmul(A, P), KPh) + matmul(matmul(Ph, P), gh - matmul(K, A))
    K = matmul(P, gh)
    PhK = matmul(Ph, K)
    return -matmul(K, P).mH + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK - matmul(matmul(PhK, P), A)


class Pinv(Function):
    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        P = _pinv_raw(ctx.xp, A, atol, rtol, hermitian)[0]
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, grad):
        A, P = ctx.saved_tensors
        return _pinv_backward(grad, P, A)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse: singular values at or below ``max(atol, rtol * max(S))`` are dropped
    (``rtol`` defaults to ``eps * max(m, n)``; ``rcond`` is the legacy name of ``rtol``)."""
    if A.ndim < 2 or A.dtype not in (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128):
        raise RuntimeError(f"linalg.pinv({scalar_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol, xp_of(A))
    return write_out(Pinv.apply(A, atol=atol, rtol=rtol, hermitian=hermitian), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, dropping singular values below ``rcond * max(S)``."""
    return pinv(input, rtol=rcond)


@cpu_float32_inputs  # on CPU autocast's float32 list
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above ``max(atol, rtol * max(S))`` (``tol`` is the legacy ``atol``)."""
    check_matrix(A, "linalg.matrix_rank", square=False)
    if A.dtype not in (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    xp = xp_of(A)
    atol, rtol = _tolerances(A, atol, rtol, xp)
    a = A._data
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    rank = xp.sum(s > _cutoff(xp, s, atol, rtol), axis=-1).astype("int64")
    return write_out(constant(xp.asarray(rank), A), out)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class Lstsq(Function):
    """The minimum-norm least-squares solution of ``A X = B`` for ``B (*, m, k)``, and what ``driver`` reports."""

    @staticmethod
    def forward(ctx, A, B, rtol, driver):
        xp = ctx.xp
        ctx.set_materialize_grads(False)
        m, n = A.shape[-2:]
        P, s, keep = _pinv_raw(xp, A, 0.0, rtol)
        X = xp.matmul(P, B)
        batch = X.shape[:-2]
        rank = xp.broadcast_to(xp.sum(keep, axis=-1), batch).astype("int64")
        residuals = xp.empty((0,), s.dtype)
        if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
            r = xp.matmul(A, X) - B
            residuals = xp.sum((r * xp.conj(r)).real, axis=-2)
        rank = xp.empty((0,), "int64") if driver == "gels" else rank
        sv = xp.empty((0,), s.dtype)
        if driver in ("gelsd", "gelss"):
            sv = xp.broadcast_to(s, batch + s.shape[-1:]).copy()
        ctx.mark_non_differentiable(sv)
        ctx.save_for_backward(A, B, X)
        return X, residuals, rank, sv

    @staticmethod
    def backward(ctx, gX, gL, grank, gsv):
        A, B, X = ctx.saved_tensors
        gA = gB = None
        if gX is not None:
            P = pinv(A)
            gA = _pinv_backward(matmul(gX, B.mH), P, A) if ctx.needs_input_grad[0] else None
            gB = matmul(P.mH, gX)
        if gL is not None and gL.numel():  # Danskin: X is optimal, so only the explicit dependence counts
            r = matmul(A, X) - B
            gL = gL.unsqueeze(-2)
            gAL, gBL = 2 * matmul(gL * r, X.mH), -2 * gL * r
            gA, gB = (gAL, gBL) if gX is None else (gA + gAL if gA is not None else None, gB + gBL)
        return gA, gB


@cpu_float32_inputs  # on CPU autocast's float32 list
def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B``, as ``(solution, residuals, rank, singular_values)``.

    The solution is the minimum-norm one (singular values below ``rcond * max(S)`` are dropped). As on torch's
    CPU, ``rank`` is filled unless ``driver='gels'``, ``singular_values`` for 'gelsd' and 'gelss', and
    ``residuals`` (squared residual norms) when ``m > n``, every matrix has full rank and the driver is not the
    default 'gelsy'.
    """
    op = "torch.linalg.lstsq"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    check_float(A, op)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{scalar_name(A.dtype)} and other's dtype {scalar_name(B.dtype)}")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = A.ndim == B.ndim + 1
    if B.shape[-1 if vector else -2] != A.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size({-1 if vector else -2})")
    Bm = reshape(B, tuple(B.shape) + (1,)) if vector else B
    broadcast_pair(A.shape[:-2], Bm.shape[:-2])
    rtol = xp_of(A).finfo(A.dtype.np).eps * max(A.shape[-2:]) if rcond is None else rcond
    X, residuals, rank, sv = Lstsq.apply(A, Bm, rtol=rtol, driver=driver)
    return _LstsqT(reshape(X, tuple(X.shape[:-1])) if vector else X, residuals, rank, sv)


# -- matrix functions --------------------------------------------------------------------------------------------
class EyeLike(Function):
    """Identity matrices shaped like ``A``; ``A``'s gradient is zero (torch keeps the graph for ``A ** 0``)."""

    @staticmethod
    def forward(ctx, A):
        xp = ctx.xp
        return xp.ascontiguousarray(xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


def matrix_power(A, n, *, out=None):
    """``A`` multiplied by itself ``n`` times; ``n = 0`` gives the identity and ``n < 0`` powers of the inverse."""
    check_matrix(A, "linalg.matrix_power")
    if n == 0:
        return write_out(EyeLike.apply(A), out)
    if n < 0:
        A, n = inv(A), -n
    result = None
    while n:  # binary exponentiation
        if n & 1:
            result = A if result is None else matmul(result, A)
        n >>= 1
        if n:
            A = matmul(A, A)
    return write_out(result * 1 if result is A else result, out)


def _expm(xp, A):
    sl = _scipy_linalg(xp)
    if A.ndim == 2 or xp.__name__ == "numpy":
        return sl.expm(A)
    flat = A.reshape((-1,) + A.shape[-2:])
    return xp.stack([sl.expm(m) for m in flat]).reshape(A.shape)


class MatrixExp(Function):
    half_in_float32 = True

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return _expm(ctx.xp, A).astype(A.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # The adjoint of the Frechet derivative: the upper-right block of exp([[A^H, G], [0, A^H]]).
        (A,) = ctx.saved_tensors
        n = A.shape[-1]
        Ah = A.mH
        M = _place(Ah, 2 * n, 2 * n) + _place(grad, 2 * n, 2 * n, 0, n) + _place(Ah, 2 * n, 2 * n, n, n)
        return MatrixExp.apply(M).narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    check_matrix(A, "linalg.matrix_exp")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(A.dtype)}")
    return MatrixExp.apply(A)


@cpu_float32_inputs  # on CPU autocast's float32 list
def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` the ``i``-th column
    of ``A`` below the diagonal and 1 on it (LAPACK's ``orgqr``)."""
    op = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    check_float(A, op, "orgqr_cpu")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"{op}: tau dtype {scalar_name(tau.dtype)} does not match input dtype "
                           f"{scalar_name(A.dtype)}")
    return write_out(_householder_q(A, tau).narrow(-1, 0, n) * 1, out)


def _householder_q(A, tau):
    """The full ``(m, m)`` product ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H``."""
    xp, dt = xp_of(A), A.dtype.np
    m, n = A.shape[-2:]
    V = A.tril(-1) + constant(xp.eye(m, n, dtype=dt), A)
    Q = constant(xp.eye(m, dtype=dt), A)
    for i in range(tau.shape[-1]):
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q = Q - matmul(matmul(Q, v) * t, v.mH)
    return Q


@cpu_float32_inputs  # on CPU autocast's float32 list
def orgqr(input, tau):
    """``linalg.householder_product``."""
    return householder_product(input, tau)


class Geqrf(Function):
    @staticmethod
    def forward(ctx, A):
        xp = ctx.xp
        h, tau = xp.linalg.qr(A, mode="raw")  # h is LAPACK's Fortran-ordered a, transposed
        return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@cpu_float32_inputs  # on CPU autocast's float32 list
def geqrf(input, *, out=None):
    """``(a, tau)``: LAPACK's ``geqrf`` QR of ``input``, ``R`` on and above the diagonal of ``a`` and the
    Householder vectors of ``Q`` below it (see :func:`linalg.householder_product`). Not differentiable: backward
    raises.

    Example::

        >>> a, tau = ember.geqrf(ember.tensor([[3., 1.], [4., 2.]]))
        >>> a.diagonal()
        tensor([-5.0000,  0.4000])
    """
    check_matrix(input, "geqrf", square=False)
    check_float(input, "geqrf", "geqrf_cpu")
    r = _GeqrfT(*Geqrf.apply(input))
    if out is not None:
        return _GeqrfT(*(write_out(t, o) for t, o in zip(r, out)))
    return r


@cpu_float32_inputs  # on CPU autocast's float32 list
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """``Q @ other`` (``left=False``: ``other @ Q``; ``transpose``: ``Q^H``) for the ``Q`` of ``(input, tau)``
    from :func:`geqrf`; differentiable in all three."""
    check_matrix(input, "ormqr", square=False)
    Q = _householder_q(input, tau)
    Q = Q.mH if transpose else Q
    return write_out(matmul(Q, other) if left else matmul(other, Q), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor (deprecated: use ``linalg.cholesky``)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=3)
    return linalg_cholesky(input, upper=upper, out=out)


register(qr, svd, pinverse, matrix_power, matrix_exp, cholesky, orgqr, geqrf, ormqr)
