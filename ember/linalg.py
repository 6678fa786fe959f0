"""``ember.linalg``: linear algebra functions, as ``torch.linalg``."""
from ._ops.decomp import (cholesky_ex, eigh, eigvalsh, householder_product, lstsq, lu, lu_factor, lu_factor_ex,
                          lu_solve, matrix_exp, matrix_power, matrix_rank, pinv, svdvals)
from ._ops.decomp import linalg_cholesky as cholesky
from ._ops.decomp import linalg_qr as qr
from ._ops.decomp import linalg_svd as svd
from ._ops.eig import eig, eigvals
from ._ops.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ._ops.linalg import linalg_cross as cross
from ._ops.linalg import cond, matrix_norm, norm, tensorinv, tensorsolve, vander, vecdot
from ._ops.matmul import matmul, multi_dot
from ._ops.reduce import vector_norm
from ._ops.solve import LinAlgError, det, inv, inv_ex, solve, solve_ex, solve_triangular
from ._ops.solve import linalg_slogdet as slogdet

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
           "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
           "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """A view of the ``offset`` diagonal of the matrices in ``A`` (dimensions ``dim1``, ``dim2``)."""
    return A.diagonal(offset, dim1, dim2)
