"""Views: ops whose output shares memory with their input (values, dtypes and gradients; layouts are checked in
tests/views)."""
import numpy as np

from .opinfo import FLOATS, HALVES, OpInfo, Sample, make

ALL = FLOATS + HALVES + ("int32", "int64", "uint8", "bool")
NUMERIC = FLOATS + ("int64",)


def cases(*specs):
    """Samples from specs ``[shapes, *args]`` (a trailing dict gives kwargs): each shape becomes a random array,
    followed by the other positional arguments."""
    def samples(dtype, rng):
        out = []
        for shapes, *args in specs:
            kwargs = args.pop() if args and isinstance(args[-1], dict) else {}
            arrays = tuple(np.asarray(make(s, dtype, rng)) for s in shapes)  # make() gives a bool scalar for ()
            out.append(Sample(arrays + tuple(args), kwargs, name=f"{shapes}{args}{kwargs}"))
        return out
    return samples


def view_op(name, fn, *specs, dtypes=ALL, **kw):
    return OpInfo(name, fn, cases(*specs), dtypes, category="view", **kw)


OPS = [
    view_op("view", lambda m, x, *s: x.view(*s), [((2, 3, 4),), (6, -1)], [((2, 3, 4),), (-1,)], [((),), (1, 1)],
            [((0, 3),), (3, 0)], [((1,),), ()], [((2, 3, 4),), 4, 3, 2]),
    view_op("view_as", lambda m, x, y: x.view_as(y), [((2, 6), (3, 4))], [((), (1, 1))]),
    view_op("reshape", lambda m, x, s: m.reshape(x, s), [((2, 3, 4),), (4, -1)], [((5,),), (5, 1)],
            [((),), (1,)], [((0, 4),), (2, 0, 2)]),
    view_op("reshape_as", lambda m, x, y: x.reshape_as(y), [((2, 6), (3, 4))]),
    view_op("transpose", lambda m, x, a, b: m.transpose(x, a, b), [((2, 3, 4),), 0, 2], [((2, 3),), -1, -2],
            [((),), 0, -1], [((0, 3),), 0, 1], [((3,),), 0, 0]),
    view_op("swapaxes", lambda m, x: m.swapaxes(x, 0, 1), [((2, 3, 4),)]),
    view_op("swapdims", lambda m, x: x.swapdims(-1, 1), [((2, 3, 4),)]),
    view_op("permute", lambda m, x, *d: x.permute(*d), [((2, 3, 4),), (2, 0, 1)], [((2, 3, 4),), -1, 0, -2],
            [((),), ()], [((0, 2),), (1, 0)]),
    view_op("torch.permute", lambda m, x: m.permute(x, (1, 0)), [((3, 2),)]),
    view_op("t", lambda m, x: m.t(x), [((2, 3),)], [((3,),)], [((),)], [((0, 2),)]),
    view_op("T", lambda m, x: x.T, [((2, 3),)], [((4, 0),)]),
    view_op("mT", lambda m, x: x.mT, [((2, 3, 4),)], [((2, 3),)]),
    view_op("H", lambda m, x: x.H, [((2, 3),)]),
    view_op("mH", lambda m, x: x.mH, [((2, 3, 4),)]),
    view_op("adjoint", lambda m, x: m.adjoint(x), [((2, 3),)], [((2, 0, 3),)]),
    view_op("movedim", lambda m, x, s, d: m.movedim(x, s, d), [((2, 3, 4),), 0, 2], [((2, 3, 4),), -1, 0],
            [((2, 3, 4, 1),), (0, 1), (2, -1)], [((2, 3),), (), ()]),
    view_op("moveaxis", lambda m, x: m.moveaxis(x, (0, 1), (-1, -2)), [((2, 3, 4),)]),
    view_op("expand", lambda m, x, *s: x.expand(*s), [((3, 1),), (3, 4)], [((1,),), 2, 3, -1],
            [((),), (2, 2)], [((2, 1),), (2, 0)], [((3,),), (1, 3)]),
    view_op("expand_as", lambda m, x, y: x.expand_as(y), [((1, 4), (3, 4))]),
    view_op("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), [((3, 1),)], [((),)]),
    view_op("squeeze", lambda m, x, *d: m.squeeze(x, *d), [((2, 1, 3, 1),)], [((2, 1, 3, 1),), -1],
            [((2, 1, 3, 1),), (0, 1, 3)], [((),)], [((),), 0], [((1, 0),)]),
    view_op("unsqueeze", lambda m, x, d: m.unsqueeze(x, d), [((2, 3),), 0], [((2, 3),), -1], [((2, 3),), 1],
            [((),), 0], [((0,),), 1]),
    view_op("flatten", lambda m, x, *a: m.flatten(x, *a), [((2, 3, 4),)], [((2, 3, 4),), 1], [((2, 3, 4),), 0, 1],
            [((),)], [((2, 0, 3),), 1, 2], [((2, 3),), 1, 1]),
    view_op("unflatten", lambda m, x, d, s: m.unflatten(x, d, s), [((2, 12),), 1, (3, -1)],
            [((6, 2),), -2, (1, 2, 3)], [((0, 2),), 0, (0, 5)]),
    view_op("narrow", lambda m, x, d, s, n: m.narrow(x, d, s, n), [((4, 5),), 0, 1, 2], [((4, 5),), -1, -3, 3],
            [((4, 5),), 1, 5, 0], [((4,),), 0, 2, 2]),
    view_op("select", lambda m, x, d, i: m.select(x, d, i), [((4, 5),), 0, 1], [((4, 5),), -1, -2],
            [((3,),), 0, 2], [((2, 0),), 0, 1]),
    view_op("diagonal", lambda m, x, *a: m.diagonal(x, *a), [((3, 4),)], [((3, 4),), 1], [((3, 4),), -2],
            [((2, 3, 4),), 0, 0, 2], [((2, 3, 4),), 1, -1, 0], [((3, 4),), 5], [((0, 3),)]),
    view_op("unfold", lambda m, x, *a: x.unfold(*a), [((7,),), 0, 2, 1], [((3, 8),), 1, 3, 2],
            [((4, 3),), 0, 4, 3], [((4, 3),), -2, 1, 1], [((),), 0, 1, 1], [((5,),), 0, 0, 2]),
    view_op("as_strided", lambda m, x, *a: m.as_strided(x, *a), [((4, 5),), (3, 3), (5, 1)],
            [((4, 5),), (2, 2), (1, 4), 3], [((6,),), (3, 3), (1, 1)], [((6,),), (2,), (0,)],
            [((6,),), (2, 2), (2, 1), 1], dtypes=NUMERIC),
    view_op("split", lambda m, x, s, *d: m.split(x, s, *d), [((5, 3),), 2], [((5, 3),), [1, 4]],
            [((5, 3),), 1, 1], [((5, 3),), [3, 0], -1], [((0, 2),), 2], [((4,),), [1, 3]]),
    view_op("split_with_sizes", lambda m, x: x.split_with_sizes([1, 2], 1), [((2, 3),)]),
    view_op("chunk", lambda m, x, c, *d: m.chunk(x, c, *d), [((5, 3),), 2], [((5, 3),), 3, 1], [((3,),), 5],
            [((0,),), 3]),
    view_op("tensor_split", lambda m, x, s, *d: m.tensor_split(x, s, *d), [((7, 2),), 3], [((7, 2),), [1, 5]],
            [((7, 2),), [5, 2, 9]], [((7, 2),), (-1,), 0], [((3, 4),), 2, -1]),
    view_op("hsplit", lambda m, x, s: m.hsplit(x, s), [((2, 6),), 3], [((6,),), [1, 4]]),
    view_op("vsplit", lambda m, x, s: m.vsplit(x, s), [((4, 2),), 2], [((4, 2),), [1]]),
    view_op("dsplit", lambda m, x, s: m.dsplit(x, s), [((1, 2, 4),), 2], [((1, 2, 4),), [3]]),
    view_op("unbind", lambda m, x, *d: m.unbind(x, *d), [((3, 2),)], [((3, 2),), -1], [((0, 2),), 1]),
    view_op("iter", lambda m, x: tuple(x), [((3, 2),)]),
    view_op("broadcast_tensors", lambda m, *xs: m.broadcast_tensors(*xs), [((3, 1), (4,), (1, 1))], [((2,), ())]),
    view_op("contiguous", lambda m, x: x.t().contiguous(), [((3, 2),)], [((0, 2),)]),
    view_op("clone", lambda m, x: m.clone(x), [((3, 2),)], [((),)], [((0,),)]),
    view_op("clone_channels_last", lambda m, x: m.clone(x, memory_format=m.channels_last), [((2, 3, 2, 2),)]),
]
