"""Views: ops whose output shares memory with their input, and the broadcast pair expand / sum_to_size."""

__all__ = ["expand", "broadcast_to", "expand_as", "reshape", "view_as"]
from .._tensor import Tensor, register, wrap_dim
from ..autograd.function import Function


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


class Expand(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        return ctx.xp.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad  # the engine sums it back to the input's shape


def expand(input, *sizes):
    """A view of ``input`` broadcast to ``sizes`` (-1 keeps a dimension); no memory is copied."""
    sizes = _shape_arg(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({input.ndim})")
    shape = list(sizes)
    for i, s in enumerate(input.shape):
        want = sizes[lead + i]
        if want == -1:
            shape[lead + i] = s
        elif s != 1 and s != want:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({s}) at "
                               f"non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    return Expand.apply(input, shape=tuple(shape))


def broadcast_to(input, size):
    return expand(input, size)


def expand_as(input, other):
    return expand(input, other.shape)


class SumToSize(Function):
    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        lead = x.ndim - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
        out = ctx.xp.sum(x, axis=dims, keepdims=True, dtype=x.dtype) if dims else x
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return expand(grad, ctx.in_shape)


def sum_to_size(input, *size):
    """Sums ``input`` over broadcast dimensions down to ``size``."""
    size = _shape_arg(size)
    if tuple(input.shape) == size:
        return input
    return SumToSize.apply(input, shape=size)


class Reshape(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.in_shape)


def _infer_shape(shape, numel, op):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def reshape(input, *shape):
    """``input`` with a new shape; a view when the memory layout allows, a copy otherwise."""
    shape = _infer_shape(_shape_arg(shape), input.numel(), "reshape")
    if shape == input.shape:
        return Reshape.apply(input, shape=shape)
    return Reshape.apply(input, shape=shape)


def view(input, *shape):
    """A view of ``input`` with a new shape; raises if the memory layout does not allow one."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        from .. import _dtype
        return view_dtype(input, _dtype.to_dtype(shape[0]))
    shape = _infer_shape(_shape_arg(shape), input.numel(), "view")
    if not _viewable(input._data, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return Reshape.apply(input, shape=shape)


def _viewable(a, shape):
    try:
        b = a.view()
        b.shape = shape  # NumPy refuses exactly when a copy would be needed
        return True
    except AttributeError:
        return False


def view_as(input, other):
    return view(input, other.shape)


class ViewDtype(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x, dtype):
        return x.view(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("view(dtype) is not differentiable")


def view_dtype(input, dtype):
    if dtype.itemsize != input.dtype.itemsize and input.ndim and input.stride(-1) != 1:
        raise RuntimeError("self.stride(-1) must be 1 to view with a different element size")
    return ViewDtype.apply(input, dtype=dtype)


class ScatterIntoBase(Function):
    """The graph side of an in-place write through a view: the base, with the view's region replaced."""

    @staticmethod
    def forward(ctx, base, src, chain):
        xp = ctx.xp
        mask = xp.zeros(base.shape, dtype=bool)
        region = mask
        for op, extra, params in chain:
            region = op.forward(op.__new__(op), region, *[e._data if isinstance(e, Tensor) else e for e in extra],
                                **params)
        region[...] = True
        ctx.mask, ctx.chain = mask, chain
        return base  # already holds the new values: the write went through the view

    @staticmethod
    def backward(ctx, grad):
        from .. import where, zeros_like
        keep = where(Tensor._make(ctx.mask, _bool(), grad.device), zeros_like(grad), grad)
        return keep, replay_view(grad, ctx.chain)


def _bool():
    from .. import _dtype
    return _dtype.bool


def replay_view(base, chain):
    """Applies a recorded chain of view ops to ``base``."""
    x = base
    for op, extra, params in chain:
        x = op.apply(x, *extra, **params)
    return x


def rebase_view(view_tensor, out):
    """After ``view_tensor`` (a view) was overwritten by ``out`` in place, moves its base and itself onto the graph."""
    base = view_tensor._base
    if base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    new_base = ScatterIntoBase.apply(base.detach() if not base._requires_grad else _alias(base), out,
                                     chain=view_tensor._view_chain)
    base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
    fresh = replay_view(base, view_tensor._view_chain)
    view_tensor.grad_fn, view_tensor._output_nr, view_tensor._requires_grad = fresh.grad_fn, fresh._output_nr, True


def _alias(t):
    a = Tensor._make(t._data, t.dtype, t.device, t._requires_grad, t.grad_fn, t._output_nr)
    return a


register(expand, expand_as, broadcast_to, sum_to_size, reshape, view, view_as)
