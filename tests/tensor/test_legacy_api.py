"""The legacy API of torch scripts: constants, typed tensor classes, Variable, Tensor.new and friends, and the
keyword/varargs spellings of shape ops, each compared with torch."""
import warnings

import numpy as np
import pytest
import torch

import ember

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


def same(e, t):
    assert e.shape == t.shape and e.dtype.name == str(t.dtype).split(".")[1]
    if e.numel():
        np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


def raises_like(fe, ft):
    with pytest.raises(Exception) as want:
        ft()
    with pytest.raises(want.type):
        fe()


def test_constants():
    for name in ("pi", "e", "inf"):
        assert getattr(ember, name) == getattr(torch, name)
    assert np.isnan(ember.nan) and ember.newaxis is torch.newaxis is None


@pytest.mark.parametrize("name", TYPES)
def test_legacy_type_constructors(name):
    E, T = getattr(ember, name), getattr(torch, name)
    same(E([1, 0, 2]), T([1, 0, 2]))
    same(E(np.array([1, 0, 3])), T(np.array([1, 0, 3])))
    assert E(2, 3).shape == T(2, 3).shape and E(2, 3).dtype.name == str(T(2, 3).dtype)[6:]
    assert E(ember.Size([2, 3])).shape == (2, 3) and E().shape == T().shape
    assert E.dtype.name == str(T.dtype)[6:] and E.__name__ == T.__name__ and E.is_cuda is T.is_cuda is False
    assert isinstance(ember.zeros(2, dtype=E.dtype), E) and isinstance(torch.zeros(2, dtype=T.dtype), T)
    assert isinstance(ember.zeros(2, dtype=E.dtype), ember.Tensor)
    raises_like(lambda: E(2.5), lambda: T(2.5))
    raises_like(lambda: E(2, 3.0), lambda: T(2, 3.0))
    raises_like(lambda: E([1], dtype=ember.float64), lambda: T([1], dtype=torch.float64))


def test_legacy_isinstance_and_alias():
    x, y = ember.zeros(2), torch.zeros(2)
    for n in TYPES:
        assert isinstance(x, getattr(ember, n)) == isinstance(y, getattr(torch, n))
        assert isinstance(x, getattr(ember.cuda, n)) == isinstance(y, getattr(torch.cuda, n))
    assert isinstance(ember.nn.Parameter(x), ember.FloatTensor)
    assert not isinstance(1.0, ember.FloatTensor) and not issubclass(ember.FloatTensor, ember.Tensor)
    f = ember.tensor([1.0, 2.0])
    g = ember.FloatTensor(f)  # a same-dtype tensor is aliased
    g[0] = 5
    assert f[0].item() == 5
    raises_like(lambda: ember.FloatTensor(ember.tensor([1])), lambda: torch.FloatTensor(torch.tensor([1])))


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the CPU-only behaviour")
def test_cuda_legacy_types_without_cuda():
    raises_like(lambda: ember.cuda.FloatTensor([1.0]), lambda: torch.cuda.FloatTensor([1.0]))
    assert ember.cuda.LongTensor.is_cuda and ember.cuda.LongTensor.dtype is ember.int64


def test_type_with_legacy_types():
    x, y = ember.tensor([1, 2]), torch.tensor([1, 2])
    same(x.type(ember.DoubleTensor), y.type(torch.DoubleTensor))
    same(x.type(ember.Tensor), y.type(torch.Tensor))
    assert x.type(ember.BoolTensor).type() == y.type(torch.BoolTensor).type() == "torch.BoolTensor"
    raises_like(lambda: x.type(ember.nn.Parameter), lambda: y.type(torch.nn.Parameter))


