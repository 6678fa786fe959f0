"""The LDL (Bunch-Kaufman) factorization of symmetric or Hermitian matrices and its solver, as LAPACK's ``sytrf`` /
``hetrf`` and ``sytrs`` / ``hetrs`` (computed on the host). torch defines no derivatives for them."""
from ..autograd.function import Function
from ..return_types import structseq
from .matmul import scalar_name
from .solve import _host, check_float, check_matrix, raise_first

_LdlFactorT = structseq("linalg_ldl_factor", ("LD", "pivots"))
_LdlFactorExT = structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _lapack(name, a, hermitian):
    import scipy.linalg
    routine = ("he" if hermitian and a.dtype.kind == "c" else "sy") + name
    return scipy.linalg.get_lapack_funcs(routine, (a,))


class LdlFactor(Function):
    @staticmethod
    def forward(ctx, A, hermitian):
        import numpy as np
        xp = ctx.xp
        a = _host(A)
        n = a.shape[-1]
        flat = a.reshape((-1, n, n))
        lds, pivs, infos = np.zeros_like(flat), np.zeros((len(flat), n), np.int32), np.zeros(len(flat), np.int32)
        if n:
            sytrf = _lapack("trf", flat, hermitian)
            for i, m in enumerate(flat):
                lds[i], pivs[i], infos[i] = sytrf(m, lower=1)
        lds = np.tril(lds)  # LAPACK leaves the strict upper triangle as it was
        batch = a.shape[:-2]
        out = (xp.asarray(lds.reshape(a.shape)), xp.asarray(pivs.reshape(batch + (n,))),
               xp.asarray(infos.reshape(batch)))
        ctx.mark_non_differentiable(*out)
        return out

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``(LD, pivots, info)``: the compact LDL factorization of the symmetric (Hermitian if ``hermitian``) matrices
    ``A``, read from their lower triangles, as LAPACK's ``sytrf``: ``L`` (unit diagonal implied) and the 1x1 and 2x2
    blocks of ``D`` in ``LD``, 1-based ``pivots`` (a negative pair marks a 2x2 block), and ``info`` (0, or the
    1-based index of a zero diagonal element of ``D``)."""
    op = "torch.linalg.ldl_factor_ex"
    check_matrix(A, op)
    check_float(A, op)
    LD, pivots, info = LdlFactor.apply(A, hermitian=bool(hermitian))
    if check_errors:
        _raise_singular(info, op)
    return _LdlFactorExT(LD, pivots, info)


def _raise_singular(info, op):
    raise_first(_host(info._data), lambda b, i: f"{op}: {b}D[{i},{i}] is exactly zero: the factorization has been "
                                                "completed, but D is singular.")


def ldl_factor(A, *, hermitian=False, out=None):
    """``(LD, pivots)`` of ``ldl_factor_ex``; raises ``LinAlgError`` when ``D`` is exactly singular.

    Example::

        >>> A = ember.tensor([[4., 1.], [1., 3.]])
        >>> LD, pivots = ember.linalg.ldl_factor(A)
        >>> ember.linalg.ldl_solve(LD, pivots, ember.tensor([[5.], [4.]]))
        tensor([[1.],
                [1.]])
    """
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_singular(info, "torch.linalg.ldl_factor")
    return _LdlFactorT(LD, pivots)


class LdlSolve(Function):
    @staticmethod
    def forward(ctx, LD, pivots, B, hermitian):
        import numpy as np
        xp = ctx.xp
        ld, piv, b = _host(LD), _host(pivots).astype(np.int32), _host(B)
        batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
        n, k = b.shape[-2:]
        # copies: LAPACK's wrappers need writable arrays of their own, not broadcast views
        ld = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n)).copy()
        piv = np.broadcast_to(piv, batch + (n,)).reshape((-1, n)).copy()
        flat = np.broadcast_to(b, batch + (n, k)).reshape((-1, n, k)).copy()
        x = np.empty_like(flat)
        if n and k:
            sytrs = _lapack("trs", ld, hermitian)
            for i in range(len(flat)):
                x[i] = sytrs(ld[i], piv[i], flat[i], lower=1)[0]
        out = xp.asarray(x.reshape(batch + (n, k)))
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """The solution ``X`` of ``A X = B`` from ``(LD, pivots) = ldl_factor(A, hermitian=hermitian)``; the batch
    dimensions of ``LD`` and ``B`` broadcast."""
    op = "torch.linalg.ldl_solve"
    check_matrix(LD, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {LD.shape[-1]} by "
                           f"{LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(B.dtype)} and "
                           f"A of type {scalar_name(LD.dtype)} instead.")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex:
        raise RuntimeError(f"{op}: Expected pivots to be integers. Got {scalar_name(pivots.dtype)}")
    return LdlSolve.apply(LD, pivots, B, hermitian=bool(hermitian))
