"""Weight-initialisation idioms (``nn.init`` and the default ``reset_parameters``) against torch: deterministic
results exactly, random ones by their distribution (the random streams differ by design)."""
import math
import warnings

import numpy as np
import pytest
import scipy.stats
import torch

import ember

LIBS = (ember, torch)


def _np(t):
    return t.detach().double().numpy()


def _raises_like(call):
    """``call(lib)`` raises the same exception type with the same message under ember and torch."""
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(te.type) as ee:
        call(ember)
    assert str(ee.value) == str(te.value)


def _ks(x, dist):
    return scipy.stats.kstest(np.asarray(x).ravel(), dist.cdf).pvalue


@pytest.mark.parametrize("nl", ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                                "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"])
@pytest.mark.parametrize("param", [None, 0, 3, 0.2, np.float64(0.3)])
def test_calculate_gain(nl, param):
    e, t = ember.nn.init.calculate_gain(nl, param), torch.nn.init.calculate_gain(nl, param)
    assert e == t and type(e) is type(t)


@pytest.mark.parametrize("args", [("gelu",), ("ReLU",), ("leaky_relu", True), ("leaky_relu", False),
                                  ("leaky_relu", "0.1"), ("leaky_relu", np.float32(0.1)), ("leaky_relu", [0.1])])
def test_calculate_gain_errors(args):
    _raises_like(lambda lib: lib.nn.init.calculate_gain(*args))


@pytest.mark.parametrize("shape", [(3, 5), (0, 4), (4, 0), (8, 3, 5), (16, 4, 3, 3), (2, 3, 0, 2), (4, 2, 3, 2, 1)])
def test_fan_in_and_fan_out(shape):
    e = ember.nn.init._calculate_fan_in_and_fan_out(ember.empty(*shape))
    t = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    assert e == t and all(type(v) is int for v in e)
    for mode in ("fan_in", "FAN_OUT"):
        assert ember.nn.init._calculate_correct_fan(ember.empty(*shape), mode) == \
            torch.nn.init._calculate_correct_fan(torch.empty(*shape), mode)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.zeros(3)),
    lambda lib: lib.nn.init._calculate_fan_in_and_fan_out(lib.zeros(())),
    lambda lib: lib.nn.init.xavier_uniform_(lib.zeros(5)),
    lambda lib: lib.nn.init.kaiming_normal_(lib.zeros(5)),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.zeros(3, 4), mode="fan_avg"),
    lambda lib: lib.nn.init.kaiming_uniform_(lib.zeros(3, 4), nonlinearity="gelu"),
    lambda lib: lib.nn.init.kaiming_normal_(lib.zeros(3, 4), a=True),
    lambda lib: lib.nn.init.eye_(lib.zeros(2, 2, 2)),
    lambda lib: lib.nn.init.dirac_(lib.zeros(4, 4)),
    lambda lib: lib.nn.init.dirac_(lib.zeros(6, 2, 3), groups=4),
    lambda lib: lib.nn.init.orthogonal_(lib.zeros(4)),
    lambda lib: lib.nn.init.sparse_(lib.zeros(4, 3, 2), 0.5),
    lambda lib: lib.nn.init.constant_(lib.zeros(3, dtype=lib.uint8), 300),
    lambda lib: lib.nn.init.constant_(lib.zeros(3, dtype=lib.int32), float("nan")),
    lambda lib: lib.nn.init.constant_(lib.zeros(3), lib.ones(2)),
])
def test_init_errors(call):
    _raises_like(call)


@pytest.mark.parametrize("fn", ["kaiming_uniform_", "kaiming_normal_"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (4, 0, 3, 3)])
def test_zero_element_warning(fn, shape):
    for lib in LIBS:
        t = lib.empty(*shape)
        with pytest.warns(UserWarning, match="^Initializing zero-element tensors is a no-op$"):
            assert getattr(lib.nn.init, fn)(t) is t
    for lib in LIBS:  # the other initialisers are silent no-ops
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for f in ("xavier_normal_", "orthogonal_", "trunc_normal_", "uniform_", "normal_", "zeros_"):
                getattr(lib.nn.init, f)(lib.empty(*shape))


