"""NN functions torch also exposes at top level (``torch.conv2d``, ``torch.dropout``...), with the signatures of
those ATen ops, which sometimes differ from ``torch.nn.functional``'s: ``torch.dropout(input, p, train)`` has no
defaults, ``torch.embedding(weight, indices)`` takes its arguments the other way round, losses take ``reduction``
as an int (0: 'none', 1: 'mean', 2: 'sum'), and, as torch's bindings do, default to 0 ('none')."""

__all__ = ["embedding", "embedding_renorm_", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc", "convolution", "max_pool1d", "max_pool2d", "max_pool3d",
           "max_pool1d_with_indices", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_dropout", "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "batch_norm", "instance_norm",
           "group_norm", "layer_norm", "native_batch_norm", "native_layer_norm", "native_group_norm",
           "bilinear", "affine_grid_generator",
           "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "celu_", "selu_", "rrelu", "rrelu_",
           "threshold_",
           "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "kl_div",
           "binary_cross_entropy_with_logits", "poisson_nll_loss", "triplet_margin_loss", "ctc_loss",
           "norm_except_dim", "_weight_norm"]

from ... import _dtype
from ..._tensor import register
from ...autograd.grad_mode import no_grad as _no_grad
import importlib

_dropout_mod, _loss, _norm, _pool, _sparse = (importlib.import_module(f"{__package__}.{m}") for m in
                                              ("dropout", "loss", "normalization", "pooling", "sparse"))
from .activation import celu_, prelu, selu_, threshold_
from .activation import _maybe_inplace, _rrelu
from .conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,  # noqa: F401
                   conv_tbc)
from .linear import bilinear  # noqa: F401
from .pooling import adaptive_avg_pool1d, avg_pool1d, max_pool1d_with_indices  # noqa: F401
from .vision import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle  # noqa: F401
from .vision import affine_grid, grid_sample
from ..utils.weight_norm import _norm_except_dim, _weight_norm  # noqa: F401

_REDUCTIONS = ("none", "mean", "sum")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at ``indices`` (a negative ``padding_idx``: no padding row)."""
    return _sparse.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                             scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales, in place, the rows of ``input`` at ``indices`` to a ``norm_type``-norm of at most ``max_norm``."""
    _sparse._renorm_(input, indices, max_norm, norm_type)
    return input


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The convolution (or, with ``transposed``, the transposed convolution) of a batched ``input`` by a weight of
    as many dimensions."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim > 5:
        raise RuntimeError(f"Expected a 3-, 4- or 5-dimensional weight, but got weight of size {list(weight.shape)}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    n = weight.ndim - 2
    if transposed:
        fn = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (conv1d, conv2d, conv3d)[n - 1](input, weight, bias, stride, padding, dilation, groups)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    """``(output, indices)``, as ``F.adaptive_max_pool1d(..., return_indices=True)``."""
    return _pool.adaptive_max_pool1d(input, output_size, return_indices=True)


def dropout(input, p, train):
    return _dropout_mod.dropout(input, p, train)


def dropout_(input, p, train):
    return _dropout_mod.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _dropout_mod.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _dropout_mod.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1)."""
    return _dropout_mod._dropout(input, p, train, False, feature=True)


def feature_dropout_(input, p, train):
    return _dropout_mod._dropout(input, p, train, True, feature=True)


def feature_alpha_dropout(input, p, train):
    return _dropout_mod.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _dropout_mod.feature_alpha_dropout(input, p, train, inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def _stats(input, axes, eps, *params):
    """The mean and ``1 / sqrt(var + eps)`` (biased) of ``input`` over ``axes``, kept, without gradient: computed in
    float32 for a half ``input``, returned in float32 when float32 ``params`` accompany it, else in its dtype."""
    half = input.dtype in (_dtype.float16, _dtype.bfloat16)
    with _no_grad():
        x = input.float() if half else input
        mean, rstd = x.mean(axes, keepdim=True), (x.var(axes, unbiased=False, keepdim=True) + eps).rsqrt()
    dtype = _dtype.float32 if half and _norm._mixed(input, *params) else input.dtype
    return mean.to(dtype), rstd.to(dtype)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``(output, save_mean, save_invstd)``: the statistics (C,) of the batch in training, empty otherwise."""
    c = input.shape[1]
    out = _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    mean, rstd = _stats(input, (0,) + tuple(range(2, input.ndim)), eps, weight, bias, running_mean, running_var)
    if not training:
        return out, mean.new_empty(0), rstd.new_empty(0)
    return out, mean.reshape(c), rstd.reshape(c)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(output, mean, rstd)``, the statistics shaped as ``input`` with the normalized dims of size 1."""
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    out = _norm.layer_norm(input, normalized_shape, weight, bias, eps)
    return (out,) + _stats(input, tuple(range(input.ndim - k, input.ndim)), eps, weight, bias)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(output, mean, rstd)``, the statistics (N, group)."""
    out = _norm.group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input.reshape(N, group, (C // group) * HxW), (2,), eps, weight, bias)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def affine_grid_generator(theta, size, align_corners):
    return affine_grid(theta, size, align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`~ember.nn.functional.grid_sample` with the modes as ints: 0 bilinear, 1 nearest, 2 bicubic; 0 zeros,
    1 border, 2 reflection."""
    return grid_sample(input, grid, ("bilinear", "nearest", "bicubic")[interpolation_mode],
                       ("zeros", "border", "reflection")[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def rrelu(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, generator)


def rrelu_(input, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    return _maybe_inplace(_rrelu, input, True, lower, upper, training, generator)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _loss.cosine_embedding_loss(input1, input2, target, margin, reduction=_REDUCTIONS[reduction])


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _loss.hinge_embedding_loss(input, target, margin, reduction=_REDUCTIONS[reduction])


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _loss.margin_ranking_loss(input1, input2, target, margin, reduction=_REDUCTIONS[reduction])


def kl_div(input, target, reduction=0, *, log_target=False):
    return _loss.kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _loss.binary_cross_entropy_with_logits(input, target, weight, reduction=_REDUCTIONS[reduction],
                                                  pos_weight=pos_weight)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_REDUCTIONS[reduction])


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_REDUCTIONS[reduction])


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return _loss.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS[reduction],
                          zero_infinity)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dims (over all of ``v`` for dim
    -1), as weight normalization's ``g``."""
    if not isinstance(pow, int):
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not {type(pow).__name__}")
    return _norm_except_dim(v, dim, pow)


register(prelu)  # Tensor.prelu(weight)
