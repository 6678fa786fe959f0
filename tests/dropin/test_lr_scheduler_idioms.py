"""Learning-rate schedules and weight averaging as training scripts use them (every lr_scheduler class, resume,
tensor lrs, warnings, swa_utils) against torch: lr sequences compared with float equality."""
import functools
import io
import math
import warnings

import numpy as np
import pytest
import torch

import ember


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():  # tiny nets: torch's thread pool only adds waits
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _opt(lib, lrs=(0.1, 0.01), opt="SGD", **kw):
    if opt == "SGD":
        kw.setdefault("momentum", 0.9)
    groups = [{"params": [lib.nn.Parameter(lib.ones(2))], "lr": lr} for lr in lrs]
    return getattr(lib.optim, opt)(groups, **kw)


def _val(v):
    return (float(v), "tensor") if hasattr(v, "dtype") else (v, type(v).__name__)


def _sched(lib):
    return lib.optim.lr_scheduler


SCHEDULES = {
    "StepLR": lambda L, o: L.StepLR(o, 7, gamma=0.3),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, [8, 3, 8, 20], gamma=0.5),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, 0.93),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=7, eta_min=1e-4),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-5),
    "CyclicLR": lambda L, o: L.CyclicLR(o, 0.001, [0.1, 0.05], step_size_up=4),
    "CyclicLR-triangular2": lambda L, o: L.CyclicLR(o, 0.001, 0.1, step_size_up=3, step_size_down=5,
                                                    mode="triangular2", base_momentum=[0.8, 0.85]),
    "CyclicLR-exp_range": lambda L, o: L.CyclicLR(o, 0.001, 0.1, step_size_up=3, mode="exp_range", gamma=0.97),
    "CyclicLR-scale_fn": lambda L, o: L.CyclicLR(o, 0.001, 0.1, step_size_up=3, scale_mode="iterations",
                                                 scale_fn=lambda x: 0.5 * (1 + math.sin(x * math.pi / 2))),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, [0.1, 0.2], total_steps=41),
    "OneCycleLR-three_phase": lambda L, o: L.OneCycleLR(o, 0.1, epochs=4, steps_per_epoch=11, three_phase=True,
                                                        anneal_strategy="linear", pct_start=0.25),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=9),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=4),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=12, power=2.0),
    "LambdaLR": lambda L, o: L.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: min(1.0, (e + 1) / 5)]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97),
    "SequentialLR": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.01, total_iters=5), L.CosineAnnealingLR(o, 20)],
                                                milestones=[5]),
    "ChainedScheduler-of-sequential": lambda L, o: L.ChainedScheduler([L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=3), L.CosineAnnealingLR(o, 8)], milestones=[3]), L.MultiStepLR(o, [5], 0.5)]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.LinearLR(o, 0.2, total_iters=4), L.MultiStepLR(o, [6, 9])],
                                                        optimizer=o),
    "SWALR": lambda L, o: (ember if L is ember.optim.lr_scheduler else torch).optim.swa_utils.SWALR(
        o, swa_lr=[0.05, 0.001], anneal_epochs=6),
}


def _lr_sequence(lib, name, opt="SGD", steps=40):
    o = _opt(lib, opt=opt)
    s = SCHEDULES[name](_sched(lib), o)
    seq = [s.get_last_lr()]
    for _ in range(steps):
        o.step()
        s.step()
        groups = o.param_groups
        seq.append((s.get_last_lr(), [g["lr"] for g in groups], [g.get("momentum", g.get("betas")) for g in groups]))
    return seq


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_lr_sequences_exact(name, opt):
    """Two param groups stepped 40 times: the same lrs (and cycled momentum / Adam beta1) to the last bit."""
    assert _lr_sequence(ember, name, opt) == _lr_sequence(torch, name, opt)


METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.91, 0.92, 0.93, 0.94, 0.95, 0.5, 0.6, 0.7, 0.8] + [0.9] * 12


