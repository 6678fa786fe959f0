"""Tensor creation and conversion idioms (factories and their argument forms, ``tensor()`` inference, ``asarray``
copy/grad semantics, buffer-protocol inputs, ranges, ``.to()`` layouts, Python scalars) against torch."""
import array
import warnings

import numpy as np
import pytest
import torch

import ember


def _norm(r, lib):
    """A comparable form of a result: tensors by dtype, shape, strides, requires_grad and values."""
    if isinstance(r, lib.Tensor):
        d = r.detach()
        vals = d.float().numpy() if d.dtype == lib.bfloat16 else d.numpy() if d.device.type == "cpu" else None
        return ("T", str(r.dtype).split(".")[-1], tuple(r.shape), r.stride(), r.requires_grad, vals)
    if isinstance(r, (list, tuple)):
        return [_norm(x, lib) for x in r]
    if isinstance(r, lib.dtype):
        return str(r).split(".")[-1]
    if isinstance(r, lib.device):
        return str(r)
    return type(r).__name__, r


def _eq(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def _same(fn):
    """``fn(ember)`` and ``fn(torch)`` give the same result, or raise the same exception type."""
    try:
        want = _norm(fn(torch), torch)
    except Exception as err:  # noqa: BLE001
        with pytest.raises(type(err)):
            fn(ember)
        return
    got = _norm(fn(ember), ember)
    assert _eq(got, want), (got, want)


def _ev(src):
    return lambda L: eval(src, {"L": L, "np": np, "array": array})


# -- sizes -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["zeros", "ones"])
@pytest.mark.parametrize("size", ["2, 3", "(2, 3)", "[2, 3]", "L.Size([2, 3])", "L.tensor(3)", "np.int64(3)",
                                  "np.int32(2), 3", "np.array(3)", "2, np.array(2)", "0", "(0, 3)", "[]", "L.Size([])",
                                  "-1", "(2, -1)", "2.0", "(2.0,)", "True", "L.tensor(2.)", "L.tensor([2, 3])",
                                  "np.array([3])", "np.array(3.0)"])
def test_size_argument_forms(fn, size):
    _same(_ev(f"L.{fn}({size})"))
    _same(_ev(f"L.empty({size}).shape"))


# -- full and *_like ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", ["(2, 3), 1.5", "[2], True", "(2,), 2", "(2,), 1+2j", "(), 3.", "(2,), np.float32(1.5)",
                                  "(2,), np.int16(3)", "(2,), L.tensor(2.5, dtype=L.float64)", "(2,), L.tensor(True)",
                                  "(2,), 1.5, dtype=L.int32", "(2,), -1, dtype=L.uint8", "(2,), 300, dtype=L.uint8",
                                  "2, 3", "(2,), L.tensor([1, 2])", "(2,), L.tensor([1])", "L.Size([2]), 1"])
def test_full_fill_values(args):
    _same(_ev(f"L.full({args})"))


@pytest.mark.parametrize("args", ["L.ones(3, dtype=L.int32), 2.7", "L.ones(3, dtype=L.int32), -2.7",
                                  "L.ones(3, dtype=L.uint8), -1", "L.ones(3, dtype=L.uint8), 256",
                                  "L.ones(3, dtype=L.bool), 0.5", "L.ones(3), float('inf'), dtype=L.int32",
                                  "L.ones(3), L.tensor(2.5)", "L.ones(3), L.tensor([2.5])", "L.ones(2, 3).t(), 2",
                                  "3, 1", "np.ones(2), 1"])
def test_full_like(args):
    _same(_ev(f"L.full_like({args})"))


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like"])
@pytest.mark.parametrize("x", ["L.ones(2, 3, 4).permute(2, 0, 1)", "L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)",
                               "L.ones(2, 3)[:, ::2]", "L.ones(4, 6)[::2, 1:]", "L.ones(3, 1, 2).expand(3, 4, 2)",
                               "L.ones(2, 3).t()[None]", "3", "np.ones(2)"])
