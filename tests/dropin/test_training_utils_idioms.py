"""Training-loop utilities against torch: gradient clipping, flat parameter vectors, gradient accumulation, lr
schedulers (chained, resumed mid-schedule from a checkpoint), optimizer state round trips, SWA/EMA, parametrizations,
pruning and early stopping. The same weights are stepped in both libraries and compared step by step."""
import collections
import io
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrize  # noqa: F401  (torch.nn.utils.parametrize/prune are lazily imported submodules)
import torch.nn.utils.prune  # noqa: F401

import ember

LIBS = (ember, torch)


def _np(t):
    return t.detach().float().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(e, t, rtol=1e-6, atol=1e-7):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _data(n=16, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((n, 4)).astype(np.float32), r.standard_normal((n, 3)).astype(np.float32)


def _model(lib):
    """The same small MLP in both libraries (weights drawn with NumPy)."""
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(10 + i).standard_normal(tuple(p.shape)).astype(np.float32) * .4))
    return m


def _loss(lib, m, x, y):
    return lib.nn.functional.mse_loss(m(lib.tensor(x)), lib.tensor(y))


def _roundtrip(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf, weights_only=True)


# -- gradient clipping --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), "inf", 0.5, 3])
@pytest.mark.parametrize("foreach", [None, True])
def test_clip_grad_norm_matches(norm_type, foreach):
    """The total norm returned and the gradients scaled in place, for every p-norm."""
    x, y = _data()
    res = []
    for lib in LIBS:
        m = _model(lib)
        _loss(lib, m, x, y).backward()
        total = lib.nn.utils.clip_grad_norm_(m.parameters(), 0.05, norm_type=norm_type, foreach=foreach)
        res.append((total, [p.grad for p in m.parameters()]))
    assert res[0][0].dtype == ember.float32 and res[0][0].shape == ()
    _close(res[0][0], res[1][0], rtol=1e-6)
    for a, b in zip(res[0][1], res[1][1]):
        _close(a, b, rtol=1e-5, atol=1e-8)


def test_clip_grad_norm_nonfinite_and_empty():
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.tensor([1.0, float("nan"), 2.0])
        with pytest.raises(RuntimeError, match="non-finite"):
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    res = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.tensor([1.0, float("inf"), 2.0])
        total = lib.nn.utils.clip_grad_norm_(p, 1.0)
        q = lib.nn.Parameter(lib.ones(2))  # no gradient: a zero norm, nothing scaled
        res.append((total, p.grad, lib.nn.utils.clip_grad_norm_([q], 1.0), q.grad))
    assert math.isinf(res[0][0].item()) and res[0][3] is None
    np.testing.assert_array_equal(_np(res[0][1]), _np(res[1][1]))  # inf/inf is nan, finite/inf is 0
    assert res[0][2].item() == res[1][2].item() == 0.0


def test_total_norm_of_mixed_dtypes_and_clip_with_norm():
    """``get_total_norm`` + ``clip_grads_with_norm_`` (the two halves of ``clip_grad_norm_``) over float64 and
    float32 gradients: the stacked norms promote."""
    res = []
    for lib in LIBS:
        a = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        b = lib.nn.Parameter(lib.ones(3))
        (a.sum() * 3 + (b * lib.tensor([4.0, -1.0, 2.0])).sum()).backward()
        total = lib.nn.utils.get_total_norm([b.grad, a.grad], norm_type=2.0)
        lib.nn.utils.clip_grads_with_norm_([a, b], 0.5, total)
        res.append((total, a.grad, b.grad))
    assert res[0][0].dtype == ember.float64
    for e, t in zip(*res):
        _close(e, t, rtol=1e-12 if e.dtype == ember.float64 else 1e-6)


def test_clip_grad_value():
    res = []
    for lib in LIBS:
        m = _model(lib)
        x, y = _data()
        (_loss(lib, m, x, y) * 50).backward()
        lib.nn.utils.clip_grad_value_(m.parameters(), clip_value=0.1)
        res.append([p.grad for p in m.parameters()])
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-6)
        assert float(a.abs().max()) <= np.float32(0.1)


