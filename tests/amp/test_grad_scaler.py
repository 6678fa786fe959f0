"""GradScaler against torch.amp.GradScaler on CPU: the same model trained with the same scaled losses and injected
inf/NaN gradients skips the same steps and ends each one with the same parameters, scale and state; errors, warnings
and the disabled passthrough are torch's."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.amp.grad_scaler import GradScaler


INF, NAN = float("inf"), float("nan")


def host(t):
    return t.detach().cpu().numpy()


def make_pair(device, lr=0.1, momentum=0.9, seed=0):
    """torch and ember Linear(4, 3) models with the same weights, each with its SGD optimizer."""
    torch.manual_seed(seed)
    tm = torch.nn.Linear(4, 3)
    em = ember.nn.Linear(4, 3)
    em.load_state_dict(tm.state_dict())
    em.to(device)
    return (tm, torch.optim.SGD(tm.parameters(), lr=lr, momentum=momentum),
            em, ember.optim.SGD(em.parameters(), lr=lr, momentum=momentum))


def backward(model, lib, x, y, scaler, loss_factor=1.0, device="cpu"):
    model.zero_grad()
    x, y = lib.tensor(x, device=device), lib.tensor(y, device=device)
    loss = ((model(x) - y) ** 2).mean() * loss_factor
    scaler.scale(loss).backward()


def assert_same_params(tm, em):
    for (tn, tp), (en, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert tn == en
        np.testing.assert_allclose(host(ep), host(tp), rtol=0, atol=1e-6)


def assert_raises_like(torch_call, ember_call):
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        ember_call()
    assert str(got.value) == str(expected.value)


def batches(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32))
            for _ in range(n)]


# step -> how that step's gradients go bad: a loss multiplied by inf (inf and NaN gradients), or one gradient
# element set to inf / NaN after backward
FAULTS = {2: "loss_inf", 6: "weight_inf", 7: "bias_nan", 11: "loss_inf"}


def inject(model, fault):
    with torch.no_grad() if isinstance(model, torch.nn.Module) else ember.no_grad():
        if fault == "weight_inf":
            model.weight.grad[0, 1] = INF
        elif fault == "bias_nan":
            model.bias.grad[2] = NAN


def test_training_matches_torch(device):
    tm, topt, em, eopt = make_pair(device)
    ts = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    es = GradScaler(device, init_scale=1024.0, growth_interval=3)
    scales = []
    for i, (x, y) in enumerate(batches(12)):
        fault = FAULTS.get(i)
        factor = INF if fault == "loss_inf" else 1.0
        backward(tm, torch, x, y, ts, factor)
        backward(em, ember, x, y, es, factor, device)
        inject(tm, fault)
        inject(em, fault)
        before = host(em.weight).copy()
        ts.step(topt)
        es.step(eopt)
        assert (host(em.weight) == before).all() == (fault is not None)  # skipped exactly on the faults
        ts.update()
        es.update()
        assert_same_params(tm, em)
        assert es.get_scale() == ts.get_scale()
        assert es.state_dict() == ts.state_dict()
        scales.append(es.get_scale())
    # the faults backed the scale off and 3 clean steps in a row grew it
    assert scales == [1024.0, 1024.0, 512.0, 512.0, 512.0, 1024.0, 512.0, 256.0, 256.0, 256.0, 512.0, 256.0]


def test_unscale_then_clip_matches_torch(device):
    tm, topt, em, eopt = make_pair(device)
    ts = torch.amp.GradScaler("cpu", init_scale=2.0**14)
    es = GradScaler(device, init_scale=2.0**14)
    for x, y in batches(4):
        backward(tm, torch, x, y, ts, 10.0)
        backward(em, ember, x, y, es, 10.0, device)
        ts.unscale_(topt)
        es.unscale_(eopt)
        for tp, ep in zip(tm.parameters(), em.parameters()):  # unscaled in place
            np.testing.assert_allclose(host(ep.grad), host(tp.grad), rtol=1e-5, atol=1e-6)
        t_norm = torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.5)
        e_norm = ember.nn.utils.clip_grad_norm_(em.parameters(), 0.5)
        assert float(t_norm) > 0.5  # the clipping did something
        np.testing.assert_allclose(float(e_norm), float(t_norm), rtol=1e-5)
        ts.step(topt)
        es.step(eopt)
        ts.update()
        es.update()
        assert_same_params(tm, em)
    assert es.get_scale() == ts.get_scale() == 2.0**14


def test_multiple_optimizers_match_torch():
    # one optimizer per layer: an inf in the first layer's gradients skips only its step, and backs the scale off
    torch.manual_seed(0)
    tms = [torch.nn.Linear(4, 4), torch.nn.Linear(4, 3)]
    ems = [ember.nn.Linear(4, 4), ember.nn.Linear(4, 3)]
    for tm, em in zip(tms, ems):
        em.load_state_dict(tm.state_dict())
    topts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in tms]
    eopts = [ember.optim.SGD(m.parameters(), lr=0.1) for m in ems]
    ts, es = torch.amp.GradScaler("cpu", init_scale=256.0), GradScaler("cpu", init_scale=256.0)
    before = host(ems[0].weight).copy()
    for i, (x, y) in enumerate(batches(3)):
        for lib, models, opts, scaler in ((torch, tms, topts, ts), (ember, ems, eopts, es)):
            for m in models:
                m.zero_grad()
            out = models[1](models[0](lib.tensor(x)).relu())
            scaler.scale(((out - lib.tensor(y)) ** 2).mean()).backward()
            if i == 1:
                with lib.no_grad():
                    models[0].weight.grad[1, 1] = INF
            for o in opts:
                scaler.step(o)
            scaler.update()
        for tm, em in zip(tms, ems):
            assert_same_params(tm, em)
        assert (host(ems[0].weight) == before).all() == (i == 1)  # only the first layer's step was skipped
        before = host(ems[0].weight).copy()
        assert es.get_scale() == ts.get_scale()
    assert es.get_scale() == 128.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_update_rounds_scale_as_torch(dtype):
    # non-power-of-two factors: the scale and its reciprocal are float32 values, as torch's tensors
    kw = dict(init_scale=0.1, growth_factor=3.3, backoff_factor=0.3, growth_interval=1)
    ts, es = torch.amp.GradScaler("cpu", **kw), GradScaler("cpu", **kw)
    tp = torch.nn.Parameter(torch.ones(8, dtype=getattr(torch, dtype)))
    ep = ember.nn.Parameter(ember.ones(8, dtype=getattr(ember, dtype)))
    topt, eopt = torch.optim.SGD([tp], lr=0.1), ember.optim.SGD([ep], lr=0.1)
    grads = np.random.default_rng(0).standard_normal((6, 8)).astype(dtype)
    assert es.get_scale() == ts.get_scale() == 0.1  # the init_scale as given, until the first scale()
    ts.scale(torch.tensor(1.0))
    es.scale(ember.tensor(1.0))
    assert es.get_scale() == ts.get_scale() != 0.1
    for grad, bad in zip(grads, (False, False, True, False, True, True)):
        grad[3] = INF if bad else grad[3]
        tp.grad, ep.grad = torch.tensor(grad), ember.tensor(grad)
        ts.unscale_(topt)
        es.unscale_(eopt)
        np.testing.assert_array_equal(host(ep.grad), host(tp.grad))  # multiplied by the same float32 1/scale
        ts.step(topt)
        es.step(eopt)
        ts.update()
        es.update()
        assert es.get_scale() == ts.get_scale()
        np.testing.assert_allclose(host(ep), host(tp), rtol=0, atol=1e-6)


def test_growth_never_overflows_to_inf():
    es = GradScaler("cpu", init_scale=3e38, growth_interval=1)
    ts = torch.amp.GradScaler("cpu", init_scale=3e38, growth_interval=1)
    ep, tp = ember.nn.Parameter(ember.ones(2)), torch.nn.Parameter(torch.ones(2))
    for s, p, opt, lib in ((es, ep, ember.optim.SGD([ep]), ember), (ts, tp, torch.optim.SGD([tp]), torch)):
        s.scale(lib.tensor(1.0))
        p.grad = lib.ones(2)
        s.step(opt)
        s.update()
    assert es.state_dict() == ts.state_dict()
    assert es.get_scale() < INF and es.state_dict()["_growth_tracker"] == 0


def test_update_with_new_scale():
    ts, es = torch.amp.GradScaler("cpu", init_scale=8.0), GradScaler("cpu", init_scale=8.0)
    ts.scale(torch.tensor(1.0))
    es.scale(ember.tensor(1.0))
    for t_new, e_new in ((1.0000001, 1.0000001), (torch.tensor(5.0), ember.tensor(5.0))):
        ts.update(t_new)
        es.update(e_new)
        assert es.get_scale() == ts.get_scale()
    assert es.get_scale() == 5.0
    es.update(ember.tensor([3.0]))  # any one-element tensor (torch's copy_ only takes a 0-d one)
    assert es.get_scale() == 3.0
    for t_bad, e_bad in ((torch.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0])),
                         (torch.tensor(2.0, requires_grad=True), ember.tensor(2.0, requires_grad=True)),
                         (3, 3)):
        assert_raises_like(lambda: ts.update(t_bad), lambda: es.update(e_bad))
    assert es.get_scale() == 3.0


def test_scale_structures():
    es = GradScaler("cpu", init_scale=4.0)
    a, b, c = ember.tensor([1.0, 2.0]), ember.tensor(3.0, dtype=ember.float16), ember.tensor([0.5])
    out = es.scale((a, [b, (c,)]))
    assert type(out) is tuple and type(out[1]) is list and type(out[1][1]) is tuple
    np.testing.assert_array_equal(host(out[0]), [4.0, 8.0])
    assert out[1][0].dtype is ember.float16 and out[1][0].item() == 12.0
    assert out[1][1][0].item() == 2.0
    lazy = es.scale(iter([a]))  # other iterables come back as a lazy map, as torch's
    assert not isinstance(lazy, (list, tuple))
    np.testing.assert_array_equal(host(next(lazy)), [4.0, 8.0])
    ts = torch.amp.GradScaler("cpu")
    assert_raises_like(lambda: ts.scale(3.0), lambda: es.scale(3.0))
    assert_raises_like(lambda: ts.scale([torch.ones(1), 3.0]), lambda: es.scale([ember.ones(1), 3.0]))


def test_errors_match_torch():
    tp, ep = torch.nn.Parameter(torch.ones(2)), ember.nn.Parameter(ember.ones(2))
    topt, eopt = torch.optim.SGD([tp], lr=0.1), ember.optim.SGD([ep], lr=0.1)
    ts, es = torch.amp.GradScaler("cpu"), GradScaler("cpu")
    # before any scale()
    for name in ("unscale_", "step", "update"):
        args_t, args_e = ((topt,), (eopt,)) if name != "update" else ((), ())
        assert_raises_like(lambda: getattr(ts, name)(*args_t), lambda: getattr(es, name)(*args_e))
    assert_raises_like(lambda: ts.step(topt, closure=lambda: 0.0), lambda: es.step(eopt, closure=lambda: 0.0))
    ts.scale(torch.ones(1))
    es.scale(ember.ones(1))
    tp.grad, ep.grad = torch.ones(2), ember.ones(2)
    # unscale_ twice
    ts.unscale_(topt)
    es.unscale_(eopt)
    assert_raises_like(lambda: ts.unscale_(topt), lambda: es.unscale_(eopt))
    # unscale_ and step after step
    ts.step(topt)
    es.step(eopt)
    assert_raises_like(lambda: ts.unscale_(topt), lambda: es.unscale_(eopt))
    assert_raises_like(lambda: ts.step(topt), lambda: es.step(eopt))
    # update() starts a new iteration, where unscale_ is allowed again
    ts.update()
    es.update()
    ts.unscale_(topt)
    es.unscale_(eopt)
    # an optimizer without gradients
    ts.update()
    es.update()
    tp.grad = ep.grad = None
    assert_raises_like(lambda: ts.step(topt), lambda: es.step(eopt))
    # float16 gradients: refused before any gradient is touched
    tq = torch.nn.Parameter(torch.ones(2, dtype=torch.float16))
    eq = ember.nn.Parameter(ember.ones(2, dtype=ember.float16))
    tq.grad, eq.grad = torch.ones(2, dtype=torch.float16), ember.ones(2, dtype=ember.float16)
    tp.grad, ep.grad = torch.ones(2), ember.ones(2)
    assert_raises_like(lambda: ts.unscale_(torch.optim.SGD([tp, tq])), lambda: es.unscale_(ember.optim.SGD([ep, eq])))
    np.testing.assert_array_equal(host(ep.grad), [1.0, 1.0])
    assert_raises_like(lambda: torch.amp.GradScaler("cpu").load_state_dict({}), lambda: es.load_state_dict({}))


@pytest.mark.parametrize("kwargs", [dict(growth_factor=1.0), dict(growth_factor=0.5), dict(backoff_factor=1.0),
                                    dict(backoff_factor=2.0)])
def test_bad_constructor_args(kwargs):
    assert_raises_like(lambda: torch.amp.GradScaler("cpu", **kwargs), lambda: GradScaler("cpu", **kwargs))
    assert not GradScaler("cpu", enabled=False, **kwargs).is_enabled()  # a disabled scaler checks nothing


def test_state_dict_matches_torch_before_and_after_scale():
    kw = dict(init_scale=1024, growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    ts, es = torch.amp.GradScaler("cpu", **kw), GradScaler("cpu", **kw)
    before = es.state_dict()
    assert before == ts.state_dict() == {"scale": 1024, "growth_factor": 3.0, "backoff_factor": 0.25,
                                         "growth_interval": 7, "_growth_tracker": 0}
    assert type(before["scale"]) is int  # the init_scale as given, until the first scale()
    ts.scale(torch.ones(1))
    es.scale(ember.ones(1))
    after = es.state_dict()
    assert after == ts.state_dict() and type(after["scale"]) is float
    es.set_growth_factor(4.0)
    es.set_backoff_factor(0.125)
    es.set_growth_interval(9)
    assert (es.get_growth_factor(), es.get_backoff_factor(), es.get_growth_interval()) == (4.0, 0.125, 9)
    assert es.state_dict()["growth_interval"] == 9


def train(model, opt, scaler, data, start, device="cpu"):
    for i, (x, y) in enumerate(data, start):
        backward(model, ember, x, y, scaler, INF if FAULTS.get(i) == "loss_inf" else 1.0, device)
        scaler.step(opt)
        scaler.update()


def test_state_dict_round_trip(device):
    # a run stopped after 5 steps and continued with a fresh scaler loaded from the state_dict ends identically
    data = batches(12)
    _, _, em, eopt = make_pair(device)
    es = GradScaler(device, init_scale=1024.0, growth_interval=3)
    train(em, eopt, es, data, 0, device)

    _, _, em2, eopt2 = make_pair(device)
    first = GradScaler(device, init_scale=1024.0, growth_interval=3)
    train(em2, eopt2, first, data[:5], 0, device)
    state = first.state_dict()
    assert state["_growth_tracker"] == 2 and state["scale"] == 512.0
    resumed = GradScaler(device, init_scale=7.0, growth_factor=9.0, growth_interval=100)
    resumed.load_state_dict(state)
    assert resumed.state_dict() == state
    train(em2, eopt2, resumed, data[5:], 5, device)
    assert resumed.state_dict() == es.state_dict()
    for p, q in zip(em.parameters(), em2.parameters()):
        np.testing.assert_array_equal(host(p), host(q))
    # loading into a scaler that has already scaled replaces its scale
    es.load_state_dict(state)
    assert es.state_dict() == state


def test_pickle():
    copies = []
    for lib, cls in ((torch, torch.amp.GradScaler), (ember, GradScaler)):
        scaler = cls("cpu", init_scale=64.0, growth_interval=2)
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1)
        for _ in range(3):
            scaler.scale(lib.ones(1))
            p.grad = lib.ones(2)
            scaler.step(opt)
            scaler.update()
        scaler.scale(lib.ones(1))
        scaler.step(opt)
        with pytest.raises(AssertionError, match="may only be pickled"):  # mid-iteration
            pickle.dumps(scaler)
        scaler.update()
        copy = pickle.loads(pickle.dumps(scaler))
        assert copy.state_dict() == scaler.state_dict()
        # the copy takes up the scale again at its first scale(): unscale_ before it fails
        with pytest.raises(AssertionError, match="_scale is None"):
            copy.unscale_(opt)
        copies.append(copy.state_dict())
    assert copies[1] == copies[0] == {"scale": 256.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                      "growth_interval": 2, "_growth_tracker": 0}


def test_disabled_is_passthrough():
    es = GradScaler("cpu", init_scale=1024.0, enabled=False)
    ts = torch.amp.GradScaler("cpu", init_scale=1024.0, enabled=False)
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.5)
    loss = (p * 3.0).sum()
    outputs = [loss, (loss,)]
    assert es.scale(loss) is loss and es.scale(outputs) is outputs
    es.scale(loss).backward()
    es.unscale_(opt)  # no-op
    np.testing.assert_array_equal(host(p.grad), [3.0, 3.0])
    assert es.step(opt, closure=lambda: 42.0) == 42.0  # closures allowed: optimizer.step is called as is
    np.testing.assert_array_equal(host(p), [-0.5, -0.5])
    es.update()
    es.load_state_dict({"scale": 2.0})
    assert not es.is_enabled() and es.get_scale() == ts.get_scale() == 1.0
    assert es.state_dict() == ts.state_dict() == {}


@pytest.mark.skipif(ember.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_warns_and_disables():
    with pytest.warns(UserWarning) as expected:
        ts = torch.amp.GradScaler("cuda")
    with pytest.warns(UserWarning) as got:
        es = GradScaler()  # device="cuda" by default
    assert str(got[0].message) == str(expected[0].message)
    assert got[0].filename == __file__  # reported at the caller
    assert not es.is_enabled() and not ts.is_enabled() and es.get_scale() == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not GradScaler("cuda", enabled=False).is_enabled()  # no warning when disabled anyway
