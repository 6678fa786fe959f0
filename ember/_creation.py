"""Tensor creation: tensor/as_tensor/from_numpy, zeros/ones/full/empty and their *_like, arange, linspace, eye."""
import array
import contextlib
import math
import numbers
import warnings

import numpy as np

from . import _dtype
from ._device import CPU, META, array_module, device_of_array, is_meta_array, meta_array, normalize
from ._device import device as _device_cls
from ._dlpack import from_dlpack
from ._ops.memory_format import as_format, format_strides, like_strides, preserve_format
from ._ops.memory_format import empty_strided as _empty_strided
from ._settings import warn_once
from ._tensor import Tensor, write_out

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "scalar_tensor", "zeros", "ones", "empty",
           "full", "zeros_like", "ones_like", "empty_like", "full_like", "empty_strided", "arange", "range", "linspace",
           "logspace", "eye", "triu_indices", "tril_indices", "frombuffer", "empty_permuted", "get_default_device",
           "set_default_device"]

_range = range
_PY_SCALARS = (bool, int, float, complex)


# -- the default device ------------------------------------------------------------------------------------------
_default_device = None  # None: the CPU, and as_tensor/asarray keep a tensor's device


def get_default_device():
    """The device factory functions create tensors on when given no ``device`` (initially the CPU)."""
    dev = _default_device
    return CPU if dev is None else normalize(dev) if dev.type in ("cpu", "cuda") else dev


def set_default_device(device):
    """Makes factory functions (``zeros``, ``tensor``, ``arange``, ``rand``...) create tensors on ``device`` when
    given none; ``None`` restores the CPU. ``*_like`` functions, ``from_numpy`` and ``frombuffer`` are not affected.

    Example::

        >>> ember.set_default_device('cpu'); ember.zeros(1).device
        device(type='cpu')
        >>> ember.set_default_device(None)
    """
    global _default_device
    _default_device = None if device is None else _device_cls(device)


def _target(device):
    """A factory's device: ``device``, else the default device."""
    return normalize(_default_device if device is None else device)


# -- sizes, dtypes, devices ------------------------------------------------------------------------------------
def _size(args, op="size", size=None, check=True):
    """The shape from ``f(2, 3)``, ``f((2, 3))``, ``f([])``, ``f(torch.Size(...))`` or ``f(size=...)``."""
    if size is not None:
        if args:
            raise TypeError(f"{op}() got multiple values for argument 'size'")
        args = (size,)
    if len(args) > 1 and any(isinstance(a, (tuple, list)) for a in args):
        raise TypeError(f"{op}() takes 1 positional argument but {len(args)} were given")
    if len(args) == 1 and not isinstance(args[0], (tuple, list)) and not _is_int(args[0]):
        raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not {type(args[0]).__name__}")
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    shape = []
    for i, s in enumerate(args):
        if not _is_int(s):
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(s).__name__}\"")
        shape.append(int(s))
    if check and any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {shape}")
    return tuple(shape)


def _factory_size(args, op, kw, check=True):
    """A factory's size (``_size``); torch's TypeError when none is given at all."""
    if not args and "size" not in kw:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    return _size(args, op, check=check, **kw)


def _is_int(s):
    if isinstance(s, Tensor):
        return s.numel() == 1 and not (s.dtype.is_floating_point or s.dtype.is_complex or s.dtype is _dtype.bool)
    if isinstance(s, np.ndarray):  # a 0-d integer array is an int
        return s.ndim == 0 and s.dtype.kind in "iu"
    return isinstance(s, numbers.Integral) and not isinstance(s, bool)


