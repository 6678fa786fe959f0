"""Convolutions, transposed convolutions, and unfold/fold (im2col/col2im) with torch's argument checks."""
from ... import _dtype
from ..._autocast import lower_precision_inputs
from ..._ops.conv import Col2im, Conv, ConvInput, Im2col, Plan, out_size
from ..._ops.memory_format import contiguous, contiguous_format, suggest_format

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
           "unfold", "fold"]

_AXES = ("depth", "height", "width")


def expand_param(value, n, name, what="convolution dimensions"):
    """An int or a sequence of one or ``n`` ints as an ``n``-tuple, with torch's error."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"{what}, but got {name}={list(value)}")
    return value


def _shape(t):
    return list(t.shape)


def _check_input(input, n, name):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {_shape(input)}")
    return input.ndim == n + 1


def _check_dtypes(input, weight, bias, transposed=False):
    """A bias of another dtype is reported first, but after the weight for a transposed convolution."""
    bad_weight = weight.dtype is not input.dtype
    if bias is not None and bias.dtype is not input.dtype and not (transposed and bad_weight):
        raise RuntimeError(f"Input type ({_CNAME.get(input.dtype.name, input.dtype.name)}) and bias type "
                           f"({_CNAME.get(bias.dtype.name, bias.dtype.name)}) should be the same")
    if bad_weight:
        raise RuntimeError(f"expected scalar type {_dtype.scalar_name(input.dtype)} but found "
                           f"{_dtype.scalar_name(weight.dtype)}")


def _laid_out_as(y, x, weight):
    """The output in channels_last(_3d) when the batched input or the weight is (torch's rule), else as computed."""
    if x._data.flags.c_contiguous and weight._data.flags.c_contiguous:
        return y
    fmt = suggest_format(x.shape, x.stride())
    if fmt is contiguous_format:
        fmt = suggest_format(weight.shape, weight.stride())
    return y if fmt is contiguous_format else contiguous(y, fmt)


_CNAME = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _geometry(weight, stride, dilation, groups, n):
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim != n + 2:
        got = list(expand_param(stride, n, "stride"))
        raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.ndim - 2} values to "
                           f"match the convolution dimensions, but got stride={got}")
    stride, dilation = expand_param(stride, n, "stride"), expand_param(dilation, n, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    O = weight.shape[0]
    if O < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_shape(weight)} instead")
    if O % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_shape(weight)}] instead")
    return stride, dilation