def test_parameters_to_vector_and_back():
    """The flattened vector is differentiable; writing one back makes each parameter a view of it."""
    res = []
    for lib in LIBS:
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.arange(6.0).reshape(2, 3))
            m.bias.copy_(lib.tensor([-1.0, 1.0]))
        v = lib.nn.utils.parameters_to_vector(m.parameters())
        (v * lib.arange(8.0)).sum().backward()
        vec = lib.arange(10.0, 18.0)
        lib.nn.utils.vector_to_parameters(vec, m.parameters())
        vec[0] = 100.0
        res.append((v, m.weight.grad, m.bias.grad, m.weight, m.bias, isinstance(m.weight, lib.nn.Parameter)))
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0, 2.0], m.parameters())
    assert res[0][0].requires_grad and res[0][5]
    for e, t in zip(res[0][:5], res[1][:5]):
        _close(e, t)


def test_gradient_accumulation_with_clipping_matches():
    """Micro-batches with ``loss / accum_steps`` accumulate the full-batch gradient; clipped, then stepped."""
    x, y = _data(24)
    res = []
    for lib in LIBS:
        m = _model(lib)
        opt = lib.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.05)
        trace = []
        for step in range(3):
            opt.zero_grad(set_to_none=True)
            for i in range(4):
                (_loss(lib, m, x[i * 6:(i + 1) * 6], y[i * 6:(i + 1) * 6]) / 4).backward()
            grads = [p.grad.clone() for p in m.parameters()]
            norm = lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            opt.step()
            trace.append((norm, grads, [p.detach().clone() for p in m.parameters()]))
        res.append(trace)
    for (ne, ge, pe), (nt, gt, pt) in zip(*res):
        _close(ne, nt, rtol=1e-5)
        for a, b in zip(ge + pe, gt + pt):
            _close(a, b, rtol=1e-5, atol=1e-6)


# -- lr schedulers ------------------------------------------------------------------------------------------------------
SCHEDULERS = {
    "lambda": lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9),
    "step": lambda L, o: L.StepLR(o, 3, gamma=0.5),
    "multistep": lambda L, o: L.MultiStepLR(o, [2, 5, 5, 7], gamma=0.3),
    "exponential": lambda L, o: L.ExponentialLR(o, 0.9),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, T_max=5, eta_min=1e-3),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=1e-4),
    "cyclic_triangular2": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, step_size_down=3, mode="triangular2"),
    "cyclic_exp_range": lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=2, mode="exp_range", gamma=0.9),
    "onecycle_cos": lambda L, o: L.OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=4, pct_start=0.4),
    "onecycle_three_phase": lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.3], total_steps=12, three_phase=True,
                                                      anneal_strategy="linear"),
    "linear": lambda L, o: L.LinearLR(o, start_factor=0.1, total_iters=4),
    "constant": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=3),
    "polynomial": lambda L, o: L.PolynomialLR(o, total_iters=6, power=2.0),
    "sequential": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=3), L.CosineAnnealingLR(o, 8)],
                                              milestones=[3]),
    "chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, total_iters=4), L.ExponentialLR(o, 0.9)]),
}


