"""The general eigendecomposition (``linalg.eig``, ``linalg.eigvals``): complex eigenvalues and eigenvectors of
square matrices, with torch's gradient (defined where the eigenvalues are distinct).

LAPACK's geev runs on the host through NumPy, for CUDA tensors too (CuPy has no general eigensolver; torch's CUDA
path also computes on the host)."""
import numpy as np

from .. import _dtype
from .._autocast import cpu_float32_inputs
from .._tensor import Tensor, write_out
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from ..return_types import structseq
from .matmul import constant, matmul, xp_of
from .solve import _host, check_float, check_matrix, solve

_EigT = structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
_COMPLEX = {_dtype.float32: np.complex64, _dtype.float64: np.complex128, _dtype.complex64: np.complex64,
            _dtype.complex128: np.complex128}


def _geev(xp, A, dtype, vectors):
    """Eigenvalues (and unit-norm eigenvectors) of the matrices in array ``A``, always complex as in torch."""
    a, ct = _host(A), _COMPLEX[dtype]
    if a.size == 0:
        w, v = np.empty(a.shape[:-1], ct), np.empty(a.shape, ct)
    elif vectors:
        if not np.isfinite(a).all():
            raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
        w, v = np.linalg.eig(a)
    elif not np.isfinite(a).all():
        w, v = np.full(a.shape[:-1], np.nan + 1j * np.nan, ct), None  # torch's eigvals: NaNs, no error
    else:
        w, v = np.linalg.eigvals(a), None
    w = xp.asarray(w.astype(ct, copy=False))
    return (w, xp.asarray(v.astype(ct, copy=False))) if vectors else w


class Eig(Function):
    @staticmethod
    def forward(ctx, A, dtype):
        ctx.set_materialize_grads(False)
        L, V = _geev(ctx.xp, A, dtype, True)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        return _eig_backward(gL, gV, L, V)


def _eig_backward(gL, gV, L, V):
    # torch's linalg_eig_backward: gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H,
    # with E_ij = L_j - L_i off the diagonal (real inputs keep the real part, in the engine)
    Vh = V.mH
    if gV is None:
        return solve(Vh, gL.unsqueeze(-1) * Vh)
    VhgV = matmul(Vh, gV)
    diag = VhgV.diagonal(0, -2, -1)
    if not xp_of(V).allclose(diag._data.imag, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    VhgV = VhgV - matmul(Vh, V * diag.real.unsqueeze(-2))
    n = L.shape[-1]
    eye = constant(xp_of(L).eye(n, dtype=L._data.dtype), L)
    Lc = L.conj()
    ret = VhgV / (Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye)
    if gL is not None:
        ret = ret * (1 - eye) + gL.diag_embed()
    return solve(Vh, matmul(ret, Vh))


def _check_eig(A, op):
    check_matrix(A, op)
    check_float(A, op, "linalg_eig_out_cpu")


@cpu_float32_inputs  # on CPU autocast's float32 list
def eig(A):
    """``(eigenvalues, eigenvectors)`` of each square matrix, both complex (complex64 for float32 input).
    Eigenvectors have unit norm and are defined up to a phase ``e^{i phi}``: differentiate only losses that do not
    depend on it (``V.abs()``, not ``V.real``), and only where the eigenvalues are distinct.

    Example::

        >>> L, V = ember.linalg.eig(ember.tensor([[2., 0.], [0., 3.]]))
        >>> L
        tensor([2.+0.j, 3.+0.j])
    """
    _check_eig(A, "linalg.eig")
    return _EigT(*Eig.apply(A, dtype=A.dtype))


@cpu_float32_inputs  # on CPU autocast's float32 list
def eigvals(A, *, out=None):
    """The complex eigenvalues of each square matrix (differentiable through :func:`eig`)."""
    _check_eig(A, "linalg.eigvals")
    if A.requires_grad and grad_enabled():
        L = Eig.apply(A, dtype=A.dtype)[0]
    else:
        dt = _dtype.from_numpy_dtype(np.dtype(_COMPLEX[A.dtype]))
        L = Tensor._make(_geev(xp_of(A), A._data, A.dtype, False), dt, A.device)
    return write_out(L, out)
