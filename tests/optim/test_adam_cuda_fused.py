"""The fused CUDA Adam step (one kernel per parameter) against its CuPy array reference, bit for bit, and against
the CPU step. Needs a GPU."""
import numpy as np
import pytest

import ember
from ember._kernels import cuda_fused

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")

CASES = {"adam": (ember.optim.Adam, {}),
         "adam_l2_maximize": (ember.optim.Adam, {"weight_decay": 0.1, "maximize": True}),
         "adamw": (ember.optim.AdamW, {"weight_decay": 0.05}),
         "adam_betas": (ember.optim.Adam, {"betas": (0.6, 0.9)})}


def _train(cls, kw, dtype, device, steps=12):
    rng = np.random.default_rng(0)
    p = ember.nn.Parameter(ember.tensor(rng.standard_normal((37, 5)), dtype=dtype, device=device))
    opt = cls([p], lr=0.01, **kw)
    for i in range(steps):
        p.grad = ember.tensor(rng.standard_normal((37, 5)) * (i + 1), dtype=dtype, device=device)
        opt.step()
    state = opt.state[p]
    return [a.cpu().numpy() for a in (p.detach(), state["exp_avg"], state["exp_avg_sq"])]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=str)
@pytest.mark.parametrize("case", CASES)
def test_fused_adam_cuda(case, dtype, monkeypatch):
    cls, kw = CASES[case]
    calls = []
    kernel = cuda_fused.kernel
    monkeypatch.setattr(cuda_fused, "kernel", lambda name, xp: calls.append(name) or kernel(name, xp))
    fused = _train(cls, kw, dtype, "cuda")
    assert calls and cuda_fused._compiled.get("adam") is not None
    monkeypatch.setattr(cuda_fused, "kernel", lambda name, xp: None)
    reference = _train(cls, kw, dtype, "cuda")
    on_cpu = _train(cls, kw, dtype, "cpu")
    for f, r, c in zip(fused, reference, on_cpu):
        np.testing.assert_array_equal(f, r)
        np.testing.assert_allclose(f, c, rtol=1e-5 if dtype is ember.float32 else 1e-12, atol=1e-7)
