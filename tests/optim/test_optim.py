"""Optimizers against torch: the same parameters stepped with the same gradients agree every step; state_dict
layouts match torch's and round-trip; errors and hooks behave as torch's."""
import copy

import numpy as np
import pytest
import torch

import ember

SHAPES = ((5, 3), (3,), (4, 4))
STEPS = 50

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True, decoupled_weight_decay=True, weight_decay=0.2)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, amsgrad=True, weight_decay=0.5)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.9))),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, alpha=0.9)),
    ("RMSprop", dict(lr=0.005, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.01, t0=10, lambd=0.01, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]


def make_params(lib, init, dtype=None, device=None):
    return [lib.nn.Parameter(lib.tensor(a, dtype=dtype, device=device)) for a in init]


def host(t):
    return t.detach().cpu().numpy()


def groups(params, name, two_groups):
    # the second group overrides lr (and weight decay where the optimizer has one)
    if not two_groups:
        return params
    return [{"params": params[:2]}, {"params": params[2:], "lr": 0.003}]


def run_pair(name, kwargs, steps=STEPS, two_groups=True, seed=0, dtype=np.float32, complex_=False, device="cpu"):
    rng = np.random.default_rng(seed)

    def draw(shape):
        x = rng.standard_normal(shape)
        if complex_:
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)
    init = [draw(s) for s in SHAPES]
    tp, ep = make_params(torch, init), make_params(ember, init, device=device)
    topt = getattr(torch.optim, name)(groups(tp, name, two_groups), **kwargs)
    eopt = getattr(ember.optim, name)(groups(ep, name, two_groups), **kwargs)
    history = []
    for _ in range(steps):
        for t, e in zip(tp, ep):
            g = draw(t.shape)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g, device=device)
        topt.step()
        eopt.step()
        history.append([(t.detach().numpy().copy(), host(e).copy()) for t, e in zip(tp, ep)])
    return topt, eopt, tp, ep, history


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_matches_torch_every_step(name, kwargs, device):
    _, _, _, _, history = run_pair(name, kwargs, device=device)
    for step, pairs in enumerate(history):
        for t, e in pairs:
            np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6, err_msg=f"{name} {kwargs} step {step}")


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[4], CONFIGS[18], CONFIGS[20]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_complex_and_float64(name, kwargs):
    for complex_, dtype, tol in ((True, np.complex64, 1e-5), (False, np.float64, 1e-12)):
        _, _, _, _, history = run_pair(name, kwargs, steps=10, dtype=dtype, complex_=complex_)
        for pairs in history:
            for t, e in pairs:
                np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[4], CONFIGS[11], CONFIGS[18], CONFIGS[20], CONFIGS[22],
                                         CONFIGS[24], CONFIGS[26]], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_params(name, kwargs, dtype):
    """Half-precision parameters keep their dtype and follow torch to within the format's resolution."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    tp = torch.nn.Parameter(torch.tensor(a, dtype=getattr(torch, dtype)))
    ep = ember.nn.Parameter(ember.tensor(a, dtype=getattr(ember, dtype)))
    topt, eopt = getattr(torch.optim, name)([tp], **kwargs), getattr(ember.optim, name)([ep], **kwargs)
    for _ in range(10):
        g = rng.standard_normal((4, 3)).astype(np.float32)
        tp.grad, ep.grad = torch.tensor(g, dtype=tp.dtype), ember.tensor(g, dtype=ep.dtype)
        topt.step()
        eopt.step()
    assert ep.dtype is getattr(ember, dtype)
    np.testing.assert_allclose(ep.detach().float().numpy(), tp.detach().float().numpy(), atol=2e-2, rtol=0)


def _state_layout(sd):
    def layout(v):
        if isinstance(v, (torch.Tensor, ember.Tensor)):
            return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1])
        if isinstance(v, list):
            return [layout(x) for x in v]
        return type(v).__name__
    return {k: {kk: layout(vv) for kk, vv in s.items()} for k, s in sd["state"].items()}


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dict_layout_matches_torch(name, kwargs):
    topt, eopt, _, _, _ = run_pair(name, kwargs, steps=3)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert list(esd) == ["state", "param_groups"]
    assert esd["param_groups"] == tsd["param_groups"]
    assert [list(g) for g in esd["param_groups"]] == [list(g) for g in tsd["param_groups"]]
    assert _state_layout(esd) == _state_layout(tsd)
    for k, s in tsd["state"].items():
        for key, v in s.items():
            np.testing.assert_allclose(esd["state"][k][key].numpy(), v.numpy(), rtol=1e-6, atol=1e-6)
    assert repr(eopt) == repr(topt)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dict_round_trip(name, kwargs):
    _, eopt, _, ep, _ = run_pair(name, kwargs, steps=5)
    saved = copy.deepcopy(eopt.state_dict())
    ep2 = [ember.nn.Parameter(p.detach().clone()) for p in ep]
    fresh = getattr(ember.optim, name)(groups(ep2, name, True), **{**kwargs, "lr": 123.0})
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == eopt.param_groups[0]["lr"]
    assert fresh.param_groups[0]["params"][0] is ep2[0]
    rng = np.random.default_rng(1)
    for _ in range(5):
        for a, b in zip(ep, ep2):
            g = rng.standard_normal(a.shape).astype(np.float32)
            a.grad, b.grad = ember.tensor(g), ember.tensor(g)
        eopt.step()
        fresh.step()
        for a, b in zip(ep, ep2):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_load_state_dict_casts_to_param_dtype():
    p = ember.nn.Parameter(ember.zeros(3))
    opt = ember.optim.Adam([p])
    p.grad = ember.ones(3)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    q = ember.nn.Parameter(ember.zeros(3, dtype=ember.float64))
    opt2 = ember.optim.Adam([q])
    opt2.load_state_dict(sd)
    st = opt2.state[q]
    assert st["exp_avg"].dtype is ember.float64 and st["step"].dtype is ember.float32


def test_load_state_dict_errors():
    p = ember.nn.Parameter(ember.zeros(3))
    opt = ember.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})


def _same_error(fn_e, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value) == str(te.value)


def test_construction_errors_match_torch():
    def cases(lib):
        p = lib.nn.Parameter(lib.zeros(2))
        q = lib.nn.Parameter(lib.zeros(2))
        o = lib.optim
        return [
            lambda: o.SGD([], lr=0.1),
            lambda: o.SGD(p, lr=0.1),
            lambda: o.SGD([p, 1], lr=0.1),
            lambda: o.SGD([p * 2], lr=0.1),
            lambda: o.SGD([{"params": [p]}, {"params": [q, p]}], lr=0.1),
            lambda: o.SGD([("a", p), q], lr=0.1),
            lambda: o.SGD([p], lr=-1.0),
            lambda: o.SGD([p], lr=0.1, momentum=-1),
            lambda: o.SGD([p], lr=0.1, nesterov=True),
            lambda: o.SGD([p], lr=0.1).add_param_group({"params": [p]}),
            lambda: o.SGD([p], lr=0.1).add_param_group([p]),
            lambda: o.Adam([p], betas=(1.0, 0.9)),
            lambda: o.Adam([p], betas=(0.9, 1)),
            lambda: o.Adam([p], eps=-1),
            lambda: o.Adam([p], weight_decay=-1),
            lambda: o.NAdam([p], momentum_decay=-1),
            lambda: o.RMSprop([p], alpha=-1),
            lambda: o.Adagrad([p], lr_decay=-1),
            lambda: o.Adadelta([p], rho=2),
            lambda: o.Rprop([p], etas=(1.5, 2.0)),
            lambda: o.LBFGS([{"params": [p]}, {"params": [q]}]),
        ]
    for fe, ft in zip(cases(ember), cases(torch)):
        _same_error(fe, ft)


def test_duplicate_params_warn_and_named_params():
    p = ember.nn.Parameter(ember.zeros(2))
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        ember.optim.SGD([p, p], lr=0.1)
    opt = ember.optim.SGD([("w", p)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w"] and opt.param_groups[0]["params"] == [p]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]


def test_zero_grad():
    p = ember.nn.Parameter(ember.zeros(2))
    opt = ember.optim.Adam([p])
    p.grad = ember.ones(2)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no gradient: nothing happens, no state
    assert len(opt.state) == 0


def test_sgd_without_momentum_keeps_no_state():
    topt, eopt, _, _, _ = run_pair("SGD", dict(lr=0.1), steps=2)
    assert eopt.state_dict()["state"] == topt.state_dict()["state"] == {}


def test_step_hooks_and_closure():
    p = ember.nn.Parameter(ember.tensor([1.0]))
    opt = ember.optim.SGD([p], lr=0.5)
    log = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: log.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
    h2 = ember.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global"))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        log.append("closure")
        return loss
    loss = opt.step(closure)
    assert log == ["global", "pre", "closure", "post"] and loss.item() == 1.0 and p.tolist() == [0.0]
    h1.remove()
    h2.remove()
    log.clear()
    p.grad = ember.ones(1)
    opt.step()
    assert log == ["post"]
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1


def test_autograd_training_matches_torch():
    """A real loss through autograd (elementwise ops only): both frameworks follow the same trajectory."""
    rng = np.random.default_rng(3)
    w0, x, y = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3))
    runs = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.tensor(w0))
        xt, yt = lib.tensor(x), lib.tensor(y)
        opt = lib.optim.Adam([w], lr=0.05)
        for _ in range(20):
            opt.zero_grad()
            d = w * xt - yt
            (d * d).sum().backward()
            opt.step()
        runs.append(w.detach().numpy())
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [dict(), dict(line_search_fn="strong_wolfe"),
                                    dict(lr=0.5, history_size=3, max_iter=5, tolerance_change=1e-5)])
def test_lbfgs_matches_torch(kwargs):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(6) ** 2 + 0.5).astype(np.float32)
    c = rng.standard_normal(6).astype(np.float32)
    w0 = rng.standard_normal(6).astype(np.float32)
    results = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.tensor(w0))
        at, ct = lib.tensor(a), lib.tensor(c)
        opt = lib.optim.LBFGS([w], **kwargs)

        def closure():
            opt.zero_grad()
            d = w - ct
            loss = (d * d * at).sum() + (d * d * d * d * 0.1).sum()
            loss.backward()
            return loss
        traj = []
        for _ in range(4):
            opt.step(closure)
            traj.append(w.detach().numpy().copy())
        results.append((np.array(traj), opt.state_dict()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    assert results[1][1]["param_groups"] == results[0][1]["param_groups"]
    assert _state_layout(results[1][1]) == _state_layout(results[0][1])
    assert list(results[1][1]["state"][0]) == list(results[0][1]["state"][0])


def test_lbfgs_state_dict_round_trip():
    def make():
        w = ember.nn.Parameter(ember.tensor([1.0, -2.0, 3.0]))
        return w, ember.optim.LBFGS([w], max_iter=3, history_size=2)

    def closure_for(w, opt):
        def closure():
            opt.zero_grad()
            loss = (w * w * w * w).sum()
            loss.backward()
            return loss
        return closure
    w, opt = make()
    opt.step(closure_for(w, opt))
    w2, opt2 = make()
    w2.data = w.detach().clone()
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    opt.step(closure_for(w, opt))
    opt2.step(closure_for(w2, opt2))
    np.testing.assert_array_equal(w.detach().numpy(), w2.detach().numpy())
