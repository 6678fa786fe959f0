"""RNN, LSTM, GRU, their cells and nn.utils.rnn against torch: outputs and gradients of inputs, initial states and
every parameter (random output gradients), packed sequences, errors, and float64 gradchecks of the fused step."""
import math

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

import ember
from ember._ops.rnn import recurrence, recurrence_reference
from ember.nn.utils import rnn as ernn

RNG = np.random.default_rng(0)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")


def _t(a, grad=True):
    return torch.tensor(a, requires_grad=grad)


def _e(a, grad=True):
    return ember.tensor(a, requires_grad=grad)


def _flat(x):
    return list(x) if isinstance(x, tuple) else [x]


def _close(e, t, atol=2e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=atol)


def _pair(kind, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(*args, **kwargs).eval()
    em = getattr(ember.nn, kind)(*args, **kwargs).eval()
    em.load_state_dict(tm.state_dict())
    return tm, em


def _backward_both(touts, eouts):
    gs = [RNG.standard_normal(tuple(t.shape)).astype(np.float32) for t in touts]
    torch.autograd.backward(touts, [torch.tensor(g, dtype=t.dtype) for g, t in zip(gs, touts)])
    ember.autograd.backward(eouts, [ember.tensor(g, dtype=e.dtype) for g, e in zip(gs, eouts)])


def _check_params(tm, em):
    tp = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        _close(p.grad, tp[name].grad)


def _states(kind, layers_dirs, batch, size, hidden, unbatched=False):
    shape = (layers_dirs, size) if unbatched else (layers_dirs, batch, size)
    h = RNG.standard_normal(shape).astype(np.float32)
    if kind != "LSTM":
        return (h,)
    cshape = shape[:-1] + (hidden,)
    return h, RNG.standard_normal(cshape).astype(np.float32)


CONFIGS = [
    ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2)), ("RNN", dict(bidirectional=True, bias=False)),
    ("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(proj_size=3)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(batch_first=True, bias=False)),
    ("GRU", {}), ("GRU", dict(num_layers=2, bidirectional=True)), ("GRU", dict(batch_first=True, bias=False)),
]


@pytest.mark.parametrize("kind,kw", CONFIGS, ids=[f"{k}-{'-'.join(kw) or 'default'}" for k, kw in CONFIGS])
@pytest.mark.parametrize("with_h0", [False, True])
@pytest.mark.parametrize("batched", [True, False])
def test_module_matches_torch(kind, kw, with_h0, batched):
    tm, em = _pair(kind, 4, 5, **kw)
    shape = ((3, 6, 4) if kw.get("batch_first") else (6, 3, 4)) if batched else (6, 4)
    x = RNG.standard_normal(shape).astype(np.float32)
    ld = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    states = _states(kind, ld, 3, kw.get("proj_size") or 5, 5, not batched) if with_h0 else None
    tx, ex = _t(x), _e(x)
    th = eh = None
    if states:
        th, eh = tuple(_t(s) for s in states), tuple(_e(s) for s in states)
        if kind != "LSTM":
            th, eh = th[0], eh[0]
    tout, thid = tm(tx, th)
    eout, ehid = em(ex, eh)
    touts, eouts = [tout] + _flat(thid), [eout] + _flat(ehid)
    for e, t in zip(eouts, touts):
        assert tuple(e.shape) == tuple(t.shape)
        _close(e, t)
    _backward_both(touts, eouts)
    _close(ex.grad, tx.grad)
    for e, t in zip(_flat(eh) if eh is not None else [], _flat(th) if th is not None else []):
        _close(e.grad, t.grad)
    _check_params(tm, em)


@pytest.mark.parametrize("kind,kw", [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", dict(batch_first=True)),
                                     ("RNN", dict(bidirectional=True)), ("LSTM", dict(proj_size=2))])
