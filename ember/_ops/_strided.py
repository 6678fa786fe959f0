"""Strided layouts as torch computes them, the index maps that give views their gradients, and the replay of
views that makes in-place writes through a view visible to autograd."""
import math
import operator

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ._ufunc_at import ufunc_at


def elem_strides(a):
    """Strides of array ``a`` in elements."""
    it = a.itemsize
    return tuple(s // it for s in a.strides)


class _Memory:
    """Memory exposed through the array interface: NumPy views of any layout. ``as_strided`` would keep a read-only
    flag inherited from a broadcast input, but torch lets a view be written wherever its elements do not overlap."""

    def __init__(self, interface, base):
        self.__array_interface__, self.base = interface, base


def restride(xp, a, shape, strides):
    """A view of ``a``'s memory from its first element with ``shape`` and element ``strides``. Like torch, a view
    in which several elements of a non-empty dimension share one memory location is read-only."""
    it = a.itemsize
    shape, strides = tuple(shape), tuple([s * it for s in strides])
    if not isinstance(a, np.ndarray):  # CuPy arrays have no read-only flag
        return xp.lib.stride_tricks.as_strided(a, shape, strides)
    if a.flags.carray:  # C-contiguous, aligned and writeable
        try:  # a's own buffer holds the memory from its first element on
            out = np.ndarray(shape, a.dtype, a, 0, strides)
        except (TypeError, ValueError):  # the view reaches beyond a (as_strided)
            pass
        else:
            if 0 in strides and _overlaps(shape, strides):
                out.setflags(write=False)
            return out
    owner = a
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    readonly = _overlaps(shape, strides) or not (isinstance(owner, np.ndarray) and owner.flags.writeable)
    face = a.__array_interface__
    out = np.asarray(_Memory({"shape": shape, "strides": strides, "typestr": face["typestr"],
                              "data": (face["data"][0], readonly), "version": 3}, owner))
    return out if out.dtype == a.dtype else out.view(a.dtype)


def _overlaps(shape, strides):
    """Whether several elements of a (shape, strides) layout share a memory location (a broadcast dimension)."""
    for n, s in zip(shape, strides):
        if s == 0 and n > 1:
            return True
    return False


def is_plain(a):
    """Whether array ``a`` is laid out as a new writeable array of its shape: C order with the strides NumPy gives
    a new array, size-1 dimensions included (its contiguity flag ignores those). NumPy's reshapes of such an array
    have torch's strides."""
    if not a.size or not (a.flags.carray if type(a) is np.ndarray else a.flags.c_contiguous):
        return False  # NumPy's carray: C-contiguous, aligned and writeable
    shape = a.shape
    if 1 in shape:
        step = a.itemsize
        for n, s in zip(reversed(shape), reversed(a.strides)):
            if s != step:
                return False
            step *= n
    return True


def writeable_view(xp, a):
    """``a`` (a NumPy view made by slicing or transposing), writeable unless its elements overlap."""
    if isinstance(a, np.ndarray) and not a.flags.writeable:
        return restride(xp, a, a.shape, elem_strides(a))
    return a


def along(a, dim, index):
    """``a`` indexed along ``dim`` (a slice keeps the dimension)."""
    return a[(slice(None),) * dim + (index,)]


def run_view(xp, op, a, params, extra=()):
    """Runs view op ``op``'s forward on a raw array (to replay a view on a mask, an index map or zeros)."""
    ctx = op.__new__(op)
    ctx.xp = xp
    return op.forward(ctx, a, *[e._data if isinstance(e, Tensor) else e for e in extra], **params)


def shape_arg(shape):
    """Sizes (or dims) given as ``f(2, 3)`` or ``f((2, 3))``, as a tuple of Python ints."""
    if len(shape) == 1 and type(shape[0]) is not int and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    for s in shape:
        if type(s) is not int:  # NumPy integers, 0-d tensors...
            return tuple(_index(s, i) for i, s in enumerate(shape))
    return shape if type(shape) is tuple else tuple(shape)


def _index(s, pos):
    """``s`` as a Python int when it is integral (``x.view(n / 2, -1)`` passes a float)."""
    try:
        return operator.index(s)
    except TypeError:
        raise TypeError(f"expected a tuple of ints, but found element of type {type(s).__name__} at "
                        f"pos {pos}") from None


dims_arg = shape_arg


def view_strides(oldshape, oldstride, newshape):
    """torch's computeStride: strides that let ``newshape`` view memory laid out as (oldshape, oldstride), or None
    when no view exists (a copy is needed)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for d in reversed(range(len(newshape))):
            newstride[d] = 1 if d == len(newshape) - 1 else max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = len(newshape) - 1
    chunk_base = oldstride[-1]
    tensor_numel = view_numel = 1
    for td in reversed(range(len(oldshape))):
        tensor_numel *= oldshape[td]
        if td == 0 or (oldshape[td - 1] != 1 and oldstride[td - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk_base = oldstride[td - 1]
                tensor_numel = view_numel = 1
    return tuple(newstride) if view_d == -1 else None


class ViewScatter(Function):
    """Zeros of ``shape`` with ``src`` written into the region the view op ``op`` selects: a view's gradient."""

    @staticmethod
    def forward(ctx, src, shape, op, params):
        ctx.op, ctx.params = op, params
        out = ctx.xp.zeros(shape, dtype=src.dtype)
        run_view(ctx.xp, op, out, params)[...] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        return ctx.op.apply(grad, **ctx.params)


class Gather(Function):
    """``x.flatten()[index]`` for an integer array ``index`` of any shape."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.index, ctx.shape = index, x.shape
        return x.reshape(-1)[index]

    @staticmethod
    def backward(ctx, grad):
        return ScatterAdd.apply(grad, index=ctx.index, shape=ctx.shape)


class ScatterAdd(Function):
    """Zeros of ``shape`` with ``src`` added at the flat positions ``index`` (repeats accumulate)."""

    @staticmethod
    def forward(ctx, src, index, shape):
        ctx.index = index
        out = ctx.xp.zeros(math.prod(shape), dtype=src.dtype)
        ufunc_at(ctx.xp, "add", out, index.reshape(-1), src.reshape(-1))
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return Gather.apply(grad, index=ctx.index)


def index_map(xp, shape, op, params):
    """For each element of ``op``'s view of a tensor of ``shape``, its flat position in that tensor."""
    return run_view(xp, op, xp.arange(math.prod(shape)).reshape(shape), params).copy()


# -- in-place writes through views -------------------------------------------------------------------------------------
class MaskZero(Function):
    """``x`` with the elements where ``mask`` is true set to zero."""

    @staticmethod
    def forward(ctx, x, mask):
        ctx.mask = mask
        return ctx.xp.where(mask, ctx.xp.zeros((), x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        return MaskZero.apply(grad, mask=ctx.mask)


def _zeros_in_layout(xp, shape, strides, dtype):
    """Zeros of ``dtype`` laid out with ``shape`` and element ``strides``."""
    if any(s < 0 for s in strides) or strides == view_strides((math.prod(shape),), (1,), shape):
        return xp.zeros(shape, dtype=dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if math.prod(shape) else 0
    return restride(xp, xp.zeros(span, dtype=dtype), shape, strides)


class Relayout(Function):
    """``x``'s values in new memory laid out as (shape, strides): replaying ``as_strided``, which addresses memory
    rather than elements, on a gradient needs the layout of the tensor it was recorded on."""

    @staticmethod
    def forward(ctx, x, layout):
        out = _zeros_in_layout(ctx.xp, *layout, x.dtype)
        out[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad


def _replay_on(xp, a, chain):
    for op, extra, params in chain:
        a = run_view(xp, op, a, params, extra)
    return a


class ScatterIntoBase(Function):
    """The graph side of an in-place write through a view: the base, with the view's region replaced."""

    def name(self):
        return "torch::autograd::CopySlices"

    @staticmethod
    def forward(ctx, base, src, chain):
        ctx.layout = (base.shape, elem_strides(base))
        mask = _zeros_in_layout(ctx.xp, *ctx.layout, bool)
        _replay_on(ctx.xp, mask, chain)[...] = True
        ctx.mask, ctx.chain = mask, chain
        return base  # already holds the new values: the write went through the view

    @staticmethod
    def backward(ctx, grad):
        src = grad
        if any(getattr(op, "addresses_memory", False) for op, _, _ in ctx.chain):
            src = Relayout.apply(grad, layout=ctx.layout)
        return MaskZero.apply(grad, mask=ctx.mask), replay_view(src, ctx.chain)


def replay_view(base, chain):
    """Applies a recorded chain of view ops to ``base``."""
    x = base
    for op, extra, params in chain:
        x = op.apply(x, *extra, **params)
    return x


def check_inplace_view(view_tensor):
    """Raises torch's error if a recorded in-place write into ``view_tensor`` (a view) is not allowed."""
    base, chain = view_tensor._base, view_tensor._view_chain
    if chain is None:  # an output of a custom Function that is a view
        raise RuntimeError(f"Output {view_tensor._output_nr} of {type(view_tensor.grad_fn).__name__} is a view and is "
                           "being modified inplace. This view was created inside a custom Function (or because an "
                           "input was returned as-is) and the autograd logic to handle view+inplace would override "
                           "the custom backward associated with the custom Function, leading to incorrect gradients. "
                           "This behavior is forbidden. You can fix this by cloning the output of the custom "
                           "Function.")
    if any(getattr(op, "multi_output_view", False) for op, _, _ in chain):
        name = type(view_tensor.grad_fn).__name__ if view_tensor.grad_fn is not None else chain[-1][0].__name__
        raise RuntimeError(f"Output {view_tensor._output_nr} of {name} is a view and is being "
                           "modified inplace. This view is the output of a function that returns multiple views. "
                           "Such functions do not allow the output views to be modified inplace. You should "
                           "replace the inplace operation by an out-of-place one.")
    if base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_view(view_tensor, out):
    """After ``view_tensor`` (a view) was overwritten by ``out`` in place, moves its base and itself onto the graph."""
    check_inplace_view(view_tensor)
    base, chain = view_tensor._base, view_tensor._view_chain
    new_base = ScatterIntoBase.apply(base.detach() if not base._requires_grad else _alias(base), out, chain=chain)
    base.grad_fn, base._output_nr, base._requires_grad = new_base.grad_fn, 0, True
    refresh_view(view_tensor)


def refresh_view(view_tensor):
    """Re-derives a view's place in the graph from its base (after the base's history changed in place)."""
    fresh = replay_view(view_tensor._base, view_tensor._view_chain)
    view_tensor.grad_fn, view_tensor._output_nr = fresh.grad_fn, fresh._output_nr
    view_tensor._requires_grad = fresh._requires_grad
    view_tensor._view_version = view_tensor._vc[0]


def _alias(t):
    return Tensor._make(t._data, t.dtype, t.device, t._requires_grad, t.grad_fn, t._output_nr)