_DETERMINISTIC = [
    ((3, 4), "float32", lambda i, t: i.constant_(t, 2.5)),
    ((3, 4), "int64", lambda i, t: i.constant_(t, 2.7)),
    ((3, 4), "int32", lambda i, t: i.constant_(t, -1)),
    ((3, 4), "uint8", lambda i, t: i.constant_(t, -1)),
    ((3, 4), "float16", lambda i, t: i.constant_(t, 1 / 3)),
    ((3, 4), "bfloat16", lambda i, t: i.constant_(t, 1 / 3)),
    ((3, 4), "float64", lambda i, t: i.constant_(t, ember.tensor(0.1, dtype=ember.float64)
                                                  if i is ember.nn.init else torch.tensor(0.1, dtype=torch.float64))),
    ((), "float32", lambda i, t: i.constant_(t, -7.0)),
    ((3, 4), "int64", lambda i, t: i.ones_(t)),
    ((3, 4), "bool", lambda i, t: i.ones_(t)),
    ((3, 4), "int16", lambda i, t: i.zeros_(t)),
    ((3, 4), "float64", lambda i, t: i.zeros_(t)),
    ((3, 5), "float32", lambda i, t: i.eye_(t)),
    ((5, 3), "int64", lambda i, t: i.eye_(t)),
    ((4, 4), "bool", lambda i, t: i.eye_(t)),
    ((4, 3, 3), "float32", lambda i, t: i.dirac_(t)),
    ((3, 5, 4), "int64", lambda i, t: i.dirac_(t)),
    ((6, 2, 3, 3), "float32", lambda i, t: i.dirac_(t, groups=2)),
    ((6, 4, 2, 5), "float64", lambda i, t: i.dirac_(t, groups=3)),
    ((4, 6, 3, 2, 3), "float32", lambda i, t: i.dirac_(t, 2)),
    ((8, 1, 3, 3, 3), "float32", lambda i, t: i.dirac_(t, groups=8)),
    ((3, 4), "float32", lambda i, t: i.constant_(t[1:, ::2], 4.0)),
    ((4, 6), "float32", lambda i, t: i.eye_(t.t()[1:5, :3])),
    ((4, 8, 3), "float32", lambda i, t: i.dirac_(t[:, ::2])),
]


@pytest.mark.parametrize("shape,dtype,fn", _DETERMINISTIC)
def test_deterministic_fills_exact(shape, dtype, fn):
    res = []
    for lib in LIBS:
        t = lib.full(shape, 9, dtype=getattr(lib, dtype))
        assert fn(lib.nn.init, t).dtype == t.dtype
        res.append(t)
    assert str(res[0].dtype)[6:] == str(res[1].dtype)[6:]
    np.testing.assert_array_equal(_np(res[0]), _np(res[1]))


_ALL = {
    "uniform_": lambda i, t: i.uniform_(t, -0.5, 0.5),
    "normal_": lambda i, t: i.normal_(t, std=0.02),
    "trunc_normal_": lambda i, t: i.trunc_normal_(t, std=0.02),
    "constant_": lambda i, t: i.constant_(t, 0.1),
    "ones_": lambda i, t: i.ones_(t),
    "zeros_": lambda i, t: i.zeros_(t),
    "eye_": lambda i, t: i.eye_(t),
    "xavier_uniform_": lambda i, t: i.xavier_uniform_(t, gain=2.0),
    "xavier_normal_": lambda i, t: i.xavier_normal_(t),
    "kaiming_uniform_": lambda i, t: i.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_normal_": lambda i, t: i.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
    "orthogonal_": lambda i, t: i.orthogonal_(t),
    "sparse_": lambda i, t: i.sparse_(t, 0.5),
    "_no_grad_uniform_": lambda i, t: i._no_grad_uniform_(t, -1, 1),
    "_no_grad_normal_": lambda i, t: i._no_grad_normal_(t, 0.0, 0.02),
    "_no_grad_trunc_normal_": lambda i, t: i._no_grad_trunc_normal_(t, 0.0, 1.0, -2.0, 2.0),
    "_no_grad_fill_": lambda i, t: i._no_grad_fill_(t, 3.0),
    "_no_grad_zero_": lambda i, t: i._no_grad_zero_(t),
}


