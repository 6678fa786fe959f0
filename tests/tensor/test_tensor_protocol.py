"""The Tensor's Python protocol against torch: conversions to Python numbers, len/iter/hash, metadata, legacy
type names, new_* factories, in-place fill_/zero_/copy_ (with autograd), pickling and devices."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember

from .helpers import assert_same, same_error


def both(src):
    """Evaluates ``src`` with ``T`` as ember.tensor and as torch.tensor."""
    return eval(src, {"T": ember.tensor, "ember": ember}), eval(src, {"T": torch.tensor, "ember": torch})


@pytest.mark.parametrize("src", ["bool(T([1.]))", "bool(T(0))", "float(T(3))", "int(T([2.7]))", "int(T(-2.7))",
                                 "float(T([[2.5]]))", "complex(T(1.5))", "T([2]).__index__()", "T(True).__index__()",
                                 "[1, 2, 3][T(1)]", "len(T([[1, 2]]))", "len(ember.zeros(3, 2))",
                                 "T(2.5).__format__('.2f')",
                                 "f'{T(3):>4}'", "T([5]).__index__()"])
def test_python_number_protocol(src):
    e, t = both(src)
    assert e == t and type(e) is type(t)


@pytest.mark.parametrize("src", ["bool(T([1., 2.]))", "bool(T([]))", "float(T([1., 2.]))", "float(T([]))",
                                 "int(T([1, 2]))", "complex(T([1., 2.]))", "float(T(1+1j))", "int(T(1+1j))",
                                 "T([1., 2.]).__index__()", "T(2.).__index__()", "[1, 2][T(1.)]", "len(T(1))",
                                 "iter(T(1))", "T([1., 2.]).item()", "T([1., 2.]) in [T([1., 2.])]"])
def test_python_number_protocol_errors(src):
    same_error(lambda: eval(src, {"T": ember.tensor, "ember": ember}),
               lambda: eval(src, {"T": torch.tensor, "ember": torch}))


def test_iter_and_hash():
    e, t = ember.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 4]])
    rows = list(e)
    assert len(rows) == 2 and all(isinstance(r, ember.Tensor) for r in rows)
    for re_, rt in zip(rows, t):
        assert_same(re_, rt)
    assert [x.item() for x in ember.tensor([5, 6])] == [5, 6]
    a, b = ember.ones(1), ember.ones(1)
    assert hash(a) == id(a) and hash(a) != hash(b)
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2
    assert a in {a} and b not in {a}


def test_metadata():
    e = ember.zeros(2, 3, dtype=ember.float64)
    t = torch.zeros(2, 3, dtype=torch.float64)
    assert e.numel() == t.numel() and e.nelement() == t.nelement() and e.dim() == t.dim() and e.ndim == t.ndim
    assert e.element_size() == t.element_size() and e.nbytes == t.nbytes and e.itemsize == t.itemsize
    assert e.is_floating_point() and not e.is_complex() and e.is_cpu and not e.is_cuda and e.get_device() == -1
    assert e.size() == t.size() and e.size(1) == 3 and e.size(-1) == 3 and e.stride() == t.stride()
    assert e.shape == (2, 3) and isinstance(e.shape, ember.Size)
    assert ember.ones(2, dtype=ember.bfloat16).nbytes == 4
    assert not ember.ones(2, dtype=ember.int32).is_floating_point()
    assert ember.ones(2, dtype=ember.complex64).is_complex()
    same_error(lambda: ember.ones(2).size(2), lambda: torch.ones(2).size(2))


def test_size():
    assert repr(ember.Size([2, 3])) == repr(torch.Size([2, 3])).replace("torch.", "ember.")
    assert str(ember.Size([])) == "ember.Size([])"
    assert ember.Size([2, 3]).numel() == 6 and ember.Size([]).numel() == 1
    assert isinstance(ember.Size([2, 3])[1:], ember.Size) and ember.Size([2, 3])[1:] == (3,)
    assert isinstance(ember.Size([2]) + (3,), ember.Size) and (3,) + ember.Size([2]) == (3, 2)
    assert isinstance((3,) + ember.Size([2]), ember.Size)
    assert ember.Size([2]) == (2,) and ember.Size([ember.tensor(2)]) == (2,)
    same_error(lambda: ember.Size([2.0]), lambda: torch.Size([2.0]))
    assert pickle.loads(pickle.dumps(ember.Size([2, 3]))) == (2, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                                   "uint8", "bool", "complex64", "complex128"])
def test_legacy_type_names(dtype):
    e, t = ember.ones(2, dtype=getattr(ember, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    assert e.type() == t.type()


def test_type_conversions():
    assert_same(ember.ones(2).type("torch.DoubleTensor"), torch.ones(2).type("torch.DoubleTensor"))
    assert_same(ember.ones(2).type(ember.int32), torch.ones(2).type(torch.int32))
    assert_same(ember.ones(2).type(dtype=ember.float64), torch.ones(2).type(dtype=torch.float64))
    same_error(lambda: ember.ones(2).type("torch.FooTensor"), lambda: torch.ones(2).type("torch.FooTensor"))


def test_new_factories():
    e, t = ember.ones(2, dtype=ember.float64), torch.ones(2, dtype=torch.float64)
    for call in ["new_zeros(2, 3)", "new_zeros((2, 3))", "new_zeros(size=(2,))", "new_ones(2, dtype={m}.int32)",
                 "new_full((2,), 3.7)", "new_tensor([1, 2])", "new_empty(0).shape", "new_zeros(2, requires_grad=True)",
                 "new_full((1, 2), 2, dtype={m}.int8)", "new_tensor([1, 2], dtype={m}.int64)"]:
        re_ = eval("e." + call.format(m="ember"), {"e": e, "ember": ember})
        rt = eval("t." + call.format(m="torch"), {"t": t, "torch": torch})
        if isinstance(rt, torch.Tensor):
            assert_same(re_, rt)
            assert re_.requires_grad == rt.requires_grad
        else:
            assert tuple(re_) == tuple(rt)
    assert_same(ember.ones(2, dtype=ember.int32).new_full((2,), 3.7),
                torch.ones(2, dtype=torch.int32).new_full((2,), 3.7))
    same_error(lambda: e.new_full(2, 3), lambda: t.new_full(2, 3))
    with pytest.warns(UserWarning, match="To copy construct"):
        assert e.new_tensor(ember.ones(2)).dtype is ember.float64


# -- in-place writes -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", ["Z(2).fill_(300)", "Z(2, dtype={m}.int64).fill_(2.7)", "Z(2).fill_(T(3.))",
                                  "Z(2, dtype={m}.uint8).fill_(T(300))", "Z(2, dtype={m}.uint8).fill_(-1)",
                                  "Z(2, 3).copy_(T([0., 1., 2.]))", "Z(2, 3).copy_(T([1, 2, 3]))",
                                  "Z(2, dtype={m}.int32).copy_(T([1.7, -2.7]))",
                                  "Z(2, dtype={m}.bool).copy_(T([1.7, 0]))",
                                  "Z(2, dtype={m}.bfloat16).copy_(T([1/3, 2.]))", "O(3).zero_()", "O(2, 2).fill_(True)",
                                  "Z(3, dtype={m}.float64).copy_(T([1.5]))", "Z(2).fill_(T(2, dtype={m}.int32))",
                                  "Z((), dtype={m}.int64).fill_(7)"])
def test_fill_zero_copy_values(call):
    def run(m, lib):
        return eval(call.format(m=m), {"T": lib.tensor, "Z": lib.zeros, "O": lib.ones, m: lib})
    assert_same(run("ember", ember), run("torch", torch))


@pytest.mark.parametrize("call", ["Z(2, dtype={m}.uint8).fill_(300)", "Z(2).fill_(T([1.]))", "Z(2).fill_(T([1., 2.]))",
                                  "Z(2).copy_(O(3))", "Z(2).copy_([1, 2])", "Z(2).copy_(np.ones(2))",
                                  "Z(3).copy_(T([[1.5]]))", "Z(3, 1).copy_(O(2, 3, 1))",
                                  "Z(1).expand(3).copy_(O(3))", "Z(3, requires_grad=True).fill_(1)",
                                  "Z(3, requires_grad=True).zero_()", "Z(3, requires_grad=True).copy_(O(3))"])
def test_fill_zero_copy_errors(call):
    def run(m, lib):
        return eval(call.format(m=m), {"T": lib.tensor, "Z": lib.zeros, "O": lib.ones, m: lib, "np": np})
    same_error(lambda: run("ember", ember), lambda: run("torch", torch))


def test_in_place_writes_return_self_and_bump_version():
    x = ember.zeros(3)
    for f in (lambda: x.fill_(1), lambda: x.zero_(), lambda: x.copy_(ember.ones(3))):
        v = x._version
        assert f() is x and x._version == v + 1
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        ember.zeros(2).copy_(ember.ones(2, dtype=ember.complex64))


def test_in_place_writes_through_views():
    base = ember.zeros(2, 3)
    base.view(6).fill_(2.0)
    assert base.tolist() == [[2.0] * 3] * 2
    a = np.zeros((2, 3), np.float32)
    ember.from_numpy(a).copy_(ember.arange(3.))
    assert a.tolist() == [[0., 1., 2.]] * 2


def test_copy_autograd():
    for dst_dtype in (ember.float32, ember.float64):
        x = ember.tensor([1., 2., 3.], requires_grad=True)
        tx = torch.tensor([1., 2., 3.], requires_grad=True)
        y = ember.zeros(2, 3, dtype=dst_dtype).copy_(x * 2)
        ty = torch.zeros(2, 3, dtype=getattr(torch, dst_dtype.name)).copy_(tx * 2)
        assert y.requires_grad and y.grad_fn is not None
        g = ember.arange(6., dtype=dst_dtype).reshape(2, 3)
        y.backward(g)
        ty.backward(torch.arange(6., dtype=getattr(torch, dst_dtype.name)).reshape(2, 3))
        assert_same(x.grad, tx.grad)
    # the overwritten values get no gradient
    x = ember.tensor([1., 2.], requires_grad=True)
    y = (x * 3).copy_(ember.ones(2))
    y.backward(ember.ones(2))
    assert x.grad.tolist() == [0., 0.]
    # fill_ with a 0-d tensor sends the summed gradient to it
    v = ember.tensor(2., requires_grad=True)
    z = ember.zeros(3).fill_(v)
    z.backward(ember.ones(3))
    assert v.grad.item() == 3.0
    x = ember.tensor([1., 2.], requires_grad=True)
    y = (x * 2).zero_()
    y.backward(ember.ones(2))
    assert x.grad.tolist() == [0., 0.]
    with ember.no_grad():
        leaf = ember.ones(2, requires_grad=True)
        leaf.fill_(3.0)
        leaf.copy_(ember.zeros(2))
    assert leaf.tolist() == [0., 0.] and leaf.is_leaf


# -- pickle and deepcopy ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int64", "uint8", "bool", "complex64"])
def test_pickle_roundtrip(dtype):
    x = ember.tensor([[1, 0], [3, 1]], dtype=getattr(ember, dtype))
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x)):
        assert y.dtype is x.dtype and y.tolist() == x.tolist() and y.shape == x.shape
    y = copy.deepcopy(x)
    y.zero_()
    assert x.tolist() == ember.tensor([[1, 0], [3, 1]], dtype=getattr(ember, dtype)).tolist()


def test_pickle_and_deepcopy_autograd_state():
    x = ember.ones(2, requires_grad=True)
    assert pickle.loads(pickle.dumps(x)).requires_grad
    x.grad = ember.full((2,), 3.0)
    y = copy.deepcopy(x)
    assert y.requires_grad and y.grad.tolist() == [3.0, 3.0] and y.grad is not x.grad
    same_error(lambda: copy.deepcopy(ember.ones(2, requires_grad=True) * 2),
               lambda: copy.deepcopy(torch.ones(2, requires_grad=True) * 2))
    shared = ember.ones(2)
    a, b = copy.deepcopy([shared, shared])
    assert a is b


# -- devices ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", ["'cuda:1'", "'cuda', 1", "'cpu'", "'cpu', 0", "'cpu:1'", "'cuda'", "'meta'",
                                 "'cuda', None", "D('cpu')"])
def test_device_parsing(src):
    e = eval(f"ember.device({src})", {"ember": ember, "D": ember.device})
    t = eval(f"torch.device({src})", {"torch": torch, "D": torch.device})
    assert repr(e) == repr(t) and str(e) == str(t) and e.type == t.type and e.index == t.index
    assert pickle.loads(pickle.dumps(e)) == e


@pytest.mark.parametrize("src", ["'cuda:x'", "'gpu'", "'cuda:-1'", "'cuda:1', 1", "'cuda:01'", "' cpu'", "'CPU'",
                                 "-1", "'cuda', -1"])
def test_device_errors(src):
    same_error(lambda: eval(f"ember.device({src})"), lambda: eval(f"torch.device({src})"))


def test_device_equality():
    assert ember.device("cpu") == ember.device("cpu") and hash(ember.device("cpu")) == hash(ember.device("cpu"))
    assert (ember.device("cpu") == "cpu") == (torch.device("cpu") == "cpu")  # False: a device is not a string
    assert (ember.device("cuda") == ember.device("cuda:0")) == (torch.device("cuda") == torch.device("cuda:0"))
    assert ember.device("cuda:1") != ember.device("cuda:0")
    assert ember.ones(2, device="cpu:0").device == ember.device("cpu")
    assert ember.ones(2).device.type == "cpu" and str(ember.ones(2).device) == "cpu"
    if not ember.cuda.is_available():
        same_error(lambda: ember.device(1), lambda: torch.device(1))


def test_module_level_predicates():
    for src in ("T([1.])", "T(0)", "T([1, 2])", "T([])", "T(1+1j)"):
        e, t = both(src)
        assert ember.is_tensor(e) == torch.is_tensor(t) and ember.numel(e) == torch.numel(t)
        assert ember.is_floating_point(e) == torch.is_floating_point(t)
        assert ember.is_complex(e) == torch.is_complex(t)
        if torch.numel(t) == 1:
            assert ember.is_nonzero(e) == torch.is_nonzero(t)
        else:
            same_error(lambda: ember.is_nonzero(e), lambda: torch.is_nonzero(t))
    assert not ember.is_tensor([1]) and not ember.is_tensor(np.ones(1))


def test_in_place_writes_keep_pythons_once_per_location_warnings():
    """fill_/zero_/copy_ must not install warning filters: that resets Python's registry, and a warning of the
    calling loop would then show on every iteration."""
    t = ember.zeros(2)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for _ in range(3):
            warnings.warn("once here")
            t.zero_()
            t.fill_(2)
            t.copy_(ember.ones(2))
    assert [str(w.message) for w in seen] == ["once here"]