def _pads(padding, weight, stride, dilation, n):
    """((low, high), ...) from an int, a tuple, 'valid' or 'same' (extra padding on the high side, as torch)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
        return tuple((t // 2, t - t // 2) for t in total)
    padding = expand_param(padding, n, "padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in padding)


def _conv(input, weight, bias, stride, padding, dilation, groups, n, name):
    unbatched = _check_input(input, n, name)
    stride, dilation = _geometry(weight, stride, dilation, groups, n)
    pads = _pads(padding, weight, stride, dilation, n)
    x = input.unsqueeze(0) if unbatched else input
    C, O = x.shape[1], weight.shape[0]
    if C != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_shape(weight)}, expected input{_shape(x)} to have "
                           f"{weight.shape[1] * groups} channels, but got {C} channels instead")
    padded = [s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)]
    ksize = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(k > p for k, p in zip(ksize, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, ksize))}). Kernel size can't be greater than actual input "
                           "size")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != O):
        raise RuntimeError(f"Given weight of size {_shape(weight)}, expected bias to be 1-dimensional with {O} "
                           f"elements, but got bias of size {_shape(bias)} instead")
    _check_dtypes(x, weight, bias)
    y = Conv.apply(x, weight, bias, plan=Plan(x.shape, weight.shape[2:], stride, dilation, pads), groups=groups)
    return y.squeeze(0) if unbatched else _laid_out_as(y, x, weight)


@lower_precision_inputs
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) over (N, C_in, L) or (C_in, L) with a (C_out, C_in/groups, kL) weight.

    ``padding`` is an int, a tuple, ``'valid'`` or ``'same'``.

    Example::

        >>> F.conv1d(ember.randn(2, 4, 10), ember.randn(8, 4, 3), padding=1).shape
        ember.Size([2, 8, 10])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@lower_precision_inputs
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) over (N, C_in, H, W) or (C_in, H, W) with a (C_out, C_in/groups, kH, kW)
    weight.

    ``padding`` is an int, a tuple, ``'valid'`` or ``'same'``.

    Example::

        >>> F.conv2d(ember.randn(2, 3, 8, 8), ember.randn(6, 3, 3, 3), stride=2).shape
        ember.Size([2, 6, 3, 3])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@lower_precision_inputs
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) over (N, C_in, D, H, W) or (C_in, D, H, W).

    Example::

        >>> F.conv3d(ember.randn(1, 2, 4, 4, 4), ember.randn(3, 2, 3, 3, 3)).shape
        ember.Size([1, 3, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n, name):
    unbatched = _check_input(input, n, name)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride, dilation = _geometry(weight, stride, dilation, groups, n)
    padding = expand_param(padding, n, "padding")
    output_padding = expand_param(output_padding, n, "output_padding")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(op < 0 for op in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        # torch runs 1-D as 2-D with a unit height
        axes, lead = (_AXES[1:], ((0,), (1,), (1,))) if n == 1 else (_AXES[3 - n:], ((), (), ()))
        parts = [f"{what}_{a}: {v}" for what, vals, h in zip(("output_padding", "stride", "dilation"),
                                                             (output_padding, stride, dilation), lead)
                 for a, v in zip(axes, h + vals)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " +
                           " ".join(parts))
    x = input.unsqueeze(0) if unbatched else input
    Cin, Cout = weight.shape[0], weight.shape[1] * groups
    if x.shape[1] != Cin:
        raise RuntimeError(f"Given transposed=1, weight of size {_shape(weight)}, expected input{_shape(x)} to have "
                           f"{Cin} channels, but got {x.shape[1]} channels instead")
    out = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
           zip(x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != Cout):
        raise RuntimeError(f"Given transposed=1, weight of size {_shape(weight)}, expected bias to be 1-dimensional "
                           f"with {Cout} elements, but got bias of size {_shape(bias)} instead")
    _check_dtypes(x, weight, bias, transposed=True)
    # The adjoint of the convolution mapping ``out`` to the input's size: output_padding extends the high side.
    pads = tuple((p, p - op) for p, op in zip(padding, output_padding))
    plan = Plan((x.shape[0], Cout) + tuple(out), weight.shape[2:], stride, dilation, pads)
    y = ConvInput.apply(x, weight, plan=plan, groups=groups)
    if bias is not None:
        y = y + bias.reshape((Cout,) + (1,) * n)
    return y.squeeze(0) if unbatched else _laid_out_as(y, x, weight)


@lower_precision_inputs
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution ("deconvolution") with a (C_in, C_out/groups, kL) weight.

    Example::

        >>> F.conv_transpose1d(ember.randn(2, 4, 5), ember.randn(4, 3, 3), stride=2).shape
        ember.Size([2, 3, 11])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


@lower_precision_inputs
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution") with a (C_in, C_out/groups, kH, kW) weight.

    Example::

        >>> F.conv_transpose2d(ember.randn(1, 4, 5, 5), ember.randn(4, 2, 3, 3), stride=2, output_padding=1).shape
        ember.Size([1, 2, 12, 12])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


@lower_precision_inputs
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution ("deconvolution") with a (C_in, C_out/groups, kD, kH, kW) weight.

    Example::

        >>> F.conv_transpose3d(ember.randn(1, 2, 3, 3, 3), ember.randn(2, 1, 2, 2, 2)).shape
        ember.Size([1, 1, 4, 4, 4])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution over a (time, batch, in_channels) sequence with a (kernel_width, in_channels, out_channels)
    weight, ``pad`` steps of zeros at both ends; returns (time, batch, out_channels).

    Example::

        >>> F.conv_tbc(ember.randn(10, 2, 4), ember.randn(3, 4, 8), ember.zeros(8), 1).shape
        ember.Size([10, 2, 8])
    """
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    (T, B, _), (K, _, O) = input.shape, weight.shape
    length = T + 2 * pad - K + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: [{length}, {B}, {O}]")
    if length == 0:
        return input.new_zeros((0, B, O)) + bias
    x = input.permute(1, 2, 0)  # (B, C, T)
    if pad < 0:  # a negative pad crops
        x, pad = x[..., -pad:T + pad], 0
    return conv1d(x, weight.permute(2, 1, 0), bias, padding=pad).permute(2, 0, 1).contiguous()


