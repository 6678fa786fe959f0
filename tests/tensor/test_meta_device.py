"""The meta device against torch: tensors with shape, dtype and autograd state but no data, and the module
workflows built on them (empty-weight loading, to_empty, assign=True, shape inference)."""
import copy
import tracemalloc
import warnings

import pytest
import torch

import ember
import ember.nn as nn


def _same_meta(e, t):
    assert e.device.type == t.device.type == "meta" and e.is_meta and t.is_meta
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert e.requires_grad == t.requires_grad


def _raises_as(fe, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ee:
        fe()
    assert type(ee.value) is type(et.value) and str(ee.value) == str(et.value)


@pytest.mark.parametrize("make", [
    lambda m: m.empty(3, 4, device="meta"),
    lambda m: m.zeros(2, 3, dtype=m.float64, device="meta"),
    lambda m: m.ones((0, 3), device="meta"),
    lambda m: m.full((2, 2), 7, device="meta"),
    lambda m: m.rand(2, 5, device="meta", requires_grad=True),
    lambda m: m.randn(4, dtype=m.float16, device="meta"),
    lambda m: m.randint(0, 5, (3, 2), device="meta"),
    lambda m: m.randperm(6, device="meta"),
    lambda m: m.arange(10, device="meta"),
    lambda m: m.eye(3, 2, device="meta"),
    lambda m: m.linspace(0, 1, 5, device="meta"),
    lambda m: m.tensor([[1, 2], [3, 4]], device="meta"),
    lambda m: m.empty_like(m.ones(2, 3), device="meta"),
    lambda m: m.zeros_like(m.empty(4, 1, device="meta")),
    lambda m: m.empty_strided((2, 3), (3, 1), device="meta"),
    lambda m: m.ones(2, 3).to("meta", m.float16),
    lambda m: m.empty((), device="meta"),
])
def test_factories(make):
    t, e = make(torch), make(ember)
    _same_meta(e, t)
    assert e.stride() == t.stride() and e.is_contiguous() and e.numel() == t.numel() and e.nbytes == t.nbytes
    assert repr(e).replace("ember.", "torch.") == repr(t)
    assert e.data_ptr() == 0 and e.get_device() == -1 and not e.is_cpu


def test_no_memory():
    tracemalloc.start()
    x = ember.empty(10 ** 6, 10 ** 6, device="meta")
    w = ember.nn.Parameter(ember.zeros(10 ** 5, 10 ** 5, dtype=ember.bfloat16, device="meta"))
    y = ember.nn.functional.linear(x[:, :10 ** 5].to(ember.bfloat16), w)
    z = (y.view(-1)[:10] * 2).exp()
    nn.init.kaiming_uniform_(w, a=5 ** 0.5)
    nn.init.trunc_normal_(w)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert y.shape == (10 ** 6, 10 ** 5) and y.dtype is ember.bfloat16 and z.shape == (10,)
    assert peak < 10 ** 6


def test_ops_and_autograd():
    for m in (torch, ember):
        w = m.empty(5, 4, device="meta", requires_grad=True)
        x = m.empty(2, 3, 4, device="meta")
        y = (m.nn.functional.linear(x, w).relu() @ m.empty(5, 6, device="meta")).softmax(-1)
        s = y.sum()
        s.backward()
        out = [y, s, w.grad, x.transpose(0, 1).reshape(3, -1), m.cat([x, x], 1), (x > 0), x.max(-1).indices,
               m.einsum("bij,kj->bik", x, w), x.mean(1, keepdim=True), x.to(m.float64), x.int() + 1.5]
        if m is torch:
            ref = out
    for e, t in zip(out, ref):
        _same_meta(e, t)
    assert ember.empty(3, device="meta").view(3, 1)._base is not None


def test_backward_of_batched_products():
    grads = []
    for m in (torch, ember):
        a = m.empty(2, 3, 4, device="meta", requires_grad=True)
        b = m.empty(4, 5, device="meta", requires_grad=True)
        ((a @ b).sum() + m.einsum("bij,jk->bik", a, b).sum()).backward()
        grads.append((a.grad, b.grad))
    for e, t in zip(*grads[::-1]):
        _same_meta(e, t)


def test_conv_attention_modules():
    for m in (torch, ember):
        with m.device("meta"):
            net = m.nn.Sequential(m.nn.Conv2d(3, 8, 3, stride=2, padding=1), m.nn.BatchNorm2d(8), m.nn.ReLU(),
                                  m.nn.Flatten(), m.nn.Linear(8 * 16 * 16, 10))
            mha = m.nn.MultiheadAttention(8, 2, batch_first=True)
            emb = m.nn.Embedding(100, 8)
        q = m.empty(2, 5, 8, device="meta")
        out = [net(m.empty(4, 3, 32, 32, device="meta")), mha(q, q, q)[0], mha(q, q, q)[1],
               emb(m.empty(2, 7, dtype=m.long, device="meta")),
               m.nn.functional.scaled_dot_product_attention(*[m.empty(2, 3, 5, 8, device="meta")] * 3)]
        if m is torch:
            ref = out
    for e, t in zip(out, ref):
        _same_meta(e, t)


def test_mixing_devices():
    m, c = ember.empty(3, 4, device="meta"), ember.ones(3, 4)
    _raises_as(lambda: m + c, lambda: torch.empty(3, 4, device="meta") + torch.ones(3, 4))
    _raises_as(lambda: c + m, lambda: torch.ones(3, 4) + torch.empty(3, 4, device="meta"))
    _same_meta(m * ember.tensor(2.0), torch.empty(3, 4, device="meta") * torch.tensor(2.0))
    _same_meta(ember.tensor(2.0) - m, torch.tensor(2.0) - torch.empty(3, 4, device="meta"))


def test_errors():
    e, t = ember.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta")
    e0, t0 = ember.empty((), device="meta"), torch.empty((), device="meta")
    for f in (lambda x: x.cpu(), lambda x: x.to("cpu"), lambda x: x.numpy(), lambda x: x.tolist(),
              lambda x: x.item(), lambda x: ember.ones(3, 4).copy_(x) if isinstance(x, ember.Tensor) else
              torch.ones(3, 4).copy_(x)):
        _raises_as(lambda: f(e), lambda: f(t))
    for f in (lambda x: x.item(), float, bool, int, lambda x: x.tolist()):
        _raises_as(lambda: f(e0), lambda: f(t0))
    assert e.to("meta") is e


def test_inplace_writes_are_noops():
    for m in (torch, ember):
        x = m.empty(3, 4, device="meta")
        outs = [x.uniform_(), x.normal_(), x.zero_(), x.fill_(2), x.copy_(m.ones(3, 4)), x.add_(1), x.mul_(x),
                x.bernoulli_(0.5), x.clamp_(0, 1)]
        x[0] = 1.0
        for f in (m.nn.init.uniform_, m.nn.init.normal_, m.nn.init.trunc_normal_, m.nn.init.zeros_,
                  m.nn.init.ones_, m.nn.init.eye_, m.nn.init.xavier_uniform_, m.nn.init.orthogonal_,
                  lambda w: m.nn.init.kaiming_uniform_(w, a=5 ** 0.5), lambda w: m.nn.init.constant_(w, 0.3),
                  lambda w: m.nn.init.sparse_(w, 0.5)):
            outs.append(f(x))
        if m is torch:
            ref = outs
    for e, t in zip(outs, ref):
        _same_meta(e, t)


def test_empty_weight_loading():
    src = nn.Linear(4, 5)
    sd = src.state_dict()
    with ember.device("meta"):
        big = nn.Sequential(nn.Linear(4, 5), nn.LayerNorm(5))
    assert big[0].weight.is_meta and type(big[0].weight) is nn.Parameter and big[0].weight.requires_grad
    assert big.state_dict()["0.weight"].is_meta
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        big[0].load_state_dict(sd)
    assert [str(x.message) for x in w] == [
        f"for {k}: copying from a non-meta parameter in the checkpoint to a meta parameter in the current model, "
        "which is a no-op. (Did you mean to pass `assign=True` to assign items in the state dictionary to their "
        "corresponding key in the module instead of copying them in place?)" for k in ("weight", "bias")]
    assert big[0].weight.is_meta
    big[0].load_state_dict(sd, assign=True)
    assert not big[0].weight.is_meta and type(big[0].weight) is nn.Parameter and big[0].weight.requires_grad
    assert ember.equal(big[0].weight, src.weight)
    old = big[1].weight
    big.to_empty(device="cpu")
    assert big[1].weight is not old and type(big[1].weight) is nn.Parameter and big[1].weight.device.type == "cpu"
    big.load_state_dict({**{"0." + k: v for k, v in sd.items()}, **nn.LayerNorm(5).state_dict(prefix="1.")})
    x = ember.randn(2, 4)
    assert ember.allclose(big(x), nn.LayerNorm(5)(src(x)))
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        nn.Linear(4, 5).load_state_dict(nn.Linear(4, 5, device="meta").state_dict())


def test_model_to_meta_and_functional_call():
    models = [nn.Linear(3, 2) for _ in range(2)]
    base = copy.deepcopy(models[0]).to("meta")
    assert base.weight.is_meta and base.weight is not models[0].weight and not models[0].weight.is_meta
    x = ember.randn(4, 3)
    params = dict(models[1].named_parameters())
    y = ember.func.functional_call(base, params, (x,))
    assert ember.allclose(y, models[1](x))
    cp = copy.deepcopy(base)
    assert cp.weight.is_meta and cp.weight is not base.weight
    lin = nn.Linear(4, 5)
    w = lin.weight
    lin.weight.grad = ember.ones(5, 4)
    lin.to("meta")
    assert lin.weight is not w and lin.weight.is_meta and lin.weight.grad.is_meta and w.grad is not None
    ref = torch.nn.Linear(4, 5)
    wt = ref.weight
    ref.to("meta")
    assert (ref.weight is wt) == (lin.weight is w)


def test_optimizer_step_is_noop():
    lin = nn.Linear(4, 3, device="meta")
    opt = ember.optim.Adam(lin.parameters(), lr=0.1)
    lin(ember.empty(2, 4, device="meta")).sum().backward()
    assert lin.weight.grad.is_meta and lin.weight.grad.shape == (3, 4)
    opt.step()
    opt.zero_grad()
    assert lin.weight.is_meta and opt.state[lin.weight]["exp_avg"].is_meta
