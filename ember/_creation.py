"""Tensor creation: tensor/as_tensor/from_numpy, zeros/ones/full/empty and their *_like, arange, linspace, eye."""
import math
import numbers

import numpy as np

from . import _dtype
from ._device import CPU, array_module, device_of_array, normalize
from ._tensor import Tensor


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"size must be a sequence of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _wrap(arr, dtype, device, requires_grad):
    dev = normalize(device)
    if dev is not CPU:
        arr = array_module(dev).asarray(arr)
    t = Tensor._make(arr, dtype, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(arr, from_python):
    if from_python:
        k = arr.dtype.kind
        if k == "f":
            return _dtype.get_default_dtype()
        if k in "iu":
            return _dtype.int64
        if k == "c":
            return _dtype.complex128 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.complex64
    return _dtype.from_numpy_dtype(arr.dtype)


def _nested_to_numpy(data):
    """Python data to an array; Tensors inside lists contribute their values."""
    if isinstance(data, (list, tuple)) and data and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    try:
        return np.asarray(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal length lists: {e}") from None


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Builds a new tensor from data (a number, a nested list, a NumPy array or a Tensor), copying it.

    Example::

        >>> ember.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
    """
    if isinstance(data, Tensor):
        src = data.detach()
        arr = src._data.copy()
        dt = _dtype.to_dtype(dtype) if dtype is not None else src.dtype
        if dt.np != arr.dtype:
            arr = arr.astype(dt.np)
        t = Tensor._make(arr, dt, src.device)
        t = t.to(device) if device is not None else t
        return t.requires_grad_(requires_grad) if requires_grad else t
    is_array = isinstance(data, np.ndarray) or hasattr(data, "__cuda_array_interface__")
    if hasattr(data, "__cuda_array_interface__"):
        arr = data.copy()
        dev = device_of_array(data) if device is None else device
        dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.from_numpy_dtype(arr.dtype)
        return _wrap(arr.astype(dt.np, copy=False), dt, dev, requires_grad)
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    arr = np.array(data) if is_array else _nested_to_numpy(data)
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(
        arr, not is_array and not isinstance(data, np.generic))
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    return _wrap(arr, dt, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with ``data`` when dtype and device already match."""
    if isinstance(data, Tensor):
        return data.to(dtype=_dtype.to_dtype(dtype) if dtype is not None else None, device=device)
    if isinstance(data, np.ndarray) and (device is None or normalize(device) is CPU):
        src = from_numpy(data)
        return src if dtype is None else src.to(_dtype.to_dtype(dtype))
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A CPU tensor sharing memory with the NumPy array ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return Tensor._make(ndarray, _dtype.from_numpy_dtype(ndarray.dtype), CPU)


def _creation_dtype(dtype, fill=None):
    if dtype is not None:
        return _dtype.to_dtype(dtype)
    if fill is None:
        return _dtype.get_default_dtype()
    return _dtype._scalar_dtype(fill.item() if isinstance(fill, Tensor) else fill)


def _filled(fill, size, dtype, device, requires_grad):
    dt = _creation_dtype(dtype)
    dev = normalize(device)
    xp = array_module(dev)
    shape = _size(size)
    if fill is None:
        arr = xp.empty(shape, dt.np)
    elif fill == 0:
        arr = xp.zeros(shape, dt.np)
    else:
        arr = xp.full(shape, fill, dt.np)
    t = Tensor._make(arr, dt, dev)
    return t.requires_grad_(True) if requires_grad else t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of zeros of the given size."""
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of ones of the given size."""
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """An uninitialised tensor of the given size."""
    return _filled(None, size, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value (bool, int64 or float)."""
    dt = _creation_dtype(dtype, fill_value)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    t = _filled(None, _size((size,) if isinstance(size, int) else size), dt, device, False)
    t._data.fill(fill_value)
    return t.requires_grad_(True) if requires_grad else t


def _like(input, dtype, device):
    return (input.shape, _dtype.to_dtype(dtype) if dtype is not None else input.dtype,
            input.device if device is None else device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    shape, dt, dev = _like(input, dtype, device)
    return _filled(0, shape, dt, dev, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    shape, dt, dev = _like(input, dtype, device)
    return _filled(1, shape, dt, dev, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    shape, dt, dev = _like(input, dtype, device)
    return _filled(None, shape, dt, dev, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    shape, dt, dev = _like(input, dtype, device)
    return full(shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) spaced by ``step``.

    Example::

        >>> ember.arange(5)
        tensor([0, 1, 2, 3, 4])
    """
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dt = _dtype.get_default_dtype() if is_float else _dtype.int64
    else:
        dt = _dtype.to_dtype(dtype)
    n = max(0, math.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if dt.is_floating_point else (
        np.arange(n, dtype=np.int64) * step + start)
    return _wrap(arr.astype(dt.np), dt, device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive."""
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    i = np.arange(steps, dtype=np.float64)
    if steps > 1:
        step = (end - start) / (steps - 1)
        half = steps // 2
        arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    else:
        arr = np.full(steps, start, np.float64)
    if not dt.is_floating_point:
        arr = np.trunc(arr)
    return _wrap(arr.astype(dt.np), dt, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` values spaced evenly on a log scale from ``base**start`` to ``base**end``."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    exps = linspace(start, end, steps, dtype=_dtype.float64)._data
    return _wrap(np.power(float(base), exps).astype(dt.np), dt, device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return _wrap(np.eye(n, n if m is None else m, dtype=dt.np), dt, device, requires_grad)