@pytest.mark.parametrize("kw", ["", ", memory_format=L.preserve_format", ", memory_format=L.contiguous_format",
                                ", memory_format=L.channels_last", ", dtype=L.float64"])
def test_like_layouts(fn, x, kw):
    """preserve_format keeps a dense input's strides and gives other inputs dense ones in their dimension order."""
    _same(_ev(f"(lambda r: (r.shape, r.stride(), r.dtype))(L.{fn}({x}{kw}))"))


@pytest.mark.parametrize("src", ["L.empty(2, 3, 4, 5, memory_format=L.channels_last).stride()",
                                 "L.empty(2, 3, 4, memory_format=L.channels_last)",
                                 "L.empty(2, 3, 4, 5, 6, memory_format=L.channels_last_3d).stride()",
                                 "L.empty((2, 3, 4, 5), memory_format=L.preserve_format)",
                                 "L.empty_strided((2, 3), (1, 2)).stride()", "L.empty_strided((2, 3), (0, 0)).stride()",
                                 "L.empty_strided((2, 3), (3,))", "L.empty_strided((2, 3), (3, -1))",
                                 "L.empty_strided((2, 3), (1, 2)).contiguous().stride()",
                                 "L.empty_permuted((2, 3, 4), (0, 2, 1)).stride()"])
def test_memory_formats_and_strided(src):
    _same(_ev(src))


# -- tensor() ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    "array.array('f', [1.5, 2])", "array.array('d', [1.5, 2])", "array.array('i', [1, 2])", "bytearray(b'ab')",
    "memoryview(b'ab')", "memoryview(array.array('f', [1.5]))", "[bytearray(b'ab'), bytearray(b'cd')]",
    "[np.uint16(3)]", "[np.uint8(1), np.int8(-1)]", "[np.float16(1), 2]", "[L.tensor(1, dtype=L.int8), 300]",
    "[L.tensor(1.5, dtype=L.bfloat16), 2]", "[[L.tensor(1.), 2], [3, 4]]", "np.float16(2.5)", "[True, 1j]",
    "[[1, 2], [3]]", "[1, [2]]", "[L.tensor([1, 2]), L.tensor([3, 4])]", "[2**63]", "[-2**63]",
])
def test_tensor_inference(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(_ev(f"L.tensor({data})"))
        _same(_ev(f"L.as_tensor({data})"))


@pytest.mark.parametrize("data,dtype", [
    ("[255.5]", "uint8"), ("[255.]", "uint8"), ("[-0.5]", "uint8"), ("[-1]", "uint8"), ("[-0.5]", "int8"),
    ("[-128.5]", "int8"), ("[127.9]", "int8"), ("[-1.5]", "int8"), ("[1.7, -2.7]", "int32"),
    ("np.float64(300.7)", "uint8"), ("np.float64(2.5)", "uint8"), ("np.float64(-1.)", "uint8"),
    ("np.int64(300)", "uint8"), ("np.int64(-1)", "uint8"), ("np.int64(-129)", "int8"), ("np.float64(float('nan'))", "int64"),
    ("[0.1, 1/3, 1e-8, 65519., 65520.]", "float16"), ("[0.1, 1/3, 1e-40, 3.39e38]", "bfloat16"),
    ("[2**24 + 1]", "float32"), ("[True, 2]", "float16"), ("[1+2j]", "bool"),
])
def test_tensor_with_dtype_rounds_and_checks(data, dtype):
    _same(_ev(f"L.tensor({data}, dtype=L.{dtype})"))


def test_tensor_of_tensor_warns_and_copies():
    for lib in (ember, torch):
        x = lib.tensor([1., 2.], requires_grad=True)
        with pytest.warns(UserWarning, match="To copy construct"):
            y = lib.tensor(x)
        assert not y.requires_grad and y.data_ptr() != x.data_ptr()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = lib.ones(2, dtype=lib.float64).new_tensor(x)
        assert len(w) == 1 and y.dtype == lib.float64 and not y.requires_grad


# -- as_tensor / asarray / from_numpy / frombuffer -----------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "L.asarray(array.array('d', [1, 2]))", "L.asarray(array.array('d', [1, 2]), dtype=L.int32)",
    "L.asarray(bytearray(8), dtype=L.int16)", "L.asarray(memoryview(bytearray(4)))", "L.asarray(bytearray(6))",
    "L.asarray(np.float32(2.5))", "L.asarray(np.float32(2.5), copy=False)", "L.asarray([1, 2], copy=False)",
    "L.asarray([1, 2.5])", "L.asarray(3.5, dtype=L.float64)", "L.asarray(np.arange(4)[::-1])",
    "L.asarray(np.arange(3.), copy=False, dtype=L.float32)", "L.as_tensor(np.ones((2, 3)).T).stride()",
    "L.as_tensor(3.5, dtype=L.int32)", "L.as_tensor([L.tensor(1.), L.tensor(2.)])",
])
def test_asarray_forms(src):
    _same(_ev(src))