def _dtype_arg(op, dtype):
    """A factory's ``dtype`` that is not an ember dtype: torch takes the Python types float, int, bool and complex
    (and ember a torch dtype), and refuses NumPy dtypes and names."""
    if dtype is float or dtype is int or dtype is bool or dtype is complex or type(dtype).__name__ == "dtype" and str(dtype).startswith("torch."):
        return _dtype.to_dtype(dtype)
    raise TypeError(f"{op}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


def _factory(op, dtype, device, out, default=None):
    """The dtype and device a factory creates: explicit ones, else ``out``'s, else the defaults."""
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        dtype = _dtype_arg(op, dtype)
    if out is not None:
        if dtype is not None and dtype is not out.dtype:
            raise RuntimeError(f"dtype {_dtype.scalar_name(dtype)} does not match dtype of out parameter "
                               f"({_dtype.scalar_name(out.dtype)})")
        return out.dtype, out.device if device is None else normalize(device)
    dtype, device = dtype or default or _dtype.get_default_dtype(), _target(device)
    _dtype.check_device(dtype, device)
    return dtype, device


def _finish(arr, dt, dev, requires_grad, out=None):
    """Wraps a freshly made array (moving it to ``dev``), sets ``requires_grad``, or writes it into ``out``."""
    if dev is META:
        if not is_meta_array(arr):
            arr = meta_array(arr.shape, arr.dtype)
    elif dev is not CPU and isinstance(arr, np.ndarray):
        _dtype.check_device(dt, dev)
        xp = array_module(dev)
        with xp.cuda.Device(dev.index):
            arr = xp.asarray(arr)
    t = Tensor._make(arr, dt, dev)
    if requires_grad:
        _require_grad(t)
    if out is not None and out.shape != t.shape and not out._requires_grad:
        out.resize_(t.shape)  # a factory resizes its ``out`` without a warning
    return write_out(t, out) if out is not None else t


def _require_grad(t):
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._requires_grad = True
    return t


def _on(dev):
    """A context making ``dev`` the current CUDA device while allocating (nothing on the CPU)."""
    return contextlib.nullcontext() if dev.type != "cuda" else array_module(dev).cuda.Device(dev.index)


# -- scalar checks -----------------------------------------------------------------------------------------------
def _limits(dt):
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max)


def _fits(value, dt):
    """Whether the Python number ``value`` converts to ``dt`` without overflow (c10's ``overflows``)."""
    if dt is _dtype.bool:
        return True
    if dt.is_complex:  # each part checked against the real dtype
        value = complex(value)
        return _fits(value.real, dt.to_real()) and _fits(value.imag, dt.to_real())
    if isinstance(value, complex):
        return value.imag == 0 and _fits(value.real, dt)
    if dt.is_floating_point:
        if math.isinf(value) and dt in _dtype.FLOAT8:
            return dt is _dtype.float8_e5m2  # the only float8 with infinities
        return not math.isfinite(value) or abs(value) <= _dtype.finfo(dt).max
    if isinstance(value, float) and math.isnan(value):
        return False
    lo, hi = _limits(dt)
    if lo == 0 and not isinstance(value, float):  # unsigned: c10 accepts negatives down to -max (they wrap)
        return -hi <= value <= hi
    return lo <= value <= hi


def cast_scalar(value, dt):
    """The number ``value`` as a NumPy scalar of ``dt``, wrapping integers around as C casts do."""
    if dt in _dtype.FLOAT8:
        return _dtype.float32_to_float8(np, np.asarray(value), dt.np)[()]
    if type(value) is float and dt.is_floating_point and (dt.itemsize == 8 or -65504.0 <= value <= 65504.0):
        return dt.np.type(value)  # in range of every float dtype: no overflow to silence
    if isinstance(value, complex) and not dt.is_complex:
        value = value.real if dt is not _dtype.bool else value != 0  # as torch, without NumPy's warning
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(value).astype(dt.np)[()]


