"""Creation functions against torch: inference, call forms, values, out=, errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

from .helpers import assert_same, same_error, torch_dtype

nan, inf = float("nan"), float("inf")

TENSOR_DATA = [
    "1", "2.5", "True", "1+2j", "[1, 2.0, True]", "[True, False]", "[1, True]", "[[1, 2], [3, 4]]", "[]", "[[]]",
    "[[], []]", "((1, 2), [3, 4])", "range(3)", "[range(2), range(2)]", "[1, 2+1j]", "-2**63",
    "[np.float64(1), 2]", "np.float64(1)", "np.float32(1)", "np.int32(1)", "np.bool_(1)", "[np.int32(1), np.int32(2)]",
    "[np.float32(1), 2]", "[np.float16(1), 2.5]", "[np.int8(1), np.uint8(2)]", "[np.complex64(1), 2.]",
    "[[np.float64(1)], [2]]", "np.array(1.0)", "np.array([1, 2], dtype=np.int32)",
    "[np.array([1., 2.]), [2, 3]]", "[[1, 2], np.array([1, 2], dtype=np.int32)]",
    "[np.array([1., 2.], dtype=np.float32), np.array([1, 2], dtype=np.int32)]",
    "[nan, inf, -inf]", "[[[1.5]]]",
]


def _eval(src, lib):
    return eval(src, {"np": np, "nan": nan, "inf": inf, "T": lib.tensor})


@pytest.mark.parametrize("src", TENSOR_DATA)
def test_tensor_inference(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(ember.tensor(_eval(src, ember)), torch.tensor(_eval(src, torch)))


@pytest.mark.parametrize("src", ["[T(1), T(2)]", "[T(1.), T(2, dtype={m}.int32)]",
                                 "[T(1, dtype={m}.int32), T(2, dtype={m}.int32)]", "[T(1, dtype={m}.int32), 2]", "[T(1., dtype={m}.float64), 2]", "[T([1.])]",
                                 "[T(1, dtype={m}.uint8), T(1, dtype={m}.int8)]", "[T(True), 2]",
                                 "[T(1.5, dtype={m}.bfloat16)]",
                                 "[T(1.5, dtype={m}.bfloat16), T(1.5, dtype={m}.float16)]",
                                 "[[T(1), T(2)], [T(3), 4]]"])
def test_tensor_from_list_of_tensors(src):
    e = eval(src.format(m="ember"), {"T": ember.tensor, "ember": ember})
    t = eval(src.format(m="torch"), {"T": torch.tensor, "torch": torch})
    assert_same(ember.tensor(e), torch.tensor(t))


@pytest.mark.parametrize("src,dtype", [
    ("[1.7, -2.7]", "int32"), ("3.5", "int32"), ("[-1]", "uint8"), ("-1", "uint8"), ("[1.5, 0.]", "bool"),
    ("[2, 0]", "bool"), ("[1e300]", "float32"), ("[1e300]", "float16"), ("[1, 2]", "float16"), ("[1/3]", "bfloat16"),
    ("[1, 2]", "complex64"), ("np.array([300])", "uint8"), ("[[1, 2]]", "float64"), ("[True, False]", "float32"),
])
def test_tensor_with_dtype(src, dtype):
    assert_same(ember.tensor(_eval(src, ember), dtype=getattr(ember, dtype)),
                torch.tensor(_eval(src, torch), dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("src,dtype", [
    ("[[1, 2], [3]]", None), ("[[1, 2], 3]", None), ("[1, [2]]", None), ("[1., [2.]]", None), ("[[1], [2, 3]]", None),
    ("[[1, 2], [3, 4], [5]]", None), ("[[[1, 2]], [[3, 4], [5, 6]]]", None), ("[[1], []]", None),
    ("'a'", None), ("None", None), ("[1, None]", None), ("[1, 'a']", None), ("[1, object()]", None), ("{1: 2}", None),
    ("2**63", None), ("[2**64]", None), ("[T([1., 2.])]", None), ("np.arange(4)[::-1]", None),
    ("[300]", "int8"), ("[-300]", "uint8"), ("[1e10]", "int32"), ("[2**40]", "int32"), ("[1+1j]", "float32"),
    ("[inf]", "int64"), ("[nan]", "int32"),
])
def test_tensor_errors(src, dtype):
    same_error(lambda: ember.tensor(_eval(src, ember), dtype=dtype and getattr(ember, dtype)),
               lambda: torch.tensor(_eval(src, torch), dtype=dtype and getattr(torch, dtype)))


def test_tensor_copies_and_requires_grad():
    a = np.arange(3.)
    t = ember.tensor(a)
    a[0] = 7
    assert t.tolist() == [0., 1., 2.]
    x = ember.tensor([1., 2.], requires_grad=True)
    assert x.requires_grad and x.is_leaf
    with pytest.warns(UserWarning, match="To copy construct"):
        y = ember.tensor(x)
    assert not y.requires_grad and y._data is not x._data
    same_error(lambda: ember.tensor([1, 2], requires_grad=True), lambda: torch.tensor([1, 2], requires_grad=True))
    same_error(lambda: ember.zeros(2, dtype=ember.int64, requires_grad=True),
               lambda: torch.zeros(2, dtype=torch.int64, requires_grad=True))


def test_legacy_constructor():
    assert_same(ember.Tensor([1, 2]), torch.Tensor([1, 2]))
    assert_same(ember.Tensor(np.array([1, 2])), torch.Tensor(np.array([1, 2])))
    assert_same(ember.Tensor(), torch.Tensor())
    assert_same(ember.Tensor((2, 3)), torch.Tensor((2, 3)))
    assert ember.Tensor(2, 3).shape == (2, 3) and ember.Tensor(2, 3).dtype is ember.float32
    assert ember.Tensor(ember.Size([2, 4])).shape == (2, 4)
    same_error(lambda: ember.Tensor(2.5), lambda: torch.Tensor(2.5))


def test_from_numpy_shares_memory():
    a = np.zeros(3, dtype=np.float32)
    t = ember.from_numpy(a)
    assert t.dtype is ember.float32
    t.fill_(2.0)
    assert a.tolist() == [2., 2., 2.]
    a[1] = 5
    assert t.tolist() == [2., 5., 2.]
    assert np.shares_memory(np.asarray(t), a)
    for dt in (np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_, np.complex64):
        assert_same(ember.from_numpy(np.ones((2, 1), dt)), torch.from_numpy(np.ones((2, 1), dt)))
    assert ember.from_numpy(np.ones(2, "V2").view(ember.bfloat16.np)).dtype is ember.bfloat16
    assert ember.from_numpy(np.ones((3, 4))[:, ::2]).stride() == torch.from_numpy(np.ones((3, 4))[:, ::2]).stride()


def test_from_numpy_errors_and_readonly_warning():
    for bad in ("np.arange(4)[::-1]", "np.arange(4, dtype='>i4')", "[1]"):
        same_error(lambda: ember.from_numpy(eval(bad)), lambda: torch.from_numpy(eval(bad)))
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        ember.from_numpy(np.arange(3, dtype=np.longdouble))
    ro = np.arange(3.)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        t = ember.from_numpy(ro)
    assert t.tolist() == [0., 1., 2.]


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(4.)
    t = ember.as_tensor(a)
    assert np.shares_memory(t.numpy(), a)
    assert not np.shares_memory(ember.as_tensor(a, dtype=ember.float32).numpy(), a)
    x = ember.ones(3)
    assert ember.as_tensor(x) is x
    assert ember.as_tensor(x, dtype=ember.float64).dtype is ember.float64
    assert_same(ember.as_tensor([1, 2], dtype=ember.float32), torch.as_tensor([1, 2], dtype=torch.float32))
    assert_same(ember.as_tensor(3), torch.as_tensor(3))
    assert np.shares_memory(ember.asarray(a).numpy(), a)
    assert not np.shares_memory(ember.asarray(a, copy=True).numpy(), a)
    with pytest.raises(ValueError):
        ember.asarray(a, dtype=ember.float32, copy=False)
    with pytest.raises(ValueError):
        ember.asarray([1, 2], copy=False)
    assert ember.asarray(x) is x
    r = ember.asarray([1, 2], dtype=ember.float32, requires_grad=True)
    assert r.requires_grad and r.dtype is ember.float32
    tt = torch.arange(3.)
    e = ember.asarray(tt)  # through DLPack
    e.fill_(4.0)
    assert tt.tolist() == [4., 4., 4.]
    same_error(lambda: ember.as_tensor(np.arange(4)[::-1]), lambda: torch.as_tensor(np.arange(4)[::-1]))


SIZES = ["2, 3", "(2, 3)", "[2, 3]", "[]", "()", "0", "size=(2, 3)", "S([2])", "np.int64(2)", "T(2)", "[2, T(3)]"]


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty", "rand", "randn"])
@pytest.mark.parametrize("size", SIZES)
def test_size_call_forms(fn, size):
    e = eval(f"ember.{fn}({size})", {"ember": ember, "np": np, "S": ember.Size, "T": ember.tensor})
    t = eval(f"torch.{fn}({size})", {"torch": torch, "np": np, "S": torch.Size, "T": torch.tensor})
    assert tuple(e.shape) == tuple(t.shape) and torch_dtype(e.dtype) == t.dtype
    if fn in ("zeros", "ones"):
        assert_same(e, t)


@pytest.mark.parametrize("call", ["zeros(2, 3.0)", "zeros(-1)", "zeros((2,), (3,))", "zeros(2.5)", "zeros('a')",
                                  "ones(2, -1)", "empty(-1)", "full((-1,), 2)", "full(2, 3)", "zeros(2, dtype=3)",
                                  "rand(-1)", "empty_strided((-1,), (1,))", "eye(-1)", "eye(2, -1)"])
def test_size_errors(call):
    same_error(lambda: eval("ember." + call), lambda: eval("torch." + call))


@pytest.mark.parametrize("dtype", [None, "float64", "int32", "bool", "float16", "bfloat16", "complex64"])
def test_filled(dtype):
    kw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
    tk = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    assert_same(ember.zeros(2, 3, **kw), torch.zeros(2, 3, **tk))
    assert_same(ember.ones(4, **kw), torch.ones(4, **tk))
    assert ember.empty(2, 2, **kw).dtype is (kw.get("dtype") or ember.float32)
    assert_same(ember.eye(3, 2, **kw), torch.eye(3, 2, **tk))
    assert_same(ember.eye(0, **kw), torch.eye(0, **tk))
    assert_same(ember.full((2, 1), 1, **kw), torch.full((2, 1), 1, **tk))


@pytest.mark.parametrize("value", ["True", "3", "3.", "1+1j", "np.float64(3)", "np.int32(3)", "T(3.)",
                                   "T(3, dtype={m}.int32)", "-1"])
def test_full_fill_dtype(value):
    e = eval(value.format(m="ember"), {"np": np, "T": ember.tensor, "ember": ember})
    t = eval(value.format(m="torch"), {"np": np, "T": torch.tensor, "torch": torch})
    assert_same(ember.full((2,), e), torch.full((2,), t))
    assert_same(ember.full([], e), torch.full([], t))
    like_e = lambda: ember.full_like(ember.ones(2, dtype=ember.int32), e)  # noqa: E731
    like_t = lambda: torch.full_like(torch.ones(2, dtype=torch.int32), t)  # noqa: E731
    if isinstance(t, complex) or getattr(t, "dtype", None) is torch.complex64:
        same_error(like_e, like_t)
    else:
        assert_same(like_e(), like_t())


@pytest.mark.parametrize("value,dtype", [
    (300, "uint8"), (-1, "uint8"), (-300, "uint8"), (3.7, "int32"), (nan, "int32"), (2 ** 40, "int32"),
    (2 ** 31, "int32"), (40000, "int16"), (200, "int8"), (1.5, "bool"), (1e300, "float32"), (1e300, "float16"),
    (70000., "float16"), (inf, "float16"), (inf, "int64"), (1e300, "bfloat16"), (1 + 1j, "float32"),
             (2 ** 64, "float32"),
    (2 ** 63, "float32"),
])
def test_full_value_checks(value, dtype):
    fe = lambda: ember.full((2,), value, dtype=getattr(ember, dtype))  # noqa: E731
    ft = lambda: torch.full((2,), value, dtype=getattr(torch, dtype))  # noqa: E731
    try:
        want = ft()
    except Exception:  # noqa: BLE001
        same_error(fe, ft)
    else:
        assert_same(fe(), want)


def test_like_functions():
    x = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    tx = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    for name in ("zeros_like", "ones_like"):
        assert_same(getattr(ember, name)(x), getattr(torch, name)(tx))
        assert not getattr(ember, name)(x).requires_grad
        assert getattr(ember, name)(x, requires_grad=True).requires_grad
        assert_same(getattr(ember, name)(x, dtype=ember.int8), getattr(torch, name)(tx, dtype=torch.int8))
    assert ember.empty_like(x).shape == (2, 3) and ember.empty_like(x).dtype is ember.float64
    assert_same(ember.full_like(x, 7), torch.full_like(tx, 7))
    assert_same(ember.full_like(ember.ones(2, dtype=ember.int32), 2.7),
                torch.full_like(torch.ones(2, dtype=torch.int32), 2.7))
    assert_same(ember.full_like(ember.ones(2), 2, dtype=ember.int64),
                torch.full_like(torch.ones(2), 2, dtype=torch.int64))
    # preserve_format: permuted dense inputs keep their strides
    a = torch.ones(2, 3).t()
    e = ember.from_numpy(np.ones((2, 3), np.float32).T)
    for name in ("zeros_like", "ones_like", "empty_like"):
        assert getattr(ember, name)(e).stride() == getattr(torch, name)(a).stride()
    assert ember.zeros_like(e, memory_format="contiguous_format").stride() == (2, 1)


def test_empty_strided():
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 2), (0, 1)), ((0, 3), (3, 1)), ((), ())]:
        e, t = ember.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert e.shape == t.shape and e.stride() == t.stride() and e.dtype is ember.float32
    assert ember.empty_strided((2,), (1,), dtype=ember.int32).dtype is ember.int32


def test_scalar_tensor():
    for v in (3, True, 2.5):
        assert_same(ember.scalar_tensor(v), torch.scalar_tensor(v))
    assert_same(ember.scalar_tensor(3, dtype=ember.int64), torch.scalar_tensor(3, dtype=torch.int64))


ARANGE = ["5", "0, 1, 0.1", "1, 0, -0.3", "0, 10, 3", "10, 0, -3", "0.5, 5, dtype={m}.int32",
          "-1.5, 2.5, dtype={m}.int64",
          "5, 5", "T(3)", "3.", "np.float64(3)", "np.int32(3)", "T(3.5)", "5, dtype={m}.float16", "0, 1.0000001, 0.1",
          "0, 0.3, 0.1", "0, 0.3, 0.1, dtype={m}.float64", "1, 2.5, 0.5, dtype={m}.float64", "0, 1, 1/3",
          "10**18, 10**18+3",
          "True", "3, dtype={m}.uint8", "-3, 3, 0.7", "0, 2, 0.25, dtype={m}.bfloat16", "1e-3, 1e-2, 1e-3",
          "-5, -20, -1.5", "0, 100, 7, dtype={m}.int8", "start=2, end=9, step=2"]


@pytest.mark.parametrize("args", ARANGE)
def test_arange(args):
    e = eval(f"ember.arange({args.format(m='ember')})", {"ember": ember, "np": np, "T": ember.tensor})
    t = eval(f"torch.arange({args.format(m='torch')})", {"torch": torch, "np": np, "T": torch.tensor})
    assert_same(e, t, exact=False)


@pytest.mark.parametrize("args", ["0, 1, 0.1, dtype={m}.int64", "-1.5, 2.5, 0.5, dtype={m}.int64", "0, 10, -1",
                                  "0, 10, 0", "5, 2", "0, float('inf')", "0, float('nan')", "1, 4, dtype={m}.bool"])
def test_arange_errors(args):
    same_error(lambda: eval(f"ember.arange({args.format(m='ember')})"),
               lambda: eval(f"torch.arange({args.format(m='torch')})"))


LINSPACE = ["0, 10, 5, dtype={m}.int64", "0, 1, 5, dtype={m}.int64", "-1, 10, 7, dtype={m}.int32",
            "10, -1, 7, dtype={m}.int32", "0, 1, 1", "0, 1, 0", "3, 7, 4", "T(0.), T(1.), 3",
            "0, 5, 4, dtype={m}.uint8",
            "0, 255, 7, dtype={m}.uint8", "0, 100, 7, dtype={m}.int8", "-3, 5, 5, dtype={m}.int64", "1+1j, 2, 3",
            "-10, 10, 101", "0, 1, 50, dtype={m}.float64", "0, 1, 9, dtype={m}.float16", "0, 1, 9, dtype={m}.bfloat16",
            "2.5, -7.25, 13", "0.1, 0.7, 7, dtype={m}.int64"]


@pytest.mark.parametrize("args", LINSPACE)
def test_linspace(args):
    e = eval(f"ember.linspace({args.format(m='ember')})", {"ember": ember, "T": ember.tensor})
    t = eval(f"torch.linspace({args.format(m='torch')})", {"torch": torch, "T": torch.tensor})
    assert_same(e, t, exact=not e.dtype.is_floating_point and not e.dtype.is_complex, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16", "bfloat16"])
def test_linspace_bit_for_bit(dtype):
    """Each value rounded once from ``start + step * i`` (or ``end - step * (steps - 1 - i)``), as torch's."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        (a, b), n = rng.uniform(-100, 100, 2), int(rng.integers(2, 300))
        e = ember.linspace(a, b, n, dtype=getattr(ember, dtype)).float().numpy()
        t = torch.linspace(a, b, n, dtype=getattr(torch, dtype)).float().numpy()
        np.testing.assert_array_equal(e, t, err_msg=f"linspace({a}, {b}, {n})")


