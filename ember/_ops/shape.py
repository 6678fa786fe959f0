"""Ops that rearrange or replicate elements into new memory: cat/stack, flip/roll/rot90, repeat/tile,
repeat_interleave, tril/triu, diag family, meshgrid, block_diag."""

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "roll", "rot90", "tile",
           "repeat_interleave", "tril", "triu", "diag", "diag_embed", "diagflat", "meshgrid", "cartesian_prod",
           "block_diag", "ravel"]
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor, inplace, register, wrap_dim, write_out
from ..autograd.function import Function
from .reduce import sum as _sum
from ._strided import Gather, ViewScatter, elem_strides, shape_arg
from .memory_format import clone, contiguous, contiguous_format, suggest_format
from .view import Diagonal, expand, flatten, narrow, reshape, transpose, unsqueeze
from .view import diagonal as _diagonal


# -- joining -----------------------------------------------------------------------------------------------------------
def _skipped(x):
    """torch.cat ignores 1-D empty tensors (a legacy rule) whatever the other shapes."""
    return x.ndim == 1 and x.shape[0] == 0


class Cat(Function):
    promote = True

    @staticmethod
    def forward(ctx, *xs, dim):
        ctx.sizes = [None if _skipped(x) else x.shape[dim] for x in xs]
        ctx.dim = dim
        kept = [x for x in xs if not _skipped(x)]
        if not kept:
            return xs[0].copy()
        if all(x.flags.c_contiguous for x in kept) or \
                all(suggest_format(x.shape, elem_strides(x)) is not contiguous_format for x in kept):
            return ctx.xp.concatenate(kept, axis=dim)  # C-contiguous, or channels_last as all the inputs
        shape = kept[0].shape[:dim] + (sum(x.shape[dim] for x in kept),) + kept[0].shape[dim + 1:]
        return ctx.xp.concatenate(kept, axis=dim, out=ctx.xp.empty(shape, kept[0].dtype))

    @staticmethod
    def backward(ctx, grad):
        out, start = [], 0
        for n in ctx.sizes:
            if n is None:
                out.append(_zeros((0,), grad))  # a skipped 1-D empty input
                continue
            out.append(narrow(grad, ctx.dim, start, n))
            start += n
        return tuple(out)


def _zeros(shape, like, dtype=None):
    from .._creation import zeros
    return zeros(shape, dtype=dtype or like.dtype, device=like.device)


def _tensor_list(tensors, op):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


def cat(tensors, dim=0, *, axis=None, out=None):
    """Concatenates ``tensors`` along ``dim``, promoting their dtypes. All shapes must match except in ``dim``
    (1-D empty tensors are skipped).

    Example::

        >>> ember.cat([ember.tensor([1, 2]), ember.tensor([3.5])])
        tensor([1.0000, 2.0000, 3.5000])
    """
    if axis is not None:  # NumPy's name, as torch accepts it
        if dim != 0:
            raise TypeError("cat() got multiple values for argument 'dim'")
        dim = axis
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, t) for i, t in enumerate(tensors) if not _skipped(t)]
    d = 0
    if kept:
        ref = kept[0][1]
        d = wrap_dim(dim, ref.ndim)
        for i, t in kept[1:]:
            if t.ndim != ref.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
            for k in range(ref.ndim):
                if k != d and t.shape[k] != ref.shape[k]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                       f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    return write_out(Cat.apply(*tensors, dim=d), _cast_out(tensors, out))


def _cast_out(tensors, out):
    if out is not None and not _dtype.can_cast(_dtype.result_type(*tensors), out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_dtype.scalar_name(out.dtype)}")
    return out


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Joins equally shaped ``tensors`` along a new dimension ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return write_out(Cat.apply(*[unsqueeze(t, d) for t in tensors], dim=d), _cast_out(tensors, out))


