"""Complex numbers: real and imaginary parts as views, view_as_real/view_as_complex, complex, polar, angle.

Gradients follow torch's convention for complex autograd: a gradient is the conjugate Wirtinger derivative of a
real-valued loss, ``dL/d(re z) + 1j * dL/d(im z)``. ember conjugates eagerly (``conj()`` copies), so a tensor is
never a lazy conjugate: ``is_conj()`` is False and ``resolve_conj()`` returns the tensor itself.
"""
import math

import numpy as np

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "angle", "conj_physical",
           "resolve_conj", "resolve_neg", "is_conj", "is_neg"]
from .. import _dtype
from .._autocast import cpu_float32_inputs
from .._creation import zeros_like
from .._tensor import Tensor, inplace, register, write_out
from ..autograd.function import Function
from ._strided import _Memory
from .index import where
from .unary import conj

_REAL_OF = {_dtype.complex64: _dtype.float32, _dtype.complex128: _dtype.float64}
_COMPLEX_OF = {_dtype.float32: _dtype.complex64, _dtype.float64: _dtype.complex128}


def _reinterpret(xp, a, dtype, shape, strides):
    """A view of ``a``'s memory, from its first element, as ``dtype`` with ``shape`` and byte ``strides``."""
    if xp is not np:
        return xp.ndarray(shape, dtype, a.data, strides)
    owner = a
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    face = {"shape": tuple(shape), "strides": tuple(strides), "typestr": np.dtype(dtype).str, "version": 3,
            "data": (a.__array_interface__["data"][0], not a.flags.writeable)}
    return np.asarray(_Memory(face, owner))


def _parts_error(what):
    # Reached only when an in-place write through the view is replayed on a bool mask of the base's shape, which
    # cannot say which half of each complex element was written.
    raise RuntimeError(f"ember: an in-place write through {what} of a tensor that requires grad is not supported; "
                       "write into a clone, or build the result with ember.complex(real, imag)")


# -- real and imaginary parts -----------------------------------------------------------------------------------------
class Real(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            _parts_error(".real")
        return x.real

    @staticmethod
    def backward(ctx, grad):
        return Complex.apply(grad, zeros_like(grad))


class Imag(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            _parts_error(".imag")
        return x.imag

    @staticmethod
    def backward(ctx, grad):
        return Complex.apply(zeros_like(grad), grad)


def real(input):
    """The real part of ``input``: a view sharing its memory (``input`` itself for real dtypes).

    Example::

        >>> x = ember.tensor([1 + 2j, 3 - 1j])
        >>> x.real
        tensor([1., 3.])
    """
    return Real.apply(input) if input.dtype.is_complex else input


def imag(input):
    """The imaginary part of a complex ``input``: a view sharing its memory.

    Example::

        >>> ember.imag(ember.tensor([1 + 2j, 3 - 1j]))
        tensor([ 2., -1.])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def _setter(get):
    def set_part(self, value):
        get(self).copy_(value)
    return set_part


# -- reinterpreting memory --------------------------------------------------------------------------------------------
class ViewAsReal(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            _parts_error("view_as_real")
        half = x.itemsize // 2
        return _reinterpret(ctx.xp, x, x.real.dtype, x.shape + (2,), x.strides + (half,))

    @staticmethod
    def backward(ctx, grad):
        return ViewAsComplex.apply(grad.contiguous())


class ViewAsComplex(Function):
    is_view = True

    @staticmethod
    def forward(ctx, x):
        return _reinterpret(ctx.xp, x, np.result_type(x.dtype, np.complex64), x.shape[:-1], x.strides[:-1])

    @staticmethod
    def backward(ctx, grad):
        return ViewAsReal.apply(grad)


def view_as_real(input):
    """A real view of complex ``input`` with a last dimension of size 2 holding the real and imaginary parts.

    Shape:
        input ``(*)`` complex; output ``(*, 2)`` of the matching float dtype, sharing memory with ``input``.

    Example::

        >>> ember.view_as_real(ember.tensor([1 + 2j, 3 - 1j]))
        tensor([[ 1.,  2.],
                [ 3., -1.]])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


@cpu_float32_inputs  # on CPU autocast's float32 list
def view_as_complex(input):
    """A complex view of ``input``, whose last dimension (of size 2, stride 1) holds real and imaginary parts.

    Shape:
        input ``(*, 2)`` float32 or float64; output ``(*)`` complex64 or complex128, sharing memory with ``input``.

    Example::

        >>> ember.view_as_complex(ember.tensor([[1., 2.], [3., -1.]]))
        tensor([1.+2.j, 3.-1.j])
    """
    d = input.dtype
    if d not in _COMPLEX_OF and d is not _dtype.float16:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_dtype.scalar_name(d)}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if d is _dtype.float16:
        raise TypeError("view_as_complex: ember has no complex32 (ComplexHalf) dtype; convert to float32 first")
    return ViewAsComplex.apply(input)


# -- building complex numbers -----------------------------------------------------------------------------------------
class Complex(Function):
    @staticmethod
    def forward(ctx, re, im):
        out = ctx.xp.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
        out.real, out.imag = re, im  # not re + 1j * im, which makes inf * 1j a NaN
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.real, grad.imag


def _check_parts(op, a, b, names):
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        bad, name = (b, names[1]) if isinstance(a, Tensor) else (a, names[0])
        raise TypeError(f"{op}(): argument '{name}' (position {names.index(name) + 1}) must be Tensor, not "
                        f"{type(bad).__name__}")
    if a.dtype not in _COMPLEX_OF and a.dtype is not _dtype.float16 or b.dtype not in _COMPLEX_OF and \
            b.dtype is not _dtype.float16:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_dtype.scalar_name(a.dtype)} and {_dtype.scalar_name(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_dtype.scalar_name(a.dtype)} but got scalar type "
                           f"{_dtype.scalar_name(b.dtype)} for second argument")
    if a.dtype is _dtype.float16:
        raise TypeError(f"{op}: ember has no complex32 (ComplexHalf) dtype; use float32 or float64 inputs")


