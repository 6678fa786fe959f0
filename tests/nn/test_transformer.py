"""Transformer layers, stacks and the full model against torch: outputs and gradients of inputs and every parameter
(eval mode, random output gradients) for each mask kind, norm_first, activations and batch_first."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched", "ignore:enable_nested_tensor is True")
S, T, B, D = 5, 4, 3, 8
BASE = dict(d_model=D, nhead=2, dim_feedforward=16, dropout=0.1)
KPM = RNG.random((B, S)) > 0.7
KPM[:, 0] = False
TGT_KPM = RNG.random((B, T)) > 0.7
TGT_KPM[:, 0] = False


def _causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


def _randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _close(e, t, atol=3e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=atol)


def _pair(kind, *args, **kw):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor notices
        tm = getattr(torch.nn, kind)(*args, **kw).eval()
        em = getattr(ember.nn, kind)(*args, **kw).eval()
    em.load_state_dict(tm.state_dict())
    return tm, em


def _compare(tm, em, shapes, fkw):
    arrays = [_randn(*s) for s in shapes]
    ta = [torch.tensor(a, requires_grad=True) for a in arrays]
    ea = [ember.tensor(a, requires_grad=True) for a in arrays]
    tf = {n: torch.tensor(a) if isinstance(a, np.ndarray) else a for n, a in fkw.items()}
    ef = {n: ember.tensor(a) if isinstance(a, np.ndarray) else a for n, a in fkw.items()}
    to, eo = tm(*ta, **tf), em(*ea, **ef)
    assert tuple(eo.shape) == tuple(to.shape)
    _close(eo, to)
    g = _randn(*to.shape)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    for a, b in zip(ea, ta):
        _close(a.grad, b.grad)
    tp = dict(tm.named_parameters())
    names = [n for n, _ in em.named_parameters()]
    assert names == list(tp)
    for name, p in em.named_parameters():
        _close(p.grad, tp[name].grad)


ENCODER_CASES = {
    "default": ({}, {}),
    "norm_first_gelu_kpm": (dict(norm_first=True, activation="gelu", batch_first=True),
                            dict(src_key_padding_mask=KPM)),
    "causal_float_mask_no_bias": (dict(bias=False), dict(src_mask=_causal(S), is_causal=True)),
    "bool_mask_and_kpm": ({}, dict(src_mask=RNG.random((S, S)) > 0.8, src_key_padding_mask=KPM)),
    "3d_mask": (dict(batch_first=True), dict(src_mask=_randn(B * 2, S, S))),
    "callable_activation": (dict(activation=torch.tanh), {}),
}


@pytest.mark.parametrize("case", list(ENCODER_CASES))
def test_encoder_layer(case):
    kw, fkw = ENCODER_CASES[case]
    ekw = dict(kw, activation=ember.tanh) if kw.get("activation") is torch.tanh else kw
    torch.manual_seed(0)
    tm = torch.nn.TransformerEncoderLayer(**BASE, **kw).eval()
    em = ember.nn.TransformerEncoderLayer(**BASE, **ekw).eval()
    em.load_state_dict(tm.state_dict())
    _compare(tm, em, [(B, S, D) if kw.get("batch_first") else (S, B, D)], fkw)


DECODER_CASES = {
    "default": ({}, {}),
    "bool_tgt_mask_memory_kpm": ({}, dict(tgt_mask=np.triu(np.ones((T, T), bool), 1), memory_key_padding_mask=KPM)),
    "norm_first_causal": (dict(norm_first=True, batch_first=True), dict(tgt_mask=_causal(T), tgt_is_causal=True)),
    "all_masks_gelu": (dict(activation="gelu"), dict(tgt_mask=_causal(T), memory_mask=RNG.random((T, S)) > 0.8,
                                                     tgt_key_padding_mask=TGT_KPM, memory_key_padding_mask=KPM)),
}


@pytest.mark.parametrize("case", list(DECODER_CASES))
def test_decoder_layer(case):
    kw, fkw = DECODER_CASES[case]
    tm, em = _pair("TransformerDecoderLayer", **BASE, **kw)
    bf = kw.get("batch_first")
    _compare(tm, em, [(B, T, D) if bf else (T, B, D), (B, S, D) if bf else (S, B, D)], fkw)


def test_encoder_decoder_stacks():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**BASE), 2, torch.nn.LayerNorm(D)).eval()
    em = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(**BASE), 2, ember.nn.LayerNorm(D)).eval()
    em.load_state_dict(tm.state_dict())
    _compare(tm, em, [(S, B, D)], dict(mask=_causal(S), src_key_padding_mask=KPM))  # causal mask detected
    torch.manual_seed(0)
    tm = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(**BASE, norm_first=True), 2).eval()
    em = ember.nn.TransformerDecoder(ember.nn.TransformerDecoderLayer(**BASE, norm_first=True), 2).eval()
    em.load_state_dict(tm.state_dict())
    _compare(tm, em, [(T, B, D), (S, B, D)], dict(tgt_mask=_causal(T), memory_key_padding_mask=KPM))


TRANSFORMER_CASES = {
    "masks": (dict(num_encoder_layers=2, num_decoder_layers=2),
              dict(src_key_padding_mask=KPM, tgt_mask=_causal(T), memory_key_padding_mask=KPM,
                   tgt_key_padding_mask=TGT_KPM)),
    "batch_first_norm_first_gelu": (dict(num_encoder_layers=1, num_decoder_layers=1, batch_first=True,
                                         norm_first=True, activation="gelu"),
                                    dict(src_mask=RNG.random((S, S)) > 0.8, memory_mask=_randn(T, S))),
    "no_bias_causal_hint": (dict(num_encoder_layers=1, num_decoder_layers=1, bias=False),
                            dict(tgt_mask=_causal(T), tgt_is_causal=True)),
}


@pytest.mark.parametrize("case", list(TRANSFORMER_CASES))
def test_transformer(case):
    kw, fkw = TRANSFORMER_CASES[case]
    tm, em = _pair("Transformer", **BASE, **kw)
    bf = kw.get("batch_first")
    _compare(tm, em, [(B, S, D) if bf else (S, B, D), (B, T, D) if bf else (T, B, D)], fkw)


def test_transformer_unbatched():
    tm, em = _pair("Transformer", **BASE, num_encoder_layers=1, num_decoder_layers=1)
    _compare(tm, em, [(S, D), (T, D)], dict(tgt_mask=_causal(T)))


def test_square_subsequent_mask():
    for n in (1, 4):
        e = ember.nn.Transformer.generate_square_subsequent_mask(n)
        t = torch.nn.Transformer.generate_square_subsequent_mask(n)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64).dtype is ember.float64


def test_structure_init_repr():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(**BASE, num_encoder_layers=2, num_decoder_layers=1)
    em = ember.nn.Transformer(**BASE, num_encoder_layers=2, num_decoder_layers=1)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert repr(em).replace("ember", "torch") == repr(tm)
    # layers are independent copies; matrices xavier-initialised
    layers = em.encoder.layers
    assert layers[0].linear1.weight is not layers[1].linear1.weight
    w = em.encoder.layers[0].linear1.weight
    assert float(w.abs().max()) <= (6 / sum(w.shape)) ** 0.5
    assert em.encoder.layers[0].activation_relu_or_gelu == 1
    assert ember.nn.TransformerEncoderLayer(**BASE, activation="gelu").activation_relu_or_gelu == 2


def test_train_mode_dropout_and_warnings():
    em = ember.nn.TransformerEncoderLayer(**dict(BASE, dropout=0.5))
    x = ember.randn(S, B, D)
    assert not np.allclose(em(x).detach().numpy(), em(x).detach().numpy())
    em.eval()
    np.testing.assert_array_equal(em(x).detach().numpy(), em(x).detach().numpy())
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False"):
        enc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(**BASE), 1)
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True


def test_errors():
    em = ember.nn.Transformer(**BASE, num_encoder_layers=1, num_decoder_layers=1)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        em(ember.randn(S, B, D), ember.randn(T, B + 1, D))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        em(ember.randn(S, B, D + 1), ember.randn(T, B, D + 1))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        ember.nn.TransformerEncoderLayer(**BASE, activation="tanh")
    with pytest.raises(AssertionError, match="only bool and floating types of src_key_padding_mask"):
        layer = ember.nn.TransformerEncoderLayer(**BASE)
        layer(ember.randn(S, B, D), src_key_padding_mask=ember.zeros(B, S, dtype=ember.int64))


@pytest.mark.parametrize("name", ["ember.nn.modules.transformer"])
def test_docstring_examples(name):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name), globs={"ember": ember},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("case", ["inference", "grad enabled", "train", "not left-aligned", "with mask",
                                  "norm_first"])
def test_encoder_stack_pads_like_torchs_nested_path(case):
    """torch runs an inference call with a key padding mask on nested tensors: padded positions come out zero
    (before the final norm); otherwise they hold computed values."""
    layer_kw = dict(BASE, batch_first=True, dropout=0.0, norm_first=case == "norm_first")
    t_layer, e_layer = _pair("TransformerEncoderLayer", **layer_kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.TransformerEncoder(t_layer, 2, norm=torch.nn.LayerNorm(D)).eval()
        em = ember.nn.TransformerEncoder(e_layer, 2, norm=ember.nn.LayerNorm(D)).eval()
    em.load_state_dict(tm.state_dict())
    if case == "train":
        tm.train(), em.train()
    kpm = np.zeros((B, S), bool)
    kpm[1, 2:] = True
    if case == "not left-aligned":
        kpm[2, 1] = True
    x = _randn(B, S, D)
    mask = _causal(S) if case == "with mask" else None

    def run(m, model):
        args = dict(src_key_padding_mask=m.tensor(kpm), mask=None if mask is None else m.tensor(mask))
        if case == "grad enabled":
            return model(m.tensor(x, requires_grad=True), **args)
        with m.no_grad():
            return model(m.tensor(x), **args)
    yt, ye = run(torch, tm), run(ember, em)
    _close(ye, yt)
    with torch.no_grad():
        padded_as_zeros = bool((yt[1, 2:] == tm.norm(torch.zeros(D))).all())
    assert padded_as_zeros == (case == "inference")
