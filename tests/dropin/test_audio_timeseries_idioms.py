"""Idioms of audio, speech and time-series PyTorch code (recurrences written into a preallocated buffer, SciPy-style
windows from ``torch.signal.windows``, STFT argument checks) run with ember and with torch: values, gradients and
errors agree."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 6, 3)).astype(np.float32)
A = RNG.standard_normal((3, 3)).astype(np.float32) * 0.5

# h[:, t] = f(h[:, t - 1]) + x[:, t], f multiplying by constants only: torch saves just the constant operand, so the
# in-place writes into h do not invalidate the graph
RECURRENCES = {
    "scalar_mul": lambda m, h, a: 0.9 * h,
    "scalar_div": lambda m, h, a: h / 2.0,
    "matmul": lambda m, h, a: h @ a,
    "matmul_left": lambda m, h, a: (a @ h.unsqueeze(-1)).squeeze(-1),
    "linear": lambda m, h, a: m.nn.functional.linear(h, a),
    "bmm": lambda m, h, a: m.bmm(h.unsqueeze(1), a.expand(2, 3, 3)).squeeze(1),
    "addmm": lambda m, h, a: m.addmm(a[0], h, a),
    "einsum": lambda m, h, a: m.einsum("bi,ij->bj", h, a),
    "lerp": lambda m, h, a: m.lerp(a[0], h, 0.3),
}


@pytest.mark.parametrize("name", list(RECURRENCES))
def test_recurrence_into_preallocated_buffer(name):
    f = RECURRENCES[name]
    out = []
    for m in (ember, torch):
        x, a = m.tensor(X, requires_grad=True), m.tensor(A)
        h = m.zeros(2, 6, 3)
        h[:, 0] = x[:, 0]
        for t in range(1, 6):
            h[:, t] = f(m, h[:, t - 1], a) + x[:, t]
        h.pow(2).sum().backward()
        out.append((h, x.grad))
    for e, t in zip(*out):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["matmul", "linear", "einsum"])
def test_recurrence_with_learnable_operand_still_raises(name):
    """When the constant needs a gradient, the overwritten operand is saved and backward must refuse, as torch."""
    f = RECURRENCES[name]
    for m in (ember, torch):
        x, a = m.tensor(X, requires_grad=True), m.tensor(A, requires_grad=True)
        h = m.zeros(2, 6, 3)
        h[:, 0] = x[:, 0]
        for t in range(1, 6):
            h[:, t] = f(m, h[:, t - 1], a) + x[:, t]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            h.sum().backward()


def test_einsum_gradients_of_every_operand_subset():
    ops, g = [RNG.standard_normal(s) for s in ((2, 3), (3, 4), (4,))], RNG.standard_normal((2, 3))
    for needs in ((True, False, False), (False, True, True), (True, True, True)):
        out = []
        for m in (ember, torch):
            ts = [m.tensor(o, requires_grad=n) for o, n in zip(ops, needs)]
            y = m.einsum("ij,jk,k->ij", *ts)
            out.append((y, *m.autograd.grad(y, [t for t in ts if t.requires_grad], m.tensor(g))))
        for e, t in zip(*out):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-10)


WINDOWS = [("hann", {}), ("hamming", {}), ("blackman", {}), ("bartlett", {}), ("nuttall", {}), ("cosine", {}),
           ("gaussian", {"std": 1.7}), ("kaiser", {"beta": 5.0}), ("general_hamming", {"alpha": 0.6}),
           ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("exponential", {"tau": 3.0})]


@pytest.mark.parametrize("name,kw", WINDOWS)
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows(name, kw, sym):
    for M in (0, 1, 2, 7, 8):
        for dt in ("float32", "float64"):
            e = getattr(ember.signal.windows, name)(M, sym=sym, dtype=getattr(ember, dt), **kw)
            t = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dt), **kw)
            assert e.dtype.itemsize == t.dtype.itemsize and tuple(e.shape) == tuple(t.shape)
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6 if dt == "float32" else 1e-14, atol=1e-7)


def test_signal_windows_errors_and_use_in_stft():
    for m in (ember, torch):
        with pytest.raises(ValueError, match="non-negative window length"):
            m.signal.windows.hann(-1)
        with pytest.raises(ValueError, match="float32 or float64"):
            m.signal.windows.gaussian(4, dtype=m.int64)
        with pytest.raises(ValueError, match="Center must be None"):
            m.signal.windows.exponential(4, center=1.0)
    x = RNG.standard_normal(200).astype(np.float32)
    e, t = (m.stft(m.tensor(x), 32, 8, window=m.signal.windows.hann(32, sym=False), return_complex=True)
            for m in (ember, torch))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_stft_refuses_integer_input():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="expected a tensor of floating point or complex values"):
            m.stft(m.arange(64), 16, window=m.hann_window(16), return_complex=True)
