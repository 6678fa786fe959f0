"""Normalization idioms against torch: batch norm running statistics over several steps (momentum None, no tracking,
old checkpoints, switches at run time, empty batches), SyncBatchNorm on the CPU, layer/group/instance/RMS/local
response norms, F.normalize, weight and spectral norm (both APIs) while training, gradient penalties through the
norms, half inputs with float32 parameters, channels_last layouts and the ``torch.native_*_norm`` functions."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _a(shape, seed=0, scale=1.0, shift=0.0, dtype=np.float32):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(dtype)


def _close(e, t, rtol=1e-5, atol=1e-6):
    if t is None:
        assert e is None
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _all_close(es, ts, rtol=1e-5, atol=1e-6):
    assert len(es) == len(ts)
    for e, t in zip(es, ts):
        _close(e, t, rtol, atol)


def _same_error(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)):
        fn(ember)
    return want.value


def _fill(lib, module, seed=5):
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(lib.tensor(_a(tuple(p.shape), seed + i, 0.5, 1.0)))
    return module


BN = [("BatchNorm1d", (6, 4), {"momentum": None}), ("BatchNorm1d", (5, 4, 3), {"momentum": None}),
      ("BatchNorm2d", (3, 4, 3, 3), {"affine": False}),
      ("BatchNorm3d", (2, 4, 3, 2, 2), {"track_running_stats": False}),
      ("BatchNorm2d", (3, 4, 3, 3), {"momentum": 0.3, "eps": 1e-3, "bias": False})]


@pytest.mark.parametrize("name,shape,kw", BN, ids=[f"{b[0]}-{len(b[1])}d-{b[2]}" for b in BN])
def test_batchnorm_steps_then_eval(name, shape, kw):
    """Outputs, gradients and the running statistics (unbiased variance, cumulative average) after 4 steps."""
    def run(lib):
        m = _fill(lib, getattr(lib.nn, name)(4, **kw))
        out = []
        for i in range(4):
            x = lib.tensor(_a(shape, i, 3.0, 1.0), requires_grad=True)
            y = m(x)
            y.backward(lib.tensor(_a(shape, 10 + i)))
            out += [y, x.grad] + [p.grad for p in m.parameters()]
        m.eval()
        out.append(m(lib.tensor(_a(shape, 9))))
        return out + list(m.buffers())
    _all_close(run(ember), run(torch), 1e-4, 1e-5)


@pytest.mark.parametrize("mode", ["track_off_eval", "buffers_none_eval", "track_off_train", "momentum_none_later"])
def test_batchnorm_switches_at_run_time(mode):
    """Tricks of fine-tuning code: turning tracking off, dropping the buffers, changing the momentum."""
    def run(lib):
        m = lib.nn.BatchNorm1d(3)
        m(lib.tensor(_a((5, 3), 0, 2.0, 1.0)))
        if mode == "track_off_eval":
            m.track_running_stats = False
            m.eval()
        elif mode == "buffers_none_eval":
            m.running_mean = m.running_var = None
            m.eval()
        elif mode == "track_off_train":
            m.track_running_stats = False
        else:
            m.momentum = None
        return [m(lib.tensor(_a((5, 3), 1, 2.0, 1.0))), m(lib.tensor(_a((5, 3), 2)))] + list(m.buffers())
    _all_close(run(ember), run(torch))


def test_batchnorm_old_checkpoint_without_num_batches_tracked():
    """A version-1 checkpoint, or one without metadata, loads (the counter restarts at 0: momentum None then weighs
    the first batch fully); a version-2 one without the counter is an error when strict."""
    def run(lib):
        src = lib.nn.BatchNorm2d(3, momentum=None)
        with lib.no_grad():
            src.running_mean.copy_(lib.tensor([1.0, -2.0, 0.5]))
            src.running_var.copy_(lib.tensor([4.0, 0.25, 1.0]))
        sd = src.state_dict()
        del sd["num_batches_tracked"]
        sd._metadata[""]["version"] = 1
        m = lib.nn.BatchNorm2d(3, momentum=None)
        m.num_batches_tracked.fill_(7)
        res = m.load_state_dict(sd)
        x = lib.tensor(_a((2, 3, 2, 2), 3))
        out = [m.eval()(x), m.num_batches_tracked.clone()]
        m.train()(x)
        out += [m.running_mean, m.running_var, m.num_batches_tracked, lib.tensor(len(res.missing_keys))]
        plain = {k: v for k, v in src.state_dict().items() if k != "num_batches_tracked"}
        out.append(lib.tensor(lib.nn.BatchNorm2d(3).load_state_dict(plain, strict=False).missing_keys ==
                              ["num_batches_tracked"]))
        return out
    _all_close(run(ember), run(torch))
    sd = torch.nn.BatchNorm2d(3).state_dict()
    sd._metadata[""]["version"] = 2  # a current checkpoint must hold the counter
    del sd["num_batches_tracked"]
    esd = type(sd)((k, ember.tensor(v.numpy())) for k, v in sd.items())
    esd._metadata = sd._metadata
    _same_error(lambda lib: lib.nn.BatchNorm2d(3).load_state_dict(sd if lib is torch else esd))


def test_running_stats_update_under_no_grad_and_inference_mode():
    def run(lib):
        out = []
        for ctx in (lib.no_grad, lib.inference_mode):
            m = lib.nn.BatchNorm1d(3)
            with ctx():
                for i in range(3):
                    m(lib.tensor(_a((4, 3), i, 2.0)))
            out += [m.running_mean.clone(), m.running_var.clone(), m.num_batches_tracked.clone()]
        x = lib.tensor(_a((4, 3), 5), requires_grad=True)
        m(x).pow(2).sum().backward()  # buffers touched in inference mode are still usable in training
        return out + [x.grad, m.running_mean]
    _all_close(run(ember), run(torch))


def test_batch_of_one_in_training():
    for shape in [(1, 3), (1, 3, 1)]:
        err = _same_error(lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(shape)))
        assert isinstance(err, ValueError)
    _same_error(lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(1, 3, 1, 1)))
    _close(ember.nn.BatchNorm1d(3)(ember.tensor(_a((1, 3, 2)))), torch.nn.BatchNorm1d(3)(torch.tensor(_a((1, 3, 2)))))
    _close(ember.nn.BatchNorm1d(3).eval()(ember.ones(1, 3)), torch.nn.BatchNorm1d(3).eval()(torch.ones(1, 3)))


def test_sync_batchnorm_on_cpu():
    """convert_sync_batchnorm keeps parameters, buffers, bias=False and qconfig; without a process group the
    forward is a batch norm."""
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4, bias=False), lib.nn.ReLU())
        _fill(lib, net)
        net[1].qconfig = "qat"
        s = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert type(s[1]).__name__ == "SyncBatchNorm" and s[1].qconfig == "qat" and s[1].bias is None
        assert s[1].weight is net[1].weight
        x = lib.tensor(_a((2, 3, 5, 5), 3), requires_grad=True)
        y = s(x)
        y.backward(lib.tensor(_a(tuple(y.shape), 4)))
        return [y, x.grad, s[1].weight.grad, s[1].running_mean, s[1].running_var, s[1].num_batches_tracked]
    _all_close(run(ember), run(torch), 1e-4, 1e-5)
    assert isinstance(_same_error(lambda lib: lib.nn.SyncBatchNorm(0)(lib.randn(2, 0, 3))), ValueError)
    _same_error(lambda lib: lib.nn.SyncBatchNorm(3)(lib.randn(3)))
    _same_error(lambda lib: lib.nn.SyncBatchNorm(3)(lib.randn(1, 3)))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(3), None, training=True),
    lambda lib, x: lib.nn.functional.batch_norm(x, None, lib.ones(3), training=True),
    lambda lib, x: lib.nn.functional.batch_norm(x, None, lib.ones(3), training=False),
    lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(3), None, training=False),
    lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(2), None, training=True),
    lambda lib, x: lib.nn.functional.instance_norm(x, lib.zeros(3), None),
    lambda lib, x: lib.nn.functional.instance_norm(x, lib.zeros(3), None, use_input_stats=False),
    lambda lib, x: lib.batch_norm(x, None, None, lib.zeros(3), None, True, 0.1, 1e-5, False),
])
def test_running_stats_must_come_in_pairs(call):
    _same_error(lambda lib: call(lib, lib.tensor(_a((4, 3, 5)))))


def test_functional_batch_norm_forms():
    x, w = _a((5, 3, 4), 0, 2.0, 1.0), _a(3, 1, 0.3, 1.0)
    rm, rv = _a(3, 2), _a(3, 3, 0.2, 1.0)

    def run(lib):
        m, v = lib.tensor(rm), lib.tensor(rv)
        X = lib.tensor(x)
        out = [lib.nn.functional.batch_norm(X, None, None, training=True),
               lib.nn.functional.batch_norm(X, None, None, lib.tensor(w), training=True, eps=1e-3),
               lib.nn.functional.batch_norm(X, m, v, training=True, momentum=1.0), m.clone(), v.clone(),
               lib.nn.functional.batch_norm(X, m, v, training=False), m.clone()]
        return out + [lib.nn.functional.batch_norm(X.double(), m.double(), v.double())]
    _all_close(run(ember), run(torch))
    # float64 statistics for a float32 batch: only float32 parameters mix, with half inputs
    _same_error(lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(3).double(), lib.ones(3).double(),
                                                         training=True))


def test_empty_batches():
    """An empty batch gives an empty result and leaves the running statistics alone."""
    for name, args, shape in [("BatchNorm1d", (3,), (0, 3)), ("BatchNorm2d", (3,), (0, 3, 2, 2)),
                              ("LayerNorm", (3,), (0, 3)), ("GroupNorm", (1, 3), (0, 3, 2)), ("RMSNorm", (3,), (0, 3))]:
        def run(lib):
            m = getattr(lib.nn, name)(*args)
            x = lib.zeros(shape, requires_grad=True)
            y = m(x)
            y.sum().backward()
            return [y, x.grad] + [p.grad for p in m.parameters()] + list(m.buffers())
        _all_close(run(ember), run(torch))


LN = [((5,), {}), ([4, 5], {}), ((5,), {"elementwise_affine": False}), ((5,), {"bias": False}),
      (5, {"eps": 1e-2}), ((3, 4, 5), {"elementwise_affine": False, "bias": False})]


@pytest.mark.parametrize("shape,kw", LN, ids=[str(i) for i in range(len(LN))])
def test_layer_norm_variants(shape, kw):
    def run(lib):
        m = _fill(lib, lib.nn.LayerNorm(shape, **kw))
        assert m.normalized_shape == ((shape,) if isinstance(shape, int) else tuple(shape))
        x = lib.tensor(_a((2, 3, 4, 5), 0, 2.0, 3.0), requires_grad=True)
        y = m(x)
        y.backward(lib.tensor(_a((2, 3, 4, 5), 1)))
        return [y, x.grad] + [p.grad for p in m.parameters()] + [lib.tensor(len(m.state_dict()))]
    _all_close(run(ember), run(torch), 1e-4, 1e-5)
    assert repr(ember.nn.LayerNorm(shape, **kw)) == repr(torch.nn.LayerNorm(shape, **kw))


@pytest.mark.parametrize("groups,kw", [(1, {}), (2, {}), (6, {}), (3, {"affine": False}), (2, {"eps": 0.1})])
def test_group_norm_variants(groups, kw):
    def run(lib):
        m = _fill(lib, lib.nn.GroupNorm(groups, 6, **kw))
        x = lib.tensor(_a((2, 6, 4, 3), 0, 2.0, 1.0), requires_grad=True)
        y = m(x)
        y.backward(lib.tensor(_a((2, 6, 4, 3), 1)))
        return [y, x.grad] + [p.grad for p in m.parameters()]
    _all_close(run(ember), run(torch), 1e-4, 1e-5)


def test_group_norm_errors():
    _same_error(lambda lib: lib.nn.GroupNorm(4, 6))
    _same_error(lambda lib: lib.nn.functional.group_norm(lib.randn(2, 4, 3), 3))
    _same_error(lambda lib: lib.nn.GroupNorm(2, 4)(lib.randn(2, 6, 3)))
    _same_error(lambda lib: lib.nn.GroupNorm(3, 3)(lib.randn(1, 3)))


INORM = [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (2, 3, 4, 4)),
         ("InstanceNorm3d", (2, 3, 2, 3, 2))]


@pytest.mark.parametrize("name,shape", INORM, ids=[f"{n}-{len(s)}d" for n, s in INORM])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": 0.3}],
                         ids=["plain", "affine", "track", "affine_track"])
def test_instance_norm_variants(name, shape, kw):
    def run(lib):
        m = _fill(lib, getattr(lib.nn, name)(3, **kw))
        out = []
        for i in range(3):
            x = lib.tensor(_a(shape, i, 2.0, 1.0), requires_grad=True)
            y = m(x)
            y.backward(lib.tensor(_a(shape, 10 + i)))
            out += [y, x.grad] + [p.grad for p in m.parameters()]
        m.eval()
        return out + [m(lib.tensor(_a(shape, 7)))] + list(m.buffers())
    _all_close(run(ember), run(torch), 1e-4, 1e-5)


def test_instance_norm_warnings():
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.InstanceNorm1d(3)(lib.randn(2, 5, 4))  # a mismatch is tolerated without affine
            lib.nn.InstanceNorm1d(3)(lib.randn(3, 4))  # unbatched: dim 0 is the channels
        assert len(w) == 1 and "does not match num_features" in str(w[0].message)
    _same_error(lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.randn(2, 4, 4, 4)))
    _same_error(lambda lib: lib.nn.InstanceNorm1d(3)(lib.randn(2, 3, 1)))


@pytest.mark.parametrize("cls,args", [("LocalResponseNorm", (3,)), ("LocalResponseNorm", (5, 1e-2, 0.5, 2.0)),
                                      ("CrossMapLRN2d", (3,)), ("CrossMapLRN2d", (5, 1e-2, 0.5, 2.0))])
def test_local_response_norms(cls, args):
    def run(lib, shape):
        x = lib.tensor(_a(shape, 0, 2.0), requires_grad=True)
        y = getattr(lib.nn, cls)(*args)(x)
        y.backward(lib.tensor(_a(shape, 1)))
        return [y, x.grad]
    shapes = [(2, 6, 3, 4)] + ([(2, 6, 12), (2, 6, 3, 2, 2)] if cls == "LocalResponseNorm" else [])
    for shape in shapes:
        _all_close(run(ember, shape), run(torch, shape))
    assert repr(getattr(ember.nn, cls)(*args)) == repr(getattr(torch.nn, cls)(*args))
    _same_error(lambda lib: getattr(lib.nn, cls)(*args)(lib.randn(2, 3)))


def test_rms_norm_eps_and_affine():
    """eps=None is the dtype's machine epsilon (it matters for tiny inputs); float64 exactly."""
    for shape, kw in [((5,), {}), ([3, 5], {}), (5, {"eps": 1e-2}), (5, {"elementwise_affine": False})]:
        def run(lib):
            m = _fill(lib, lib.nn.RMSNorm(shape, dtype=lib.float64, **kw))
            x = lib.tensor(_a((2, 3, 5), 0, dtype=np.float64), requires_grad=True)
            y = m(x)
            y.backward(lib.tensor(_a((2, 3, 5), 1, dtype=np.float64)))
            return [y, x.grad] + [p.grad for p in m.parameters()]
        _all_close(run(ember), run(torch), 1e-12, 1e-12)
        assert repr(ember.nn.RMSNorm(shape, **kw)) == repr(torch.nn.RMSNorm(shape, **kw))
    tiny = np.array([[1e-5, 2e-5, -1e-5]])
    _close(ember.nn.RMSNorm(3)(ember.tensor(tiny, dtype=ember.float32)),
           torch.nn.RMSNorm(3)(torch.tensor(tiny, dtype=torch.float32)))
    _close(ember.nn.RMSNorm(3, dtype=ember.float64)(ember.tensor(tiny * 1e-5)),
           torch.nn.RMSNorm(3, dtype=torch.float64)(torch.tensor(tiny * 1e-5)), 1e-12, 1e-12)