def check_fill(value, dt):
    """torch's overflow check when a Python number is written into a tensor of ``dt`` (fill_, full)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    if not _fits(value, dt):
        raise RuntimeError(f"value cannot be converted to type {_dtype.c_name(dt)} without overflow")


def _number(x, op):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    if not isinstance(x, _PY_SCALARS):
        raise TypeError(f"{op}(): argument must be a Number, not {type(x).__name__}")
    return x


# -- tensor() --------------------------------------------------------------------------------------------------
_SEQUENCES = (list, tuple, _range, array.array, bytearray, memoryview)  # read element by element, as lists


def _is_seq(x):
    return isinstance(x, _SEQUENCES) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _leaf_dtype(x):
    """The dtype ``tensor()`` infers for one scalar (torch's infer_scalar_type)."""
    t = type(x)
    if t is float:
        return _dtype.get_default_dtype()
    if t is int:
        return _dtype.int64
    if t is bool:
        return _dtype.bool
    if t is complex:
        return _dtype.complex_default()
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.generic, np.ndarray)):
        return _dtype.from_numpy_dtype(x.dtype)
    if isinstance(x, numbers.Number):
        return _leaf_dtype(complex(x) if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real)
                           else float(x) if not isinstance(x, numbers.Integral) else int(x))
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _scan(data):
    """torch's nested-sequence inference: the shape (followed through first elements), every sequence checked
    against it, and the dtypes of the leaves. Returns (shape, dtypes, has_tensors (2 where a leaf tensor holds
    several elements), a sequence found as a leaf)."""
    shape = []
    x = data
    while _is_seq(x):
        if isinstance(x, np.ndarray):
            shape.extend(x.shape)
            break
        shape.append(len(x))
        if not len(x):
            break
        x = x[0]
    if shape and isinstance(x, str):  # a string met first, where torch would look for one more dimension
        raise ValueError("too many dimensions 'str'")
    dtypes, tensors, bad = set(), [False], []

    def walk(seq, dim):
        if isinstance(seq, np.ndarray):
            if seq.shape != tuple(shape[dim:]):
                got = next(d for a, b, d in zip(seq.shape, shape[dim:], _range(dim, len(shape))) if a != b)
                raise ValueError(f"expected sequence of length {shape[got]} at dim {got} "
                                 f"(got {seq.shape[got - dim]})")
            dtypes.add(_dtype.from_numpy_dtype(seq.dtype))
            return
        if len(seq) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(seq)})")
        if dim + 1 == len(shape):
            for t in set(map(type, seq)):
                if t in _PY_SCALARS:
                    dtypes.add(_leaf_dtype(t()))
                elif issubclass(t, np.generic):
                    dtypes.add(_dtype.from_numpy_dtype(np.dtype(t)))
                elif issubclass(t, np.ndarray) and all(x.ndim == 0 for x in seq if type(x) is t):
                    dtypes.update(_dtype.from_numpy_dtype(x.dtype) for x in seq if type(x) is t)
                elif _is_seq_type(t):
                    bad.append(t)  # reported by the caller, whose message depends on the dtype
                else:
                    for x in seq:
                        if type(x) is t:
                            if isinstance(x, Tensor):
                                # 2: one holds several elements (the caller's error depends on the dtype)
                                tensors[0] = max(tensors[0], 1 if x.numel() == 1 else 2)
                            dtypes.add(_leaf_dtype(x))
            return
        for x in seq:
            if not _is_seq(x):
                raise TypeError("not a sequence")
            walk(x, dim + 1)

    if shape:
        walk(data, 0)
    return shape, dtypes, tensors[0], bad[0] if bad else None


def _is_seq_type(t):
    return issubclass(t, _SEQUENCES) or issubclass(t, np.ndarray)


def _untensor(x):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_untensor(v) for v in x]
    return x


def _checked_cast(arr, dt, from_python):
    """Casts the naturally-inferred array of Python data to ``dt`` with torch's overflow checks."""
    if arr.dtype == dt.np:
        return arr
    k = arr.dtype.kind
    if from_python and not (dt is _dtype.bool or dt.is_complex) and arr.size:
        if k == "c":
            raise TypeError("must be real number, not complex")
        if not dt.is_floating_point:
            lo, hi = _limits(dt)
            if k == "f":
                bad = ~np.isfinite(arr) | (arr < lo) | (arr > hi)
            else:
                bad = (arr > hi) | (arr < (-hi if lo == 0 else lo))
            if bad.any():
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    if dt in _dtype.FLOAT8:
        return _dtype.float32_to_float8(np, arr, dt.np)
    with np.errstate(invalid="ignore", over="ignore"):
        return arr.astype(dt.np)


