"""Randomized low-rank SVD and PCA (Halko, Martinsson and Tropp, 2009), as ``torch.svd_lowrank`` and
``torch.pca_lowrank``: compositions of matmul, QR and SVD, so that gradients flow through them as through torch's."""
from .. import _dtype
from .._random import randn
from .decomp import linalg_qr, linalg_svd
from .matmul import matmul

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A):
    """The dtype the random projection is drawn in: ``A``'s if floating (or complex), else float32."""
    if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) or A.dtype.is_complex:
        return A.dtype
    return _dtype.float32


def _minus(A, M, R):
    """``(A - M) R`` without forming ``A - M``."""
    X = matmul(A, R)
    return X if M is None else X - matmul(M, R)


def get_approximate_basis(A, q, niter=2, M=None):
    """``Q (*, m, q)`` with orthonormal columns such that ``Q Q^H (A - M)`` approximates ``A - M`` (Algorithm 4.4
    of Halko et al.: a random range finder refined by ``niter`` subspace iterations)."""
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating(A), device=A.device)
    Q = linalg_qr(_minus(A, M, R)).Q
    AH, MH = A.mH, None if M is None else M.mH
    for _ in range(niter):
        Q = linalg_qr(_minus(AH, MH, Q)).Q
        Q = linalg_qr(_minus(A, M, Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    # Algorithm 5.1 of Halko et al., on the tall one of A and A^H
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = A.mH
        M = None if M is None else M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    U, V = matmul(Q, U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    r"""``(U, S, V)`` with ``A - M ≈ U diag(S) V^H`` for ``A (*, m, n)``: a randomized SVD of rank ``q`` (a slight
    overestimate of ``A``'s rank) refined by ``niter`` subspace iterations. ``M`` broadcasts to ``A``'s shape.
    Randomized: seed the generator for repeatable results.

    Shape:
        ``U (*, m, q)``, ``S (*, q)``, ``V (*, n, q)``.

    Example::

        >>> A = ember.randn(20, 3) @ ember.randn(3, 10)
        >>> U, S, V = ember.svd_lowrank(A, q=3)
        >>> bool(ember.allclose(U @ ember.diag(S) @ V.mT, A, atol=1e-4))
        True
    """
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    r"""``(U, S, V)``: the randomized SVD (:func:`svd_lowrank`) of ``A (*, m, n)`` with its column means removed
    (unless ``center=False``). ``V``'s columns are the principal directions, ``S ** 2 / (m - 1)`` the variances
    along them; ``q`` defaults to ``min(6, m, n)``.

    Example::

        >>> U, S, V = ember.pca_lowrank(ember.randn(50, 4) * ember.tensor([3., 1., .1, .01]), q=2)
        >>> V.shape
        ember.Size([4, 2])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)