@pytest.mark.parametrize("name", sorted(_ALL))
def test_in_place_no_graph_keeps_requires_grad(name):
    """Every initialiser writes in place without recording a graph, even with grad mode on and a leaf that requires
    grad; the parameter stays a trainable leaf and a later backward still works."""
    for lib in LIBS:
        p = lib.nn.Parameter(lib.full((6, 4), 9.0))
        leaf = lib.full((6, 4), 9.0, requires_grad=True)
        v = p._version
        with lib.enable_grad():
            for t in (p, leaf):
                assert _ALL[name](lib.nn.init, t) is t
                assert t.requires_grad and t.is_leaf and t.grad_fn is None
        assert type(p) is lib.nn.Parameter and p._version > v and not (p.detach() == 9.0).all()
        (p * leaf).sum().backward()
        np.testing.assert_array_equal(_np(p.grad), _np(leaf))


@pytest.mark.parametrize("name", sorted(_ALL))
def test_meta_tensors_are_left_alone(name):
    t = ember.empty(6, 4, device="meta")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _ALL[name](ember.nn.init, t) is t
    assert t.is_meta and t.shape == (6, 4)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nl,a", [("relu", 0), ("leaky_relu", 0), ("leaky_relu", math.sqrt(5)), ("leaky_relu", 0.2),
                                  ("tanh", 0), ("linear", 0)])
@pytest.mark.parametrize("shape", [(128, 96), (32, 16, 3, 3)])
def test_kaiming(mode, nl, a, shape):
    fan = torch.nn.init._calculate_correct_fan(torch.empty(*shape), mode)
    std = torch.nn.init.calculate_gain(nl, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    g = ember.Generator().manual_seed(1)
    w = ember.empty(*shape)
    x = _np(ember.nn.init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nl, generator=g))
    xt = _np(torch.nn.init.kaiming_uniform_(torch.empty(*shape), a=a, mode=mode, nonlinearity=nl))
    assert np.abs(x).max() <= bound * (1 + 1e-6) and np.abs(xt).max() <= bound * (1 + 1e-6)
    assert np.abs(x).max() > 0.99 * bound
    assert _ks(x, scipy.stats.uniform(-bound, 2 * bound)) > 1e-3
    x = _np(ember.nn.init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nl, generator=g))
    assert _ks(x, scipy.stats.norm(0, std)) > 1e-3
    assert abs(x.std() / std - 1) < 5 / math.sqrt(x.size)


@pytest.mark.parametrize("gain", [1.0, 5 / 3, math.sqrt(2)])
@pytest.mark.parametrize("shape", [(200, 50), (16, 8, 5, 5), (4, 6, 3, 2, 2)])
def test_xavier(gain, shape):
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    g = ember.Generator().manual_seed(2)
    x = _np(ember.nn.init.xavier_uniform_(ember.empty(*shape), gain=gain, generator=g))
    assert np.abs(x).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert _ks(x, scipy.stats.uniform(-math.sqrt(3) * std, 2 * math.sqrt(3) * std)) > 1e-3
    x = _np(ember.nn.init.xavier_normal_(ember.empty(*shape), gain, g))
    assert _ks(x, scipy.stats.norm(0, std)) > 1e-3


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04), (0.0, 0.02, -2.0, 2.0),
                                          (1.0, 2.0, 0.5, 1.5), (0.5, 1.0, 0.0, 10.0), (-1.0, 0.5, -1.5, -1.2)])