LOGSPACE = ["0, 2, 5", "0, 3, 4, dtype={m}.int64", "0, 2, 5, dtype={m}.int64", "0, 3, 4, base=2",
            "0, 3, 4, base=2, dtype={m}.int32", "-1, 1, 3, dtype={m}.int64", "0, 5, 6, base=-2",
            "0, 1, 3, dtype={m}.float64",
            "0, 2, 5, base=3., dtype={m}.int16", "-2, 2, 9", "0, 1, 0", "1, 1, 1", "0, 4, 5, dtype={m}.float16"]


@pytest.mark.parametrize("args", LOGSPACE)
def test_logspace(args):
    e = eval(f"ember.logspace({args.format(m='ember')})", {"ember": ember})
    t = eval(f"torch.logspace({args.format(m='torch')})", {"torch": torch})
    assert_same(e, t, exact=not e.dtype.is_floating_point, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call", ["linspace(0, 1, -1)", "linspace(0, 1, 4, dtype={m}.bool)"])
def test_linspace_errors(call):
    same_error(lambda: eval("ember." + call.format(m="ember")), lambda: eval("torch." + call.format(m="torch")))


@pytest.mark.parametrize("call", [
    "zeros(2, out=O(3, dtype={m}.int64))", "ones(2, 2, out=O(1))", "arange(3, out=O(3))",
    "arange(3., out=O(3, dtype={m}.int32))", "linspace(0, 1, 3, out=O(3, dtype={m}.float64))",
    "logspace(0, 1, 3, out=O(1, dtype={m}.float64))", "eye(2, out=O(1, dtype={m}.int64))",
    "full((2,), 1.5, out=O(1, dtype={m}.int64))", "full((2,), 1.5, out=O(1, dtype={m}.float64))",
    "empty(2, out=O(2, dtype={m}.int32)).dtype",
])
def test_out(call):
    e = eval("ember." + call.format(m="ember"), {"ember": ember, "O": ember.empty})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = eval("torch." + call.format(m="torch"), {"torch": torch, "O": torch.empty})
    if isinstance(t, torch.Tensor):
        assert_same(e, t)
    else:
        assert torch_dtype(e) == t


def test_out_is_written_and_returned():
    out = ember.empty(5)
    r = ember.arange(3, out=out)
    assert r is out and out.tolist() == [0., 1., 2.] and out.dtype is ember.float32
    same_error(lambda: ember.zeros(2, dtype=ember.float32, out=ember.empty(3, dtype=ember.int64)),
               lambda: torch.zeros(2, dtype=torch.float32, out=torch.empty(3, dtype=torch.int64)))


def test_deprecated_range():
    with pytest.warns(UserWarning):
        e = ember.range(1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.range(1, 4)
        t2 = torch.range(0, 1, 0.25)
    assert_same(e, t)
    with pytest.warns(UserWarning):
        assert_same(ember.range(0, 1, 0.25), t2)


@pytest.mark.parametrize("args", [(3, 4, 1), (3, 3, -1), (4, 2, 0), (0, 3, 0), (3, 5, -2), (5, 3, 2), (1, 1, 5)])
def test_triangle_indices_like_torch(args):
    for name in ("triu_indices", "tril_indices"):
        e, t = getattr(ember, name)(*args), getattr(torch, name)(*args)
        assert e.dtype == ember.int64 and e.tolist() == t.tolist(), name
    assert ember.tril_indices(3, 3, dtype=ember.int32).dtype == ember.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        ember.triu_indices(-1, 3)
