"""Recurrent sequence-model idioms (word-level language models with truncated BPTT, packed bidirectional encoders,
taggers, seq2seq decoders, cell loops, weight drop) against torch: values, gradients, dtypes, strides and errors."""
import warnings

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

import ember
from ember.nn.utils import rnn as ernn

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")
X = np.random.default_rng(0).standard_normal((7, 3, 4)).astype(np.float32)
TOKENS = np.random.default_rng(1).integers(0, 11, size=40)


def _close(e, t, tol=2e-5):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _copy(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return em


def _pair(kind, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(*args, **kwargs)
    return tm, _copy(tm, getattr(ember.nn, kind)(*args, **kwargs))


def _both(fn, *modules):
    """``fn(lib, module)`` for ember and torch on the paired modules."""
    tm, em = modules if modules else (None, None)
    return fn(ember, em), fn(torch, tm)


def _grad_out(shape, seed=2):
    return np.random.default_rng(seed).standard_normal(tuple(shape)).astype(np.float32)


# -- language model: tied embedding, truncated BPTT, repackaged hidden states, clipping, manual SGD ---------------
def _word_lm(lib, rnn_type, state):
    nn = lib.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(11, 6)
            self.rnn = getattr(nn, rnn_type)(6, 6, 2)
            self.decoder = nn.Linear(6, 11)
            self.decoder.weight = self.encoder.weight

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.encoder(input), hidden)
            return lib.nn.functional.log_softmax(self.decoder(output).view(-1, 11), dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if rnn_type == "LSTM":
                return weight.new_zeros(2, bsz, 6), weight.new_zeros(2, bsz, 6)
            return weight.new(2, bsz, 6).zero_()

    def repackage_hidden(h):
        return h.detach() if isinstance(h, lib.Tensor) else tuple(repackage_hidden(v) for v in h)

    model = RNNModel()
    model.load_state_dict({k: lib.tensor(v.numpy()) for k, v in state.items()})
    data = lib.tensor(TOKENS)
    data = data.narrow(0, 0, data.size(0) // 4 * 4).view(4, -1).t().contiguous()
    hidden, losses = model.init_hidden(4), []
    for i in range(0, data.size(0) - 1, 3):
        seq_len = min(3, len(data) - 1 - i)
        inp, target = data[i:i + seq_len], data[i + 1:i + 1 + seq_len].view(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(inp, hidden)
        loss = nn.NLLLoss()(output, target)
        loss.backward()
        losses.append(nn.utils.clip_grad_norm_(model.parameters(), 0.25))
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-2.0)
        losses.append(loss.detach())
    return losses + [model.rnn.weight_hh_l1, model.encoder.weight] + list(hidden if rnn_type == "LSTM" else [hidden])


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU"])
def test_word_language_model_truncated_bptt(rnn_type):
    torch.manual_seed(0)
    state = {k: v.detach().clone() for k, v in torch.nn.ModuleDict({
        "encoder": torch.nn.Embedding(11, 6), "rnn": getattr(torch.nn, rnn_type)(6, 6, 2),
        "decoder": torch.nn.Linear(6, 11)}).state_dict().items()}
    state["decoder.weight"] = state["encoder.weight"]
    for e, t in zip(_word_lm(ember, rnn_type, state), _word_lm(torch, rnn_type, state)):
        _close(e, t, 1e-4)


# -- packed bidirectional encoder, unsorted lengths, total_length, padding_value -----------------------------------
@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_packed_bidirectional_encoder(kind):
    tm, em = _pair(kind, 4, 6, num_layers=2, bidirectional=True, batch_first=True)
    g = _grad_out((3, 8, 6))

    def run(lib, m):
        emb = lib.tensor(X.transpose(1, 0, 2).copy(), requires_grad=True)
        lengths = lib.tensor([5, 7, 2])
        packed = lib.nn.utils.rnn.pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, hidden = m(packed)
        h = hidden[0] if kind == "LSTM" else hidden
        out, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, padding_value=-1.0, total_length=8)
        summed = out[:, :, :6] + out[:, :, 6:]
        final = lib.cat([h[-2], h[-1]], dim=1)
        (summed * lib.tensor(g)).sum().backward(retain_graph=True)
        final.sin().sum().backward()
        return [out, lens, final, emb.grad, m.weight_hh_l1_reverse.grad, m.bias_ih_l0.grad] + \
            ([hidden[1]] if kind == "LSTM" else [])

    for e, t in zip(*_both(run, tm, em)):
        _close(e, t)


def test_manual_sort_unsort_and_last_step_gather():
    tm, em = _pair("GRU", 4, 5, batch_first=True, bidirectional=True)

    def run(lib, m):
        x = lib.tensor(X.transpose(1, 0, 2).copy(), requires_grad=True)
        lengths = lib.tensor([4, 7, 2])
        sorted_lengths, idx = lengths.sort(descending=True)
        _, unsort = idx.sort()
        out, h = m(lib.nn.utils.rnn.pack_padded_sequence(x[idx], sorted_lengths, batch_first=True))
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0][unsort]
        h = h.index_select(1, unsort)
        last = out.gather(1, (lengths - 1).view(-1, 1, 1).expand(-1, 1, out.size(2))).squeeze(1)
        mask = lib.arange(7)[None, :] < lengths[:, None]
        ((out * mask.unsqueeze(-1)).sum() / mask.sum() + last.pow(2).mean() + h.sum()).backward()
        return [out, h, last, x.grad, m.weight_ih_l0_reverse.grad]

    for e, t in zip(*_both(run, tm, em)):
        _close(e, t)


def test_pad_packed_sequence_strides():
    """batch_first without a permutation is a transposed view of the time-major result (``.view`` fails on it);
    with ``unsorted_indices`` the reordered result is contiguous."""
    for enforce_sorted in (True, False):
        t = trnn.pad_packed_sequence(trnn.pack_padded_sequence(torch.tensor(X), [7, 5, 2], False, enforce_sorted),
                                     batch_first=True)[0]
        e = ernn.pad_packed_sequence(ernn.pack_padded_sequence(ember.tensor(X), [7, 5, 2], False, enforce_sorted),
                                     batch_first=True)[0]
        _close(e, t)
        assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous() == (not enforce_sorted)


def test_packed_head_on_data_and_replace():
    tm, em = _pair("LSTM", 4, 5)
    tfc, efc = _pair("Linear", 5, 2)

    def run(lib, m, fc):
        x = lib.tensor(X, requires_grad=True)
        out, (h, c) = m(lib.nn.utils.rnn.pack_padded_sequence(x, [3, 7, 5], enforce_sorted=False))
        y = lib.nn.utils.rnn.PackedSequence(fc(out.data), out.batch_sizes, out.sorted_indices, out.unsorted_indices)
        pad, lens = lib.nn.utils.rnn.pad_packed_sequence(y, batch_first=True, total_length=9, padding_value=-5.0)
        pad2 = lib.nn.utils.rnn.pad_packed_sequence(out._replace(data=fc(out.data)))[0]
        (pad.tanh().sum() + pad2.sum() + c.pow(2).sum()).backward()
        return [pad, lens, pad2, h, c, x.grad, fc.weight.grad, m.weight_hh_l0.grad]

    for e, t in zip(run(ember, em, efc), run(torch, tm, tfc)):
        _close(e, t)


# -- LSTM with projections, unbatched input, explicit states ------------------------------------------------------
def test_proj_lstm_unbatched_states_and_gradients():
    tm, em = _pair("LSTM", 4, 6, proj_size=3, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(3)
    h0, c0 = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)

    def run(lib, m):
        x, h, c = (lib.tensor(a, requires_grad=True) for a in (X[:, 0], h0, c0))
        out, (hn, cn) = m(x, [h, c])
        (out.sum() + (hn * 2).sum() + (cn ** 2).sum()).backward()
        return [out, hn, cn, x.grad, h.grad, c.grad, m.weight_hr_l1_reverse.grad, m.weight_hh_l0.grad]

    for e, t in zip(*_both(run, tm, em)):
        _close(e, t)


# -- cells stepped in a loop against the fused module ------------------------------------------------------------
@pytest.mark.parametrize("kind,kw", [("LSTM", {}), ("GRU", {}), ("RNN", dict(nonlinearity="relu", bias=False))])
def test_cell_loop_matches_fused_module(kind, kw):
    tm, em = _pair(kind, 4, 5, **kw)

    def run(lib, m):
        cell = getattr(lib.nn, kind + "Cell")(4, 5, **kw)
        for name in ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if kw.get("bias", True) else ()):
            setattr(cell, name, getattr(m, name + "_l0"))
        x = lib.tensor(X, requires_grad=True)
        h = lib.zeros(3, 5)
        state = (h, lib.zeros(3, 5)) if kind == "LSTM" else h
        outs = []
        for t in range(x.size(0)):
            state = cell(x[t], state)
            outs.append(state[0] if kind == "LSTM" else state)
        loop = lib.stack(outs)
        fused = m(x)[0]
        loop.backward(lib.tensor(_grad_out(loop.shape)))
        return [loop, fused, x.grad, m.weight_hh_l0.grad]

    (eloop, efused, *egrads), (tloop, tfused, *tgrads) = _both(run, tm, em)
    _close(eloop, tloop)
    _close(efused, eloop, 1e-6)
    for e, t in zip(egrads, tgrads):
        _close(e, t)


