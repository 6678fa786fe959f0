"""dtypes, torch's type-promotion rules, and the one mapping to NumPy/CuPy/ml_dtypes."""
import builtins as _builtins

import ml_dtypes
import numpy as np

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool


class dtype:
    """A tensor element type, named as torch names it (``ember.float32``)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_rank", "_kind", "_bare")

    def __init__(self, name, np_dtype, kind, rank, bare=False):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind != "u" and kind != "b"
        self._kind = kind
        self._rank = rank
        self._bare = bare  # torch's barebones types (uint16/32/64, float8): few kernels, promotion refused

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return self.name

    def to_real(self):
        """The real dtype of a complex dtype (the dtype itself otherwise)."""
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        """The complex dtype of a floating dtype (complex64 for the half types, as complex32 does not exist here)."""
        if not (self.is_floating_point or self.is_complex) or self._bare:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(self)}")
        return complex128 if self is float64 or self is complex128 else complex64


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
uint16 = dtype("uint16", np.uint16, "u", 2, True)
uint32 = dtype("uint32", np.uint32, "u", 3, True)
uint64 = dtype("uint64", np.uint64, "u", 4, True)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, "f", 0, True)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, "f", 0, True)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, "f", 0, True)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, "f", 0, True)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
       uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)
_FROM_NP = {d.np: d for d in ALL}
FLOAT8_NP = frozenset(d.np for d in FLOAT8)
ML_NP = FLOAT8_NP | {bfloat16.np}  # the ml_dtypes types (their NumPy kind varies: 'V' or 'f')
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def check_device(dt, device):
    """Raises a TypeError for a dtype the device's array module cannot hold (CuPy has no float8 types)."""
    if device.type == "cuda" and dt in FLOAT8:
        raise TypeError(f"{dt} is not supported on CUDA: CuPy has no float8 arrays")

_default = [float32]


_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                 "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
                 "uint64": "UInt64", "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                 "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz"}
_C_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "float8_e4m3fn": "c10::Float8_e4m3fn",
            "float8_e5m2": "c10::Float8_e5m2", "float8_e4m3fnuz": "c10::Float8_e4m3fnuz",
            "float8_e5m2fnuz": "c10::Float8_e5m2fnuz"}


def scalar_name(d):
    """torch's ScalarType name of ``d`` as its error messages print it (``Float``, ``Long``)."""
    return _SCALAR_NAMES[d.name]


def c_name(d):
    """The C++ type name of ``d`` as torch's overflow messages print it (``float``, ``int64_t``)."""
    return _C_NAMES[d.name]


def get_default_dtype():
    """Returns the default floating point dtype (initially ``ember.float32``)."""
    return _default[0]


def set_default_dtype(d):
    """Sets the default floating point dtype; must be float32 or float64 (or a half type)."""
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError(f"set_default_dtype only supports float32, float64, float16 and bfloat16, got {d}")
    _default[0] = d


def complex_default():
    """The dtype of Python complex numbers: complex128 when the default dtype is float64, else complex64."""
    return complex128 if _default[0] is float64 else complex64