@pytest.mark.parametrize("copy", [None, True, False])
def test_asarray_buffer_shares_memory_unless_copied(copy):
    res = []
    for lib in (ember, torch):
        b = array.array("d", [1, 2])
        t = lib.asarray(b, copy=copy)
        t.add_(1)
        res.append((t.tolist(), b.tolist()))
    assert res[0] == res[1]


@pytest.mark.parametrize("make", ["L.ones(2, requires_grad=True)", "L.ones(2, requires_grad=True) * 2", "L.ones(2)"])
@pytest.mark.parametrize("kw", [{}, {"requires_grad": True}, {"requires_grad": False}, {"copy": True},
                                {"copy": True, "requires_grad": True}, {"copy": True, "requires_grad": False},
                                {"dtype": "float64"}, {"dtype": "float64", "requires_grad": False}])
def test_asarray_requires_grad_and_history(make, kw):
    """``requires_grad=None`` keeps a tensor's flag and graph (a copy is a differentiable clone)."""
    res = []
    for lib in (ember, torch):
        x = eval(make, {"L": lib})
        k = dict(kw, dtype=getattr(lib, kw["dtype"])) if "dtype" in kw else kw
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.asarray(x, **k)
        out = [y is x, y.requires_grad, y.is_leaf, x.requires_grad, y.dtype == x.dtype]
        if y.requires_grad and not y.is_leaf:
            (y * lib.arange(1., 3., dtype=y.dtype)).sum().backward()
            leaf = x if x.is_leaf else None
            out.append(None if leaf is None else leaf.grad.tolist())
        res.append(out)
    assert res[0] == res[1]


def test_asarray_warns_when_requires_grad_is_inherited():
    ember._settings._warned_once.clear()  # the warnings come once per process
    with pytest.warns(UserWarning, match="unspecified requires_grad"):
        assert ember.asarray(ember.ones(2, requires_grad=True)).requires_grad


@pytest.mark.parametrize("src", [
    "L.from_numpy(np.array([1, 2], dtype=object))", "L.from_numpy(np.array(['a']))", "L.from_numpy(np.float64(1.0))",
    "L.from_numpy(np.array(3.5))", "L.from_numpy(np.zeros((3, 4), order='F')).stride()",
    "L.from_numpy(np.zeros(3, dtype=np.uint16))", "L.from_numpy(np.zeros(3, dtype='datetime64[s]'))",
    "L.from_numpy(np.zeros(6, dtype=np.int32)[::2]).stride()", "L.from_numpy(np.arange(4.).astype('>f8'))",
    "L.from_numpy(np.zeros((2, 2), dtype=np.int32)[:, ::-1])",
])
def test_from_numpy(src):
    _same(_ev(src))