def _to_array(data, dtype):
    """Python data (numbers, nested sequences, NumPy arrays/scalars, 0-d Tensors) as a NumPy array and dtype."""
    if isinstance(data, np.ndarray):
        _check_strides(data)
        _check_byte_order(data)
        dt = dtype or _dtype.from_numpy_dtype(data.dtype)
        return data.astype(dt.np, copy=True), dt
    if _is_seq(data):
        shape, dtypes, has_tensors, bad = _scan(data)
        inferred = None
        for d in dtypes:
            inferred = d if inferred is None else _dtype.promote_types(inferred, d)
        dt = dtype or inferred or _dtype.get_default_dtype()
        if bad is not None:
            raise TypeError(f"must be real number, not {bad.__name__}" if dt.is_floating_point else
                            f"'{bad.__name__}' object cannot be interpreted as an integer")
        if has_tensors:
            if has_tensors == 2:  # torch reads each leaf as a number of dt: float() or index()
                if dt.is_floating_point or dt.is_complex:
                    raise ValueError("only one element tensors can be converted to Python scalars")
                raise TypeError("only integer tensors of a single element can be converted to an index")
            data = _untensor(data)
        arr = np.array(data)
        if dt is _dtype.uint64 and dtypes == {_dtype.int64} and arr.dtype != np.int64:  # ints beyond int64
            if any(v < 0 for v in arr.ravel().tolist()):
                raise OverflowError("can't convert negative int to unsigned")
            return np.array(data, np.uint64), dt
        if (arr.dtype == object or arr.dtype == np.uint64) and dtypes <= {_dtype.int64, _dtype.bool} and (
                dt.is_floating_point or dt.is_complex or dt is _dtype.bool):
            arr = np.array(data, np.bool_ if dt is _dtype.bool else np.float64)  # ints beyond int64 read as floats
        if arr.dtype == object or arr.dtype == np.uint64 and inferred is not _dtype.uint64 or (  # ints beyond int64
                inferred is _dtype.int64 and arr.dtype.kind == "f" and not (dt.is_floating_point or dt.is_complex
                                                                            or dt is _dtype.bool)):
            raise ValueError("Overflow when unpacking long long")
        return _checked_cast(arr, dt, True), dt
    if isinstance(data, Tensor):
        return data, dtype or data.dtype
    dt = dtype or _leaf_dtype(data)
    if isinstance(data, int) and not isinstance(data, bool) and not -2 ** 63 <= data < 2 ** (
            64 if dt is _dtype.uint64 else 63):
        if not (dt.is_floating_point or dt.is_complex or dt is _dtype.bool):
            raise ValueError("Overflow when unpacking long long")
        data = bool(data) if dt is _dtype.bool else float(data)  # a huge int read as a float or a bool
    arr = np.asarray(data)
    return _checked_cast(arr, dt, not isinstance(data, np.complexfloating)), dt


def _check_byte_order(arr):
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")


def _check_strides(arr):
    if any(s < 0 for s in arr.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Builds a new tensor from ``data`` (a number, nested sequences, a NumPy array or a Tensor), always copying.

    The dtype is inferred as torch does: bools give ``bool``, ints ``int64``, floats the default dtype, NumPy
    values and 0-d tensors their own dtype; mixed leaves promote.

    Example::

        >>> ember.tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])
    """
    dt = dtype if dtype is None or isinstance(dtype, _dtype.dtype) else _dtype_arg("tensor", dtype)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        src = data.detach()
        dt = dt or src.dtype
        t = Tensor._make(src._data.astype(dt.np, copy=True), dt, src.device)
        if device is not None or _default_device is not None:
            t = t.to(_target(device))
        return _require_grad(t) if requires_grad else t
    if hasattr(data, "__cuda_array_interface__"):
        dev = _target(device) if device is not None or _default_device is not None else device_of_array(data)
        dt = dt or _dtype.from_numpy_dtype(data.dtype)
        return _finish(data.astype(dt.np, copy=True), dt, dev, requires_grad) if dev.type == "cuda" else \
            _finish(data.get().astype(dt.np), dt, dev, requires_grad)
    arr, dt = _to_array(data, dt)
    return _finish(arr, dt, _target(device), requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A 0-d tensor holding the number ``s`` (of the default dtype unless ``dtype`` is given)."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return tensor(_number(s, "scalar_tensor"), dtype=dt, device=device, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Converts ``data`` to a tensor, sharing memory with a Tensor or NumPy array when dtype and device match."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else None
    if device is None and _default_device is not None:
        device = _target(None)
    if isinstance(data, Tensor):
        return data.to(dtype=dt, device=device)
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufcV":
        return from_numpy(data).to(dtype=dt, device=device)
    if hasattr(data, "__cuda_array_interface__"):
        src = Tensor._make(data, _dtype.from_numpy_dtype(data.dtype), device_of_array(data))
        return src.to(dtype=dt, device=device)
    return tensor(data, dtype=dt, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """Converts ``obj`` (a Tensor, an array, a DLPack/buffer-protocol object or Python data) to a tensor,
    sharing memory when possible unless ``copy=True``; ``copy=False`` raises if a copy would be needed.

    A buffer-protocol object (``bytearray``, ``array.array``...) is read as raw bytes of ``dtype`` (the default
    dtype when none is given). ``requires_grad=None`` keeps a tensor's own flag and history.
    """
    dt = _dtype.to_dtype(dtype) if dtype is not None else None
    if device is None and _default_device is not None:
        device = _target(None)
    if isinstance(obj, np.generic):
        if copy is False:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
        obj, copy = np.array(obj), False  # already a copy
    if isinstance(obj, Tensor):
        src = obj
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__cuda_array_interface__"):
        src = as_tensor(obj)
    elif hasattr(obj, "__dlpack__"):
        src = from_dlpack(obj)
    elif hasattr(obj, "__array_interface__"):
        src = from_numpy(np.asarray(obj))
    elif _has_buffer(obj):
        src = frombuffer(obj, dtype=dt or _dtype.get_default_dtype())
    else:
        if copy is False:
            raise ValueError(f"can't alias Python sequence or scalar without copying (got {type(obj).__name__})")
        t = tensor(obj, dtype=dt, device=device)
        return _require_grad(t) if requires_grad else t
    t = src.to(dtype=dt, device=device)
    if t is src and copy:
        t = src.clone()
    elif t is not src and copy is False:
        raise ValueError(f"asarray: can't avoid a copy converting {src.dtype} on {src.device} to "
                         f"{t.dtype} on {t.device} with copy=False")
    if requires_grad is None:
        if t.requires_grad:
            warn_once("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. "
                      "Pass requires_grad=False explicitly to get the old behavior and silence this warning.")
    elif requires_grad:
        if not t.requires_grad:
            _require_grad(t)
    elif t.requires_grad:  # a leaf drops the flag in place, a result of the graph is detached
        t = t.requires_grad_(False) if t.is_leaf else t.detach()
    return t


def _has_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True




def from_numpy(ndarray):
    """A CPU tensor sharing memory with the NumPy array ``ndarray`` (writes show through both ways).

    Example::

        >>> a = numpy.zeros(2); t = ember.from_numpy(a); t[0] = 1; a
        array([1., 0.])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_strides(ndarray)
    _check_byte_order(ndarray)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor. This "
                      "type of warning will be suppressed for the rest of this program.", UserWarning, stacklevel=2)
    return Tensor._make(ndarray, _dtype.from_numpy_dtype(ndarray.dtype), CPU)


