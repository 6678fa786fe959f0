"""Folding an eval-mode BatchNorm into the preceding convolution or linear layer, as ``torch.nn.utils.fusion``."""
import copy

from ... import _creation
from ..._ops.unary import rsqrt
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` whose output equals ``bn(conv(x))``, both in eval mode.

    Args:
        conv: a convolution (``ConvTranspose`` with ``transpose=True``).
        bn: a BatchNorm with running statistics.
        transpose (bool): whether ``conv`` is transposed. Default: ``False``

    Example::

        >>> conv, bn = ember.nn.Conv2d(2, 3, 3).eval(), ember.nn.BatchNorm2d(3).eval()
        >>> x = ember.randn(1, 2, 5, 5)
        >>> bool(ember.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6))
        True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias (new Parameters, in the conv's dtypes) of a convolution fused with a BatchNorm of
    running mean ``bn_rm``, variance ``bn_rv``, ``bn_eps`` and affine ``bn_w``, ``bn_b`` (each bias or affine
    tensor may be None)."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    bn_var_rsqrt = rsqrt(bn_rv + bn_eps)
    # scale the output channels: dim 0 of a conv's weight, dim 1 of a transposed conv's
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return Parameter(fused_conv_w, conv_w.requires_grad), Parameter(fused_conv_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose output equals ``bn(linear(x))``, both in eval mode (``bn.num_features`` equal to
    ``linear.out_features``, or 1).

    Example::

        >>> linear, bn = ember.nn.Linear(4, 3).eval(), ember.nn.BatchNorm1d(3).eval()
        >>> x = ember.randn(2, 4)
        >>> bool(ember.allclose(fuse_linear_bn_eval(linear, bn)(x), bn(linear(x)), atol=1e-6))
        True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias (new Parameters, in the linear layer's dtypes) of a linear layer fused with a BatchNorm
    of running mean ``bn_rm``, variance ``bn_rv``, ``bn_eps`` and affine ``bn_w``, ``bn_b`` (``linear_b`` may be
    None)."""
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    bn_scale = bn_w * rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
