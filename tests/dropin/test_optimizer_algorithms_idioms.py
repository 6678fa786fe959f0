"""Every optimizer of ``torch.optim`` against torch: parameters and ``state_dict()['state']`` (keys, dtypes, shapes,
values) after each of 20 steps, tensor learning rates and betas, state dict round trips and layout errors, hooks,
argument checks, LBFGS with a strong-Wolfe line search, SparseAdam on sparse embedding gradients and
``swap_in_optimizer_params_and_state``.

float64 agrees to rounding; float32 may differ by an ulp where torch's kernels fuse a multiply-add."""
import numpy as np
import pytest
import torch

import ember

SHAPES = ((5, 3), (3,), (4, 4))
STEPS = 20
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}

CONFIGS = [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.05, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, foreach=False)),
    ("SGD", dict(lr=0.05, momentum=0.5, fused=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True, foreach=True)),
    ("Adam", dict(lr=0.01, fused=True, decoupled_weight_decay=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.02, betas=(0.8, 0.95), amsgrad=True)),
    ("Adamax", dict(lr=0.02, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.05)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, t0=5, lambd=0.01, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, momentum=0.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, d=2.0, weight_decay=0.1, eps=(1e-4, 1e-2), maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)]


def _groups(lib, init, two_groups=True):
    ps = [lib.nn.Parameter(lib.tensor(a)) for a in init]
    return ps, ([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.003}] if two_groups else ps)


def _check_state(es, ts, tol):
    assert list(es) == list(ts)
    for i in ts:
        assert list(es[i]) == list(ts[i]), (i, list(es[i]), list(ts[i]))
        for k, t in ts[i].items():
            e = es[i][k]
            if isinstance(t, torch.Tensor):
                assert str(e.dtype) == str(t.dtype).replace("torch", "ember") and e.shape == t.shape, k
                np.testing.assert_allclose(e.numpy(), t.numpy(), **tol, err_msg=k)
            else:
                assert type(e) is type(t) and e == t, k


def _run(name, kwargs, dtype, lr=None, steps=STEPS):
    """Steps torch and ember on the same parameters and gradients, checking parameters and state every step."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    (tp, tg), (ep, eg) = _groups(torch, init), _groups(ember, init)
    tkw, ekw = dict(kwargs), dict(kwargs)
    if lr is not None:
        tkw["lr"], ekw["lr"] = lr(torch), lr(ember)
    topt, eopt = getattr(torch.optim, name)(tg, **tkw), getattr(ember.optim, name)(eg, **ekw)
    for step in range(steps):
        for t, e in zip(tp, ep):
            g = rng.standard_normal(t.shape).astype(dtype)
            t.grad, e.grad = torch.tensor(g), ember.tensor(g)
        topt.step()
        eopt.step()
        for t, e in zip(tp, ep):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[dtype], err_msg=f"step {step}")
        _check_state(eopt.state_dict()["state"], topt.state_dict()["state"], TOL[dtype])
    return topt, eopt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_twenty_steps_params_and_state(name, kwargs, dtype):
    topt, eopt = _run(name, kwargs, dtype)
    tgroups, egroups = topt.state_dict()["param_groups"], eopt.state_dict()["param_groups"]
    assert tgroups == egroups


@pytest.mark.parametrize("name,kwargs", [CONFIGS[i] for i in (0, 4, 5, 6, 7, 10, 11, 13, 15, 16)] +
                         [("Adagrad", dict(lr=0.1, lr_decay=0.05, fused=True))], ids=lambda v: str(v)[:12])
def test_float32_tensor_lr_on_float64_params(name, kwargs):
    """A ``torch.tensor(lr)`` is float32: torch computes the step's scalars (``lr / bias_correction``, the decoupled
    decay ``1 - lr * wd``, ASGD's ``eta``) in float32 even for float64 parameters; its fused steps take a float."""
    _run(name, kwargs, np.float64, lr=lambda lib: lib.tensor(kwargs["lr"]), steps=6)


