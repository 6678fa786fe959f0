"""A stand-in for CuPy on the host, for tests: CuPy's interface, simulated over NumPy.

Its arrays are ``ndarray`` objects that hold a NumPy array but are not NumPy arrays: converting one implicitly
(``np.asarray``, ``__array__``, SciPy, numba, ``ctypes``) raises CuPy's ``TypeError``, CuPy functions refuse NumPy
arrays, NumPy functions dispatch here only when CuPy has the function (``__array_function__``), ufuncs pick their
loop from CuPy 14.2's own type tables (so ``floor`` of a bfloat16 array fails as on a GPU), reductions return 0-d
arrays, dtypes CuPy lacks are refused, and only the names CuPy 14.2 exports (``_api.py``) exist. Two devices are
simulated; new arrays land on the current one (``cuda.Device``), as CuPy's.

The Bessel functions and ``nextafter`` give CUDA's values at the edges (``_CUDA_MATH``). It cannot catch what only a GPU
shows: kernel bugs, other numerical differences, asynchrony, memory limits, CuPy's silent (non-raising) linear-algebra
errors, or dtype support of non-ufunc routines (they run in NumPy).
"""
import types
import weakref

import ml_dtypes
import numpy as np
import scipy.linalg
import scipy.special

from . import _api

DEVICE_COUNT = 2
_current = [0]
_live = weakref.WeakValueDictionary()  # arrays that own their memory, for the memory pool's byte counts
_BF16 = np.dtype(ml_dtypes.bfloat16)
_CHARS = set("?bhilqBHILQefdFD")


def _check_dtype(dt):
    if dt.char in _CHARS and dt.byteorder != ">" or dt == _BF16:
        return
    raise ValueError(f"Unsupported dtype {dt}")