def test_trunc_normal(dtype, mean, std, a, b):
    """All samples in [a, b], and the moments of the truncated normal (to 6 standard errors)."""
    t = ember.empty(40000, dtype=getattr(ember, dtype))
    r = ember.nn.init.trunc_normal_(t, mean, std, a, b, generator=ember.Generator().manual_seed(3))
    assert r is t and t.dtype == getattr(ember, dtype)
    x = _np(t)
    lo, hi = (_np(torch.tensor([a, b], dtype=getattr(torch, dtype))))
    assert x.min() >= lo and x.max() <= hi
    dist = scipy.stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    n = x.size
    half = dtype in ("float16", "bfloat16")
    quant = (abs(mean) + std) * 2 ** -8 if half else 0.0  # rounding of the half types
    assert abs(x.mean() - dist.mean()) < 6 * dist.std() / math.sqrt(n) + quant
    assert abs(x.var() / dist.var() - 1) < 6 * math.sqrt(2 / n) + (0.02 if half else 0)
    if not half:
        assert _ks(x, dist) > 1e-3
    elif (mean, std, a, b) == (0.0, 1.0, -2.0, 2.0):  # drawn finer than the half type: as many values as torch
        tt = torch.nn.init.trunc_normal_(torch.empty(40000, dtype=getattr(torch, dtype)), mean, std, a, b)
        assert len(np.unique(x)) >= 0.9 * len(np.unique(_np(tt)))


def test_trunc_normal_far_mean_warns():
    for lib in LIBS:
        with pytest.warns(UserWarning, match=r"mean is more than 2 std from \[a, b\] in nn.init.trunc_normal_"):
            lib.nn.init.trunc_normal_(lib.empty(50), mean=10.0, std=1.0, a=-2.0, b=2.0)
    with warnings.catch_warnings():  # nothing is sampled on the meta device: no warning
        warnings.simplefilter("error")
        ember.nn.init.trunc_normal_(ember.empty(50, device="meta"), mean=10.0, std=1.0, a=-2.0, b=2.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 2, 5), (12, 2, 2), (8, 4, 3, 3), (1, 7)])
@pytest.mark.parametrize("gain", [1.0, 0.5, math.sqrt(2)])
def test_orthogonal(dtype, shape, gain):
    tol = 1e-5 if dtype == "float32" else 1e-12
    res = []
    for lib in LIBS:
        t = lib.empty(*shape, dtype=getattr(lib, dtype))
        assert lib.nn.init.orthogonal_(t, gain=gain) is t
        q = _np(t).reshape(shape[0], -1)
        gram = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(q.shape)), atol=tol)
        res.append(q)
    assert res[0].dtype == res[1].dtype


def test_orthogonal_is_haar_distributed():
    """With the sign of R's diagonal folded in, the diagonal entries of Q are symmetric around 0."""
    g = ember.Generator().manual_seed(4)
    d = np.array([np.diag(_np(ember.nn.init.orthogonal_(ember.empty(8, 8), generator=g))) for _ in range(300)])
    assert abs(d.mean()) < 6 * d.std() / math.sqrt(d.size)
    assert abs((d ** 2).mean() - 1 / 8) < 0.02


@pytest.mark.parametrize("rows,cols,sparsity,std", [(40, 30, 0.25, 0.5), (10, 200, 0.1, 0.01), (7, 50, 0.7, 1.0), (7, 20, 0.9, 1.0),
                                                    (5, 3, 0.0, 1.0)])
def test_sparse(rows, cols, sparsity, std):
    x = _np(ember.nn.init.sparse_(ember.empty(rows, cols), sparsity, std=std,
                                  generator=ember.Generator().manual_seed(5)))
    xt = _np(torch.nn.init.sparse_(torch.empty(rows, cols), sparsity, std=std))
    np.testing.assert_array_equal((x == 0).sum(0), (xt == 0).sum(0))
    assert ((x == 0).sum(0) == math.ceil(sparsity * rows)).all()
    nz = x[x != 0]
    assert nz.size == x.size - cols * math.ceil(sparsity * rows)
    assert nz.size == 0 or _ks(nz, scipy.stats.norm(0, std)) > 1e-3


