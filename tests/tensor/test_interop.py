"""Interop: the NumPy array protocol and DLPack both ways with NumPy and torch, zero-copy."""
import numpy as np
import pytest
import torch

import ember

from .helpers import assert_same, same_error


def test_numpy_array_protocol_shares_memory():
    t = ember.arange(4.)
    a = np.asarray(t)
    assert a.dtype == np.float32 and np.shares_memory(a, t.numpy())
    a[0] = 9
    assert t.tolist()[0] == 9
    assert not np.shares_memory(np.array(t), t.numpy())  # np.array copies by default
    assert np.shares_memory(np.array(t, copy=False), t.numpy())
    c = np.asarray(t, dtype=np.float64)
    assert c.dtype == np.float64 and not np.shares_memory(c, t.numpy())
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float64, copy=False)
    assert np.array(ember.tensor(2.)).shape == () and np.array(ember.tensor(2.)).dtype == np.float32
    assert t.__array__(copy=True) is not t.numpy()


def test_numpy_views_and_dtypes():
    x = ember.from_numpy(np.arange(12.).reshape(3, 4)).t() if hasattr(ember.Tensor, "t") else None
    if x is not None:
        assert np.asarray(x).strides == (8, 32)
    b = ember.ones(2, dtype=ember.bfloat16)
    assert np.asarray(b).dtype == ember.bfloat16.np  # NumPy holds bfloat16 through ml_dtypes
    for d in (ember.bool, ember.uint8, ember.int64, ember.complex128, ember.float16):
        assert np.asarray(ember.ones(2, dtype=d)).dtype == d.np


def test_numpy_protocol_errors():
    same_error(lambda: np.asarray(ember.ones(2, requires_grad=True)),
               lambda: np.asarray(torch.ones(2, requires_grad=True)))
    same_error(lambda: ember.ones(2, requires_grad=True).numpy(), lambda: torch.ones(2, requires_grad=True).numpy())
    assert ember.ones(2, requires_grad=True).numpy(force=True).tolist() == [1., 1.]
    assert np.asarray(ember.ones(2, requires_grad=True).detach()).tolist() == [1., 1.]


DLPACK_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_dlpack_torch_to_ember(dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    e = ember.from_dlpack(t)
    assert_same(e, t)
    if dtype != "bool":
        e.fill_(1)
        assert (t == 1).all()  # zero-copy: the write shows through
    e2 = ember.from_dlpack(t.t())
    assert_same(e2, t.t())
    assert e2.stride() == t.t().stride()


@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_dlpack_ember_to_torch(dtype):
    e = ember.tensor([[0, 1, 2], [3, 4, 5]], dtype=getattr(ember, dtype))
    t = torch.from_dlpack(e)
    assert_same(e, t)
    if dtype != "bool":
        t.fill_(2)
        assert e.tolist() == torch.full((2, 3), 2, dtype=t.dtype).tolist()


def test_dlpack_numpy_both_ways():
    a = np.arange(5.)
    e = ember.from_dlpack(a)
    e.fill_(3.0)
    assert a.tolist() == [3.0] * 5
    b = np.from_dlpack(e)
    b[0] = -1
    assert e.tolist()[0] == -1
    e0 = ember.tensor(7)
    assert np.from_dlpack(e0).shape == () and ember.from_dlpack(np.array(2.5)).item() == 2.5
    assert ember.from_dlpack(e0) is e0


def test_dlpack_protocol_details():
    e = ember.ones(3)
    assert tuple(int(v) for v in e.__dlpack_device__()) == tuple(int(v) for v in torch.ones(3).__dlpack_device__())
    back = ember.from_dlpack(e.__dlpack__())  # a bare (unversioned) capsule: NumPy imports it read-only
    assert np.shares_memory(back.numpy(), e.numpy())
    with pytest.raises(RuntimeError, match="read-only"):
        back.fill_(5.0)
    same_error(lambda: ember.ones(2, requires_grad=True).__dlpack__(),
               lambda: torch.ones(2, requires_grad=True).__dlpack__())
    with pytest.raises(BufferError):
        ember.ones(2, dtype=ember.bfloat16).__dlpack__()  # NumPy has no DLPack bfloat16
    with pytest.raises(TypeError):
        ember.from_dlpack([1, 2])
    t = torch.arange(4.)
    assert ember.asarray(t).tolist() == t.tolist()


def test_torch_and_numpy_accept_ember_tensors():
    e = ember.tensor([[1., 2.], [3., 4.]])
    assert torch.as_tensor(np.asarray(e)).tolist() == e.tolist()
    assert torch.tensor(np.asarray(e)).dtype is torch.float32
    assert_same(ember.from_numpy(torch.arange(3).numpy()), torch.arange(3))