def test_unbatched_cell_loop_from_none():
    tm, em = _pair("GRUCell", 4, 5)

    def run(lib, m):
        h, hs = None, []
        for t in range(7):
            h = m(lib.tensor(X[t, 0]), h)
            hs.append(h)
        return lib.stack(hs)

    _close(*_both(run, tm, em))


# -- seq2seq decoder with dot attention over the encoder outputs --------------------------------------------------
def test_seq2seq_attention_decoder():
    (tenc, eenc), (tdec, edec), (tattn, eattn) = _pair("GRU", 4, 5), _pair("GRU", 5, 5), _pair("Linear", 10, 5)

    def run(lib, enc, dec, attn):
        x = lib.tensor(X, requires_grad=True)
        enc_out, h = enc(x)
        inp, outs = lib.zeros(1, 3, 5), []
        for _ in range(4):
            out, h = dec(inp, h)
            weights = lib.softmax(lib.bmm(h.transpose(0, 1), enc_out.permute(1, 2, 0)), dim=-1)
            context = lib.bmm(weights, enc_out.transpose(0, 1))
            inp = lib.tanh(attn(lib.cat([context.transpose(0, 1), out], -1)))
            outs.append(inp)
        y = lib.cat(outs)
        y.backward(lib.tensor(_grad_out(y.shape)))
        return [y, x.grad, dec.weight_hh_l0.grad, enc.bias_hh_l0.grad]

    for e, t in zip(run(ember, eenc, edec, eattn), run(torch, tenc, tdec, tattn)):
        _close(e, t)


