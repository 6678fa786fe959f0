"""torch's legacy API: the typed tensor classes (``FloatTensor``, ``cuda.LongTensor``, ...), the ``Tensor.new``
constructor and the tensor queries that only old code asks (``is_signed``, ``volatile``, ...)."""
import builtins
import warnings

import numpy as np

from . import _dtype
from ._device import cuda_available
from ._tensor import Tensor, _LEGACY_NAMES, register

_EXPORTED = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
             "CharTensor", "ByteTensor", "BoolTensor")
__all__ = list(_EXPORTED) + ["set_default_tensor_type", "typename", "is_same_size"]


def _legacy_new(args, kwargs, dtype, device, what="new"):
    """torch's legacy constructor for ``dtype`` on ``device``: ``(*sizes)`` or ``(Size)`` uninitialised, ``(data)``
    copied, ``(tensor)`` aliased (it must have ``dtype``), ``()`` empty."""
    from ._creation import empty, tensor
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
        return tensor(first, dtype=dtype, device=device)
    for s in args[0] if len(args) == 1 and isinstance(first, tuple) else args:
        if not hasattr(s, "__index__") or isinstance(s, bool):
            raise TypeError(f"{what}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
    return empty(*args, dtype=dtype, device=device)


class tensortype(type):
    """The metaclass of the legacy tensor types: ``isinstance(x, ember.FloatTensor)`` holds exactly for float32
    tensors on the CPU, and calling the type is torch's legacy constructor."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

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


def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return input.shape == other.shape


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
    return self.dtype not in (_dtype.uint8, _dtype.bool)


def is_inference(self):
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


register(new, is_signed, is_same_size, is_inference, pin_memory, is_pinned, share_memory_, is_shared,
         type=_type, volatile=property(_volatile))