@pytest.mark.parametrize("mode", ["min", "max"])
@pytest.mark.parametrize("threshold_mode", ["rel", "abs"])
def test_reduce_lr_on_plateau_modes(mode, threshold_mode):
    """Patience, threshold, cooldown and per-group min_lr, with tensor and float metrics."""
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = _sched(lib).ReduceLROnPlateau(o, mode=mode, factor=0.5, patience=1, threshold=0.05,
                                          threshold_mode=threshold_mode, cooldown=2, min_lr=[1e-3, 1e-4])
        seq = [s.get_last_lr()]
        for i, m in enumerate(METRICS):
            o.step()
            s.step(lib.tensor(m) if i % 2 else m)
            seq.append((s.get_last_lr(), s.num_bad_epochs, s.cooldown_counter, s.best, s.last_epoch))
        res.append(seq)
    assert res[0] == res[1]


def test_reduce_lr_on_plateau_eps_nan_and_state():
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = _sched(lib).ReduceLROnPlateau(o, "max", patience=2, eps=0.05, factor=0.5, min_lr=(0.02, 0.0))
        seq = []
        for v in [1, 1, 1, 1, 1, 1, 1, float("nan"), 2, 2, 2, 2, float("inf"), 1, 1, 1]:
            o.step()
            s.step(metrics=v)
            seq.append((s.get_last_lr(), s.num_bad_epochs))
        sd = s.state_dict()
        o2 = _opt(lib)
        s2 = _sched(lib).ReduceLROnPlateau(o2)
        s2.load_state_dict(sd)
        seq.append((sorted(sd), s2.mode, s2._is_better(3.0, 2.0)))
        res.append(seq)
    assert res[0] == res[1]


def test_warm_restarts_fractional_epochs():
    """``scheduler.step(epoch + i / iters)`` inside the batch loop."""
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = _sched(lib).CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.001)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in range(8):
                for i in range(4):
                    o.step()
                    s.step(epoch + i / 4)
                    seq.append((s.get_last_lr(), s.T_cur, s.T_i, s.last_epoch))
        res.append(seq)
    assert res[0] == res[1]
    with pytest.raises(ValueError, match="non-negative epoch"):
        ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(ember), 3).step(-1)


ONE_GROUP = {
    "LambdaLR": lambda L, o: L.LambdaLR(o, lambda e: 1 / (e + 1)),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=0.1, total_steps=12),
    "CyclicLR": lambda L, o: L.CyclicLR(o, 0.001, 0.1, step_size_up=3),
    "SWALR": lambda L, o: (ember if L is ember.optim.lr_scheduler else torch).optim.swa_utils.SWALR(o, 0.05, 4),
}


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "LambdaLR", "LinearLR", "OneCycleLR", "CyclicLR",
                                  "SequentialLR", "SWALR"])
def test_tensor_lr(name):
    """A tensor ``lr`` is updated in place; get_last_lr returns copies."""
    res = []
    for lib in (ember, torch):
        o = lib.optim.Adam([lib.nn.Parameter(lib.ones(2))], lr=lib.tensor(0.01))
        lr = o.param_groups[0]["lr"]
        s = ONE_GROUP.get(name, SCHEDULES[name])(_sched(lib), o)
        seq = []
        for _ in range(12):
            o.step()
            s.step()
            last = s.get_last_lr()[0]
            assert last is not o.param_groups[0]["lr"]
            seq.append((_val(last), _val(o.param_groups[0]["initial_lr"])))
        assert o.param_groups[0]["lr"] is lr
        res.append(seq)
    assert res[0] == res[1]


@pytest.mark.parametrize("name", ["MultiStepLR", "CosineAnnealingWarmRestarts", "CyclicLR-exp_range", "OneCycleLR",
                                  "SequentialLR", "ChainedScheduler", "LambdaLR", "SWALR"])
def test_state_dict_checkpoint_round_trip(name):
    """Save the scheduler and optimizer state mid-run, rebuild both, load, and continue identically."""
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = SCHEDULES[name](_sched(lib), o)
        for _ in range(5):
            o.step()
            s.step()
        buf = io.BytesIO()
        lib.save({"sched": s.state_dict(), "opt": o.state_dict()}, buf)
        buf.seek(0)
        ck = lib.load(buf, weights_only=True) if lib is torch else lib.load(buf)
        o2 = _opt(lib)
        o2.load_state_dict(ck["opt"])
        s2 = SCHEDULES[name](_sched(lib), o2)
        s2.load_state_dict(ck["sched"])
        seq = [sorted(ck["sched"])]
        for _ in range(8):
            o2.step()
            s2.step()
            seq.append((s2.get_last_lr(), [g.get("momentum") for g in o2.param_groups]))
        res.append(seq)
    assert res[0] == res[1]