def _groups(m):
    return [{"params": list(m[0].parameters())}, {"params": list(m[2].parameters()), "lr": 0.05}]


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_resumed_mid_schedule_matches(name):
    """Learning rates, momenta and weights step by step; at step 4 the optimizer and scheduler are saved, loaded
    and rebuilt fresh, as a resumed run does."""
    x, y = _data()
    res = []
    for lib in LIBS:
        L = lib.optim.lr_scheduler
        m = _model(lib)
        opt = lib.optim.SGD(_groups(m), lr=0.1, momentum=0.9, nesterov=True)
        sched = SCHEDULERS[name](L, opt)
        trace = [sched.get_last_lr()]
        for step in range(10):
            opt.zero_grad()
            _loss(lib, m, x, y).backward()
            opt.step()
            sched.step()
            trace.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                          [g["momentum"] for g in opt.param_groups], [_np(p).copy() for p in m.parameters()]))
            if step == 4:
                ckpt = _roundtrip(lib, {"opt": opt.state_dict(), "sched": sched.state_dict()})
                opt = lib.optim.SGD(_groups(m), lr=0.1, momentum=0.9, nesterov=True)
                opt.load_state_dict(ckpt["opt"])
                sched = SCHEDULERS[name](L, opt)
                sched.load_state_dict(ckpt["sched"])
        res.append(trace)
    assert res[0][0] == res[1][0]
    for e, t in zip(res[0][1:], res[1][1:]):
        assert e[:3] == t[:3]  # the same float formulas give the same floats
        for a, b in zip(e[3], t[3]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_multisteplr_milestones_survive_save_and_load():
    """``MultiStepLR`` keeps its milestones in a ``Counter``: it loads back as one, so a resumed scheduler can look
    up epochs that are not milestones and take the closed form of ``step(epoch)``."""
    res = []
    for lib in LIBS:
        L = lib.optim.lr_scheduler
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=1.0)
        sched = L.MultiStepLR(opt, milestones=[2, 4, 4], gamma=0.5)
        opt.step()
        sched.step()
        state = _roundtrip(lib, sched.state_dict())
        assert type(state["milestones"]) is collections.Counter
        fresh = L.MultiStepLR(lib.optim.SGD([p], lr=1.0), milestones=[1])
        fresh.load_state_dict(state)
        lrs = []
        for _ in range(5):
            fresh.optimizer.step()
            fresh.step()
            lrs.append(fresh.get_last_lr())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deprecated epoch argument
            fresh.step(3)
        res.append((lrs, fresh.get_last_lr()))
    assert res[0] == res[1]


@pytest.mark.parametrize("kind", ["sgd", "adam", "adamw"])
@pytest.mark.parametrize("which", ["cyclic", "onecycle"])
def test_momentum_cycling(kind, which):
    """CyclicLR and OneCycleLR cycle SGD's ``momentum`` or Adam's ``betas[0]`` against the learning rate."""
    res = []
    for lib in LIBS:
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        opt = {"sgd": lambda: lib.optim.SGD([p], lr=0.1, momentum=0.9),
               "adam": lambda: lib.optim.Adam([p], lr=0.1, betas=(0.95, 0.999)),
               "adamw": lambda: lib.optim.AdamW([p], lr=0.1)}[kind]()
        L = lib.optim.lr_scheduler
        sched = (L.CyclicLR(opt, 0.01, 0.1, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
                 if which == "cyclic" else L.OneCycleLR(opt, 0.3, total_steps=10, base_momentum=0.8, max_momentum=.95))
        trace = []
        for i in range(9):
            p.grad = lib.tensor([1.0, -0.5]) * (i + 1)
            opt.step()
            sched.step()
            g = opt.param_groups[0]
            trace.append((g["lr"], g.get("momentum"), g.get("betas"), _np(p).copy()))
        res.append(trace)
    for e, t in zip(*res):
        assert e[:3] == t[:3]
        np.testing.assert_allclose(e[3], t[3], rtol=1e-6)


@pytest.mark.parametrize("mode,threshold_mode,cooldown,min_lr", [
    ("min", "rel", 0, 0.0), ("max", "abs", 2, [0.01, 0.2]), ("min", "abs", 1, 0.02), ("max", "rel", 0, 0.0)])
def test_reduce_lr_on_plateau(mode, threshold_mode, cooldown, min_lr):
    vals = [1.0, 0.99, 0.995, 0.999, 0.98, 0.98, 0.97, 0.99, 1.0, 1.0, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
    res = []
    for lib in LIBS:
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode=mode, factor=0.5, patience=1, threshold=0.01,
                                                         threshold_mode=threshold_mode, cooldown=cooldown,
                                                         min_lr=min_lr)
        trace = []
        for i, v in enumerate(vals):
            v = -v if mode == "max" else v
            opt.step()
            sched.step(lib.tensor(v) if i % 2 else v)  # a metric tensor or a float
            trace.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter, float(sched.best)))
        state = _roundtrip(lib, sched.state_dict())
        res.append((trace, sorted(state), state["best"]))
    assert res[0] == res[1]


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)[:60]) for x in w]


