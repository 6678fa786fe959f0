"""ember.testing.make_tensor against torch.testing.make_tensor: shapes, strides, dtypes, value ranges, options
and errors (values are random: compared by range, not one by one)."""
import doctest
import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def make(m, *shape, dtype, **kwargs):
    return m.testing.make_tensor(*shape, dtype=getattr(m, dtype), device="cpu", **kwargs)


def values(t):
    """The values as float64 (or complex128) NumPy."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.to(torch.complex128) if t.is_complex() else t.to(torch.float64)).numpy()
    return t.detach().numpy().astype(np.complex128 if t.dtype.is_complex else np.float64)


def parts(v):
    return np.concatenate([v.real.ravel(), v.imag.ravel()]) if np.iscomplexobj(v) else v.ravel()


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_ranges_as_torch(dtype):
    e, t = make(ember, 40, 50, dtype=dtype), make(torch, 40, 50, dtype=dtype)
    assert e.shape == tuple(t.shape) and e.dtype.name == str(t.dtype).removeprefix("torch.")
    ev, tv = parts(values(e)), parts(values(t))
    assert ev.min() >= tv.min() - 1 and ev.max() <= tv.max() + 1  # same interval, up to sampling
    # [0, 2) for bool, [0, 10) unsigned, [-9, 10) signed, [-9, 9) floating (rounding may reach 9), both ends reached
    lo, hi = {"bool": (0, 2), "uint8": (0, 10)}.get(dtype, (-9, 10 if dtype.startswith("int") else 9))
    assert lo <= ev.min() < lo + 1 and hi - 2 < ev.max() <= hi - (dtype in ("bool", "uint8") or dtype.startswith("int"))


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "complex64"])
def test_given_bounds(dtype):
    e = parts(values(make(ember, 1000, dtype=dtype, low=-2.5, high=3)))
    integral = dtype.startswith("int")
    assert e.min() >= (-2 if integral else -2.5) and e.max() < 3
    if integral:  # low rounded up, high exclusive
        assert set(np.unique(e)) == {-2, -1, 0, 1, 2}


def test_bounds_clamped_to_the_dtype():
    for m in (ember, torch):
        u = values(make(m, 2000, dtype="uint8", low=-100, high=1000))
        assert u.min() >= 0 and u.max() <= 255 and u.max() > 200
        h = values(make(m, 100, dtype="float16", low=-1e9, high=1e9))
        assert np.isfinite(h).all() and np.abs(h).max() > 1000
        d = values(make(m, 100, dtype="float64", low=-1e308, high=1e308))  # wider than float64's max
        assert np.isfinite(d).all() and np.abs(d).max() > 1e300


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (3, 1, 4)])
@pytest.mark.parametrize("as_sequence", [False, True])
def test_shape_and_noncontiguous_strides(shape, as_sequence):
    args = (list(shape),) if as_sequence else shape
    for noncontiguous in (False, True):
        e = make(ember, *args, dtype="float32", noncontiguous=noncontiguous)
        t = make(torch, *args, dtype="float32", noncontiguous=noncontiguous)
        assert e.shape == tuple(t.shape) and e.is_contiguous() == t.is_contiguous()
        assert e.stride() == t.stride()


def test_memory_format():
    e = make(ember, 2, 3, 4, 5, dtype="float32", memory_format=ember.channels_last)
    t = make(torch, 2, 3, 4, 5, dtype="float32", memory_format=torch.channels_last)
    assert e.stride() == t.stride() and e.is_contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("dtype, low, high, replacement", [
    ("bool", None, None, 1), ("int32", 0, 1, 1),  # all zeros, then all ones
    ("float16", 0, 1e-7, float(np.finfo(np.float16).tiny)),  # below float16's resolution: many zeros
    ("complex64", 0, 1e-46, float(np.finfo(np.float32).tiny)),
])
def test_exclude_zero(dtype, low, high, replacement):
    for m in (ember, torch):
        v = values(make(m, 500, dtype=dtype, low=low, high=high, exclude_zero=True))
        assert (v != 0).all() and (v == replacement).any()


def test_requires_grad():
    for m in (ember, torch):
        x = make(m, 3, dtype="float64", requires_grad=True, noncontiguous=True)
        assert x.requires_grad and x.is_leaf
        assert not make(m, 3, dtype="float64").requires_grad
        with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral"):
            make(m, 3, dtype="int64", requires_grad=True)


@pytest.mark.parametrize("kwargs, message", [
    ({"low": 3, "high": 1}, "`low` must be less than `high`, but got 3 >= 1"),
    ({"low": float("nan")}, "`low` and `high` cannot be NaN"),
    ({"dtype": "uint8", "low": -5, "high": -1}, "The value interval specified by `low` and `high` is"),
    ({"noncontiguous": True, "memory_format": "channels_last"}, "are mutually exclusive"),
])
def test_errors_as_torch(kwargs, message):
    for m in (ember, torch):
        kw = dict(kwargs, dtype=kwargs.get("dtype", "float32"))
        if "memory_format" in kw:
            kw["memory_format"] = m.channels_last
        with pytest.raises(ValueError, match=message):
            make(m, 2, 2, 2, 2, **kw)


def test_low_equal_high_warns_for_floating():
    for m in (ember, torch):
        with pytest.warns(FutureWarning, match="Passing `low==high`"):
            x = make(m, 3, dtype="float32", low=2, high=2)
        assert (values(x) == 2).all()
        with warnings.catch_warnings(), pytest.raises(ValueError, match="`low` must be less than `high`"):
            warnings.simplefilter("error")
            make(m, 3, dtype="int32", low=2, high=2)


def test_docstring_example():
    finder = doctest.DocTestFinder()
    (test,) = finder.find(ember.testing.make_tensor, globs={"ember": ember})
    result = doctest.DocTestRunner().run(test)
    assert result.attempted >= 2 and result.failed == 0
