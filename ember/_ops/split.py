"""Ops that cut a tensor into several views: split, chunk, tensor_split, h/v/dsplit, unbind, and the unsafe_*
variants."""

__all__ = ["split", "split_with_sizes", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "unbind", "unsafe_split",
           "unsafe_chunk", "unsafe_split_with_sizes"]
from .. import _dtype
from .._tensor import Tensor, register, wrap_dim
from ..autograd.function import Function
from ._strided import ViewScatter, along, run_view, writeable_view
from .view import Narrow, Select


class Split(Function):
    """Views of ``input`` along ``dim`` at ``pieces``, a tuple of (start, length)."""
    is_view = True
    multi_output_view = True  # torch forbids writing in place into any of these views while recording

    @staticmethod
    def forward(ctx, x, dim, pieces):
        ctx.dim, ctx.pieces, ctx.in_shape = dim, pieces, x.shape
        return tuple(writeable_view(ctx.xp, along(x, dim, slice(s, s + n))) for s, n in pieces)

    @staticmethod
    def backward(ctx, *grads):
        dim, pieces = ctx.dim, ctx.pieces
        sizes = [n for _, n in pieces]
        if _pieces(sizes) == list(pieces) and sum(sizes) == ctx.in_shape[dim]:  # the pieces tile the dimension
            from .shape import cat
            return cat(grads, dim)
        total = None
        for g, (s, n) in zip(grads, pieces):  # pieces may overlap or leave gaps (tensor_split)
            part = ViewScatter.apply(g, shape=ctx.in_shape, op=Narrow, params={"dim": dim, "start": s, "length": n})
            total = part if total is None else total + part
        return total


class Unbind(Function):
    is_view = True
    multi_output_view = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return tuple(run_view(ctx.xp, Select, x, {"dim": dim, "index": i}) for i in range(x.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        from .shape import stack
        return stack(grads, ctx.dim)


def _split_at(input, dim, pieces):
    return Split.apply(input, dim=dim, pieces=tuple(pieces))


def _pieces(sizes):
    out, start = [], 0
    for n in sizes:
        out.append((start, n))
        start += n
    return out


def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` along ``dim`` of the given sizes (which must add up to the dimension's size)."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return _split_at(input, d, _pieces(sizes))


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """Splits ``tensor`` along ``dim`` into views of ``split_size_or_sections`` entries each (the last may be
    smaller), or of the sizes in a list.

    Example::

        >>> [p.tolist() for p in ember.arange(5).split(2)]
        [[0, 1], [2, 3], [4]]
    """
    if split_size is not None:  # the Tensor method's name for it
        if split_size_or_sections is not None:
            raise TypeError("split() got multiple values for argument 'split_size'")
        split_size_or_sections = split_size
    elif split_size_or_sections is None:
        raise TypeError("split() missing 1 required positional argument: 'split_size_or_sections'")
    if not isinstance(split_size_or_sections, int) and not (
            isinstance(split_size_or_sections, Tensor) and split_size_or_sections.ndim == 0):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.ndim)
    n, size = tensor.shape[d], int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max((n + size - 1) // size, 1) if size else 1
    return _split_at(tensor, d, [(i * size, min(size, n - i * size)) for i in range(count)])


def chunk(input, chunks, dim=0):
    """Splits ``input`` into ``chunks`` views along ``dim`` of ``ceil(size / chunks)`` entries (fewer if the size
    runs out)."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return _split_at(input, d, [(0, 0)] * chunks)
    return split(input, (n + chunks - 1) // chunks, d)


def tensor_split(input, indices_or_sections=None, dim=0, *, indices=None, sections=None):
    """Splits ``input`` along ``dim`` into ``sections`` views of near-equal size (the first ones one longer), or
    at the given ``indices``, like ``numpy.array_split``."""
    given = [a for a in (indices_or_sections, indices, sections) if a is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() takes exactly one of indices_or_sections, indices or sections")
    indices_or_sections = given[0]
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_dtype.scalar_name(arg.dtype)}")
        if arg.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {arg.ndim} dims")
        arg = arg.item() if arg.ndim == 0 else arg.tolist()
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        small, extra = divmod(n, arg)
        sizes = [small + 1] * extra + [small] * (arg - extra)
        return _split_at(input, d, _pieces(sizes))
    bounds = [0] + [int(i) for i in arg] + [n]
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        s, e, _ = slice(a, b).indices(n)
        pieces.append((s, max(e - s, 0)))
    return _split_at(input, d, pieces)


def _split_dim(input, arg, dim, name, need):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(arg, int):
        n = input.shape[dim]
        if arg == 0 or n % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {n} is not divisible by the split_size {arg}!")
    return tensor_split(input, arg, dim)


def hsplit(input, indices_or_sections):
    """Splits ``input`` column-wise (dimension 1, or 0 for 1-D tensors)."""
    return _split_dim(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """Splits ``input`` row-wise (dimension 0)."""
    return _split_dim(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """Splits ``input`` depth-wise (dimension 2)."""
    return _split_dim(input, indices_or_sections, 2, "dsplit", 3)


def unbind(input, dim=0):
    """The views of ``input`` at each position of dimension ``dim`` (which is removed), as a tuple."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return Unbind.apply(input, dim=wrap_dim(dim, input.ndim))


class UnsafeSplit(Split):
    """Split's pieces sharing ``input``'s memory without autograd treating them as views: in-place writes to them
    are allowed and not tracked back to ``input``."""
    is_view = False
    multi_output_view = False


class UnsafeSplitWithSizes(UnsafeSplit):
    pass


def _unsafe(name, safe, node):
    def fn(input, split_arg, dim=0):
        parts = safe(input.detach(), split_arg, dim)  # checks the arguments as the safe op does
        d = wrap_dim(dim, input.ndim)
        return node.apply(input, dim=d, pieces=tuple(_pieces([p.shape[d] for p in parts])))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{safe.__name__}``, whose pieces are not views in autograd's eyes (in-place writes to them are "
                  "not checked; they still share ``input``'s memory).")
    return fn


unsafe_split = _unsafe("unsafe_split", split, UnsafeSplit)
unsafe_chunk = _unsafe("unsafe_chunk", chunk, UnsafeSplit)
unsafe_split_with_sizes = _unsafe("unsafe_split_with_sizes", split_with_sizes, UnsafeSplitWithSizes)

register(split, split_with_sizes, chunk, tensor_split, hsplit, vsplit, dsplit, unbind, unsafe_split, unsafe_chunk,
         unsafe_split_with_sizes)
