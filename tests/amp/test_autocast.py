"""autocast against torch's on CPU: which ops run in the lower precision, which in float32, the values and the
gradients through the casts, nesting, decorators, threads, and the warnings that disable it."""
import threading
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _pair(a, grad=False):
    return ember.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _close(e, t, tol=2e-2):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=tol, atol=tol)


LOWER = {
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 8), (3, 8), (3,)]),
    "matmul": (lambda m, a, b: a @ b, [(2, 5, 8), (8, 4)]),
    "mm": (lambda m, a, b: m.mm(a, b), [(5, 8), (8, 4)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 5, 8), (2, 8, 4)]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [(5, 4), (5, 8), (8, 4)]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b), [(2, 5, 4), (2, 5, 8), (2, 8, 4)]),
    "conv2d": (lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "conv_transpose2d": (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2), [(2, 3, 4, 4), (3, 2, 3, 3)]),
    "sdpa": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
             [(2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 8)]),
    "einsum": (lambda m, a, b: m.einsum("bij,jk->bik", a, b), [(2, 5, 8), (8, 4)]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b, dims=([1], [0])), [(5, 8), (8, 4)]),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(5, 8), (8, 4), (4, 3)]),
    "inner": (lambda m, a, b: m.inner(a, b), [(5, 8), (4, 8)]),
    "prelu": (lambda m, x, w: m.nn.functional.prelu(x, w), [(2, 3, 4), (3,)]),
}

# ops on neither of torch's lists: they compute in their inputs' dtypes, although built on products
NATIVE = {
    "mv": (lambda m, a, v: m.mv(a, v), [(5, 8), (8,)]),
    "dot": (lambda m, a, b: m.dot(a, b), [(8,), (8,)]),
    "bilinear": (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), [(5, 4), (5, 3), (2, 4, 3)]),
}


@pytest.mark.parametrize("name", list(NATIVE))
def test_ops_on_neither_list_keep_their_inputs_dtype(name):
    fn, shapes = NATIVE[name]
    arrays = [_f32(*s) for s in shapes]
    e_in, t_in = zip(*(_pair(a) for a in arrays))
    with ember.autocast("cpu"):
        ye = fn(ember, *e_in)
    with torch.autocast("cpu"):
        yt = fn(torch, *t_in)
    assert yt.dtype == torch.float32
    _close(ye, yt)  # torch's bilinear runs its inner products in bfloat16: compared at that precision


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(LOWER))
def test_lower_precision_ops_vs_torch(name, dtype):
    fn, shapes = LOWER[name]
    arrays = [_f32(*s) for s in shapes]
    e_in, t_in = zip(*(_pair(a, grad=True) for a in arrays))
    with ember.autocast("cpu", dtype=getattr(ember, dtype)):
        ye = fn(ember, *e_in)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        yt = fn(torch, *t_in)
    assert str(ye.dtype) == f"ember.{dtype}"
    _close(ye, yt)
    g = _f32(*yt.shape)
    ge = ember.autograd.grad(ye, e_in, ember.tensor(g).to(ye.dtype))
    gt = torch.autograd.grad(yt, t_in, torch.tensor(g).to(yt.dtype))
    for a, b in zip(ge, gt):
        assert a.dtype == ember.float32  # through the cast back to the float32 inputs
        _close(a, b, tol=5e-2)


LOSSES = {
    "cross_entropy": (lambda m, x, t: m.nn.functional.cross_entropy(x, t), "index"),
    "nll_loss": (lambda m, x, t: m.nn.functional.nll_loss(x, t), "index"),
    "mse_loss": (lambda m, x, t: m.nn.functional.mse_loss(x, t), "same"),
    "l1_loss": (lambda m, x, t: m.nn.functional.l1_loss(x, t), "same"),
    "smooth_l1_loss": (lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t), "same"),
    "bce_with_logits": (lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(x, t), "prob"),
    "kl_div": (lambda m, x, t: m.nn.functional.kl_div(x, t, reduction="batchmean"), "prob"),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_run_in_float32(name):
    fn, kind = LOSSES[name]
    x = _f32(6, 5)
    target = {"index": RNG.integers(0, 5, 6), "same": _f32(6, 5), "prob": RNG.random((6, 5)).astype(np.float32)}[kind]
    (we, wt), (te, tt) = _pair(_f32(5, 5), grad=True), _pair(target)
    xe, xt = ember.tensor(x), torch.tensor(x)
    with ember.autocast("cpu"):
        le = fn(ember, ember.nn.functional.linear(xe, we), te)  # bfloat16 scores in, float32 loss out
    with torch.autocast("cpu"):
        lt = fn(torch, torch.nn.functional.linear(xt, wt), tt)
    assert le.dtype == ember.float32
    _close(le, lt)
    le.backward()
    lt.backward()
    _close(we.grad, wt.grad, tol=5e-2)