def _fold_params(kernel_size, dilation, padding, stride):
    def pair(v, name):
        v = (v, v) if isinstance(v, int) else tuple(v)
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        return v
    k, d, p, s = pair(kernel_size, "kernel_size"), pair(dilation, "dilation"), pair(padding, "padding"), \
        pair(stride, "stride")
    for name, v, bad in (("kernel size", k, lambda a: a <= 0), ("stride", s, lambda a: a <= 0),
                         ("dilation", d, lambda a: a <= 0), ("padding", p, lambda a: a < 0)):
        if any(bad(a) for a in v):
            what = {"kernel size": "kernel", "padding": "pad"}.get(name, name)
            rule = "be non-negative" if name == "padding" else "be greater than zero"
            raise RuntimeError(f"{name} should {rule}, but got {what}_height: {v[0]} {what}_width: {v[1]}")
    return k, d, p, s


def _fold_dtype(input, kernel):
    if not (input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is _dtype.bool):
        raise NotImplementedError(f'"{kernel}_out_{input.device.type}" not implemented for '
                                  f"'{_dtype.scalar_name(input.dtype)}'")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks: (N, C, H, W) to (N, C * prod(kernel_size), L) (im2col); a 3-D input is one
    unbatched image.

    Example::

        >>> F.unfold(ember.randn(1, 3, 4, 4), kernel_size=2).shape
        ember.Size([1, 12, 9])
    """
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or 0 in input.shape[input.ndim - 3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_shape(input)}")
    _fold_dtype(input, "im2col")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    blocks = [out_size(n, kk, ss, dd, pp, pp) for n, kk, ss, dd, pp in zip(x.shape[2:], k, s, d, p)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, calculated shape of the array of sliding blocks as {tuple(blocks)}, but its "
                           "components must be at least one.")
    y = Im2col.apply(x, plan=Plan(x.shape, k, s, d, tuple((pp, pp) for pp in p)))
    return y.squeeze(0) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines sliding local blocks into a tensor, summing overlaps: (N, C * prod(kernel_size), L) to
    (N, C, *output_size) (col2im); a 2-D input is unbatched.

    Example::

        >>> F.fold(ember.ones(1, 12, 9), (4, 4), kernel_size=2)[0, 0]
        tensor([[1., 2., 2., 1.],
                [2., 4., 4., 2.],
                [2., 4., 4., 2.],
                [1., 2., 2., 1.]])
    """
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_shape(input)}")
    _fold_dtype(input, "col2im")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    if x.shape[1] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={x.shape[1]} and kernel_size={k}.")
    blocks = [out_size(n, kk, ss, dd, pp, pp) for n, kk, ss, dd, pp in zip(size, k, s, d, p)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    shape = (x.shape[0], x.shape[1] // (k[0] * k[1])) + size
    y = Col2im.apply(x, plan=Plan(shape, k, s, d, tuple((pp, pp) for pp in p)))
    return y.squeeze(0) if unbatched else y