@pytest.mark.parametrize("kw", [{}, {"dim": -1}, {"p": 1}, {"p": float("inf"), "dim": 0},
                                {"p": 3.0, "dim": 2, "eps": 1e-3}, {"p": 0.5}, {"dim": (1, 2)}])
def test_f_normalize(kw):
    x = _a((3, 4, 5))
    x[0, :, 0] = 0  # an all-zero vector: divided by eps

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.normalize(t, **kw)
        y.backward(lib.tensor(_a((3, 4, 5), 1)))
        return [y, t.grad]
    _all_close(run(ember), run(torch), 1e-5, 1e-5)


@pytest.mark.parametrize("new_api", [False, True], ids=["hook", "parametrization"])
@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("layer", ["Linear", "Conv2d"])
def test_weight_norm_training(new_api, dim, layer):
    def run(lib):
        base = lib.nn.Linear(5, 3) if layer == "Linear" else lib.nn.Conv2d(2, 3, 3)
        shape = (4, 5) if layer == "Linear" else (2, 2, 5, 5)
        with lib.no_grad():
            base.weight.copy_(lib.tensor(_a(tuple(base.weight.shape))))
            base.bias.zero_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            wn = lib.nn.utils.parametrizations.weight_norm if new_api else lib.nn.utils.weight_norm
            m = wn(base, dim=dim)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        out = []
        for i in range(3):
            y = m(lib.tensor(_a(shape, i)))
            opt.zero_grad()
            (y ** 2).mean().backward()
            opt.step()
            out += [y, m.weight]
        return out + [p for _, p in sorted(m.named_parameters())] + [lib.tensor(len(m.state_dict()))]
    _all_close(run(ember), run(torch), 1e-5, 1e-6)


