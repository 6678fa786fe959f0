"""Running one index expression through ember and torch and comparing what comes out."""
import warnings

import ml_dtypes
import numpy as np
import torch

import ember


class T:
    """An index given as a tensor: ``ember.tensor`` for ember, ``torch.tensor`` for torch."""

    def __init__(self, data, dtype=None):
        self.a = np.array(data, dtype=dtype)

    def __repr__(self):
        return f"T({self.a.tolist()}, {self.a.dtype})"


def conv(key, lib):
    """``key`` with its ``T`` parts as ``lib`` tensors (lists and NumPy arrays are passed as they are)."""
    if isinstance(key, T):
        return lib.tensor(key.a)
    if isinstance(key, tuple):
        return tuple(conv(k, lib) for k in key)
    if isinstance(key, slice):
        return slice(conv(key.start, lib), conv(key.stop, lib), conv(key.step, lib))
    return key


def to_np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return t.float().numpy() if t.dtype is ember.bfloat16 else t.numpy()


def assert_same(e, t, rtol=0.0, atol=0.0):
    """Same shape, dtype and values (NaNs equal)."""
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert e.dtype.name == str(t.dtype).replace("torch.", ""), (e.dtype, t.dtype)
    np.testing.assert_allclose(to_np(e).astype(np.float64), to_np(t).astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True)


def run_both(fn):
    """``fn(lib)`` for ember and torch: both results, or both exceptions (then asserted to be of the same type)."""
    out = []
    for lib in (ember, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(e)
    e, t = out
    if isinstance(t, Exception) or isinstance(e, Exception):
        assert type(e) is type(t), f"ember: {e!r}\ntorch: {t!r}"
    return e, t


def same_error(fn, message=True):
    """``fn(lib)`` raises the same exception type, and by default the same message, in ember and torch."""
    e, t = run_both(fn)
    assert isinstance(t, Exception), "torch did not raise"
    if message:
        assert str(e) == str(t), f"\nember: {e}\ntorch: {t}"


def array(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def tensors(a, requires_grad=False):
    """The same data as an ember and a torch tensor."""
    e = ember.tensor(a, requires_grad=requires_grad)
    t = torch.tensor(a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a, requires_grad=requires_grad)
    return e, (t.to(torch.bfloat16) if a.dtype == ml_dtypes.bfloat16 else t)