def _warmup_linear(step, warm, total):
    if step < warm:
        return step / max(1, warm)
    return max(0.0, (total - step) / max(1, total - warm))


@pytest.mark.parametrize("name", ["LambdaLR", "OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts", "StepLR"])
def test_resume_with_last_epoch(name):
    """Resuming by ``last_epoch`` after loading the optimizer (its groups carry ``initial_lr``)."""
    make = {"LambdaLR": lambda L, o, e: L.LambdaLR(o, functools.partial(_warmup_linear, warm=4, total=20), e),
            "OneCycleLR": lambda L, o, e: L.OneCycleLR(o, 0.1, total_steps=20, last_epoch=e),
            "CyclicLR": lambda L, o, e: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, last_epoch=e),
            "CosineAnnealingWarmRestarts": lambda L, o, e: L.CosineAnnealingWarmRestarts(o, 4, 2, last_epoch=e),
            "StepLR": lambda L, o, e: L.StepLR(o, 3, last_epoch=e)}[name]
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = make(_sched(lib), o, -1)
        for _ in range(6):
            o.step()
            s.step()
        o2 = _opt(lib)
        o2.load_state_dict(o.state_dict())
        s2 = make(_sched(lib), o2, s.last_epoch)
        seq = [s2.get_last_lr(), s2.state_dict().get("lr_lambdas")]
        for _ in range(6):
            o2.step()
            s2.step()
            seq.append(s2.get_last_lr())
        res.append(seq)
    assert res[0] == res[1]
    with pytest.raises(KeyError, match="initial_lr"):
        ember.optim.lr_scheduler.StepLR(_opt(ember), 3, last_epoch=4)


def test_custom_scheduler_subclass():
    """A warmup-cosine schedule written as an LRScheduler subclass, as in many repositories."""
    res = []
    for lib in (ember, torch):
        class Warmup(lib.optim.lr_scheduler.LRScheduler):
            def __init__(self, optimizer, warmup, total, last_epoch=-1):
                self.warmup, self.total = warmup, total
                super().__init__(optimizer, last_epoch)

            def get_lr(self):
                if self.last_epoch < self.warmup:
                    return [b * (self.last_epoch + 1) / self.warmup for b in self.base_lrs]
                p = (self.last_epoch - self.warmup) / max(1, self.total - self.warmup)
                return [b * 0.5 * (1 + math.cos(math.pi * p)) for b in self.base_lrs]

        o = _opt(lib)
        s = Warmup(o, 3, 10)
        seq = [s.get_last_lr(), sorted(s.state_dict())]
        for _ in range(10):
            o.step()
            s.step()
            seq.append(s.get_last_lr())
        res.append(seq)
    assert res[0] == res[1]


@pytest.mark.parametrize("name", ["LambdaLR", "MultiplicativeLR", "CosineAnnealingWarmRestarts", "CyclicLR"])
def test_param_group_added_after_scheduler_raises(name):
    """A group added after building a per-group schedule is not silently left unscheduled."""
    errors = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = SCHEDULES[name](_sched(lib), o)
        o.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))], "lr": 0.3})
        o.step()
        with pytest.raises(ValueError) as exc:
            s.step()
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_param_group_added_after_scheduler_follows():
    res = []
    for lib in (ember, torch):
        o = _opt(lib)
        s = _sched(lib).StepLR(o, 2)
        o.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))], "lr": 0.3})
        for _ in range(5):
            o.step()
            s.step()
        res.append(s.get_last_lr())
    assert res[0] == res[1]


def test_get_lr_of_wrong_length_raises():
    class Bad(ember.optim.lr_scheduler.LRScheduler):
        def get_lr(self):
            return [0.1]

    with pytest.raises(ValueError, match="shorter"):
        Bad(_opt(ember))


@pytest.mark.parametrize("composite", ["SequentialLR", "ChainedScheduler"])
def test_composite_load_state_dict_with_extra_scheduler(composite):
    def make(L, o, n):
        scheds = [L.ConstantLR(o, 0.5, total_iters=2), L.ExponentialLR(o, 0.9), L.StepLR(o, 2)][:n]
        return L.SequentialLR(o, scheds, [2, 4][:n - 1]) if composite == "SequentialLR" else L.ChainedScheduler(scheds)

    L = ember.optim.lr_scheduler
    sd = make(L, _opt(ember), 3).state_dict()
    with pytest.raises(IndexError):
        make(L, _opt(ember), 2).load_state_dict(sd)


