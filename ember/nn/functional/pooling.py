"""Max, average, Lp and adaptive pooling, and max unpooling, over 1-3 spatial dims."""
import math
import operator

from ... import _creation, _dtype, _random
from ..._autocast import cpu_float32, cpu_float32_inputs, input_precision
from ..._device import array_module
from ..._ops.conv import Plan
from ..._ops.fractional_pool import FractionalMaxPool
from ..._ops.memory_format import channels_last, channels_last_3d, contiguous, suggest_format
from ..._ops.pool import MaxPool, WindowSum
from ..._tensor import Tensor
from ...autograd.grad_mode import grad_enabled

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

_AXES = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}
_WORDS = {1: "one", 2: "two", 3: "three"}


def _tuple(v, n, name, op):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(f"{op}: {name} must either be a single int, or a tuple of {_WORDS[n]} ints")
    return v


def _batched(input, n, op):
    """The input with a batch dim (and whether it was unbatched), with torch's dimension errors."""
    if input.ndim not in (n + 1, n + 2) or any(s == 0 for s in input.shape[-n - 1 if input.ndim == n + 2 else 0:]):
        if input.ndim in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(input.shape)}")
        if op == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(input.shape)}")
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")
    unbatched = input.ndim == n + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _layout_of(y, x, formats=(channels_last,)):
    """``y`` laid out as ``x`` when that is one of the channels_last ``formats`` the op keeps, as torch's kernels
    write their outputs; else as computed."""
    if x._data.flags.c_contiguous:
        return y
    fmt = suggest_format(x.shape, x.stride())
    return contiguous(y, fmt) if fmt in formats else y


def _kernel_dtypes(x, kernel, ints=()):
    """torch's error for a dtype its CPU kernel lacks: all but the floating types and ``ints``."""
    if not (x.dtype.is_floating_point or x.dtype in ints):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_name(x.dtype)}\'')


_INTS = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)


def _out_size(size, k, s, p, d, ceil_mode):
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:  # the last window must start inside the input or its left padding
        o -= 1
    return o


def _plan(x, n, kernel_size, stride, padding, dilation, ceil_mode, op):
    """The pooling geometry as a conv Plan: pads (p, p + whatever ceil_mode's last window needs)."""
    k = _tuple(kernel_size, n, "kernel_size", op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(stride, n, "stride", op)
    p, d = _tuple(padding, n, "padding", op), _tuple(dilation, n, "dilation", op)
    axes = _AXES[n]
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{a}: {v}" for a, v in zip(axes, k)))
    if any(v <= 0 for v in s):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{a}: {v}" for a, v in zip(axes, s)))
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{a}: {v}" for a, v in zip(axes, d)))
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    if op.startswith("max") and any(pp > kk // 2 for kk, pp in zip(k, p)):  # max pooling halves the bare kernel
        if n == 3:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} kW: "
                               f"{k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
        (kh, kw), (ph, pw) = ((1,) + k)[-2:], ((0,) + p)[-2:]
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    sizes = x.shape[2:]
    out = tuple(_out_size(sz, kk, ss, pp, dd, ceil_mode) for sz, kk, ss, pp, dd in zip(sizes, k, s, p, d))
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (x.shape[1],) + out))}). Output size is too small")
    pads = tuple((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - sz - pp))
                 for sz, kk, ss, pp, dd, o in zip(sizes, k, s, p, d, out))
    return Plan(x.shape, k, s, d, pads)


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n):
    op = f"max_pool{n}d"
    x, unbatched = _batched(input, n, op)
    if n == 1 and not return_indices:
        _kernel_dtypes(x, "max_pool1d_impl")
        (k,), (p,) = _tuple(kernel_size, 1, "kernel_size", op), _tuple(padding, 1, "padding", op)
        if k > 0 and p < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
        if k > 0 and p > k // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                               f"kernel_size={k}")
    _kernel_dtypes(x, f"max_pool{max(n, 2)}d", _INTS)
    plan = _plan(x, n, kernel_size, stride, padding, dilation, ceil_mode, op)
    r = MaxPool.apply(x, plan=plan, indices=bool(return_indices))
    if n > 1:
        fmts = (channels_last, channels_last_3d)
        r = tuple(_layout_of(t, x, fmts) for t in r) if return_indices else _layout_of(r, x, fmts)
    if unbatched:
        r = tuple(t.squeeze(0) for t in r) if return_indices else r.squeeze(0)
    return r


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L); ``return_indices`` also returns each max's flat input index.

    Example::

        >>> F.max_pool1d(ember.tensor([[1., 3., 2., 5.]]), 2)
        tensor([[3., 5.]])
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``.

    Example::

        >>> F.max_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> F.max_pool3d(ember.ones(1, 1, 4, 4, 4), 2).shape
        ember.Size([1, 1, 2, 2, 2])
    """
    if not return_indices:  # CPU autocast computes max_pool3d, not max_pool3d_with_indices, in float32
        input = cpu_float32(input)
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool1d` returning ``(output, indices)``."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 1)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool2d` returning ``(output, indices)``."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """:func:`max_pool3d` returning ``(output, indices)``."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 3)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, n):
    op = f"avg_pool{n}d"
    if n == 1 and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    x, unbatched = _batched(input, n, op)
    _kernel_dtypes(x, "avg_pool3d_out_frame" if n == 3 else "avg_pool2d", (_dtype.int64,))
    plan = _plan(x, n, kernel_size, stride, padding, 1, ceil_mode, op)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        divisor = divisor_override
    else:
        divisor = _divisor(array_module(x.device), plan, count_include_pad)
    y = WindowSum.apply(x, plan=plan, divisor=divisor)
    y = _layout_of(y, x) if n == 2 else y
    return y.squeeze(0) if unbatched else y