@pytest.mark.parametrize("case", ["scheduler_first", "step_overridden", "get_lr", "epoch_argument", "in_order"])
def test_scheduler_call_order_warnings(case):
    """torch's warnings for ``scheduler.step()`` before ``optimizer.step()``, an optimizer whose ``step`` was
    replaced, ``get_lr()`` called directly and the deprecated ``epoch`` argument."""
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        if case == "step_overridden":
            opt.step = lambda: None
        if case != "scheduler_first":
            opt.step()
        if case == "get_lr":
            return sched.get_lr()
        sched.step(5) if case == "epoch_argument" else sched.step()
        if case == "scheduler_first":
            opt.step()
        return sched.get_last_lr(), sched.last_epoch
    e, t = _warned(lambda: run(ember)), _warned(lambda: run(torch))
    assert e == t
    assert bool(e[1]) == (case != "in_order")


# -- optimizers ---------------------------------------------------------------------------------------------------------
OPTIMIZERS = {
    "adam_amsgrad": lambda O, g: O.Adam(g, lr=0.01, amsgrad=True, weight_decay=0.01),
    "adamw_amsgrad_maximize": lambda O, g: O.AdamW(g, lr=0.01, amsgrad=True, maximize=True),
    "rmsprop_centered": lambda O, g: O.RMSprop(g, lr=0.01, centered=True, momentum=0.9, weight_decay=0.01),
    "adagrad": lambda O, g: O.Adagrad(g, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    "adadelta": lambda O, g: O.Adadelta(g, lr=1.0, rho=0.8, weight_decay=0.01),
    "adamax": lambda O, g: O.Adamax(g, lr=0.01, weight_decay=0.01),
    "nadam_decoupled": lambda O, g: O.NAdam(g, lr=0.01, weight_decay=0.01, decoupled_weight_decay=True),
    "radam_decoupled": lambda O, g: O.RAdam(g, lr=0.01, weight_decay=0.01, decoupled_weight_decay=True),
    "rprop": lambda O, g: O.Rprop(g, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 1), maximize=True),
    "asgd": lambda O, g: O.ASGD(g, lr=0.01, t0=2, lambd=1e-3, weight_decay=0.01),
    "sgd_nesterov": lambda O, g: O.SGD(g, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "sgd_dampening_maximize": lambda O, g: O.SGD(g, lr=0.05, momentum=0.9, dampening=0.1, maximize=True),
    "adam_flags": lambda O, g: O.Adam(g, lr=0.01, foreach=False, capturable=False, differentiable=False, fused=None),
    "adamw_fused": lambda O, g: O.AdamW(g, lr=0.01, fused=True),
}


def _state(t):
    return _np(t).copy() if hasattr(t, "detach") else t


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_state_dict_round_trip_matches(name):
    """Three steps, a save/load into a fresh optimizer, three more: weights and every state tensor (its key,
    dtype and value) agree with torch's at each step; the param groups' options too."""
    x, y = _data()
    res = []
    for lib in LIBS:
        m = _model(lib)
        opt = OPTIMIZERS[name](lib.optim, _groups(m))
        trace = []
        for step in range(6):
            opt.zero_grad()
            _loss(lib, m, x, y).backward()
            opt.step()
            sd = opt.state_dict()
            trace.append(([_np(p).copy() for p in m.parameters()],
                          {k: {kk: (str(v.dtype).split(".")[-1], _state(v)) if hasattr(v, "dtype") else v
                               for kk, v in s.items()} for k, s in sd["state"].items()}))
            if step == 2:
                opt = OPTIMIZERS[name](lib.optim, _groups(m))
                opt.load_state_dict(_roundtrip(lib, sd))
        groups = [{k: v for k, v in g.items()} for g in opt.state_dict()["param_groups"]]
        res.append((trace, groups))
    assert res[0][1] == res[1][1]
    for (pe, se), (pt, st) in zip(res[0][0], res[1][0]):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert se.keys() == st.keys()
        for k in st:
            assert se[k].keys() == st[k].keys()
            for kk, v in st[k].items():
                if isinstance(v, tuple):
                    assert se[k][kk][0] == v[0]
                    scale = float(np.abs(v[1]).max(initial=1.0))  # RMSprop's centered buffers amplify roundings
                    np.testing.assert_allclose(se[k][kk][1], v[1], rtol=1e-5, atol=1e-5 * scale)
                else:
                    assert se[k][kk] == v


@pytest.mark.parametrize("make", [
    lambda O, p: O.Adam([p], fused=True, foreach=True),
    lambda O, p: O.AdamW([p], fused=True, differentiable=True),
    lambda O, p: O.SGD([p], lr=0.1, fused=True, foreach=True),
    lambda O, p: O.SGD([p], lr=0.1, fused=True, differentiable=True),
    lambda O, p: O.Adagrad([p], fused=True, foreach=True),
    lambda O, p: O.Adagrad([p], fused=True, differentiable=True),
    lambda O, p: O.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
    lambda O, p: O.Adam([p], betas=(0.9, 1.0)),
    lambda O, p: O.Adam([{"params": [p]}, {"params": p}]),
])
def test_optimizer_constructor_errors(make):
    """Option combinations torch refuses (``fused`` with ``foreach`` or ``differentiable``, ...), same types."""
    with pytest.raises(Exception) as want:
        make(torch.optim, torch.nn.Parameter(torch.ones(2)))
    with pytest.raises(type(want.value), match=str(want.value)[:20].replace("(", r"\(").replace("`", ".")):
        make(ember.optim, ember.nn.Parameter(ember.ones(2)))


def test_add_param_group_per_group_options_and_zero_grad():
    """A group added mid-training (fine-tuning unfreezes a layer) takes the defaults it omits and gets
    ``initial_lr`` from an existing scheduler; ``zero_grad(set_to_none=False)`` keeps zeroed tensors."""
    res = []
    for lib in LIBS:
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.full((3,), 2.0))
        opt = lib.optim.Adam([a], lr=0.1, weight_decay=0.01)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        opt.add_param_group({"params": b, "lr": 0.4, "betas": (0.8, 0.9)})
        out = [sorted(opt.param_groups[1]), opt.param_groups[1]["weight_decay"]]
        for _ in range(3):
            (a.pow(2).sum() + b.pow(3).sum()).backward()
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=False)
            out += [a.grad.tolist(), b.grad.tolist(), sched.get_last_lr(), _np(a).tolist(), _np(b).tolist()]
        opt.zero_grad()
        out.append((a.grad, b.grad))
        with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
            opt.add_param_group({"params": [a]})
        res.append(out)
    assert res[0][:2] == res[1][:2]
    for e, t in zip(res[0][2:], res[1][2:]):
        np.testing.assert_allclose(np.asarray(e, dtype=float), np.asarray(t, dtype=float), rtol=1e-6)