@pytest.mark.parametrize("args", [
    "bytearray(8), dtype=L.float32", "bytearray(8), dtype=L.float32, offset=4", "bytearray(8), dtype=L.float32, offset=2",
    "bytearray(8), dtype=L.float32, count=1, offset=2", "bytearray(8), dtype=L.float32, count=3",
    "bytearray(8), dtype=L.int8, offset=8", "bytearray(0), dtype=L.int8", "bytearray(8), dtype=L.int8, count=0",
    "[1, 2], dtype=L.int8", "array.array('h', [1, 2, 3]), dtype=L.int16", "array.array('h', [1, 2, 3]), dtype=L.int8",
    "bytearray(b'\\x80\\x3f'), dtype=L.bfloat16", "bytearray(4), dtype=L.float32, requires_grad=True",
    "bytearray(4), dtype=L.int32, requires_grad=True", "memoryview(bytearray(6))[::2], dtype=L.int8",
])
def test_frombuffer(args):
    _same(_ev(f"L.frombuffer({args})"))


def test_frombuffer_shares_memory():
    for lib in (ember, torch):
        b = bytearray(3)
        lib.frombuffer(b, dtype=lib.int8, offset=1).add_(2)
        assert list(b) == [0, 2, 2]


# -- ranges --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", ["0, 10, 2.5", "0, 5, 1.5", "0, 1, 0.1", "0, 3, 0.5", "-1.5, 2.5, 1.0", "0, 2.5, 1",
                                  "0.9, 3.1, 1", "0, -3, -0.5", "0.5, 5.5"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16", "float16", "float64"])
def test_arange_size_with_integer_dtypes(args, dtype):
    """int64 ranges truncate bounds and step first; other integer dtypes take the size from the given bounds."""
    _same(_ev(f"L.arange({args}, dtype=L.{dtype})"))


@pytest.mark.parametrize("args", ["0, 1, 0.1", "1, 2, 0.3", "-1, 1, 0.4", "L.tensor(0), L.tensor(5), L.tensor(2)",
                                  "np.float32(0.5), 3", "0, 5, 0", "0, 5, -1", "0, float('inf')", "L.tensor([5])",
                                  "5, dtype=L.bool", "5., requires_grad=True", "0, 2**53 + 10, 2**52"])
def test_arange_inference_and_errors(args):
    _same(_ev(f"L.arange({args})"))


