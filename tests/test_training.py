"""Short training runs on real data, in ember and in torch from identical weights on identical batches: the losses
must agree step by step (a check of every forward, backward and optimizer update together)."""
import functools
import os

import numpy as np
import pytest
import torch

import ember

DATA = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
STEPS = 20


def data_path(*parts):
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        pytest.skip(f"the shared data set {path} is not present")
    return path


def train_both(build, batches, make_opt, loss_fn):
    """Trains ``build(torch)`` and ``build(ember)`` (torch's initial weights copied into ember) on ``batches``;
    returns the two lists of losses."""
    torch.manual_seed(0)
    tm = build(torch)
    em = build(ember)
    em.load_state_dict(tm.state_dict())
    losses = {}
    for lib, model in ((torch, tm), (ember, em)):
        opt = make_opt(lib, model.parameters())
        out = []
        for x, y in batches:
            loss = loss_fn(lib, model, lib.from_numpy(x), lib.from_numpy(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(loss.item())
        losses[lib.__name__] = out
    return losses["torch"], losses["ember"]


def check_losses(t, e, rtol):
    np.testing.assert_allclose(e, t, rtol=rtol, err_msg="ember's losses drift from torch's")
    assert np.mean(t[-5:]) < 0.9 * np.mean(t[:5]), f"the loss should fall over {STEPS} steps: {t}"


# -- a small CNN on the first images of Fashion-MNIST ----------------------------------------------------------
def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 32), nn.ReLU(), nn.Linear(32, 10))


@functools.lru_cache(maxsize=1)
def fashion_batches(batch=32):
    from ember.datasets import FashionMNIST
    ds = FashionMNIST(data_path("fashion-mnist"), train=True)
    n = STEPS * batch  # 640 images: STEPS batches of 32, each seen once
    x = (ds.data.numpy()[:n].astype(np.float32) / 255 - 0.286) / 0.353
    y = ds.targets.numpy()[:n]
    return tuple((x[i:i + batch, None].copy(), y[i:i + batch].copy()) for i in range(0, n, batch))


def cross_entropy(lib, model, x, y):
    return lib.nn.functional.cross_entropy(model(x), y)


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_cnn_on_fashion_mnist_matches_torch(opt):
    make = {"sgd": lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.9),
            "adam": lambda lib, p: lib.optim.Adam(p, lr=2e-3)}[opt]
    t, e = train_both(cnn, fashion_batches(), make, cross_entropy)
    check_losses(t, e, rtol=1e-4)


# -- tiny character-level models on Tiny Shakespeare -------------------------------------------------------------
def char_batches(batch=8, block=32, seed=0):
    with open(data_path("tinyshakespeare", "input.txt"), encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text[:20000]], dtype=np.int64)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(STEPS):
        start = rng.integers(0, len(ids) - block - 1, batch)
        x = np.stack([ids[s:s + block] for s in start])
        y = np.stack([ids[s + 1:s + block + 1] for s in start])
        out.append((x, y))
    return out, len(chars)


def tiny_gpt(vocab, width=32, heads=4, layers=2, block=32):
    def build(lib):
        nn, F = lib.nn, lib.nn.functional

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
                self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
                self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

            def forward(self, x):
                B, T, C = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
                q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
                return x + self.mlp(self.ln2(x))

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
                self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
                self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

            def forward(self, idx):
                x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
                return self.head(self.ln(self.blocks(x)))

        return GPT()
    return build


def tiny_lstm(vocab, width=32, hidden=48):
    def build(lib):
        nn = lib.nn

        class CharLSTM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, width)
                self.lstm = nn.LSTM(width, hidden, num_layers=2, batch_first=True)
                self.head = nn.Linear(hidden, vocab)

            def forward(self, idx):
                return self.head(self.lstm(self.embed(idx))[0])

        return CharLSTM()
    return build


def lm_loss(lib, model, x, y):
    logits = model(x)
    return lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def test_char_gpt_on_tiny_shakespeare_matches_torch():
    batches, vocab = char_batches()
    t, e = train_both(tiny_gpt(vocab), batches, lambda lib, p: lib.optim.AdamW(p, lr=3e-3), lm_loss)
    check_losses(t, e, rtol=1e-4)


def test_char_lstm_on_tiny_shakespeare_matches_torch():
    batches, vocab = char_batches(seed=1)
    t, e = train_both(tiny_lstm(vocab), batches, lambda lib, p: lib.optim.Adam(p, lr=1e-2), lm_loss)
    check_losses(t, e, rtol=1e-4)
