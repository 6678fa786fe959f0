"""Matrix products, decompositions, solvers and matrix norms.

Decompositions get well-conditioned inputs: diagonally dominant matrices, or ``A A^T + n I`` built inside the op's
function (so that gradcheck's perturbations stay symmetric). Singular vectors are compared through quantities that do
not depend on their signs, as torch's own tests do.
"""
import numpy as np

from .opinfo import FLOATS, HALVES, INTS, OpInfo, Sample, make, np_dtype

INF = float("inf")
MATMUL_DTYPES = FLOATS + HALVES + INTS
HALF_TOL = {"float16": (4e-3, 4e-3), "bfloat16": (1.6e-2, 2e-2)}
DECOMP_TOL = {"float32": (1e-4, 1e-4)}
DECOMP_GRAD_TOL = {"float32": (2e-3, 2e-3), "float64": (1e-7, 1e-7)}
L = "linalg"


def arrays(*shapes, low=-3, high=3):
    """Samples of random arrays, one per tuple of ``shapes``; a dict as last element gives keyword arguments."""
    def samples(dtype, rng):
        out = []
        for case in shapes:
            kw = case[-1] if isinstance(case[-1], dict) else {}
            shp = case[:-1] if isinstance(case[-1], dict) else case
            out.append(Sample(tuple(make(s, dtype, rng, low, high) for s in shp), kw, f"{shp}{kw or ''}"))
        return out
    return samples


def wellcond(shape, dtype, rng):
    """Diagonally dominant square matrices: far from singular in every dtype."""
    a = rng.uniform(-1, 1, shape) + shape[-1] * np.eye(shape[-1])
    return a.astype(np_dtype(dtype))


def square(*cases, extra=None):
    """Well-conditioned square matrices, optionally followed by right-hand sides of the given shapes."""
    def samples(dtype, rng):
        out = []
        for case in cases:
            kw = case[-1] if isinstance(case[-1], dict) else {}
            shp = case[:-1] if isinstance(case[-1], dict) else case
            args = (wellcond(shp[0], dtype, rng),) + tuple(make(s, dtype, rng) for s in shp[1:])
            out.append(Sample(args, kw, f"{shp}{kw or ''}"))
        return out
    return samples


def spd(m, a):
    """A symmetric positive-definite matrix made from ``a``: ``a a^T + n I``."""
    return m.matmul(a, a.mT) + a.shape[-1] * m.eye(a.shape[-1], dtype=a.dtype)


def eigh_invariants(m, a, **kw):
    vals, vecs = m.linalg.eigh(spd(m, a), **kw)
    return vals, m.einsum("...ij,...kj->...jik", vecs, vecs)  # the projector onto each eigenvector


def svd_invariants(m, a, full_matrices=True):
    U, S, Vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, m.matmul(U * S.unsqueeze(-2), Vh), m.einsum("...ij,...kj->...jik", U, U)


def legacy_svd(m, a, some=True):
    U, S, V = m.svd(a, some=some)
    k = S.shape[-1]
    return S, m.matmul(U[..., :k] * S.unsqueeze(-2), V[..., :k].mT)


