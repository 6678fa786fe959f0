"""Elementwise ops of several inputs: clamp, lerp, addcmul, addcdiv, and nan_to_num."""

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "nan_to_num"]
from .. import _dtype
from .._creation import check_fill
from .._kernels.elementwise import binary as ufunc2
from .._tensor import Tensor, inplace, register, write_out
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .binary import _HALF, _where, add, div, mul, recover, shape_error
from .index import _TYPE_NAMES
from .reduce import _quiet


class Clamp(Function):
    promote = True
    half_in_float32 = True
    no_complex = NotImplementedError, "clamp is not supported for complex types"

    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = ctx.xp
        ctx.save_for_backward(x, lo, hi)
        # maximum-then-minimum: NaN in x or a bound propagates, and min > max gives max, as in torch
        y = x if lo is None else ufunc2(xp.maximum, x, lo)
        return y if hi is None else ufunc2(xp.minimum, y, hi)

    @staticmethod
    def backward(ctx, grad):
        x, lo, hi = ctx.saved_tensors
        need = ctx.needs_input_grad
        if lo is None:
            return _where(x <= hi, grad, 0.0), None, _where(x > hi, grad, 0.0) if need[2] else None
        if hi is None:
            return _where(x >= lo, grad, 0.0), _where(x < lo, grad, 0.0) if need[1] else None, None
        # the input's gradient flows where it is inside [min, max]; a bound's where it is the result
        return (_where((x >= lo) & (x <= hi), grad, 0.0) if need[0] else None,
                _where((x < lo) & (lo < hi), grad, 0.0) if need[1] else None,
                _where((x > hi) | (hi < lo), grad, 0.0) if need[2] else None)


def clamp(input, min=None, max=None, *, out=None):
    """Clamps each element into ``[min, max]`` (bounds are numbers or tensors; either may be None).

    Example::

        >>> ember.clamp(ember.tensor([-2.0, 0.5, 3.0]), min=0, max=1)
        tensor([0.0000, 0.5000, 1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # a 0-d tensor stands for a number beside a number bound
        min, max = (b.item() if isinstance(b, Tensor) and b.ndim == 0 and not b.requires_grad else b
                    for b in (min, max))
    if getattr(input, "dtype", None) is _dtype.bool and not isinstance(min, Tensor) and \
            not isinstance(max, Tensor) and _dtype.result_type(input, min, max) is _dtype.bool:
        name = "clamp" if min is not None and max is not None else "clamp_min" if max is None else "clamp_max"
        raise NotImplementedError(f"\"{name}_scalar_cpu\" not implemented for 'Bool'")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, {type(min).__name__}, "
                        f"{type(max).__name__}): min and max must both be Tensors or both be Numbers")
    if not isinstance(min, Tensor) and not isinstance(max, Tensor) and isinstance(input, Tensor):
        dt = _dtype.result_type(input, min, max)
        for b in (min, max):
            if b is not None:
                check_fill(b, dt)  # a number bound must fit the computation's dtype
    try:
        r = Clamp.apply(input, min, max)
    except (ValueError, OverflowError) as e:
        r = recover(e, Clamp, input, min, max)
    return r if out is None else write_out(r, out)


clip = clamp


def clamp_min(input, min, *, out=None):
    """``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input, max, *, out=None):
    """``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


class Lerp(Function):
    promote = True
    half_in_float32 = True
    holomorphic = True

    @staticmethod
    def forward(ctx, a, b, w):
        xp = ctx.xp
        both = ctx.needs_input_grad[2]  # the ends only for the weight's gradient, as torch
        ctx.save_for_backward(a if both else None, b if both else None, w)
        d = b - a
        # torch's two-sided formula: exact at both ends (w = 0 gives a, w = 1 gives b)
        if not hasattr(w, "dtype"):
            return a + w * d if abs(w) < 0.5 else b - d * (1 - w)
        return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))

    @staticmethod
    def backward(ctx, grad):
        a, b, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * (1 - w) if need[0] else None, grad * w if need[1] else None,
                grad * (b - a) if need[2] else None)


def lerp(input, end, weight, *, out=None):
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or a tensor."""
    dt = getattr(input, "dtype", None)
    for name, t in (("end", end), ("weight", weight if getattr(weight, "ndim", 0) else None)):
        if dt is not None and getattr(t, "dtype", dt) is not dt:  # no promotion: a 0-d weight acts as a number
            raise RuntimeError(f"expected dtype {_TYPE_NAMES.get(dt.name, dt.name)} for `{name}` but got dtype "
                               f"{_TYPE_NAMES.get(t.dtype.name, t.dtype.name)}")
    if dt is not None and not (dt.is_floating_point or dt.is_complex) and getattr(end, "dtype", None) is dt and \
            getattr(weight, "dtype", dt) is dt:  # torch has no integer or bool lerp kernel
        raise NotImplementedError(f"\"lerp_kernel_{'tensor' if hasattr(weight, 'dtype') else 'scalar'}\" not "
                                  f"implemented for '{_dtype.scalar_name(dt)}'")
    try:
        r = Lerp.apply(input, end, weight)
    except (ValueError, OverflowError) as e:
        r = recover(e, Lerp, input, end, weight)
    return r if out is None else write_out(r, out)