# -- SWA / EMA ----------------------------------------------------------------------------------------------------------
def _bn_model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(4, 8, bias=False), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(20 + i).standard_normal(tuple(p.shape)).astype(np.float32) * .4))
    return m


@pytest.mark.parametrize("variant", ["swa", "ema_multi", "ema_avg_fn", "custom_avg_fn", "custom_multi"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_swalr_update_bn(variant, use_buffers):
    """SWA after a cosine phase: AveragedModel (equal or EMA weights, custom averaging functions, buffers
    averaged or copied), SWALR annealing, then ``update_bn`` over a loader of (input, target) batches."""
    x, y = _data()
    res = []
    for lib in LIBS:
        S = lib.optim.swa_utils
        m = _bn_model(lib)

        def custom_multi(avg, cur, n):
            for a, c in zip(avg, cur):
                if a.is_floating_point():  # num_batches_tracked stays
                    a.mul_(0.5).add_(c, alpha=0.5)
        kw = {"swa": {}, "ema_multi": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.9)},
              "ema_avg_fn": {"avg_fn": S.get_ema_avg_fn(0.8)},
              "custom_avg_fn": {"avg_fn": lambda a, c, n: 0.7 * a + 0.3 * c},
              "custom_multi": {"multi_avg_fn": custom_multi}}[variant]
        swa_model = S.AveragedModel(m, use_buffers=use_buffers, **kw)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        cosine = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa_sched = S.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="cos")
        lrs = []
        for epoch in range(8):
            opt.zero_grad()
            _loss(lib, m, x, y).backward()
            opt.step()
            if epoch >= 3:
                swa_model.update_parameters(m)
                swa_sched.step()
            else:
                cosine.step()
            lrs.append(opt.param_groups[0]["lr"])
        S.update_bn([(lib.tensor(x[:8]), 0), (lib.tensor(x[8:]), 1)], swa_model)
        swa_model.eval()
        res.append((lrs, swa_model(lib.tensor(x)), swa_model.state_dict()))
    assert res[0][0] == res[1][0]
    _close(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)
    assert list(res[0][2]) == list(res[1][2])
    for k, v in res[1][2].items():
        assert str(res[0][2][k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1]
        _close(res[0][2][k], v, rtol=1e-5, atol=1e-6)


def test_swa_multi_avg_fn_refuses_integer_buffers():
    """With ``use_buffers`` the integer ``num_batches_tracked`` reaches the SWA multi-tensor average, which
    divides in place: an error (the per-tensor default average truncates instead)."""
    for lib in LIBS:
        S = lib.optim.swa_utils
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        swa = S.AveragedModel(m, multi_avg_fn=S.get_swa_multi_avg_fn(), use_buffers=True)
        swa.update_parameters(m)
        with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
            swa.update_parameters(m)
        with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
            S.get_swa_multi_avg_fn()([lib.tensor([3, 4])], [lib.tensor([5, 9])], 1)
    res = []
    for lib in LIBS:
        a = [lib.tensor([1.0, 2.0])]
        lib.optim.swa_utils.get_swa_multi_avg_fn()(a, [lib.tensor([4.0, 8.0])], 2)  # an int count: add with alpha
        res.append(a[0])
    _close(*res)


# -- parametrizations and pruning ---------------------------------------------------------------------------------------
def _port(module, torch_module):
    module.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in torch_module.state_dict().items()})