class ndarray:
    """A device array: a NumPy array that only this module's functions read."""

    __slots__ = ("_a", "_dev", "_base", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        dt = np.dtype(dtype)
        _check_dtype(dt)
        if memptr is None:
            self._a, self._dev = np.empty(shape, dt, order), _current[0]
        else:  # a view of memptr's memory
            root = memptr._root
            self._a = np.ndarray(shape, dt, root, memptr.ptr - root.ctypes.data, strides, order)
            self._dev = memptr.device_id
        self._base = None
        _live[id(self)] = self

    # -- conversions: explicit only ------------------------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
                        "NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None, blocking=True):
        if out is not None:
            out[...] = self._a
            return out
        return np.array(self._a, order=order)

    def set(self, arr, stream=None):
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray: {type(arr)}")
        if arr.shape != self.shape or arr.dtype != self.dtype:
            raise ValueError("Shape or dtype mismatch")
        self._a[...] = arr

    def item(self, *args):
        return self._a.item(*args)

    def tolist(self):
        return self._a.tolist()

    def tobytes(self, order="C"):
        return self._a.tobytes(order)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __copy__(self):
        return _wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return _wrap(self._a.copy())

    def __reduce__(self):
        return (_wrap, (self._a,))

    # -- attributes ----------------------------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape, lambda self, s: setattr(self._a, "shape", s))
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: _wrap(self._a.T, self._dev, (self,)))
    mT = property(lambda self: _wrap(self._a.mT, self._dev, (self,)))
    device = property(lambda self: cuda.Device(self._dev))
    base = property(lambda self: self._base)
    data = property(lambda self: _MemoryPointer(self))

    def _part(name):
        def get(self):
            return _wrap(getattr(self._a, name), self._dev, (self,))

        def put(self, value):
            getattr(self._a, name)[...] = _unwrap(value)
        return property(get, put)
    real, imag = _part("real"), _part("imag")
    del _part

    @property
    def __cuda_array_interface__(self):
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr, "version": 3,
                "strides": None if a.flags.c_contiguous else a.strides, "data": (a.ctypes.data, False)}

    # -- DLPack --------------------------------------------------------------------------------------------------
    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return (2, self._dev)

    def toDlpack(self):
        return self._a.__dlpack__()

    # -- indexing ------------------------------------------------------------------------------------------------
    def __getitem__(self, key):
        key = _index(key)
        out = self._a[key]
        if not isinstance(out, np.ndarray):  # an element: CuPy gives a 0-d view
            out = self._a[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]
        return _wrap(out, self._dev, (self,))

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):
            raise TypeError(f"Unsupported type {type(value)}")
        self._a[_index(key)] = _unwrap(value)

    @property
    def flat(self):
        return _Flat(self)

    # -- NumPy protocols -----------------------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        f = _UFUNCS.get(ufunc.__name__) or _UFUNCS.get("special." + ufunc.__name__)
        if f is None:
            return NotImplemented
        if any(isinstance(x, np.ndarray) for x in inputs):
            return NotImplemented
        return f(*inputs, **kwargs) if method == "__call__" else getattr(f, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        target = _MODULES["cupy"]
        for part in func.__module__.split(".")[1:]:
            target = getattr(target, part, None)
            if target is None:
                return NotImplemented
        f = getattr(target, func.__name__, None)
        if f is None or f is func:
            return NotImplemented
        return f(*args, **kwargs)


class _Flat:
    """``a.flat``: element access in C order."""

    def __init__(self, arr):
        self._arr = arr

    def __getitem__(self, key):
        return _wrap(np.asarray(self._arr._a.flat[_index(key)]), self._arr._dev)

    def __setitem__(self, key, value):
        self._arr._a.flat[_index(key)] = _unwrap(value)


class _MemoryPointer:
    """``a.data``: the address and device of an array's memory (``+ n`` moves it by ``n`` bytes)."""

    def __init__(self, arr, offset=0):
        root = arr._a
        while isinstance(root.base, np.ndarray):
            root = root.base
        self._arr, self._root = arr, root
        self.ptr, self.device_id = arr._a.ctypes.data + offset, arr._dev
        self.device = cuda.Device(arr._dev)

    def __add__(self, offset):
        return _MemoryPointer(self._arr, self.ptr - self._arr._a.ctypes.data + offset)


# -- wrapping --------------------------------------------------------------------------------------------------------
def _wrap(a, dev=None, sources=()):
    """A device array holding NumPy array ``a`` (0-d for a NumPy scalar). A view of one of ``sources`` gets that
    array's root as its ``base`` and device, as CuPy's views do; ``a`` itself gives its array back."""
    if isinstance(a, np.generic):
        a = np.asarray(a)
    base = None
    if a.base is not None:
        for s in sources:
            if s._a is a:
                return s
            if np.may_share_memory(a, s._a):
                base, dev = s if s._base is None else s._base, s._dev
                break
    _check_dtype(a.dtype)
    out = object.__new__(ndarray)
    out._a, out._dev, out._base = a, _current[0] if dev is None else dev, base
    if a.base is None:
        _live[id(out)] = out
    return out


def _wrap_all(r, sources=()):
    if isinstance(r, (np.ndarray, np.generic)):
        return _wrap(r, None, sources)
    if isinstance(r, (tuple, list)):
        return (list if isinstance(r, list) else tuple)(_wrap_all(x, sources) for x in r)
    return r


def _sources(args, kwargs):
    """The device arrays among a call's arguments (one level into lists)."""
    out = []
    for x in (*args, *kwargs.values()):
        if isinstance(x, ndarray):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            out.extend(v for v in x if isinstance(v, ndarray))
    return out


def _unwrap(x):
    """The NumPy array behind ``x``; a NumPy array is refused, as CuPy refuses host arrays."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _index(key):
    """An index, with device arrays unwrapped (CuPy also takes host arrays and lists here)."""
    if isinstance(key, ndarray):
        return key._a
    if isinstance(key, tuple):
        return tuple(k._a if isinstance(k, ndarray) else k for k in key)
    return key


def _function(f):
    """CuPy's version of a NumPy/SciPy routine: device arrays in, device arrays out (reductions give 0-d arrays)."""
    def call(*args, **kwargs):
        with np.errstate(all="ignore"):
            r = f(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap_all(r, _sources(args, kwargs))
    call.__name__ = call.__qualname__ = f.__name__
    return call


# -- ufuncs: CuPy's loops -------------------------------------------------------------------------------------------
def _char_dtype(c):
    return _BF16 if c == "E" else np.dtype(c)


def _rank(dt):
    """bool < integers < floats < complex, the order of NEP 50's weak Python scalars."""
    return 2 if dt == _BF16 else "biufc".index(dt.kind) - (dt.kind == "u")


_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_SCALAR_DTYPE = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                 complex: np.dtype(np.complex128)}


def _fits(x, t):
    if isinstance(x, np.dtype):
        return np.can_cast(x, t, "safe")  # ml_dtypes registers bfloat16's safe casts
    return _rank(t) >= _SCALAR_RANK[x]


def _ufunc_method(name):
    def method(self, *args, **kwargs):
        impl = getattr(self._impl, name, None)
        if impl is None:
            raise NotImplementedError(f"{self.__name__}.{name} is not supported")
        with np.errstate(all="ignore"):
            return _wrap_all(impl(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
    return method


class ufunc:
    """A CuPy ufunc: the loop is the first of CuPy's type signatures the inputs cast to safely (Python scalars are
    weak; out-of-bound Python integers raise), computed in NumPy (bfloat16 through float32 where NumPy has no loop)."""

    def __init__(self, name, nin, nout, sigs, impl):
        self.__name__, self.nin, self.nout, self.types, self._impl = name, nin, nout, sigs, impl
        self._loops = [([_char_dtype(c) for c in s[:nin]], [_char_dtype(c) for c in s[-nout:]]) for s in sigs]

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def _kinds(self, inputs):
        arrays = [x.dtype for x in inputs if isinstance(x, ndarray)]
        top = max(map(_rank, arrays), default=-1)
        kinds = []
        for x in inputs:
            if isinstance(x, ndarray):
                kinds.append(x.dtype)
            elif isinstance(x, (np.generic, np.dtype)):
                kinds.append(np.dtype(x.dtype))
            elif type(x) in _SCALAR_RANK:
                kinds.append(type(x) if _SCALAR_RANK[type(x)] <= top else _SCALAR_DTYPE[type(x)])
            else:
                raise TypeError(f"Unsupported type {type(x)}")
        return kinds

    def _loop(self, inputs, dtype):
        kinds = self._kinds(inputs)
        for ins, outs in self._loops:
            if dtype is not None and any(t != np.dtype(dtype) for t in ins):
                continue
            if all(_fits(k, t) for k, t in zip(kinds, ins)):
                return ins, outs
        got = tuple(k if isinstance(k, np.dtype) else k.__name__ for k in kinds)
        raise TypeError(f"Wrong type ({got}) of arguments for {self.__name__}")

    def __call__(self, *inputs, out=None, dtype=None, casting="same_kind"):
        if len(inputs) == self.nin + self.nout and out is None:
            inputs, out = inputs[:self.nin], inputs[self.nin:]
        if len(inputs) != self.nin:
            raise TypeError(f"Wrong number of arguments for {self.__name__!r}. It must be either {self.nin} or "
                            f"{self.nin + self.nout} (with outputs), but given {len(inputs)}.")
        ins, outs = self._loop(inputs, dtype)
        for x, t in zip(inputs, ins):
            if type(x) is int and t.kind in "iu" and not np.iinfo(t).min <= x <= np.iinfo(t).max:
                raise OverflowError(f"Python integer {x} out of bounds for {t}.")
        args = [np.asarray(_unwrap(x)).astype(t, copy=False) for x, t in zip(inputs, ins)]
        with np.errstate(all="ignore"):
            try:
                res = self._impl(*args)
            except TypeError:  # no NumPy loop for bfloat16: through float32
                if not any(t == _BF16 for t in ins):
                    raise
                res = self._impl(*(a.astype(np.float32) if a.dtype == _BF16 else a for a in args))
        res = res if isinstance(res, tuple) else (res,)
        res = [np.asarray(r).astype(t, copy=False) for r, t in zip(res, outs)]
        if out is None:
            wrapped = [_wrap(r) for r in res]
        else:
            outs_given = out if isinstance(out, tuple) else (out,)
            for o, r in zip(outs_given, res):
                if not isinstance(o, ndarray):
                    raise TypeError("Output arguments must be cupy.ndarray")
                if casting == "same_kind" and _rank(r.dtype) > _rank(o.dtype):
                    raise TypeError(f"output (typecode '{r.dtype.char}') could not be coerced to provided output "
                                    f"parameter (typecode '{o.dtype.char}') according to the casting rule "
                                    "''same_kind''")
                o._a[...] = r
            wrapped = list(outs_given)
        return wrapped[0] if self.nout == 1 else tuple(wrapped)

    reduce, accumulate, reduceat, outer = (_ufunc_method(n) for n in ("reduce", "accumulate", "reduceat", "outer"))

    def at(self, a, indices, b=None):
        short = self.__name__.rpartition(".")[2]
        if short not in _AT_DTYPES:
            raise NotImplementedError(f"`cupy_{short}.at` is not supported yet")
        if a.dtype.name not in _AT_DTYPES[short]:
            raise TypeError(f"cupy.{short}.at only supports {', '.join(_AT_DTYPES[short])} as data type")
        args = (_index(indices),) if b is None else (_index(indices), _unwrap(b))
        self._impl.at(a._a, *args)


# the dtypes CuPy 14.2's ufunc.at takes (others raise as above)
_AT_DTYPES = {"add": ("int32", "int64", "float16", "float32", "float64", "uint32", "uint64"),
              "minimum": ("int32", "int64", "float32", "float64", "uint32", "uint64"),
              "maximum": ("int32", "int64", "float32", "float64", "uint32", "uint64")}


def _at_inf(fn, value):
    """``fn`` with ``value(x)`` at ±inf."""
    return lambda x: np.where(np.isinf(x), value(x), fn(x))


def _scaled(fn):
    """CuPy's ``exp(-|x|) * fn(x)`` in x's precision (NaN where fn overflows)."""
    return lambda x: np.exp(-np.abs(x)) * fn(x)


_CUDA_I0 = _at_inf(scipy.special.i0, lambda x: np.inf)
_CUDA_I1 = _at_inf(scipy.special.i1, lambda x: x)
def _flush(x):
    return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), x), x)


