"""Normalization layers against torch: batch/instance/layer/group/RMS/local response norm, running statistics,
train/eval, gradients (first and second order), dtypes, errors, state dicts and reprs."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from .torch_ref import check_fn, check_module, close, same_error

E = ember.nn.modules
EF = ember.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape) * 2 + 0.5


BATCHNORM = [
    ("BatchNorm1d", (4,), {}, (6, 4)), ("BatchNorm1d", (4,), {"momentum": None}, (6, 4, 3)),
    ("BatchNorm1d", (4,), {"affine": False}, (5, 4)), ("BatchNorm2d", (3,), {}, (4, 3, 5, 2)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (2, 3, 2, 2)),
    ("BatchNorm2d", (3,), {"momentum": 0.5, "eps": 1e-3, "bias": False}, (2, 3, 4, 4)),
    ("BatchNorm3d", (2,), {}, (2, 2, 3, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", BATCHNORM, ids=[f"{b[0]}-{b[2]}" for b in BATCHNORM])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batchnorm_train_then_eval(name, args, kwargs, shape, dtype):
    tm, em = getattr(torch.nn, name)(*args, **kwargs), getattr(E, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    check_module(tm, em, _x(*shape), dtype=dtype, steps=3)
    if kwargs.get("track_running_stats", True):
        assert em.num_batches_tracked.item() == 3 and em.num_batches_tracked.dtype is ember.int64
    check_module(tm, em, _x(*shape), dtype=dtype, steps=2, train=False)  # uses (and keeps) the running stats


NORMS = [
    ("LayerNorm", (5,), {}, (3, 5)), ("LayerNorm", ((4, 5),), {}, (2, 3, 4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (3, 5)), ("LayerNorm", (5,), {"bias": False}, (2, 3, 5)),
    ("LayerNorm", (5,), {"eps": 0.1}, (5,)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4)), ("GroupNorm", (3, 3), {"affine": False}, (2, 3, 2, 2)),
    ("GroupNorm", (1, 4), {"eps": 1e-3}, (2, 4)),
    ("RMSNorm", (5,), {}, (3, 5)), ("RMSNorm", ((2, 5),), {"eps": 1e-3}, (3, 2, 5)),
    ("RMSNorm", (5,), {"elementwise_affine": False}, (4, 5)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)), ("InstanceNorm1d", (3,), {"affine": True}, (3, 5)),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 3, 2)),
    ("InstanceNorm3d", (2,), {"track_running_stats": True, "momentum": 0.3}, (2, 2, 2, 2, 3)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)), ("LocalResponseNorm", (4,), {"k": 2.0, "beta": 0.5}, (2, 5, 3, 2)),
    ("LocalResponseNorm", (2,), {"alpha": 0.1}, (2, 3, 2, 2, 2)),
    ("CrossMapLRN2d", (3,), {"alpha": 0.1, "k": 2.0}, (2, 5, 3, 2)), ("CrossMapLRN2d", (4,), {}, (1, 6, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", NORMS, ids=[f"{n[0]}-{n[1]}-{n[2]}" for n in NORMS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norm_modules(name, args, kwargs, shape, dtype):
    tm, em = getattr(torch.nn, name)(*args, **kwargs), getattr(E, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    check_module(tm, em, _x(*shape), dtype=dtype, steps=2)
    if "track_running_stats" in kwargs:
        check_module(tm, em, _x(*shape), dtype=dtype, train=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs(dtype):
    x = _x(4, 3, 5)
    w, b = RNG.uniform(0.5, 1.5, 5), RNG.standard_normal(5)
    check_fn(lambda F, x, w, b: F.layer_norm(x, (5,), w, b), x, w, b, dtype=dtype)
    check_fn(lambda F, x, w: F.rms_norm(x, (5,), w), x, w, dtype=dtype)
    check_fn(lambda F, x: F.group_norm(x, 3), x, dtype=dtype)
    check_fn(lambda F, x, w, b: F.batch_norm(x, None, None, w[:3], b[:3], True), x, w, b, dtype=dtype)


def test_functional_forms():
    x, w, b = _x(4, 3, 5), RNG.uniform(0.5, 1.5, 3), RNG.standard_normal(3)
    rm, rv = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    check_fn(lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
    check_fn(lambda F, x, w, b, m, v: F.batch_norm(x, m.detach(), v.detach(), w, b), x, w, b, rm, rv)
    check_fn(lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), x, w, b)
    check_fn(lambda F, x, m, v: F.instance_norm(x, m.detach(), v.detach(), use_input_stats=False), x, rm, rv)
    check_fn(lambda F, x: F.layer_norm(x, [3, 5]), x)
    check_fn(lambda F, x: F.rms_norm(x, [5]), x)
    check_fn(lambda F, x, w, b: F.group_norm(x, 3, w, b, eps=0.1), x, w, b)
    check_fn(lambda F, x: F.local_response_norm(x, 2), x)
    # running statistics are updated in place, the variance unbiased
    m, v = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    mt, vt = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    EF.batch_norm(ember.tensor(x), m, v, training=True, momentum=0.2)
    TF.batch_norm(torch.tensor(x), mt, vt, training=True, momentum=0.2)
    close(m, mt, "float64")
    close(v, vt, "float64")
    m, v = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    mt, vt = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    EF.instance_norm(ember.tensor(x), m, v, momentum=0.4)
    TF.instance_norm(torch.tensor(x), mt, vt, momentum=0.4)
    close(m, mt, "float64")
    close(v, vt, "float64")


def test_eval_uses_running_stats():
    m = E.BatchNorm1d(2)
    m.running_mean.copy_(ember.tensor([1.0, -1.0]))
    m.running_var.copy_(ember.tensor([4.0, 0.25]))
    m.eval()
    y = m(ember.tensor([[3.0, 0.0], [1.0, -1.0]]))
    np.testing.assert_allclose(y.detach().numpy(), [[1.0, 2.0], [0.0, 0.0]], atol=1e-4)
    assert m.num_batches_tracked.item() == 0
    m.train()
    m(ember.tensor([[3.0, 0.0], [1.0, -1.0]]))
    assert m.num_batches_tracked.item() == 1
    assert m.running_mean.tolist() == pytest.approx([0.9 * 1 + 0.1 * 2, 0.9 * -1 + 0.1 * -0.5])


@pytest.mark.parametrize("fn", [
    lambda x, w, b: EF.layer_norm(x, (4,), w, b),
    lambda x, w, b: EF.layer_norm(x, (3, 4), w.repeat(3).reshape(3, 4), None),
    lambda x, w, b: EF.rms_norm(x, (4,), w),
    lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True),
    lambda x, w, b: EF.instance_norm(x.reshape(1, 3, 4), weight=w[:3], bias=b[:3]),
    lambda x, w, b: EF.group_norm(x.reshape(1, 3, 4), 3, w[:3], b[:3]),
    lambda x, w, b: EF.local_response_norm(x.reshape(1, 3, 4), 2),
], ids=["layer_norm", "layer_norm_2d", "rms_norm", "batch_norm", "instance_norm", "group_norm", "lrn"])
def test_gradcheck(fn):
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 1.5, 4), requires_grad=True)
    b = ember.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_second_derivative_vs_torch():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    g, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    out = []
    for lib, F in ((torch, TF), (ember, EF)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        gx, = lib.autograd.grad(F.layer_norm(ts[0], (4,), ts[1], ts[2]), ts[0], lib.tensor(g), create_graph=True)
        out.append(lib.autograd.grad(gx, ts[:2], lib.tensor(h)))
    for a, e in zip(out[1], out[0]):
        close(a, e, "float64")


def test_errors():
    x, xt = ember.randn(3, 5), torch.randn(3, 5)
    same_error(lambda: EF.layer_norm(x, (10,)), lambda: TF.layer_norm(xt, (10,)))
    same_error(lambda: EF.layer_norm(x, (3, 5, 2)), lambda: TF.layer_norm(xt, (3, 5, 2)))
    same_error(lambda: EF.layer_norm(x, (5,), ember.ones(4)), lambda: TF.layer_norm(xt, (5,), torch.ones(4)))
    same_error(lambda: EF.layer_norm(x, (5,), None, ember.ones(4)), lambda: TF.layer_norm(xt, (5,), None,
                                                                                         torch.ones(4)))
    same_error(lambda: EF.rms_norm(x, (4,)), lambda: TF.rms_norm(xt, (4,)))
    x3, x3t = ember.randn(2, 6, 4), torch.randn(2, 6, 4)
    same_error(lambda: EF.group_norm(x3, 4), lambda: TF.group_norm(x3t, 4))
    same_error(lambda: EF.group_norm(x3, 3, ember.ones(4)), lambda: TF.group_norm(x3t, 3, torch.ones(4)))
    same_error(lambda: EF.group_norm(ember.randn(3), 1), lambda: TF.group_norm(torch.randn(3), 1))
    same_error(lambda: EF.batch_norm(ember.randn(4, 3), ember.zeros(4), ember.ones(4), training=True),
               lambda: TF.batch_norm(torch.randn(4, 3), torch.zeros(4), torch.ones(4), training=True))
    same_error(lambda: EF.batch_norm(ember.randn(4, 3), None, None),
               lambda: TF.batch_norm(torch.randn(4, 3), None, None))
    same_error(lambda: EF.batch_norm(ember.randn(1, 3), None, None, training=True),
               lambda: TF.batch_norm(torch.randn(1, 3), None, None, training=True))
    same_error(lambda: EF.batch_norm(ember.randn(4, 3), None, None, training=True, eps=0.0),
               lambda: TF.batch_norm(torch.randn(4, 3), None, None, training=True, eps=0.0))
    same_error(lambda: EF.instance_norm(ember.randn(2, 3, 1)), lambda: TF.instance_norm(torch.randn(2, 3, 1)))
    same_error(lambda: EF.local_response_norm(x, 2), lambda: TF.local_response_norm(xt, 2))
    for name, shape in [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (2, 3, 4)), ("BatchNorm3d", (2, 3)),
                        ("InstanceNorm1d", (3,)), ("InstanceNorm2d", (2, 3)), ("InstanceNorm3d", (2, 3, 4))]:
        same_error(lambda: getattr(E, name)(3)(ember.randn(*shape)),
                   lambda: getattr(torch.nn, name)(3)(torch.randn(*shape)))
    same_error(lambda: E.BatchNorm1d(3)(ember.randn(4, 4)), lambda: torch.nn.BatchNorm1d(3)(torch.randn(4, 4)))
    same_error(lambda: E.GroupNorm(4, 6), lambda: torch.nn.GroupNorm(4, 6))
    same_error(lambda: E.InstanceNorm1d(3, affine=True)(ember.randn(2, 4, 5)),
               lambda: torch.nn.InstanceNorm1d(3, affine=True)(torch.randn(2, 4, 5)))
    with pytest.warns(UserWarning, match="does not match num_features"):
        E.InstanceNorm1d(3)(ember.randn(2, 4, 5))


def test_state_dict_and_defaults():
    em, tm = E.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert em.weight.tolist() == [1.0] * 3 and em.bias.tolist() == [0.0] * 3
    sd = dict(tm.state_dict())
    sd.pop("num_batches_tracked")
    sd = type(tm.state_dict())(sd)
    sd._metadata = {"": {"version": 1}}  # a checkpoint older than num_batches_tracked loads
    em.load_state_dict(sd)
    assert em.num_batches_tracked.item() == 0
    em.running_mean.fill_(3.0)
    em.num_batches_tracked.fill_(5)
    em.reset_running_stats()
    assert em.running_mean.tolist() == [0.0] * 3 and em.num_batches_tracked.item() == 0
    assert E.RMSNorm(3).weight.tolist() == [1.0] * 3
    e1, t1 = E.InstanceNorm1d(3, affine=True), torch.nn.InstanceNorm1d(3, affine=True)
    assert list(e1.state_dict()) == list(t1.state_dict())
    ln = E.LayerNorm(4, dtype=ember.float64)
    assert ln.weight.dtype is ember.float64 and ln.normalized_shape == (4,)
    assert repr(E.SyncBatchNorm(3)).startswith("SyncBatchNorm(3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        E.InstanceNorm2d(3, affine=False)(ember.randn(2, 3, 2, 2))


def test_instance_norm_rejects_old_running_stats():
    from collections import OrderedDict
    sd = OrderedDict(running_mean=torch.zeros(3), running_var=torch.ones(3))
    sd._metadata = {"": {}}  # no version: a checkpoint from before 0.4
    same_error(lambda: E.InstanceNorm1d(3).load_state_dict(sd), lambda: torch.nn.InstanceNorm1d(3).load_state_dict(sd))
