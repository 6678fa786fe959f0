"""Out-of-place counterparts of views: narrow_copy and the ``*_copy`` family (``t_copy``, ``view_copy``...), and
select/slice/diagonal/as_strided_scatter (``input`` with a view of it replaced by ``src``)."""
from .._creation import empty_strided, zeros_like
from .._tensor import Tensor, register, wrap_dim, write_out
from ..autograd.function import Function
from ._strided import ViewScatter, along, run_view, writeable_view
from .complex import view_as_complex, view_as_real
from .memory_format import contiguous_format
from .split import split, split_with_sizes, unbind
from .view import (Diagonal, Select, as_strided, diagonal, expand, narrow, permute, select,
                   squeeze, t, transpose, unfold, unsqueeze, view)


class Slice(Function):
    """The view ``input[start:end:step]`` along ``dim``."""
    is_view = True

    @staticmethod
    def forward(ctx, x, dim, start, end, step):
        ctx.in_shape, ctx.params = x.shape, {"dim": dim, "start": start, "end": end, "step": step}
        return writeable_view(ctx.xp, along(x, dim, slice(start, end, step)))

    @staticmethod
    def backward(ctx, grad):
        return ViewScatter.apply(grad, shape=ctx.in_shape, op=Slice, params=ctx.params)


class ScatterInto(Function):
    """A copy of ``x`` whose region selected by the view op ``op`` holds ``src``."""

    @staticmethod
    def forward(ctx, x, src, op, params):
        ctx.op, ctx.params = op, params
        out = x.copy()
        run_view(ctx.xp, op, out, params)[...] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        op, params = ctx.op, ctx.params
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = ScatterInto.apply(grad, zeros_like(op.apply(grad, **params)), op=op, params=params)
        if ctx.needs_input_grad[1]:
            gsrc = op.apply(grad, **params)
        return gx, gsrc


class SelectScatter(ScatterInto):
    pass


class SliceScatter(ScatterInto):
    pass


class DiagonalScatter(ScatterInto):
    pass


_NODES = {Select: SelectScatter, Slice: SliceScatter, Diagonal: DiagonalScatter}  # grad_fn names as torch's


def _scatter(input, src, part, op, params):
    if tuple(src.shape) != tuple(part.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(part.shape)}")
    return _NODES[op].apply(input, src.to(input.dtype), op=op, params=params)


def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src``.

    Example::

        >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 0)
        tensor([[1., 1.],
                [0., 0.]])
    """
    part = select(input.detach(), dim, index)  # checks dim and index as torch does
    d = wrap_dim(dim, input.ndim)
    return _scatter(input, src, part, Select, {"dim": d, "index": int(index) % input.shape[d]})


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``input[start:end:step]`` along ``dim`` replaced by ``src``.

    Example::

        >>> ember.slice_scatter(ember.zeros(4), ember.ones(2), start=1, step=2)
        tensor([0., 1., 0., 1.])
    """
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    params = {"dim": d, "start": None if start is None else int(start), "end": None if end is None else int(end),
              "step": int(step)}
    return _scatter(input, src, along(input.detach(), d, slice(params["start"], params["end"], step)), Slice, params)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``.

    Example::

        >>> ember.diagonal_scatter(ember.zeros(2, 2), ember.ones(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    part = diagonal(input.detach(), offset, dim1, dim2)
    params = {"offset": int(offset), "dim1": wrap_dim(dim1, input.ndim), "dim2": wrap_dim(dim2, input.ndim)}
    return _scatter(input, src, part, Diagonal, params)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` (with its strides) whose memory, viewed as ``as_strided(size, stride, storage_offset)``,
    holds ``src``.

    Example::

        >>> ember.as_strided_scatter(ember.zeros(4), ember.ones(2), (2,), (2,), 1)
        tensor([0., 1., 0., 1.])
    """
    out = empty_strided(input.shape, input.stride(), dtype=input.dtype, device=input.device)
    region = out.as_strided(size, stride, 0 if storage_offset is None else storage_offset)
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region.shape)}")
    out.copy_(input)
    region.copy_(src)
    return out


def narrow_copy(input, dim, start, length):
    """A copy (not a view) of ``input.narrow(dim, start, length)``."""
    return narrow(input, dim, start, length).clone(memory_format=contiguous_format)


def _slice(input, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * wrap_dim(dim, input.ndim) + (slice(start, end, step),)]


def _split(input, split_size, dim=0):
    if not isinstance(split_size, int):  # sizes go to split_with_sizes_copy
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return split(input, split_size, dim)


def _copy_of(name, view_fn):
    """The op ``name``: ``view_fn``'s result (a view, or a tuple of views) copied to new contiguous memory."""
    def fn(input, *args, out=None, **kwargs):
        result = view_fn(input, *args, **kwargs)
        if isinstance(result, tuple):
            return tuple(r.clone(memory_format=contiguous_format) for r in result)
        return write_out(result.clone(memory_format=contiguous_format), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A copy in new contiguous memory of the view ``{name[:-5]}`` returns (the tensors it returns)."
    return fn


_VIEWS = {"alias_copy": lambda input: input.view_as(input), "as_strided_copy": as_strided,
          "detach_copy": Tensor.detach, "diagonal_copy": diagonal, "expand_copy": expand, "permute_copy": permute,
          "select_copy": select, "slice_copy": _slice, "split_copy": _split, "split_with_sizes_copy": split_with_sizes,
          "squeeze_copy": squeeze, "t_copy": t, "transpose_copy": transpose, "unbind_copy": unbind,
          "unfold_copy": unfold, "unsqueeze_copy": unsqueeze, "view_copy": view, "view_as_real_copy": view_as_real,
          "view_as_complex_copy": view_as_complex}
globals().update({name: _copy_of(name, fn) for name, fn in _VIEWS.items()})
__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter", "narrow_copy", *_VIEWS]

register(select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter, narrow_copy)
