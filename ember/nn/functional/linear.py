"""Affine maps: linear (one fused op, the hot path of every MLP) and bilinear."""
import numpy as np

from ... import _dtype
from ..._autocast import input_precision, lower_precision_inputs
from ..._kernels import blas as _blas
from ..._ops.matmul import matmul
from ..._ops.reduce import sum as _sum
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import grad_enabled

__all__ = ["linear", "bilinear"]

_CPP = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


class Linear(Function):
    """``x @ w.T + b`` in one node; x is (*, in), w (out, in), b (out,) or None."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, w, b):
        needs = ctx.needs_input_grad  # each only for the other's gradient, as torch
        ctx.save_for_backward(x if needs[1] else None, w if needs[0] else None)
        if x.ndim == 1:
            y = w @ x
        elif ctx.xp is np:  # one GEMM over all leading dimensions
            y = _blas.matmul(x.reshape(_prod(x.shape[:-1]), x.shape[-1]), w.T).reshape(x.shape[:-1] + (w.shape[0],))
        else:
            y = (x.reshape(_prod(x.shape[:-1]), x.shape[-1]) @ w.T).reshape(x.shape[:-1] + (w.shape[0],))
        if b is not None:
            y += b
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        if grad.ndim > 1 and not grad_enabled() and grad.device.type == "cpu" and grad.dtype.is_floating_point:
            return _backward_arrays(ctx, grad, x, w)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = matmul(grad, w)
        if ctx.needs_input_grad[1]:
            if grad.ndim == 1:
                gw = grad.unsqueeze(1) * x
            else:
                n = _prod(x.shape[:-1])
                gw = matmul(grad.reshape(n, grad.shape[-1]).mT, x.reshape(n, x.shape[-1]))
        if ctx.needs_input_grad[2]:
            gb = _sum(grad, tuple(range(grad.ndim - 1))) if grad.ndim > 1 else grad
        return gx, gw, gb


def _backward_arrays(ctx, grad, x, w):
    """The backward on raw arrays (no graph to record): two GEMMs, threaded as ``_blas.matmul`` decides."""
    need = ctx.needs_input_grad
    work = np.result_type(grad._data.dtype, np.float32)  # half gradients computed in float32
    n, m = _prod(grad.shape[:-1]), grad.shape[-1]
    g = grad._data.astype(work, copy=False).reshape(n, m)
    gx = _blas.matmul(g, w._data.astype(work, copy=False)).reshape(grad.shape[:-1] + w.shape[1:]) if need[0] else None
    gw = _blas.matmul(g.T, x._data.astype(work, copy=False).reshape(n, x.shape[-1])) if need[1] else None
    gb = np.add.reduce(g, axis=0) if need[2] else None
    wrap = lambda a: None if a is None else Tensor._make(a.astype(grad.dtype.np, copy=False), grad.dtype, grad.device)
    return wrap(gx), wrap(gw), wrap(gb)


def _name(d):
    return _CPP.get(d.name, d.name)


@lower_precision_inputs
def linear(input, weight, bias=None):
    """Applies ``y = x A^T + b``.

    Shape:
        - Input: :math:`(*, in\\_features)`; weight: :math:`(out\\_features, in\\_features)` (or
          :math:`(in\\_features)`); bias: :math:`(out\\_features)` or :math:`()`
        - Output: :math:`(*, out\\_features)`

    Example::

        >>> F.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
        ember.Size([2, 4])
    """
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
                           f"{weight.ndim}D")
    if weight.ndim != 2 or input.dtype is not weight.dtype or (bias is not None and (
            bias.dtype is not input.dtype or bias.ndim > 1 or bias.ndim == 1 and bias.shape[0] != weight.shape[0])):
        return _general(input, weight, bias)
    if input.shape[-1] != weight.shape[1]:
        rows = _prod(input.shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    if not input.dtype.is_floating_point:  # complex gradients conjugate the other operand: matmul's
        return _general(input, weight, bias)
    return Linear.apply(input, weight, bias)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _general(input, weight, bias):
    """The unfused path with torch's errors: 1-D weights, mismatched dtypes, broadcast biases, integer and complex
    inputs."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_name(input.dtype)} != "
                           f"{_name(weight.dtype)}")
    if weight.ndim == 1 and input.ndim == 2 and bias is not None:  # torch's addmm path
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    y = matmul(input, weight.t() if weight.ndim == 2 else weight)
    if bias is None:
        return y
    if bias.dtype is not y.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dtype.scalar_name(bias.dtype)} and "
                           f"{_dtype.scalar_name(y.dtype)}")
    try:
        bias = bias.expand(y.shape)
    except RuntimeError as e:
        raise RuntimeError(str(e)) from None
    return y + bias


@input_precision
def bilinear(input1, input2, weight, bias=None):
    """Applies ``y = x_1^T A x_2 + b`` per output feature.

    Shape:
        - input1: :math:`(*, in1)`, input2: :math:`(*, in2)`, weight: :math:`(out, in1, in2)`, bias: :math:`(out)`
        - Output: :math:`(*, out)`

    Example::

        >>> F.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(5, 3, 4)).shape
        ember.Size([2, 5])
    """
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.ndim}D")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {in2}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.ndim else bias.numel()} but expected {out}")
    lead = input1.shape[:-1]
    n = _prod(lead)
    x1, x2 = input1.reshape(n, in1), input2.reshape(n, in2)
    # (N, in1) @ (in1, out * in2) -> (N, out, in2), then contract in2 with x2
    t = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(n, out, in2)
    y = matmul(t, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out,))
