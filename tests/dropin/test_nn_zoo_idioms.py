"""The nn layer zoo with the unusual arguments real code passes: every common module and its functional form, forward
and backward against torch from the same weights, state_dict keys, and the errors of bad shapes."""
import copy

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().float().numpy() if t.dtype is not torch.bfloat16 else t.detach().float().numpy()


def _flat(o):
    if isinstance(o, (list, tuple)):
        return [y for x in o for y in _flat(x)]
    return [] if o is None else [o]


def _lib(t):
    return ember if isinstance(t, ember.Tensor) else torch


def _run(make, inputs, fwd=None, train=False, grad=True, rtol=1e-5, atol=1e-6):
    """Builds ``make(lib)`` in both libraries (ember loads torch's state_dict), runs ``fwd(module, *inputs)`` and a
    backward with a random output gradient; compares outputs, input and parameter gradients and the state_dicts."""
    torch.manual_seed(0)
    mods = {torch: make(torch), ember: make(ember)}
    tm, em = mods[torch], mods[ember]
    if isinstance(tm, torch.nn.Module):
        em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
        assert list(em.state_dict()) == list(tm.state_dict())
        tm.train(train), em.train(train)
    res = {}
    for lib in (ember, torch):
        m = mods[lib]
        xs = [lib.tensor(a) for a in inputs]
        for x in xs:
            if grad and x.dtype.is_floating_point:
                x.requires_grad_()
        out = _flat(fwd(m, *xs) if fwd else m(*xs))
        grads = []
        if grad:
            rng = np.random.default_rng(5)
            ys = [y for y in out if y.requires_grad]
            lib.autograd.backward(ys, [lib.tensor(rng.standard_normal(tuple(y.shape)).astype(np.float32)).to(y.dtype)
                                       for y in ys])
            grads = [x.grad for x in xs if x.dtype.is_floating_point]
            grads += list(m.parameters()) if isinstance(m, lib.nn.Module) else []
            grads = [g.grad if isinstance(g, lib.nn.Parameter) else g for g in grads]
        res[lib] = out, grads
    (eo, eg), (to, tg) = res[ember], res[torch]
    assert len(eo) == len(to)
    for e, t in zip(eo, to):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:], (e.shape, t.shape)
        np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(_np(e), _np(t), rtol=rtol * 10, atol=atol * 10)
    if isinstance(tm, torch.nn.Module):
        for k, v in tm.state_dict().items():
            np.testing.assert_allclose(_np(em.state_dict()[k]), _np(v), rtol=rtol, atol=atol)


def _rn(*s, seed=0):
    return np.random.default_rng(seed + sum(s)).standard_normal(s).astype(np.float32)


def _raises(f):
    """Both libraries raise, the same exception type."""
    types = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            f(lib)
        types.append(type(info.value))
    assert types[0] is types[1], types


# -- convolutions ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, shape", [
    (lambda l: l.nn.Conv1d(3, 4, 4, padding="same", dilation=2), (2, 3, 11)),
    (lambda l: l.nn.Conv1d(3, 4, 3, padding="valid", stride=2, bias=False), (2, 3, 11)),
    (lambda l: l.nn.Conv2d(4, 6, (3, 5), padding=(1, 2), padding_mode="reflect", stride=(2, 1), groups=2), (2, 4, 9, 10)),
    (lambda l: l.nn.Conv2d(4, 6, (3, 5), padding=(1, 2), padding_mode="circular", groups=2), (2, 4, 9, 10)),
    (lambda l: l.nn.Conv2d(3, 3, (2, 4), padding="same", padding_mode="replicate"), (2, 3, 7, 8)),
    (lambda l: l.nn.Conv2d(4, 8, 3, groups=4, padding=1), (2, 4, 7, 7)),
    (lambda l: l.nn.Conv2d(4, 8, 3), (4, 7, 7)),
    (lambda l: l.nn.Conv3d(2, 4, (1, 3, 2), stride=(1, 2, 2), dilation=(2, 1, 1), groups=2), (2, 2, 5, 7, 6)),
    (lambda l: l.nn.Conv3d(2, 3, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 6, 4)),
    (lambda l: l.nn.ConvTranspose2d(4, 6, (3, 4), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2),
     (2, 4, 5, 6)),
    (lambda l: l.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, dilation=2, bias=False), (2, 4, 5, 6)),
    (lambda l: l.nn.ConvTranspose1d(3, 2, 5, stride=3, output_padding=2), (2, 3, 5)),
    (lambda l: l.nn.ConvTranspose3d(2, 2, 3, stride=2, output_padding=1, groups=2), (1, 2, 3, 4, 3)),
])
def test_conv_variants(make, shape):
    _run(make, [_rn(*shape)])


def test_conv_transpose_output_size():
    _run(lambda l: l.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), [_rn(1, 3, 5, 5)],
         fwd=lambda m, x: m(x, output_size=[10, 10]))


