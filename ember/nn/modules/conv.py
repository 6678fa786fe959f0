"""Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their lazy forms."""
import math

from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What every convolution layer shares: arguments, parameters, torch's initialisation and repr."""

    _n = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._n
        kernel_size, stride, dilation = _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(dilation, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.transposed, self.output_padding = transposed, _ntuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        # F.pad's argument for the non-zero padding modes: last dim first, (left, right) each
        if isinstance(padding, str):
            pad = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    pad[2 * i], pad[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = pad
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty(shape + kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return self._fn(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                                  weight, bias, self.stride, 0, self.dilation, self.groups)
        return self._fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L).

    Args:
        in_channels, out_channels (int): channels of the input and of the output
        kernel_size (int or tuple): size of the kernel
        stride, padding, dilation: as :func:`F.conv1d` (``padding`` may be ``'same'`` or ``'valid'``)
        groups (int): blocked connections from input to output channels. Default: 1
        bias (bool): whether to learn an additive bias. Default: ``True``
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'zeros'``

    Example::

        >>> ember.nn.Conv1d(16, 33, 3, stride=2)(ember.randn(20, 16, 50)).shape
        ember.Size([20, 33, 24])
    """

    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W).

    Args:
        in_channels, out_channels (int): channels of the input and of the output
        kernel_size (int or tuple): size of the kernel
        stride, padding, dilation: as :func:`F.conv2d` (``padding`` may be ``'same'`` or ``'valid'``)
        groups (int): blocked connections from input to output channels. Default: 1
        bias (bool): whether to learn an additive bias. Default: ``True``
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'zeros'``

    Attributes:
        weight: (out_channels, in_channels / groups, *kernel_size), from :math:`U(-\\sqrt{k}, \\sqrt{k})` with
            :math:`k = groups / (C_{in} \\prod kernel\\_size)`; bias: (out_channels), from the same distribution.

    Example::

        >>> ember.nn.Conv2d(16, 33, 3, stride=2)(ember.randn(20, 16, 50, 100)).shape
        ember.Size([20, 33, 24, 49])
    """

    _n = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); arguments as :class:`Conv2d`.

    Example::

        >>> ember.nn.Conv3d(4, 8, 3, padding=1)(ember.randn(2, 4, 5, 6, 7)).shape
        ember.Size([2, 8, 5, 6, 7])
    """

    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """The base of the transposed convolutions (arguments as :class:`_ConvNd`'s, zero padding only)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """``output_padding``, or what makes the output ``output_size`` (its spatial dims, or all of them)."""
        n = num_spatial_dims
        if output_size is None:
            return self.output_padding
        lead = 2 if input.ndim == n + 2 else 1
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {lead + n} "
                             f"elements (got {len(output_size)})")
        dilation = dilation or (1,) * n
        mins = [(input.shape[d + lead] - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel_size[d] - 1) + 1
                for d in range(n)]
        maxs = [m + s - 1 for m, s in zip(mins, stride)]
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {mins} to "
                                 f"{maxs} (for an input of {input.shape[2:]})")
        return [int(s) - m for s, m in zip(output_size, mins)]


class _ConvTranspose(_ConvTransposeNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._n, self.dilation)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L); ``forward(input, output_size=None)`` can pick
    the output length among those the stride allows.

    Example::

        >>> ember.nn.ConvTranspose1d(16, 33, 3, stride=2)(ember.randn(20, 16, 50)).shape
        ember.Size([20, 33, 101])
    """

    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W).

    Args:
        in_channels, out_channels (int): channels of the input and of the output
        kernel_size, stride, padding, output_padding, groups, dilation: as :func:`F.conv_transpose2d`
        bias (bool): whether to learn an additive bias. Default: ``True``

    Example::

        >>> m = ember.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1)
        >>> m(ember.randn(1, 16, 12, 12), output_size=[1, 8, 24, 24]).shape
        ember.Size([1, 8, 24, 24])
    """

    _n = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W).

    Example::

        >>> ember.nn.ConvTranspose3d(2, 4, 2, stride=2)(ember.randn(1, 2, 3, 3, 3)).shape
        ember.Size([1, 4, 6, 6, 6])
    """

    _n = 3
    _fn = staticmethod(F.conv_transpose3d)


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from the first input; the module then becomes ``cls_to_become``."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        n = self._n
        if input.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {type(self).__name__}, "
                               f"but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[1] if input.ndim == n + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups) + self.kernel_size)
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups) + self.kernel_size)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_conv(base):
    class LazyConv(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    LazyConv.__doc__ = f"A :class:`{base.__name__}` whose ``in_channels`` is inferred from the first input."
    return LazyConv


def _lazy_conv_transpose(base):
    class LazyConvTranspose(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    LazyConvTranspose.__doc__ = f"A :class:`{base.__name__}` whose ``in_channels`` is inferred from the first input."
    return LazyConvTranspose


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