def _atleast(n, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and not single:
        tensors = tuple(tensors[0])
    out = tuple(reshape(t, _atleast_shape(t, n)) if t.ndim < n else t for t in tensors)
    return out[0] if single else out


def _atleast_shape(t, n):
    if n == 3 and t.ndim:  # NumPy's rule: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
        return (1,) * (2 - t.ndim) + tuple(t.shape) + (1,)
    return (1,) * (n - t.ndim) + tuple(t.shape)


def atleast_1d(*tensors):
    """``tensors`` viewed with at least one dimension (a tuple unless one tensor is given)."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """``tensors`` viewed with at least two dimensions (1-D becomes a row)."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """``tensors`` viewed with at least three dimensions ((n,) becomes (1, n, 1), (m, n) becomes (m, n, 1))."""
    return _atleast(3, tensors)


def _nonempty(tensors, op):
    tensors = _tensor_list(tensors, op)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """Concatenates column-wise (1-D tensors end to end)."""
    tensors = atleast_1d(tuple(_nonempty(tensors, "hstack")))
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenates row-wise (1-D tensors become rows)."""
    return cat(atleast_2d(tuple(_nonempty(tensors, "vstack"))), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Concatenates depth-wise (along the third dimension)."""
    return cat(atleast_3d(tuple(_nonempty(tensors, "dstack"))), 2, out=out)


def column_stack(tensors, *, out=None):
    """Stacks 0-d/1-d tensors as columns, and concatenates 2-D ones, along dimension 1."""
    tensors = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _nonempty(tensors, "column_stack")]
    return cat(tensors, 1, out=out)


# -- reordering --------------------------------------------------------------------------------------------------------
def _dim_set(dims, n):
    out = tuple(wrap_dim(d, n) for d in dims)
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


class Flip(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return (ctx.xp.flip(x, dims) if dims else x).copy(order="K")

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, dims=ctx.dims)


def flip(input, dims):
    """A copy of ``input`` with the order of elements reversed along ``dims``."""
    if isinstance(dims, np.integer):  # torch takes a NumPy integer as one dim (but not a Python int)
        dims = (int(dims),)
    elif isinstance(dims, int):
        raise TypeError("flip(): argument 'dims' (position 2) must be tuple of ints, not int")
    return Flip.apply(input, dims=_dim_set(dims, input.ndim) if input.ndim else ())


def fliplr(input):
    """Reverses the order of columns (dimension 1)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Reverses the order of rows (dimension 0)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class Roll(Function):
    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        y = ctx.xp.roll(x, shifts, axis=dims)
        return y if y.flags.c_contiguous else y.copy()  # torch's result is contiguous whatever the input

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims)


def roll(input, shifts, dims=None):
    """Rotates the elements of ``input`` by ``shifts`` places along ``dims`` (of the flattened tensor if None)."""
    shifts = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return reshape(roll(flatten(input), shifts, 0), input.shape)
    dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if input.numel() == 0:
        return clone(input)
    return Roll.apply(input, shifts=shifts, dims=dims)


def rot90(input, k=1, dims=(0, 1)):
    """Rotates ``input`` by 90 degrees ``k`` times in the plane of ``dims``, from the first axis to the second."""
    if isinstance(k, (bool, float)):
        raise TypeError(f"rot90(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return transpose(flip(input, (d0,)), d0, d1)
    return clone(input, memory_format=contiguous_format)


# -- replicating -------------------------------------------------------------------------------------------------------
class Repeat(Function):
    @staticmethod
    def forward(ctx, x, sizes):
        ctx.in_shape, ctx.sizes = x.shape, sizes
        x = x.reshape((1,) * (len(sizes) - x.ndim) + x.shape)
        ctx.padded = x.shape
        out = ctx.xp.tile(x, sizes)
        return out if out.flags.c_contiguous else ctx.xp.ascontiguousarray(out)  # all-ones sizes keep x's layout

    @staticmethod
    def backward(ctx, grad):
        # (r0 * s0, r1 * s1, ...) -> (r0, s0, r1, s1, ...), summed over the repeats r
        pairs = tuple(v for r, s in zip(ctx.sizes, ctx.padded) for v in (r, s))
        summed = _sum(reshape(grad, pairs), tuple(range(0, len(pairs), 2)))
        return reshape(summed, ctx.in_shape)


def repeat(input, *sizes, repeats=None):
    """``input`` repeated ``sizes[i]`` times along each dimension (leading new dimensions allowed).

    Example::

        >>> ember.tensor([1, 2]).repeat(2, 2)
        tensor([[1, 2, 1, 2],
                [1, 2, 1, 2]])
    """
    if repeats is not None or not sizes:
        if repeats is None:
            raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
        if sizes:
            raise TypeError("repeat() got multiple values for argument 'repeats'")
        sizes = (repeats,)
    sizes = shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    out_shape = [a * b for a, b in zip(shape, sizes)]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out_shape)}: {out_shape}")
    return Repeat.apply(input, sizes=sizes)


def tile(input, *args, dims=None):
    """``input`` repeated ``dims[i]`` times along each dimension; missing leading entries of ``dims`` are 1 (the
    method also takes them as varargs, ``x.tile(2, 1)``)."""
    if dims is None:
        if not args:
            raise TypeError('tile() missing 1 required positional arguments: "dims"')
        dims = args[0] if len(args) == 1 else args
    elif args:
        raise TypeError("tile() got multiple values for argument 'dims'")
    dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _repeat_index(counts, xp):
    """The source position of each output element when element i is repeated ``counts[i]`` times."""
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if len(counts) else 0
    return xp.searchsorted(ends, xp.arange(total), side="right")


