"""Learning-rate schedulers: the same lr (and momentum) sequences as torch over 100 steps, state dicts, warnings."""
import copy
import warnings

import numpy as np
import pytest
import torch

import ember


def S(lib):
    return lib.optim.lr_scheduler


CASES = {
    "lambda": lambda lib, o: S(lib).LambdaLR(o, lambda e: 0.95 ** e),
    "lambda_per_group": lambda lib, o: S(lib).LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "multiplicative": lambda lib, o: S(lib).MultiplicativeLR(o, lambda e: 0.97),
    "step": lambda lib, o: S(lib).StepLR(o, 7, 0.5),
    "multistep": lambda lib, o: S(lib).MultiStepLR(o, [10, 30, 30, 70], 0.3),
    "constant": lambda lib, o: S(lib).ConstantLR(o, 0.25, 12),
    "linear": lambda lib, o: S(lib).LinearLR(o, 0.1, 0.9, 40),
    "exponential": lambda lib, o: S(lib).ExponentialLR(o, 0.97),
    "polynomial": lambda lib, o: S(lib).PolynomialLR(o, 60, 2.0),
    "cosine": lambda lib, o: S(lib).CosineAnnealingLR(o, 17, 0.001),
    "cosine_restarts": lambda lib, o: S(lib).CosineAnnealingWarmRestarts(o, 5, 2, 0.001),
    "cosine_restarts_1": lambda lib, o: S(lib).CosineAnnealingWarmRestarts(o, 9),
    "cyclic_tri2": lambda lib, o: S(lib).CyclicLR(o, 0.01, 0.1, 7, 5, mode="triangular2"),
    "cyclic_exp": lambda lib, o: S(lib).CyclicLR(o, [0.01, 0.02], 0.1, 9, mode="exp_range", gamma=0.98),
    "cyclic_fn": lambda lib, o: S(lib).CyclicLR(o, 0.01, 0.1, 4, scale_fn=lambda x: 0.5 ** x,
                                                scale_mode="iterations", cycle_momentum=False),
    "onecycle": lambda lib, o: S(lib).OneCycleLR(o, 0.5, total_steps=100),
    "onecycle_3phase": lambda lib, o: S(lib).OneCycleLR(o, [0.5, 1.0], epochs=10, steps_per_epoch=12,
                                                        three_phase=True, anneal_strategy="linear"),
    "sequential": lambda lib, o: S(lib).SequentialLR(o, [S(lib).LinearLR(o, 0.1, 1.0, 10),
                                                         S(lib).CosineAnnealingLR(o, 40)], [10]),
    "sequential3": lambda lib, o: S(lib).SequentialLR(o, [S(lib).ConstantLR(o, 0.5, 5), S(lib).ExponentialLR(o, 0.9),
                                                          S(lib).StepLR(o, 3)], [20, 50]),
    "chained": lambda lib, o: S(lib).ChainedScheduler([S(lib).ConstantLR(o, 0.5, 20), S(lib).ExponentialLR(o, 0.98)]),
}