@pytest.mark.parametrize("kind", ["weight_norm", "weight_norm_dim1", "spectral_norm", "old_weight_norm",
                                  "old_spectral_norm", "orthogonal_matrix_exp", "orthogonal_cayley",
                                  "orthogonal_householder"])
def test_parametrized_layers_from_torch_weights(kind):
    """A parametrized layer loads torch's state_dict (original0/1, spectral ``_u``/``_v``, orthogonal ``base``)
    and gives the same outputs and gradients, in train mode (power iteration steps) and eval mode."""
    def build(lib):
        m = lib.nn.Linear(5, 5) if kind.startswith("orthogonal") else lib.nn.Conv2d(2, 3, 3)
        u = lib.nn.utils
        return {"weight_norm": lambda: u.parametrizations.weight_norm(m),
                "weight_norm_dim1": lambda: u.parametrizations.weight_norm(m, dim=1),
                "spectral_norm": lambda: u.parametrizations.spectral_norm(m, n_power_iterations=2),
                "old_weight_norm": lambda: u.weight_norm(m),
                "old_spectral_norm": lambda: u.spectral_norm(m, n_power_iterations=2),
                "orthogonal_matrix_exp": lambda: u.parametrizations.orthogonal(m, orthogonal_map="matrix_exp"),
                "orthogonal_cayley": lambda: u.parametrizations.orthogonal(m, orthogonal_map="cayley"),
                "orthogonal_householder": lambda: u.parametrizations.orthogonal(m, orthogonal_map="householder"),
                }[kind]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the deprecated hook-based weight_norm
        tm, em = build(torch), build(ember)
    shape = (3, 5) if kind.startswith("orthogonal") else (2, 2, 6, 6)
    xs = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tm(torch.tensor(xs))  # one power iteration before the copy
    _port(em, tm)
    assert sorted(em.state_dict()) == sorted(tm.state_dict())
    for mode in ("train", "eval"):
        getattr(tm, mode)()
        getattr(em, mode)()
        res = []
        for lib, m in ((ember, em), (torch, tm)):
            m.zero_grad()
            x = lib.tensor(xs, requires_grad=True)
            out = m(x)
            out.backward(lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)))
            res.append([out, x.grad] + [p.grad for _, p in sorted(m.named_parameters(), key=lambda kv: kv[0])]
                       + [b for _, b in sorted(m.named_buffers(), key=lambda kv: kv[0])])
        for e, t in zip(*res):
            _close(e, t, rtol=1e-4, atol=1e-5)