def test_other_ops_keep_their_dtypes_and_float64_is_not_cast():
    with ember.autocast("cpu"), torch.autocast("cpu"):
        for m in (ember, torch):
            x = m.ones(2, 3)
            h = m.mm(x, m.ones(3, 3))
            assert str(h.dtype).endswith("bfloat16")
            assert str((h + x).dtype).endswith("float32")  # add: ordinary promotion
            assert str(m.relu(h).dtype).endswith("bfloat16")
            assert str(m.mm(x.double(), m.ones(3, 3).double()).dtype).endswith("float64")


def test_nesting_decorator_and_state_queries():
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and ember.get_autocast_dtype("cpu") == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.float32
        with ember.autocast("cpu", dtype=ember.float16):
            assert ember.get_autocast_dtype("cpu") == ember.float16
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")

    @ember.autocast("cpu")
    def f(a):
        return a @ a
    assert f(ember.ones(2, 2)).dtype == ember.bfloat16
    assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.float32
    assert ember.amp.autocast is ember.autocast and ember.amp.is_autocast_available("cpu")


def test_backward_inside_the_region_runs_in_forward_dtypes():
    (we, wt), (xe, xt) = _pair(_f32(4, 3), grad=True), _pair(_f32(5, 3))
    with ember.autocast("cpu"):
        ember.nn.functional.linear(xe, we).float().pow(2).sum().backward()
    with torch.autocast("cpu"):
        torch.nn.functional.linear(xt, wt).float().pow(2).sum().backward()
    _close(we.grad, wt.grad, tol=5e-2)


def test_autocast_is_per_thread():
    inside, resume, seen = threading.Event(), threading.Event(), {}

    def other():
        with ember.autocast("cpu"):
            inside.set()
            resume.wait()
            seen["other"] = ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype

    t = threading.Thread(target=other)
    t.start()
    inside.wait()
    seen["main"] = ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype
    resume.set()
    t.join()
    assert seen == {"other": ember.bfloat16, "main": ember.float32}


def test_unsupported_settings_warn_and_disable_as_torch():
    for m in (ember, torch):
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with m.autocast("cpu", dtype=m.float64):
                assert str(m.mm(m.ones(2, 2), m.ones(2, 2)).dtype).endswith("float32")
        with pytest.raises(RuntimeError):
            m.autocast("tpu")
    if not ember.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ember.autocast("cuda")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.warns(FutureWarning, match="deprecated"):
                ember.cuda.amp.autocast()


def test_training_steps_with_autocast_and_grad_scaler_vs_torch():
    t_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    e_model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 3))
    e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_model.state_dict().items()})
    e_opt, t_opt = ember.optim.SGD(e_model.parameters(), lr=0.1), torch.optim.SGD(t_model.parameters(), lr=0.1)
    e_sc, t_sc = ember.amp.GradScaler("cpu", init_scale=256.0), torch.amp.GradScaler("cpu", init_scale=256.0)
    for _ in range(5):
        x, y = _f32(10, 8), RNG.integers(0, 3, 10)
        losses = []
        for m, model, opt, sc in ((ember, e_model, e_opt, e_sc), (torch, t_model, t_opt, t_sc)):
            with m.autocast("cpu"):
                loss = m.nn.functional.cross_entropy(model(m.tensor(x)), m.tensor(y))
            opt.zero_grad()
            sc.scale(loss).backward()
            sc.step(opt)
            sc.update()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=2e-2, abs=2e-2)
    assert e_sc.get_scale() == t_sc.get_scale()
    for (k, a), b in zip(e_model.state_dict().items(), t_model.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=3e-2, atol=3e-2, err_msg=k)