@pytest.mark.parametrize("f", [
    lambda l: l.nn.Conv2d(3, 3, 3, padding="same", stride=2),
    lambda l: l.nn.Conv2d(3, 3, 3, padding="full"),
    lambda l: l.nn.Conv2d(3, 4, 3, groups=2),
    lambda l: l.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
    lambda l: l.nn.Conv2d(3, 4, 3)(l.zeros(1, 4, 5, 5)),
    lambda l: l.nn.Conv2d(3, 4, 5)(l.zeros(1, 3, 3, 3)),
    lambda l: l.nn.Conv2d(3, 4, 3)(l.zeros(1, 3, 5, 5, dtype=l.float64)),
    lambda l: l.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=2)(l.zeros(1, 3, 4, 4)),
    lambda l: l.nn.Conv1d(3, 4, 3, padding=5, padding_mode="reflect")(l.zeros(1, 3, 4)),
])
def test_conv_errors(f):
    _raises(f)


# -- pooling ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, shape", [
    (lambda l: l.nn.MaxPool2d(3, 2, padding=1, ceil_mode=True), (2, 3, 9, 10)),
    (lambda l: l.nn.MaxPool2d((3, 2), (2, 1), padding=(1, 1), dilation=(2, 3), return_indices=True), (2, 3, 9, 10)),
    (lambda l: l.nn.MaxPool1d(4, 3, padding=2, ceil_mode=True, return_indices=True), (2, 3, 10)),
    (lambda l: l.nn.MaxPool3d(2, ceil_mode=True, return_indices=True), (1, 2, 5, 5, 3)),
    (lambda l: l.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (2, 3, 9, 10)),
    (lambda l: l.nn.AvgPool2d((2, 3), (1, 2), padding=(1, 1), divisor_override=5), (2, 3, 9, 10)),
    (lambda l: l.nn.AvgPool3d(2, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 5, 5, 3)),
    (lambda l: l.nn.AdaptiveAvgPool2d((None, 4)), (2, 3, 9, 10)),
    (lambda l: l.nn.AdaptiveMaxPool2d((3, None), return_indices=True), (2, 3, 9, 10)),
    (lambda l: l.nn.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 5, 5, 7)),
    (lambda l: l.nn.AdaptiveAvgPool2d(3), (3, 7, 7)),
])
def test_pool_variants(make, shape):
    _run(make, [_rn(*shape)])


@pytest.mark.parametrize("make", [lambda l: l.nn.LPPool2d(2, (3, 2), stride=2),
                                  lambda l: l.nn.LPPool2d(3, 3, stride=2, ceil_mode=True),
                                  lambda l: l.nn.LPPool1d(1.5, 3)])
def test_lp_pool(make):
    x = np.abs(_rn(2, 3, 9, 10)) + 0.1
    _run(make, [x if "2d" in repr(make(torch)).lower() else x[..., 0]])


def test_max_unpool_with_output_size():
    def fwd(m, x):
        f = _lib(x).nn.functional
        y, i = f.max_pool2d(x, 2, 2, return_indices=True)
        y1, i1 = f.max_pool1d(x.flatten(2), 3, 2, return_indices=True)
        return f.max_unpool2d(y, i, 2, 2, output_size=(9, 11)), _lib(x).nn.MaxUnpool1d(3, 2)(y1, i1)
    _run(lambda l: None, [_rn(2, 3, 9, 11)], fwd=fwd)


def test_fractional_max_pool_shapes_and_validity():
    for lib in (ember, torch):
        x = lib.tensor(_rn(2, 3, 9, 10), requires_grad=True)
        y, i = lib.nn.FractionalMaxPool2d(3, output_size=(5, 6), return_indices=True)(x)
        assert tuple(y.shape) == (2, 3, 5, 6) and i.dtype == lib.int64
        assert bool((x.flatten(2).gather(2, i.flatten(2)) == y.flatten(2)).all())
        y.backward(lib.ones_like(y))
        assert x.grad.sum().item() == 180
        assert tuple(lib.nn.FractionalMaxPool2d(2, output_ratio=0.5)(x).shape) == (2, 3, 4, 5)
        assert tuple(lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0.7))(lib.randn(1, 2, 8, 8, 10)).shape) == \
            (1, 2, 4, 4, 7)
    for f in (lambda l: l.nn.FractionalMaxPool2d(3), lambda l: l.nn.FractionalMaxPool2d(3, output_ratio=1.5),
              lambda l: l.nn.MaxPool2d(2, padding=2)(l.zeros(1, 1, 5, 5)),
              lambda l: l.nn.AvgPool2d(4)(l.zeros(1, 1, 3, 3))):
        _raises(f)