@pytest.mark.parametrize("new_api", [False, True], ids=["hook", "parametrization"])
@pytest.mark.parametrize("layer", ["Linear", "Conv2d", "ConvTranspose2d"])
@pytest.mark.parametrize("iters", [1, 3])
def test_spectral_norm_training(new_api, layer, iters):
    """The power iteration from the same ``u``/``v``, SGD steps, then eval (no iteration)."""
    def run(lib):
        base = {"Linear": lambda: lib.nn.Linear(5, 3), "Conv2d": lambda: lib.nn.Conv2d(2, 3, 3),
                "ConvTranspose2d": lambda: lib.nn.ConvTranspose2d(2, 3, 3)}[layer]()
        shape = (4, 5) if layer == "Linear" else (2, 2, 5, 5)
        with lib.no_grad():
            base.weight.copy_(lib.tensor(_a(tuple(base.weight.shape))))
            base.bias.zero_()
        if new_api:
            m = lib.nn.utils.parametrizations.spectral_norm(base, n_power_iterations=iters)
            p = m.parametrizations.weight[0]
            u, v = p._u, p._v
        else:
            m = lib.nn.utils.spectral_norm(base, n_power_iterations=iters)
            u, v = m.weight_u, m.weight_v
        with lib.no_grad():
            for seed, t in ((10, u), (11, v)):
                t.copy_(lib.tensor(_a(tuple(t.shape), seed)))
                t.div_(t.norm())
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        out = []
        for i in range(3):
            y = m(lib.tensor(_a(shape, i)))
            opt.zero_grad()
            (y ** 2).mean().backward()
            opt.step()
            out.append(y)
        m.eval()
        out += [m(lib.tensor(_a(shape, 5))), m.weight]
        return out + [t for _, t in sorted(m.state_dict().items())]
    _all_close(run(ember), run(torch), 1e-4, 1e-5)


