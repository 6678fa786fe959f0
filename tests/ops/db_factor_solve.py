"""Solves from factorizations: cholesky_solve, cholesky_inverse, triangular_solve, lu_unpack. The Cholesky factor
is made inside the op's function from ``A A^T + n I``, so that perturbations keep it a Cholesky factor."""
import numpy as np

from .opinfo import FLOATS, OpInfo, Sample, make

L = "linalg"
TOL = {"float32": (1e-4, 1e-4)}
GRAD_TOL = {"float32": (2e-3, 2e-3), "float64": (1e-7, 1e-7)}


def _factor(m, A):
    n = A.shape[-1]
    return m.linalg.cholesky(A @ A.mT + n * m.eye(n, dtype=A.dtype))


def _wellcond(shape, dtype, rng):
    return (rng.uniform(-1, 1, shape) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def pairs(*cases):
    def samples(dtype, rng):
        return [Sample((make(b, dtype, rng), _wellcond(a, dtype, rng), *extra), {}, f"{b}{a}{extra}")
                for b, a, *extra in cases]
    return samples


def lu_samples(dtype, rng):
    return [Sample((make(s, dtype, rng),), {}, f"{s}") for s in [(3, 3), (4, 3), (2, 3, 5)]]


OPS = [
    OpInfo("cholesky_solve", lambda m, B, A, *up: m.cholesky_solve(B, _factor(m, A) if not up else _factor(m, A).mT,
                                                                    *up),
           pairs(((3, 2), (3, 3)), ((2, 3, 1), (3, 3)), ((3, 2), (2, 3, 3), True)), FLOATS, tol=TOL,
           grad_tol=GRAD_TOL, category=L),
    OpInfo("cholesky_inverse", lambda m, A, *up: m.cholesky_inverse(_factor(m, A) if not up else _factor(m, A).mT,
                                                                    *up),
           lambda dtype, rng: [Sample((make((3, 3), dtype, rng),), {}, "3x3"),
                               Sample((make((2, 3, 3), dtype, rng), True), {}, "upper")], FLOATS, tol=TOL,
           grad_tol=GRAD_TOL, category=L),
    OpInfo("triangular_solve", lambda m, b, A, *a: m.triangular_solve(b, A, *a),
           pairs(((3, 2), (3, 3)), ((3, 2), (3, 3), False), ((2, 3, 1), (3, 3), True, True),
                 ((3, 2), (2, 3, 3), False, True, True)), FLOATS, tol=TOL, grad_tol=GRAD_TOL, category=L),
    OpInfo("lu_unpack", lambda m, A: m.lu_unpack(*m.linalg.lu_factor(A)), lu_samples, FLOATS, tol=TOL,
           grad_tol=GRAD_TOL, category=L),
    OpInfo("lu_unpack_partial", lambda m, A: m.lu_unpack(*m.linalg.lu_factor(A), unpack_pivots=False)[1:] +
           m.lu_unpack(*m.linalg.lu_factor(A), unpack_data=False)[:1], lu_samples, FLOATS, tol=TOL,
           grad_tol=GRAD_TOL, category=L),
]