def test_register_parametrization_cached_and_removed():
    """A user parametrization (symmetric matrices) stacked with a scaling, read under ``cached()``, assigned
    through ``right_inverse`` and removed with or without keeping its value."""
    res = []
    for lib in LIBS:
        P = lib.nn.utils.parametrize

        class Symmetric(lib.nn.Module):
            calls = 0

            def forward(self, X):
                Symmetric.calls += 1
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()

        class Scale(lib.nn.Module):
            def forward(self, X):
                return X * 2

            def right_inverse(self, A):
                return A / 2

        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.arange(9.0).reshape(3, 3) - 4)
            m.bias.zero_()
        P.register_parametrization(m, "weight", Symmetric())
        P.register_parametrization(m, "weight", Scale())
        out = [sorted(m.state_dict()), P.is_parametrized(m), P.is_parametrized(m, "bias"), type(m).__name__,
               _np(m.weight).tolist()]
        calls = Symmetric.calls
        with P.cached():
            y = m(lib.ones(2, 3)) + m(lib.full((2, 3), 2.0))
        out.append(Symmetric.calls - calls)
        y.sum().backward()
        out.append(_np(m.parametrizations.weight.original.grad).tolist())
        m.weight = lib.eye(3) * 4
        out.append(_np(m.parametrizations.weight.original).tolist())
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        out += [_np(m.weight).tolist(), type(m).__name__, sorted(m.state_dict())]
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        res.append(out)
    assert res[0] == res[1]
    assert res[0][5] == 1  # computed once under cached()