def _cuda_nextafter(a, b):
    """CuPy's kernel, compiled with -ftz=true: float32's subnormals flushed to zero, in and out."""
    return _flush(np.nextafter(_flush(a), _flush(b))) if a.dtype == np.float32 else np.nextafter(a, b)


# CuPy's Bessel kernels are CUDA's math library's: j0(±inf) = +0, j1(±inf) = ±0, y0(+inf) = y1(+inf) = +0,
# cyl_bessel_i0(±inf) = +inf and cyl_bessel_i1(±inf) = ±inf (SciPy gives NaN)
_CUDA_MATH = {"nextafter": _cuda_nextafter, "special.i0": _CUDA_I0, "special.i1": _CUDA_I1,
              "special.i0e": _scaled(_CUDA_I0), "special.i1e": _scaled(_CUDA_I1),
              "special.j0": _at_inf(scipy.special.j0, lambda x: np.zeros_like(x)),
              "special.j1": _at_inf(scipy.special.j1, lambda x: np.copysign(np.zeros_like(x), x)),
              "special.y0": _at_inf(scipy.special.y0, lambda x: np.where(x > 0, 0.0, np.nan).astype(x.dtype)),
              "special.y1": _at_inf(scipy.special.y1, lambda x: np.where(x > 0, 0.0, np.nan).astype(x.dtype))}