@pytest.mark.parametrize("with_h0", [False, True])
def test_packed_sequence_matches_torch(kind, kw, with_h0):
    tm, em = _pair(kind, 4, 5, **kw)
    bf = kw.get("batch_first", False)
    x = RNG.standard_normal((3, 6, 4) if bf else (6, 3, 4)).astype(np.float32)
    lengths = [2, 6, 4]  # unsorted: exercises sorted/unsorted indices
    tx, ex = _t(x), _e(x)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=False)
    ep = ernn.pack_padded_sequence(ex, lengths, batch_first=bf, enforce_sorted=False)
    ld = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    th = eh = None
    if with_h0:
        states = _states(kind, ld, 3, kw.get("proj_size") or 5, 5)
        th, eh = tuple(_t(s) for s in states), tuple(_e(s) for s in states)
        if kind != "LSTM":
            th, eh = th[0], eh[0]
    tout, thid = tm(tp, th)
    eout, ehid = em(ep, eh)
    assert isinstance(eout, ernn.PackedSequence)
    _close(eout.data, tout.data)
    assert eout.batch_sizes.tolist() == tout.batch_sizes.tolist()
    tpad, tlen = trnn.pad_packed_sequence(tout, batch_first=bf, total_length=7)
    epad, elen = ernn.pad_packed_sequence(eout, batch_first=bf, total_length=7)
    assert elen.tolist() == tlen.tolist()
    touts, eouts = [tpad] + _flat(thid), [epad] + _flat(ehid)
    for e, t in zip(eouts, touts):
        _close(e, t)
    _backward_both(touts, eouts)
    _close(ex.grad, tx.grad)
    for e, t in zip(_flat(eh) if eh is not None else [], _flat(th) if th is not None else []):
        _close(e.grad, t.grad)
    _check_params(tm, em)


CELLS = [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", {}), ("GRUCell", {}),
         ("GRUCell", dict(bias=False)), ("LSTMCell", dict(bias=False))]


@pytest.mark.parametrize("kind,kw", CELLS, ids=[f"{k}-{'-'.join(kw) or 'default'}" for k, kw in CELLS])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_h", [True, False])
def test_cell_matches_torch(kind, kw, batched, with_h):
    tm, em = _pair(kind, 4, 5, **kw)
    x = RNG.standard_normal((3, 4) if batched else (4,)).astype(np.float32)
    tx, ex = _t(x), _e(x)
    th = eh = None
    if with_h:
        shape = (3, 5) if batched else (5,)
        states = [RNG.standard_normal(shape).astype(np.float32) for _ in range(2 if kind == "LSTMCell" else 1)]
        th, eh = tuple(_t(s) for s in states), tuple(_e(s) for s in states)
        if kind != "LSTMCell":
            th, eh = th[0], eh[0]
    touts, eouts = _flat(tm(tx, th)), _flat(em(ex, eh))
    for e, t in zip(eouts, touts):
        assert tuple(e.shape) == tuple(t.shape)
        _close(e, t)
    _backward_both(touts, eouts)
    _close(ex.grad, tx.grad)
    for e, t in zip(_flat(eh) if eh is not None else [], _flat(th) if th is not None else []):
        _close(e.grad, t.grad)
    _check_params(tm, em)


def test_float64_module():
    torch.manual_seed(0)
    tm = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True).double()
    em = ember.nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=ember.float64)
    em.load_state_dict(tm.state_dict())
    x = RNG.standard_normal((5, 2, 3))
    tout, th = tm(torch.tensor(x))
    eout, eh = em(ember.tensor(x))
    assert eout.dtype is ember.float64
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(eh.detach().numpy(), th.detach().numpy(), atol=1e-12)


# -- parameters, init, repr ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,kw", CONFIGS + CELLS,
                         ids=[f"{k}-{'-'.join(kw) or 'default'}" for k, kw in CONFIGS + CELLS])
def test_parameters_init_and_repr(kind, kw):
    tm = getattr(torch.nn, kind)(4, 5, **kw)
    em = getattr(ember.nn, kind)(4, 5, **kw)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    bound = 1 / math.sqrt(5)
    for p in em.parameters():
        assert float(p.abs().max()) <= bound
    assert repr(em) == repr(tm)


def test_flat_and_all_weights():
    em = ember.nn.LSTM(4, 5, num_layers=2, bidirectional=True, proj_size=2)
    tm = torch.nn.LSTM(4, 5, num_layers=2, bidirectional=True, proj_size=2)
    assert em._flat_weights_names == tm._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in em.all_weights] == \
           [[tuple(w.shape) for w in ws] for ws in tm.all_weights]
    em.flatten_parameters()
    assert em._flat_weights[0] is em.weight_ih_l0