def einsum_samples(dtype, rng):
    cases = [("ij,jk->ik", (2, 3), (3, 4)), ("bij,bjk->bik", (2, 2, 3), (2, 3, 1)), ("...ij,...jk", (2, 1, 2, 3),
             (3, 3, 2)), ("ii->i", (3, 3)), ("ii", (3, 3)), ("iij,jk", (3, 3, 2), (2, 2)), ("i,i->", (4,), (4,)),
             ("ij->ji", (2, 3)), ("i,j->ij", (3,), (2,)), ("ijk->j", (2, 3, 2)), ("ij,jk->ik", (2, 1), (4, 3)),
             ("...,...->...", (2, 3), (3,)), ("bA", (2, 3)), ("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
             ("i j , j k -> i k", (0, 3), (3, 2)), ("ij,jk->ik", (2, 0), (0, 3))]
    return [Sample((eq,) + tuple(make(s, dtype, rng) for s in shapes), name=eq) for eq, *shapes in cases]


def tensordot_samples(dtype, rng):
    cases = [((3, 4), (4, 2), 1), ((2, 3, 4), (3, 4, 5), 2), ((3, 2, 4), (4, 3, 5), ([0, 2], [1, 0])),
             ((3,), (2,), 0), ((2, 3), (3, 2), ([1], [0]))]
    return [Sample((make(a, dtype, rng), make(b, dtype, rng)), {"dims": d}, f"{a}{b}{d}") for a, b, d in cases]


def rank_samples(dtype, rng):
    a, b = make((2, 4, 1), dtype, rng), make((2, 1, 3), dtype, rng)
    full = make((3, 4), dtype, rng)
    return [Sample((full,), name="full"), Sample((a @ b,), name="rank1"), Sample((full,), {"atol": 1.0}, "atol"),
            Sample((full,), {"rtol": 0.5}, "rtol"), Sample((full @ full.T,), {"hermitian": True}, "hermitian"),
            Sample((np.zeros((0, 3), np_dtype(dtype)),), name="empty")]


def lstsq_samples(dtype, rng):
    out = []
    for a, b, kw in [((5, 3), (5, 2), {}), ((5, 3), (5,), {"driver": "gelsd"}), ((2, 5, 3), (2, 5, 2), {"driver":
                     "gelsd"}), ((2, 5, 3), (1, 5, 2), {"driver": "gels"}), ((3, 5), (3, 2), {"driver": "gelss"}),
                     ((4, 4), (4, 1), {"driver": "gelsy"})]:
        out.append(Sample((make(a, dtype, rng), make(b, dtype, rng)), kw, f"{a}{b}{kw}"))
    return out


def norm_samples(dtype, rng):
    out = []
    for ord in ("fro", "nuc", 1, -1, 2, -2, INF, -INF):
        out.append(Sample((make((3, 4), dtype, rng),), {"ord": ord}, f"{ord}"))
        out.append(Sample((make((2, 3, 4), dtype, rng),), {"ord": ord, "dim": (2, 0), "keepdim": True},
                          f"{ord}-dims-keep"))
    out.append(Sample((make((0, 3), dtype, rng),), {"ord": 2}, "empty"))
    return out


def linalg_norm_samples(dtype, rng):
    x, v = make((3, 4), dtype, rng), make((5,), dtype, rng)
    return [Sample((x,), name="all"), Sample((make((2, 3, 4), dtype, rng),), name="3d"),
            Sample((v,), {"ord": 3}, "vec-ord3"), Sample((x,), {"ord": "nuc"}, "nuc"),
            Sample((x,), {"ord": -INF}, "-inf"),
            Sample((make((2, 3, 4), dtype, rng),), {"dim": (0, 2), "ord": 1}, "dims"),
            Sample((x,), {"dim": 1, "ord": 0.5, "keepdim": True}, "dim")]


def power_samples():
    def samples(dtype, rng):
        out = []
        for n in (0, 1, 2, 3, -1, -2):
            if dtype in INTS:
                if n < 0:
                    continue
                a = rng.integers(-2, 3, (2, 3, 3)).astype(dtype)
            else:
                a = wellcond((2, 3, 3), dtype, rng) / 3
            out.append(Sample((a,), {"n": n}, f"n={n}"))
        return out
    return samples


OPS = [
    # -- products
    OpInfo("matmul", lambda m, a, b: m.matmul(a, b),
           arrays(((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 1, 2, 3), (3, 3, 2)),
                  ((2, 2, 3), (3,)), ((3,), (2, 3, 4)), ((4, 2, 3), (3, 5)), ((2, 3), (4, 3, 2)), ((0, 3), (3, 2)),
                  ((2, 0), (0, 3)), ((2, 0, 3), (3, 1))),
           MATMUL_DTYPES, tol=HALF_TOL, category=L),
    OpInfo("__matmul__", lambda m, a, b: a @ b, arrays(((2, 3), (3, 4)), ((3,), (3, 2))), FLOATS + HALVES,
           tol=HALF_TOL, category=L),
    OpInfo("__rmatmul__", lambda m, a, b: b.__rmatmul__(a), arrays(((2, 3), (3, 4)),), FLOATS, category=L),
    OpInfo("mm", lambda m, a, b: m.mm(a, b), arrays(((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3))),
           MATMUL_DTYPES, tol=HALF_TOL, category=L),
    OpInfo("bmm", lambda m, a, b: m.bmm(a, b), arrays(((2, 2, 3), (2, 3, 4)), ((0, 2, 3), (0, 3, 1))),
           MATMUL_DTYPES, tol=HALF_TOL, category=L),
    OpInfo("mv", lambda m, a, b: m.mv(a, b), arrays(((2, 3), (3,)), ((0, 3), (3,))), MATMUL_DTYPES, tol=HALF_TOL,
           category=L),
    OpInfo("dot", lambda m, a, b: m.dot(a, b), arrays(((4,), (4,)), ((0,), (0,))), MATMUL_DTYPES, tol=HALF_TOL,
           category=L),
    OpInfo("vdot", lambda m, a, b: m.vdot(a, b), arrays(((4,), (4,)),), FLOATS, category=L),
    OpInfo("inner", lambda m, a, b: m.inner(a, b), arrays(((3, 4), (2, 4)), ((4,), (4,)), ((), (2, 3))),
           FLOATS + INTS, category=L),
    OpInfo("outer", lambda m, a, b: m.outer(a, b), arrays(((3,), (2,)), ((0,), (2,))), FLOATS + HALVES + INTS,
           category=L),
    OpInfo("ger", lambda m, a, b: a.ger(b), arrays(((3,), (2,)),), FLOATS, category=L),
    OpInfo("addmm", lambda m, i, a, b, **kw: m.addmm(i, a, b, **kw),
           arrays(((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4), {"beta": 0.5, "alpha": 2}),
                  ((), (2, 3), (3, 4), {"alpha": -1}), ((2, 4), (2, 3), (3, 4), {"beta": 0})),
           FLOATS + HALVES + INTS[1:], tol=HALF_TOL, category=L),
    OpInfo("addmm_", lambda m, i, a, b: i.clone().addmm_(a, b, beta=2),
           arrays(((2, 4), (2, 3), (3, 4)),), FLOATS, category=L),
    OpInfo("addmv", lambda m, i, a, b, **kw: m.addmv(i, a, b, **kw),
           arrays(((2,), (2, 3), (3,)), ((), (2, 3), (3,), {"beta": 0.5, "alpha": 2}), ((1,), (2, 3), (3,))),
           FLOATS + HALVES, tol=HALF_TOL, category=L),
    OpInfo("addr", lambda m, i, a, b, **kw: m.addr(i, a, b, **kw),
           arrays(((2, 3), (2,), (3,)), ((3,), (2,), (3,), {"beta": 0.5, "alpha": 2})), FLOATS + INTS, category=L),
    OpInfo("baddbmm", lambda m, i, a, b, **kw: m.baddbmm(i, a, b, **kw),
           arrays(((2, 2, 4), (2, 2, 3), (2, 3, 4)), ((1, 4), (2, 2, 3), (2, 3, 4), {"beta": 0.5, "alpha": 2})),
           FLOATS + HALVES, tol=HALF_TOL, category=L),
    OpInfo("addbmm", lambda m, i, a, b, **kw: m.addbmm(i, a, b, **kw),
           arrays(((2, 4), (3, 2, 3), (3, 3, 4)), ((4,), (3, 2, 3), (3, 3, 4), {"beta": 0.5, "alpha": 2})),
           FLOATS, category=L),
    OpInfo("einsum", lambda m, eq, *ops: m.einsum(eq, *ops), einsum_samples, FLOATS + HALVES + ("int64",),
           tol=HALF_TOL, category=L),
    OpInfo("einsum_sublist", lambda m, a, b: m.einsum(a, [0, Ellipsis, 1], b, [1, 2], [Ellipsis, 0, 2]),
           arrays(((2, 4, 3), (3, 5)),), FLOATS, category=L),
    OpInfo("tensordot", lambda m, a, b, dims: m.tensordot(a, b, dims=dims), tensordot_samples, FLOATS + INTS,
           category=L),
    OpInfo("kron", lambda m, a, b: m.kron(a, b), arrays(((2, 3), (3, 2)), ((2,), (3, 2, 2)), ((), (2,))),
           FLOATS + HALVES + INTS, category=L),
    OpInfo("trace", lambda m, a: m.trace(a), arrays(((3, 3),), ((3, 4),), ((0, 2),)), FLOATS + HALVES + INTS,
           tol=HALF_TOL, category=L),
    OpInfo("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c), arrays(((2, 3), (3, 4), (4, 2)),), FLOATS,
           category=L),
    OpInfo("linalg.multi_dot", lambda m, *ts: m.linalg.multi_dot(ts),
           arrays(((3,), (3, 5), (5, 2)), ((2, 3), (3, 4), (4, 5), (5,)), ((3,), (3,))), FLOATS, category=L),
    # -- inverse, determinants, solvers
    OpInfo("linalg.inv", lambda m, a: m.linalg.inv(a), square(((3, 3),), ((2, 3, 3),), ((0, 0),), ((2, 0, 0),)),
           FLOATS + HALVES + INTS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("inverse", lambda m, a: a.inverse(), square(((3, 3),),), FLOATS, tol=DECOMP_TOL, category=L),
    OpInfo("linalg.inv_ex", lambda m, a: tuple(m.linalg.inv_ex(a)), square(((2, 3, 3),),), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.det", lambda m, a: m.linalg.det(a),
           arrays(((3, 3),), ((2, 3, 3),), ((1, 1),), ((0, 0),), ((0, 2, 2),), low=-1, high=1),
           FLOATS + INTS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("det", lambda m, a: a.det(), arrays(((2, 2),),), FLOATS, category=L),
    OpInfo("linalg.slogdet", lambda m, a: tuple(m.linalg.slogdet(a)), square(((3, 3),), ((2, 3, 3),), ((0, 0),)),
           FLOATS + HALVES, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("slogdet", lambda m, a: tuple(a.slogdet()), arrays(((3, 3),),), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("logdet", lambda m, a: m.logdet(a), arrays(((3, 3),), ((4, 3, 3),)), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L, skips={"backward": "nan where the determinant is negative",
                                                        "gradcheck": "nan where the determinant is negative"}),
    OpInfo("logdet_spd", lambda m, a: m.logdet(spd(m, a)), arrays(((3, 3),), ((2, 3, 3),)), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.solve", lambda m, a, b, **kw: m.linalg.solve(a, b, **kw),
           square(((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3,)), ((2, 3, 3), (4, 1, 3, 2)),
                  ((3, 3), (2, 3), {"left": False}), ((3, 3), (4, 3), {"left": False}), ((0, 0), (0, 2))),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.solve_ex", lambda m, a, b: tuple(m.linalg.solve_ex(a, b)), square(((2, 3, 3), (2, 3, 2)),),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.solve_triangular", lambda m, a, b, **kw: m.linalg.solve_triangular(a, b, **kw),
           square(((3, 3), (3, 2), {"upper": True}), ((2, 3, 3), (3, 1), {"upper": False}),
                  ((3, 3), (2, 3), {"upper": True, "left": False}),
                  ((1, 3, 3), (2, 3, 2), {"upper": False, "unitriangular": True}),
                  ((3, 3), (4, 3), {"upper": False, "left": False, "unitriangular": True})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    # -- decompositions
    OpInfo("linalg.cholesky", lambda m, a, **kw: m.linalg.cholesky(spd(m, a), **kw),
           arrays(((3, 3),), ((2, 3, 3), {"upper": True}), ((0, 0),)), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.cholesky_ex", lambda m, a: tuple(m.linalg.cholesky_ex(spd(m, a))), arrays(((2, 3, 3),),),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("cholesky", lambda m, a, **kw: spd(m, a).cholesky(**kw), arrays(((3, 3),), ((3, 3), {"upper": True})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.qr", lambda m, a, **kw: tuple(m.linalg.qr(a, **kw)),
           square(((3, 3),), ((2, 3, 3),), ((2, 3, 3), {"mode": "complete"})), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.qr_rect", lambda m, a, **kw: tuple(m.linalg.qr(a, **kw)),
           arrays(((4, 3),), ((2, 3, 5),), ((3, 5), {"mode": "complete"}), ((0, 2),)), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.qr_r", lambda m, a: m.linalg.qr(a, mode="r")[1], arrays(((4, 3),), ((3, 5),)), FLOATS, grad=False,
           tol=DECOMP_TOL, category=L),
    OpInfo("qr", lambda m, a, **kw: tuple(a.qr(**kw)), arrays(((4, 3),), ((3, 5), {"some": False})), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.eigh", eigh_invariants, arrays(((3, 3),), ((2, 3, 3), {"UPLO": "U"}), ((0, 0),)),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.eigvalsh", lambda m, a, **kw: m.linalg.eigvalsh(spd(m, a), **kw),
           arrays(((3, 3),), ((2, 3, 3), {"UPLO": "U"})), FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL,
           category=L),
    OpInfo("linalg.svd", svd_invariants,
           arrays(((4, 3),), ((2, 3, 5),), ((3, 3),), ((4, 3), {"full_matrices": False}), ((0, 2),)),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.svdvals", lambda m, a: m.linalg.svdvals(a), arrays(((4, 3),), ((2, 3, 5),)), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("svd", legacy_svd, arrays(((4, 3),), ((2, 3, 5), {"some": False})), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("svd_no_uv", lambda m, a: tuple(m.svd(a, compute_uv=False)), arrays(((2, 4, 3),),), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    # -- pseudo-inverse, least squares, rank
    OpInfo("linalg.pinv", lambda m, a, **kw: m.linalg.pinv(a, **kw),
           arrays(((3, 4),), ((4, 3),), ((2, 3, 3),), ((3, 4), {"atol": 1e-3}), ((3, 4), {"rtol": 1e-3}),
                  ((0, 3),)),
           FLOATS + HALVES, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.pinv_hermitian", lambda m, a: m.linalg.pinv(spd(m, a), hermitian=True), arrays(((3, 3),),),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("pinverse", lambda m, a: a.pinverse(), arrays(((3, 4),),), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.lstsq", lambda m, a, b, **kw: tuple(m.linalg.lstsq(a, b, **kw)), lstsq_samples, FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L,
           skips={"gradcheck": "singular_values vary but are not differentiable; see linalg.lstsq_grad"}),
    OpInfo("linalg.lstsq_grad", lambda m, a, b, **kw: tuple(m.linalg.lstsq(a, b, **kw))[:2], lstsq_samples, FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L, skips={"forward": "as linalg.lstsq",
                                                                        "noncontig": "as linalg.lstsq"}),
    OpInfo("linalg.matrix_rank", lambda m, a, **kw: m.linalg.matrix_rank(a, **kw), rank_samples, FLOATS,
           grad=False, category=L),
    OpInfo("linalg.matrix_power", lambda m, a, n: m.linalg.matrix_power(a, n), power_samples(), FLOATS + INTS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("matrix_power", lambda m, a: a.matrix_power(3), square(((3, 3),),), FLOATS, category=L),
    OpInfo("linalg.matrix_exp", lambda m, a: m.linalg.matrix_exp(a), arrays(((3, 3),), ((2, 2, 2),), ((0, 0),),
                                                                             low=-1, high=1),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    # -- LU and friends
    OpInfo("linalg.lu", lambda m, a: tuple(m.linalg.lu(a)), arrays(((3, 3),), ((2, 4, 3),), ((3, 5),)), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.lu_factor", lambda m, a: tuple(m.linalg.lu_factor(a)), square(((3, 3),), ((2, 3, 3),)), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.lu_factor_ex", lambda m, a: tuple(m.linalg.lu_factor_ex(a)), arrays(((2, 4, 3),), ((3, 5),)),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.lu_solve", lambda m, a, b, **kw: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, **kw),
           square(((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1), {"adjoint": True}), ((2, 3, 3), (4, 3), {"left": False}),
                  ((3, 3), (2, 3), {"left": False, "adjoint": True})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.cond", lambda m, a, **kw: m.linalg.cond(a, **kw),
           square(((3, 3),), ((2, 3, 3), {"p": -2})), FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.cond_norms", lambda m, a, **kw: m.linalg.cond(a, **kw),
           square(((3, 3), {"p": "fro"}), ((3, 3), {"p": "nuc"}), ((3, 3), {"p": 1}), ((2, 3, 3), {"p": -INF})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L,
           skips={"backward": "torch's backward fails: linalg_inv_ex's output is modified in place"}),
    OpInfo("linalg.cond_rect", lambda m, a, **kw: m.linalg.cond(a, **kw), arrays(((3, 4),), ((2, 4, 3), {"p": 2})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.vander", lambda m, x, **kw: m.linalg.vander(x, **kw),
           arrays(((3,),), ((2, 3), {"N": 4}), ((4,), {"N": 2})), FLOATS + INTS, category=L),
    OpInfo("linalg.tensorinv", lambda m, a, **kw: m.linalg.tensorinv(a, **kw),
           square(((6, 6), {"ind": 1}),), FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.tensorinv_4d", lambda m, a, **kw: m.linalg.tensorinv(a.reshape(kw.pop("shape")), **kw),
           square(((6, 6), {"shape": (2, 3, 6), "ind": 2}), ((6, 6), {"shape": (6, 3, 2), "ind": 1})), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.tensorsolve", lambda m, a, b, **kw: m.linalg.tensorsolve(a.reshape(kw.pop("shape")), b, **kw),
           square(((6, 6), (2, 3), {"shape": (2, 3, 6)}), ((6, 6), (6,), {"shape": (6, 2, 3)}),
                  ((6, 6), (2, 3), {"shape": (6, 2, 3), "dims": (0,)})),
           FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
           arrays(((4, 3), (3,)), ((2, 3, 3), (2, 2)), low=-1, high=1), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("orgqr", lambda m, a, t: a.orgqr(t), arrays(((4, 3), (3,)),), FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("geqrf", lambda m, a: a.geqrf(), arrays(((4, 3),), ((2, 3, 5),)), FLOATS, grad=False, tol=DECOMP_TOL,
           category=L),
    OpInfo("ormqr", lambda m, a, t, c, **kw: a.ormqr(t, c, **kw),
           arrays(((4, 3), (3,), (4, 2)), ((2, 3, 3), (2, 3), (2, 2, 3), {"left": False, "transpose": True}),
                  low=-1, high=1), FLOATS, tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("matrix_exp", lambda m, a: a.matrix_exp(), arrays(((2, 3, 3),), low=-1, high=1), FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    # -- norms and vector products
    OpInfo("linalg.matrix_norm", lambda m, a, **kw: m.linalg.matrix_norm(a, **kw), norm_samples, FLOATS,
           tol=DECOMP_TOL, grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.norm", lambda m, a, **kw: m.linalg.norm(a, **kw), linalg_norm_samples, FLOATS, tol=DECOMP_TOL,
           grad_tol=DECOMP_GRAD_TOL, category=L),
    OpInfo("linalg.cross", lambda m, a, b, **kw: m.linalg.cross(a, b, **kw),
           arrays(((3,), (3,)), ((2, 1, 3), (1, 4, 3)), ((3, 2), (3, 1), {"dim": 0}), ((0, 3), (0, 3))),
           FLOATS + HALVES + INTS, tol=HALF_TOL, category=L),
    OpInfo("cross", lambda m, a, b, **kw: m.cross(a, b, **kw), arrays(((4, 3), (4, 3), {"dim": 1}), ((3, 2), (3, 2))),
           FLOATS, category=L),
    OpInfo("linalg.vecdot", lambda m, a, b, **kw: m.linalg.vecdot(a, b, **kw),
           arrays(((2, 3), (2, 3)), ((2, 1, 3), (4, 3)), ((3, 2), (3, 2), {"dim": 0})), FLOATS + HALVES,
           tol=HALF_TOL, category=L),
    OpInfo("cdist", lambda m, a, b, **kw: m.cdist(a, b, **kw),
           arrays(((4, 3), (5, 3)), ((2, 4, 3), (1, 5, 3), {"p": 1.0}), ((3, 2), (4, 2), {"p": 3.0}),
                  ((3, 2), (4, 2), {"p": float("inf")}), ((0, 2), (3, 2))), FLOATS, category=L),
    OpInfo("linalg.diagonal", lambda m, a, **kw: m.linalg.diagonal(a, **kw),
           arrays(((3, 4),), ((2, 3, 4), {"offset": 1}), ((2, 3, 4), {"offset": -1, "dim1": 0, "dim2": 2})),
           FLOATS + INTS, category=L),
]