def _check_repeats_dtype(repeats):
    if repeats.dtype.name not in ("int32", "int64"):
        name = _dtype.scalar_name(repeats.dtype)
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{name}'")


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element of ``input`` ``repeats`` times (an int, or a tensor of per-element counts) along
    ``dim`` (of the flattened input if None). ``repeat_interleave(counts)`` gives ``[0]*counts[0] + [1]*...``.

    Example::

        >>> ember.tensor([1, 2]).repeat_interleave(2)
        tensor([1, 1, 2, 2])
    """
    from .._creation import arange
    if repeats is None:  # the index form: input holds the counts
        counts = input
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats_dtype(counts)
        return repeat_interleave(arange(counts.shape[0], dtype=counts.dtype, device=counts.device), counts, 0,
                                 output_size=output_size)
    if dim is None:
        input, d = flatten(input), 0
    else:
        d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    xp = _xp(input)
    if isinstance(repeats, Tensor):
        _check_repeats_dtype(repeats)
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = repeats._data.reshape(-1)
        if counts.size == 1:
            counts = counts.repeat(n)
        elif counts.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({d}) = {n}")
        if counts.size and int(counts.min()) < 0:
            raise RuntimeError("repeats can not be negative")
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = xp.full((n,), int(repeats), dtype="int64")
    if input.ndim == 0:
        input = reshape(input, 1)
    src = _repeat_index(counts, xp)
    if output_size is not None and output_size != len(src):
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {len(src)} but got {output_size}"
                           if not isinstance(repeats, Tensor) else "allocated size does not match required size")
    flat = xp.arange(input.numel()).reshape(input.shape)
    return Gather.apply(input, index=xp.take(flat, src, axis=d))


def _xp(t):
    from .._device import array_module
    return array_module(t.device)


# -- triangles and diagonals -------------------------------------------------------------------------------------------
class Tril(Function):
    @staticmethod
    def forward(ctx, x, diagonal, upper):
        ctx.diagonal, ctx.upper = diagonal, upper
        return (ctx.xp.triu if upper else ctx.xp.tril)(x, diagonal).astype(x.dtype, copy=False)  # CuPy's: bf16 in f32

    @staticmethod
    def backward(ctx, grad):
        return Tril.apply(grad, diagonal=ctx.diagonal, upper=ctx.upper)


def tril(input, diagonal=0, *, out=None):
    """The lower triangle of the matrices in ``input`` (on and below ``diagonal``); the rest is zero."""
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return write_out(Tril.apply(input, diagonal=int(diagonal), upper=False), out)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle of the matrices in ``input`` (on and above ``diagonal``); the rest is zero."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return write_out(Tril.apply(input, diagonal=int(diagonal), upper=True), out)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensors whose diagonals (over ``dim1``, ``dim2``, shifted by ``offset``) hold the last dimension of
    ``input``; zero elsewhere."""
    n = input.ndim + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = input.shape[-1] + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(size if d in (d1, d2) else next(rest) for d in range(n))
    return ViewScatter.apply(input, shape=shape, op=Diagonal, params={"offset": int(offset), "dim1": d1, "dim2": d2})


def diag(input, diagonal=0):
    """A square matrix with 1-D ``input`` on its ``diagonal``-th diagonal, or the ``diagonal``-th diagonal of a
    matrix ``input`` (as a copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return clone(_diagonal(input, diagonal, 0, 1), memory_format=contiguous_format)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input, offset=0):
    """A square matrix with the flattened ``input`` on its ``offset``-th diagonal."""
    return diag(flatten(input), offset)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D ``tensors``: with ``indexing='ij'`` output i varies along dimension i; ``'xy'``
    swaps the first two dimensions (Cartesian). The outputs are expanded views."""
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    outs = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        outs.append(expand(reshape(t, view_shape), shape))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def cartesian_prod(*tensors):
    """All combinations of the elements of 1-D ``tensors``, one per row (like ``itertools.product``)."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([flatten(g) for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix with ``tensors`` (0-d, 1-d as rows, or 2-d) along its diagonal, promoting dtypes."""
    mats = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        mats.append(reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not mats:
        from .._creation import zeros
        return zeros((1, 0))
    dt = _dtype.result_type(*tensors)  # 0-d inputs promote as scalars do
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        rows.append(Cat.apply(_zeros((r, left), m, dt), m.to(dt), _zeros((r, width - left - c), m, dt), dim=1))
        left += c
    return Cat.apply(*rows, dim=0)


def ravel(input):
    """``input`` flattened to 1-D (a view when contiguous)."""
    return reshape(contiguous(input), -1)


def _flip_method(self, *args, dims=None):
    """``x.flip(0, 1)`` or ``x.flip((0, 1))``: the method also takes dims as separate ints."""
    if dims is None:
        if not args:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        dims = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    elif args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    return flip(self, dims)


register(fliplr, flipud, roll, rot90, repeat, tile, repeat_interleave, tril, triu, diag,
         diag_embed, diagflat, ravel, tril_=inplace(tril), triu_=inplace(triu))
register(flip=_flip_method)
