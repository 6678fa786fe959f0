"""Out-of-place counterparts of views: narrow_copy, and select/slice/diagonal_scatter (``input`` with a view of it
replaced by ``src``)."""

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "narrow_copy"]

from .._creation import zeros_like
from .._tensor import register, wrap_dim
from ..autograd.function import Function
from ._strided import ViewScatter, along, run_view, writeable_view
from .view import Diagonal, Select, diagonal, narrow, select


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


def narrow_copy(input, dim, start, length):
    """A copy (not a view) of ``input.narrow(dim, start, length)``."""
    return narrow(input, dim, start, length).clone()


register(select_scatter, slice_scatter, diagonal_scatter, narrow_copy)