def _divisor(xp, plan, count_include_pad):
    """Elements per window, as torch counts them: the window clipped to the padded input (count_include_pad) or to
    the input, as an array over the output positions (a number when it is the same everywhere)."""
    counts = []
    for size, k, s, (p, _), o in zip(plan.shape[2:], plan.ksize, plan.stride, plan.pads, plan.out):
        start = [i * s - p for i in range(o)]
        end = [min(a + k, size + p) for a in start]
        if count_include_pad:
            counts.append([e - a for a, e in zip(start, end)])
        else:
            counts.append([min(e, size) - max(a, 0) for a, e in zip(start, end)])
    if all(len(set(c)) == 1 for c in counts):
        return float(math.prod(c[0] for c in counts))
    n = len(counts)
    div = 1
    for d, c in enumerate(counts):
        div = div * xp.asarray(c, dtype=xp.float64).reshape((-1,) + (1,) * (n - 1 - d))
    return div


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L).

    Example::

        >>> F.avg_pool1d(ember.tensor([[1., 3., 2., 6.]]), 2)
        tensor([[2., 4.]])
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W); ``count_include_pad`` counts zero padding in the
    divisor, ``divisor_override`` replaces it.

    Example::

        >>> F.avg_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2).shape
        ember.Size([1, 1, 2, 2, 2])
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