# -- recurrent -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_rnn_bidirectional_stacked_with_initial_state(cls):
    make = lambda l: getattr(l.nn, cls)(5, 6, num_layers=2, bidirectional=True, batch_first=True, dropout=0.3)
    _run(make, [_rn(3, 4, 5)], rtol=1e-4, atol=1e-5)
    if cls == "LSTM":
        _run(lambda l: l.nn.LSTM(5, 6, num_layers=2, bidirectional=True), [_rn(4, 3, 5), _rn(4, 3, 6), _rn(4, 3, 6, seed=1)],
             fwd=lambda m, x, h, c: m(x, (h, c)), rtol=1e-4, atol=1e-5)
    else:
        _run(lambda l: getattr(l.nn, cls)(5, 6, bias=False), [_rn(4, 3, 5), _rn(1, 3, 6)], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [lambda l: l.nn.GRU(5, 6, num_layers=2, bidirectional=True, batch_first=True),
                                  lambda l: l.nn.LSTM(5, 6, proj_size=2, bidirectional=True, batch_first=True),
                                  lambda l: l.nn.RNN(5, 6, nonlinearity="relu", batch_first=True)])
def test_rnn_packed_unsorted(make):
    def fwd(m, x):
        P = _lib(x).nn.utils.rnn
        p = P.pack_padded_sequence(x, _lib(x).tensor([4, 2, 3]), batch_first=True, enforce_sorted=False)
        out, h = m(p)
        o, lengths = P.pad_packed_sequence(out, batch_first=True, total_length=5)
        return o, lengths, h, p.batch_sizes, p.sorted_indices, p.unsorted_indices
    _run(make, [_rn(3, 4, 5)], fwd=fwd, rtol=1e-4, atol=1e-5)


def test_pack_sequence_and_pad_sequence():
    def fwd(m, a, b, c):
        P = _lib(a).nn.utils.rnn
        out, h = m(P.pack_sequence([a, b, c], enforce_sorted=False))
        return P.pad_packed_sequence(out, padding_value=-1.0), h, P.pad_sequence([a, b, c], True, 2.0)
    _run(lambda l: l.nn.GRU(5, 4), [_rn(2, 5), _rn(4, 5), _rn(3, 5)], fwd=fwd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_rnn_cells(cls):
    _run(lambda l: getattr(l.nn, cls)(5, 6), [_rn(3, 5)])
    _run(lambda l: getattr(l.nn, cls)(5, 6, bias=False), [_rn(5)])


def test_lstm_proj_state_dict_keys():
    for lib in (ember, torch):
        m = lib.nn.LSTM(5, 6, num_layers=2, proj_size=3, bidirectional=True)
        assert list(m.state_dict())[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
        assert [tuple(p.shape) for p in m.parameters()][10:15] == [(24, 6), (24, 3), (24,), (24,), (3, 6)]


@pytest.mark.parametrize("f", [
    lambda l: l.nn.LSTM(5, 6)(l.zeros(3, 2, 4)),
    lambda l: l.nn.LSTM(5, 6)(l.zeros(3, 2, 5), (l.zeros(1, 3, 6), l.zeros(1, 3, 6))),
    lambda l: l.nn.GRU(5, 6)(l.zeros(3, 2, 5), l.zeros(2, 2, 6)),
    lambda l: l.nn.LSTM(5, 6, proj_size=6),
    lambda l: l.nn.utils.rnn.pack_padded_sequence(l.zeros(4, 3, 5), [2, 4, 3]),
    lambda l: l.nn.GRUCell(5, 6)(l.zeros(3, 5), l.zeros(2, 6)),
])
def test_rnn_errors(f):
    _raises(f)


# -- attention and transformers --------------------------------------------------------------------------------------
_T = dict(rtol=1e-4, atol=1e-5)


def test_mha_kdim_vdim_bias_kv_zero_attn_masks():
    kpm = np.array([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 0, 1]], bool)
    mask = np.random.default_rng(0).random((5, 7)) > 0.7

    def fwd(m, q, k, v):
        lib = _lib(q)
        return m(q, k, v, key_padding_mask=lib.tensor(kpm), attn_mask=lib.tensor(mask), average_attn_weights=False)
    _run(lambda l: l.nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=4),
         [_rn(5, 2, 8), _rn(7, 2, 6), _rn(7, 2, 4)], fwd=fwd, **_T)
    keys = [list(lib.nn.MultiheadAttention(8, 2, kdim=6, vdim=4, add_bias_kv=True).state_dict()) for lib in (ember, torch)]
    assert keys[0] == keys[1]


def test_mha_batch_first_3d_float_mask_and_unbatched():
    _run(lambda l: l.nn.MultiheadAttention(8, 2, batch_first=True), [_rn(2, 5, 8), _rn(2, 7, 8), _rn(2, 7, 8), _rn(4, 5, 7)],
         fwd=lambda m, q, k, v, mask: m(q, k, v, attn_mask=mask), **_T)
    _run(lambda l: l.nn.MultiheadAttention(8, 2, bias=False), [_rn(5, 8), _rn(7, 8), _rn(7, 8)],
         fwd=lambda m, q, k, v: m(q, k, v, need_weights=False), **_T)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_layers_masks_and_callable_activation(norm_first):
    kpm = [[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]]
    _run(lambda l: l.nn.TransformerEncoderLayer(8, 2, 16, norm_first=norm_first, activation=l.nn.functional.gelu,
                                                batch_first=True), [_rn(2, 5, 8)],
         fwd=lambda m, x: m(x, src_key_padding_mask=_lib(x).tensor(kpm, dtype=_lib(x).bool)), **_T)

    def dec(m, t, mem):
        lib = _lib(t)
        return m(t, mem, tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(5), tgt_is_causal=True,
                 memory_key_padding_mask=lib.tensor([[0, 0, 0, 0, 1, 1], [0] * 6], dtype=lib.bool))
    _run(lambda l: l.nn.TransformerDecoderLayer(8, 2, 16, norm_first=norm_first, activation="gelu", bias=False,
                                                layer_norm_eps=1e-6), [_rn(5, 2, 8), _rn(6, 2, 8)], fwd=dec, **_T)


