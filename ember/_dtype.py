"""dtypes, torch's type-promotion rules, and the one mapping to NumPy/CuPy/ml_dtypes."""
import builtins as _builtins

import ml_dtypes
import numpy as np

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool


class dtype:
    """A tensor element type, named as torch names it (``ember.float32``)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_rank", "_kind")

    def __init__(self, name, np_dtype, kind, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind != "u" and kind != "b"
        self._kind = kind
        self._rank = rank

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return self.name

    def to_real(self):
        return self

    def to_complex(self):
        return {float32: complex64, float64: complex128}.get(self, complex64)


# kind: b bool, u unsigned, i signed int, f float, c complex. Category order drives promotion.
bool = dtype("bool", np.bool_, "b", 0)
uint8 = dtype("uint8", np.uint8, "u", 1)
int8 = dtype("int8", np.int8, "i", 1)
int16 = dtype("int16", np.int16, "i", 2)
int32 = dtype("int32", np.int32, "i", 3)
int64 = dtype("int64", np.int64, "i", 4)
float16 = dtype("float16", np.float16, "f", 1)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, "f", 1)
float32 = dtype("float32", np.float32, "f", 2)
float64 = dtype("float64", np.float64, "f", 3)
complex64 = dtype("complex64", np.complex64, "c", 2)
complex128 = dtype("complex128", np.complex128, "c", 3)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_FROM_NP = {d.np: d for d in ALL}
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}

_default = [float32]


def get_default_dtype():
    """Returns the default floating point dtype (initially ``ember.float32``)."""
    return _default[0]


def set_default_dtype(d):
    """Sets the default floating point dtype; must be float32 or float64 (or a half type)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype only supports floating point dtypes, got {d}")
    _default[0] = d


def from_numpy_dtype(np_dtype):
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        try:
            return _FROM_NP[np.dtype(np_dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
                            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, "
                            "int8, uint8, and bool.") from None


def to_dtype(d):
    """Accepts an ember dtype, a NumPy dtype, a Python type, or a name."""
    if isinstance(d, dtype):
        return d
    if d is builtins_float:
        return _default[0]
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if isinstance(d, str):
        hit = globals().get(d)
        if isinstance(hit, dtype):
            return hit
    if type(d).__name__ == "dtype" and str(d).startswith("torch."):  # a torch dtype, by name
        return to_dtype(str(d)[len("torch."):])
    return from_numpy_dtype(d)



def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to, by torch's table."""
    if a is b:
        return a
    ca, cb = _CATEGORY[a._kind], _CATEGORY[b._kind]
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.is_complex and lo.is_floating_point and lo._rank > hi._rank:
            return complex128
        return hi
    if ca == 0:
        return a
    if ca == 1:
        if a._kind == b._kind:
            return a if a._rank > b._rank else b
        u, s = (a, b) if a._kind == "u" else (b, a)
        return s if s._rank > 1 else int16
    if a._rank == b._rank:  # float16 with bfloat16
        return float32
    return a if a._rank > b._rank else b


def _scalar_dtype(x):
    if isinstance(x, builtins_bool):
        return bool
    if isinstance(x, builtins_int):
        return int64
    if isinstance(x, builtins_float):
        return _default[0]
    if isinstance(x, complex):
        return complex128 if _default[0] is float64 else complex64
    if isinstance(x, np.generic):
        return from_numpy_dtype(x.dtype)
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def _combine(higher, lower):
    """torch's combine_categories: a higher-priority result wins unless ``lower`` is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        if higher.is_floating_point:
            return higher.to_complex() if higher._rank >= 3 else lower
        return lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """The dtype an op over ``operands`` computes in: dimensioned tensors outrank 0-d tensors, which outrank
    Python scalars, except that a lower-priority operand of a higher category (int < float < complex) lifts it."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif x is not None:
            d = _scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_, to):
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor (torch's canCast)."""
    cf, ct = _CATEGORY[from_._kind], _CATEGORY[to._kind]
    if cf > ct:
        return False
    return not (to is bool and from_ is not bool)
