"""any/all over an empty dim tuple (no reduction, as torch), and cumsum/cumprod accumulating float32 and half inputs
in float64 as torch's CPU kernels do."""
import numpy as np
import pytest
import torch

import ember
from tests.ops.opinfo import assert_close


@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("dim,keepdim", [((), False), ((), True), ([], False), (None, False), (None, True)])
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 2)])
def test_any_all_dims(op, dtype, dim, keepdim, shape):
    x = np.random.default_rng(0).integers(0, 2, shape).astype(dtype)
    kw = {} if dim is None and not keepdim else {"dim": dim, "keepdim": keepdim}
    t = getattr(torch, op)(torch.from_numpy(x), **kw)
    e = getattr(ember, op)(ember.from_numpy(x), **kw)
    assert_close(e, t, 0, 0, f"{op}{kw}")
    assert_close(getattr(ember.from_numpy(x), op)(**kw), t, 0, 0, f"Tensor.{op}{kw}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_cumsum_accumulates_in_float64(dtype):
    t = torch.full((100000,), 0.1, dtype=getattr(torch, dtype)).cumsum(0)
    e = ember.full((100000,), 0.1, dtype=getattr(ember, dtype)).cumsum(0)
    assert_close(e, t, 0, 0, "cumsum")
    if dtype == "float32":
        assert e[-1].item() == 10000.0


def test_cumprod_accumulates_in_float64():
    x = np.random.default_rng(1).uniform(0.999, 1.0015, 20000).astype(np.float32)
    t = torch.from_numpy(x).cumprod(0)
    e = ember.from_numpy(x).cumprod(0)
    assert_close(e, t, 1e-7, 0, "cumprod")
    assert ember.from_numpy(x).cumprod(0, dtype=ember.float64).dtype is ember.float64
