"""ember.testing.assert_close against torch.testing.assert_close: the same outcome, exception type and message."""
import doctest
import functools
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.testing

NAN, INF = float("nan"), float("inf")


def _outcome(fn):
    """``(exception type, message)`` of calling ``fn``, or ``(None, None)`` if it returns."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001
        return type(error), str(error)
    return None, None


def _as_ember(msg):
    """torch's message as ember words it: ``torch.float32`` is ``ember.float32``, ``torch.Tensor`` a Tensor class."""
    return msg and msg.replace("<class 'torch.Tensor'>", "<class 'ember._tensor.Tensor'>").replace("torch.", "ember.")


def _compare(build, kwargs, device="cpu", same_message=True):
    """``build(lib, tensor)`` makes the inputs (tensors by ``tensor``); ember's and torch's asserts must agree."""
    a, e = build(ember, functools.partial(ember.tensor, device=device))
    ta, te = build(torch, torch.tensor)
    got = _outcome(lambda: ember.testing.assert_close(a, e, **kwargs))
    want = _outcome(lambda: torch.testing.assert_close(ta, te, **kwargs))
    assert got[0] is want[0], (got, want)
    if same_message:
        assert got[1] == _as_ember(want[1]), (got[1], want[1])
    return got


def _close_in(lib, t, dtype, delta):
    """``[1, 2, -3]`` against itself plus ``delta`` at index 1, both in ``dtype`` (made in float64 and converted)."""
    d = getattr(lib, dtype)
    return t([1.0, 2.0 + delta, -3.0], dtype=lib.float64).to(d), t([1.0, 2.0, -3.0], dtype=lib.float64).to(d)


