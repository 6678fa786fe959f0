"""Tensor: one array of its device plus dtype, device and autograd state. Operators dispatch to ember's ops."""
import copy
import math
import sys
import weakref
from numbers import Number

import numpy as np

from . import _dtype
from .autograd import engine as _engine, function as _function
from .autograd.grad_mode import grad_enabled

_FROM_NP = _dtype._FROM_NP
_tuple_new = tuple.__new__


class Tensor:
    """A multi-dimensional array with autograd, as ``torch.Tensor``.

    Create tensors with ``ember.tensor``, ``ember.zeros`` and friends; ``Tensor(data)`` is ``ember.tensor(data)``.
    """

    # _base: the tensor whose memory this view shares; _view_chain: the view ops that rebuild this view from _base,
    # ((Function, inputs, params), ...); _view_version: the version counter's value when this view's grad_fn was
    # last derived from _base.
    __slots__ = ("_data", "dtype", "device", "_requires_grad", "grad", "grad_fn", "_output_nr", "_vc", "_base",
                 "_view_chain", "_view_version", "__weakref__", "__dict__")
    # Rarely set state lives in the instance __dict__ when set, so creating a tensor stays cheap.
    _hooks = None
    _post_accumulate_grad_hooks = None
    _retains_grad = False
    __array_priority__ = 1000  # make NumPy defer to our reflected operators

    def __new__(cls, *args, **kwargs):
        """The legacy constructor: ``Tensor(2, 3)`` or ``Tensor(Size)`` is uninitialised, ``Tensor(data)`` copies
        ``data`` into the default dtype, ``Tensor(tensor)`` aliases it."""
        from ._creation import as_tensor, empty, tensor
        if len(args) == 1 and isinstance(args[0], Tensor):
            src = args[0]
            return src._as_subclass(cls) if cls is not Tensor else src.detach()
        if not args:
            return empty(0, **kwargs)
        if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
            if not hasattr(args[0], "__len__"):
                raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
            if isinstance(args[0], np.ndarray):  # shares the array's memory when it has the default dtype
                return as_tensor(args[0], dtype=_dtype.get_default_dtype(), **kwargs)
            return tensor(args[0], dtype=_dtype.get_default_dtype(), **kwargs)
        return empty(*args, **kwargs)

    @classmethod
    def _make(cls, data, dtype, device, requires_grad=False, grad_fn=None, output_nr=0):
        t = object.__new__(cls)
        t._data = data
        t.dtype = dtype
        t.device = device
        t._requires_grad = requires_grad
        t.grad = None
        t.grad_fn = grad_fn
        t._output_nr = output_nr
        t._vc = [0]
        t._base = t._view_chain = None
        t._view_version = 0
        return t

    def _as_subclass(self, cls):
        t = Tensor._make.__func__(cls, self._data, self.dtype, self.device, self._requires_grad, self.grad_fn,
                                  self._output_nr)
        t._vc, t._base = self._vc, self._base
        return t

    def as_subclass(self, cls):
        """This tensor's data as an instance of the Tensor subclass ``cls``; gradients flow back to this tensor."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                            "possible. Make sure your class inherits from Tensor.")
        src = self.view_as(self) if self._requires_grad and grad_enabled() else self
        t = src._as_subclass(cls)
        t._view_chain = src._view_chain
        return t

    # -- metadata ------------------------------------------------------------------------------------------------
    @property
    def shape(self):
        return _tuple_new(Size, self._data.shape)  # an array's shape is already a tuple of ints

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return _tuple_new(Size, self._data.shape)
        try:
            return self._data.shape[self._wrap_dim(dim)]
        except IndexError:
            if self._data.ndim:
                raise
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions") from None

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self.dtype.itemsize

    @property
    def data(self):
        # shares storage but not the version counter: in-place writes through ``.data`` escape autograd's checks
        return Tensor._make(self._data, self.dtype, self.device)

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        self._data, self.dtype, self.device = other._data, other.dtype, other.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def is_meta(self):
        """Whether this tensor is on the meta device: shape, dtype and autograd state without data."""
        return self.device.type == "meta"

    def get_device(self):
        return self.device.index if self.device.type == "cuda" else -1

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def _grad(self):
        # torch's alias of .grad, assigned by A3C-style code (shared_param._grad = param.grad)
        return self.grad

    @_grad.setter
    def _grad(self, value):
        self.grad = value

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                                   "computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        """Sets whether autograd records operations on this (leaf) tensor; returns it."""
        if requires_grad and self.grad_fn is None and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def _version(self):
        return self._vc[0]

    def _bump(self):
        self._vc[0] += 1

    def stride(self, dim=None):
        """Strides in elements, as torch counts them."""
        item = self.dtype.itemsize
        st = tuple(s // item for s in self._data.strides)
        # NumPy's empty arrays and meta arrays have zero strides; torch's contiguous ones
        if not any(st) and (self._data.size == 0 or self.device.type == "meta"):
            st = tuple(math.prod(max(n, 1) for n in self._data.shape[i + 1:]) for i in range(self._data.ndim))
        return st if dim is None else st[self._wrap_dim(dim)]

    def storage_offset(self):
        """Offset in elements of this view's first element from the start of its base's memory."""
        if self._base is None or self._data.size == 0:
            return 0
        here = _address(self._data)
        start = _address(self._base._data)
        return (here - start) // self.dtype.itemsize

    def is_contiguous(self, memory_format=None):
        """Whether this tensor is laid out densely in ``memory_format`` (row-major by default), judged by strides."""
        if memory_format is None:
            return self._data.flags.c_contiguous or self.device.type == "meta"
        from ._ops.memory_format import is_contiguous_as
        return is_contiguous_as(self, memory_format)

    def data_ptr(self):
        return _address(self._data) if self.device.type != "meta" else 0

    const_data_ptr = data_ptr

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr

    def untyped_storage(self):
        """The bytes behind this tensor and every view of its base (``ember._storage.UntypedStorage``)."""
        from ._storage import untyped_storage
        return untyped_storage(self)

    def storage(self):
        """This tensor's storage as elements of its dtype (deprecated in torch, as ``TypedStorage``)."""
        from ._storage import typed_storage
        return typed_storage(self)

    def _wrap_dim(self, dim, ndim=None):
        return wrap_dim(dim, self._data.ndim if ndim is None else ndim)

    # -- autograd ------------------------------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. the graph leaves (or ``inputs``), accumulating it into their
        ``.grad``. ``gradient`` is required unless this tensor has one element."""
        _engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A new tensor outside the graph sharing storage and version counter with this one."""
        t = Tensor._make(self._data, self.dtype, self.device)
        t._vc = self._vc
        return t

    def detach_(self):
        """Detaches this tensor from the graph in place, making it a leaf."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        """Keeps ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        if fn._retain is None:
            fn._retain = {}
            fn._hooked = True
        fn._retain[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Registers ``hook(grad)`` to run when this tensor's gradient is computed; it may return a new gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        return _function.RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Registers ``hook(tensor)`` to run on this leaf after backward has accumulated its ``.grad`` (e.g. an
        optimizer step in backward); it returns None."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        return _function.RemovableHandle(self._post_accumulate_grad_hooks, hook)

    # -- conversion ----------------------------------------------------------------------------------------------
    def numpy(self, *, force=False):
        """The NumPy array this CPU tensor wraps (shared memory)."""
        if self._requires_grad and not force and grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            if not force or self.device.type == "meta":
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy "
                                "the tensor to host memory first.")
            return self._data.get()
        return self._data

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion protocol: ``np.asarray(t)`` shares this CPU tensor's memory."""
        if self._requires_grad and grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        a = self._data if self.device.type == "cpu" else self.numpy(force=True)
        if dtype is not None and a.dtype != dtype:
            if copy is False:
                raise ValueError(f"Unable to avoid copy while converting from {a.dtype} to {dtype}.")
            return a.astype(dtype)
        return a.copy() if copy else a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy's ufuncs on tensors give tensors: ``np.sqrt(t)`` is a CPU tensor (bool results as uint8)."""
        from ._creation import from_numpy
        return from_numpy(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        data = self._data
        if data.dtype == _dtype.bfloat16.np:
            raise BufferError("NumPy cannot export bfloat16 through DLPack")
        kwargs = {}
        if stream is not None and self.device.type == "cuda":
            kwargs["stream"] = stream
        if max_version is not None:
            kwargs["max_version"] = max_version
        if copy is not None:
            kwargs["copy"] = copy
        if self.device.type == "cpu" and not data.flags.writeable:
            data = data.view()
            data.flags.writeable = False
        try:
            return data.__dlpack__(**kwargs)
        except TypeError:
            return data.__dlpack__()

    def __dlpack_device__(self):
        from ._dlpack import DLDeviceType
        kind, index = self._data.__dlpack_device__()
        return DLDeviceType(kind), index

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        v = self._data.reshape(()).item() if self.device.type == "cpu" else self._data.reshape(()).get().item()
        if self.dtype.np in _dtype.ML_NP:
            v = float(v)
        return v

    def tolist(self):
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        a = self._data if self.device.type == "cpu" else self._data.get()
        if a.dtype in _dtype.ML_NP:
            a = a.astype(np.float32)
        return a.tolist()

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with " + ("no values" if self._data.size == 0 else
                                                                 "more than one value") + " is ambiguous")
        return bool(self.item())

    def __float__(self):
        self._check_scalar("float")
        if self._requires_grad and grad_enabled():
            from ._settings import warn_once
            warn_once("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.")
        v = self.item()
        return float(v.real if isinstance(v, complex) else v)

    def __int__(self):
        self._check_scalar("int")
        v = self.item()
        return int(v.real if isinstance(v, complex) else v)

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        self._check_scalar("complex")
        return complex(self.item())

    def _check_scalar(self, what):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if what != "complex" and self.dtype.is_complex and self._data.reshape(-1)[0].imag != 0:
            raise RuntimeError(f"value cannot be converted to type {'double' if what == 'float' else 'int64_t'} "
                               "without overflow")

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __contains__(self, element):
        if isinstance(element, (Tensor, Number)):
            return bool((element == self).any())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                           f"{type(element)}.")

    def __reversed__(self):
        return self if self._data.ndim == 0 else self.flip(0)

    def __reduce_ex__(self, proto):
        data = self.tolist() if self.dtype is _dtype.bfloat16 else self.numpy(force=True).copy(order="K")
        return (_rebuild, (data, self.dtype.name, str(self.device), self._requires_grad), self.__dict__ or None)

    def __copy__(self):
        # a new leaf sharing this tensor's memory, as torch's shallow copy
        t = Tensor._make.__func__(type(self), self._data, self.dtype, self.device, self._requires_grad)
        t._vc = self._vc
        t.__dict__.update(self.__dict__)
        return t

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        data = self._data if self.device.type == "meta" else _deepcopy_array(self._data, memo)
        t = Tensor._make.__func__(type(self), data, self.dtype, self.device, self._requires_grad)
        if self.grad is not None:
            t.grad = self.grad.__deepcopy__(memo)
        t.__dict__.update({k: copy.deepcopy(v, memo) for k, v in self.__dict__.items()})
        memo[id(self)] = t
        return t

    def __repr__(self, *, tensor_contents=None):
        from ._print import tensor_repr
        return tensor_repr(self, tensor_contents)

    def __format__(self, spec):
        if self._data.ndim == 0 and self.device.type != "meta":
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def type(self, dtype=None, non_blocking=False):
        """The legacy type name (``'torch.FloatTensor'``), or this tensor converted to ``dtype`` (a dtype or such
        a name)."""
        if dtype is None:
            name = _LEGACY_NAMES[self.dtype]
            return name if self.device.type == "cpu" else name.replace("torch.", "torch.cuda.", 1)
        if isinstance(dtype, str):
            for d, name in _LEGACY_NAMES.items():
                if dtype in (name, name.replace("torch.", "torch.cuda.", 1)):
                    if ".cuda." in dtype:
                        from ._device import cuda_available
                        if not cuda_available():  # torch's error for a CUDA type name without CUDA
                            raise RuntimeError("Cannot initialize CUDA without ATen_cuda library.")
                        return self.to(d, device="cuda")
                    return self.to(d)
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype)

    # -- new_* factories: the dtype and device of this tensor unless given -------------------------------------------
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """A new tensor copying ``data``, with this tensor's dtype and device unless given."""
        import warnings
        from ._creation import tensor
        if isinstance(data, Tensor):
            warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                          "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                          "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
            with warnings.catch_warnings():  # warned once above, not again by tensor()
                warnings.simplefilter("ignore", UserWarning)
                return tensor(data.detach(), dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        """Zeros of ``size`` with this tensor's dtype and device unless given."""
        from ._creation import zeros
        _need_size("new_zeros", size, kw)
        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad,
                     **kw)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        """Ones of ``size`` with this tensor's dtype and device unless given."""
        from ._creation import ones
        _need_size("new_ones", size, kw)
        return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad, **kw)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        """An uninitialised tensor of ``size`` with this tensor's dtype and device unless given."""
        from ._creation import empty
        _need_size("new_empty", size, kw)
        return empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad,
                     **kw)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False):
        """``fill_value`` everywhere in ``size``, with this tensor's dtype and device unless given."""
        from ._creation import full
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size).__name__}")
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False, layout=None,
                          pin_memory=False):
        """An uninitialised tensor of ``size`` and ``stride``, with this tensor's dtype and device unless given."""
        from ._creation import empty_strided
        return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def to(self, *args, **kwargs):
        """Returns this tensor with another dtype and/or device (itself when nothing changes).

        ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; keywords ``dtype``, ``device``,
        ``non_blocking``, ``copy``, ``memory_format``.
        """
        dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        fmt = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        flags = 0
        for a in args:
            if isinstance(a, Tensor):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, _dtype.dtype) or a in (float, int, bool, complex) or type(a).__name__ == "dtype":
                dtype = _dtype.to_dtype(a)
            elif isinstance(a, bool):  # non_blocking, then copy
                flags += 1
                copy = copy or flags == 2 and a
            elif isinstance(a, type):  # a class that is no dtype (np.float64...)
                raise TypeError(f"to() received an invalid combination of arguments - got ({a.__name__})")
            elif a is not None:
                dev = a
        from ._ops.convert import to_device_dtype
        out = to_device_dtype(self, dtype, dev, copy)
        if fmt is None:
            return out
        from ._ops.memory_format import as_format, to_format
        return to_format(out, as_format(fmt), out is not self)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def float(self, memory_format=None):
        return self.to(_dtype.float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(_dtype.float64, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(_dtype.float16, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        return self.to(_dtype.bfloat16, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(_dtype.int64, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(_dtype.int32, memory_format=memory_format)

    def short(self, memory_format=None):
        return self.to(_dtype.int16, memory_format=memory_format)

    def char(self, memory_format=None):
        return self.to(_dtype.int8, memory_format=memory_format)

    def byte(self, memory_format=None):
        return self.to(_dtype.uint8, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(_dtype.bool, memory_format=memory_format)

    def type_as(self, other):
        return self.to(other.dtype)

    def module_load(self, other, assign=False):
        """How ``load_state_dict`` turns the state-dict value ``other`` into this parameter or buffer's new value:
        ``other.detach()`` when ``assign``, else ``self.copy_(other).detach()``."""
        return other.detach() if assign else self.copy_(other).detach()


class Size(tuple):
    """A tensor's shape: a tuple of ints."""

    def __new__(cls, sizes=()):
        out = []
        for i, s in enumerate(sizes):
            if hasattr(s, "__index__") and not isinstance(s, bool):
                out.append(s.__index__())
            else:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')")
        return tuple.__new__(cls, out)

    def __repr__(self):
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return _tuple_new(Size, r) if isinstance(item, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + other)

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __mul__(self, n):
        r = tuple.__mul__(self, n)
        return r if r is NotImplemented else Size(r)

    __rmul__ = __mul__


def is_tensor(obj):
    """Whether ``obj`` is an ember Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating point one."""
    return input.dtype.is_floating_point


def is_complex(input):
    """Whether ``input``'s dtype is a complex one."""
    return input.dtype.is_complex


def is_nonzero(input):
    """The truth value of a one-element tensor (raises for any other)."""
    return bool(input)


Tensor.is_nonzero = is_nonzero

def numel(input):
    """The number of elements of ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def is_storage(obj):
    """Whether ``obj`` is a storage (``Tensor.untyped_storage()`` or ``Tensor.storage()``)."""
    from ._storage import UntypedStorage
    return isinstance(obj, UntypedStorage)


def wrap_dim(dim, ndim):
    """``dim`` in ``[0, ndim)``; torch's IndexError otherwise (0-d tensors accept -1 and 0)."""
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _need_size(op, size, kw):
    """torch's new_zeros/new_ones/new_empty require a size (``()`` for a 0-d tensor)."""
    if not size and "size" not in kw:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')


def _address(a):
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def _deepcopy_array(a, memo):
    """A copy of ``a`` keeping its strides; arrays of one deepcopy that shared memory share the copied memory."""
    from ._storage import _owner
    owner = _owner(a)
    if not isinstance(a, np.ndarray) or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return a.copy(order="K")
    new = memo.get(id(owner))
    if new is None:
        new = memo[id(owner)] = owner.copy(order="K")
        memo.setdefault(id(memo), []).append(owner)  # keeps ``owner`` alive, so its id is not reused
    if a is owner:
        return new
    return np.ndarray(a.shape, a.dtype, buffer=new.ravel(order="K"), offset=_address(a) - _address(owner),
                      strides=a.strides)


def _rebuild(data, dtype_name, dev, requires_grad):
    from ._creation import tensor
    return tensor(data, dtype=getattr(_dtype, dtype_name), device=dev, requires_grad=requires_grad)


_LEGACY_NAMES = {d: f"torch.{_dtype.scalar_name(d)}Tensor" for d in _dtype.ALL}


def register(*fns, **named):
    """Attaches op functions as Tensor methods (``x.exp()`` is ``ember.exp(x)``)."""
    for fn in fns:
        setattr(Tensor, fn.__name__, fn)
    for name, fn in named.items():
        setattr(Tensor, name, fn)


def inplace(fn):
    """The in-place method ``x.op_(...)`` of the out-of-place op ``fn``."""
    def method(self, *args, **kwargs):
        return write_inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of :meth:`{fn.__name__}`."
    return method


def write_inplace(self, fn, *args, **kwargs):
    """Computes ``fn(self, *args)`` and writes it into ``self``'s memory, moving ``self`` onto the result's
    place in the graph, as torch's in-place ops do."""
    recording = grad_enabled() and (self._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                                              for a in args))
    src = self
    if recording:
        if self.grad_fn is None and self._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if self._base is not None:
            from ._ops.view import check_inplace_view
            check_inplace_view(self)  # before the write, as torch
        # The op may save its input for backward; give it a snapshot so the write below does not invalidate it.
        src = Tensor._make(self._data.copy() if self.device.type != "meta" else self._data, self.dtype, self.device,
                           self._requires_grad, self.grad_fn, self._output_nr)
    out = fn(src, *args, **kwargs)
    _copy_into(self, out, fn.__name__ + "_")
    if recording and out._requires_grad:
        # A node that saved its output now holds this tensor's memory and version: a later in-place write to it
        # makes backward raise, as in torch.
        _function.rebind_saved_output(out, self)
        if self._base is not None:
            from ._ops.view import rebase_view
            rebase_view(self, out)
        else:
            self.grad_fn, self._output_nr, self._requires_grad = out.grad_fn, out._output_nr, True
        if self._retains_grad:  # retain_grad follows the tensor to its new place in the graph
            self._retains_grad = False
            self.retain_grad()
    return self


def write_out(result, out):
    """Implements an op's ``out=`` argument: copies ``result`` into ``out`` (resizing an ``out`` of another shape),
    or returns ``result`` when ``out`` is None."""
    if out is None:
        return result
    if grad_enabled() and (result._requires_grad or out._requires_grad):
        raise RuntimeError(f"{_caller_op()}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out.shape != result.shape:
        _resize_out(out, result)
    _copy_into(out, result, "out=")
    return out


def _caller_op():
    """The name of the public op whose ``out=`` is being written (the first caller not named privately)."""
    f = sys._getframe(2)
    while f.f_back is not None and (f.f_code.co_name.startswith("_") or f.f_code.co_name.startswith("write_")):
        f = f.f_back
    return f.f_code.co_name


def _resize_out(out, result):
    """Resizes ``out`` to the shape of an op's ``result`` (in place, as ``resize_``), warning where it had elements."""
    shape = result.shape
    if out.numel():
        import warnings
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                      f"does not match the required output shape {list(shape)}. This behavior is deprecated, and in a "
                      "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                      "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                      UserWarning, stacklevel=4)
    if out._requires_grad or out.device.type == "meta":
        a = out._data
        out._data = a.__class__(shape, dtype=a.dtype) if out.device.type == "cpu" else result._data.astype(a.dtype)
    else:
        from ._ops.resize import resize_
        resize_(out, shape)


def check_writable(t, opname, overlap):
    """Raises where ``t``'s array cannot be written: torch's error (``overlap`` says what overlaps) for a broadcast
    (expanded) view, whose elements share memory, and a read-only error for memory that NumPy marks so. A view of
    an expanded tensor whose elements do not overlap (``x.expand(3, 4)[0]``) gets a writable array of the same
    memory. Returns True for a meta tensor, which has no memory to write, else False."""
    a = t._data
    if getattr(a.flags, "writeable", True):  # CuPy arrays have no such flag
        return False
    if t.device.type == "meta":  # nothing to write: the write succeeds as a no-op, as torch's
        return True
    if a.size and any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
        raise RuntimeError(f"unsupported operation: {overlap}. Please clone() the tensor before performing the "
                           "operation.")
    from ._fill import _expanded_alias
    alias = _expanded_alias(a)  # NumPy marks every view of a broadcast array read-only
    if alias is not a:
        t._data = alias
        return False
    raise RuntimeError(f"{opname}: the tensor's memory is read-only (it wraps a non-writable NumPy array, such as one "
                       "made by np.frombuffer or np.asarray of an image, or a DLPack capsule); clone() it first")


def _copy_into(self, out, opname):
    if out.dtype is not self.dtype and not _dtype.can_cast(out.dtype, self.dtype):
        raise RuntimeError(f"result type {_dtype.scalar_name(out.dtype)} can't be cast to the desired output type "
                           f"{_dtype.scalar_name(self.dtype)}")
    if out.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if not check_writable(self, opname, "more than one element of the written-to tensor refers to a single memory "
                          "location"):
        if self._data.ndim == 0:
            self._data[()] = out._data
        else:
            self._data[...] = out._data
    self._vc[0] += 1


_function.Tensor = Tensor