class finfo:
    """Machine limits of a floating point dtype (the real part's, for complex ones), as ``torch.finfo``."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        d = _default[0] if type is None else to_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        d = d.to_real()
        info = ml_dtypes.finfo(d.np)
        self.bits = info.bits
        # torch's numeric_limits<Float8_e5m2fnuz>::epsilon() is 2 ** -3, not the type's 2 ** -2
        self.eps = 0.125 if d is float8_e5m2fnuz else builtins_float(info.eps)
        self.max, self.min = builtins_float(info.max), builtins_float(info.min)
        self.tiny = self.smallest_normal = builtins_float(info.smallest_normal)
        self.resolution = 10.0 ** -_builtins.int(np.floor(-np.log10(self.eps)))  # 10 ** -decimal digits
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        d = to_dtype(type)
        if d._kind not in "iu":
            if d is bool:
                raise TypeError("torch.bool is not supported by torch.iinfo")
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins_int(info.max), builtins_int(info.min), d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _float8_values(d, target):
    """The float32 value of each of ``d``'s 256 codes on the way to the NumPy dtype ``target``, NaNs as torch's
    conversions give them: bit for bit for float32/float64, canonical for bfloat16 (and float16 from the fnuz
    types), zero for integers from the fnuz types."""
    codes = np.arange(256, dtype=np.uint8)
    values = codes.view(d.np).astype(np.float32)
    bits = values.view(np.uint32)
    nan = np.isnan(values)
    sign = (codes.astype(np.uint32) >> 7) << 31
    fnuz = d is float8_e4m3fnuz or d is float8_e5m2fnuz
    if target == bfloat16.np or fnuz and target == np.float16:
        bits[nan] = 0x7FC00000
    elif fnuz and target.kind in "iu":
        values[nan] = 0
    elif d is float8_e4m3fn:  # the mantissa bits move up, exponent all ones
        bits[nan] = sign[nan] | 0x7FF00000
    elif d is float8_e5m2:  # widened as float16 would be, with the quiet bit set
        bits[nan] = sign[nan] | 0x7FC00000 | (codes[nan].astype(np.uint32) & 3) << 21
    else:  # the fnuz types' one NaN, 0x80, reads as a signalling NaN
        bits[nan] = 0x7F800001
    return values


_FLOAT8_VALUES = {}


def float8_to_float32(xp, x, target):
    """The float8 array ``x`` as float32 (every float8 value is one), on the way to the NumPy dtype ``target``."""
    key = (x.dtype, target, xp)
    table = _FLOAT8_VALUES.get(key)
    if table is None:
        table = _FLOAT8_VALUES[key] = xp.asarray(_float8_values(_FROM_NP[x.dtype], target))
    return table[x.view(xp.uint8)]


def float32_to_float8(xp, x, np_dtype):
    """``x`` (any dtype but float8) as the float8 ``np_dtype``, as torch converts it: through float32, rounding to
    nearest even; float8_e4m3fn saturates to +-448 (infinities included), float8_e5m2 overflows to inf, the fnuz
    types to their NaN; a NaN keeps its sign and reads 0x7F (0x80 for fnuz)."""
    if x.dtype.kind == "c":
        x = x.real
    if x.dtype != np.float32:
        with xp.errstate(invalid="ignore", over="ignore"):
            x = x.astype(xp.float32)
    if np_dtype == float8_e4m3fn.np:
        x = xp.clip(x, -448.0, 448.0)  # NaN stays NaN
    y = x.astype(np_dtype)
    if np_dtype == float8_e5m2.np:
        y.view(xp.uint8)[...] |= xp.isnan(x)  # ml_dtypes writes 0x7E
    return y


# Ops (by ember Function name) that torch's CPU kernels refuse for uint16/32/64, and the few they run for float8
_UINT_REFUSED = frozenset((
    "Add", "Sub", "Neg", "Abs", "Sign", "Sgn", "Lt", "Le", "Gt", "Ge", "Extreme", "ArgExtreme", "SelectAlong",
    "Matmul", "AddMatmul", "Einsum", "LeftShift", "RightShift", "BitwiseNot", "Maximum", "Minimum", "Fmax", "Fmin",
    "Flip", "Pow", "Clamp", "CumExtreme", "BinCount", "Lerp", "Relu", "Gather", "Scatter", "ScatterAdd",
    "IndexSelect", "IndexAdd", "IndexCopy", "IndexFill", "IndexPut", "Tril", "Remainder", "Fmod", "FloorDivide",
    "DivFloor", "DivTrunc", "LogicalNot", "LogicalAnd", "LogicalOr", "LogicalXor", "CountNonzero", "Softmax",
    "LogSoftmax", "Histc", "SearchSorted", "MaskedScatter", "Where", "Gcd", "Lcm", "Copysign", "Heaviside"))
_FLOAT8_RUN = frozenset((
    "Mul", "Abs", "Eq", "Ne", "Matmul", "Clone", "Cat", "Index", "BasicIndex", "IndexPut", "IndexSelect", "Repeat",
    "Roll", "AllAny", "IsNan", "ConstantPad", "Split", "UnsafeSplit", "UnsafeSplitWithSizes", "Unbind", "To",
    "Overwrite", "ScatterInto", "ScatterIntoBase", "SliceScatter", "SelectScatter", "ViewScatter", "Relayout",
    "Resize", "SumToSize"))
FLOAT8_IN_FLOAT32 = frozenset(("Mul", "Matmul"))  # computed in float32, the result rounded back as torch does


def check_kernel(op, d, scalars):
    """Raises torch's NotImplementedError where its CPU kernel for ``op`` (a Function class) lacks the barebones
    dtype ``d``; ``scalars``: whether a Python number is an operand (torch's float8 mul refuses one)."""
    name = op.__name__
    if op.is_view:
        return
    if name == "Var" and d in FLOAT8:
        raise RuntimeError(f"std_var_all: Unsupported dtype {scalar_name(d)}")
    if d in FLOAT8:
        ok = name in _FLOAT8_RUN and not (scalars and name == "Mul") or \
            d is float8_e5m2 and name in ("IsInf", "IsFinite")
    else:
        ok = name not in _UINT_REFUSED
    if not ok:
        raise NotImplementedError(f"\"{name.lower()}\" not implemented for '{scalar_name(d)}'")


def from_numpy_dtype(np_dtype):
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        try:
            return _FROM_NP[np.dtype(np_dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
                            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, "
                            "int8, uint64, uint32, uint16, uint8, and bool.") from None


def to_dtype(d):
    """Accepts an ember dtype, a NumPy dtype, a Python type (``float`` is float64, as in torch), or a name."""
    if isinstance(d, dtype):
        return d
    if d is builtins_float:
        return float64
    if d is complex:
        return complex128
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
    if a._bare or b._bare:
        return _promote_bare(a, b)
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


def _promote_bare(a, b):
    """torch promotes float8 with nothing else, and uint16/32/64 only with the floating dtypes."""
    if a in FLOAT8 or b in FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote {scalar_name(a)} and "
                           f"{scalar_name(b)}")
    if a.is_floating_point:
        return a
    if b.is_floating_point:
        return b
    raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                       f"{scalar_name(a)} and {scalar_name(b)}")


