"""Breadth of ``nn``: modules built with default and non-default arguments as the docs show, compared with torch on
repr, state_dict layout, forward and gradients from the same weights, memory layout of the outputs, empty batches,
factory kwargs, lazy materialization and the constructor errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

_R = np.random.default_rng(0)


def _arr(shape, kind="f"):
    if kind == "f":
        return _R.standard_normal(shape).astype(np.float32)
    if kind == "p":
        return _R.uniform(0.05, 0.95, shape).astype(np.float32)
    return _R.integers(0, int(kind[1:]), shape).astype(np.int64)


def _meta(m):
    params = dict(m.named_parameters())
    return [(k, tuple(v.shape), str(v.dtype).split(".")[-1], v.requires_grad if k in params else None)
            for k, v in m.state_dict(keep_vars=True).items()]


_SPECS = [  # name, args, kwargs, inputs ((kind, shape) or a float shape); the first input gets the gradient
    ("PReLU", (3, 0.1), {}, [(2, 3, 4)]),
    ("GELU", (), {"approximate": "tanh"}, [(2, 4)]),
    ("Softplus", (2, 10), {}, [(2, 4)]),
    ("Threshold", (0.1, 20.), {}, [(2, 4)]),
    ("RReLU", (0.1, 0.3), {}, [(2, 4)]),
    ("GLU", (0,), {}, [(4, 3)]),
    ("Softmin", (), {"dim": 0}, [(3, 4)]),
    ("Softmax2d", (), {}, [(2, 3, 2, 2)]),
    ("Identity", (3,), {"a": 1}, [(2, 3)]),
    ("Linear", (3, 4, False), {}, [(2, 3)]),
    ("Bilinear", (3, 5, 4), {}, [(2, 3), (2, 5)]),
    ("Unflatten", (1, (3, 1)), {}, [(2, 3)]),
    ("Conv1d", (4, 4, 3, 2, 1, 2, 2, False, "reflect"), {}, [(2, 4, 9)]),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": 1, "groups": 2, "bias": False,
                                "padding_mode": "circular"}, [(2, 4, 6, 6)]),
    ("Conv2d", (3, 4, 3), {"padding": "same", "padding_mode": "replicate", "dilation": 2}, [(2, 3, 7, 7)]),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "bias": False},
     [(2, 4, 5, 5)]),
    ("Fold", ((4, 5), (2, 2)), {}, [(2, 12, 12)]),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, [(2, 3, 5, 5)]),
    ("MaxPool2d", (3, 2, 1, 1, False, True), {}, [(2, 3, 7, 7)]),
    ("AvgPool2d", (3, 2, 1, True, False, 2), {}, [(2, 3, 7, 7)]),
    ("AdaptiveAvgPool2d", ((None, 3),), {}, [(2, 3, 7, 8)]),
    ("AdaptiveMaxPool3d", (2,), {}, [(1, 2, 5, 5, 5)]),
    ("LPPool2d", (1.5, 2), {}, [(2, 3, 6, 6)]),
    ("ChannelShuffle", (2,), {}, [(2, 4, 3, 3)]),
    ("Upsample", (), {"size": (5, 7), "mode": "bilinear", "align_corners": True}, [(2, 3, 4, 4)]),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bicubic"}, [(2, 3, 4, 4)]),
    ("ConstantPad2d", ((1, 2, 0, 1), 1.5), {}, [(2, 3, 4, 4)]),
    ("ReflectionPad3d", (1,), {}, [(1, 2, 3, 3, 3)]),
    ("CircularPad1d", (2,), {}, [(2, 3, 5)]),
    ("BatchNorm1d", (3, 1e-3, 0.2, False, False), {}, [(4, 3, 5)]),
    ("BatchNorm1d", (3,), {"momentum": None}, [(4, 3)]),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, [(2, 3, 4, 4)]),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3, "bias": False}, [(2, 3, 4)]),
    ("GroupNorm", (2, 4, 1e-3, False), {}, [(2, 4, 5)]),
    ("RMSNorm", ([3, 4],), {"eps": 1e-5, "elementwise_affine": False}, [(2, 3, 4)]),
    ("LocalResponseNorm", (2, 1e-3, 0.5, 2.), {}, [(2, 5, 4)]),
    ("CrossMapLRN2d", (3,), {}, [(2, 5, 4, 4)]),
    ("Embedding", (10, 3), {"padding_idx": -2, "max_norm": 1.0, "norm_type": 1.5, "scale_grad_by_freq": True},
     [("i10", (2, 4))]),
    ("EmbeddingBag", (10, 3), {"mode": "max", "padding_idx": 0}, [("i10", (2, 4))]),
    ("RNN", (3, 4, 2, "relu", False, True, 0.0, True), {}, [(2, 5, 3)]),
    ("LSTM", (3, 4), {"num_layers": 2, "proj_size": 2, "bidirectional": True}, [(5, 2, 3)]),
    ("GRUCell", (3, 4, False), {}, [(2, 3)]),
    ("MultiheadAttention", (8, 2), {"bias": False, "add_bias_kv": True, "add_zero_attn": True, "kdim": 5, "vdim": 6,
                                    "batch_first": True}, [(2, 3, 8), (2, 4, 5), (2, 4, 6)]),
    ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16, "dropout": 0.0, "activation": "gelu",
                                         "batch_first": True, "norm_first": True, "bias": False}, [(2, 3, 8)]),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1, "ignore_index": 1, "reduction": "sum"},
     [(2, 5), ("i5", (2,))]),
    ("KLDivLoss", (), {"reduction": "batchmean", "log_target": True}, [(2, 5), (2, 5)]),
    ("GaussianNLLLoss", (), {"full": True, "eps": 1e-3}, [(2, 5), (2, 5), ("p", (2, 5))]),
    ("TripletMarginLoss", (), {"margin": 0.5, "p": 1.0, "swap": True}, [(2, 5), (2, 5), (2, 5)]),
    ("PairwiseDistance", (1.0, 1e-6, True), {}, [(2, 5), (2, 5)]),
]


@pytest.mark.parametrize("name, args, kw, inputs", _SPECS, ids=[f"{s[0]}-{i}" for i, s in enumerate(_SPECS)])
def test_module_repr_state_forward_backward(name, args, kw, inputs):
    """Same repr, state_dict entries (names, shapes, dtypes, requires_grad) and, from torch's weights, the same
    outputs, input and parameter gradients and buffers after a step, in train (deterministic ones) and eval mode."""
    torch.manual_seed(0)
    tm, em = getattr(torch.nn, name)(*args, **kw), getattr(ember.nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    assert _meta(em) == _meta(tm)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    for mode in ("train", "eval") if name != "RReLU" else ("eval",):
        xs = [_arr(a[1], a[0]) if isinstance(a[0], str) else _arr(a) for a in inputs]
        g = None
        res = []
        for lib, m in ((torch, tm), (ember, em)):
            m.train(mode == "train")
            ts = [lib.tensor(x, requires_grad=i == 0 and x.dtype == np.float32) for i, x in enumerate(xs)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = m(*ts)
            out = out[0] if isinstance(out, tuple) else out
            g = _R.standard_normal(tuple(out.shape)).astype(np.float32) if g is None else g
            out.backward(lib.tensor(g))
            res.append((out, ts[0].grad, dict(m.named_parameters()), dict(m.named_buffers())))
        (to, tg, tp, tb), (eo, eg, ep, eb) = res
        assert eo.dtype == getattr(ember, str(to.dtype).split(".")[-1]) and eo.stride() == to.stride()
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=2e-5, atol=2e-6)
        if tg is not None:
            np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=2e-5, atol=2e-6)
        for k, p in tp.items():
            np.testing.assert_allclose(ep[k].grad.numpy(), p.grad.numpy(), rtol=2e-4, atol=2e-6, err_msg=k)
            p.grad, ep[k].grad = None, None
        for k, b in tb.items():
            np.testing.assert_allclose(eb[k].numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_container_is_a_deprecated_module_of_its_keywords():
    """``nn.Container(**modules)``: a FutureWarning, then the keywords as named submodules."""
    mods = []
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match="Container"):
            mods.append(lib.nn.Container(conv=lib.nn.Conv2d(1, 2, 3), act=lib.nn.ReLU()))
    assert repr(mods[1]) == repr(mods[0])
    assert [n for n, _ in mods[1].named_parameters()] == [n for n, _ in mods[0].named_parameters()]
    assert isinstance(mods[1], ember.nn.Module) and "Container" in dir(ember.nn)


@pytest.mark.parametrize("spec", ["GELU()", "GELU('tanh')", "SiLU()", "Hardswish()", "Mish()", "Softplus()",
                                  "ELU()", "LogSigmoid()", "ZeroPad2d((1, 2, 0, 1))", "ConstantPad2d(1, 2.)",
                                  "CircularPad2d(1)", "ReflectionPad2d(1)", "RMSNorm(6)", "LayerNorm(6)",
                                  "GroupNorm(2, 4)"])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_channels_last_layout_of_outputs(spec, fmt):
    """Activations, paddings and norms keep a channels_last input's layout as torch's kernels do (circular padding
    and log-sigmoid excepted), with the same values and gradients."""
    shape = (2, 4, 6, 6) if fmt == "channels_last" else (2, 4, 3, 6, 6)
    spec = spec.replace("2d", "3d").replace("(1, 2, 0, 1)", "(1, 2, 0, 1, 1, 0)") if fmt.endswith("3d") else spec
    x, g = _arr(shape), None
    res = []
    for lib in (torch, ember):
        m = eval("lib.nn." + spec)
        t = lib.tensor(x).contiguous(memory_format=getattr(lib, fmt)).requires_grad_()
        out = m(t)
        g = _arr(tuple(out.shape)) if g is None else g
        out.backward(lib.tensor(g))
        res.append((out, t.grad))
    (to, tg), (eo, eg) = res
    if spec != "LogSigmoid()":
        assert eo.stride() == to.stride(), spec
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["gelu", "silu", "mish", "hardswish", "softplus"])
def test_large_transposed_activation_keeps_layout_and_values(fn):
    """Blocked multi-pass activations on a transposed input large enough to run block by block: torch's output
    strides (the input's dim order) and the values of the contiguous computation."""
    x = _arr((400, 700))
    res = []
    for lib in (torch, ember):
        f = getattr(lib.nn.functional, fn)
        t = lib.tensor(x)
        res.append((f(t.t()), f(t.t().contiguous()), f(t.t()[::2]), f(t.unsqueeze(0).permute(1, 2, 0))))
    for e, t in zip(res[1], res[0]):
        assert e.stride() == t.stride()
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=3e-6)
    np.testing.assert_array_equal(res[1][0].numpy(), res[1][1].numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cross_map_lrn_keeps_half_dtypes(dtype):
    x = _arr((2, 5, 3, 3))
    res = []
    for lib in (torch, ember):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        out = lib.nn.CrossMapLRN2d(3, alpha=1e-2)(t)
        out.backward(lib.ones_like(out))
        res.append((out, t.grad))
    for e, t in zip(res[1], res[0]):
        assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
        np.testing.assert_allclose(e.float().detach().numpy(), t.float().detach().numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("make, shapes", [
    (lambda lib: lib.nn.GLU(0), [(0, 3)]),
    (lambda lib: lib.nn.MultiheadAttention(8, 2), [(3, 0, 8)] * 3),
    (lambda lib: lib.nn.MultiheadAttention(8, 2, kdim=5, vdim=6, add_bias_kv=True, batch_first=True),
     [(0, 3, 8), (0, 4, 5), (0, 4, 6)]),
    (lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0), [(3, 0, 8)]),
    (lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0, batch_first=True), [(0, 3, 8), (0, 4, 8)]),
])
def test_empty_batch_through_modules(make, shapes):
    """A batch of zero samples (detection heads with no boxes) goes through, with empty gradients."""
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        ts = [lib.zeros(s, requires_grad=True) for s in shapes]
        out = make(lib)(*ts)
        out = out[0] if isinstance(out, tuple) else out
        out.sum().backward()
        res.append((tuple(out.shape), tuple(ts[0].grad.shape)))
    assert res[1] == res[0]


