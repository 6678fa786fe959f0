"""Models, optimizers, transfers, queries, random streams, save/load and autocast on cuda through the CuPy stand-in,
each compared with the same computation on the CPU."""
import os

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2)
        self.fc = nn.Linear(8 * 2 * 2, 10)

    def forward(self, x):  # (B, 3, 8, 8)
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)  # (B, 8, 4, 4)
        x = F.gelu(self.conv2(F.pad(x, (1, 1, 1, 1))))  # (B, 8, 2, 2)
        return F.cross_entropy(self.fc(x.flatten(1)), ember.arange(x.shape[0], device=x.device) % 10)


class GPTBlock(nn.Module):
    def __init__(self, vocab=17, d=16, heads=2):
        super().__init__()
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Parameter(ember.randn(8, d) * 0.02)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Dropout(0.0), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):  # (B, T)
        B, T = idx.shape
        x = self.emb(idx) + self.pos[:T]
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
        q, k, v = (t.view(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, -1)
        x = x + self.proj(y)
        x = x + self.mlp(self.ln2(x))
        logits = self.head(x)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm, self.out = nn.LSTM(5, 7, num_layers=2, batch_first=True), nn.Linear(7, 1)

    def forward(self, x):  # (B, T, 5)
        y, (h, c) = self.lstm(x)
        return F.mse_loss(self.out(y).squeeze(-1), x.sum(-1)) + h.pow(2).mean() + c.abs().mean()


def _inputs(kind, rng):
    if kind is CNN:
        return ember.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    if kind is GPTBlock:
        return ember.tensor(rng.integers(0, 17, (2, 8)))
    return ember.tensor(rng.standard_normal((3, 6, 5)).astype(np.float32))


@pytest.mark.parametrize("kind,opt", [(CNN, "SGD"), (GPTBlock, "SGD"), (LSTMModel, "Adam")])
def test_model_trains_the_same_on_cuda(kind, opt):
    ember.manual_seed(0)
    cpu = kind()
    gpu = kind()
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda")
    assert all(p.device == ember.device("cuda:0") for p in gpu.parameters())
    make = getattr(ember.optim, opt)
    opts = [make(m.parameters(), lr=0.05) for m in (cpu, gpu)]
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = _inputs(kind, rng)
        losses = []
        for model, o in zip((cpu, gpu), opts):
            o.zero_grad()
            loss = model(x.to(next(model.parameters()).device))
            loss.backward()
            o.step()
            losses.append(loss)
        assert losses[1].device.type == "cuda"
        np.testing.assert_allclose(losses[1].item(), losses[0].item(), rtol=1e-5, atol=1e-6)
        for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
            assert q.grad.device.type == "cuda", name
            np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=name)
    for (name, b), c in zip(cpu.named_buffers(), gpu.buffers()):
        np.testing.assert_allclose(c.cpu().numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


two_devices = pytest.mark.skipif(os.environ.get("EMBER_REAL_CUPY") == "1", reason="the stand-in's two devices")


@two_devices
def test_transfers_between_devices():
    x = ember.arange(6.).reshape(2, 3)
    g = x.to("cuda")
    assert g.device == ember.device("cuda:0") and g.is_cuda and g.cpu().tolist() == x.tolist()
    g1 = g.to("cuda:1")
    assert g1.device == ember.device("cuda:1") and g1._data.device.id == 1
    y = g1 * 2 + 1
    assert y.device == ember.device("cuda:1") and y.cpu().tolist() == (x * 2 + 1).tolist()
    assert g.to(ember.float16).dtype is ember.float16 and g.half().cpu().tolist() == x.tolist()
    assert g.to(ember.bfloat16).cpu().float().tolist() == x.tolist()
    with pytest.raises(TypeError):
        np.asarray(g._data)


@two_devices
def test_cuda_queries():
    assert ember.cuda.is_available() and ember.cuda.device_count() == 2
    assert ember.cuda.current_device() == 0
    ember.cuda.set_device(1)
    try:
        assert ember.cuda.current_device() == 1 and ember.zeros(2, device="cuda").device == ember.device("cuda:1")
    finally:
        ember.cuda.set_device(0)
    assert isinstance(ember.cuda.get_device_name(), str) and ember.cuda.is_bf16_supported()
    ember.cuda.synchronize()
    before = ember.cuda.memory_allocated()
    keep = ember.empty(1000, device="cuda")
    assert ember.cuda.memory_allocated() >= before + 4000 and ember.cuda.max_memory_allocated() >= before + 4000
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del keep
    ember.cuda.empty_cache()
    ember.cuda.reset_peak_memory_stats()
    assert ember.version.cuda is not None


def test_random_on_cuda():
    gen = ember.Generator("cuda").manual_seed(5)
    a = ember.randn(4, 5, device="cuda", generator=gen)
    state = gen.get_state()
    b = ember.rand(7, device="cuda", generator=gen)
    gen.set_state(state)
    assert ember.rand(7, device="cuda", generator=gen).tolist() == b.tolist()
    assert a.device.type == "cuda" and a.dtype is ember.float32
    ember.cuda.manual_seed_all(3)
    c = ember.randint(0, 4, (50,), device="cuda")
    ember.cuda.manual_seed_all(3)
    assert ember.randint(0, 4, (50,), device="cuda").tolist() == c.tolist() and set(c.tolist()) <= {0, 1, 2, 3}
    assert sorted(ember.randperm(9, device="cuda").tolist()) == list(range(9))
    for t in (ember.poisson(ember.full((5,), 3.0, device="cuda")), ember.empty(5, device="cuda").uniform_(),
              ember.nn.functional.dropout(ember.ones(100, device="cuda"), 0.5),
              ember.normal(ember.zeros(3, device="cuda"), 1.0)):
        assert t.device.type == "cuda"
    w = ember.empty(8, 8, device="cuda")
    ember.nn.init.kaiming_uniform_(w)
    ember.nn.init.trunc_normal_(w)
    assert w.device.type == "cuda" and float(w.abs().max()) <= 2


def test_save_and_load_cuda_tensors(tmp_path):
    model = nn.Linear(3, 2).to("cuda")
    path = tmp_path / "m.pt"
    ember.save({"model": model.state_dict(), "x": ember.arange(4.0, device="cuda")}, path)
    back = ember.load(path)
    assert back["x"].device.type == "cuda" and back["x"].tolist() == [0., 1., 2., 3.]
    on_cpu = ember.load(path, map_location="cpu")
    assert on_cpu["model"]["weight"].device.type == "cpu"
    np.testing.assert_array_equal(on_cpu["model"]["weight"].numpy(), model.weight.detach().cpu().numpy())


def test_autocast_on_cuda():
    lin = nn.Linear(4, 3).to("cuda")
    x = ember.randn(2, 4, device="cuda")
    with ember.autocast("cuda", dtype=ember.float16):
        y = lin(x)
        assert y.dtype is ember.float16 and y.device.type == "cuda"
    np.testing.assert_allclose(y.float().detach().cpu().numpy(), (x @ lin.weight.T + lin.bias).detach().cpu().numpy(),
                               atol=1e-2)
    with ember.autocast("cuda", dtype=ember.bfloat16):
        z = lin(x)
        assert z.dtype is ember.bfloat16
    scaler = ember.amp.GradScaler("cuda")
    opt = ember.optim.SGD(lin.parameters(), lr=0.1)
    with ember.autocast("cuda"):
        loss = lin(x).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert lin.weight.grad.device.type == "cuda" and scaler.get_scale() > 0


def test_float8_on_cuda_is_refused_by_the_dtype_table():
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        ember.ones(2, device="cuda").to(ember.float8_e4m3fn)
    with pytest.raises(TypeError, match="float8_e5m2"):
        ember.ones(2, dtype=ember.float8_e5m2, device="cuda")
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        ember.ones(2, dtype=ember.float8_e4m3fn).cuda()
