"""Memory formats: torch's rules for the strides of ``contiguous_format``, ``channels_last`` (NHWC in memory, NCHW in
shape) and ``channels_last_3d``, for what ``preserve_format`` keeps, and the copies (``clone``, ``contiguous``) that
lay a tensor out in one. Ops other than these need not keep a channels_last input's layout: their values are right,
their outputs are contiguous."""
from .._tensor import register
from ..autograd.function import Function
from ._strided import elem_strides, is_plain, restride

__all__ = ["clone", "memory_format", "contiguous_format", "legacy_contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class memory_format:
    """How a tensor's dimensions are laid out in memory (``ember.contiguous_format``, ``ember.channels_last``...)."""

    def __init__(self, name, perm=None):
        self.name, self.perm = name, perm  # perm: the dimensions in memory order, outermost first

    def __repr__(self):
        return "ember." + self.name


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format  # torch's alias: the very same object
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", (0, 2, 3, 1))
channels_last_3d = memory_format("channels_last_3d", (0, 2, 3, 4, 1))
_FORMATS = {f.name: f for f in (contiguous_format, preserve_format, channels_last, channels_last_3d)}


def as_format(fmt, default=preserve_format):
    """The ember memory_format ``fmt`` names (torch's and names as strings are accepted); ``default`` for None."""
    if fmt is None:
        return default
    if isinstance(fmt, memory_format):
        return fmt
    name = str(fmt).replace("torch.", "")
    if name not in _FORMATS:
        raise TypeError(f"argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")
    return _FORMATS[name]


def check_rank(shape, fmt):
    if fmt.perm is not None and len(shape) != len(fmt.perm):
        raise RuntimeError(f"required rank {len(fmt.perm)} tensor to use {fmt.name} format")


def format_strides(shape, fmt):
    """The strides torch gives a new tensor of ``shape`` in format ``fmt`` (sizes of 0 are multiplied in, as in
    torch's channels_last strides; contiguous strides count them as 1)."""
    check_rank(shape, fmt)
    strides, step = [0] * len(shape), 1
    for d in reversed(fmt.perm or range(len(shape))):
        strides[d] = step
        step *= shape[d] if fmt.perm else max(shape[d], 1)
    return tuple(strides)


def is_contiguous_as(input, memory_format):
    """torch's ``input.is_contiguous(memory_format=...)``: dense in the format's dimension order, size-1 dimensions
    ignored (so a tensor with C == 1 or H == W == 1 is both contiguous and channels_last)."""
    fmt = as_format(memory_format, contiguous_format)
    if fmt.perm is None:
        return input._data.flags.c_contiguous
    if input.ndim != len(fmt.perm):
        return False
    shape, strides, expected = input.shape, input.stride(), 1
    for d in reversed(fmt.perm):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest_format(shape, strides):
    """torch's ``suggest_memory_format``: channels_last(_3d) when the strides look like it, else contiguous."""
    for fmt in (channels_last, channels_last_3d):
        if len(shape) == len(fmt.perm) and _strides_like(shape, strides, fmt.perm):
            return fmt
    return contiguous_format


def _strides_like(shape, strides, perm):
    # torch's is_channels_last_strides_2d/3d: ambiguous layouts (N111, 1C1W...) fall back to contiguous
    if strides[1] == 0:
        return False
    low = 0
    for d in (1,) + perm[-2:0:-1] + (0,):
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def _non_overlapping_and_dense(shape, strides):
    # dims of size < 2 sort last and end the check; the others must tile memory from stride 1 up
    order = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    expected = 1
    for d in order:
        if shape[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _infer_dense_strides(shape, strides):
    """torch's infer_dense_strides: dense strides in the memory order of (shape, strides), by TensorIterator's stable
    insertion sort (stride-0 dimensions compare as ambiguous and keep their place)."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))  # innermost first
    for i in range(1, n):
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            a, b = perm[d0], perm[d1]
            sa, sb = strides[a], strides[b]
            if sa == 0 or sb == 0 or (sa == sb and shape[a] <= shape[b]):
                continue
            if sa < sb:
                break
            perm[d0], perm[d1] = b, a
            d1 = d0
    out, step = [0] * n, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def like_strides(a, fmt):
    """Strides in elements of ``empty_like(a, memory_format=fmt)``, or None for NumPy's default C layout of
    ``a.shape`` (the common case, decided without building tuples)."""
    if fmt is preserve_format:
        if is_plain(a) or a.ndim < 2:
            return None
        shape, strides = a.shape, elem_strides(a)
        dense = a.size == 0 or _non_overlapping_and_dense(shape, strides)  # torch counts every empty tensor dense
        return strides if dense else _infer_dense_strides(shape, strides)
    return format_strides(a.shape, fmt) if fmt.perm is not None else None


def empty_strided(xp, shape, strides, dtype):
    """A new array of ``shape`` with element ``strides`` over memory of just the size they need."""
    if 0 in shape:  # no memory to overlap: NumPy's view keeps the strides, writeable
        item = xp.dtype(dtype).itemsize
        return xp.lib.stride_tricks.as_strided(xp.empty(0, dtype), shape, [s * item for s in strides])
    n = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    return restride(xp, xp.empty(n, dtype), shape, strides)


def grad_strides(g, leaf):
    """Element strides of the copy of gradient ``g`` that torch's AccumulateGrad makes ``leaf``'s first ``.grad``:
    the leaf's strides where it is dense, else contiguous; None where ``g`` has them (size-1 dimensions aside)."""
    if not g._data.size or g.device.type == "meta":
        return None
    shape, strides = leaf.shape, elem_strides(leaf._data)
    if not _non_overlapping_and_dense(shape, strides):
        strides = format_strides(shape, contiguous_format)
    if all(s == want if n != 1 else s != 0 for n, s, want in zip(shape, elem_strides(g._data), strides)):
        return None
    return strides


def laid_out(xp, a, strides):
    """A copy of array ``a`` with element ``strides`` (C order for None)."""
    if strides is None:
        return a.copy()
    out = empty_strided(xp, a.shape, strides, a.dtype)
    out[...] = a
    return out


class Clone(Function):
    @staticmethod
    def forward(ctx, x, fmt):
        return laid_out(ctx.xp, x, like_strides(x, fmt))

    @staticmethod
    def backward(ctx, grad):
        return grad


def clone(input, *, memory_format=preserve_format):
    """A copy of ``input`` in new memory; ``preserve_format`` keeps the strides of a dense tensor."""
    fmt = as_format(memory_format)
    check_rank(input.shape, fmt)
    return Clone.apply(input, fmt=fmt)


def contiguous(input, memory_format=contiguous_format):
    """``input`` itself when it is laid out in ``memory_format``, else a copy that is."""
    fmt = as_format(memory_format)
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if input._data.flags.c_contiguous if fmt is contiguous_format else is_contiguous_as(input, fmt):
        return input
    return clone(input, memory_format=fmt)


def to_format(input, fmt, fresh):
    """``input.to(memory_format=fmt)`` after any dtype or device change (``fresh``: ``input`` is already a copy)."""
    if fmt is preserve_format:
        return input
    if not fresh and suggest_format(input.shape, input.stride()) is fmt:
        return input  # torch aliases when the layout suggested by the strides is the one asked for
    return clone(input, memory_format=fmt)


register(clone, contiguous)