CASES = [  # id, build(lib, tensor) -> (actual, expected), keyword arguments
    ("float32-close", lambda L, t: (t([1.0, 2.0, 3.0]), t([1.0, 2.0 + 1e-6, 3.0])), {}),
    ("float32-not-close", lambda L, t: (t([1.0, 2.5, 3.0]), t([1.0, 2.0, 3.0])), {}),
    ("float32-ties-first-index", lambda L, t: (t([2.0, 3.0, 3.0]), t([1.0, 2.0, 3.0])), {}),
    ("nan-first-index", lambda L, t: (t([1.0, NAN, 3.0, NAN]), t([2.0, 5.0, 3.0, 1.0])), {}),
    ("nan-equal_nan-false", lambda L, t: (t([1.0, NAN]), t([1.0, NAN])), {}),
    ("nan-equal_nan-true", lambda L, t: (t([1.0, NAN]), t([1.0, NAN])), {"equal_nan": True}),
    ("nan-vs-number-equal_nan", lambda L, t: (t([1.0, NAN]), t([1.0, 2.0])), {"equal_nan": True}),
    ("inf-equal", lambda L, t: (t([INF, -INF, 1.0]), t([INF, -INF, 1.0])), {}),
    ("inf-opposite", lambda L, t: (t([INF, 1.0]), t([-INF, 1.0])), {}),
    ("float32-overflowing-difference", lambda L, t: (t([3e38, -3e38]), t([-3e38, 3e38])), {}),
    ("expected-zero", lambda L, t: (t([0.0, 1.0]), t([1e-4, 0.0])), {}),
    ("float64", lambda L, t: (t([1.0, 2.0], dtype=L.float64), t([1.0, 2.0001], dtype=L.float64)), {}),
    ("float16", lambda L, t: (t([1.5, NAN], dtype=L.float16), t([1.0, 1.0], dtype=L.float16)), {}),
    ("bfloat16", lambda L, t: (t([1.0, 2.0], dtype=L.bfloat16), t([1.1, 2.5], dtype=L.bfloat16)), {}),
    ("complex64", lambda L, t: (t([1 + 1j, 2]), t([1 + 1j, 2 + 1e-3j])), {}),
    ("complex128-nan", lambda L, t: (t([complex(NAN, 0), 1j], dtype=L.complex128),
                                     t([complex(NAN, 0), 1j], dtype=L.complex128)), {"equal_nan": True}),
    ("int64-equal", lambda L, t: (t([1, 2, 3]), t([1, 2, 3])), {}),
    ("int64-exact", lambda L, t: (t([1, 5, 3]), t([3, 2, 3])), {}),
    ("int64-with-tolerance", lambda L, t: (t([10, 20]), t([12, 20])), {"rtol": 0.1, "atol": 0}),
    ("uint8", lambda L, t: (t([1, 2], dtype=L.uint8), t([2, 2], dtype=L.uint8)), {}),
    ("int8", lambda L, t: (t([-128, 2], dtype=L.int8), t([127, 2], dtype=L.int8)), {}),
    ("bool", lambda L, t: (t([True, False]), t([False, False])), {}),
    ("bool-0d", lambda L, t: (t(True), t(False)), {}),
    ("float32-0d", lambda L, t: (t(1.1), t(1.0)), {}),
    ("bfloat16-0d", lambda L, t: (t(1.5, dtype=L.bfloat16), t(1.0, dtype=L.bfloat16)), {}),
    ("int64-0d", lambda L, t: (t(4), t(3)), {}),
    ("empty", lambda L, t: (t([[], []]), t([[], []])), {}),
    ("empty-shape", lambda L, t: (t([[], []]), t([])), {}),
    ("shape", lambda L, t: (t([1.0, 2.0]), t([1.0, 2.0, 3.0])), {}),
    ("shape-0d-vs-1d", lambda L, t: (t(1.0), t([1.0])), {}),
    ("noncontiguous", lambda L, t: (t([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]).t(), t([[0.0, 3.0], [1.0, 5.0], [2.0, 5.0]])),
     {}),
    ("noncontiguous-3d", lambda L, t: (t(np.arange(24.0).reshape(2, 3, 4)).transpose(0, 2),
                                       t(np.arange(24.0).reshape(2, 3, 4)).transpose(0, 2).contiguous() + 1e-3), {}),
    ("requires-grad", lambda L, t: (t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True), t([[1.0, 2.0], [3.0, 5.0]])),
     {}),
    ("requires-grad-close", lambda L, t: (t([1.0, 2.0], requires_grad=True) * 2, t([2.0, 4.0])), {}),
    ("dtype", lambda L, t: (t([1.0]), t([1.0], dtype=L.float64)), {}),
    ("dtype-int", lambda L, t: (t([1.0]), t([1])), {}),
    ("check_dtype-false-close", lambda L, t: (t([1.0, 2.0]), t([1.0, 2.0], dtype=L.float64)), {"check_dtype": False}),
    ("check_dtype-false-max-tolerances", lambda L, t: (t([1.0, 2.0]), t([1.0, 2.0001], dtype=L.float64)),
     {"check_dtype": False}),
    ("check_dtype-false-int-float", lambda L, t: (t([1, 2]), t([1.0, 2.5])), {"check_dtype": False}),
    ("check_dtype-false-half-types", lambda L, t: (t([1.0, 2.0], dtype=L.float16), t([1.0, 2.01], dtype=L.bfloat16)),
     {"check_dtype": False}),
    ("stride", lambda L, t: (t([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).t(), t([[0.0, 0.0]] * 3)), {"check_stride": True}),
    ("stride-unchecked", lambda L, t: (t([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).t(), t([[0.0, 0.0]] * 3)), {}),
    ("check_layout-false", lambda L, t: (t([1.0]), t([1.0])), {"check_layout": False}),
    ("numpy-close", lambda L, t: (np.array([1.0, 2.0]), np.array([1.0, 2.0])), {}),
    ("numpy-float64", lambda L, t: (np.array([1.0, 2.0]), np.array([1.0, 2.0001])), {}),
    ("numpy-int", lambda L, t: (np.array([1, 2]), np.array([1, 3])), {}),
    ("numpy-0d", lambda L, t: (np.array(1.5), np.array(1.0)), {}),
    ("numpy-stride", lambda L, t: (np.array([1.0, 2.0])[::2], np.array([1.0])), {"check_stride": True}),
    ("numpy-vs-tensor", lambda L, t: (np.array([1.0]), t([1.0])), {}),
    ("tensor-vs-float", lambda L, t: (t(1.0), 1.0), {}),
    ("tensor-vs-list", lambda L, t: (t([1.0]), [1.0]), {}),
    ("tensor-vs-str", lambda L, t: (t([1.0]), "a"), {}),
    ("str", lambda L, t: ("a", "a"), {}),
    ("parameter-vs-tensor", lambda L, t: (L.nn.Parameter(t([1.0])), t([2.0])), {}),
    ("parameter-strict", lambda L, t: (L.nn.Parameter(t([1.0])), t([1.0])), {"allow_subclasses": False}),
    ("int-int", lambda L, t: (1, 2), {}),
    ("int-float", lambda L, t: (1, 1.0), {}),
    ("int-float-unchecked", lambda L, t: (2.0, 3), {"check_dtype": False}),
    ("float-close", lambda L, t: (2.0 / 2**0.5, 2**0.5), {}),
    ("float-not-close", lambda L, t: (1.1, 1.0), {}),
    ("float-zero-tolerances", lambda L, t: (1e-9, 1e-10), {"rtol": 0, "atol": 0}),
    ("float-expected-zero", lambda L, t: (1e-3, 0.0), {}),
    ("complex", lambda L, t: (1 + 2j, 1 + 2.1j), {}),
    ("nan-scalars", lambda L, t: (NAN, NAN), {}),
    ("nan-scalars-equal_nan", lambda L, t: (NAN, NAN), {"equal_nan": True}),
    ("numpy-scalars", lambda L, t: (np.float32(1.0), 1.0), {}),
    ("numpy-scalars-types", lambda L, t: (np.int64(1), np.float32(1.0)), {}),
    ("bools", lambda L, t: (True, False), {}),
    ("numpy-bool", lambda L, t: (np.bool_(True), True), {}),
    ("none", lambda L, t: (None, None), {}),
    ("none-vs-int", lambda L, t: (1, None), {}),
    ("sequences", lambda L, t: ([t([1.0]), 2.0, np.array(3.0)], (t([1.0]), 2.0, np.array(3.0))), {}),
    ("sequence-length", lambda L, t: ([1.0, 2.0], [1.0, 2.0, 3.0]), {}),
    ("nested-mismatch", lambda L, t: ((1, [2.0, {"x": t([1.0])}]), [1, (2.0, {"x": t([2.0])})]), {}),
    ("mapping-mismatch", lambda L, t: ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}), {}),
    ("mapping-sorted-keys-first", lambda L, t: ({8: 1, 1: 1}, {8: 2, 1: 2}), {}),
    ("mapping-keys", lambda L, t: ({"a": 1, "b": [1]}, {"a": 1, "c": [1]}), {}),
    ("mapping-unsortable-keys", lambda L, t: ({1: 1, "a": 2}, {1: 1, "a": 3}), {}),
    ("empty-containers", lambda L, t: ([[], {}], ([], {})), {}),
    ("bytes", lambda L, t: (b"ab", b"ac"), {}),
    ("type-error-before-mismatch", lambda L, t: ([1.0, "a"], [2.0, "a"]), {}),
    ("first-failure-reported", lambda L, t: ([t([1.0]), 2.0], [t([1.0], dtype=L.float64), 3.0]), {}),
    ("msg-string", lambda L, t: (t([1.0, 2.0, 3.0]), t([1.0, 4.0, 5.0])), {"msg": "Argh, the tensors are not close!"}),
    ("msg-callable", lambda L, t: (t([1.0, 2.0, 3.0]), t([1.0, 4.0, 5.0])), {"msg": lambda m: f"Header\n\n{m}\n\nEnd"}),
    ("msg-callable-nested", lambda L, t: ({"k": [1, 2]}, {"k": [1, 3]}), {"msg": lambda m: m.upper()}),
    ("msg-string-shape", lambda L, t: (t([1.0]), t([1.0, 2.0])), {"msg": "custom"}),
    ("msg-ignored-for-bad-input", lambda L, t: (1.0, 2.0), {"rtol": 1e-3, "msg": "custom"}),
    ("rtol-without-atol", lambda L, t: (t([1.0]), t([2.0])), {"rtol": 1e-3}),
    ("atol-without-rtol", lambda L, t: (1.0, 2.0), {"atol": 1e-3}),
    ("explicit-tolerances-pass", lambda L, t: (t([1.0, 2.0]), t([1.05, 2.0])), {"rtol": 0.1, "atol": 0.0}),
    ("explicit-tolerances-fail", lambda L, t: (t([1.0, 2.0]), t([1.5, 2.0])), {"rtol": 0.1, "atol": 0.01}),
    ("zero-tolerances-float", lambda L, t: (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6])), {"rtol": 0.0, "atol": 0.0}),
]


