"""Fake quantization for quantization-aware training: round to an integer grid and back, straight-through gradient."""

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]
from .. import _dtype as _dt
from .._tensor import Tensor, wrap_dim
from ..autograd.function import Function
from .binary import _where
from .nn_ops import check_float
from .reduce import _tname


class FakeQuantize(Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max, kernel, per_channel=False, float_zero_point=False):
        check_float(x, kernel)
        xp = ctx.xp
        f32 = xp.dtype(xp.float32)
        # torch's kernels differ for float64 input: the float-zero-point one rounds in float32, the per-tensor one
        # scales back in float32
        fin = x.dtype if x.dtype == xp.float64 and not float_zero_point else f32
        fout = x.dtype if x.dtype == xp.float64 and per_channel else f32
        scale = xp.asarray(scale, f32)
        zero_point = xp.asarray(zero_point, f32 if float_zero_point else xp.int64)
        # a float32 reciprocal, as torch; an integer zero point is added after rounding, a float one before
        xs = x.astype(fin) * (f32.type(1) / scale).astype(fin)
        q = xp.rint(xs + zero_point.astype(fin)) if float_zero_point else xp.rint(xs) + zero_point.astype(fin)
        mask = (q >= quant_min) & (q <= quant_max)
        ctx.save_for_backward(mask)
        q = xp.clip(q, quant_min, quant_max)
        q[xp.isnan(q)] = quant_min  # torch's integer cast sends NaN to quant_min
        return ((q.astype(fout) - zero_point.astype(fout)) * scale.astype(fout)).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return _where(mask, grad, 0.0), None, None, None, None


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or equal to `quant_max`.")


def _no_grad_qparam(op, name, t):
    if isinstance(t, Tensor) and t.requires_grad:
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Quantizes ``input`` with one ``scale`` and ``zero_point`` and dequantizes it again:
    ``(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``.

    The gradient passes straight through where the rounded value lies in ``[quant_min, quant_max]`` and is 0
    elsewhere. ``scale`` and ``zero_point`` are numbers or one-element tensors.

    Example::

        >>> ember.fake_quantize_per_tensor_affine(ember.tensor([0.26, -1.0, 30.0]), 0.1, 0, -128, 127)
        tensor([ 0.3000, -1.0000, 12.7000])
    """
    tensor_qparams = isinstance(scale, Tensor) or isinstance(zero_point, Tensor)
    if tensor_qparams:
        op = "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams"
        _no_grad_qparam(op, "scale", scale)
        _no_grad_qparam(op, "zero_point", zero_point)
        scale, zero_point = float(scale), int(zero_point)
    elif not isinstance(zero_point, int):
        raise TypeError(f"fake_quantize_per_tensor_affine() received an invalid combination of arguments - got "
                        f"zero_point of type {type(zero_point).__name__}, expected int or Tensor")
    _check_range(quant_min, quant_max)
    # the tensor overload leaves a zero point outside the range unchecked, as torch does
    if not tensor_qparams and not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return FakeQuantize.apply(input, scale, zero_point, quant_min, quant_max,
                              kernel="fake_quantize_tensor_cachemask_kernel_type_handling")


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Fake-quantizes each slice of ``input`` along ``axis`` with its own ``scale[c]`` and ``zero_point[c]``, as
    :func:`fake_quantize_per_tensor_affine`. A float ``zero_point`` is added before rounding.

    Args:
        scale (Tensor): float32 or bfloat16, shape ``(input.size(axis),)``
        zero_point (Tensor): int32, float32 or float16, the same shape

    Example::

        >>> w = ember.tensor([[0.26, 0.26], [1.0, 1.0]])
        >>> ember.fake_quantize_per_channel_affine(w, ember.tensor([0.1, 0.5]), ember.zeros(2, dtype=ember.int32),
        ...                                        1, -8, 7)
        tensor([[0.3000, 0.5000],
                [0.7000, 1.0000]])
    """
    op = "fake_quantize_per_channel_affine_cachemask"
    _no_grad_qparam(op, "scale", scale)
    _no_grad_qparam(op, "zero_point", zero_point)
    if scale.dtype not in (_dt.float32, _dt.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_tname(scale.dtype)}")
    if zero_point.dtype not in (_dt.int32, _dt.float32, _dt.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {_tname(zero_point.dtype)}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.shape[wrap_dim(axis, input.ndim)]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    _check_range(quant_min, quant_max)
    float_zp = zero_point.dtype.is_floating_point
    if not float_zp and zero_point.numel() and not (quant_min <= int(zero_point.min()) and
                                                    int(zero_point.max()) <= quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    if not 0 <= axis <= input.ndim:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    bshape = (-1,) + (1,) * (input.ndim - axis - 1)
    return FakeQuantize.apply(input, scale.reshape(bshape), zero_point.reshape(bshape), quant_min, quant_max,
                              kernel="fake_quantize_channel_cachemask_cpu_type_handling", per_channel=True,
                              float_zero_point=float_zp)