def test_transformer_encoder_float_padding_mask_and_inference_fast_path():
    make = lambda l: l.nn.TransformerEncoder(l.nn.TransformerEncoderLayer(8, 2, 16, activation=l.nn.GELU()), 2,
                                             norm=l.nn.LayerNorm(8), enable_nested_tensor=False)
    _run(make, [_rn(5, 2, 8)], fwd=lambda m, x: m(x, src_key_padding_mask=_lib(x).tensor(
        [[0, 0, 0, float("-inf"), float("-inf")], [0] * 5])), **_T)

    def nograd(m, x):  # eval + no_grad: the padded positions come back as zeros
        with _lib(x).no_grad():
            return m(x, src_key_padding_mask=_lib(x).tensor([[0, 0, 0, 1, 1], [0] * 5], dtype=_lib(x).bool))
    _run(lambda l: l.nn.TransformerEncoder(l.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2), [_rn(2, 5, 8)],
         fwd=nograd, grad=False, **_T)


def test_generate_square_subsequent_mask_dtypes():
    for dt in ("float32", "float64", "bfloat16"):
        e = ember.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(ember, dt))
        t = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(torch, dt))
        assert str(e.dtype)[6:] == str(t.dtype)[6:]
        np.testing.assert_array_equal(_np(e), _np(t))


@pytest.mark.parametrize("f", [
    lambda l: l.nn.MultiheadAttention(10, 3),
    lambda l: l.nn.MultiheadAttention(8, 2)(l.zeros(5, 2, 8), l.zeros(5, 2, 8), l.zeros(5, 2, 8), attn_mask=l.zeros(4, 4)),
    lambda l: l.nn.MultiheadAttention(8, 2)(l.zeros(5, 2, 8), l.zeros(5, 2, 8), l.zeros(5, 2, 8),
                                            attn_mask=l.zeros(3, 5, 5)),
    lambda l: l.nn.MultiheadAttention(8, 2)(l.zeros(5, 2, 8), l.zeros(5, 2, 8), l.zeros(5, 2, 8), is_causal=True),
])
def test_attention_errors(f):
    _raises(f)


# -- embeddings ------------------------------------------------------------------------------------------------------
_IDX = np.array([[1, 2, 0, 5], [5, 5, 0, 3]])
_BAG, _OFFS = np.array([1, 2, 4, 5, 4, 3, 2, 6]), np.array([0, 3, 3, 6])


@pytest.mark.parametrize("make", [
    lambda l: l.nn.Embedding(7, 4, padding_idx=-2),
    lambda l: l.nn.Embedding(7, 4, scale_grad_by_freq=True, padding_idx=0),
    lambda l: l.nn.Embedding(7, 4, max_norm=0.5, norm_type=1.0, padding_idx=2),
])
def test_embedding_options(make):
    _run(make, [_IDX])


def test_embedding_max_norm_renormalizes_weight_in_place():
    w = _rn(7, 4) * 3
    for lib in (ember, torch):
        weight = lib.tensor(w)
        out = lib.nn.functional.embedding(lib.tensor([1, 1, 3]), weight, max_norm=1.0, norm_type=1.5)
        assert weight._version == 1
        n = weight.norm(p=1.5, dim=1).numpy()
        np.testing.assert_allclose(n[[1, 3]], [1, 1], rtol=1e-4)
        np.testing.assert_allclose(n[[0, 2]], np.linalg.norm(w[[0, 2]], 1.5, axis=1), rtol=1e-6)
        np.testing.assert_allclose(out.numpy(), weight.numpy()[[1, 1, 3]])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_modes(mode):
    _run(lambda l: l.nn.EmbeddingBag(7, 4, mode=mode), [_BAG, _OFFS])
    _run(lambda l: l.nn.EmbeddingBag(7, 4, mode=mode, padding_idx=4), [_IDX])
    _run(lambda l: l.nn.EmbeddingBag(7, 4, mode=mode, include_last_offset=True, padding_idx=2),
         [_BAG, np.array([0, 3, 3, 6, 8])])


def test_embedding_bag_per_sample_weights():
    _run(lambda l: l.nn.EmbeddingBag(7, 4, mode="sum", include_last_offset=True), [_BAG, np.array([0, 3, 3, 8]), _rn(8)],
         fwd=lambda m, i, o, w: m(i, o, per_sample_weights=w))
    _raises(lambda l: l.nn.EmbeddingBag(7, 4, mode="mean")(l.tensor(_BAG), l.tensor(_OFFS), per_sample_weights=l.ones(8)))
    _raises(lambda l: l.nn.EmbeddingBag(7, 4)(l.tensor(_IDX), l.tensor([0, 1])))
    _raises(lambda l: l.nn.Embedding(7, 4)(l.tensor([7])))