# -- filled tensors ----------------------------------------------------------------------------------------------
def _filled(op, value, shape, dtype, device, requires_grad, out):
    dt, dev = _factory(op, dtype, device, out)
    xp = array_module(dev)
    with _on(dev):
        if dev is META:
            arr = meta_array(shape, dt.np)
        elif value is None:
            arr = xp.empty(shape, dt.np)
        elif type(value) is int and value in (0, 1):  # the common zeros/ones: no scalar cast needed
            arr = (xp.ones if value else xp.zeros)(shape, dt.np)
        else:
            arr = xp.full(shape, cast_scalar(value, dt), dt.np)
    return _finish(arr, dt, dev, requires_grad, out)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of zeros of the given size: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    shape = _factory_size(size, "zeros", kw, check=False)
    if any(s < 0 for s in shape):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled("zeros", 0, shape, dtype, device, requires_grad, out)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of ones of the given size."""
    return _filled("ones", 1, _factory_size(size, "ones", kw), dtype, device, requires_grad, out)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """An uninitialised tensor of the given size, laid out in ``memory_format`` (e.g. ``ember.channels_last``)."""
    shape = _factory_size(size, "empty", kw)
    if memory_format is not None:
        fmt = as_format(memory_format)
        if fmt.perm is not None:
            dt, dev = _factory("empty", dtype, device, out)
            with _on(dev):
                arr = _empty_strided(array_module(dev), shape, format_strides(shape, fmt), dt.np)
            return _finish(arr, dt, dev, requires_grad, out)
        if fmt is preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
    return _filled("empty", None, shape, dtype, device, requires_grad, out)


def _fill_number(value, op):
    """``full``'s fill value as a Python number: a number or a 0-d tensor."""
    if isinstance(value, Tensor) and value.ndim:
        raise TypeError(f"{op}(): argument 'fill_value' (position 2) must be Number, not Tensor")
    return _number(value, op)


