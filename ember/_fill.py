"""In-place writes as Tensor methods: fill_, zero_, copy_, fill_diagonal_, and the graph nodes they record."""
import warnings

import numpy as np

from . import _dtype
from ._creation import _number, cast_scalar, check_fill
from ._storage import _address, _owner
from ._tensor import Tensor, check_writable, register, write_inplace
from .autograd.function import Function
from .autograd.grad_mode import grad_enabled


def assign(dst, value):
    """``dst[...] = value`` with torch's casts: wrapping overflow, and complex to real keeping the real part (without
    NumPy's warnings, and without a warnings filter, which would reset Python's once-per-location registry)."""
    if dst.dtype.kind != "c" and (isinstance(value, complex) or getattr(value, "dtype", np.dtype(bool)).kind == "c"):
        value = value.real
    with np.errstate(invalid="ignore", over="ignore"):
        dst[...] = value


class Overwrite(Function):
    """``x`` replaced by ``value`` broadcast and cast to ``x``'s shape and dtype: the gradient goes to ``value``
    and none to the old ``x``."""

    @staticmethod
    def forward(ctx, x, value):
        out = ctx.xp.empty_like(x)
        assign(out, value)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, grad


_NODES = {}


def _node(opname):
    """The Overwrite subclass named for ``opname`` (its grad_fn prints as ``CopyBackward0``, ``FillBackward0``...)."""
    cls = _NODES.get(opname)
    if cls is None:
        cls = _NODES[opname] = type(opname.title().replace("_", ""), (Overwrite,), {})
    return cls


def write_values(self, value, opname):
    """Writes ``value`` (a number or a Tensor of ``self``'s device) into ``self`` in place, recording the write in
    the graph when ``self`` or ``value`` requires grad."""
    if grad_enabled() and (self._requires_grad or isinstance(value, Tensor) and value._requires_grad):
        node = _node(opname)

        def write(x, v):
            return node.apply(x, v)
        write.__name__ = opname
        return write_inplace(self, write, value)
    dst = self._data
    if not isinstance(value, Tensor) and 0 in getattr(dst, "strides", ()) and not getattr(dst.flags, "writeable", True):
        dst = _expanded_alias(dst)  # one value written to every element: the shared memory is no obstacle
    if dst is not self._data:
        assign(dst, value)
    elif not check_writable(self, f"{opname}_()", "more than one element of the written-to tensor refers to a single "
                            "memory location"):
        assign(self._data, value._data if isinstance(value, Tensor) else value)
    self._vc[0] += 1
    return self


def _expanded_alias(a):
    """A writable array over the memory of the read-only NumPy array ``a`` (an expanded array, whose elements may
    share memory, or a view of one), or ``a`` where that memory is not writable."""
    owner = _owner(a)
    if not owner.flags.writeable or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return a
    return np.ndarray(a.shape, a.dtype, buffer=owner.ravel(order="K"), offset=_address(a) - _address(owner),
                      strides=a.strides)


def _dense(a):
    """Whether the elements of ``a`` tile one block of memory, each once (torch's non-overlapping and dense)."""
    step = a.itemsize
    for stride, n in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= n
    return True


def _check_partial_overlap(dst, src):
    """torch's error for a copy whose source and destination, both dense, share some but not all their memory."""
    a, b = dst._data, src._data
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.size == 0 or b.size == 0 or \
            _owner(a) is not _owner(b) or not (_dense(a) and _dense(b)):
        return
    a0, b0 = _address(a), _address(b)
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if (a0, a1) == (b0, b1) and a.strides == b.strides or not (a0 < b1 and b0 < a1):
        return
    raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                       "single memory location. Please clone() the tensor before performing the operation.")


def fill_(self, value):
    """Fills this tensor with ``value`` (a number or a 0-d tensor) in place."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        if value.device is not self.device:
            value = value.to(self.device)
    else:
        value = _number(value, "fill_")
        check_fill(value, self.dtype)
        value = cast_scalar(value, self.dtype)
    return write_values(self, value, "fill")


def fill(input, value):
    """A copy of ``input`` filled with ``value`` (a number or a 0-d tensor, which gets the gradient)."""
    return fill_(input.clone(), value)


def zero_(self):
    """Fills this tensor with zeros in place."""
    return write_values(self, 0, "zero")


def _broadcastable(src, dst):
    if len(src) > len(dst):
        return False
    return all(s == 1 or s == d for s, d in zip(reversed(src), reversed(dst)))


def copy_(self, src, non_blocking=False):
    """Copies ``src`` into this tensor in place, broadcasting it and casting its dtype and device."""
    if not isinstance(src, Tensor):
        kind = type(src)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {name}")
    if not _broadcastable(src.shape, self.shape):
        n = max(len(src.shape), len(self.shape))
        a, b = (1,) * (n - len(self.shape)) + tuple(self.shape), (1,) * (n - len(src.shape)) + tuple(src.shape)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                   f"non-singleton dimension {i}")
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{[max(x, y) for x, y in zip(a, b)]}")
    if src.dtype.is_complex and not self.dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
    if src.device is not self.device:
        src = src.to(self.device)
    if src.dtype is not self.dtype and (src.dtype in _dtype.FLOAT8 or self.dtype in _dtype.FLOAT8):
        src = src.to(self.dtype)  # torch's float8 rounding, not NumPy's
    if self._base is not None or src._base is not None:  # only views share memory with another tensor
        _check_partial_overlap(self, src)
    return write_values(self, src, "copy")


class FillDiagonal(Function):
    """``x`` with its main diagonal (all dims equal; a tall matrix's restarts below with ``wrap``) set to ``value``."""

    @staticmethod
    def forward(ctx, x, value, wrap):
        ctx.wrap = wrap
        out = x.copy()
        ctx.xp.fill_diagonal(out, value, wrap=wrap)
        return out

    @staticmethod
    def backward(ctx, grad):
        return FillDiagonal.apply(grad, value=0, wrap=ctx.wrap)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal of this tensor (2-D, or all dimensions of equal length) with ``fill_value`` in place;
    ``wrap``: in a tall matrix, the diagonal restarts every ``ncols + 1`` rows.

    Example::

        >>> ember.zeros(2, 3).fill_diagonal_(1.)
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) > 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    value = _number(fill_value, "fill_diagonal_")
    if not isinstance(fill_value, Tensor):
        check_fill(value, self.dtype)
    value = cast_scalar(value, self.dtype)
    def fill_diagonal(x):  # named for write_inplace's messages
        return FillDiagonal.apply(x, value=value, wrap=bool(wrap))
    return write_inplace(self, fill_diagonal)


register(fill_=fill_, zero_=zero_, copy_=copy_, fill_diagonal_=fill_diagonal_)
