"""Mixed-precision idioms against torch: CPU autocast regions and their dtype settings, recurrent layers under
autocast, whole models' output and gradient dtypes, bfloat16/float16 fused arithmetic rounded once, and half-precision
models trained with an optimizer."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().float().numpy()


def _same_dtype(e, t):
    assert e.dtype.name == str(t.dtype).split(".")[-1]


def _close(e, t, tol=2e-2):
    _same_dtype(e, t)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(e), _np(t), rtol=tol, atol=tol)


def _bits(e, t):
    _same_dtype(e, t)
    np.testing.assert_array_equal(_np(e), _np(t))


def _a(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _copy_weights(em, tm):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


# -- the dtype setting of nested regions ----------------------------------------------------------------------------
def test_nested_region_without_dtype_inherits_the_enclosing_dtype():
    for lib in (ember, torch):
        with lib.autocast("cpu", dtype=lib.float16):
            with lib.autocast("cpu"):
                y = lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3))
                assert y.dtype is lib.float16 and lib.get_autocast_dtype("cpu") is lib.float16
            with lib.autocast("cpu", enabled=False):  # off, but the dtype setting stays
                assert not lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") is lib.float16
                with lib.autocast("cpu"):
                    assert lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3)).dtype is lib.float16
        assert lib.get_autocast_dtype("cpu") is lib.bfloat16 and not lib.is_autocast_enabled("cpu")


def test_deprecated_cpu_amp_alias_warns_and_casts():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.cpu.amp.autocast():
                y = lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3))
        assert y.dtype is lib.bfloat16
        assert any(issubclass(x.category, FutureWarning) and "torch.amp.autocast('cpu'" in str(x.message) for x in w)


# -- recurrent layers under autocast: the dtypes of torch's cells ----------------------------------------------------
_RNNS = {
    "lstm": (lambda nn: nn.LSTM(8, 16, batch_first=True), (2, 5, 8)),
    "lstm_2layer_bidir": (lambda nn: nn.LSTM(8, 16, num_layers=2, bidirectional=True), (5, 2, 8)),
    "lstm_proj": (lambda nn: nn.LSTM(8, 16, proj_size=4), (5, 2, 8)),
    "gru": (lambda nn: nn.GRU(8, 16, num_layers=2), (5, 2, 8)),
    "rnn_tanh": (lambda nn: nn.RNN(8, 16), (5, 2, 8)),
    "rnn_relu": (lambda nn: nn.RNN(8, 16, nonlinearity="relu"), (5, 2, 8)),
    "lstm_cell": (lambda nn: nn.LSTMCell(8, 16), (2, 8)),
    "gru_cell": (lambda nn: nn.GRUCell(8, 16), (2, 8)),
    "rnn_cell": (lambda nn: nn.RNNCell(8, 16), (2, 8)),
}


def _flat(out):
    if isinstance(out, tuple):
        return [t for o in out for t in _flat(o)]
    return [out]


@pytest.mark.parametrize("name", sorted(_RNNS))
def test_recurrent_layers_under_autocast_vs_torch(name):
    """GRU and LSTM cells carry a float32 state (float32 outputs), RNNs and the fused LSTM layer the lower dtype."""
    build, shape = _RNNS[name]
    torch.manual_seed(0)
    tm, em = build(torch.nn), build(ember.nn)
    _copy_weights(em, tm)
    x, g = _a(*shape), _a(*shape[:-1], 1, seed=1)
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        xt = lib.tensor(x, requires_grad=True)
        with lib.autocast("cpu"):
            outs = _flat(m(xt))
        (outs[0].float() * lib.tensor(g)).sum().backward()
        res.append((outs, xt.grad, m.weight_hh_l0.grad if hasattr(m, "weight_hh_l0") else m.weight_hh.grad))
    for e, t in zip(res[0][0], res[1][0]):
        _close(e, t)
    _close(res[0][1], res[1][1], tol=5e-2)
    _close(res[0][2], res[1][2], tol=5e-2)


def test_gru_under_autocast_with_given_state_and_packed_input():
    torch.manual_seed(0)
    tm, em = torch.nn.GRU(4, 6), ember.nn.GRU(4, 6)
    _copy_weights(em, tm)
    x, h0 = _a(5, 3, 4), _a(1, 3, 6, seed=2)
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        packed = lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(x), [5, 3, 2])
        with lib.autocast("cpu"):
            out, hn = m(packed, lib.tensor(h0))
        res.append((out.data, hn))
    for e, t in zip(*res):
        _close(e, t)


# -- whole models: output and gradient dtypes, losses within bfloat16 tolerance ---------------------------------------
def _attention_block(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.qkv, self.proj = nn.LayerNorm(16), nn.Linear(16, 48), nn.Linear(16, 16)
            self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))

        def forward(self, x):
            q, k, v = (t.view(2, 5, 2, 8).transpose(1, 2) for t in self.qkv(self.ln(x)).split(16, -1))
            a = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(2, 5, 16))
            return x + self.mlp(self.ln(x))
    return Block()


_MODELS = {
    "attention_block": (_attention_block, (2, 5, 16)),
    "conv_bn": (lambda lib: lib.nn.Sequential(
        lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.BatchNorm2d(8), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
        lib.nn.Conv2d(8, 4, 3), lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten(), lib.nn.Linear(4, 3)), (2, 3, 8, 8)),
    "encoder_layer": (lambda lib: lib.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True),
                      (2, 5, 16)),
    "mha_gru_head": (lambda lib: lib.nn.Sequential(lib.nn.Linear(16, 8), lib.nn.GRU(8, 8, batch_first=True)),
                     (2, 5, 16)),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(_MODELS))
def test_models_under_autocast_vs_torch(name, dtype):
    build, shape = _MODELS[name]
    torch.manual_seed(0)
    tm, em = build(torch), build(ember)
    _copy_weights(em, tm)
    x = _a(*shape)
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            y = m(lib.tensor(x))
            y = y[0] if isinstance(y, tuple) else y
            loss = y.float().pow(2).mean()
        loss.backward()
        res.append((y, loss, [p.grad for p in m.parameters()]))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])
    for e, t in zip(res[0][2], res[1][2]):
        assert e.dtype is ember.float32 and t.dtype is torch.float32
        _close(e, t, tol=6e-2)


# -- bfloat16/float16 fused arithmetic: computed in float32, rounded once ------------------------------------------
_FUSED = {
    "add_alpha": lambda lib, a, b, c: a.add(b, alpha=0.3),
    "sub_alpha": lambda lib, a, b, c: lib.sub(a, b, alpha=0.9),
    "add_alpha_inplace": lambda lib, a, b, c: a.clone().add_(b, alpha=-0.01),
    "addcmul": lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.1),
    "addcmul_value_1": lambda lib, a, b, c: a.addcmul(b, c),
    "addcmul_inplace": lambda lib, a, b, c: a.clone().addcmul_(b, b, value=0.999),
    "addcdiv": lambda lib, a, b, c: lib.addcdiv(a, b, c.abs() + 1, value=-0.3),
    "addcdiv_inplace": lambda lib, a, b, c: a.clone().addcdiv_(b, c.abs().sqrt() + 1e-3, value=0.01),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(_FUSED))
def test_half_fused_arithmetic_bit_for_bit(name, dtype):
    arrays = [_a(64, 96, seed=s) for s in range(3)]
    e, t = (_FUSED[name](lib, *(lib.tensor(a).to(getattr(lib, dtype)) for a in arrays)) for lib in (ember, torch))
    _bits(e, t)


def test_add_alpha_gradients_and_mixed_half_dtypes():
    a, b, g = _a(64), _a(64, seed=1), _a(64, seed=2)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(a).bfloat16().requires_grad_()
        y = lib.tensor(b).bfloat16().requires_grad_()
        out = x.add(y, alpha=0.3)
        out.backward(lib.tensor(g).bfloat16())
        res.append((out, x.grad, y.grad))
    for e, t in zip(res[0][:2], res[1][:2]):
        _bits(e, t)
    _close(res[0][2], res[1][2], tol=8e-3)
    with pytest.raises(RuntimeError, match="Boolean alpha"):
        ember.ones(2).bfloat16().add(ember.ones(2).bfloat16(), alpha=True)


# -- models cast to half precision trained with an optimizer --------------------------------------------------------
_OPTIMIZERS = {
    "sgd_nesterov_wd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.05),
    "adamw": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2),
}


@pytest.mark.parametrize("opt,cast", [(o, c) for o in sorted(_OPTIMIZERS) for c in ("bfloat16", "to_bfloat16", "half")
                                       if c != "half" or o.startswith("sgd")])  # Adam's eps underflows in float16
def test_half_parameters_stepped_by_optimizers(opt, cast):
    w, grads = _a(64, 96), [_a(64, 96, seed=s) for s in (1, 2, 3)]
    res = []
    for lib in (ember, torch):
        m = lib.nn.Linear(96, 64, bias=False)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        m = {"bfloat16": m.bfloat16, "half": m.half, "to_bfloat16": lambda: m.to(lib.bfloat16)}[cast]()
        o = _OPTIMIZERS[opt](lib, m.parameters())
        steps = []
        for g in grads:
            m.weight.grad = lib.tensor(g).to(m.weight.dtype)
            o.step()
            steps.append(m.weight.detach().clone())
        res.append((steps, list(o.state[m.weight].values())))
    check = _bits if opt.startswith("sgd") else lambda e, t: _close(e, t, tol=1e-2)
    for e, t in zip(res[0][0], res[1][0]):
        check(e, t)
    for e, t in zip(res[0][1], res[1][1]):
        if hasattr(t, "dtype"):
            check(e, t)


def test_half_model_gradients_bit_for_bit():
    x, y = _a(16, 8), _a(16, 2, seed=1)
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    em = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 2))
    _copy_weights(em, tm)
    out = []
    for lib, m in ((ember, em.bfloat16()), (torch, tm.bfloat16())):
        loss = lib.nn.functional.mse_loss(m(lib.tensor(x).bfloat16()), lib.tensor(y).bfloat16())
        loss.backward()
        out.append([loss] + [p.grad for p in m.parameters()])
    for e, t in zip(*out):
        _bits(e, t)
