"""Helpers for the autograd tests: run the same code with ember and torch and compare."""
import numpy as np
import pytest
import torch

import ember


def host(t):
    """A NumPy copy of an ember or torch tensor (None stays None)."""
    if t is None:
        return None
    if isinstance(t, ember.Tensor):
        return np.array(t.detach().cpu().numpy())
    return t.detach().numpy().copy()


def assert_same(e, t, rtol=1e-6, atol=1e-6):
    """ember result ``e`` matches torch result ``t``: values, shape and dtype, recursing into tuples/lists."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), (e, t)
        for a, b in zip(e, t):
            assert_same(a, b, rtol, atol)
        return
    if t is None or e is None:
        assert e is None and t is None, (e, t)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(host(e), host(t), rtol=rtol, atol=atol)


def both(fn, *args):
    """``fn(lib, *args)`` for ember and for torch."""
    return fn(ember, *args), fn(torch, *args)


def same(fn, *args, rtol=1e-6, atol=1e-6):
    """Runs ``fn(lib)`` with both libraries and asserts the results agree."""
    e, t = both(fn, *args)
    assert_same(e, t, rtol, atol)
    return e, t


def same_error(fn, *args, match=True):
    """``fn(lib)`` raises the same exception type with both libraries; with ``match``, the same message (torch's
    "torch." prefixes read "ember." in ember's)."""
    with pytest.raises(Exception) as t_err:
        fn(torch, *args)
    with pytest.raises(type(t_err.value)) as e_err:
        fn(ember, *args)
    if match:
        expected = str(t_err.value).split(" (Triggered internally")[0]
        got = str(e_err.value)
        if match is not True:
            assert match in expected and match in got, (got, expected)
        else:
            assert got.replace("torch.", "ember.") == expected.replace("torch.", "ember."), \
                f"\nember: {got}\ntorch: {expected}"
    return e_err.value, t_err.value


def data(*shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def leaf(lib, arr, requires_grad=True):
    return lib.tensor(arr, requires_grad=requires_grad)
