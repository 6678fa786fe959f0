"""LOBPCG: the ``k`` extreme eigenpairs of a symmetric (generalized) eigenproblem ``A x = λ B x`` by locally optimal
block preconditioned conjugate gradients, as ``torch.lobpcg``: methods 'basic' [Knyazev2001] and 'ortho'
[StathopoulosEtal2002, DuerschEtal2018], with torch's parameters, convergence test and tracker interface.

The iteration runs outside the graph; the gradient of ``A`` is torch's: the eigenvector gradient within the computed
eigenspace, completed on its orthogonal complement by the polynomial solution of a Sylvester equation. Both are
written with differentiable ops.
"""
import math

from .. import _dtype
from .._creation import eye, zeros
from .._random import Generator, randn
from ..autograd.function import Function
from .decomp import eigh, linalg_cholesky, linalg_qr
from .factor_solve import cholesky_solve
from .index import _const, where
from .matmul import matmul
from .shape import cat
from .solve import solve_triangular

__all__ = ["lobpcg"]


# -- the gradient ----------------------------------------------------------------------------------------------------
def _symeig_backward_complete(gD, gU, D, U):
    """The gradient of ``A`` for ``A U = U diag(D)`` within the span of ``U``: ``U (diag(gD) + U^T gU * F) U^T``, where
    ``F_ij = 1 / (d_j - d_i)`` off the diagonal and 0 on it."""
    k = D.shape[-1]
    I = eye(k, dtype=D.dtype, device=D.device)
    F = (1 - I) / (D.unsqueeze(-2) - D.unsqueeze(-1) + I)
    Ut = U.mT
    return matmul(U, matmul(gD.diag_embed() + matmul(Ut, gU) * F, Ut))


def _poly_from_roots(roots):
    """Coefficients ``(a_0, ..., a_n = 1)`` of ``prod_i (x - roots[..., i])``."""
    c = roots.new_ones(tuple(roots.shape[:-1]) + (1,))
    z = roots.new_zeros(tuple(roots.shape[:-1]) + (1,))
    for i in range(roots.shape[-1]):
        c = cat([z, c], -1) - roots.narrow(-1, i, 1) * cat([c, z], -1)
    return c


def _poly_at_vector(poly, x):
    """``sum_i poly[..., i] x^i`` elementwise (Horner's rule; ``poly[..., -1]`` is taken as 1)."""
    r = x.new_ones(x.shape)
    for i in range(poly.shape[-1] - 2, -1, -1):
        r = poly[..., i].unsqueeze(-1) + x * r
    return r


def _poly_at_matrix(poly, A):
    """``sum_i poly[..., i] A^i`` (Horner's rule; ``poly[..., -1]`` is taken as 1)."""
    I = eye(A.shape[-1], dtype=A.dtype, device=A.device)
    r = I
    for i in range(poly.shape[-1] - 2, -1, -1):
        r = matmul(A, r) + poly[..., i, None, None] * I
    return r