@pytest.mark.parametrize("build, kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(build, kwargs, device):
    _compare(build, kwargs, device)


@pytest.mark.parametrize("build, kwargs, exc", [
    (lambda L, t: (True, 1), {}, RuntimeError),  # a bool with an int: torch fails while pairing them up
    (lambda L, t: (t([1.0]), t([1.0])), {"rtol": -1.0, "atol": 0.0}, RuntimeError),
], ids=["bool-vs-int", "negative-rtol"])
def test_same_exception_type(build, kwargs, exc):
    """Inputs torch rejects with an internal RuntimeError: ember raises the same type with its own message."""
    assert _compare(build, kwargs, same_message=False)[0] is exc


FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
DEFAULTS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
            "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


@pytest.mark.parametrize("factor", [0.5, 3.0])
@pytest.mark.parametrize("dtype", FLOATS)
def test_default_tolerances(dtype, factor):
    """A difference of ``factor`` times the allowed one at ``2.0`` passes below 1 and fails above, as torch's."""
    rtol, atol = DEFAULTS[dtype]
    delta = factor * (atol + rtol * 2.0)
    got = _compare(lambda L, t: _close_in(L, t, dtype, delta), {})
    assert (got[0] is None) == (factor < 1)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
def test_exact_dtypes(dtype):
    """Integers and bools compare exactly: the smallest difference fails with the "not equal" message."""
    got = _compare(lambda L, t: (t([0, 1, 1]).to(getattr(L, dtype)), t([0, 1, 0]).to(getattr(L, dtype))), {})
    assert got[0] is AssertionError and got[1].startswith("Tensor-likes are not equal!")


PROMOTED = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("other", PROMOTED)
@pytest.mark.parametrize("dtype", PROMOTED)
def test_check_dtype_false_promotes(dtype, other):
    """Mixed dtypes compare in the promoted dtype with the looser of both default tolerances."""
    def build(L, t):
        values = t([0.0, 1.0, 1.0, 0.0, 1.0], dtype=L.float64)
        return values.to(getattr(L, dtype)), (values + t([0.0, 0.0, 3e-5, 2.0, 0.0], dtype=L.float64)).to(
            getattr(L, other))

    assert _compare(build, {"check_dtype": False})[0] is AssertionError  # 0 against 2 at index 3, in every dtype
    assert _compare(build, {})[0] is AssertionError  # the dtype check, or the same mismatch


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CUDA")
def test_device_mismatch():
    cpu, cuda = ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(AssertionError, match=r"^The values for attribute 'device' do not match: cpu != cuda:0\.$"):
        ember.testing.assert_close(cpu, cuda)
    ember.testing.assert_close(cpu, cuda, check_device=False)
    with pytest.raises(AssertionError, match="Greatest absolute difference: 1.0 at index"):
        ember.testing.assert_close(cpu, cuda + 1, check_device=False)


@pytest.mark.parametrize("build, kwargs", [
    (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.00001])), {}),
    (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1])), {}),
    (lambda L: (L.tensor([1.0, NAN]), L.tensor([1.0, NAN])), {}),
    (lambda L: (L.tensor([1, 2]), [1.0, 2.5]), {}),
    (lambda L: ([1.0, 2.0], [1.0, 2.5]), {"rtol": 0.5, "atol": 0.0}),
    (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 3.0])), {"msg": "custom"}),
], ids=["close", "not-close", "nan", "list-expected", "list-actual", "msg"])
def test_assert_allclose(build, kwargs):
    """The deprecated assert_allclose: torch's outcome and message, and a FutureWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _outcome(lambda: ember.testing.assert_allclose(*build(ember), **kwargs))
        want = _outcome(lambda: torch.testing.assert_allclose(*build(torch), **kwargs))
    assert got == (want[0], _as_ember(want[1]))
    assert sum(issubclass(w.category, FutureWarning) for w in caught) == 2


def test_docstring_examples():
    result = doctest.testmod(ember.testing, extraglobs={"ember": ember})
    assert result.attempted > 0 and result.failed == 0
