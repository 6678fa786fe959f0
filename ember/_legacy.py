"""torch's legacy API: the typed tensor classes (``FloatTensor``, ``cuda.LongTensor``, ...), the ``Tensor.new``
constructor and the tensor queries that only old code asks (``is_signed``, ``volatile``, ...)."""
import builtins
import warnings

import numpy as np

from . import _dtype
from ._device import cuda_available
from ._layout import strided
from ._tensor import Tensor, _LEGACY_NAMES, register

_EXPORTED = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
             "CharTensor", "ByteTensor", "BoolTensor")
__all__ = list(_EXPORTED) + ["set_default_tensor_type", "typename", "is_same_size", "is_inference", "set_warn_always",
                             "is_warn_always_enabled", "set_flush_denormal", "_assert", "is_signed", "get_device"]


def _legacy_new(args, kwargs, dtype, device, what="new"):
    """torch's legacy constructor for ``dtype`` on ``device``: ``(*sizes)`` or ``(Size)`` uninitialised, ``(data)``
    copied, ``(tensor)`` aliased (it must have ``dtype``), ``()`` empty."""
    from ._creation import as_tensor, empty, tensor
    if kwargs.keys() - {"device"}:
        raise TypeError(f"{what}() received an invalid combination of arguments - got unexpected keyword "
                        f"'{next(iter(kwargs.keys() - {'device'}))}', but expected (*, torch.device device = None)")
    device = kwargs.get("device") or device
    if not args:
        return empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dtype:
            raise TypeError(f"expected TensorOptions(dtype={_dtype.scalar_name(dtype)}, device={first.device.type}),"
                            f" but got a tensor of dtype {_dtype.scalar_name(first.dtype)}")
        return first.view_as(first)
    if len(args) == 1 and not isinstance(first, (int, np.integer, tuple)):
        if not hasattr(first, "__len__"):
            raise TypeError(f"{what}(): data must be a sequence (got {type(first).__name__})")
        if isinstance(first, np.ndarray):  # shares the array's memory when it has this dtype
            return as_tensor(first, dtype=dtype, device=device)
        return tensor(first, dtype=dtype, device=device)
    for s in args[0] if len(args) == 1 and isinstance(first, tuple) else args:
        if not hasattr(s, "__index__") or isinstance(s, bool):
            raise TypeError(f"{what}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
    return empty(*args, dtype=dtype, device=device)


class tensortype(type):
    """The metaclass of the legacy tensor types: ``isinstance(x, ember.FloatTensor)`` holds exactly for dense float32
    tensors on the CPU, and calling the type is torch's legacy constructor."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type and \
            obj.layout is strided

    def __call__(cls, *args, **kwargs):
        name = f"{cls.__module__.replace('ember', 'torch')}.{cls.__name__}"
        if cls.is_cuda and not cuda_available():
            raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
        return _legacy_new(args, kwargs, cls.dtype, cls._device_type, "new")


def _legacy_type(dtype, name, cuda):
    short = name.rpartition(".")[2]
    where = "ember.cuda" if cuda else "ember"
    doc = f"A {dtype.name} tensor on {'a CUDA device' if cuda else 'the CPU'} (``{where}.{short}(data)``, " \
          f"``{where}.{short}(*sizes)``), and the check ``isinstance(x, {where}.{short})``."
    return tensortype(short, (), {"dtype": dtype, "is_cuda": cuda, "is_sparse": False, "__module__": where,
                                  "__doc__": doc, "_device_type": "cuda" if cuda else "cpu"})


_CPU_TYPES = {name.rpartition(".")[2]: _legacy_type(d, name, False) for d, name in _LEGACY_NAMES.items()}
CUDA_TYPES = {name.rpartition(".")[2]: _legacy_type(d, name, True) for d, name in _LEGACY_NAMES.items()}
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = (_CPU_TYPES[n] for n in _EXPORTED)


def set_default_tensor_type(t):
    """Deprecated: sets the default floating point dtype to that of the legacy type ``t`` (a type or its name,
    ``'torch.DoubleTensor'``); use :func:`ember.set_default_dtype`."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        name = t.replace("ember.", "torch.", 1)
        types = {f"torch.{n}": c for n, c in _CPU_TYPES.items()} | {f"torch.cuda.{n}": c for n, c in CUDA_TYPES.items()}
        if name not in types:
            raise TypeError(f"invalid type: '{t}'")
        t = types[name]
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if t.is_cuda:
        if not cuda_available():
            raise TypeError(f"type torch.cuda.{t.__name__} not available. Torch not compiled with CUDA enabled.")
        raise NotImplementedError("ember has no default device: create CUDA tensors with device='cuda'")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)