# -- normalization ---------------------------------------------------------------------------------------------------
def _steps(m, x):
    """Three training steps on shifted batches, then one in eval mode."""
    outs = [m(x * (s + 1) + s) for s in range(3)]
    m.eval()
    return outs + [m(x)]


@pytest.mark.parametrize("make, shape", [
    (lambda l: l.nn.BatchNorm2d(6, momentum=None), (4, 6, 5, 3)),
    (lambda l: l.nn.BatchNorm2d(6, track_running_stats=False), (4, 6, 5, 3)),
    (lambda l: l.nn.BatchNorm1d(6, affine=False, momentum=0.3, eps=1e-3), (5, 6, 4)),
    (lambda l: l.nn.InstanceNorm2d(6, track_running_stats=True, affine=True), (4, 6, 5, 3)),
    (lambda l: l.nn.InstanceNorm1d(6, momentum=None, track_running_stats=True), (3, 6, 7)),
])
def test_running_stats_norms(make, shape):
    _run(make, [_rn(*shape)], fwd=_steps, train=True)


@pytest.mark.parametrize("make, shape", [
    (lambda l: l.nn.LayerNorm([5, 3], elementwise_affine=False), (4, 6, 5, 3)),
    (lambda l: l.nn.LayerNorm(3, bias=False, eps=1e-3), (4, 6, 5, 3)),
    (lambda l: l.nn.GroupNorm(3, 6), (4, 6, 5, 3)),
    (lambda l: l.nn.GroupNorm(2, 6, affine=False), (3, 6)),
    (lambda l: l.nn.InstanceNorm1d(6, affine=True), (6, 7)),
    (lambda l: l.nn.LocalResponseNorm(3, alpha=1e-2, beta=0.6, k=1.5), (4, 6, 5, 3)),
    (lambda l: l.nn.LocalResponseNorm(4), (2, 6, 3, 4, 3)),
    (lambda l: l.nn.RMSNorm([5, 3], eps=1e-5), (4, 6, 5, 3)),
    (lambda l: l.nn.RMSNorm(3, elementwise_affine=False), (4, 6, 5, 3)),
])
def test_stateless_norms(make, shape):
    _run(make, [_rn(*shape)])


@pytest.mark.parametrize("f", [
    lambda l: l.nn.BatchNorm1d(6)(l.zeros(1, 6)),
    lambda l: l.nn.BatchNorm2d(6)(l.zeros(2, 5, 3, 3)),
    lambda l: l.nn.GroupNorm(4, 6),
    lambda l: l.nn.LayerNorm(4)(l.zeros(2, 3)),
    lambda l: l.nn.InstanceNorm1d(6)(l.zeros(2, 6, 1)),
])
def test_norm_errors(f):
    _raises(f)


# -- activations -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda l: l.nn.ReLU6(inplace=True), lambda l: l.nn.LeakyReLU(0.2, inplace=True),
    lambda l: l.nn.ELU(alpha=0.7, inplace=True), lambda l: l.nn.CELU(alpha=1.5, inplace=True),
    lambda l: l.nn.Hardtanh(-0.5, 2.0, inplace=True), lambda l: l.nn.Hardswish(inplace=True),
    lambda l: l.nn.Threshold(0.3, -2.0, inplace=True), lambda l: l.nn.RReLU(0.1, 0.3, inplace=True),
    lambda l: l.nn.Softplus(beta=2.0, threshold=3.0), lambda l: l.nn.GLU(dim=1), lambda l: l.nn.PReLU(4, init=0.1),
    lambda l: l.nn.Softmin(dim=1), lambda l: l.nn.GELU(approximate="tanh"),
])
def test_activation_inplace_and_parameters(make):
    _run(make, [_rn(3, 4, 6) * 3], fwd=lambda m, x: (lambda y: (m(y), y))(x * 1.0))


def test_rrelu_training_statistics():
    for lib in (ember, torch):
        x = lib.tensor(-np.ones(20000, np.float32), requires_grad=True)
        y = lib.nn.functional.rrelu(x, 0.1, 0.3, training=True)
        y.backward(lib.ones_like(y))
        slopes = -y.detach().numpy()
        assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
        np.testing.assert_array_equal(x.grad.numpy(), slopes)


@pytest.mark.parametrize("act", [lambda l, x: l.nn.functional.prelu(x, l.tensor([0.2, 0.3])),
                                 lambda l, x: l.nn.functional.hardsigmoid(x)])
def test_piecewise_activation_double_backward_reaches_input(act):
    """A create_graph gradient of a piecewise-linear activation still depends on its input (with a zero gradient)."""
    x0 = _rn(1, 2, 4, 4) * 4
    for lib in (ember, torch):
        x = lib.tensor(x0, requires_grad=True)
        g, = lib.autograd.grad(act(lib, x).sum(), x, create_graph=True)
        assert g.requires_grad
        if act(lib, x).grad_fn.name() != "HardsigmoidBackward0" or lib is ember:  # torch lacks hardsigmoid's
            gg, = lib.autograd.grad(g.pow(2).sum(), x)
            assert float(gg.abs().sum()) == 0