@pytest.mark.parametrize("kind", ["bn", "bn_eval", "ln", "gn", "rms", "in"])
def test_gradient_penalty_through_norms(kind):
    """WGAN-GP style: the gradient's norm penalized, backpropagated to the input and every parameter (float64)."""
    def run(lib):
        x = lib.tensor(_a((6, 4), 0, dtype=np.float64), requires_grad=True)
        lin = _fill(lib, lib.nn.Linear(4, 4).double(), 1)
        norm = {"bn": lambda: lib.nn.BatchNorm1d(4), "bn_eval": lambda: lib.nn.BatchNorm1d(4),
                "ln": lambda: lib.nn.LayerNorm(4), "gn": lambda: lib.nn.GroupNorm(2, 4),
                "rms": lambda: lib.nn.RMSNorm(4), "in": lambda: lib.nn.InstanceNorm1d(4, affine=True)}[kind]()
        norm = _fill(lib, norm.double(), 3)
        if kind == "bn_eval":
            with lib.no_grad():
                norm.running_mean.copy_(lib.tensor(_a(4, 7, dtype=np.float64)))
                norm.running_var.fill_(2.0)
            norm.eval()
        h = norm(x.reshape(2, 4, 3)).reshape(6, 4) if kind == "in" else norm(x)
        out = (lin(h).tanh() * lib.tensor(_a((6, 4), 2, dtype=np.float64))).sum()
        g, = lib.autograd.grad(out, x, create_graph=True)
        ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
        return [g, x.grad, lin.weight.grad] + [p.grad for p in norm.parameters()]
    _all_close(run(ember), run(torch), 1e-9, 1e-10)