def test_set_default_tensor_type():
    try:
        for t in ("DoubleTensor", "FloatTensor"):
            with pytest.warns(UserWarning, match="deprecated"):
                ember.set_default_tensor_type(getattr(ember, t))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.set_default_tensor_type(getattr(torch, t))
            assert ember.get_default_dtype().name == str(torch.get_default_dtype())[6:]
            assert ember.tensor([1.5]).dtype.name == str(torch.tensor([1.5]).dtype)[6:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.set_default_tensor_type("torch.DoubleTensor")
            assert ember.get_default_dtype() is ember.float64
            raises_like(lambda: ember.set_default_tensor_type(ember.LongTensor),
                        lambda: torch.set_default_tensor_type(torch.LongTensor))
            raises_like(lambda: ember.set_default_tensor_type(ember.float64),
                        lambda: torch.set_default_tensor_type(torch.float64))
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_variable():
    from ember.autograd import Variable
    x = ember.tensor([1.0, 2.0])
    v = Variable(x, requires_grad=True)
    assert type(v) is ember.Tensor and v is not x and v.requires_grad and not x.requires_grad
    assert Variable(x).data_ptr() == x.data_ptr() and Variable().shape == torch.autograd.Variable().shape
    assert isinstance(x, Variable) and not isinstance(1, Variable) and not issubclass(ember.Tensor, Variable)
    raises_like(lambda: Variable([1.0]), lambda: torch.autograd.Variable([1.0]))
    with pytest.warns(UserWarning, match="volatile"):
        Variable(x, volatile=True)


def test_typename():
    assert ember.typename(ember.tensor([1])) == torch.typename(torch.tensor([1]))
    assert ember.typename(1) == torch.typename(1) == "int"
    assert ember.typename(ember.nn.Linear(2, 2)) == "ember.nn.modules.linear.Linear"


def test_new():
    x, y = ember.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    assert x.new(2, 3).shape == y.new(2, 3).shape and x.new(2, 3).dtype is ember.float32
    assert x.new(ember.Size([4])).shape == (4,) and x.new().shape == y.new().shape
    same(x.new([1, 2]), y.new([1, 2]))
    same(ember.tensor([1, 2]).new([1.5, 2]), torch.tensor([1, 2]).new([1.5, 2]))
    same(x.new(np.array([3, 4])), y.new(np.array([3, 4])))
    z = x.new(x)
    assert z is not x and z.data_ptr() == x.data_ptr()
    assert x.new([1], device="cpu").device == ember.device("cpu")
    for args, kw in (((3.0,), {}), (([1, 2],), {"dtype": None}), ((2,), {"requires_grad": True}),
                     (([1], [2]), {})):
        kw_e = {k: (ember.int64 if v is None else v) for k, v in kw.items()}
        kw_t = {k: (torch.int64 if v is None else v) for k, v in kw.items()}
        raises_like(lambda: x.new(*args, **kw_e), lambda: y.new(*args, **kw_t))
    raises_like(lambda: x.new(ember.tensor([1])), lambda: y.new(torch.tensor([1])))


def test_tensor_queries():
    for d in ("float32", "int64", "uint8", "bool", "complex64", "int8", "bfloat16"):
        assert ember.zeros(1, dtype=getattr(ember, d)).is_signed() == torch.zeros(1, dtype=getattr(torch, d)).is_signed()
    x, y = ember.zeros(2), torch.zeros(2)
    assert ember.is_same_size(x, x) and not ember.is_same_size(x, ember.zeros(3)) and x.is_same_size(ember.zeros(2))
    raises_like(lambda: ember.is_same_size(x, [1, 2]), lambda: torch.is_same_size(y, [1, 2]))
    assert x.is_inference() == y.is_inference() is False
    assert x.is_pinned() == y.is_pinned() is False
    assert x.is_shared() == y.is_shared() is False
    assert x.share_memory_() is x and x.is_shared() and y.share_memory_() is y and y.is_shared()
    with pytest.warns(UserWarning, match="volatile"):
        assert x.volatile is False


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the CPU-only behaviour")
def test_pin_memory_without_accelerator():
    raises_like(lambda: ember.zeros(2).pin_memory(), lambda: torch.zeros(2).pin_memory())


# -- keyword and varargs spellings ------------------------------------------------------------------------------------
def _pair(fn):
    return fn(ember), fn(torch)


CALLS = {
    "reshape_kw": lambda m: m.arange(4.0).reshape(shape=(2, 2)),
    "reshape_fn_kw": lambda m: m.reshape(input=m.arange(4.0), shape=(2, 2)),
    "view_size": lambda m: m.arange(4.0).view(size=(2, 2)),
    "view_dtype_kw": lambda m: m.arange(4.0).view(dtype=m.int32),
    "permute_kw": lambda m: m.arange(6.0).reshape(2, 3).permute(dims=[1, 0]),
    "permute_fn_kw": lambda m: m.permute(m.arange(6.0).reshape(2, 3), dims=(1, 0)),
    "repeat_kw": lambda m: m.arange(3.0).repeat(repeats=(2, 1)),
    "expand_kw": lambda m: m.arange(3.0).expand(size=(2, 3)),
    "flip_kw": lambda m: m.arange(6.0).reshape(2, 3).flip(dims=(0,)),
    "flip_varargs": lambda m: m.arange(6.0).reshape(2, 3).flip(0, 1),
    "tile_varargs": lambda m: m.arange(6.0).reshape(2, 3).tile(2, 1, 1),
    "tile_kw": lambda m: m.tile(m.arange(3.0), dims=(2, 1)),
    "broadcast_to_varargs": lambda m: m.ones(3, 1).broadcast_to(3, 4),
    "broadcast_to_kw": lambda m: m.broadcast_to(m.ones(3, 1), size=(3, 4)),
    "arange_end": lambda m: m.arange(end=3),
    "arange_start_end": lambda m: m.arange(1, end=4),
    "concatenate_dim": lambda m: m.concatenate([m.ones(2, 1), m.zeros(2, 2)], dim=1),
    "concatenate_axis": lambda m: m.concatenate([m.ones(2, 1), m.zeros(2, 2)], axis=1),
    "cat_axis": lambda m: m.cat([m.ones(2, 1), m.zeros(2, 2)], axis=1),
}


@pytest.mark.parametrize("name", CALLS)
def test_keyword_forms(name):
    same(*_pair(CALLS[name]))


BAD = {
    "reshape_none": lambda m: m.ones(4).reshape(),
    "reshape_both": lambda m: m.ones(4).reshape(2, shape=(2, 2)),
    "reshape_size_kw": lambda m: m.ones(4).reshape(size=(2, 2)),
    "reshape_int_kw": lambda m: m.ones(4).reshape(shape=4),
    "view_none": lambda m: m.ones(4).view(),
    "view_shape_kw": lambda m: m.ones(4).view(shape=(2, 2)),
    "view_both": lambda m: m.ones(4).view(2, 2, dtype=m.int32),
    "permute_none": lambda m: m.ones(2, 2).permute(),
    "permute_both": lambda m: m.ones(2, 2).permute(1, 0, dims=(1, 0)),
    "repeat_none": lambda m: m.ones(2).repeat(),
    "repeat_sizes_kw": lambda m: m.ones(2).repeat(sizes=(2,)),
    "expand_none": lambda m: m.ones(2).expand(),
    "expand_both": lambda m: m.ones(2).expand(2, 2, size=(2, 2)),
    "flip_none": lambda m: m.ones(2).flip(),
    "tile_none": lambda m: m.ones(2).tile(),
    "broadcast_to_none": lambda m: m.ones(2).broadcast_to(),
    "arange_none": lambda m: m.arange(),
    "concatenate_none": lambda m: m.concatenate(),
    "device_none": lambda m: m.device(),
    "device_both": lambda m: m.device("cpu", device="cpu"),
}


@pytest.mark.parametrize("name", BAD)
def test_missing_or_conflicting_arguments(name):
    raises_like(lambda: BAD[name](ember), lambda: BAD[name](torch))


def test_device_keywords():
    assert str(ember.device(type="cpu")) == str(torch.device(type="cpu"))
    assert str(ember.device(device="cpu")) == str(torch.device(device="cpu"))
    assert repr(ember.device(type="cuda", index=1)) == repr(torch.device(type="cuda", index=1))
    assert ember.device(device=ember.device("cpu")) is ember.device("cpu")