def test_tensor_lr_float32_and_scheduler():
    """``lr`` stays a tensor in the groups and the state dict; a scheduler fills it in place."""
    topt, eopt = _run("Adam", dict(lr=0.01, amsgrad=True), np.float32, lr=lambda lib: lib.tensor(0.01), steps=4)
    for lib, opt in ((torch, topt), (ember, eopt)):
        scheduler = lib.optim.lr_scheduler.StepLR(opt, 1, 0.5)
        opt.step()
        scheduler.step()
    lr = eopt.param_groups[0]["lr"]
    assert isinstance(lr, ember.Tensor) and lr.item() == topt.param_groups[0]["lr"].item()
    assert isinstance(eopt.state_dict()["param_groups"][0]["lr"], ember.Tensor)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_tensor_betas(dtype):
    """Tensor betas are kept as tensors and their float32 values drive the bias corrections."""
    rng = np.random.default_rng(3)
    init, grads = rng.standard_normal((6, 5)).astype(dtype), rng.standard_normal((12, 6, 5)).astype(dtype)
    res = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.tensor(init))
        opt = lib.optim.Adam([p], lr=lib.tensor(0.01), betas=(lib.tensor(0.8), lib.tensor([0.95])), amsgrad=True)
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        res.append((p.detach().numpy(), opt.param_groups[0]["betas"]))
    (t, tb), (e, eb) = res
    assert all(isinstance(b, ember.Tensor) and b.dim() == 0 for b in eb)
    assert [b.item() for b in eb] == [b.item() for b in tb]
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=0, atol=3e-7)
    np.testing.assert_allclose(e, t, **tol)


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.Adam(p, lr=lib.tensor(0.1), foreach=True),
    lambda lib, p: lib.optim.AdamW(p, lr=lib.tensor(0.1), foreach=True),
    lambda lib, p: lib.optim.Adam(p, betas=(lib.tensor(0.9), lib.tensor(0.99)), foreach=True),
    lambda lib, p: lib.optim.Adam(p, betas=(0.9, lib.tensor(0.99))),
    lambda lib, p: lib.optim.Adam(p, betas=(lib.tensor([0.9, 0.9]), lib.tensor(0.99))),
    lambda lib, p: lib.optim.SGD(p, lr=lib.tensor([0.1, 0.2])),
    lambda lib, p: lib.optim.Adam(p, lr=-0.1),
    lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.999)),
    lambda lib, p: lib.optim.AdamW(p, betas=(0.9, -0.1)),
    lambda lib, p: lib.optim.Adam(p, eps=-1e-8),
    lambda lib, p: lib.optim.NAdam(p, momentum_decay=-1.0),
    lambda lib, p: lib.optim.RAdam(p, weight_decay=-1.0),
    lambda lib, p: lib.optim.Adamax(p, betas=(0.9, 1.0)),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=-0.5),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, fused=True, foreach=True),
    lambda lib, p: lib.optim.RMSprop(p, alpha=-0.1),
    lambda lib, p: lib.optim.Adagrad(p, initial_accumulator_value=-0.1),
    lambda lib, p: lib.optim.Adagrad(p, lr_decay=-0.1),
    lambda lib, p: lib.optim.Adadelta(p, rho=1.1),
    lambda lib, p: lib.optim.Rprop(p, etas=(1.5, 1.2)),
    lambda lib, p: lib.optim.SparseAdam(p, lr=0.0),
    lambda lib, p: lib.optim.Adafactor(p, beta2_decay=0.5),
    lambda lib, p: lib.optim.Adafactor(p, d=0.5),
    lambda lib, p: lib.optim.LBFGS([{"params": p}, {"params": [lib.nn.Parameter(lib.ones(1))]}]),
    lambda lib, p: lib.optim.Adam([]),
])
def test_argument_validation(make):
    """torch's exception type and message, naming the bad value."""
    with pytest.raises(Exception) as want:
        make(torch, [torch.nn.Parameter(torch.ones(3))])
    with pytest.raises(type(want.value)) as got:
        make(ember, [ember.nn.Parameter(ember.ones(3))])
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[i] for i in (0, 3, 7, 11, 12, 13, 14, 15, 16)] +
                         [("Muon", dict(lr=0.02, momentum=0.9, weight_decay=0.1))], ids=lambda v: str(v)[:12])