def test_pruning_then_remove():
    """Unstructured, structured and global pruning: masks, the ``weight_orig`` gradient through the mask,
    iterative pruning through a PruningContainer, the state_dict keys, and ``remove`` making it permanent."""
    w = np.random.default_rng(3).standard_normal((6, 5)).astype(np.float32)
    cw = np.random.default_rng(4).standard_normal((4, 3, 3, 3)).astype(np.float32)
    res = []
    for lib in LIBS:
        P = lib.nn.utils.prune
        lin, conv = lib.nn.Linear(5, 6), lib.nn.Conv2d(3, 4, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
            conv.weight.copy_(lib.tensor(cw))
            lin.bias.copy_(lib.arange(6.0) - 2.5)
        P.l1_unstructured(lin, "weight", amount=0.3)
        P.l1_unstructured(lin, "weight", amount=5)  # iterative: 5 more of the remaining
        out = [sorted(lin.state_dict()), int(lin.weight_mask.sum()), type(lin._forward_pre_hooks[
            next(iter(lin._forward_pre_hooks))]).__name__]
        lin(lib.ones(2, 5)).pow(2).sum().backward()
        out.append(_np(lin.weight_orig.grad).tolist())
        P.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
        out.append(_np(conv.weight_mask.sum((1, 2, 3))).tolist())
        a, b = lib.nn.Linear(5, 6), lib.nn.Conv2d(3, 4, 3)
        with lib.no_grad():
            a.weight.copy_(lib.tensor(w))
            b.weight.copy_(lib.tensor(cw))
            a.bias.copy_(lib.arange(6.0) - 2.5)
        P.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")], pruning_method=P.L1Unstructured,
                              amount=0.4)
        out.append((int(a.weight_mask.sum()), int(b.weight_mask.sum()), _np(a.bias_mask).tolist()))
        P.remove(lin, "weight")
        out += [sorted(lin.state_dict()), _np(lin.weight).tolist(), P.is_pruned(lin), P.is_pruned(conv)]
        with pytest.raises(ValueError, match="Parameter 'weight' of module"):
            P.remove(lib.nn.Linear(2, 2), "weight")
        with pytest.raises(ValueError):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5)
        res.append(out)
    assert res[0] == res[1]


def test_early_stopping_with_best_checkpoint():
    """ReduceLROnPlateau-driven training that keeps the best checkpoint (model, optimizer, scheduler) in memory,
    stops after 3 bad epochs, and resumes from it into fresh objects."""
    r = np.random.default_rng(0)
    X, Y = r.standard_normal((32, 4)).astype(np.float32), r.standard_normal((32, 3)).astype(np.float32)
    res = []
    for lib in LIBS:
        m = _model(lib)
        opt = lib.optim.Adam(m.parameters(), lr=0.05)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        best, bad, saved, hist = float("inf"), 0, None, []
        for epoch in range(20):
            m.train()
            opt.zero_grad()
            _loss(lib, m, X[:24], Y[:24]).backward()
            opt.step()
            m.eval()
            with lib.no_grad():
                val = _loss(lib, m, X[24:], Y[24:]).item()
            sched.step(val)
            hist.append((val, sched.get_last_lr()))
            if val < best - 1e-4:
                best, bad = val, 0
                buf = io.BytesIO()
                lib.save({"epoch": epoch, "model": m.state_dict(), "opt": opt.state_dict(),
                          "sched": sched.state_dict(), "best": best}, buf)
                saved = buf.getvalue()
            else:
                bad += 1
                if bad >= 3:
                    break
        ckpt = lib.load(io.BytesIO(saved), map_location="cpu", weights_only=True)
        m2 = _model(lib)
        missing = m2.load_state_dict(ckpt["model"])
        opt2 = lib.optim.Adam(m2.parameters(), lr=0.05)
        opt2.load_state_dict(ckpt["opt"])
        sched2 = lib.optim.lr_scheduler.ReduceLROnPlateau(opt2, patience=1, factor=0.5)
        sched2.load_state_dict(ckpt["sched"])
        opt2.zero_grad()
        _loss(lib, m2, X[:24], Y[:24]).backward()
        opt2.step()
        res.append((hist, ckpt["epoch"], str(missing).replace("torch", "ember"), sched2.best == ckpt["best"],
                    [_np(p).copy() for p in m2.parameters()]))
    assert res[0][1:4] == res[1][1:4]
    assert [h[1] for h in res[0][0]] == [h[1] for h in res[1][0]]
    np.testing.assert_allclose([h[0] for h in res[0][0]], [h[0] for h in res[1][0]], rtol=1e-5)
    assert len(res[0][0]) < 20  # it stopped early
    for a, b in zip(res[0][4], res[1][4]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