@pytest.mark.parametrize("args", ["0, 5", "4, 0, -1", "1, 1", "0, 10, 3", "-3, 3, 2"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_range_is_inclusive_for_every_dtype(args, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(_ev(f"L.range({args}, dtype=L.{dtype})"))


@pytest.mark.parametrize("call", [
    "linspace(0, 10, 1)", "linspace(0, 10, 0)", "linspace(0, 10, 4, dtype=L.int32)", "linspace(0.5, 9.5, 4, dtype=L.int64)",
    "linspace(L.tensor(0), 10, L.tensor(3))", "linspace(0, 10, 3.0)", "linspace(L.tensor([0.]), 1, 3)",
    "linspace(0, L.tensor([[1.]]), 3)", "linspace(0, 1, 3, dtype=L.int64, requires_grad=True)",
    "logspace(0, 2, 3, dtype=L.int64)", "logspace(0.5, 2.5, 3, dtype=L.int64)", "logspace(-1, 2, 4, base=2, dtype=L.int64)",
    "logspace(0.5, 2.5, 3, base=2, dtype=L.int32)", "logspace(L.tensor([0.]), 2., 3)", "logspace(0, 2, 1)",
])
def test_linspace_logspace(call):
    _same(_ev("L." + call))


@pytest.mark.parametrize("args", ["4, 4", "4, 4, 1", "3, 5, 2", "5, 3, -2", "3, 3, -10", "0, 0", "3, 4, dtype=L.int32",
                                  "3, 4, dtype=L.float32", "3, 4, dtype=L.int16", "3, 4, dtype=L.uint8", "-1, 3"])
def test_triangle_indices(args):
    _same(_ev(f"L.tril_indices({args})"))
    _same(_ev(f"L.triu_indices({args})"))


@pytest.mark.parametrize("src", [
    "L.eye(3, 2)", "L.eye(0, 3)", "L.eye(L.tensor(3))", "L.eye(3, dtype=L.bool)", "L.eye(3, dtype=L.complex64)",
    "L.eye(3.0)", "L.eye(3, -1)", "L.eye(n=2, m=3)", "L.complex(L.tensor([1., 2.]), L.tensor([3., 4.]))",
    "L.complex(L.tensor([1.], dtype=L.float64), L.tensor([3.]))", "L.complex(L.tensor([1]), L.tensor([3]))",
    "L.polar(L.tensor([1., 2.], dtype=L.float64), L.tensor([0.5, -1.], dtype=L.float64))",
    "L.heaviside(L.tensor([-1., 0., 2.]), L.tensor([0.5]))", "L.heaviside(L.tensor([-1, 0, 2]), L.tensor([5]))",
    "L.heaviside(L.tensor([-1, 0, 2]), L.tensor([0.5]))", "L.heaviside(L.tensor([-1., 0., float('nan')]), 0.5)",
    "L.vander(L.tensor([1, 2, 3]))", "L.vander(L.tensor([1., 2.]), 3, increasing=True)", "L.vander(L.tensor([1, 2]), -1)",
    "L.vander(L.tensor([[1, 2]]))", "L.vander(L.tensor([1, 2], dtype=L.int8), 5)",
])
def test_structured_factories(src):
    _same(_ev(src))


# -- .to() / .type() -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", [
    "L.ones(2, 3).t().to(L.float32, copy=True).stride()", "L.ones(2, 3).t().to(L.float64).stride()",
    "L.ones(3, 1, 2).expand(3, 4, 2).to(L.float64).stride()", "L.ones(4, 6)[::2, ::3].to(L.float32, copy=True).stride()",
    "L.ones(2, 3, 4).permute(1, 2, 0)[:, ::2].double().stride()", "L.ones(2, 3).t().to('cpu', copy=True).stride()",
    "L.ones(2, 3).t().to(L.float64, memory_format=L.contiguous_format).stride()",
    "L.ones(2, 3, 4, 5).to(L.float64, memory_format=L.channels_last).stride()",
    "L.tensor([1.7, -1.2]).to(complex)", "L.tensor([1.7, -1.2]).to(float)", "L.tensor([1.7, -1.2]).to(int)",
    "L.tensor([1.7, -1.2]).to(bool)", "L.tensor([1.7, -1.2]).to(L.tensor([1], dtype=L.int8), copy=True)",
    "L.tensor([1.7, -1.2]).to('cpu', L.float64, True, True)", "L.tensor([1.7, -1.2]).to(device='cpu', dtype=L.float16)",
    "L.tensor([1.7, -1.2]).to(np.float64)", "L.tensor([1.7, -1.2]).to(foo=1)",
    "L.tensor([1.7, -1.2]).type('torch.BFloat16Tensor')", "L.tensor([1.7, -1.2]).type('torch.ComplexFloatTensor')",
    "L.tensor([1.7, -1.2]).type('torch.FooTensor')", "L.tensor([1.7, -1.2]).type(L.DoubleTensor)",
])
def test_to_and_type(src):
    _same(_ev(src))


def test_to_keeps_the_graph():
    res = []
    for lib in (ember, torch):
        x = lib.tensor([1., 2.], requires_grad=True)
        y = x.to(lib.float64, copy=True).t()
        (y * y).sum().backward()
        res.append((y.dtype == lib.float64, y.is_leaf, x.grad.tolist(), x.to(lib.float32) is x,
                    x.to(lib.float32, copy=True) is x))
    assert res[0] == res[1]


def test_complex_to_real_cast_warns_like_torch():
    """The cast keeps the real part and warns with a UserWarning, not NumPy's ComplexWarning."""
    ember._settings._warned_once.clear()  # the warnings come once per process
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e = ember.tensor([1 + 1j, -2.5 + 3j]).float()
        b = ember.tensor([1j, 0]).bool()
    assert [x.category for x in w] == [UserWarning] and "discards the imaginary part" in str(w[0].message)
    assert e.tolist() == [1.0, -2.5] and b.tolist() == [True, False]


# -- Python scalars ------------------------------------------------------------------------------------------------
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool", "complex64",
          "complex128", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tolist_item_and_python_scalars(dtype):
    def conv(L):
        v = L.tensor([[1.7, -1.2], [0., 3.]]).to(getattr(L, dtype))
        out = [v.tolist(), v[0].tolist(), v[0, 0].tolist(), v[0, 0].item(), type(v[0, 0].item()).__name__, v[:0].tolist()]
        for f in (int, float, complex, bool):
            try:
                out.append(f(v[0, 0]))
            except Exception as err:  # noqa: BLE001
                out.append(type(err).__name__)
        try:
            out.append([10, 20, 30, 40][v[1, 1]])
        except TypeError:
            out.append("TypeError")
        return out
    e, t = conv(ember), conv(torch)
    assert e == t


@pytest.mark.parametrize("src", ["int(L.tensor(1 + 0j))", "int(L.tensor(1 + 2j))", "float(L.tensor(2.5 + 0j))",
                                 "float(L.tensor(1 + 2j))", "int(L.tensor([1.5]))", "int(L.tensor([1.5, 2]))",
                                 "bool(L.tensor([]))", "int(L.tensor(float('nan')))", "L.tensor(0.1, dtype=L.bfloat16).item()",
                                 "L.tensor(7.).__index__()", "'{:.2f}'.format(L.tensor(3.14159))", "round(L.tensor(2.5))"])
def test_scalar_protocols(src):
    _same(_ev(src))


# -- new_* ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("base", ["L.ones(2, dtype=L.float64)", "L.ones(2, dtype=L.int32)",
                                  "L.ones(2, dtype=L.bfloat16, requires_grad=True)"])
