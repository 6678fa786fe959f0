"""Asserting that tensors, numbers and (nested) containers of them are close, as ``torch.testing``."""
import cmath
import collections.abc
import functools
import math
import warnings

import numpy as np

from . import _dtype
from ._creation import as_tensor, empty, tensor
from ._ops.compare import isclose
from ._ops.complex import view_as_real
from ._random import randint
from ._tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# {dtype: (rtol, atol)}; other dtypes compare exactly
_PRECISIONS = {_dtype.float16: (1e-3, 1e-5), _dtype.bfloat16: (1.6e-2, 1e-5), _dtype.float32: (1.3e-6, 1e-5),
               _dtype.float64: (1e-7, 1e-7), _dtype.complex64: (1.3e-6, 1e-5), _dtype.complex128: (1e-7, 1e-7)}
_ALLCLOSE_PRECISIONS = {_dtype.float16: (1e-3, 1e-3), _dtype.float32: (1e-4, 1e-5), _dtype.float64: (1e-5, 1e-8)}
_NUMBER_DTYPES = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.complex128}
_NUMBERS = (int, float, complex, np.number)
_BOOLS = (bool, np.bool_)


class _Failure(Exception):
    """A failed comparison: the exception type to raise, its message, and the path of the failing item."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def error(self, msg=None):
        if isinstance(msg, str):
            return self.type(msg)
        generated = self.msg
        if self.id:
            generated += "\n\nThe failure occurred for item " + "".join(str([item]) for item in self.id)
        return self.type(msg(generated) if callable(msg) else generated)


def _tolerances(dtypes, rtol, atol, id, precisions=_PRECISIONS):
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*(precisions.get(d, (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = f"Greatest {kind} difference: {diff} at index {idx}" if idx else f"{kind.title()} difference: {diff}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra}\n"
    return (msg + line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)).strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, rtol, atol):
    """torch's statistics of the mismatches, computed on the host: it runs only when the comparison fails."""
    shape, total = matches.shape, matches.numel()
    a, e, matches = (t.cpu()._data.ravel() for t in (actual, expected, matches))
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        # integers divide in the default float dtype, as torch's true division
        quotient = _dtype.get_default_dtype().np if abs_diff.dtype == np.int64 else abs_diff.dtype
        rel_diff = abs_diff.astype(quotient, copy=False) / np.abs(e).astype(quotient, copy=False)
        rel_diff[matches] = 0
    if a.dtype == _dtype.bfloat16.np:  # every bfloat16 is a float32: exact, and NumPy reduces it natively
        abs_diff, rel_diff = abs_diff.astype(np.float32), rel_diff.astype(np.float32)
    stats = []
    for diff in (abs_diff, rel_diff):
        i = int(np.argmax(diff))  # the first NaN if any, as torch.max
        stats += [diff[i].item(), tuple(int(k) for k in np.unravel_index(i, shape))]
    abs_diff, abs_idx, rel_diff, rel_idx = stats
    return _mismatch_msg("Tensor-likes", extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol)


def _compare_none(actual, expected):
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}")


def _compare_bools(actual, expected):
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}")


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if actual == expected or equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol))


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    def mismatch(name, a, e):
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype is not expected.dtype:
        dtype = _dtype.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches._data.all()):
        return
    if actual.ndim == 0:
        raise _Failure(AssertionError, _scalar_mismatch_msg(actual.item(), expected.item(), rtol, atol))
    raise _Failure(AssertionError, _tensor_mismatch_msg(actual, expected, matches, rtol, atol))


def _as_tensors(actual, expected, allow_subclasses):
    """Both inputs as Tensors when their types are directly related and ``as_tensor`` takes them, else None."""
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        return None
    if not allow_subclasses and type(actual) is not type(expected):
        return None
    try:
        return tuple(x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected))
    except Exception:  # noqa: BLE001  (anything as_tensor rejects is not a tensor-like)
        return None


def _pair(actual, expected, id, *, allow_subclasses, rtol, atol, equal_nan, check_dtype, **tensor_options):
    """The check of two leaves (a callable raising ``_Failure``), chosen as torch's pair types are."""
    if actual is None or expected is None:
        return functools.partial(_compare_none, actual, expected)
    if isinstance(actual, _BOOLS) and isinstance(expected, _BOOLS):
        return functools.partial(_compare_bools, bool(actual), bool(expected))
    if isinstance(actual, _NUMBERS) and isinstance(expected, _NUMBERS):
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        if type(actual) not in _NUMBER_DTYPES or type(expected) not in _NUMBER_DTYPES:  # a bool with a number
            raise _Failure(RuntimeError, f"Cannot compare inputs of type {type(actual)} and {type(expected)}: a bool "
                                         "compares only with a bool.", id)
        rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, id)
        return functools.partial(_compare_numbers, actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                 check_dtype=check_dtype)
    tensors = _as_tensors(actual, expected, allow_subclasses)
    if tensors is None:
        raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                                  f"{type(expected)}.", id)
    rtol, atol = _tolerances([t.dtype for t in tensors], rtol, atol, id)
    return functools.partial(_compare_tensors, *tensors, rtol=rtol, atol=atol, equal_nan=equal_nan,
                             check_dtype=check_dtype, **tensor_options)


