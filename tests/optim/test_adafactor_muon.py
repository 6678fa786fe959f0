"""Adafactor and Muon against torch: parameters step by step, state_dict layout and round trip, errors."""
import numpy as np
import pytest
import torch

import ember

STEPS = 50


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """torch's small bfloat16 matmuls (in Muon) wait ~50 ms a call on a pool of more than one thread."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _nets(dtype, sizes=(6, 8, 3), bias=True):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(sizes[0], sizes[1], bias=bias), torch.nn.Tanh(),
                             torch.nn.Linear(sizes[1], sizes[2], bias=bias)).to(getattr(torch, dtype))
    em = ember.nn.Sequential(ember.nn.Linear(sizes[0], sizes[1], bias=bias), ember.nn.Tanh(),
                             ember.nn.Linear(sizes[1], sizes[2], bias=bias)).to(getattr(ember, dtype))
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def _step(lib, net, opt, x, y, dtype):
    loss = ((net(lib.tensor(x, dtype=getattr(lib, dtype))) - lib.tensor(y, dtype=getattr(lib, dtype))) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def _compare(name, kw, dtype, steps=STEPS, bias=True):
    """Steps both nets; Muon's ember net takes torch's gradients, since its bfloat16 orthogonalization can turn a
    last-bit difference of the two backward passes into a different rounding."""
    tm, em = _nets(dtype, bias=bias)
    to, eo = getattr(torch.optim, name)(tm.parameters(), **kw), getattr(ember.optim, name)(em.parameters(), **kw)
    rng = np.random.default_rng(1)
    tol = 1e-6 if dtype == "float32" else 1e-12
    for step in range(steps):
        x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
        _step(torch, tm, to, x, y, dtype)
        if name == "Muon":
            for p, q in zip(tm.parameters(), em.parameters()):
                q.grad = ember.tensor(p.grad.numpy())
            eo.step()
        else:
            _step(ember, em, eo, x, y, dtype)
        for (n, p), q in zip(tm.named_parameters(), em.parameters()):
            np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=tol,
                                       err_msg=f"step {step} {n}")
    return to, eo, tm, em


ADAFACTOR = [{}, {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-30, 1e-2), "d": 1.5, "weight_decay": 0.1},
             {"maximize": True, "foreach": True, "lr": 0.05}, {"eps": (1e-3, 1e-3), "d": 1.0}]
MUON = [{"lr": 0.02}, {"lr": 0.02, "nesterov": False, "weight_decay": 0.01},
        {"lr": 0.05, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.3},
        {"lr": 0.02, "ns_steps": 3, "ns_coefficients": (3.0, -3.2, 1.2), "adjust_lr_fn": "original", "eps": 1e-5}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", ADAFACTOR)
def test_adafactor_matches_torch(kw, dtype):
    _compare("Adafactor", kw, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", MUON)
def test_muon_matches_torch(kw, dtype):
    # Muon orthogonalizes in bfloat16; ember reproduces torch's roundings op by op. On larger matrices torch's CPU
    # kernels accumulate in an order of their own, so rare bfloat16 roundings differ; these small shapes stay exact.
    _compare("Muon", kw, dtype, bias=False)


def test_muon_newton_schulz_close_on_large_matrices():
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns
    from ember.optim.muon import _zeropower_via_newtonschulz as ember_ns
    g = np.random.default_rng(0).standard_normal((64, 40)).astype(np.float32)
    t = torch_ns(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
    e = ember_ns(np, g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    assert e.shape == t.shape
    assert np.abs(e - t).max() < 0.05  # a few bfloat16 roundings apart at most
    assert (e == t).mean() > 0.5


@pytest.mark.parametrize("name,kw", [("Adafactor", ADAFACTOR[1]), ("Muon", MUON[0])])
def test_state_dict_layout_and_round_trip(name, kw):
    bias = name == "Adafactor"
    to, eo, tm, em = _compare(name, kw, "float32", steps=3, bias=bias)
    ts, es = to.state_dict(), eo.state_dict()
    assert es["param_groups"] == ts["param_groups"]
    assert list(es["state"]) == list(ts["state"])
    for i in ts["state"]:
        assert list(es["state"][i]) == list(ts["state"][i])
        for key, v in ts["state"][i].items():
            assert tuple(es["state"][i][key].shape) == tuple(v.shape), key
            np.testing.assert_allclose(es["state"][i][key].numpy(), v.numpy(), rtol=1e-6, atol=1e-7)
    # ember's own state_dict into a fresh optimizer, torch's (as ember tensors) into another: both continue as torch
    fresh = getattr(ember.optim, name)(em.parameters(), **kw)
    fresh.load_state_dict(es)
    assert fresh.state_dict()["param_groups"] == ts["param_groups"]
    from_torch = getattr(ember.optim, name)(em.parameters(), **kw)
    from_torch.load_state_dict({"state": {i: {k: ember.tensor(v.numpy()) for k, v in s.items()}
                                          for i, s in ts["state"].items()},
                                "param_groups": ts["param_groups"]})
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, y = rng.standard_normal((8, 6)), rng.standard_normal((8, 3))
        _step(torch, tm, to, x, y, "float32")
        _step(ember, em, from_torch, x, y, "float32")
    for p, q in zip(tm.parameters(), em.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=1e-6)
    if name == "Adafactor":
        assert float(from_torch.state[next(iter(em.parameters()))]["step"]) == 6.0


@pytest.mark.parametrize("name,kw", [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}), ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}), ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -0.5}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "bogus"}),
])
def test_invalid_options(name, kw):
    with pytest.raises(ValueError) as te:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))], **kw)
    with pytest.raises(ValueError, match=str(te.value).replace("(", r"\(").replace(")", r"\)")):
        getattr(ember.optim, name)([ember.nn.Parameter(ember.ones(2, 2))], **kw)


def test_muon_rejects_non_matrices_and_bad_ns_options():
    for shape in [(3,), (2, 2, 2)]:
        with pytest.raises(ValueError) as te:
            torch.optim.Muon([torch.nn.Parameter(torch.ones(shape))])
        with pytest.raises(ValueError) as ee:
            ember.optim.Muon([ember.nn.Parameter(ember.ones(shape))])
        assert str(ee.value).replace("ember.", "torch.") == str(te.value)
    for kw in [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}]:
        w = ember.nn.Parameter(ember.ones(2, 3))
        opt = ember.optim.Muon([w], **kw)
        w.grad = ember.ones(2, 3)
        with pytest.raises(ValueError):
            opt.step()


def test_defaults_match_torch():
    for name in ("Adafactor", "Muon"):
        t = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))]).defaults
        e = getattr(ember.optim, name)([ember.nn.Parameter(ember.ones(2, 2))]).defaults
        assert e == t, name


def test_adafactor_factors_higher_dims_and_skips_none_grads():
    torch.manual_seed(0)
    wt = torch.nn.Parameter(torch.randn(2, 3, 4, dtype=torch.float64))
    unused_t = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    we = ember.nn.Parameter(ember.tensor(wt.detach().numpy()))
    unused_e = ember.nn.Parameter(ember.tensor(unused_t.detach().numpy()))
    to, eo = torch.optim.Adafactor([wt, unused_t], lr=0.1), ember.optim.Adafactor([we, unused_e], lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(5):
        g = rng.standard_normal((2, 3, 4))
        wt.grad, we.grad = torch.tensor(g), ember.tensor(g)
        to.step()
        eo.step()
    np.testing.assert_allclose(we.detach().numpy(), wt.detach().numpy(), rtol=0, atol=1e-12)
    assert tuple(eo.state[we]["row_var"].shape) == (2, 3, 1)
    assert tuple(eo.state[we]["col_var"].shape) == (2, 1, 4)
    assert unused_e not in eo.state