def typename(obj, /):
    """The name of ``obj``'s type: a tensor's legacy type name (``'torch.LongTensor'``), else the qualified name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _assert(condition, message):
    """``assert condition, message``, as a call (torchvision's models check shapes with it)."""
    if not condition:
        raise AssertionError(message)


def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return input.shape == other.shape


def is_inference(input):
    """Whether ``input`` is an inference tensor (:meth:`Tensor.is_inference`)."""
    return input.is_inference()


_warn_always = False


def set_warn_always(b):
    """Asks warnings that torch emits once per process to be emitted every time (kept for code that sets it;
    ember's warnings follow Python's ``warnings`` filters)."""
    global _warn_always
    _warn_always = bool(b)


def is_warn_always_enabled():
    """Whether :func:`set_warn_always` turned warn-always on."""
    return _warn_always


def set_flush_denormal(mode):
    """Asks for denormal floats to be flushed to zero; returns whether that is supported. ember computes with NumPy
    and CuPy, which keep denormals: always False, as torch returns on CPUs without the feature."""
    return False


# -- Tensor methods ----------------------------------------------------------------------------------------------
_tensor_type = Tensor.type


def _type(self, dtype=None, non_blocking=False):
    """The legacy type name (``'torch.FloatTensor'``), or this tensor converted to ``dtype`` (a dtype, a legacy
    type such as ``ember.DoubleTensor``, or its name)."""
    if isinstance(dtype, tensortype):
        dtype = f"torch.{'cuda.' if dtype.is_cuda else ''}{dtype.__name__}"
    elif dtype is Tensor:  # the default tensor type
        dtype = _dtype.get_default_dtype()
    elif isinstance(dtype, builtins.type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    return _tensor_type(self, dtype, non_blocking)


def new(self, *args, **kwargs):
    """torch's legacy constructor with this tensor's dtype and device: ``x.new(2, 3)`` is uninitialised,
    ``x.new([1, 2])`` copies data, ``x.new(t)`` aliases ``t`` (of the same dtype), ``x.new()`` is empty."""
    return _legacy_new(args, kwargs, self.dtype, self.device)


def is_signed(self):
    """Whether this tensor's dtype is signed (unsigned ints and bool are not)."""
    return self.dtype.is_signed


def get_device(input):
    """The index of ``input``'s CUDA device, -1 on the CPU."""
    return input.get_device()


def _is_inference(self):
    """Whether this is an inference tensor. ember does not mark tensors made under ``inference_mode``: False."""
    return False


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory, for faster copies to a CUDA device."""
    if not cuda_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    return self.clone()  # NumPy memory: the copy to the device works from any host memory


def is_pinned(self, device=None):
    """Whether this tensor is in page-locked memory (never, in ember)."""
    return False


def share_memory_(self):
    """Marks this tensor as shared between processes and returns it. ember's CPU tensors stay in their NumPy
    memory: a child started by ``fork`` sees them, writes after the fork are not seen across processes."""
    if self.device.type == "cpu":
        self.__dict__["_shared"] = True
    return self


def is_shared(self):
    """Whether :meth:`share_memory_` was called on this tensor (CUDA tensors always count as shared)."""
    return self.device.type == "cuda" or self.__dict__.get("_shared", False)


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _callback_target(self, op):
    if self.device.type != "cpu":
        raise TypeError(f"{op} is only implemented on CPU tensors")
    if self._requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")


def _write_results(self, values):
    with np.errstate(invalid="ignore", over="ignore"):
        self._data[...] = np.asarray(values).reshape(self.shape).astype(self.dtype.np)
    self._vc[0] += 1
    return self


def apply_(self, callable):
    """Replaces each element ``x`` by ``callable(x)`` (a Python function of numbers; CPU only, slow)."""
    _callback_target(self, "apply_")
    return _write_results(self, [callable(v) for v in self.reshape(-1).tolist()])


def map_(self, tensor, callable):
    """Replaces each element ``x`` by ``callable(x, y)``, ``y`` the element of ``tensor`` (broadcast to this
    tensor's shape) at the same place; CPU only."""
    _callback_target(self, "map_")
    ys = tensor.expand(self.shape).reshape(-1).tolist()
    return _write_results(self, [callable(x, y) for x, y in zip(self.reshape(-1).tolist(), ys)])


def map2_(self, x, y, callable):
    """Replaces each element ``a`` by ``callable(a, b, c)``, ``b`` and ``c`` the elements of ``x`` and ``y``
    (broadcast to this tensor's shape) at the same place; CPU only."""
    _callback_target(self, "map2_")
    bs, cs = (t.expand(self.shape).reshape(-1).tolist() for t in (x, y))
    return _write_results(self, [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), bs, cs)])


register(new, is_signed, is_same_size, pin_memory, apply_, map_, map2_, is_pinned, share_memory_, is_shared,
         type=_type, volatile=property(_volatile), is_inference=_is_inference)
