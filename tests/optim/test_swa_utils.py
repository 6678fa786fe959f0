"""ember.optim.swa_utils against torch.optim.swa_utils: averaged weights, BN statistics and learning rates."""
import numpy as np
import pytest
import torch
import torch.optim.swa_utils as tswa

import ember
import ember.optim.swa_utils as eswa


def _nets():
    torch.manual_seed(0)
    mt = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    me = ember.nn.Sequential(ember.nn.Linear(4, 6), ember.nn.BatchNorm1d(6), ember.nn.ReLU(), ember.nn.Linear(6, 2))
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return mt, me


def _close_state(se, st, tol=1e-6):
    assert list(se) == list(st)
    for k in st:
        np.testing.assert_allclose(se[k].numpy(), st[k].numpy(), rtol=tol, atol=tol, err_msg=k)


def _train(mt, me, avg_t, avg_e, steps=5):
    opt_t, opt_e = torch.optim.SGD(mt.parameters(), lr=0.1), ember.optim.SGD(me.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = rng.standard_normal((8, 4)).astype(np.float32)
        for m, opt, lib in [(mt, opt_t, torch), (me, opt_e, ember)]:
            opt.zero_grad()
            m(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
        avg_t.update_parameters(mt)
        avg_e.update_parameters(me)
        _close_state(avg_e.state_dict(), avg_t.state_dict())


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_avg", "swa_avg", "swa_multi"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model(kind, use_buffers):
    if kind == "swa_multi" and use_buffers:
        pytest.skip("torch's swa multi_avg_fn raises on integer buffers (addcdiv); ember averages them")
    mt, me = _nets()
    kw_t = {"swa": {}, "ema_multi": {"multi_avg_fn": tswa.get_ema_multi_avg_fn(0.9)},
            "ema_avg": {"avg_fn": tswa.get_ema_avg_fn(0.8)}, "swa_avg": {"avg_fn": tswa.get_swa_avg_fn()},
            "swa_multi": {"multi_avg_fn": tswa.get_swa_multi_avg_fn()}}[kind]
    kw_e = {"swa": {}, "ema_multi": {"multi_avg_fn": eswa.get_ema_multi_avg_fn(0.9)},
            "ema_avg": {"avg_fn": eswa.get_ema_avg_fn(0.8)}, "swa_avg": {"avg_fn": eswa.get_swa_avg_fn()},
            "swa_multi": {"multi_avg_fn": eswa.get_swa_multi_avg_fn()}}[kind]
    avg_t = tswa.AveragedModel(mt, use_buffers=use_buffers, **kw_t)
    avg_e = eswa.AveragedModel(me, use_buffers=use_buffers, **kw_e)
    assert avg_e.module is not me and avg_e.module[0].weight is not me[0].weight
    _train(mt, me, avg_t, avg_e)
    assert avg_e.n_averaged.item() == 5 and avg_e.n_averaged.dtype == ember.int64
    x = np.ones((3, 4), np.float32)
    avg_t.eval()
    avg_e.eval()
    np.testing.assert_allclose(avg_e(ember.tensor(x)).detach().numpy(), avg_t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_averaged_model_errors_and_load():
    _, me = _nets()
    with pytest.raises(AssertionError):
        eswa.AveragedModel(me, avg_fn=eswa.get_swa_avg_fn(), multi_avg_fn=eswa.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match="Invalid decay"):
        eswa.get_ema_multi_avg_fn(1.5)
    a = eswa.AveragedModel(me)
    a.update_parameters(me)
    b = eswa.AveragedModel(me)
    b.load_state_dict(a.state_dict())
    assert b.n_averaged.item() == 1


def test_update_bn():
    mt, me = _nets()
    avg_t, avg_e = tswa.AveragedModel(mt), eswa.AveragedModel(me)
    _train(mt, me, avg_t, avg_e, steps=3)
    rng = np.random.default_rng(1)
    data = [rng.standard_normal((5, 4)).astype(np.float32) for _ in range(4)]
    loader_t = [(torch.tensor(x), 0) for x in data]
    loader_e = [(ember.tensor(x), 0) for x in data]
    avg_t.eval()
    avg_e.eval()
    tswa.update_bn(loader_t, avg_t)
    eswa.update_bn(loader_e, avg_e)
    _close_state(avg_e.state_dict(), avg_t.state_dict(), tol=1e-5)
    assert not avg_e.training and avg_e.module[1].momentum == 0.1
    eswa.update_bn([ember.tensor(x) for x in data], avg_e)  # bare tensors
    _close_state(avg_e.state_dict(), avg_t.state_dict(), tol=1e-5)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 5])
def test_swalr(strategy, anneal_epochs):
    pt, pe = torch.nn.Parameter(torch.zeros(2)), ember.nn.Parameter(ember.zeros(2))
    qt, qe = torch.nn.Parameter(torch.zeros(2)), ember.nn.Parameter(ember.zeros(2))
    opt_t = torch.optim.SGD([{"params": [pt]}, {"params": [qt], "lr": 0.3}], lr=1.0)
    opt_e = ember.optim.SGD([{"params": [pe]}, {"params": [qe], "lr": 0.3}], lr=1.0)
    sch_t = tswa.SWALR(opt_t, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    sch_e = eswa.SWALR(opt_e, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    for _ in range(9):
        assert sch_e.get_last_lr() == pytest.approx(sch_t.get_last_lr(), rel=1e-12, abs=1e-15)
        assert [g["lr"] for g in opt_e.param_groups] == pytest.approx([g["lr"] for g in opt_t.param_groups],
                                                                      rel=1e-12)
        opt_t.step()
        opt_e.step()
        sch_t.step()
        sch_e.step()
    state = sch_e.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    sch_e.load_state_dict(state)
    assert sch_e.anneal_func(0.5) == pytest.approx(sch_t.anneal_func(0.5))


def test_swalr_after_cosine_schedule():
    pt, pe = torch.nn.Parameter(torch.zeros(2)), ember.nn.Parameter(ember.zeros(2))
    opt_t, opt_e = torch.optim.SGD([pt], lr=0.5), ember.optim.SGD([pe], lr=0.5)
    cos_t = torch.optim.lr_scheduler.CosineAnnealingLR(opt_t, T_max=10)
    cos_e = ember.optim.lr_scheduler.CosineAnnealingLR(opt_e, T_max=10)
    swa_t, swa_e = tswa.SWALR(opt_t, swa_lr=0.05, anneal_epochs=3), eswa.SWALR(opt_e, swa_lr=0.05, anneal_epochs=3)
    for i in range(10):
        opt_t.step()
        opt_e.step()
        (swa_t if i > 4 else cos_t).step()
        (swa_e if i > 4 else cos_e).step()
        assert opt_e.param_groups[0]["lr"] == pytest.approx(opt_t.param_groups[0]["lr"], rel=1e-12)


def test_swalr_errors():
    opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy"):
        eswa.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        eswa.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        eswa.SWALR(opt, swa_lr=[0.1, 0.2])