def test_prelu_second_order_and_errors():
    rng = np.random.default_rng(0)
    x0, v = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2, 4))
    res = []
    for lib in (ember, torch):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor([0.2, -0.7], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.prelu(x, w)
        assert y.grad_fn.name() == "PreluKernelBackward0"
        gx, gw = lib.autograd.grad((y * lib.tensor(v)).sum(), (x, w), create_graph=True)
        res.append([gx, gw, *lib.autograd.grad(gx.pow(2).sum() + gw.pow(3).sum(), (x, w))])
    for e, t in zip(*res):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    _raises(lambda l: l.nn.functional.prelu(l.randn(3, dtype=l.float64), l.tensor([0.2])))
    _raises(lambda l: l.nn.PReLU(3)(l.zeros(2, 4, 5)))


def test_prelu_module_gradient_penalty():
    def gp(m, x):
        g, = _lib(x).autograd.grad(m(x).sum(), x, create_graph=True)
        return (g.flatten(1).norm(dim=1) - 1).pow(2).mean()
    _run(lambda l: l.nn.Sequential(l.nn.Conv2d(2, 8, 3), l.nn.PixelShuffle(2), l.nn.PReLU(2), l.nn.Conv2d(2, 1, 3)),
         [_rn(3, 2, 7, 7)], fwd=gp, train=True, rtol=1e-4, atol=1e-5)


# -- dropout ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, shape", [("Dropout1d", (64, 32, 20)), ("Dropout2d", (32, 32, 4, 4)),
                                        ("Dropout3d", (8, 32, 2, 2, 2)), ("FeatureAlphaDropout", (64, 32, 4, 4)),
                                        ("AlphaDropout", (64, 32, 4, 4)), ("Dropout", (64, 32, 4, 4))])
def test_dropout_variants_shapes_and_statistics(cls, shape):
    for lib in (ember, torch):
        lib.manual_seed(0)  # the dropped fraction of 256 channels is within 0.06 of 0.25 only 97% of the time
        m = getattr(lib.nn, cls)(0.25)
        x = lib.ones(*shape)
        y = m(x)
        dropped = (y == (0 if "Alpha" not in cls else y.min())).float().mean().item()
        assert tuple(y.shape) == shape and abs(dropped - 0.25) < 0.06
        if cls not in ("Dropout", "AlphaDropout"):  # whole channels
            f = y.flatten(2)
            assert bool((f == f[:, :, :1]).all())
        if "Alpha" not in cls:
            np.testing.assert_allclose(np.unique(y.numpy()), [0, 4 / 3], rtol=1e-6)
        m.eval()
        assert bool((m(x) == x).all())


# -- shape layers ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, shape", [
    (lambda l: l.nn.PixelShuffle(3), (9, 2, 2)), (lambda l: l.nn.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda l: l.nn.Upsample(scale_factor=(2, 1.5), mode="bicubic", align_corners=False), (2, 3, 4, 6)),
    (lambda l: l.nn.Upsample(size=(7, 5), mode="nearest-exact"), (2, 3, 4, 6)),
    (lambda l: l.nn.Upsample(scale_factor=2, mode="trilinear", align_corners=True), (1, 2, 3, 4, 3)),
    (lambda l: l.nn.UpsamplingBilinear2d(size=(5, 9)), (1, 2, 3, 4)),
    (lambda l: l.nn.Fold((7, 8), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 12, 24)),
    (lambda l: l.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 2, 7, 8)),
    (lambda l: l.nn.ChannelShuffle(3), (2, 6, 2, 3)),
    (lambda l: l.nn.Flatten(-3, -1), (2, 3, 4, 5)), (lambda l: l.nn.Unflatten(1, (2, -1)), (2, 6, 4)),
    (lambda l: l.nn.Identity(3, foo=5), (2, 3)),
])
def test_shape_layers(make, shape):
    _run(make, [_rn(*shape)])


def test_bilinear_with_batch_dims():
    _run(lambda l: l.nn.Bilinear(3, 4, 5, bias=False), [_rn(2, 6, 3), _rn(2, 6, 4)])
    _raises(lambda l: l.nn.Bilinear(3, 4, 5)(l.zeros(6, 3), l.zeros(6, 3)))


@pytest.mark.parametrize("f", [
    lambda l: l.nn.PixelShuffle(2)(l.zeros(1, 6, 2, 2)),
    lambda l: l.nn.ChannelShuffle(4)(l.zeros(1, 6, 2, 2)),
    lambda l: l.nn.Unflatten(1, (4, -1))(l.zeros(2, 6)),
    lambda l: l.nn.Fold((4, 4), 2)(l.zeros(1, 8, 5)),
    lambda l: l.nn.functional.interpolate(l.zeros(1, 1, 3, 3), size=4, align_corners=True),
    lambda l: l.nn.functional.interpolate(l.zeros(1, 3, 3), size=4, mode="bilinear"),
])
def test_shape_layer_errors(f):
    _raises(f)


