"""Gradients of the convolutions w.r.t. their input and weight, given the output gradient (``torch.nn.grad``)."""
from .._ops.conv import ConvInput, ConvWeight, Plan
from .functional.conv import expand_param

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _plan(input_size, weight_size, grad_output, stride, padding, dilation, n, name):
    if grad_output.ndim != n + 2:
        raise RuntimeError(f"{name}: expected a {n + 2}-D grad_output (batch, channels, *spatial), but got size "
                           f"{list(grad_output.shape)}")
    stride, padding, dilation = (expand_param(v, n, k) for v, k in
                                 ((stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    plan = Plan(tuple(input_size), tuple(weight_size)[2:], stride, dilation, tuple((p, p) for p in padding))
    if plan.out != tuple(grad_output.shape[2:]):
        raise RuntimeError(f"{name}: grad_output of size {list(grad_output.shape)} does not match the output size "
                           f"{list(plan.out)} of the convolution of an input of size {list(input_size)}")
    return plan


def _input(input_size, weight, grad_output, stride, padding, dilation, groups, n, name):
    plan = _plan(input_size, weight.shape, grad_output, stride, padding, dilation, n, name)
    return ConvInput.apply(grad_output, weight, plan=plan, groups=groups)


def _weight(input, weight_size, grad_output, stride, padding, dilation, groups, n, name):
    plan = _plan(input.shape, weight_size, grad_output, stride, padding, dilation, n, name)
    return ConvWeight.apply(input, grad_output, plan=plan, groups=groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv1d` w.r.t. its input of shape ``input_size`` (a transposed convolution)."""
    return _input(input_size, weight, grad_output, stride, padding, dilation, groups, 1, "conv1d_input")


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv1d` w.r.t. its weight of shape ``weight_size``."""
    return _weight(input, weight_size, grad_output, stride, padding, dilation, groups, 1, "conv1d_weight")


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv2d` w.r.t. its input of shape ``input_size`` (a transposed convolution).

    Example::

        >>> x, w = ember.randn(1, 1, 3, 3), ember.randn(1, 1, 1, 2)
        >>> ember.nn.grad.conv2d_input(x.shape, w, ember.ones(1, 1, 3, 2)).shape
        ember.Size([1, 1, 3, 3])
    """
    return _input(input_size, weight, grad_output, stride, padding, dilation, groups, 2, "conv2d_input")


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv2d` w.r.t. its weight of shape ``weight_size``.

    Example::

        >>> ember.nn.grad.conv2d_weight(ember.randn(1, 1, 3, 3), (1, 1, 1, 2), ember.ones(1, 1, 3, 2)).shape
        ember.Size([1, 1, 1, 2])
    """
    return _weight(input, weight_size, grad_output, stride, padding, dilation, groups, 2, "conv2d_weight")


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv3d` w.r.t. its input of shape ``input_size`` (a transposed convolution)."""
    return _input(input_size, weight, grad_output, stride, padding, dilation, groups, 3, "conv3d_input")


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`F.conv3d` w.r.t. its weight of shape ``weight_size``."""
    return _weight(input, weight_size, grad_output, stride, padding, dilation, groups, 3, "conv3d_weight")