def _ufuncs():
    out = {}
    for name, (nin, nout, sigs) in _api.UFUNCS.items():
        mod, _, short = name.rpartition(".")
        impl = _CUDA_MATH.get(name) or getattr(scipy.special if mod else np, short, None)
        if impl is not None:
            out[name] = ufunc(short, nin, nout, sigs, impl)
    return out


_UFUNCS = _ufuncs()


def _method(name):
    def method(self, *args, **kwargs):
        with np.errstate(all="ignore"):
            r = getattr(self._a, name)(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap_all(r, (self,))
    method.__name__ = name
    return method


def _operator(name, reflected=False, inplace=False):
    f = _UFUNCS[name]

    def op(self, other):
        if not isinstance(other, (ndarray, np.generic, bool, int, float, complex)):
            if isinstance(other, np.ndarray):
                raise TypeError(f"Unsupported type {type(other)}")
            return NotImplemented
        if inplace:
            return f(self, other, out=self)
        return f(other, self) if reflected else f(self, other)
    return op


for _n in sorted(_api.NDARRAY):
    if not _n.startswith("_") and _n not in ndarray.__dict__ and hasattr(np.ndarray, _n):
        setattr(ndarray, _n, _method(_n))
for _n, _u in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
               ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
               ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"), ("rshift", "right_shift")):
    setattr(ndarray, f"__{_n}__", _operator(_u))
    setattr(ndarray, f"__r{_n}__", _operator(_u, reflected=True))
    setattr(ndarray, f"__i{_n}__", _operator(_u, inplace=True))
for _n, _u in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"), ("eq", "equal"),
               ("ne", "not_equal"), ("divmod", "divmod")):
    setattr(ndarray, f"__{_n}__", _operator(_u))
