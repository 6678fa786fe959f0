"""Out-of-place counterparts of views: select/slice/diagonal_scatter, narrow_copy, and fill_diagonal_ (on a copy)."""
from .db_view import ALL, cases
from .opinfo import OpInfo

C = "view copies"


def scatter_op(name, fn, *specs, **kw):
    return OpInfo(name, fn, cases(*specs), ALL, category=C, **kw)


def _fill_diagonal(m, x, value, wrap=False):
    return (x * 1).fill_diagonal_(value, wrap=wrap) if x.dtype.is_floating_point else x.clone().fill_diagonal_(value)


OPS = [
    scatter_op("select_scatter", lambda m, x, s, d, i: m.select_scatter(x, s, d, i),
               [((3, 4), (4,)), 0, 1], [((2, 3, 4), (2, 4)), 1, -1], [((3,), ()), 0, 2], [((2, 3), (3,)), -2, 0]),
    scatter_op("slice_scatter", lambda m, x, s, *a, **kw: x.slice_scatter(s, *a, **kw),
               [((4, 5), (2, 5)), {"start": 1, "end": 3}], [((3, 6), (3, 3)), 1, 0, None, 2],
               [((4, 3), (1, 3)), {"start": -1}], [((5,), (5,))], [((2, 4, 3), (2, 2, 3)), 1, 1, 10, 2],
               [((3, 4), (3, 0)), 1, 4]),
    scatter_op("diagonal_scatter", lambda m, x, s, *a: m.diagonal_scatter(x, s, *a),
               [((3, 4), (3,))], [((3, 4), (3,)), 1], [((3, 4), (2,)), -1], [((2, 3, 4), (3, 2)), 0, 0, 2],
               [((2, 3, 4), (3, 1)), 1, -1, 0], [((2, 2), (0,)), 3]),
    scatter_op("narrow_copy", lambda m, x, *a: x.narrow_copy(*a) if a[0] else m.narrow_copy(x, *a),
               [((3, 4),), 0, 1, 2], [((3, 4),), 1, -3, 2], [((2, 3, 4),), -1, 0, 0]),
    scatter_op("fill_diagonal_", _fill_diagonal, [((3, 3),), 2.0], [((5, 2),), -1.0, True], [((5, 2),), 3.0],
               [((2, 6),), 1.0, True], [((3, 3, 3),), 4.0]),
]
