"""The op table's record type, sample makers and the conversions between NumPy, ember and torch."""
from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np
import torch

import ember

FLOATS = ("float32", "float64")
HALVES = ("float16", "bfloat16")
INTS = ("int32", "int64")
ALL_INTS = ("uint8", "int8", "int16", "int32", "int64")


@dataclass
class Sample:
    """Positional inputs (NumPy arrays become tensors, anything else is passed as is) and keyword arguments."""
    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass
class OpInfo:
    """One row of the op table.

    ``fn(lib, *args, **kwargs)`` calls the op through ``lib`` (``ember`` or ``torch``), so one lambda serves both.
    ``samples(dtype, rng)`` returns a list of ``Sample``. ``grad`` says whether the op is differentiable in the
    float inputs; ``gradcheck`` runs float64 central differences on samples with at most ``gradcheck_max`` elements.
    ``skips`` maps a test name ('forward', 'backward', 'gradcheck', 'noncontig') to the reason it cannot apply.
    """
    name: str
    fn: Callable
    samples: Callable
    dtypes: tuple = FLOATS
    grad: bool = True
    gradcheck: bool = True
    tol: dict = field(default_factory=dict)  # dtype name -> (rtol, atol)
    grad_tol: dict = field(default_factory=dict)
    noncontig: bool = True
    compare_dtype: bool = True
    gradcheck_max: int = 60
    skips: dict = field(default_factory=dict)
    category: str = ""

    def tolerance(self, dtype, for_grad=False):
        table = self.grad_tol if for_grad and self.grad_tol else self.tol
        if dtype in table:
            return table[dtype]
        return DEFAULT_TOL[dtype]


DEFAULT_TOL = {"float64": (1e-7, 1e-7), "float32": (1.3e-5, 1e-5), "float16": (1e-3, 1e-3),
               "bfloat16": (1.6e-2, 1e-2), "complex64": (1.3e-6, 1e-5)}
for _d in ("bool",) + ALL_INTS:
    DEFAULT_TOL[_d] = (0, 0)


def np_dtype(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def make(shape, dtype, rng, low=-3.0, high=3.0):
    """A random array of ``shape`` and ``dtype`` (values in [low, high); bools random)."""
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in ALL_INTS:
        lo = 0 if dtype == "uint8" else int(np.floor(low))
        return rng.integers(lo, max(lo + 1, int(np.ceil(high))), size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(np_dtype(dtype))


def noncontiguous(a):
    """The same values as ``a`` in a non-contiguous layout (every other element of a wider array)."""
    if a.ndim == 0 or a.size == 0:
        return a
    wide = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), dtype=a.dtype)
    view = wide[..., ::2]
    view[...] = a
    return view


def to_torch(a, requires_grad=False):
    if isinstance(a, np.ndarray):
        if a.dtype == ml_dtypes.bfloat16:
            t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        else:
            t = torch.from_numpy(a)
        if requires_grad:
            t = t.detach().clone().requires_grad_(True) if a.dtype == ml_dtypes.bfloat16 else t.requires_grad_(True)
        return t
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
        return type(a)(to_torch(x, requires_grad) for x in a)
    return a


def to_ember(a, requires_grad=False):
    if isinstance(a, np.ndarray):
        t = ember.from_numpy(a)
        return t.requires_grad_(True) if requires_grad else t
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
        return type(a)(to_ember(x, requires_grad) for x in a)
    return a


def torch_to_numpy(t):
    t = t.detach()
    if t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.numpy()


def ember_to_numpy(t):
    return t.detach().numpy()


def assert_close(actual, expected, rtol, atol, what="", check_dtype=True):
    """Compares an ember result with a torch result (tensors, numbers, or nested tuples/lists of them)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{what}: expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{what}: {len(actual)} results, torch gives {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol, atol, f"{what}[{i}]", check_dtype)
        return
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, ember.Tensor), f"{what}: expected a Tensor, got {type(actual).__name__}"
        assert tuple(actual.shape) == tuple(expected.shape), \
            f"{what}: shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}"
        if check_dtype:
            assert actual.dtype.name == str(expected.dtype).replace("torch.", ""), \
                f"{what}: dtype {actual.dtype} != torch's {expected.dtype}"
        a, e = ember_to_numpy(actual), torch_to_numpy(expected)
        if rtol == 0 and atol == 0 and expected.is_floating_point():  # an integer op with a float result
            rtol, atol = DEFAULT_TOL[str(expected.dtype).replace("torch.", "")]
    else:
        a, e = np.asarray(actual), np.asarray(expected)
        if isinstance(actual, ember.Tensor):
            a = ember_to_numpy(actual)
    if a.dtype.kind in "fcV" or e.dtype.kind in "fcV" or a.dtype == ml_dtypes.bfloat16:
        a64, e64 = a.astype(np.float64) if a.dtype.kind != "c" else a, e.astype(np.float64) if e.dtype.kind != "c" else e
        np.testing.assert_allclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)