ndarray.__rdivmod__ = _operator("divmod", reflected=True)
for _n, _u in (("neg", "negative"), ("pos", "positive"), ("abs", "absolute"), ("invert", "invert")):
    setattr(ndarray, f"__{_n}__", lambda self, _f=_UFUNCS[_u]: _f(self))
ndarray.__matmul__ = lambda self, other: _cupy.matmul(self, other)
ndarray.__rmatmul__ = lambda self, other: _cupy.matmul(other, self)
ndarray.__imatmul__ = lambda self, other: _cupy.matmul(self, other, out=self)


# -- creation from host data -----------------------------------------------------------------------------------------
def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        return _wrap(np.array(obj._a, dtype=dtype, copy=copy, order=order, ndmin=ndmin), None, (obj,))
    if isinstance(obj, (list, tuple)) and any(isinstance(x, ndarray) for x in obj):
        if not all(isinstance(x, ndarray) for x in obj):
            ndarray.__array__(obj[0])
        return _wrap(np.array([x._a for x in obj], dtype=dtype, order=order, ndmin=ndmin))
    return _wrap(np.array(obj, dtype=dtype, order=order, ndmin=ndmin))


def asarray(a, dtype=None, order=None, *, blocking=False):
    return array(a, dtype, None, order or "K")


def ascontiguousarray(a, dtype=None):
    a = array(a, dtype, None)
    return _wrap(np.ascontiguousarray(a._a), None, (a,))


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args):
    return _MODULES["cupy"] if any(isinstance(a, ndarray) for a in args) else np