# -- time series: learned initial state, non-contiguous batch-first input, value clipping, SGD steps -----------------
def test_learned_initial_state_and_time_series_training():
    tm, em = _pair("GRU", 4, 5, num_layers=2, batch_first=True)
    tfc, efc = _pair("Linear", 5, 1)
    h0 = np.random.default_rng(4).standard_normal((2, 1, 5)).astype(np.float32)

    def run(lib, m, fc):
        init = lib.nn.Parameter(lib.tensor(h0))
        params = list(m.parameters()) + list(fc.parameters()) + [init]
        x = lib.tensor(X).transpose(0, 1)  # (B, T, F), non-contiguous
        y = lib.arange(3, dtype=lib.float32)[:, None]
        res = []
        for _ in range(3):
            out, _ = m(x, init.expand(-1, 3, -1))
            loss = lib.nn.functional.mse_loss(fc(out[:, -1, :]), y)
            loss.backward()
            lib.nn.utils.clip_grad_value_(m.parameters(), 0.05)
            with lib.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
                    p.grad = None
            res.append(loss.detach())
        return res + [init, m.weight_hh_l1]

    for e, t in zip(run(ember, em, efc), run(torch, tm, tfc)):
        _close(e, t, 1e-4)


# -- weight drop (AWD-LSTM) and weight norm on a recurrent weight --------------------------------------------------
def test_weight_drop_plain_tensor_weight():
    tm, em = _pair("LSTM", 4, 5)

    def run(lib, m):
        raw = m.weight_hh_l0
        del m._parameters["weight_hh_l0"]
        m.register_parameter("weight_hh_l0_raw", lib.nn.Parameter(raw.data))
        m.weight_hh_l0 = lib.nn.functional.dropout(m.weight_hh_l0_raw, p=0.0, training=True) * 0.5
        out, _ = m(lib.tensor(X))
        out.backward(lib.tensor(_grad_out(out.shape)))
        return [out, m.weight_hh_l0_raw.grad]

    for e, t in zip(*_both(run, tm, em)):
        _close(e, t)


