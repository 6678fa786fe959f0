"""Ops that rearrange or replicate elements into new memory: joining, flipping, rolling, repeating, triangles,
diagonals, grids."""
import numpy as np

from .db_view import ALL, cases
from .opinfo import FLOATS, OpInfo, Sample, make


def shape_op(name, fn, *specs, dtypes=ALL, **kw):
    return OpInfo(name, fn, cases(*specs), dtypes, category="shape", **kw)


def mixed_dtypes(dtype, rng):
    """Inputs of different dtypes (torch promotes them) and an empty 1-D tensor that cat skips."""
    return [Sample((make((2, 3), dtype, rng), make((1, 3), "int64", rng)), name="with int64"),
            Sample((make((2, 3), dtype, rng), make((2, 3), "bool", rng)), name="with bool"),
            Sample((make((0,), "float64", rng), make((2, 3), dtype, rng)), name="empty float64 first"),
            Sample((make((2, 2), dtype, rng), make((0,), dtype, rng), make((1, 2), dtype, rng)), name="empty mid")]


def _cat(m, *xs, dim=0):
    return m.cat(list(xs), dim)


OPS = [
    shape_op("cat", _cat, [((2, 3), (4, 3))], [((2, 3), (2, 1), (2, 0)), {"dim": -1}], [((0,), (2, 3))],
             [((3,), (2,), (0,))], [((0,), (0,)), {"dim": 0}], [((2, 0, 3), (2, 2, 3)), {"dim": 1}],
             [((1, 2),)]),
    OpInfo("cat_promote", _cat, mixed_dtypes, FLOATS + ("float16", "int32"), category="shape"),
    shape_op("concat", lambda m, a, b: m.concat((a, b), dim=1), [((2, 1), (2, 3))]),
    shape_op("concatenate", lambda m, a, b: m.concatenate([a, b], axis=0), [((1, 2), (2, 2))]),
    shape_op("stack", lambda m, *xs, dim=0: m.stack(xs, dim), [((2, 3), (2, 3))], [((2, 3), (2, 3)), {"dim": -1}],
             [((2, 3), (2, 3), (2, 3)), {"dim": 1}], [((), ())], [((0, 2), (0, 2)), {"dim": 2}]),
    OpInfo("stack_promote", lambda m, a, b: m.stack([a, b]),
           lambda d, rng: [Sample((make((2,), d, rng), make((2,), "int64", rng)))], FLOATS, category="shape"),
    shape_op("hstack", lambda m, *xs: m.hstack(xs), [((2, 3), (2, 1))], [((3,), (2,))], [((), (2,))]),
    shape_op("vstack", lambda m, *xs: m.vstack(xs), [((2, 3), (1, 3))], [((3,), (3,))], [((), ())]),
    shape_op("row_stack", lambda m, *xs: m.row_stack(xs), [((2, 3), (3,))]),
    shape_op("dstack", lambda m, *xs: m.dstack(xs), [((2, 3), (2, 3))], [((3,), (3,))], [((2, 2, 1), (2, 2, 3))],
             [((), ())]),
    shape_op("column_stack", lambda m, *xs: m.column_stack(xs), [((3,), (3, 2))], [((), ())], [((2, 1), (2,))]),
    shape_op("atleast_1d", lambda m, *xs: m.atleast_1d(*xs), [((),)], [((2, 3),)], [((), (2,))]),
    shape_op("atleast_2d", lambda m, *xs: m.atleast_2d(xs), [((),)], [((3,),)], [((2, 3, 4),)], [((), (3,))]),
    shape_op("atleast_3d", lambda m, *xs: m.atleast_3d(*xs), [((),)], [((3,),)], [((2, 3),)], [((2, 3, 4, 1),)],
             [((3,), (2, 2))]),
    shape_op("flip", lambda m, x, d: m.flip(x, d), [((2, 3, 4),), (0, 2)], [((2, 3),), [-1]], [((2, 3),), ()],
             [((),), (0,)], [((0, 3),), (0, 1)], [((4,),), [0]]),
    shape_op("fliplr", lambda m, x: m.fliplr(x), [((2, 3),)], [((2, 3, 2),)]),
    shape_op("flipud", lambda m, x: m.flipud(x), [((2, 3),)], [((4,),)]),
    shape_op("roll", lambda m, x, *a: m.roll(x, *a), [((5,),), 2], [((2, 3),), -1], [((2, 3),), 1, 0],
             [((2, 3),), (1, 7), (0, 1)], [((2, 3, 2),), (-4,), (-2,)], [((),), 3], [((0, 3),), 1, 1],
             [((2, 3),), 4]),
    shape_op("rot90", lambda m, x, *a: m.rot90(x, *a), [((2, 3),)], [((2, 3),), 2], [((2, 3),), 3],
             [((2, 3),), -1], [((2, 3),), 4], [((2, 3, 4),), 1, (1, 2)], [((2, 3, 4),), 1, (2, 0)]),
    shape_op("repeat", lambda m, x, *r: x.repeat(*r), [((2, 3),), 2, 1], [((2, 3),), (1, 2, 3)], [((),), 3],
             [((),), ()], [((3,),), 0, 2], [((0, 2),), 2, 2], [((2, 1),), 1, 1]),
    shape_op("tile", lambda m, x, d: m.tile(x, d), [((2, 3),), (2,)], [((2, 3),), (2, 1, 2)], [((),), (2,)],
             [((2,),), ()]),
    shape_op("repeat_interleave", lambda m, x, *a, **k: m.repeat_interleave(x, *a, **k), [((2, 3),), 2],
             [((2, 3),), 2, 1], [((2, 3),), np.array([1, 0, 3]), 1], [((2, 3),), np.array([2]), 0],
             [((2, 3),), np.array(2), -2], [((),), 3], [((0, 2),), 2, 0], [((3,),), np.array([0, 0, 0])]),
    OpInfo("repeat_interleave_index", lambda m, r: m.repeat_interleave(r),
           lambda d, rng: [Sample((np.array([1, 0, 3]),)), Sample((np.array([], dtype="int64"),))], ("int64",),
           grad=False, category="shape"),
    shape_op("tril", lambda m, x, *a: m.tril(x, *a), [((3, 4),)], [((3, 4),), 1], [((3, 4),), -1],
             [((2, 3, 3),), 0], [((4, 2),), 5], [((0, 3),)], [((3, 3),), -9]),
    shape_op("triu", lambda m, x, *a: m.triu(x, *a), [((3, 4),)], [((3, 4),), 2], [((3, 4),), -1],
             [((2, 3, 3),), 0], [((2, 0),)]),
    shape_op("diag", lambda m, x, *a: m.diag(x, *a), [((3,),)], [((3,),), 1], [((3,),), -2], [((3, 4),)],
             [((3, 4),), 2], [((3, 4),), -1], [((0,),)], [((2, 2),), 3]),
    shape_op("diag_embed", lambda m, x, *a: m.diag_embed(x, *a), [((2, 3),)], [((3,),), 1], [((2, 3),), -1, 0, 2],
             [((2, 3),), 0, -1, 0], [((0,),)]),
    shape_op("diagflat", lambda m, x, *a: m.diagflat(x, *a), [((2, 2),)], [((3,),), -1], [((),)], [((2, 3),), 2]),
    shape_op("meshgrid_ij", lambda m, *xs: m.meshgrid(*xs, indexing="ij"), [((2,), (3,))],
             [((2,), (3,), (4,))], [((), (3,))], [((2,),)]),
    shape_op("meshgrid_xy", lambda m, *xs: m.meshgrid(xs, indexing="xy"), [((2,), (3,))], [((2,), (3,), (2,))],
             [((3,),)]),
    shape_op("cartesian_prod", lambda m, *xs: m.cartesian_prod(*xs), [((2,), (3,))], [((2,), (1,), (2,))],
             [((3,),)]),
    shape_op("block_diag", lambda m, *xs: m.block_diag(*xs), [((2, 2), (1, 3))], [((), (2,), (2, 1))],
             [((0, 2), (2, 0))], [((2, 3),)]),
    shape_op("ravel", lambda m, x: m.ravel(x.t()) if x.ndim == 2 else m.ravel(x), [((2, 3),)], [((),)],
             [((2, 3, 1),)]),
]