def test_warnings():
    """Step order, an overridden optimizer.step, the deprecated epoch argument, get_lr outside step."""
    L = ember.optim.lr_scheduler
    o = _opt(ember)
    s = L.StepLR(o, 2)
    with pytest.warns(UserWarning, match=r"`lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        s.step()
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        s.step(3)
    assert s.get_last_lr() == [0.1 * 0.1, 0.01 * 0.1]
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    o = _opt(ember)
    s = L.ExponentialLR(o, 0.5)
    o.step = lambda *a, **k: None
    with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
        s.step()
    o = _opt(ember)
    s = L.ReduceLROnPlateau(o, patience=0)
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(1.0, 5)
    assert s.last_epoch == 5
    o = _opt(ember)
    s = L.CosineAnnealingLR(o, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            o.step()
            s.step()


@pytest.mark.parametrize("build, exc", [
    (lambda L, lib: L.StepLR(None, 3), TypeError),
    (lambda L, lib: L.MultiplicativeLR(_opt(lib), 0.9), TypeError),
    (lambda L, lib: L.LambdaLR(_opt(lib), [lambda e: 1]), ValueError),
    (lambda L, lib: L.CosineAnnealingWarmRestarts(_opt(lib), 2.0), ValueError),
    (lambda L, lib: L.CosineAnnealingWarmRestarts(_opt(lib), 2, 0), ValueError),
    (lambda L, lib: L.OneCycleLR(_opt(lib), 0.1), ValueError),
    (lambda L, lib: L.OneCycleLR(_opt(lib), 0.1, total_steps=10, pct_start=1), ValueError),
    (lambda L, lib: L.OneCycleLR(_opt(lib), 0.1, total_steps=10, anneal_strategy="exp"), ValueError),
    (lambda L, lib: L.OneCycleLR(_opt(lib), [0.1], total_steps=10), ValueError),
    (lambda L, lib: L.OneCycleLR(_opt(lib, opt="Adagrad"), 0.1, total_steps=10), ValueError),
    (lambda L, lib: L.CyclicLR(_opt(lib), 0.01, 0.1, mode="foo"), ValueError),
    (lambda L, lib: L.ReduceLROnPlateau(_opt(lib), factor=1.0), ValueError),
    (lambda L, lib: L.ReduceLROnPlateau(_opt(lib), mode="avg"), ValueError),
    (lambda L, lib: L.ReduceLROnPlateau(_opt(lib), min_lr=[0.1]), ValueError),
    (lambda L, lib: L.ReduceLROnPlateau(_opt(lib)).step(lib.tensor([1.0, 2.0])), ValueError),
    (lambda L, lib: L.LinearLR(_opt(lib), start_factor=0), ValueError),
    (lambda L, lib: L.ConstantLR(_opt(lib), factor=2), ValueError),
    (lambda L, lib: L.SequentialLR(_opt(lib), [], []), ValueError),
    (lambda L, lib: (lambda o: L.SequentialLR(o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [3]))(_opt(lib)),
     ValueError),
    (lambda L, lib: (lambda o: L.ChainedScheduler([L.StepLR(o, 2), L.StepLR(_opt(lib), 2)]))(_opt(lib)), ValueError),
    (lambda L, lib: lib.optim.swa_utils.SWALR(_opt(lib), 0.01, anneal_epochs=-1), ValueError),
    (lambda L, lib: lib.optim.swa_utils.get_ema_multi_avg_fn(1.5), ValueError),
])
def test_errors_match_torch(build, exc):
    for lib in (torch, ember):
        with pytest.raises(exc):
            build(_sched(lib), lib)


def test_one_cycle_past_total_steps():
    L = ember.optim.lr_scheduler
    o = _opt(ember)
    s = L.OneCycleLR(o, 0.1, total_steps=3)
    for _ in range(3):
        o.step()
        s.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        s.step()


_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((32, 4)).astype(np.float32)
Y = _RNG.standard_normal((32, 1)).astype(np.float32)


def _net(lib, ref=None):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Linear(8, 1))
    if ref is not None:
        m.load_state_dict({k: lib.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return m


AVERAGERS = {
    "swa": lambda S, m: S.AveragedModel(m),
    "ema_multi": lambda S, m: S.AveragedModel(m, multi_avg_fn=S.get_ema_multi_avg_fn(0.9)),
    "ema_multi_buffers": lambda S, m: S.AveragedModel(m, multi_avg_fn=S.get_ema_multi_avg_fn(0.9), use_buffers=True),
    "ema_avg": lambda S, m: S.AveragedModel(m, avg_fn=S.get_ema_avg_fn(0.9)),
    "warmup_ema": lambda S, m: S.AveragedModel(
        m, avg_fn=lambda a, c, n: min(0.99, (1 + n) / (10 + n)) * a + (1 - min(0.99, (1 + n) / (10 + n))) * c),
}


@pytest.mark.parametrize("kind", sorted(AVERAGERS))
def test_swa_training_loop(kind):
    """Train, average every step with SWALR, recompute BatchNorm statistics with update_bn, evaluate."""
    tnet = _net(torch)
    out = []
    for lib in (ember, torch):
        m = tnet if lib is torch else _net(ember, tnet)
        opt = lib.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        avg = AVERAGERS[kind](lib.optim.swa_utils, m)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=3, anneal_strategy="cos")
        lrs = []
        for i in range(8):
            xb, yb = lib.tensor(X[i % 4 * 8:(i % 4 + 1) * 8]), lib.tensor(Y[i % 4 * 8:(i % 4 + 1) * 8])
            loss = lib.nn.functional.mse_loss(m(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            avg.update_parameters(m)
            sched.step()
            lrs.append(sched.get_last_lr())
        if not avg.use_buffers:
            loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.tensor(X), lib.tensor(Y)), batch_size=8)
            lib.optim.swa_utils.update_bn(loader, avg)
        avg.eval()
        with lib.no_grad():
            pred = avg(lib.tensor(X[:4])).numpy()
        out.append((lrs, {k: v.detach().numpy() for k, v in avg.state_dict().items()}, pred))
        if kind == "swa":  # the equal-weight multi-tensor average refuses BatchNorm's integer counter
            swa = lib.optim.swa_utils.AveragedModel(m, multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn(),
                                                    use_buffers=True)
            swa.update_parameters(m)
            with pytest.raises(RuntimeError, match="Integer division"):
                swa.update_parameters(m)
    (elrs, esd, epred), (tlrs, tsd, tpred) = out
    assert elrs == tlrs
    assert list(esd) == list(tsd)
    for k in tsd:
        assert esd[k].dtype == tsd[k].dtype, k
        np.testing.assert_allclose(esd[k], tsd[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(epred, tpred, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_avg"])
def test_averaged_model_low_precision(dtype, kind):
    w = np.random.default_rng(1).standard_normal((5, 4, 3)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 4).to(getattr(lib, dtype))
        avg = AVERAGERS[kind](lib.optim.swa_utils, m)
        for i in range(5):
            with lib.no_grad():
                m.weight.copy_(lib.tensor(w[i]))
            avg.update_parameters(m)
        assert str(avg.module.weight.dtype).split(".")[-1] == dtype
        assert avg.n_averaged.item() == 5 and str(avg.n_averaged.dtype).endswith("int64")
        res.append(avg.module.weight.detach().float().numpy())
    np.testing.assert_array_equal(res[0], res[1])


def test_averaged_model_integer_buffers_and_mismatch():
    res = []
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 2).double()
        m.register_buffer("count", lib.tensor([3, 5]))
        avg = lib.optim.swa_utils.AveragedModel(m, use_buffers=True)
        for _ in range(3):
            with lib.no_grad():
                m.weight.mul_(1.5)
                m.count.add_(7)
            avg.update_parameters(m)
        res.append((avg.module.count.tolist(), str(avg.module.count.dtype).split(".")[-1]))
    assert res[0] == res[1]
    m = ember.nn.Linear(3, 2)
    avg = ember.optim.swa_utils.AveragedModel(m)
    m.register_buffer("extra", ember.zeros(1))
    with pytest.raises(ValueError):
        avg.update_parameters(m)