# -- adaptive ---------------------------------------------------------------------------------------------------------
def _adaptive_args(input, output_size, n, op):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(input.shape)}")
    # 1-D and 2-D average pooling accept zero channels; all accept an empty first dim
    first = input.ndim - n if op in ("adaptive_avg_pool1d", "adaptive_avg_pool2d") else 1
    for d in range(first, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    sizes = input.shape[-n:]
    if not isinstance(output_size, (tuple, list)):
        if n > 1 and not hasattr(output_size, "__index__"):
            raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
        output_size = (_int_size(output_size, op, None),) * n
    out = tuple(output_size)
    if len(out) != n:
        raise RuntimeError(f"{op}: output_size must be {n}")
    out = tuple(s if o is None and n > 1 else _int_size(o, op, i) for i, (o, s) in enumerate(zip(out, sizes)))
    if min(out) < 0:
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    unbatched = input.ndim == n + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched, sizes, out


def _int_size(v, op, pos):
    """An output size entry as an int (``pos``: its place in a tuple), with the TypeError of an argument parser."""
    try:
        return operator.index(v)
    except TypeError:
        name = type(v).__name__
        raise TypeError(f"{op}(): argument 'output_size' (position 2) must be tuple of ints, " +
                        (f"not {name}" if pos is None else f"but found element of type {name} at pos {pos}")) from None


def _bounds(size, out):
    """torch's adaptive windows: [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


@input_precision  # built on matmul, which autocast would cast
def _adaptive_avg(input, output_size, n):
    op = f"adaptive_avg_pool{n}d"
    x, unbatched, sizes, out = _adaptive_args(input, output_size, n, op)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{op}" not implemented for \'{_dtype.scalar_name(x.dtype)}\'')
    if 0 in out:
        y = x.flatten(2)[:, :, :0].reshape(x.shape[:2] + out)
    elif all(s % o == 0 for s, o in zip(sizes, out)):  # windows tile the input: plain average pooling
        k = tuple(s // o for s, o in zip(sizes, out))
        plan = Plan(x.shape, k, k, (1,) * n, ((0, 0),) * n)
        y = WindowSum.apply(x, plan=plan, divisor=float(math.prod(k)))
    else:  # one averaging matrix (out, in) per dim; half precision is rounded once, at the end
        xp = array_module(x.device)
        y = x.float() if x.dtype in (_dtype.float16, _dtype.bfloat16) else x
        for d, (s, o) in enumerate(zip(sizes, out)):
            m = xp.zeros((s, o), dtype=y.dtype.np)
            for i, (a, b) in enumerate(_bounds(s, o)):
                m[a:b, i] = 1.0 / (b - a)
            avg = Tensor._make(m, y.dtype, y.device)
            y = (y.movedim(2 + d, -1) @ avg).movedim(-1, 2 + d)
        y = y.to(x.dtype)
    y = _layout_of(y, x) if n == 2 else y
    return y.squeeze(0) if unbatched else y


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length over (N, C, L) or (C, L).

    Example::

        >>> F.adaptive_avg_pool1d(ember.tensor([[1., 2., 3., 4., 5.]]), 2)
        tensor([[2., 4.]])
    """
    return _adaptive_avg(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size (an int, or a pair whose None entries keep the input size).

    Example::

        >>> F.adaptive_avg_pool2d(ember.ones(1, 3, 7, 5), (2, None)).shape
        ember.Size([1, 3, 2, 5])
    """
    return _adaptive_avg(input, output_size, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed output size over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> F.adaptive_avg_pool3d(ember.ones(1, 2, 4, 4, 4), 1).shape
        ember.Size([1, 2, 1, 1, 1])
    """
    return _adaptive_avg(input, output_size, 3)


def _adaptive_max(input, output_size, return_indices, n):
    op = f"adaptive_max_pool{n}d"
    x, unbatched, sizes, out = _adaptive_args(input, output_size, n, op)
    _kernel_dtypes(x, "adaptive_max_pool3d_cpu" if n == 3 else "adaptive_max_pool2d")
    if 0 in out:
        empty = x.flatten(2)[:, :, :0].reshape(x.shape[:2] + out)
        r = empty, empty.detach().long()
    elif all(s % o == 0 for s, o in zip(sizes, out)):
        k = tuple(s // o for s, o in zip(sizes, out))
        r = MaxPool.apply(x, plan=Plan(x.shape, k, k, (1,) * n, ((0, 0),) * n), indices=True)
    else:
        r = _gathered_max(x, sizes, out)
    if n == 2:
        r = tuple(_layout_of(t, x) for t in r)
    if unbatched:
        r = tuple(t.squeeze(0) for t in r)
    return r if return_indices else r[0]


def _gathered_max(x, sizes, out):
    """Adaptive max pooling with windows of varying size: every window padded to the largest by repeating its last
    element (harmless for a max), gathered with one index and reduced."""
    import numpy as np
    index = np.zeros((), np.int64)
    for s, o in zip(sizes, out):
        b = _bounds(s, o)
        k = max(e - a for a, e in b)
        idx = np.array([[min(a + j, e - 1) for j in range(k)] for a, e in b], np.int64)  # (out_d, k_d)
        # flat index over the dims so far, laid out (out_1, k_1, out_2, k_2, ...)
        index = index[..., None, None] * s + idx
    n = len(out)
    perm = [2 * d for d in range(n)] + [2 * d + 1 for d in range(n)]
    index = index.transpose(perm).reshape(math.prod(out), -1)  # (prod(out), window)
    xp = array_module(x.device)
    index_t = Tensor._make(xp.asarray(index), _dtype.int64, x.device)
    windows = x.flatten(2)[:, :, index_t]  # (B, C, prod(out), window)
    values, arg = windows.max(-1)
    nan = windows.isnan()
    if nan.any():  # the last NaN of a window is its max, as torch
        arg = (windows.shape[-1] - 1 - nan.flip(-1).byte().argmax(-1)).where(values.isnan(), arg)
        values = windows.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    flat = index_t.expand(x.shape[:2] + index_t.shape).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    shape = x.shape[:2] + tuple(out)
    return values.reshape(shape), flat.reshape(shape)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length over (N, C, L) or (C, L).

    Example::

        >>> F.adaptive_max_pool1d(ember.tensor([[1., 5., 3., 4., 2.]]), 2)
        tensor([[5., 4.]])
    """
    return _adaptive_max(input, output_size, return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed output size over (N, C, H, W) or (C, H, W).

    Example::

        >>> F.adaptive_max_pool2d(ember.ones(1, 3, 7, 5), 3).shape
        ember.Size([1, 3, 3, 3])
    """
    return _adaptive_max(input, output_size, return_indices, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed output size over (N, C, D, H, W) or (C, D, H, W).

    Example::

        >>> F.adaptive_max_pool3d(ember.ones(1, 2, 4, 4, 4), 2).shape
        ember.Size([1, 2, 2, 2, 2])
    """
    return _adaptive_max(input, output_size, return_indices, 3)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool1d` returning ``(output, indices)``."""
    return _adaptive_max(input, output_size, True, 1)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool2d` returning ``(output, indices)``."""
    return _adaptive_max(input, output_size, True, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """:func:`adaptive_max_pool3d` returning ``(output, indices)``."""
    return _adaptive_max(input, output_size, True, 3)


# -- fractional ------------------------------------------------------------------------------------------------------
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, n):
    op = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * n
        output_size = [int(input.size(d - n) * ratio[d]) for d in range(n)]
    if _random_samples is None:
        batch = 1 if input.ndim == n + 1 else input.size(0)
        _random_samples = _random.rand(batch, input.size(-n - 1), n, dtype=input.dtype, device=input.device)
    if _random_samples.requires_grad and grad_enabled():
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument 'random_samples'. "
                           "This input cannot have requires_grad True.")
    k = _fractional_arg(kernel_size, n, "kernel_size", op)
    out = _fractional_arg(output_size, n, "output_size", op)
    name = op if n == 2 else f"{op}_out"
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    for d in range(input.ndim - n - 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {d} being empty.")
    for axis, size, kk, o in zip(_DIM_NAMES[n], input.shape[-n:], k, out):
        if o + kk - 1 >= size:
            raise RuntimeError(f"{name}(): pool {axis} {kk} too large relative to input {axis} {size}")
    samples = _random_samples
    x = input.unsqueeze(0) if input.ndim == n + 1 else input
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[2]}.")
    # torch reads the 2-D samples as (width, height) and the 3-D ones as (time, height, width)
    y, idx = FractionalMaxPool.apply(x, ksize=k, out=out, samples=samples.detach()._data,
                                     order=(1, 0) if n == 2 else (0, 1, 2))
    return (y.squeeze(0), idx.squeeze(0)) if input.ndim == n + 1 else (y, idx)


def _fractional_arg(v, n, name, op):
    v = (v,) * n if isinstance(v, int) else tuple(v)
    if len(v) == 1:
        v = v * n
    if len(v) != n:
        raise RuntimeError(f"{op}: {name} must either be a single Int or tuple of {'' if n == 2 else 'three '}Ints")
    return tuple(int(e) for e in v)


@cpu_float32_inputs  # on CPU autocast's float32 list
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W): ``kernel_size`` windows whose starts step
    pseudo-randomly to give ``output_size`` (or ``output_ratio`` times the input size); ``_random_samples``
    (N, C, 2) in [0, 1), drawn by default, fix the steps.

    Example::

        >>> F.fractional_max_pool2d(ember.randn(1, 3, 9, 8), 2, output_size=(4, 5)).shape
        ember.Size([1, 3, 4, 5])
    """
    r = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return r if return_indices else r[0]


@cpu_float32_inputs  # on CPU autocast's float32 list
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W); ``_random_samples`` is (N, C, 3).

    Example::

        >>> F.fractional_max_pool3d(ember.randn(1, 2, 6, 6, 6), 2, output_ratio=0.5).shape
        ember.Size([1, 2, 3, 3, 3])
    """
    r = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return r if return_indices else r[0]


@cpu_float32_inputs  # on CPU autocast's float32 list
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """:func:`fractional_max_pool2d` returning ``(output, indices)``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """:func:`fractional_max_pool3d` returning ``(output, indices)``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


# -- unpooling, Lp pooling --------------------------------------------------------------------------------------------
def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    k = _tuple(kernel_size, n, "kernel_size", f"max_unpool{n}d")
    s = k if stride is None else _tuple(stride, n, "stride", f"max_unpool{n}d")
    p = _tuple(padding, n, "padding", f"max_unpool{n}d")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, but got a tensor "
                           f"with {input.ndim} dimensions.")
    if indices.dtype is not _dtype.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {_dtype.scalar_name(indices.dtype)}" if n < 3 else ""))
    _kernel_dtypes(input, f"max_unpool{max(n, 2)}d")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    default = [(i - 1) * ss - 2 * pp + kk for i, ss, pp, kk in zip(input.shape[-n:], s, p, k)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)[-n:] if len(output_size) in (n + 1, n + 2) else list(output_size)
        if len(size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < size[d] < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})')
    unbatched = input.ndim == n + 1
    x = input.unsqueeze(0) if unbatched else input
    idx = (indices.unsqueeze(0) if unbatched else indices).flatten(2)
    total = math.prod(size)
    if idx.numel() and (int(idx.max()) >= total or int(idx.min()) < 0):
        bad = int(idx.max()) if int(idx.max()) >= total else int(idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    flat = _creation.zeros(x.shape[:2] + (total,), dtype=x.dtype, device=x.device)
    y = flat.scatter(2, idx, x.flatten(2)).reshape(x.shape[:2] + tuple(size))
    y = _layout_of(y, x) if n == 2 else y
    return y.squeeze(0) if unbatched else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool1d`: the values at their ``indices``, zeros elsewhere.

    Example::

        >>> y, i = F.max_pool1d(ember.tensor([[1., 3., 2., 5.]]), 2, return_indices=True)
        >>> F.max_unpool1d(y, i, 2)
        tensor([[0., 3., 0., 5.]])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


@cpu_float32_inputs  # on CPU autocast's float32 list
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool2d`: the values at their ``indices``, zeros elsewhere.

    Example::

        >>> y, i = F.max_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(y, i, 2).shape
        ember.Size([1, 1, 4, 4])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


@cpu_float32_inputs  # on CPU autocast's float32 list
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of :func:`max_pool3d`."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n):
    k = _tuple(kernel_size, n, "kernel_size", f"lp_pool{n}d")
    if norm_type in (math.inf, -math.inf):  # the largest (smallest) magnitude in each window
        sign = 1 if norm_type > 0 else -1
        return sign * _max_pool(sign * input.abs(), kernel_size, stride, 0, 1, ceil_mode, False, n)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    # relu's gradient is zero where the sum is: no NaN from pow's infinite slope at 0
    return (out.sign() * out.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum x^p)^(1/p)`` over each window.

    Example::

        >>> F.lp_pool1d(ember.tensor([[3., 4.]]), 2, 2)
        tensor([[5.]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling: ``(sum x^p)^(1/p)`` over each window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling: ``(sum x^p)^(1/p)`` over each window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