# -- lazy modules ----------------------------------------------------------------------------------------------------
def test_lazy_materialization():
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.LazyConv2d(8, 3, padding=1, groups=2), lib.nn.LazyBatchNorm2d(), lib.nn.Flatten(),
                              lib.nn.LazyLinear(5))
        assert type(m[0].weight).__name__ == "UninitializedParameter"
        y = m(lib.randn(2, 4, 5, 5))
        assert [type(c).__name__ for c in m] == ["Conv2d", "BatchNorm2d", "Flatten", "Linear"]
        assert tuple(m[0].weight.shape) == (8, 2, 3, 3) and m[3].in_features == 200 and tuple(y.shape) == (2, 5)


def test_lazy_uninitialized_state_dict_and_errors():
    for lib in (ember, torch):
        make = lambda: lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.LazyBatchNorm1d())
        m = make()
        sd = m.state_dict()
        assert {k: type(v).__name__ for k, v in sd.items()} == {
            "0.weight": "UninitializedParameter", "0.bias": "UninitializedParameter",
            "1.weight": "UninitializedParameter", "1.bias": "UninitializedParameter",
            "1.running_mean": "UninitializedBuffer", "1.running_var": "UninitializedBuffer",
            "1.num_batches_tracked": "Tensor"}
        m2 = make()
        m2.load_state_dict(sd)  # uninitialized into uninitialized: nothing to copy
        assert type(m2[0]).__name__ == "LazyLinear"
        m(lib.randn(4, 5))
        m3 = make()
        m3.load_state_dict(m.state_dict())
        assert type(m3[0]).__name__ == "LazyLinear" and tuple(m3[0].weight.shape) == (3, 5)
        assert type(copy.deepcopy(lib.nn.LazyLinear(3)).weight).__name__ == "UninitializedParameter"
        with pytest.raises(ValueError):
            sum(p.numel() for p in lib.nn.LazyLinear(3).parameters())
        with pytest.raises(RuntimeError):
            lib.nn.LazyLinear(3).weight.shape
        with pytest.raises(RuntimeError):  # an uninitialized tensor into an initialized one
            lib.nn.Linear(5, 3).load_state_dict(lib.nn.LazyLinear(3).state_dict())


# -- containers ------------------------------------------------------------------------------------------------------
def test_container_slicing_and_indexing():
    for lib in (ember, torch):
        s = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2), lib.nn.Tanh())
        assert type(s[1:3]).__name__ == "Sequential" and list(s[::2].state_dict()) == ["0.weight", "0.bias",
                                                                                     "2.weight", "2.bias"]
        assert type(s[-1]).__name__ == "Tanh"
        del s[0:2]
        assert [n for n, _ in s.named_children()] == ["0", "1"]
        s.insert(1, lib.nn.Sigmoid())
        assert [type(c).__name__ for c in s] == ["Linear", "Sigmoid", "Tanh"]
        with pytest.raises(IndexError):
            s[5]
        ml = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(4)])
        assert list(ml[::-1].state_dict())[:2] == ["0.weight", "0.bias"]
        del ml[1:3]
        assert list(ml.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
        with pytest.raises(TypeError):
            ml.append(3)
        md = lib.nn.ModuleDict({"b": lib.nn.Linear(2, 2), "a": lib.nn.ReLU()})
        assert list(md) == ["b", "a"] and type(md.pop("b")).__name__ == "Linear"
        with pytest.raises(KeyError):
            md["zz"]
        pl = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.ones(3)])
        assert [type(p).__name__ for p in pl] == ["Parameter", "Parameter"] and type(pl[1:]).__name__ == "ParameterList"
        pd = lib.nn.ParameterDict({"w": lib.ones(2), "s": "str"})
        assert list(pd.state_dict()) == ["w"] and len(list(pd.parameters())) == 1 and pd["s"] == "str"