_CTOR_ERRORS = [
    "nn.Conv2d(3, 4, 3, padding_mode='foo')", "nn.Conv2d(3, 4, 3, groups=2)", "nn.Conv2d(3, 4, 3, groups=0)",
    "nn.Conv2d(3, 4, 3, padding='same', stride=2)", "nn.Conv2d(3, 4, 3, padding='foo')", "nn.Conv2d(-1, 4, 3)",
    "nn.ConvTranspose2d(3, 4, 3, padding_mode='reflect')", "nn.Linear(-1, 3)", "nn.Linear(3.5, 2)",
    "nn.Embedding(5, 3, padding_idx=5)", "nn.Embedding(5, 3, padding_idx=-6)", "nn.BatchNorm2d(-3)",
    "nn.GroupNorm(3, 4)", "nn.LayerNorm((3, -1))", "nn.Dropout(1.5)", "nn.Dropout(-0.1)", "nn.AlphaDropout(1.1)",
    "nn.RNN(3, 4, nonlinearity='foo')", "nn.RNN(3, 4, dropout=2)", "nn.LSTM(3, 4, proj_size=4)",
    "nn.LSTM(3, 4, proj_size=-1)", "nn.GRU(3, 4, proj_size=2)", "nn.RNN(3, 0)", "nn.RNN(3, 4, num_layers=0)",
    "nn.RNN(3, 4.0)", "nn.MultiheadAttention(7, 2)", "nn.TransformerEncoderLayer(8, 2, activation='foo')",
    "nn.Transformer(8, 3)", "nn.Unflatten(1, 3)", "nn.TripletMarginWithDistanceLoss(margin=0)",
    "nn.MultiMarginLoss(p=3)", "nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])",
    "nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 12])", "nn.Sequential(1)", "nn.ModuleList([1])",
    "nn.ModuleDict({'a': 1})", "nn.Sequential(nn.ReLU())[5]", "nn.Linear(3, 4, dtype=lib.int64)",
    "nn.Conv2d(3, 4, 3, device='foo')", "nn.Parameter(lib.zeros(2, dtype=lib.int64))",
    "nn.Embedding(5, 3, _weight=lib.zeros(4, 3))", "nn.BatchNorm1d(3).train('no')",
]


