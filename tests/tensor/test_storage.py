"""Storages as torch reports them: ``untyped_storage()`` (bytes) and ``storage()`` (typed) of bases and views share
one size and address; typed storages give their dtype's elements."""
import warnings

import numpy as np
import pytest
import torch

import ember

VIEWS = {
    "base": lambda x: x,
    "slice": lambda x: x[1:, 2:4],
    "transpose": lambda x: x.t(),
    "row": lambda x: x[2],
    "reshape": lambda x: x.reshape(-1)[3:9],
    "expand": lambda x: x[:1].expand(5, 6),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 3), 4),
    "view_dtype": lambda x: x.view(torch.int32 if isinstance(x, torch.Tensor) else ember.int32),
    "channels_last": lambda x: x.reshape(1, 5, 2, 3).contiguous(
        memory_format=torch.channels_last if isinstance(x, torch.Tensor) else ember.channels_last),
}


def pair():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    return torch.tensor(a), ember.tensor(a)


@pytest.mark.parametrize("view", VIEWS)
def test_untyped_storage_of_views(view):
    t, e = pair()
    tv, ev = VIEWS[view](t), VIEWS[view](e)
    ts, es = tv.untyped_storage(), ev.untyped_storage()
    assert (es.nbytes(), es.size(), len(es), es.element_size()) == (ts.nbytes(), ts.size(), len(ts), 1)
    assert es.device == ember.device("cpu") and es.cpu() is es
    base_shared = ts.data_ptr() == t.untyped_storage().data_ptr()
    assert (es.data_ptr() == e.untyped_storage().data_ptr()) == base_shared
    assert (ev.data_ptr() - es.data_ptr()) == (tv.data_ptr() - ts.data_ptr())
    assert es.tolist() == ts.tolist()
    assert es[5] == ts[5]


@pytest.mark.parametrize("view", VIEWS)
def test_typed_storage(view):
    t, e = pair()
    ev = VIEWS[view](e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, es = VIEWS[view](t).storage(), ev.storage()
    assert str(es.dtype) == str(ts.dtype).replace("torch", "ember")
    assert (es.size(), len(es), es.nbytes(), es.element_size()) == (ts.size(), len(ts), ts.nbytes(),
                                                                    ts.element_size())
    assert es.tolist() == ts.tolist() and es[3] == ts[3]
    assert es.data_ptr() == ev.untyped_storage().data_ptr()
    assert es.untyped().nbytes() == ts.untyped().nbytes()


def test_storage_of_new_and_computed_tensors():
    for m in (torch, ember):
        x = m.ones(3, 4, dtype=m.float64)
        y = x * 2
        assert y.untyped_storage().nbytes() == 96 and y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        assert x.detach()[1].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert m.zeros(0).untyped_storage().nbytes() == 0
        assert m.tensor(True).untyped_storage().tolist() == [1]


def test_typed_storage_warns_deprecation():
    import ember._storage as storage
    storage._warned.clear()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ember.ones(2).storage()