def _pairs(actual, expected, id=(), **options):
    """``[(id, check)]`` for the leaves of (nested) sequences and mappings, compared position by position and key
    by key."""
    def is_sequence(x):
        return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)

    if is_sequence(actual) and is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                           id)
        return [p for i in range(len(actual)) for p in _pairs(actual[i], expected[i], (*id, i), **options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys = set(actual.keys())
        if keys != set(expected.keys()):
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                                           f"Missing keys in the actual mapping: {sorted(expected.keys() - keys)}\n"
                                           f"Additional keys in the actual mapping: {sorted(keys - expected.keys())}",
                           id)
        try:  # a deterministic order, so that the first failure reported is always the same
            keys = sorted(keys)
        except TypeError:
            pass
        return [p for key in keys for p in _pairs(actual[key], expected[key], (*id, key), **options)]
    return [(id, _pair(actual, expected, id, **options))]


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    r"""Asserts that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Tensors (and NumPy arrays, as tensors) are close if they have the same shape, device (``check_device``), dtype
    (``check_dtype``; otherwise both are promoted to a common dtype) and, with ``check_stride``, strides, and if
    :math:`|actual - expected| \le atol + rtol \cdot |expected|` elementwise; non-finite values must be equal and
    NaNs are equal only with ``equal_nan``. Python numbers compare alike, sequences and mappings item by item.
    ``rtol`` and ``atol`` go together; when omitted they default by dtype (float16: 1e-3, 1e-5; bfloat16: 1.6e-2,
    1e-5; float32 and complex64: 1.3e-6, 1e-5; float64 and complex128: 1e-7, 1e-7; others 0, 0). ``msg`` replaces
    the generated message, or maps it when callable. ``check_layout`` is accepted for torch's signature: every
    ember tensor is strided.

    Example::

        >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
        >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 3.0]))
        Traceback (most recent call last):
        ...
        AssertionError: Tensor-likes are not close!
        <BLANKLINE>
        Mismatched elements: 1 / 2 (50.0%)
        Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)
        Greatest relative difference: 0.3333333432674408 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    try:
        pairs = _pairs(actual, expected, allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                       equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                       check_stride=check_stride)
    except _Failure as failure:  # malformed inputs: msg does not apply
        raise failure.error() from None
    failures = []
    for id, check in pairs:  # every pair is compared, and the first failure reported, as torch
        try:
            check()
        except _Failure as failure:
            failure.id = id
            failures.append(failure)
    if failures:
        raise failures[0].error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: :func:`assert_close` without the dtype check, with NaNs equal and looser default tolerances."""
    warnings.warn("`ember.testing.assert_allclose()` is deprecated. Please use `ember.testing.assert_close()` "
                  "instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances((actual.dtype, expected.dtype), None, None, (), _ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


def _make_tensor_bounds(low, high, dtype, lowest, highest, default_low, default_high):
    """``[low, high)`` for :func:`make_tensor`: defaults filled in, checked, clamped to ``[lowest, highest)``, and
    rounded up for integral dtypes."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype.is_floating_point or dtype.is_complex:
        return low, high
    return math.ceil(low), math.ceil(high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` (ints, or one sequence) filled with values drawn uniformly from ``[low, high)``, as
    ``torch.testing.make_tensor``.

    ``low`` and ``high`` default by dtype: bool [0, 2), unsigned integers [0, 10), signed integers [-9, 10), floating
    and complex [-9, 9) (both parts of a complex); given values are clamped to the dtype's finite range.

    Args:
        dtype (ember.dtype): the dtype of the tensor
        device (str or ember.device): its device
        low, high (Number, optional): the bounds of the values
        requires_grad (bool): make a floating or complex tensor require gradients (integral dtypes refuse)
        noncontiguous (bool): return a non-contiguous view (ignored for fewer than two elements)
        exclude_zero (bool): replace zeros by one (bool and integral dtypes) or the dtype's ``finfo.tiny``
        memory_format (ember.memory_format, optional): the memory format (exclusive with ``noncontiguous``)

    Raises:
        ValueError: ``low >= high``, either is NaN, the interval is outside the dtype's range, ``requires_grad``
            for an integral dtype, or both ``noncontiguous`` and ``memory_format``

    Example::

        >>> t = ember.testing.make_tensor(2, 3, dtype=ember.float32, device="cpu", low=-1, high=1)
        >>> t.shape, bool(((t >= -1) & (t < 1)).all())
        (ember.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"{noncontiguous=} and {memory_format=}")
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dimension, then every other element from the second
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dtype.bool:
        low, high = _make_tensor_bounds(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif not floating:
        info = _dtype.iinfo(dtype)
        # int64's exclusive bound stays at its max: randint cannot draw 2**63 - 1
        low, high = _make_tensor_bounds(low, high, dtype, info.min, info.max + (dtype is not _dtype.int64), -9, 10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        info = _dtype.finfo(dtype)
        low, high = _make_tensor_bounds(low, high, dtype, info.min, info.max, -9, 9)
        result = empty(shape, device=device, dtype=dtype)
        real = view_as_real(result) if dtype.is_complex else result
        if high - low >= info.max:  # the width overflows the dtype: draw half of it, then double
            real.uniform_(low / 2, high / 2).mul_(2)
        else:
            real.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = _dtype.finfo(dtype).tiny if floating else 1
    if floating:
        result.requires_grad = requires_grad
    return result