def _fill_dtype(v):
    """The dtype ``full`` infers from its fill value: of the Python number it is (a Tensor's too)."""
    return _dtype.bool if isinstance(v, bool) else _dtype.int64 if isinstance(v, int) else \
        _dtype.complex_default() if isinstance(v, complex) else _dtype.get_default_dtype()


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value (bool, int64, default float)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    shape = _size((size,), "full")
    value = _fill_number(fill_value, "full")
    dt, dev = _factory("full", dtype, device, out, default=_fill_dtype(value))
    check_fill(value, dt)
    return _filled("full", value, shape, dt, dev, requires_grad, out)


def _make_like(input, value, dtype, device, requires_grad, memory_format):
    _like_input(input, "zeros_like" if value == 0 else "ones_like" if value == 1 else "empty_like")
    dt = _dtype.to_dtype(dtype) if dtype is not None else input.dtype
    dev = input.device if device is None else normalize(device)
    strides = like_strides(input._data, as_format(memory_format))  # None: C order
    xp = array_module(dev)
    if value is not None:
        value = cast_scalar(value, dt)
    with _on(dev):
        if dev is META:
            arr = meta_array(input._data.shape, dt.np)
        elif strides is None:
            shape = input._data.shape
            arr = xp.empty(shape, dt.np) if value is None else xp.full(shape, value, dt.np)
        else:  # torch's preserve_format keeps a dense input's strides, channels_last gives NHWC memory
            arr = _empty_strided(xp, input._data.shape, strides, dt.np)
            if value is not None:
                arr[...] = value
    return _finish(arr, dt, dev, requires_grad)


