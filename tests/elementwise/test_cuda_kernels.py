"""The kernels ember uses where CuPy's values differ (nextafter, the Bessel functions), run on NumPy arrays against
NumPy's, SciPy's and torch's."""
import itertools
import types

import ml_dtypes
import numpy as np
import pytest
import scipy.special
import torch

from ember._cuda_special import CudaSpecial
from ember._ops.binary import next_float
from tests.cuda_sim.fake_cupy import _CUDA_MATH

BF16 = np.dtype(ml_dtypes.bfloat16)
TORCH = {np.dtype(np.float16): torch.float16, BF16: torch.bfloat16, np.dtype(np.float32): torch.float32,
         np.dtype(np.float64): torch.float64}


def _edges(dtype):
    fi = ml_dtypes.finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1e-3, np.inf, -np.inf, np.nan, float(fi.max), float(fi.tiny),
            float(fi.smallest_subnormal)]
    return np.array(vals + [-v for v in vals[-3:]]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.float64],
                         ids=["float16", "bfloat16", "float32", "float64"])
def test_next_float_is_torchs_nextafter_bit_for_bit(dtype):
    dtype = np.dtype(dtype)
    a, b = (np.array(v, dtype) for v in zip(*itertools.product(_edges(dtype), repeat=2)))
    got = next_float(np, a, b)
    expected = torch.nextafter(torch.from_numpy(a.astype(np.float64)).to(TORCH[dtype]),
                               torch.from_numpy(b.astype(np.float64)).to(TORCH[dtype]))
    expected = expected.to(torch.float64).numpy().astype(dtype)
    nan = np.isnan(got.astype(np.float64))
    assert (nan == np.isnan(expected.astype(np.float64))).all()
    bits = f"u{dtype.itemsize}"
    assert (got.view(bits)[~nan] == expected.view(bits)[~nan]).all()
    if dtype.itemsize >= 4:
        with np.errstate(over="ignore"):
            assert (got.view(bits)[~nan] == np.nextafter(a, b).view(bits)[~nan]).all()


# CuPy's Bessel kernels as CUDA computes them (0 or ±inf at ±inf, scaled forms that overflow), from the stand-in
CUDA = types.SimpleNamespace(**{k[8:]: f for k, f in _CUDA_MATH.items() if k.startswith("special.")})


X = np.concatenate([np.linspace(-1000, 1000, 4001), [0.0, -0.0, 88.5, 89.5, 699.99, 700.0, 700.01, 713.5, 1e4,
                                                     -1e4, 1e300, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "j0", "j1", "y0", "y1"])
def test_cuda_special_gives_scipys_values(name, dtype):
    """Each function built on CUDA-like kernels equals SciPy's to a few ulps, with SciPy's NaNs and signed zeros."""
    with np.errstate(all="ignore"):
        x = X.astype(dtype)
        got, expected = getattr(CudaSpecial(CUDA, np), name)(x), getattr(scipy.special, name)(x)
    assert got.dtype == expected.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    assert (np.signbit(got) == np.signbit(expected))[~np.isnan(expected)].all()


def test_cuda_like_kernels_differ_where_ember_corrects_them():
    """The corrections are needed: the raw kernels overflow past float32's range and give numbers at ±inf."""
    x = np.array([100.0, np.inf], np.float32)
    with np.errstate(all="ignore"):
        assert not np.isfinite(CUDA.i0e(x)[0]) and np.isfinite(CudaSpecial(CUDA, np).i0e(x)).all()
    assert CUDA.j0(x)[1] == 0 and np.isnan(CudaSpecial(CUDA, np).j0(x)[1])