def _tensors(name, tensor1, tensor2):
    for pos, (arg, x) in enumerate((("tensor1", tensor1), ("tensor2", tensor2)), 2):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _float32(*tensors):
    return (t.float() if getattr(t, "dtype", None) in _HALF else t for t in tensors)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    _tensors("addcmul", tensor1, tensor2)
    dt = _dtype.result_type(input, tensor1, tensor2)
    if dt is _dtype.bool:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if dt in _HALF:  # in float32 with a fused multiply-add (exact in float64), rounded once, as torch
        a, t1, t2 = _float32(input, tensor1, tensor2)
        r = add(a.double(), mul(mul(t1, value).double(), t2)).float().to(dt)
        return r if out is None else write_out(r, out)
    if value != 1:  # the multiplier takes no part in type promotion
        if not (dt.is_floating_point or dt.is_complex):
            value = int(value)
        tensor1 = mul(tensor1 if tensor1.dtype is dt else tensor1.to(dt), value)
    try:
        r = add(input, mul(tensor1, tensor2))
    except RuntimeError as e:  # report the shapes in torch's order
        raise shape_error(e, input, tensor1, tensor2) from None
    return r if out is None else write_out(r, out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (floating point only)."""
    _tensors("addcdiv", tensor1, tensor2)
    rt = _dtype.result_type(tensor1, tensor2)
    if not (rt.is_floating_point or rt.is_complex):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    dt = _dtype.result_type(input, tensor1, tensor2)
    if dt in _HALF:  # computed in float32 and rounded once, as torch
        r = addcdiv(*_float32(input, tensor1, tensor2), value=value).to(dt)
        return r if out is None else write_out(r, out)
    try:
        r = add(input, div(tensor1 if value == 1 else mul(tensor1, value), tensor2))
    except RuntimeError as e:
        raise shape_error(e, input, tensor1, tensor2) from None
    return r if out is None else write_out(r, out)


class NanToNum(Function):
    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        xp = ctx.xp
        dt = x.dtype
        if dt.kind not in "fVc":
            return x.copy()
        ctx.save_for_backward(x)
        info = _dtype.finfo(_dtype.from_numpy_dtype(dt))  # the limits of the tensor's own dtype
        work = x.astype("float32") if dt.kind == "V" else x  # NumPy skips bfloat16 (not an inexact type)
        with _quiet(xp):  # a replacement beyond the dtype's range rounds to inf, as torch's
            y = xp.nan_to_num(work, nan=nan, posinf=info.max if posinf is None else posinf,
                              neginf=info.min if neginf is None else neginf)
        return y.astype(dt) if y.dtype != dt else y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.isfinite()


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces NaN with ``nan``, +inf with ``posinf`` and -inf with ``neginf`` (default: the dtype's largest
    and smallest finite values; for complex inputs, of the real and imaginary parts each)."""
    if input.dtype.is_complex and input.requires_grad and grad_enabled():
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs with complex dtype.")
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {_dtype.scalar_name(out.dtype)} should be same as input: "
                           f"{_dtype.scalar_name(input.dtype)}")
    r = NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)
    return r if out is None else write_out(r, out)


_METHODS = {"clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max, "lerp": lerp,
            "addcmul": addcmul, "addcdiv": addcdiv, "nan_to_num": nan_to_num}
register(**_METHODS, **{name + "_": inplace(fn) for name, fn in _METHODS.items()})