def complex(real, imag, *, out=None):
    """The complex tensor ``real + 1j * imag`` (broadcast; both float32 or both float64).

    Example::

        >>> ember.complex(ember.tensor([1., 3.]), ember.tensor([2., -1.]))
        tensor([1.+2.j, 3.-1.j])
    """
    _check_parts("complex", real, imag, ("real", "imag"))
    return write_out(Complex.apply(real, imag), out)


class Polar(Function):
    @staticmethod
    def forward(ctx, r, theta):
        xp = ctx.xp
        out = xp.empty(np.broadcast_shapes(r.shape, theta.shape), np.result_type(r.dtype, np.complex64))
        out.real, out.imag = r * xp.cos(theta), r * xp.sin(theta)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        g = grad.conj()
        # torch's formula: d/d abs through sgn(z), so zero at abs == 0 and sign-flipped for abs < 0
        return (g * z.sgn()).real, (g * z * 1j).real


@cpu_float32_inputs  # on CPU autocast's float32 list
def polar(abs, angle, *, out=None):
    """The complex tensor with magnitude ``abs`` and phase ``angle``: ``abs * (cos(angle) + 1j * sin(angle))``.

    Example::

        >>> ember.polar(ember.tensor([2.]), ember.tensor([0.]))
        tensor([2.+0.j])
    """
    _check_parts("polar", abs, angle, ("abs", "angle"))
    return write_out(Polar.apply(abs, angle), out)


class Angle(Function):
    half_in_float32 = True
    int_to_float = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xp = ctx.xp
        if x.dtype.kind == "c":
            return xp.angle(x)
        return xp.where(x < 0, xp.asarray(math.pi, x.dtype), xp.where(x != x, x, xp.zeros((), x.dtype)))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if not x.dtype.is_complex:
            return zeros_like(x)
        # d angle = Im(dz / z): torch's grad * z / |z|^2 * 1j, zero at z = 0
        r2 = x.real * x.real + x.imag * x.imag
        return where(r2 == 0, zeros_like(x), grad * x / r2 * 1j)


def angle(input, *, out=None):
    """The phase of each element in radians (``atan2(imag, real)``); pi for negative reals, 0 otherwise.

    Example::

        >>> ember.angle(ember.tensor([1j, -1.]))
        tensor([1.5708, 3.1416])
    """
    return write_out(Angle.apply(input), out)


# -- conjugation (eager: no lazy conjugate or negative bits) ----------------------------------------------------------
def conj_physical(input, *, out=None):
    """The complex conjugate in new memory (``input`` itself for real dtypes)."""
    return write_out(conj(input), out)


def resolve_conj(input):
    """``input`` itself: ember's ``conj()`` already materializes the conjugate."""
    return input


def resolve_neg(input):
    """``input`` itself: ember never holds a lazy negation."""
    return input


def is_conj(input):
    """False: ember's ``conj()`` materializes, so no tensor carries a lazy conjugate bit."""
    return False


def is_neg(input):
    """False: ember never holds a lazy negation."""
    return False


def _cfloat(self):
    return self.to(_dtype.complex64)


def _cdouble(self):
    return self.to(_dtype.complex128)


register(angle, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg,
         conj_physical_=inplace(conj_physical), cfloat=_cfloat, cdouble=_cdouble,
         real=property(real, _setter(real)), imag=property(imag, _setter(imag)))