def test_uniform_normal_with_generator():
    """The same seeded generator gives the same draws; it leaves the default generator untouched."""
    e = ember.nn.init
    ember.manual_seed(0)
    before = ember.rand(3)
    ember.manual_seed(0)
    a = e.uniform_(ember.empty(100, 100), -3.0, 2.0, generator=ember.Generator().manual_seed(8))
    b = e.uniform_(ember.empty(100, 100), a=-3.0, b=2.0, generator=ember.Generator().manual_seed(8))
    np.testing.assert_array_equal(_np(ember.rand(3)), _np(before))
    np.testing.assert_array_equal(_np(a), _np(b))
    x = _np(a)
    assert x.min() >= -3.0 and x.max() < 2.0 and _ks(x, scipy.stats.uniform(-3.0, 5.0)) > 1e-3
    g = ember.Generator().manual_seed(9)
    n1, n2 = e.normal_(ember.empty(100, 100), 0.5, 2.0, g), e.normal_(ember.empty(100, 100), mean=0.5, std=2.0,
                                                                       generator=g)
    assert not np.array_equal(_np(n1), _np(n2))
    assert _ks(_np(n1), scipy.stats.norm(0.5, 2.0)) > 1e-3 and _ks(_np(n2), scipy.stats.norm(0.5, 2.0)) > 1e-3
    for fn in ("trunc_normal_", "xavier_uniform_", "kaiming_normal_", "orthogonal_", "sparse_"):
        args = (0.3,) if fn == "sparse_" else ()
        r1 = getattr(e, fn)(ember.empty(6, 5), *args, generator=ember.Generator().manual_seed(1))
        r2 = getattr(e, fn)(ember.empty(6, 5), *args, generator=ember.Generator().manual_seed(1))
        np.testing.assert_array_equal(_np(r1), _np(r2))


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                                 "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_aliases(old):
    shape = (4, 2, 3) if old == "dirac" else (4, 3)
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(old, ())
    res = []
    for lib in LIBS:
        fn = getattr(lib.nn.init, old)
        assert fn.__name__ == old
        t = lib.empty(*shape)
        with pytest.warns(FutureWarning) as rec:
            assert fn(t, *args) is t
        res.append((str(rec[0].message), rec[0].filename))
    assert res[0][0] == res[1][0] == f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."
    assert res[0][1] == res[1][1] == __file__


def _bound_check(x, bound, n_min=1000):
    assert np.abs(x).max() <= bound * (1 + 1e-6)
    if x.size >= n_min:
        assert _ks(x, scipy.stats.uniform(-bound, 2 * bound)) > 1e-3