def _symeig_backward_partial(gD, gU, A, D, U, largest):
    """The gradient of ``A`` for ``A U = U diag(D)``, ``U`` the ``k < m`` computed eigenvectors."""
    m, k = A.shape[-1], D.shape[-1]
    Ut = U.mT
    proj = eye(m, dtype=A.dtype, device=A.device) - matmul(U, Ut)
    # a basis of the complement of span(U); the result depends on its span only, the seed keeps it deterministic
    gen = Generator(A.device)
    U_ortho = matmul(proj, randn(tuple(A.shape[:-1]) + (m - k,), dtype=A.dtype, device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT
    # the Sylvester equation U_ortho^T A U_ortho dX - dX D = -U_ortho^T A U solved with p(A), p D's characteristic
    # polynomial [Hu and Cheng 2006]: series = sum_j A^(j-1) gU q_j(D), q_j(x) = sum_{i>=j} a_i x^(i-j)
    poly = _poly_from_roots(D)
    series, gU_j = None, gU
    for j in range(1, k + 1):
        term = gU_j * _poly_at_vector(poly[..., j:], D).unsqueeze(-2)
        series = term if series is None else series + term
        gU_j = matmul(A, gU_j)
    p_A = matmul(U_ortho_t, matmul(_poly_at_matrix(poly, A), U_ortho))
    sign = -1 if largest and k % 2 == 1 else 1  # p(A) on the complement is definite, of this sign
    L = linalg_cholesky(sign * p_A)
    res = _symeig_backward_complete(gD, gU, D, U)
    return res - matmul(matmul(U_ortho, sign * cholesky_solve(matmul(U_ortho_t, series), L)), Ut)


class Lobpcg(Function):
    @staticmethod
    def forward(ctx, A, B, X, iK, **params):
        dev = ctx._device
        E, U = _lobpcg(*(None if a is None else _const(a, dev) for a in (A, B, X, iK)), **params)
        ctx.largest, ctx.has_B = params["largest"], B is not None
        E, U = E._data, U._data
        ctx.save_for_backward(A, E, U)
        return E, U

    @staticmethod
    def backward(ctx, gD, gU):
        A, D, U = ctx.saved_tensors
        if A.dtype.is_complex:
            raise ValueError("lobpcg.backward does not support complex input yet. Note that lobpcg.forward does "
                             "though.")
        if ctx.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        return _symeig_backward_partial(gD, gU, A, D, U, largest), None, None, None


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    r"""The ``k`` largest (or smallest) eigenvalues and eigenvectors of the symmetric positive-definite generalized
    eigenproblem ``A x = λ B x`` (``B`` the identity when None), by the matrix-free LOBPCG method.

    Args:
        A (Tensor): ``(*, m, m)`` symmetric.
        k (int, optional): the number of eigenpairs (default: ``X``'s columns, or 1).
        B (Tensor, optional): ``(*, m, m)`` symmetric positive-definite.
        X (Tensor, optional): ``(*, m, n)`` the initial approximation of the eigenvectors, ``k <= n <= m / 3``
            (default: random, of ``n`` columns, ``n`` defaulting to ``k``).
        iK (Tensor, optional): ``(m, m)`` a preconditioner.
        niter (int, optional): the most iterations (default 1000; -1: until convergence).
        tol (float, optional): the residual tolerance (default: ``sqrt`` of the dtype's epsilon).
        largest (bool, optional): the largest eigenvalues (default) or the smallest.
        method (str, optional): 'ortho' (default, robust) or 'basic'.
        tracker (callable, optional): called with the LOBPCG worker after each iteration; it may stop the iteration
            by setting ``worker.bvars['force_stop'] = True``.
        ortho_iparams, ortho_fparams, ortho_bparams (dict, optional): parameters of method 'ortho'
            (``ortho_i_max``, ``ortho_j_max``, ``ortho_tol``, ``ortho_tol_drop``, ``ortho_tol_replace``,
            ``ortho_use_drop``).

    When ``A`` requires grad, it is replaced by ``(A + A^T) / 2`` so that its gradient is symmetric; gradients
    are not supported with ``B``.

    Shape:
        eigenvalues ``(*, k)``, eigenvectors ``(*, m, k)``.

    Example::

        >>> A = ember.diag(ember.arange(1., 13.))
        >>> E, V = ember.lobpcg(A, k=2, X=ember.eye(12, 2) + 0.1)
        >>> E.round(decimals=4)
        tensor([12., 11.])
    """
    if A.requires_grad or (B is not None and B.requires_grad):
        A = (A + A.mT) / 2
        B = None if B is None else (B + B.mT) / 2
    return Lobpcg.apply(A, B, X, iK, k=k, n=n, niter=niter, tol=tol, largest=largest, method=method,
                        tracker=tracker, ortho_iparams=ortho_iparams, ortho_fparams=ortho_fparams,
                        ortho_bparams=ortho_bparams)


_FEPS = {_dtype.float32: 1.2e-07, _dtype.float64: 2.23e-16}


def _lobpcg(A, B, X, iK, k, n, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32
    if tol is None:
        tol = _FEPS[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve(A_, B_, X_):
        X_ = randn((m, n), dtype=dtype, device=A.device) if X_ is None else X_.clone()  # the caller's X is kept
        if tuple(X_.shape) != (m, n):
            raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if A.ndim == 2:
        return solve(A, B, X)
    batch = tuple(A.shape[:-2])
    N = math.prod(batch)
    bA, bB = A.reshape(N, m, m), None if B is None else B.reshape(N, m, m)
    bX = None if X is None else X.reshape((N,) + tuple(X.shape[-2:]))
    bE, bU = zeros(N, k, dtype=dtype, device=A.device), zeros(N, m, k, dtype=dtype, device=A.device)
    for i in range(N):
        iparams["batch_index"] = i
        bE[i], bU[i] = solve(bA[i], None if bB is None else bB[i], None if bX is None else bX[i])
    return bE.reshape(batch + (k,)), bU.reshape(batch + (m, k))


def _mm(A, X):
    """``A X``, with None standing for the identity."""
    return X if A is None else matmul(A, X)


def _qform(A, S):
    return matmul(S.mT, _mm(A, S))


def _symeig(A, largest=False):
    """Eigenpairs of ``A`` in ascending order, or descending when ``largest``."""
    E, Z = eigh(A, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


class LOBPCG:
    """The LOBPCG iteration for one matrix. A tracker sees its state: parameters ``iparams``, ``fparams``,
    ``bparams``; variables ``ivars`` (``istep``, ``converged_count``, ...), ``fvars``, ``bvars``, ``tvars``
    (``rerr``); the inputs ``A``, ``B``, ``iK`` and the iterates ``E``, ``X``, ``S``, ``R``."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = zeros(n, dtype=X.dtype, device=X.device)
        self.R = zeros(m, n, dtype=X.dtype, device=X.device)
        self.S = zeros(m, 3 * n, dtype=X.dtype, device=X.device)
        self.tvars, self.ivars, self.fvars, self.bvars = {}, {"istep": 0}, {"_": 0.0}, {"_": False}

    def update(self):
        """Sets and updates the iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(self.X.norm())
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(_mm(self.A, self.X).norm()) / X_norm
            self.fvars["B_norm"] = float(_mm(self.B, self.X).norm()) / X_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        """``R = A X - B X diag(E)``."""
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of leading eigenpairs whose backward-stable relative residual [DuerschEtal2018, 4.3] is
        below ``tol``."""
        prev = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * (self.fvars["A_norm"] + E[:X.shape[-1]].abs()
                                                       * self.fvars["B_norm"]))
        count = 0
        for ok in (rerr < self.fparams["tol"]).tolist():
            if not ok:  # later pairs do not count, to keep the eigenpairs strictly ordered
                break
            count += 1
        if count < prev:
            raise AssertionError(f"the number of converged eigenpairs (was {prev}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """Whether to stop: forced by the tracker, out of iterations, or ``k`` pairs converged."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Runs the iterations, calling the tracker after each."""
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        self.tracker(self)

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X[:] = matmul(self.X, matmul(Ri, Z))
            self.E[:] = E
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            W = _mm(self.iK, self.R)
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = matmul(S_, matmul(Ri, Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = matmul(S_, matmul(Ri, Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n:n + np_] = P
            W = _mm(self.iK, self.R[:, nc:])
        self.ivars["converged_end"] = ns = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            _, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = matmul(self.X, matmul(Ri, Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = _symeig(_qform(self.A, S_), largest)  # Rayleigh-Ritz
            self.X[:, nc:] = matmul(S_, Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = matmul(S_, matmul(Z[:, n - nc:], linalg_qr(Z[:n - nc, n - nc:].mT).Q))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np_])
        self.ivars["converged_end"] = ns = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """The upper-triangular ``Ri`` that turns ``(S^T A S) C = (S^T B S) C E`` into the standard problem
        ``(Ri^T S^T A S Ri) Z = Z E``, ``C = Ri Z``: ``Ri = R^-1 D`` with ``R^T R`` the Cholesky factorization of
        ``D S^T B S D``, ``D = diag(S^T B S)^(-1/2)``."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg_cholesky((SBS * d_row) * d_col, upper=True)
        return solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """``U`` made B-orthonormal (Algorithm 4 of [DuerschPhD2015]); with ``drop``, without the columns that
        contribute little to its span."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = where(d.abs() != 0.0)[0]
        if len(nz) < len(d):  # exact zero columns would make d ** -0.5 fail
            U = U[:, nz]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        E, Z = _symeig((UBU * d_col) * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = where(E > t)[0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E = where(E < t, t, E)
        return matmul(U * d_col.mT, Z * E ** -0.5)

    def _get_ortho(self, U, V):
        """``U`` made B-orthonormal and B-orthogonal to ``V`` (Algorithm 3 of [DuerschPhD2015], Algorithm 6 with
        ``ortho_use_drop``); empty when ``U``'s columns all lie in the span of ``V``."""
        m = self.iparams["m"]
        tau_ortho, tau_drop = self.fparams["ortho_tol"], self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [key for key in self.fvars if key.startswith("ortho_") and key.endswith("_rerr")]:
            del self.fvars[key]
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = float(_mm(self.B, V).norm())
        BU = _mm(self.B, U)
        VBU = matmul(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - matmul(V, VBU)
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = matmul(U.mT, BU)
                R = UBU - eye(UBU.shape[-1], dtype=UBU.dtype, device=UBU.device)
                rerr = float(R.norm()) / (float(BU.norm()) * float(U.norm()))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = matmul(V.mT, BU)
            rerr = float(VBU.norm()) / (BV_norm * float(U.norm()))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U