@pytest.mark.parametrize("fn", [
    lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    lambda F, x, w, b: F.batch_norm(x, x.new_tensor([0.1, -0.2, 0.3]), x.new_tensor([0.5, 1.0, 2.0]), w, b),
    lambda F, x, w, b: F.instance_norm(x.reshape(2, 3, 2), weight=w, bias=b),
    lambda F, x, w, b: F.group_norm(x.reshape(1, 3, 4), 3, w, b),
    lambda F, x, w, b: F.layer_norm(x, (3,), w, b),
    lambda F, x, w, b: F.normalize(x, p=3.0, dim=0),
], ids=["bn_train", "bn_eval", "instance", "group", "layer", "normalize"])
def test_gradcheck_float64(fn):
    F = ember.nn.functional
    x = ember.tensor(_a((4, 3), 0, dtype=np.float64), requires_grad=True)
    w = ember.tensor(_a(3, 1, 0.3, 1.0, dtype=np.float64), requires_grad=True)
    b = ember.tensor(_a(3, 2, dtype=np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(lambda *a: fn(F, *a), (x, w, b))
    assert ember.autograd.gradgradcheck(lambda *a: fn(F, *a), (x, w, b))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs_with_float32_modules(dtype):
    """autocast-free mixed precision: half activations through float32 norm layers keep the half dtype, the
    running statistics stay float32."""
    x = _a((4, 6, 5), 0, 2.0, 1.0)

    def run(lib):
        X = lib.tensor(x).to(getattr(lib, dtype))
        bn = lib.nn.BatchNorm1d(6)
        ins = lib.nn.InstanceNorm1d(6, affine=True, track_running_stats=True)
        return [bn(X), bn.running_mean, bn.running_var, ins(X), ins.running_var, lib.nn.LayerNorm(5)(X),
                lib.nn.GroupNorm(3, 6)(X), lib.nn.RMSNorm(5)(X), lib.nn.LocalResponseNorm(2)(X),
                lib.nn.functional.normalize(X, dim=1), lib.nn.BatchNorm1d(6).to(getattr(lib, dtype))(X)]
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _all_close(run(ember), run(torch), tol, tol)


@pytest.mark.parametrize("name,args", [("BatchNorm2d", (4,)), ("GroupNorm", (2, 4)), ("InstanceNorm2d", (4,)),
                                       ("LocalResponseNorm", (2,)), ("LayerNorm", (5,))])
def test_channels_last_layouts(name, args):
    """Values and strides of the result and of the input's gradient for a channels_last input."""
    def run(lib):
        m = getattr(lib.nn, name)(*args)
        x = lib.tensor(_a((2, 4, 4, 5), 0, 2.0)).to(memory_format=lib.channels_last).requires_grad_()
        y = m(x)
        y.backward(lib.tensor(_a((2, 4, 4, 5), 1)))
        return y, x.grad
    (ye, ge), (yt, gt) = run(ember), run(torch)
    _close(ye, yt, 1e-5, 1e-5)
    _close(ge, gt, 1e-4, 1e-5)
    assert ye.stride() == yt.stride() and ge.stride() == gt.stride()


def test_native_norm_functions():
    """``torch.native_*_norm``: the output and the saved statistics (float32 for half inputs)."""
    x, w, b = _a((4, 6, 5), 0, 2.0, 1.0), _a(6, 1, 0.3, 1.0), _a(6, 2)

    def run(lib, dt):
        X, W, B = lib.tensor(x).to(dt), lib.tensor(w), lib.tensor(b)
        m, v = lib.zeros(6), lib.ones(6)
        out = list(lib.native_batch_norm(X, W, B, m, v, True, 0.1, 1e-5)) + [m, v]
        out += list(lib.native_batch_norm(X, W, B, m, v, False, 0.1, 1e-5))
        out += list(lib.native_layer_norm(X, [6, 5], None, None, 1e-5))
        out += list(lib.native_layer_norm(X, [5], W[:5], B[:5], 1e-3))
        return out + list(lib.native_group_norm(X, W, B, 4, 6, 5, 3, 1e-5))
    for dt in ("float32", "bfloat16"):
        tol = 1e-5 if dt == "float32" else 1e-2
        _all_close(run(ember, getattr(ember, dt)), run(torch, getattr(torch, dt)), tol, tol)


def test_fuse_conv_bn_eval():
    def run(lib):
        conv, bn = _fill(lib, lib.nn.Conv2d(3, 4, 3)), _fill(lib, lib.nn.BatchNorm2d(4), 9)
        with lib.no_grad():
            bn.running_mean.copy_(lib.tensor(_a(4, 2)))
            bn.running_var.copy_(lib.tensor(_a(4, 3, 0.2, 1.0)))
        conv.eval(), bn.eval()
        fused = lib.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
        x = lib.tensor(_a((2, 3, 6, 6), 5))
        return [fused(x), bn(conv(x)), fused.weight, fused.bias]
    _all_close(run(ember), run(torch), 1e-5, 1e-5)