def test_dropout_between_layers_train_only():
    em = ember.nn.LSTM(4, 5, num_layers=2, dropout=0.5)
    x = ember.randn(6, 3, 4)
    a, b = em(x)[0], em(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    em.eval()
    np.testing.assert_array_equal(em(x)[0].detach().numpy(), em(x)[0].detach().numpy())


def test_errors_match_torch():
    def both(make, call, kind=RuntimeError):
        with pytest.raises(kind) as te:
            call(make(torch))
        with pytest.raises(kind) as ee:
            call(make(ember))
        return str(te.value), str(ee.value)

    lstm = lambda lib: lib.nn.LSTM(4, 5)  # noqa: E731
    t, e = both(lstm, lambda m: m(m.weight_ih_l0.new_zeros(6, 3, 5)))
    assert t == e
    t, e = both(lstm, lambda m: m(m.weight_ih_l0.new_zeros(6, 3, 4), (m.weight_ih_l0.new_zeros(1, 2, 5),
                                                                      m.weight_ih_l0.new_zeros(1, 2, 5))))
    assert t == e
    t, e = both(lstm, lambda m: m(m.weight_ih_l0.new_zeros(6, 3, 4), (m.weight_ih_l0.new_zeros(3, 5),
                                                                      m.weight_ih_l0.new_zeros(3, 5))))
    assert t == e
    t, e = both(lstm, lambda m: m(m.weight_ih_l0.new_zeros(6, 3, 4).double()), ValueError)
    assert t.replace("torch", "ember") == e
    t, e = both(lstm, lambda m: m(m.weight_ih_l0.new_zeros(2, 6, 3, 4)), ValueError)
    assert t == e
    gru = lambda lib: lib.nn.GRU(4, 5)  # noqa: E731
    t, e = both(gru, lambda m: m(m.weight_ih_l0.new_zeros(6, 3, 4), m.weight_ih_l0.new_zeros(2, 3, 5)))
    assert t == e
    t, e = both(gru, lambda m: m(m.weight_ih_l0.new_zeros(0, 3, 4)))
    assert t == e
    cell = lambda lib: lib.nn.LSTMCell(4, 5)  # noqa: E731
    t, e = both(cell, lambda m: m(m.weight_ih.new_zeros(3, 6)))
    assert t == e
    t, e = both(cell, lambda m: m(m.weight_ih.new_zeros(3, 4), (m.weight_ih.new_zeros(2, 5),
                                                              m.weight_ih.new_zeros(2, 5))))
    assert t == e
    t, e = both(cell, lambda m: m(m.weight_ih.new_zeros(2, 3, 4)), ValueError)
    assert t == e
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
            lib.nn.GRU(4, 5, proj_size=2)
        with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
            lib.nn.LSTM(4, 5, proj_size=5)
        with pytest.raises(ValueError, match="dropout should be a number in range"):
            lib.nn.RNN(4, 5, dropout=1.5)
        with pytest.raises(ValueError, match="Unknown nonlinearity"):
            lib.nn.RNN(4, 5, nonlinearity="gelu")
        with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
            lib.nn.GRU(4, 5, dropout=0.2)


# -- the fused recurrence: reference, gradcheck, double backward -------------------------------------------------
def _recurrence_inputs(mode, batch_sizes, proj, bias, dtype=np.float64):
    H, P, G = 3, (2 if proj else 3), {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}[mode]
    n, b = sum(batch_sizes), batch_sizes[0]
    arrays = [RNG.standard_normal((n, G * H)), RNG.standard_normal((b, P)),
              RNG.standard_normal((b, H)) if mode == "LSTM" else None, RNG.standard_normal((G * H, P)) * 0.5,
              RNG.standard_normal(G * H) if bias else None, RNG.standard_normal((P, H)) if proj else None]
    return [None if a is None else ember.tensor(a.astype(dtype), requires_grad=True) for a in arrays]


RECURRENCES = [("RNN_TANH", (3, 3), False, True, False), ("RNN_RELU", (2, 2, 1), False, True, True),
               ("LSTM", (2, 2), False, True, False), ("LSTM", (3, 2, 2, 1), True, True, True),
               ("LSTM", (2, 1), False, False, True), ("GRU", (2, 2, 1), False, True, False),
               ("GRU", (3, 1), False, False, True)]


@pytest.mark.parametrize("mode,bs,proj,bias,reverse", RECURRENCES)
def test_recurrence_gradcheck(mode, bs, proj, bias, reverse):
    inputs = _recurrence_inputs(mode, bs, proj, bias)

    def fn(*args):
        return recurrence(*args, mode=mode, batch_sizes=bs, reverse=reverse)
    assert ember.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("mode,bs,proj,bias,reverse", RECURRENCES)
def test_recurrence_matches_reference(mode, bs, proj, bias, reverse):
    inputs = _recurrence_inputs(mode, bs, proj, bias, np.float32)
    fused = recurrence(*inputs, mode=mode, batch_sizes=bs, reverse=reverse)
    ref = recurrence_reference(*inputs, mode=mode, batch_sizes=bs, reverse=reverse)
    used = [x for x in inputs if x is not None]
    gs = [ember.randn(*o.shape) for o in fused]
    g_fused = ember.autograd.grad(fused, used, gs)
    g_ref = ember.autograd.grad(ref, used, gs)
    for a, b in zip(list(fused) + list(g_fused), list(ref) + list(g_ref)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_recurrence_double_backward(mode):
    inputs = _recurrence_inputs(mode, (2, 1), mode == "LSTM", True)

    def fn(*args):
        return recurrence(*args, mode=mode, batch_sizes=(2, 1), reverse=False)
    assert ember.autograd.gradgradcheck(fn, inputs)


def test_lstm_cell_gradcheck():
    cell = ember.nn.LSTMCell(3, 2, dtype=ember.float64)
    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    h = ember.randn(2, 2, dtype=ember.float64, requires_grad=True)
    c = ember.randn(2, 2, dtype=ember.float64, requires_grad=True)
    params = list(cell.parameters())

    def fn(x, h, c, *ps):
        return cell(x, (h, c))
    assert ember.autograd.gradcheck(fn, [x, h, c] + params)


# -- nn.utils.rnn ----------------------------------------------------------------------------------------------------
def _seqs(lengths, feat=(2,)):
    return [RNG.standard_normal((n,) + feat).astype(np.float32) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    seqs = _seqs([3, 1, 4])
    ts, es = [_t(s) for s in seqs], [_e(s) for s in seqs]
    t = trnn.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    e = ernn.pad_sequence(es, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    _close(e, t)
    _backward_both([t], [e])
    for a, b in zip(es, ts):
        _close(a.grad, b.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_pad_round_trip(batch_first, enforce_sorted):
    lengths = [5, 3, 2, 2] if enforce_sorted else [2, 5, 1, 3]
    x = RNG.standard_normal((4, 5, 2) if batch_first else (5, 4, 2)).astype(np.float32)
    tx, ex = _t(x), _e(x)
    tp = trnn.pack_padded_sequence(tx, torch.tensor(lengths), batch_first, enforce_sorted)
    ep = ernn.pack_padded_sequence(ex, ember.tensor(lengths), batch_first, enforce_sorted)
    _close(ep.data, tp.data)
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist() and ep.batch_sizes.dtype is ember.int64
    for a, b in ((ep.sorted_indices, tp.sorted_indices), (ep.unsorted_indices, tp.unsorted_indices)):
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    t, tl = trnn.pad_packed_sequence(tp, batch_first, padding_value=7.0)
    e, el = ernn.pad_packed_sequence(ep, batch_first, padding_value=7.0)
    _close(e, t)
    assert el.tolist() == tl.tolist()
    _backward_both([t], [e])
    _close(ex.grad, tx.grad)


def test_pack_sequence_unpack_unpad():
    seqs = _seqs([2, 4, 1], (3,))
    tp = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    ep = ernn.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    _close(ep.data, tp.data)
    for e, s in zip(ernn.unpack_sequence(ep), seqs):
        np.testing.assert_array_equal(e.numpy(), s)
    padded = ernn.pad_sequence([ember.tensor(s) for s in seqs])
    for e, s in zip(ernn.unpad_sequence(padded, ember.tensor([2, 4, 1])), seqs):
        np.testing.assert_array_equal(e.numpy(), s)
    perm = ember.tensor([2, 0, 3, 1])
    assert ernn.invert_permutation(perm).tolist() == trnn.invert_permutation(torch.tensor([2, 0, 3, 1])).tolist()
    assert ernn.invert_permutation(None) is None


def test_packed_sequence_api():
    ep = ernn.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    assert isinstance(ep, tuple) and ep._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert ep.double().data.dtype is ember.float64 and ep.to(ember.float32) is ep
    assert not ep.is_cuda
    data, batch_sizes, _, _ = ep
    assert batch_sizes.tolist() == [2, 1, 1]


def test_utils_errors_match_torch():
    cases = [
        (lambda m, lib: m.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 3]), RuntimeError),
        (lambda m, lib: m.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2, 0], enforce_sorted=False), RuntimeError),
        (lambda m, lib: m.pack_padded_sequence(lib.zeros(4, 3, 2), [4, 2]), RuntimeError),
        (lambda m, lib: m.pad_sequence([]), RuntimeError),
        (lambda m, lib: m.pad_sequence([lib.ones(2)], padding_side="up"), RuntimeError),
        (lambda m, lib: m.pad_packed_sequence(m.pack_sequence([lib.ones(4)]), total_length=3), ValueError),
    ]
    for fn, kind in cases:
        with pytest.raises(kind) as te:
            fn(trnn, torch)
        with pytest.raises(kind) as ee:
            fn(ernn, ember)
        assert str(te.value) == str(ee.value)


@pytest.mark.parametrize("name", ["ember.nn.modules.rnn", "ember.nn.utils.rnn"])
def test_docstring_examples(name):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name), globs={"ember": ember},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