@pytest.mark.parametrize("call", ["new_tensor([1.5, 2])", "new_tensor([1, 2], dtype=L.int8)", "new_tensor(3)",
                                  "new_zeros(2, 3)", "new_zeros((2, 3))", "new_zeros(L.Size([2]))", "new_ones(3)",
                                  "new_full((2,), 1.5)", "new_full((2,), 300)", "new_full(2, 1)", "new_empty((2, 3)).dtype",
                                  "new_empty_strided((2, 3), (1, 2)).stride()", "new_zeros(-1)",
                                  "new_ones((2,), requires_grad=True)", "new_full((2,), L.tensor(2.5))"])
def test_new_factories(base, call):
    _same(_ev(f"{base}.{call}"))


# -- default dtype and device --------------------------------------------------------------------------------------
@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("src", ["L.tensor([1.5])", "L.tensor([1, 2.5])", "L.zeros(2)", "L.full((2,), 1.5)",
                                 "L.arange(0, 1, 0.5)", "L.linspace(0, 1, 3)", "L.logspace(0, 1, 3)", "L.eye(2)",
                                 "L.tensor([1]) / 2", "L.as_tensor([1.5])", "L.asarray([1.5])", "L.scalar_tensor(1)",
                                 "L.tensor(np.float64(1.5))", "L.Tensor([1])", "L.asarray(bytearray(8))",
                                 "L.tensor([1]).to(float)"])
def test_default_dtype_drives_creation(default, src):
    def fn(L):
        prev = L.get_default_dtype()
        L.set_default_dtype(getattr(L, default))
        try:
            return eval(src, {"L": L, "np": np})
        finally:
            L.set_default_dtype(prev)
    _same(fn)


def test_set_default_device():
    def fn(L):
        L.set_default_device("meta")
        try:
            return [L.zeros(2).device, L.tensor([1.]).device, L.arange(3).device, L.ones(2).new_zeros(2).device,
                    L.zeros_like(L.empty(2, device="cpu")).device, L.from_numpy(np.ones(2)).device,
                    L.get_default_device(), L.as_tensor(np.ones(2)).device, L.asarray([1.]).device]
        finally:
            L.set_default_device(None)
    _same(fn)
    assert ember.zeros(1).device.type == "cpu"