@pytest.mark.parametrize("expr", _CTOR_ERRORS)
def test_constructor_errors_match(expr):
    types = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            eval(expr, {"nn": lib.nn, "lib": lib})
        types.append(type(info.value))
    assert types[1] is types[0]


@pytest.mark.parametrize("name, args", [("Linear", (3, 4)), ("Bilinear", (2, 3, 4)), ("Conv2d", (2, 3, 3)),
                                        ("ConvTranspose3d", (2, 3, 3)), ("BatchNorm2d", (3,)),
                                        ("InstanceNorm1d", (3, 1e-5, 0.1, True, True)), ("GroupNorm", (2, 4)),
                                        ("RMSNorm", (4,)), ("EmbeddingBag", (5, 3)),
                                        ("LSTM", (3, 4, 1, True, False, 0.0, False, 2)), ("GRUCell", (3, 4)),
                                        ("MultiheadAttention", (8, 2, 0.0, True, True)),
                                        ("Transformer", (8, 2, 1, 1, 16)),
                                        ("AdaptiveLogSoftmaxWithLoss", (8, 10, [4, 6])), ("PReLU", (3,))])
@pytest.mark.parametrize("kw", [{"dtype": "float64"}, {"dtype": "float16", "device": "meta"}])
def test_factory_kwargs(name, args, kw):
    """``device=`` and ``dtype=`` reach every parameter; integer buffers stay int64."""
    res = []
    for lib in (torch, ember):
        k = {a: getattr(lib, v) if a == "dtype" else v for a, v in kw.items()}
        m = getattr(lib.nn, name)(*args, **k)
        res.append([(n, tuple(v.shape), str(v.dtype).split(".")[-1], str(v.device)) for n, v in
                    m.state_dict().items()])
    assert res[1] == res[0]


@pytest.mark.parametrize("name, args, shape", [
    ("LazyLinear", (4,), (2, 3)), ("LazyConv1d", (4, 3), (2, 3, 6)), ("LazyConvTranspose2d", (4, 3, 2), (2, 3, 4, 4)),
    ("LazyConv3d", (4, 2), (1, 3, 4, 4, 4)), ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyInstanceNorm2d", (1e-5, 0.1, True, True), (2, 3, 4, 4)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2))])
def test_lazy_materialization(name, args, shape):
    """Before the first call: an uninitialized repr; after: the class it becomes, its repr and state, in float64."""
    x = _arr(shape).astype(np.float64)
    res = []
    for lib in (torch, ember):
        m = getattr(lib.nn, name)(*args, dtype=lib.float64)
        before = (repr(m), m.has_uninitialized_params())
        y = m(lib.tensor(x))
        res.append((before, type(m).__name__, repr(m), _meta(m), tuple(y.shape), str(y.dtype).split(".")[-1]))
    assert res[1] == res[0]