def test_state_dict_round_trip_mid_training(name, kwargs):
    """Save after 4 steps, load into a fresh float64 optimizer, continue 4 steps: the same trajectory as torch."""
    rng = np.random.default_rng(5)
    shapes = ((4, 3), (3, 5)) if name == "Muon" else SHAPES
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(8)]
    res = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.tensor(a)) for a in init]
        opt = getattr(lib.optim, name)(ps, **kwargs)
        for gs in grads[:4]:
            for p, g in zip(ps, gs):
                p.grad = lib.tensor(g)
            opt.step()
        saved = opt.state_dict()
        ps2 = [lib.nn.Parameter(p.detach().clone()) for p in ps]
        opt2 = getattr(lib.optim, name)(ps2, **kwargs)
        opt2.load_state_dict(saved)
        for gs in grads[4:]:
            for p, g in zip(ps2, gs):
                p.grad = lib.tensor(g)
            opt2.step()
        res.append((ps2, opt2.state_dict()))
    for e, t in zip(res[1][0], res[0][0]):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-13)
    _check_state(res[1][1]["state"], res[0][1]["state"], TOL[np.float64])


@pytest.mark.parametrize("case", ["groups", "group_size", "state_shape"])
def test_load_state_dict_from_another_layout(case):
    """A state saved by a different param-group layout: torch's ValueError at load, or its RuntimeError at the
    step when a state tensor no longer fits its parameter."""
    errors = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.ones(3, 2)) for _ in range(3)]
        opt = lib.optim.Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.1}])
        for p in ps:
            p.grad = lib.ones_like(p)
        opt.step()
        if case == "groups":
            other = lib.optim.Adam([lib.nn.Parameter(lib.ones(3, 2)) for _ in range(3)])
        elif case == "group_size":
            other = lib.optim.Adam([{"params": ps[:1]}, {"params": ps[1:]}])
        else:
            ps = [lib.nn.Parameter(lib.ones(4, 2)) for _ in range(3)]
            other = lib.optim.Adam([{"params": ps[:2]}, {"params": ps[2:]}])
        with pytest.raises((ValueError, RuntimeError)) as info:
            other.load_state_dict(opt.state_dict())
            for p in ps:
                p.grad = lib.ones_like(p)
            other.step()
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]) and str(errors[1]) == str(errors[0])


def test_hooks_param_groups_and_zero_grad():
    """Step, state_dict and load_state_dict hooks fire in torch's order with torch's arguments; a parameter
    without a gradient gets no state; ``zero_grad(set_to_none=False)`` zeroes in place; ``add_param_group``
    fills the defaults."""
    logs = []
    for lib in (torch, ember):
        log = []
        ps = [lib.nn.Parameter(lib.ones(2, 2) * i) for i in range(3)]
        opt = lib.optim.SGD(ps[:2], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": ps[2:], "lr": 0.5, "nesterov": True})
        handles = [
            opt.register_step_pre_hook(lambda o, args, kw: log.append(("pre", len(args), sorted(kw)))),
            opt.register_step_post_hook(lambda o, args, kw: log.append(("post", len(args)))),
            opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre")),
            opt.register_state_dict_post_hook(lambda o, sd: sd.setdefault("extra", 1) and None),
            opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load_pre", sorted(sd)))),
            opt.register_load_state_dict_post_hook(lambda o: log.append(("load_post", len(o.state)))),
        ]
        ps[0].grad, ps[2].grad = lib.ones(2, 2), lib.full((2, 2), 2.0)
        opt.step()
        grad = ps[0].grad
        opt.zero_grad(set_to_none=False)
        log.append((ps[0].grad is grad, ps[0].grad.abs().sum().item(), ps[1].grad is None))
        opt.step(closure=None)
        sd = opt.state_dict()
        log.append((sorted(sd), sorted(sd["state"]), [sorted(g) for g in sd["param_groups"]]))
        opt.load_state_dict(sd)
        for h in handles:
            h.remove()
        opt.step()
        opt.state_dict()
        log.append([p.detach().numpy().tolist() for p in ps])
        log.append([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
        logs.append(log)
    assert logs[1] == logs[0]


def _logistic(lib, w, x, y):
    return lib.nn.functional.binary_cross_entropy_with_logits(x @ w, y) + 1e-2 * (w * w).sum()


LBFGS_CASES = [(np.float64, dict(line_search_fn="strong_wolfe", history_size=3, max_iter=10), 3),
               (np.float64, dict(lr=0.5, history_size=2, max_iter=4), 3),
               (np.float64, dict(line_search_fn="strong_wolfe", max_iter=6, max_eval=8, tolerance_grad=1e-12,
                                 tolerance_change=1e-14), 3),
               # float32 losses differ in their last bits (reduction order): stop short of that noise floor
               (np.float32, dict(line_search_fn="strong_wolfe", history_size=3, max_iter=3), 1),
               (np.float32, dict(lr=0.5, history_size=2, max_iter=4), 3)]


@pytest.mark.parametrize("dtype,kwargs,steps", LBFGS_CASES)
def test_lbfgs_logistic_regression(dtype, kwargs, steps):
    """L-BFGS on a regularized logistic regression; loss, weights, evaluation counts and state keys follow torch."""
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((40, 6)).astype(dtype), (rng.random(40) > 0.5).astype(dtype)
    res = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.zeros(6, dtype=getattr(lib, np.dtype(dtype).name)))
        opt = lib.optim.LBFGS([w], **kwargs)
        xt, yt = lib.tensor(x), lib.tensor(y)

        def closure():
            opt.zero_grad()
            loss = _logistic(lib, w, xt, yt)
            loss.backward()
            return loss
        losses = [opt.step(closure).item() for _ in range(steps)]
        st = opt.state_dict()["state"][0]
        res.append((losses, w.detach().numpy(), st["func_evals"], st["n_iter"], sorted(st)))
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][0], res[0][0], **tol)
    np.testing.assert_allclose(res[1][1], res[0][1], **tol)
    assert res[1][2:] == res[0][2:]