@pytest.mark.parametrize("make,weight_fan", [
    (lambda nn: nn.Linear(300, 200), 300),
    (lambda nn: nn.Conv1d(16, 32, 5), 80),
    (lambda nn: nn.Conv2d(16, 32, 3, groups=4), 36),
    (lambda nn: nn.Conv3d(4, 8, (3, 2, 1)), 24),
    (lambda nn: nn.ConvTranspose2d(16, 32, 3, groups=2), 144),
    (lambda nn: nn.ConvTranspose1d(64, 8, 4), 32),
    (lambda nn: nn.Bilinear(20, 30, 40), 20),
])
def test_default_linear_conv_init(make, weight_fan):
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight (kaiming_uniform_ with a=sqrt(5)) and bias."""
    for lib in LIBS:
        lib.manual_seed(0)
        m = make(lib.nn)
        bound = 1 / math.sqrt(weight_fan)
        _bound_check(_np(m.weight), bound)
        _bound_check(_np(m.bias), bound)
        assert m.weight.requires_grad and m.bias.requires_grad and m.weight.grad_fn is None
    ember.manual_seed(0)
    m = make(ember.nn)
    w = _np(m.weight)
    m.reset_parameters()
    assert not np.array_equal(w, _np(m.weight)) and np.abs(_np(m.weight)).max() <= 1 / math.sqrt(weight_fan) + 1e-7


@pytest.mark.parametrize("padding_idx", [None, 3, -2])
def test_default_embedding_init(padding_idx):
    for cls in ("Embedding", "EmbeddingBag"):
        rows = []
        for lib in LIBS:
            m = getattr(lib.nn, cls)(500, 64, padding_idx=padding_idx)
            x = _np(m.weight)
            rows.append(np.flatnonzero((x == 0).all(1)).tolist())
            keep = np.ones(500, bool)
            keep[rows[-1]] = False
            assert _ks(x[keep], scipy.stats.norm(0, 1)) > 1e-3
        assert rows[0] == rows[1] == ([] if padding_idx is None else [padding_idx % 500])


def test_default_norm_init_exact():
    for make in (lambda nn: nn.LayerNorm((4, 8)), lambda nn: nn.LayerNorm(8, bias=False),
                 lambda nn: nn.LayerNorm(8, elementwise_affine=False), lambda nn: nn.GroupNorm(2, 8),
                 lambda nn: nn.BatchNorm2d(8), lambda nn: nn.RMSNorm(8),
                 lambda nn: nn.InstanceNorm1d(8, affine=True, track_running_stats=True)):
        e, t = make(ember.nn), make(torch.nn)
        es, ts = e.state_dict(), t.state_dict()
        assert list(es) == list(ts)
        for k in ts:
            assert str(es[k].dtype)[6:] == str(ts[k].dtype)[6:]
            np.testing.assert_array_equal(_np(es[k]), _np(ts[k]))
        e.reset_parameters()
        for k in ts:
            np.testing.assert_array_equal(_np(e.state_dict()[k]), _np(ts[k]))


@pytest.mark.parametrize("make,hidden", [
    (lambda nn: nn.RNN(30, 100, num_layers=2, bidirectional=True), 100),
    (lambda nn: nn.LSTM(30, 64, proj_size=16, batch_first=True), 64),
    (lambda nn: nn.GRU(30, 49, bias=False), 49),
    (lambda nn: nn.LSTMCell(30, 64), 64),
    (lambda nn: nn.GRUCell(30, 64), 64),
    (lambda nn: nn.RNNCell(30, 25), 25),
])
def test_default_rnn_init(make, hidden):
    """Every weight and bias U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    e, t = make(ember.nn), make(torch.nn)
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    allx = []
    for _, p in e.named_parameters():
        x = _np(p)
        assert np.abs(x).max() <= 1 / math.sqrt(hidden) * (1 + 1e-6)
        allx.append(x.ravel())
    _bound_check(np.concatenate(allx), 1 / math.sqrt(hidden))


@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"kdim": 32, "vdim": 48, "add_bias_kv": True},
                                {"batch_first": True}])
def test_default_multihead_attention_init(kw):
    e, t = ember.nn.MultiheadAttention(64, 4, **kw), torch.nn.MultiheadAttention(64, 4, **kw)
    names = [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_parameters()] == names
    for n, p in e.named_parameters():
        x = _np(p)
        if n.endswith("bias") and not n.startswith("bias_"):
            assert (x == 0).all(), n
        elif n == "in_proj_weight":  # xavier_uniform_ over the stacked (3E, E) matrix
            _bound_check(x, math.sqrt(6 / (64 + 192)))
        elif n.endswith("proj_weight"):
            _bound_check(x, math.sqrt(6 / sum(x.shape)))
        elif n == "out_proj.weight":
            _bound_check(x, 1 / math.sqrt(64))
        else:  # bias_k, bias_v: xavier_normal_ of a (1, 1, E) tensor, fan_in = fan_out = E
            assert x.shape == (1, 1, 64) and abs(x.std() / math.sqrt(2 / 128) - 1) < 0.4