class _Producer:
    """A CPU DLPack producer over a capsule, for NumPy to read a simulated device capsule."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(obj, *, device=None, copy=None):
    if isinstance(obj, ndarray):
        return _wrap(obj._a[...], None, (obj,))
    kind, index = obj.__dlpack_device__()
    if int(kind) != 2:
        raise BufferError(f"from_dlpack: the producer's device type {int(kind)} is not CUDA")
    return _wrap(np.from_dlpack(_Producer(obj.__dlpack__())), index)


# -- devices, memory, random -----------------------------------------------------------------------------------------
class CUDARuntimeError(RuntimeError):
    pass


def _runtime():
    def getDeviceCount():
        return DEVICE_COUNT

    def getDevice():
        return _current[0]

    def setDevice(i):
        if not 0 <= i < DEVICE_COUNT:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        _current[0] = i

    def getDeviceProperties(i):
        if not 0 <= i < DEVICE_COUNT:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        return {"name": b"Simulated CUDA device", "totalGlobalMem": 80 << 30, "major": 9, "minor": 0,
                "multiProcessorCount": 132, "warpSize": 32, "maxThreadsPerBlock": 1024}

    return _module("cupy.cuda.runtime", getDeviceCount=getDeviceCount, getDevice=getDevice, setDevice=setDevice,
                   getDeviceProperties=getDeviceProperties, runtimeGetVersion=lambda: 12080,
                   driverGetVersion=lambda: 12080, CUDARuntimeError=CUDARuntimeError)


class Device:
    """``cupy.cuda.Device(i)``: a device id; ``with`` makes it current."""

    def __init__(self, device=None):
        self.id = _current[0] if device is None else int(device)
        if not 0 <= self.id < DEVICE_COUNT:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._saved = []

    def __enter__(self):
        self._saved.append(_current[0])
        _current[0] = self.id
        return self

    def __exit__(self, *exc):
        _current[0] = self._saved.pop()

    def use(self):
        _current[0] = self.id

    def synchronize(self):
        pass

    compute_capability = property(lambda self: "90")
    mem_info = property(lambda self: ((80 << 30) - _used(self.id), 80 << 30))

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


def _used(dev):
    return sum(a._a.nbytes for a in list(_live.values()) if a._dev == dev)


class MemoryPool:
    """The default memory pool: bytes held by the live arrays of the current device."""

    def used_bytes(self):
        return _used(_current[0])

    def total_bytes(self):
        return _used(_current[0])

    def free_bytes(self):
        return 0

    def free_all_blocks(self, stream=None):
        pass


_POOL, _PINNED = MemoryPool(), MemoryPool()


class RandomState:
    """``cupy.random.RandomState``: draws from NumPy's Philox generator keyed by ``seed``."""

    def __init__(self, seed=None, method=None):
        self._g = np.random.Generator(np.random.Philox(seed))

    @staticmethod
    def _float(dtype):
        dt = np.dtype(dtype)
        if dt.char not in "fd":
            raise TypeError("cupy.random only supports float32 and float64")
        return dt

    def random_sample(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.random(size, self._float(dtype))))

    def standard_normal(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.standard_normal(size, self._float(dtype))))

    def randint(self, low, high=None, size=None, dtype="l"):
        return _wrap(np.asarray(self._g.integers(low, high, size, dtype)))

    def poisson(self, lam=1.0, size=None, dtype=int):
        return _wrap(np.asarray(self._g.poisson(_unwrap(lam), size)).astype(dtype))

    def binomial(self, n, p, size=None, dtype=int):
        return _wrap(np.asarray(self._g.binomial(_unwrap(n), _unwrap(p), size)).astype(dtype))

    def permutation(self, num):
        return _wrap(self._g.permutation(num))


# -- modules ---------------------------------------------------------------------------------------------------------
def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def _namespace(name, names, *sources):
    """A module with ``names``: ufuncs, wrapped routines of the first of ``sources`` that has each, and NumPy's
    constants, types and dtypes as they are."""
    attrs, prefix = {}, "special." if name.endswith("special") else ""
    for n in names:
        if prefix + n in _UFUNCS:
            attrs[n] = _UFUNCS[prefix + n]
            continue
        obj = next((getattr(s, n) for s in sources if hasattr(s, n)), None)
        if obj is None:
            continue
        attrs[n] = obj if isinstance(obj, type) or not callable(obj) else _function(obj)
    return _module(name, **attrs)