def test_sparse_adam_on_sparse_embedding_grads():
    """SparseAdam updates only the looked-up rows (repeated indices summed); its ``step`` is a Python int."""
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    batches = [[[1, 2, 4], [4, 3, 9]], [[0, 0, 1]], [[5, 5, 5], [2, 7, 7]]]
    res = []
    for lib in (torch, ember):
        emb = lib.nn.Embedding(10, 4, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(weight))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.05, betas=(0.8, 0.95))
        for i in range(9):
            opt.zero_grad()
            out = emb(lib.tensor(batches[i % 3]))
            (out * lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape) / 7).sum().backward()
            opt.step()
        st = opt.state_dict()["state"][0]
        res.append((emb.weight.detach().numpy(), st["step"], st["exp_avg"].numpy(), st["exp_avg_sq"].numpy()))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-7)
    assert type(res[1][1]) is int
    for lib in (torch, ember):  # a dense gradient is refused
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([p])
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()


def test_swap_in_optimizer_params_and_state():
    """Stepping other tensors with a state dict's state and options, in place; the live optimizer is restored."""
    assert set(torch.optim.__all__) <= set(dir(ember.optim))
    res = []
    for lib in (torch, ember):
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():
            model.weight.copy_(lib.arange(6.0).reshape(2, 3))
            model.bias.fill_(0.5)
        opt = lib.optim.AdamW(model.parameters(), lr=0.1)
        model(lib.ones(4, 3)).pow(2).sum().backward()
        opt.step()
        params = {n: p.detach().clone() for n, p in model.named_parameters()}
        for p in params.values():
            p.grad = lib.ones_like(p)
        saved = opt.state_dict()
        osd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in saved["state"].items()},
               "param_groups": saved["param_groups"]}
        osd["param_groups"][0]["lr"] = 0.5
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
            opt.step()
            inside = opt.param_groups[0]["lr"]
        errors = []
        for bad in ({"state": [], "param_groups": []}, {"state": {}, "param_groups": []},
                    {"state": {0: {}}, "param_groups": [{"params": [0, 1]}]},
                    {"state": {7: {}}, "param_groups": osd["param_groups"]}):
            with pytest.raises(RuntimeError) as info:
                with lib.optim.swap_in_optimizer_params_and_state(opt, params, bad):
                    pass
            errors.append(str(info.value))
        res.append(([p.numpy() for p in params.values()], [p.detach().numpy() for p in model.parameters()],
                    osd["state"][0]["exp_avg"].numpy(), osd["state"][0]["step"].item(),
                    inside, opt.param_groups[0]["lr"], errors))
    (t, e) = res
    for a, b in zip(e[0] + e[1] + [e[2]], t[0] + t[1] + [t[2]]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert e[3:] == t[3:]