def sequence(lib, make, opt_name="SGD", n=100, metrics=None):
    p, q = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
    kwargs = {"momentum": 0.9} if opt_name == "SGD" else {}
    opt = getattr(lib.optim, opt_name)([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1, **kwargs)
    sched = make(lib, opt)
    out = [list(sched.get_last_lr())]
    for i in range(n):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        momenta = [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]
        out.append(list(sched.get_last_lr()) + [g["lr"] for g in opt.param_groups] + momenta)
    return np.array(out[1:], dtype=np.float64), out[0], sched, opt


@pytest.mark.parametrize("name", list(CASES))
def test_sequence_matches_torch(name):
    t, t0, _, _ = sequence(torch, CASES[name])
    e, e0, _, _ = sequence(ember, CASES[name])
    assert e0 == t0
    np.testing.assert_allclose(e, t, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ["onecycle", "cyclic_tri2"])
def test_beta1_cycling_with_adam(name):
    t = sequence(torch, CASES[name], "Adam")[0]
    e = sequence(ember, CASES[name], "Adam")[0]
    np.testing.assert_allclose(e, t, rtol=1e-14, atol=0)


@pytest.mark.parametrize("kwargs", [dict(patience=3, cooldown=2, factor=0.5, min_lr=1e-3),
                                    dict(mode="max", threshold_mode="abs", threshold=0.1, patience=1,
                                         min_lr=[0.01, 0.02])])
def test_reduce_on_plateau_matches_torch(kwargs):
    metrics = list(np.cumsum(np.random.default_rng(0).standard_normal(100)))
    make = lambda lib, o: S(lib).ReduceLROnPlateau(o, **kwargs)  # noqa: E731
    np.testing.assert_array_equal(sequence(ember, make, metrics=metrics)[0],
                                  sequence(torch, make, metrics=metrics)[0])


@pytest.mark.parametrize("name", ["step", "multistep", "cosine", "cyclic_tri2", "onecycle", "sequential", "chained",
                                  "cosine_restarts"])
def test_state_dict_round_trip(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, sched, opt = sequence(ember, CASES[name], n=30)
        _, _, sched2, opt2 = sequence(ember, CASES[name], n=0)
        opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
        sched2.load_state_dict(copy.deepcopy(sched.state_dict()))
        for _ in range(20):
            opt.step()
            opt2.step()
            sched.step()
            sched2.step()
            assert sched.get_last_lr() == sched2.get_last_lr()


def test_state_dict_keys_match_torch():
    for name in ["step", "lambda", "cyclic_tri2", "onecycle", "sequential"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = sequence(torch, CASES[name], n=3)[2].state_dict()
            e = sequence(ember, CASES[name], n=3)[2].state_dict()
        assert sorted(e) == sorted(t), name


def test_closed_form_epoch_argument():
    for name in ["step", "multistep", "exponential", "cosine", "linear", "polynomial", "constant"]:
        lrs = []
        for lib in (torch, ember):
            opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
            sched = CASES[name](lib, opt)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for epoch in (3, 17, 40, 11):
                    opt.step()
                    sched.step(epoch)
            lrs.append(sched.get_last_lr())
        assert lrs[0] == lrs[1], name


def test_warnings_match_torch():
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        sched = S(lib).StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
            sched.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()


def test_errors_match_torch():
    def cases(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        other = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        return [
            lambda: S(lib).StepLR(object(), 2),
            lambda: S(lib).StepLR(opt, 2, last_epoch=3),
            lambda: S(lib).LambdaLR(opt, [lambda e: 1, lambda e: 1]),
            lambda: S(lib).MultiplicativeLR(opt, 0.5),
            lambda: S(lib).ConstantLR(opt, factor=2),
            lambda: S(lib).LinearLR(opt, start_factor=0),
            lambda: S(lib).CosineAnnealingWarmRestarts(opt, 0),
            lambda: S(lib).CosineAnnealingWarmRestarts(opt, 2, T_mult=0),
            lambda: S(lib).CyclicLR(opt, 0.1, 1.0, mode="nope"),
            lambda: S(lib).CyclicLR(lib.optim.Adagrad([lib.nn.Parameter(lib.zeros(1))]), 0.1, 1.0),
            lambda: S(lib).OneCycleLR(opt, 1.0),
            lambda: S(lib).OneCycleLR(opt, 1.0, total_steps=10, pct_start=2),
            lambda: S(lib).OneCycleLR(opt, 1.0, total_steps=10, anneal_strategy="exp"),
            lambda: S(lib).ReduceLROnPlateau(opt, factor=1.0),
            lambda: S(lib).ReduceLROnPlateau(opt, mode="avg"),
            lambda: S(lib).ReduceLROnPlateau(opt, min_lr=[0.1, 0.2]),
            lambda: S(lib).SequentialLR(opt, [S(lib).StepLR(opt, 2)], [3]),
            lambda: S(lib).SequentialLR(opt, [S(lib).StepLR(other, 2), S(lib).StepLR(opt, 2)], [3]),
            lambda: S(lib).ChainedScheduler([]),
        ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fe, ft in zip(cases(ember), cases(torch)):
            with pytest.raises(Exception) as te:
                ft()
            with pytest.raises(type(te.value)) as ee:
                fe()
            assert str(ee.value).replace("ember", "torch") == str(te.value).replace("ember", "torch")


def test_onecycle_too_many_steps():
    opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=0.1, momentum=0.9)
    sched = S(ember).OneCycleLR(opt, 1.0, total_steps=2)
    opt.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        sched.step()
