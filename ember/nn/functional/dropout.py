"""Dropout: elementwise, channel-wise (dropout1d/2d/3d) and the self-normalizing alpha variants.

Masks come from ember's default generator, so ``ember.manual_seed`` makes them reproducible.
"""

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
import math
import warnings

import numpy as np

from ..._dtype import scalar_name
from ..._random import _sampler
from ..._tensor import Tensor

_SELU_NEG = 1.7580993408473766  # -SELU(-inf) = scale * alpha: where alpha dropout puts dropped units


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep(input, feature):
    """A Bernoulli(1 - p) draw as a bool array: per element, or per (sample, channel) for feature dropout."""
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    else:
        shape = tuple(input.shape)
    return _sampler(None, input.device).random(shape, np.float32)


def _dropout(input, p, training, inplace, feature=False, alpha=False):
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    if not input.dtype.is_floating_point:
        if input.dtype.is_complex:
            raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for '{scalar_name(input.dtype)}'")
        raise RuntimeError(f"result type Float can't be cast to the desired output type {scalar_name(input.dtype)}")
    keep = _keep(input, feature) >= p
    dt = input.dtype.np
    if not alpha:
        noise = Tensor._make((keep * (1 / (1 - p))).astype(dt), input.dtype, input.device)
        return input.mul_(noise) if inplace else input * noise
    a = 1 / math.sqrt((_SELU_NEG ** 2 * p + 1) * (1 - p))
    noise = Tensor._make((keep * a).astype(dt), input.dtype, input.device)
    shift = Tensor._make((keep * (_SELU_NEG * a) - _SELU_NEG * a * (1 - p)).astype(dt), input.dtype, input.device)
    return input.mul_(noise).add_(shift) if inplace else input * noise + shift


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)`` (in training).

    Example::

        >>> F.dropout(ember.ones(4), 0.5, training=False)
        tensor([1., 1., 1., 1.])
    """
    return _dropout(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value, and an affine correction
    keeps zero mean and unit variance."""
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` of whole channels (dim 1)."""
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def _unbatched(input, p, training, inplace):
    """Channel dropout of an input without its batch dim."""
    x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout(x, p, training, inplace, feature=True)
    return out.squeeze_(0) if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return _unbatched(input, p, training, inplace)
    return _dropout(input, p, training, inplace, feature=True)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a ``(N, C, H, W)`` input with probability ``p`` (a 3-D input is taken as
    ``(N, C, L)``, as torch does)."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability ``p``."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs).", stacklevel=2)
    if input.ndim != 5:
        return _unbatched(input, p, training, inplace)
    return _dropout(input, p, training, inplace, feature=True)