# -- losses ----------------------------------------------------------------------------------------------------------
_W5 = np.abs(_rn(5)) + 0.1
_LOSSES = [
    (lambda l, r: l.nn.CrossEntropyLoss(weight=l.tensor(_W5), reduction=r, label_smoothing=0.15),
     [_rn(6, 5), np.array([1, 0, 4, -100, 2, 2])]),
    (lambda l, r: l.nn.CrossEntropyLoss(weight=l.tensor(_W5), reduction=r, label_smoothing=0.2),
     [_rn(6, 5), np.abs(_rn(6, 5))]),
    (lambda l, r: l.nn.CrossEntropyLoss(weight=l.tensor(_W5), reduction=r, ignore_index=1, label_smoothing=0.05),
     [_rn(2, 5, 3, 4), np.random.default_rng(0).integers(0, 5, (2, 3, 4))]),
    (lambda l, r: l.nn.NLLLoss(weight=l.tensor(_W5), reduction=r, ignore_index=3),
     [_rn(2, 5, 3, 4), np.random.default_rng(1).integers(0, 5, (2, 3, 4))]),
    (lambda l, r: l.nn.KLDivLoss(reduction="batchmean" if r == "mean" else r, log_target=True), [_rn(4, 5), _rn(4, 5)]),
    (lambda l, r: l.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-6, reduction=r),
     [np.abs(_rn(4, 5)), np.abs(_rn(4, 5)) * 3]),
    (lambda l, r: l.nn.GaussianNLLLoss(full=True, eps=1e-3, reduction=r), [_rn(4, 5), _rn(4, 5), np.abs(_rn(4, 1))]),
    (lambda l, r: l.nn.HuberLoss(reduction=r, delta=0.5), [_rn(4, 5), _rn(4, 5)]),
    (lambda l, r: l.nn.SmoothL1Loss(reduction=r, beta=0.3), [_rn(4, 5), _rn(4, 5)]),
    (lambda l, r: l.nn.MultiLabelSoftMarginLoss(weight=l.tensor(_W5), reduction=r),
     [_rn(4, 5), (_rn(4, 5) > 0).astype(np.float32)]),
    (lambda l, r: l.nn.MultiMarginLoss(p=2, margin=0.7, weight=l.tensor(_W5), reduction=r),
     [_rn(6, 5), np.array([1, 0, 4, 3, 2, 2])]),
    (lambda l, r: l.nn.TripletMarginLoss(margin=0.5, p=1.5, swap=True, reduction=r), [_rn(4, 5), _rn(4, 5), _rn(4, 5)]),
    (lambda l, r: l.nn.TripletMarginWithDistanceLoss(distance_function=l.nn.PairwiseDistance(p=1), margin=1.5,
                                                     swap=True, reduction=r), [_rn(4, 5), _rn(4, 5), _rn(4, 5)]),
    (lambda l, r: l.nn.MarginRankingLoss(margin=0.2, reduction=r), [_rn(6), _rn(6), np.sign(_rn(6))]),
    (lambda l, r: l.nn.HingeEmbeddingLoss(margin=0.5, reduction=r), [_rn(4, 5), np.sign(_rn(4, 5))]),
    (lambda l, r: l.nn.CosineEmbeddingLoss(margin=0.1, reduction=r), [_rn(4, 5), _rn(4, 5), np.sign(_rn(4))]),
    (lambda l, r: l.nn.BCEWithLogitsLoss(pos_weight=l.tensor(_W5[:, None, None]), reduction=r),
     [_rn(2, 5, 3, 3), np.abs(_rn(2, 5, 3, 3)) % 1]),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("i", range(len(_LOSSES)))
def test_loss_options(i, reduction):
    make, inputs = _LOSSES[i]
    _run(lambda l: make(l, reduction), inputs)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss(zero_infinity):
    lp = np.log(np.random.default_rng(1).dirichlet(np.ones(6), (12, 3))).astype(np.float32)
    tg = np.random.default_rng(2).integers(1, 6, (3, 5))
    # the second sequence is too short for its target: an infinite loss unless zero_infinity
    _run(lambda l: l.nn.CTCLoss(reduction="sum", zero_infinity=zero_infinity), [lp, tg, np.array([12, 3, 8]),
                                                                               np.array([5, 5, 5])],
         grad=zero_infinity, rtol=1e-4, atol=1e-5)
    _run(lambda l: l.nn.CTCLoss(blank=5), [lp, np.array([1, 2, 2, 3, 4, 0, 1, 1, 2, 3]), np.array([12, 10, 8]),
                                           np.array([4, 2, 4])], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f", [
    lambda l: l.nn.CrossEntropyLoss()(l.zeros(3, 5), l.tensor([0, 5, 1])),
    lambda l: l.nn.CrossEntropyLoss(weight=l.ones(4))(l.zeros(3, 5), l.tensor([0, 1, 1])),
    lambda l: l.nn.NLLLoss()(l.zeros(2, 5, 3, 4), l.zeros(2, 3, 5, dtype=l.long)),
    lambda l: l.nn.BCEWithLogitsLoss()(l.zeros(3, 5), l.zeros(3, 1)),
    lambda l: l.nn.GaussianNLLLoss()(l.zeros(3, 5), l.zeros(3, 5), -l.ones(3, 5)),
    lambda l: l.nn.MultiMarginLoss(p=3),
    lambda l: l.nn.HingeEmbeddingLoss()(l.zeros(3, 5), l.zeros(3, 4)),
    lambda l: l.nn.functional.hinge_embedding_loss(l.zeros(3, 5, requires_grad=True), l.ones(2, 5)),
    lambda l: l.nn.CosineEmbeddingLoss()(l.zeros(3, 5), l.zeros(3, 5), l.ones(4)),
])
def test_loss_errors(f):
    _raises(f)


def test_hinge_embedding_loss_shape_error_message():
    with pytest.raises(RuntimeError, match=r"size of tensor a \(4\) must match the size of tensor b \(5\)"):
        ember.nn.HingeEmbeddingLoss()(ember.zeros(3, 5), ember.zeros(3, 4))