def _like_input(input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Zeros with the shape (and, unless given, dtype and device) of ``input``."""
    return _make_like(input, 0, dtype, device, requires_grad, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Ones with the shape (and, unless given, dtype and device) of ``input``."""
    return _make_like(input, 1, dtype, device, requires_grad, memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialised tensor with the shape (and, unless given, dtype and device) of ``input``."""
    return _make_like(input, None, dtype, device, requires_grad, memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """``fill_value`` everywhere, with the shape (and, unless given, dtype and device) of ``input``."""
    _like_input(input, "full_like")
    value = _fill_number(fill_value, "full_like")
    dt = _dtype.to_dtype(dtype) if dtype is not None else input.dtype
    check_fill(value, dt)
    return _make_like(input, value, dt, device, requires_grad, memory_format)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given ``size`` and ``stride`` (in elements)."""
    shape, stride = _size((size,), "empty_strided"), tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(stride)}")
    dt, dev = _factory("empty_strided", dtype, device, None)
    xp = array_module(dev)
    n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    if dev is META:
        return _finish(meta_array(shape, dt.np), dt, dev, requires_grad)
    with _on(dev):
        buf = xp.empty(n, dt.np)
        arr = xp.lib.stride_tricks.as_strided(buf, shape, tuple(st * dt.itemsize for st in stride))
    return _finish(arr, dt, dev, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of logical ``size`` whose dimensions lie in memory in the order ``physical_layout``
    (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last.

    Example::

        >>> ember.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
        (12, 1, 3)
    """
    shape, perm = _size((size,), "empty_permuted"), tuple(int(d) for d in physical_layout)
    if len(perm) != len(shape):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(shape)} is not equal to len(physical_layout) = {len(perm)}")
    if sorted(perm) != list(_range(len(shape))):
        raise RuntimeError("Duplicate dim not allowed")
    strides, step = [0] * len(shape), 1
    for d in reversed(perm):
        strides[d] = step
        step *= max(shape[d], 1)
    return empty_strided(shape, strides, dtype=dtype, device=device, requires_grad=requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor sharing memory with ``buffer`` (any object with the buffer protocol): ``count`` elements of
    ``dtype`` (-1: all) from byte ``offset``.

    Example::

        >>> ember.frombuffer(bytearray([1, 0, 2, 0]), dtype=ember.int16)
        tensor([1, 2], dtype=ember.int16)
    """
    try:
        mem = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not mem.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    dt = dtype if isinstance(dtype, _dtype.dtype) else _dtype_arg("frombuffer", dtype)
    size, item = mem.nbytes, dt.itemsize
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({size} "
                         "bytes) minus 1")
    if count < 0:
        if (size - offset) % item:
            raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({item})")
        count = (size - offset) // item
    elif offset + count * item > size:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({size} bytes)")
    if mem.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to a "
                      "tensor. This type of warning will be suppressed for the rest of this program.", UserWarning,
                      stacklevel=2)
    arr = np.frombuffer(mem, dt.np, count, offset)
    t = Tensor._make(arr, dt, CPU)
    return _require_grad(t) if requires_grad else t


# -- ranges ------------------------------------------------------------------------------------------------------
def _is_float_arg(x):
    return isinstance(x, (float, np.floating)) or (isinstance(x, Tensor) and x.dtype.is_floating_point)


def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) spaced by ``step``; int64 unless an argument is a float.

    Example::

        >>> ember.arange(1, 2.5, 0.5)
        tensor([1.0000, 1.5000, 2.0000])
    """
    if end is None:
        if start is None:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        start, end = 0, start
    elif start is None:  # arange(end=...)
        start = 0
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, Tensor) and v.ndim:  # torch takes only 0-d tensors as Numbers
            raise TypeError(f"arange(): argument '{name}' must be Number, not Tensor")
    floats = any(_is_float_arg(v) for v in (start, end, step))
    dt, dev = _factory("arange", dtype, device, out, default=None if floats else _dtype.int64)
    start, end, step = (_number(v, "arange") for v in (start, end, step))
    if dt is _dtype.bool or dt.is_complex or dt._bare:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.scalar_name(dt)}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    integral = not dt.is_floating_point
    n = None
    if integral and dt is not _dtype.int64:  # the size from the given bounds, the values from truncated ones
        if math.isfinite(start) and math.isfinite(end) and (step > 0 and end >= start or step < 0 and end <= start):
            n = math.ceil((float(end) - float(start)) / float(step))
    if integral:  # torch accumulates integer ranges in int64: bounds and step are truncated first
        start, end, step = int(start), int(end) if math.isfinite(end) else end, int(step)
        if step == 0 and n is None:
            raise ValueError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if n is None and ((step > 0 and end < start) or (step < 0 and end > start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if n is None and dt is _dtype.int64:
        sgn = 1 if step > 0 else -1
        n = abs(end - start + step - sgn) // abs(step)  # C's integer division, exact for any int64 range
    elif n is None:
        n = math.ceil((float(end) - float(start)) / float(step))
    if out is not None and out.numel() != n:
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} which "
                      f"does not match the computed number of elements {n}. Note that this may occur as a result of "
                      f"rounding error. The out tensor will be resized to a tensor of shape ({n},).", UserWarning,
                      stacklevel=2)
    if dev is META:
        return _finish(meta_array((n,), dt.np), dt, dev, requires_grad, out)
    if integral:
        arr = np.arange(n, dtype=np.int64) * step + start
    else:  # computed in float64 (float32 for half types) and rounded once, as torch's accumulate type does
        acc = np.float32 if dt.itemsize == 2 else np.float64
        arr = acc(start) + np.arange(n, dtype=acc) * acc(step)
    return _finish(arr.astype(dt.np, copy=False), dt, dev, requires_grad, out)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated: values from ``start`` to ``end`` inclusive; use :func:`arange`."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    n = int(math.floor((_number(end, "range") - _number(start, "range")) / _number(step, "range"))) + 1
    # an integer dtype truncates the bounds: ``n`` whole steps past ``start`` end the range exactly
    stop = start + n * step if not dt.is_floating_point and isinstance(start + step, int) else \
        start + (n - 0.5) * step
    return arange(start, stop, step, out=out, dtype=dt, device=device, requires_grad=requires_grad)


def _bound(x, name, op):
    """A ``start``/``end`` of ``linspace``/``logspace``: a number or a 0-d tensor."""
    if isinstance(x, Tensor) and x.ndim:
        raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got {name} with {x.ndim} "
                           "dimension(s).")
    return _number(x, op)


def _steps(steps, op):
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not isinstance(steps, numbers.Integral) or isinstance(steps, bool):
        raise TypeError(f"{op}() received an invalid combination of arguments: 'steps' must be int, "
                        f"not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


def _spaced(start, end, steps, step_t):
    """torch's two-sided ramp: the first half counts up from ``start``, the second down from ``end``."""
    i = np.arange(steps)
    if steps == 1:
        return np.full(1, start, step_t)
    step = (step_t(end) - step_t(start)) / step_t(steps - 1)
    half = steps // 2
    wide = _FUSED.get(step_t, step_t)
    up = wide(step_t(start)) + wide(step) * i[:half].astype(wide)
    down = wide(step_t(end)) - wide(step) * (steps - 1 - i[half:]).astype(wide)
    return np.concatenate([up, down]).astype(step_t, copy=False)


# each value is computed as by a fused multiply-add (one rounding of the exact ``start + step * i``), which a wider
# type reproduces (float64's from the x87 extended type, where NumPy has it)
_FUSED = {np.float32: np.float64, np.complex64: np.complex128, np.float64: np.longdouble,
          np.complex128: np.clongdouble}


def _step_type(dt):
    if dt.is_complex:
        return np.complex128 if dt is _dtype.complex128 else np.complex64
    return dt.np.type if dt.is_floating_point else np.float64


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive.

    Example::

        >>> ember.linspace(0, 10, 5, dtype=ember.int64)
        tensor([ 0,  2,  5,  7, 10])
    """
    start, end = _bound(start, "start", "linspace"), _bound(end, "end", "linspace")
    steps = _steps(steps, "linspace")
    complex_args = isinstance(start, complex) or isinstance(end, complex)
    dt, dev = _factory("linspace", dtype, device, out,
                       default=_dtype.complex_default() if complex_args else None)
    if dt is _dtype.bool or dt._bare:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{_dtype.scalar_name(dt)}'")
    step_t = _step_type(dt)
    if not dt.is_floating_point and not dt.is_complex:  # the bounds are converted to the integer type first
        start, end = int(start), int(end)
    with np.errstate(all="ignore"):
        arr = _spaced(start, end, steps, step_t).astype(dt.np)
    return _finish(arr, dt, dev, requires_grad, out)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the exponent.

    Example::

        >>> ember.logspace(0, 3, 4, base=2)
        tensor([1., 2., 4., 8.])
    """
    start, end = _bound(start, "start", "logspace"), _bound(end, "end", "logspace")
    steps = _steps(steps, "logspace")
    dt, dev = _factory("logspace", dtype, device, out)
    if dt is _dtype.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    if not dt.is_floating_point and not dt.is_complex:  # the exponents are converted to the integer type first
        start, end = int(start), int(end)
    with np.errstate(all="ignore"):
        exps = _spaced(start, end, steps, _step_type(dt))
        arr = np.power(np.complex128(base) if dt.is_complex else np.float64(base), exps.astype(
            np.complex128 if dt.is_complex else np.float64))
        arr = arr.astype(dt.np)
    return _finish(arr, dt, dev, requires_grad, out)


def _int_tensor_arg(x, name, op, pos):
    """torch reads a one-element integer tensor given for an int argument as that int and refuses other tensors."""
    if isinstance(x, Tensor):
        if x.numel() != 1 or x.dtype.is_floating_point or x.dtype.is_complex:
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not Tensor")
        return x.item()
    return x


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A 2-D ``n`` x ``m`` tensor with ones on the diagonal."""
    n = _int_tensor_arg(n, "n", "eye", 1)
    m = _int_tensor_arg(m, "m", "eye", 2)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt, dev = _factory("eye", dtype, device, out)
    if dt._bare and not dt.is_floating_point:
        raise NotImplementedError(f"\"eye\" not implemented for '{_dtype.scalar_name(dt)}'")
    if dev is META:
        return _finish(meta_array((n, n if m is None else m), dt.np), dt, dev, requires_grad, out)
    with _on(dev):
        arr = array_module(dev).eye(n, n if m is None else m, dtype=dt.np)
    return _finish(arr, dt, dev, requires_grad, out)


def _tri_indices(name, row, col, offset, dtype, device, upper):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt, dev = _factory(name, dtype, device, None)
    if dt not in (_dtype.int32, _dtype.int64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype.scalar_name(dt)}'")
    xp = array_module(dev)
    with _on(dev):
        rows, cols = (xp.triu_indices if upper else xp.tril_indices)(row, offset, col)
        arr = xp.stack([rows, cols]).astype(dt.np)
    return _finish(arr, dt, dev, False, None)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle (on and above diagonal ``offset``) of a ``row`` x ``col`` matrix,
    row by row.

    Example::

        >>> ember.triu_indices(2, 3)
        tensor([[0, 0, 0, 1, 1],
                [0, 1, 2, 1, 2]])
    """
    return _tri_indices("triu_indices", row, col, offset, _dtype.int64 if dtype is None else dtype, device, True)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle (on and below diagonal ``offset``) of a ``row`` x ``col`` matrix,
    row by row."""
    return _tri_indices("tril_indices", row, col, offset, _dtype.int64 if dtype is None else dtype, device, False)