def test_weight_norm_parametrization_on_recurrent_weight():
    tm, em = _pair("GRU", 4, 5)

    def run(lib, m):
        lib.nn.utils.parametrizations.weight_norm(m, name="weight_hh_l0")
        out, _ = m(lib.tensor(X))
        out.backward(lib.tensor(_grad_out(out.shape)))
        p = m.parametrizations.weight_hh_l0
        return [out, p.original0.grad, p.original1.grad], sorted(m.state_dict())

    (eres, ekeys), (tres, tkeys) = _both(run, tm, em)
    assert ekeys == tkeys
    for e, t in zip(eres, tres):
        _close(e, t)


# -- parameters: names, all_weights, flatten_parameters, init ranges, forget-gate bias, dtypes --------------------
def test_state_dict_names_all_weights_and_flatten():
    kw = dict(num_layers=2, bidirectional=True, proj_size=3)
    tm, em = torch.nn.LSTM(4, 6, **kw), ember.nn.LSTM(4, 6, **kw)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert "weight_hh_l1_reverse" in em.state_dict() and "weight_hr_l0" in em.state_dict()
    assert [[tuple(w.shape) for w in ws] for ws in em.all_weights] == \
           [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
    assert em.flatten_parameters() is None and em._flat_weights[0] is em.weight_ih_l0
    for lib, m in ((torch, tm), (ember, em)):
        with pytest.raises(RuntimeError, match="size mismatch for weight_ih_l0"):
            m.load_state_dict(lib.nn.LSTM(5, 6, **kw).state_dict())
        result = m.load_state_dict(lib.nn.LSTM(4, 6, proj_size=3).state_dict(), strict=False)
        assert result.missing_keys == [k for k in m.state_dict() if k.endswith(("_l1", "reverse"))]


def test_reset_parameters_range_and_forget_gate_bias():
    em = ember.nn.LSTM(4, 100, num_layers=2, proj_size=10)
    em.reset_parameters()
    assert all(float(p.abs().max()) <= 0.1 for p in em.parameters())
    assert float(em.weight_hh_l1.abs().max()) > 0.09  # uniform over the whole range, not a narrower one
    tm, em = _pair("LSTM", 4, 5)
    for lib, m in ((torch, tm), (ember, em)):
        for names in m._all_weights:
            for name in filter(lambda n: "bias" in n, names):
                bias = getattr(m, name)
                bias.data[bias.size(0) // 4:bias.size(0) // 2].fill_(1.0)
    _close(em(ember.tensor(X))[0], tm(torch.tensor(X))[0])


def test_dropout_between_layers_train_and_eval():
    m = ember.nn.LSTM(4, 50, num_layers=3, dropout=0.5)
    x = ember.tensor(X)
    assert not np.array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    single = ember.nn.LSTM(4, 5, num_layers=1, dropout=0.0).train()  # no dropout after the last layer
    np.testing.assert_array_equal(single(x)[0].detach().numpy(), single(x)[0].detach().numpy())


def test_float64_model_and_gradcheck():
    tm, em = _pair("LSTM", 3, 2, num_layers=2, bidirectional=True, proj_size=1)
    tm.double()
    em.double()
    assert em.weight_hr_l0.dtype is ember.float64 and em._flat_weights[0].dtype is ember.float64
    xs = X[:3, :2, :3].astype(np.float64)

    def run(lib, m):
        x = lib.tensor(xs, requires_grad=True)
        h0 = lib.zeros(4, 2, 1, dtype=lib.float64, requires_grad=True)
        c0 = lib.zeros(4, 2, 2, dtype=lib.float64, requires_grad=True)

        def fn(x, h0, c0):
            out, (h, c) = m(x, (h0, c0))
            return out, h, c
        assert lib.autograd.gradcheck(fn, (x, h0, c0))
        outs = fn(x, h0, c0)
        grads = lib.autograd.grad(outs, (x, h0, c0), [lib.ones_like(o) for o in outs])
        return list(outs) + list(grads)

    for e, t in zip(*_both(run, tm, em)):
        assert e.dtype is ember.float64
        _close(e, t, 1e-10)


# -- nn.utils.rnn --------------------------------------------------------------------------------------------------
def test_token_sequences_packed_then_embedded():
    (temb, eemb), (tgru, egru) = _pair("Embedding", 7, 4), _pair("GRU", 4, 3)

    def run(lib, emb, gru):
        seqs = [lib.tensor([1, 2, 3]), lib.tensor([4]), lib.tensor([5, 6])]
        labels = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=-100)
        left = lib.nn.utils.rnn.pad_sequence(tuple(seqs), padding_side="left")
        p = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        out, h = gru(p._replace(data=emb(p.data)))
        return [labels, left, p.data, p.batch_sizes, p.sorted_indices, p.float().data, p.to(lib.float64).data,
                p.to("cpu", lib.float64).data, out.data, h, lib.nn.utils.rnn.pad_packed_sequence(out, True, 9.0)[0]]

    for e, t in zip(run(ember, eemb, egru), run(torch, temb, tgru)):
        _close(e, t)


def test_unpad_sequence_copies_and_transposes_in_place():
    seqs = [X[:n, i] for i, n in enumerate([3, 7, 5])]
    res = []
    for lib in (ember, torch):
        padded = lib.nn.utils.rnn.pad_sequence([lib.tensor(s, requires_grad=True) for s in seqs])
        parts = lib.nn.utils.rnn.unpad_sequence(padded, lib.tensor([3, 7, 5]))
        res.append((padded, parts))
        with pytest.raises(ValueError):
            lib.nn.utils.rnn.unpad_sequence(lib.zeros(3, 2, 4), lib.tensor([2, 1]), batch_first=True)
    (epad, eparts), (tpad, tparts) = res
    assert tuple(epad.shape) == tuple(tpad.shape) == (3, 7, 4)
    for e, t, s in zip(eparts, tparts, seqs):
        _close(e, t, 0)
        assert e.stride() == t.stride() and e.is_contiguous()
    for e, s in zip(ernn.unpack_sequence(ernn.pack_sequence([ember.tensor(s) for s in seqs], False)), seqs):
        np.testing.assert_array_equal(e.numpy(), s)


def test_packed_sequence_pin_memory_and_apply_permutation():
    for lib in (torch, ember):
        p = lib.nn.utils.rnn.pack_sequence([lib.ones(3, 2), lib.ones(1, 2)])
        assert not p.is_pinned() and not p.is_cuda
        if not lib.cuda.is_available():
            with pytest.raises(RuntimeError):
                p.pin_memory()
    h = ember.arange(6.0).view(1, 3, 2)
    with pytest.warns(FutureWarning, match="apply_permutation` is deprecated"):
        out = ember.nn.modules.rnn.apply_permutation(h, ember.tensor([2, 0, 1]))
    assert out.tolist() == [[[4.0, 5.0], [0.0, 1.0], [2.0, 3.0]]]


# -- errors ----------------------------------------------------------------------------------------------------------
ERRORS = [
    ("hidden dtype", lambda lib: lib.nn.GRU(4, 5)(lib.zeros(7, 3, 4), lib.zeros(1, 3, 5).double())),
    ("cell dtype", lambda lib: lib.nn.LSTM(4, 5)(lib.zeros(7, 3, 4), (lib.zeros(1, 3, 5), lib.zeros(1, 3, 5,
                                                                                          dtype=lib.float64)))),
    ("h dtype", lambda lib: lib.nn.RNN(4, 5)(lib.zeros(7, 4), lib.zeros(1, 5, dtype=lib.float64))),
    ("cell hidden dtype", lambda lib: lib.nn.GRUCell(4, 5)(lib.zeros(3, 4), lib.zeros(3, 5).double())),
    ("cell hidden int", lambda lib: lib.nn.RNNCell(4, 5)(lib.zeros(3, 4), lib.zeros(3, 5, dtype=lib.int32))),
    ("lstmcell h dtype", lambda lib: lib.nn.LSTMCell(4, 5)(lib.zeros(3, 4), (lib.zeros(3, 5).double(),
                                                                            lib.zeros(3, 5)))),
    ("three states", lambda lib: lib.nn.LSTM(4, 5)(lib.zeros(7, 3, 4), (lib.zeros(1, 3, 5),) * 3)),
    ("one-layer h only", lambda lib: lib.nn.LSTM(4, 5)(lib.zeros(7, 3, 4), lib.zeros(1, 3, 5))),
    ("two-layer h only", lambda lib: lib.nn.LSTM(4, 5, 2)(lib.zeros(7, 3, 4), lib.zeros(2, 3, 5))),
    ("cell one state", lambda lib: lib.nn.LSTMCell(4, 5)(lib.zeros(3, 4), (lib.zeros(3, 5),))),
    ("cell tensor state", lambda lib: lib.nn.LSTMCell(4, 5)(lib.zeros(3, 4), lib.zeros(2, 3, 5))),
    ("cell batched h", lambda lib: lib.nn.GRUCell(4, 5)(lib.zeros(4), lib.zeros(1, 5))),
    ("wrong h0 batch", lambda lib: lib.nn.LSTM(4, 5)(lib.zeros(7, 3, 4), (lib.zeros(1, 2, 5), lib.zeros(1, 2, 5)))),
    ("wrong c0 size", lambda lib: lib.nn.LSTM(4, 5, proj_size=2)(lib.zeros(7, 3, 4), (lib.zeros(1, 3, 5),
                                                                                    lib.zeros(1, 3, 5)))),
    ("batch_first h0", lambda lib: lib.nn.GRU(4, 5, batch_first=True)(lib.zeros(3, 7, 4), lib.zeros(1, 7, 5))),
    ("2-D h0 batched", lambda lib: lib.nn.GRU(4, 5)(lib.zeros(7, 3, 4), lib.zeros(3, 5))),
    ("packed h0 batch", lambda lib: lib.nn.GRU(4, 5)(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3, 4), lib.zeros(2, 4)]), lib.zeros(1, 3, 5))),
]


@pytest.mark.parametrize("call", [c for _, c in ERRORS], ids=[n for n, _ in ERRORS])
def test_state_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(ember)
    if type(want.value) is RuntimeError:
        assert str(got.value) == str(want.value) or "mkldnn" in str(want.value)