_curand = _module("cupy.cuda.curand", CURAND_RNG_PSEUDO_DEFAULT=100, CURAND_RNG_PSEUDO_XORWOW=101,
                  CURAND_RNG_PSEUDO_MRG32K3A=121, CURAND_RNG_PSEUDO_MTGP32=141, CURAND_RNG_PSEUDO_MT19937=142,
                  CURAND_RNG_PSEUDO_PHILOX4_32_10=161)
cuda = _module("cupy.cuda", Device=Device, runtime=_runtime(), curand=_curand, MemoryPool=MemoryPool,
               is_available=lambda: True)
_random = _module("cupy.random", RandomState=RandomState)
_creation = dict(ndarray=ndarray, ufunc=ufunc, array=array, asarray=asarray, asanyarray=asarray,
                 ascontiguousarray=ascontiguousarray, asnumpy=asnumpy, get_array_module=get_array_module,
                 from_dlpack=from_dlpack, fromDlpack=from_dlpack, get_default_memory_pool=lambda: _POOL,
                 get_default_pinned_memory_pool=lambda: _PINNED)

# CuPy's where is a ufunc over (condition as bool, x, y); it has no bfloat16 loop, so bfloat16 operands give float32
_WHERE = ufunc("where", 3, 1, ("???->?", "?bb->b", "?BB->B", "?hh->h", "?HH->H", "?ii->i", "?II->I", "?ll->l",
                               "?LL->L", "?qq->q", "?QQ->Q", "?ee->e", "?ff->f", "?dd->d", "?FF->F", "?DD->D"),
               np.where)


def where(condition, x=None, y=None):
    if x is None and y is None:
        return _cupy.nonzero(condition)
    if x is None or y is None:
        raise ValueError("Must provide both 'x' and 'y' or neither.")
    return _WHERE(condition.astype("?"), x, y)  # a condition that is no array fails here, as in CuPy


_creation["where"] = where


def _stable(f):
    """``f`` (a sort) always stable, as CuPy's sorts are."""
    def sort(a, axis=-1, kind=None):
        return f(a, axis, kind="stable")
    sort.__name__ = f.__name__
    return sort


for _n in ("sort", "argsort"):
    setattr(ndarray, _n, _stable(_method(_n)))
    _creation[_n] = _function(_stable(getattr(np, _n)))
_cupy = _namespace("cupy", _api.CUPY - set(_creation), np)
_cupy.__dict__.update(_creation, cuda=cuda, random=_random, __version__="14.2.0",
                      linalg=_namespace("cupy.linalg", _api.LINALG, np.linalg),
                      fft=_namespace("cupy.fft", _api.FFT, np.fft),
                      lib=_module("cupy.lib", stride_tricks=_namespace("cupy.lib.stride_tricks", _api.STRIDE_TRICKS,
                                                                       np.lib.stride_tricks)))
_special = _namespace("cupyx.scipy.special", _api.SPECIAL, scipy.special)
_scipy_linalg = _namespace("cupyx.scipy.linalg", _api.SCIPY_LINALG, scipy.linalg)
_scipy = _module("cupyx.scipy", special=_special, linalg=_scipy_linalg)
_cupyx = _module("cupyx", scipy=_scipy)

_MODULES = {"cupy": _cupy, "cupy.cuda": cuda, "cupy.cuda.runtime": cuda.runtime, "cupy.cuda.curand": _curand,
            "cupy.random": _random, "cupy.linalg": _cupy.linalg, "cupy.fft": _cupy.fft, "cupy.lib": _cupy.lib,
            "cupy.lib.stride_tricks": _cupy.lib.stride_tricks, "cupyx": _cupyx,
            "cupyx.scipy": _scipy, "cupyx.scipy.special": _special, "cupyx.scipy.linalg": _scipy_linalg}


def modules():
    """The stand-in's modules by the names ``sys.modules`` should give them."""
    _current[0] = 0
    return dict(_MODULES)
