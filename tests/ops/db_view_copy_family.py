"""The ``*_copy`` counterparts of views, as_strided_scatter and the unsafe_* splits."""
from .db_view import ALL, FLOATS, NUMERIC, cases
from .opinfo import OpInfo

C = "view copies"


def copy_op(name, fn, *specs, dtypes=ALL, **kw):
    return OpInfo(name, fn, cases(*specs), dtypes, category=C, **kw)


OPS = [
    copy_op("alias_copy", lambda m, x: m.alias_copy(x), [((3, 2),)], [((),)]),
    copy_op("as_strided_copy", lambda m, x, *a: m.as_strided_copy(x, *a), [((4, 5),), (3, 3), (5, 1)],
            [((4, 5),), (2, 2), (1, 4), 3], [((6,),), (2,), (0,)], dtypes=NUMERIC),
    copy_op("detach_copy", lambda m, x: m.detach_copy(x), [((3, 2),)], grad=False),
    copy_op("diagonal_copy", lambda m, x, *a: m.diagonal_copy(x, *a), [((3, 4),), 1], [((2, 3, 4),), 0, 0, 2]),
    copy_op("expand_copy", lambda m, x, s: m.expand_copy(x, s), [((3, 1),), (3, 4)], [((),), (2, 2)]),
    copy_op("permute_copy", lambda m, x, d: m.permute_copy(x, d), [((2, 3, 4),), (2, 0, 1)]),
    copy_op("select_copy", lambda m, x, d, i: m.select_copy(x, d, i), [((4, 5),), 1, -2], [((3,),), 0, 2]),
    copy_op("slice_copy", lambda m, x, *a: m.slice_copy(x, *a), [((4, 5),), 1, -3, None, 2], [((4, 5),)],
            [((6,),), 0, 1, 100]),
    copy_op("split_copy", lambda m, x, s, *d: m.split_copy(x, s, *d), [((5, 3),), 2], [((5, 3),), 1, 1]),
    copy_op("split_with_sizes_copy", lambda m, x: m.split_with_sizes_copy(x, [1, 2], 1), [((2, 3),)]),
    copy_op("squeeze_copy", lambda m, x, *d: m.squeeze_copy(x, *d), [((1, 3, 1),)], [((1, 3, 1),), 0],
            [((1, 3, 1),), (0, 2)]),
    copy_op("t_copy", lambda m, x: m.t_copy(x), [((2, 3),)], [((3,),)]),
    copy_op("transpose_copy", lambda m, x, a, b: m.transpose_copy(x, a, b), [((2, 3, 4),), 0, 2]),
    copy_op("unbind_copy", lambda m, x, *d: m.unbind_copy(x, *d), [((3, 2),)], [((3, 2),), -1]),
    copy_op("unfold_copy", lambda m, x, *a: m.unfold_copy(x, *a), [((7,),), 0, 2, 1], [((3, 8),), 1, 3, 2]),
    copy_op("unsqueeze_copy", lambda m, x, d: m.unsqueeze_copy(x, d), [((2, 3),), -1]),
    copy_op("view_copy", lambda m, x, s: m.view_copy(x, s), [((2, 3, 4),), (6, -1)], [((),), (1, 1)]),
    copy_op("view_as_real_copy", lambda m, x: m.view_as_real_copy(m.view_as_complex(x)), [((3, 2),)],
            dtypes=FLOATS),
    copy_op("view_as_complex_copy", lambda m, x: m.view_as_real(m.view_as_complex_copy(x)), [((2, 3, 2),)],
            dtypes=FLOATS, skips={"backward": "torch's raises: no autograd for this op's complex output"}),
    copy_op("as_strided_scatter", lambda m, x, s, *a: m.as_strided_scatter(x, s, *a),
            [((4, 5), (3, 3)), (3, 3), (5, 1)], [((3, 4), (2, 2)), (2, 2), (1, 2), 1], [((6,), (2,)), (2,), (3,), 2],
            dtypes=NUMERIC, skips={"backward": "torch's gradient of input is wrong (its own gradcheck fails)"}),
    copy_op("unsafe_split", lambda m, x, s, *d: m.unsafe_split(x, s, *d), [((5, 3),), 2], [((5, 3),), 1, 1],
            [((0, 2),), 2]),
    copy_op("unsafe_chunk", lambda m, x, c, *d: x.unsafe_chunk(c, *d), [((5, 3),), 2], [((5, 3),), 3, 1],
            [((0,),), 3]),
    copy_op("unsafe_split_with_sizes", lambda m, x, s, *d: m.unsafe_split_with_sizes(x, s, *d),
            [((5, 3),), [1, 4]], [((5, 3),), [3, 0], -1]),
]