def _scalar_dtype(x):
    if isinstance(x, builtins_bool):
        return bool
    if isinstance(x, builtins_int):
        return int64
    if isinstance(x, builtins_float):
        return _default[0]
    if isinstance(x, complex):
        return complex128 if _default[0] is float64 else complex64
    if isinstance(x, np.generic):  # weak, as the Python number it holds (torch takes a NumPy bool as a float)
        return _scalar_dtype(float(x) if isinstance(x, np.bool_) else x.item())
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
        # torch keeps the float's precision: float32 with a complex128 scalar is complex64 (complex32, torch's
        # result for float16, does not exist here: complex64 stands in)
        return higher.to_complex() if higher.is_floating_point else lower
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


def public_result_type(tensor, other):
    """``ember.result_type(tensor, other)``: the dtype an op on the two operands (tensors or numbers) computes in."""
    return result_type(tensor, other)


public_result_type.__name__ = public_result_type.__qualname__ = "result_type"


def _dtype_arg(fn, name, pos, d):
    """A dtype argument of a public function: a dtype or a Python type (``float`` is float64)."""
    if isinstance(d, dtype):
        return d
    if d in (builtins_bool, builtins_int, builtins_float, complex):
        return to_dtype(d)
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be torch.dtype, not {type(d).__name__}")


def public_promote_types(type1, type2):
    """``ember.promote_types``: the smallest dtype both ``type1`` and ``type2`` convert to."""
    return promote_types(_dtype_arg("promote_types", "type1", 1, type1), _dtype_arg("promote_types", "type2", 2, type2))


def public_can_cast(from_, to):
    """``ember.can_cast``: whether an op may write a ``from_`` result into a ``to`` tensor."""
    return can_cast(_dtype_arg("can_cast", "from_", 1, from_), _dtype_arg("can_cast", "to", 2, to))


public_promote_types.__name__ = public_promote_types.__qualname__ = "promote_types"
public_can_cast.__name__ = public_can_cast.__qualname__ = "can_cast"


def can_cast(from_, to):
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor (torch's canCast)."""
    cf, ct = _CATEGORY[from_._kind], _CATEGORY[to._kind]
    if cf > ct:
        return False
    return not (to is bool and from_ is not bool)
