"""Activations and lookup tables against torch: every activation at its edge values (kinks, +-0, +-inf, nan, huge
magnitudes) in float64/float32/float16/bfloat16, integer and bool inputs, in-place forms and their autograd errors,
softmax's implicit dim; Embedding, EmbeddingBag and one_hot options, gradients, layouts and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

EF, TF = ember.nn.functional, torch.nn.functional
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, 1e30, -1e30, 3e38, -3e38, 88.0, -88.0, 100.0, -100.0, 710.0, -710.0,
                  20.0, 20.0001, 19.9999, 10.0, 3.0, -3.0, 6.0, 1.0, -1.0, 0.5, -0.5, 1e-8, -1e-8, 1e4, -1e4, 40.0,
                  -40.0, 0.25, -2.5])

# name, kwargs (F.threshold's two arguments are positional)
ACTS = [("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": -0.2}), ("elu", {}),
        ("elu", {"alpha": -1.0}), ("celu", {"alpha": 0.5}), ("selu", {}), ("gelu", {}),
        ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("hardswish", {}), ("hardsigmoid", {}),
        ("hardtanh", {}), ("hardtanh", {"min_val": -0.5, "max_val": 0.5}), ("softplus", {}),
        ("softplus", {"beta": 2, "threshold": 5}), ("softplus", {"beta": 0.5}), ("softplus", {"beta": -1.0}),
        ("softsign", {}), ("softshrink", {}), ("softshrink", {"lambd": 0.0}), ("hardshrink", {}),
        ("hardshrink", {"lambd": 0.0}), ("tanhshrink", {}), ("logsigmoid", {}), ("sigmoid", {}), ("tanh", {}),
        ("rrelu", {}), ("threshold", {"threshold": 1.0, "value": -3.0})]
IDS = [n + "".join(f"-{v}" for v in k.values()) for n, k in ACTS]


def _act(F, name, x, kw):
    if name == "threshold":
        return F.threshold(x, kw["threshold"], kw["value"])
    return getattr(F, name)(x, **kw)


def _np(t):
    t = t.detach()
    return (t.float() if str(t.dtype).endswith(("float16", "bfloat16")) else t).numpy().astype(np.float64)


def _close(e, t, rtol=1e-12, atol=1e-12):
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:], (e.dtype, t.dtype)
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol, equal_nan=True)


def _raises_like(fe, ft, match=True):
    """ember raises torch's exception type (and, with ``match``, message)."""
    with pytest.raises(Exception) as want:
        ft()
    with pytest.raises(type(want.value)) as got:
        fe()
    if match:
        assert str(got.value) == str(want.value)


# -- activations -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kw", ACTS, ids=IDS)
def test_activation_edge_values_and_gradients(name, kw, dtype):
    """Values at +-0, +-inf and huge magnitudes stay finite where torch's do (softplus, logsigmoid, gelu, mish...),
    and the gradient at each kink is the subgradient torch picks."""
    x = EDGES if dtype == "float64" or name != "gelu" else EDGES[np.abs(EDGES) < 1e30]  # torch: gelu(inf) is nan
    g = np.linspace(-1, 1.3, len(x))
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = _act(F, name, xt, kw)
        y.backward(lib.tensor(g, dtype=y.dtype))
        res.append((y, xt.grad))
    tol = (1e-12, 1e-12) if dtype == "float64" else (1e-6, 1e-6)  # float32 gelu: torch is off by 4e-7 at -3
    _close(res[0][0], res[1][0], *tol)
    _close(res[0][1], res[1][1], *tol)
    # nan propagates through the value
    nan = np.array([np.nan, 1.0])
    assert np.isnan(_np(_act(EF, name, ember.tensor(nan), kw))[0]) == np.isnan(
        _np(_act(TF, name, torch.tensor(nan), kw))[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", ACTS, ids=IDS)
def test_activation_half_precision_computed_in_float32(name, kw, dtype):
    """float16/bfloat16 values are the float32 results rounded once (bit-exact with torch); gradients within an
    ulp; no overflow at the dtype's largest magnitudes."""
    big = 6e4 if dtype == "float16" else 3e38
    x = np.array([0.0, -0.0, big, -big, 12.0, -12.0, 3.0, -3.0, 1.0, -1.0, 0.5, -0.5, 6.0, 20.0, -20.0, 0.1, 2.5])
    if name == "gelu":
        x = x[np.abs(x) < 1e4]  # torch's gelu overflows to inf/nan there
    g = np.linspace(-1, 1.3, len(x))
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        y = _act(F, name, xt, kw)
        y.backward(lib.tensor(g).to(y.dtype))
        res.append((y, xt.grad))
    _close(res[0][0], res[1][0], 0, 0)
    if name not in ("tanh", "tanhshrink", "sigmoid"):  # their backward runs in the half dtype (a few ulps off)
        ulp = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
        _close(res[0][1], res[1][1], 2 * ulp, 1e-6)


@pytest.mark.parametrize("name,kw", [a for a in ACTS if a[0] not in ("hardsigmoid", "rrelu")],
                         ids=[i for i, a in zip(IDS, ACTS) if a[0] not in ("hardsigmoid", "rrelu")])
def test_activation_double_backward_at_kinks(name, kw):
    """Gradient penalties (WGAN-GP) differentiate the input gradient again: torch's second derivative, kinks
    included."""
    x = np.array([0.0, 1.0, -1.0, 3.0, -3.0, 0.5, -0.5, 6.0, 19.9, 20.1, -2.5, 1.7])
    g, h = np.linspace(-1, 1, 12), np.linspace(0.5, -1.5, 12)
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        d, = lib.autograd.grad(_act(F, name, xt, kw), xt, gt, create_graph=True)
        if not d.requires_grad:
            res.append((d, None, None))
            continue
        dd = lib.autograd.grad(d, (xt, gt), lib.tensor(h), allow_unused=True)
        res.append((d,) + tuple(lib.zeros(12, dtype=lib.float64) if a is None else a for a in dd))
    _close(res[0][0], res[1][0])
    if res[1][1] is not None:
        _close(res[0][1], res[1][1])
        _close(res[0][2], res[1][2])


def test_integer_and_bool_inputs():
    """Clamp-like activations keep integer dtypes; the others refuse them with torch's NotImplementedError; bool
    is refused by all."""
    for dt in ("int64", "int32", "int8", "uint8"):
        x = [-3, 0, 3, 7] if dt != "uint8" else [0, 3, 7, 200]
        for call in (lambda F, t: F.relu(t), lambda F, t: F.relu6(t), lambda F, t: F.hardtanh(t, -0.5, 2.5),
                     lambda F, t: F.threshold(t, 2, 9), lambda F, t: F.relu6(t, inplace=True)):
            e, t = call(EF, ember.tensor(x, dtype=getattr(ember, dt))), call(TF, torch.tensor(x,
                                                                                      dtype=getattr(torch, dt)))
            assert e.dtype.name == dt and e.tolist() == t.tolist()
    xi, ti = ember.tensor([1, -2, 3, 4]), torch.tensor([1, -2, 3, 4])
    xb, tb = ember.tensor([True, False]), torch.tensor([True, False])
    for fe, ft in [
        (lambda: EF.glu(xi), lambda: TF.glu(ti)), (lambda: EF.glu(xb), lambda: TF.glu(tb)),
        (lambda: EF.threshold(xb, 0, 1), lambda: TF.threshold(tb, 0, 1)),
        (lambda: EF.hardtanh(xb), lambda: TF.hardtanh(tb)), (lambda: EF.relu6(xb), lambda: TF.relu6(tb)),
        (lambda: EF.hardtanh(xi.byte(), -1.5, 2), lambda: TF.hardtanh(ti.byte(), -1.5, 2)),
        (lambda: EF.hardtanh(xi.byte()), lambda: TF.hardtanh(ti.byte())),
        (lambda: EF.relu(xb), lambda: TF.relu(tb)),
        (lambda: EF.rrelu(xi, training=True), lambda: TF.rrelu(ti, training=True)),
        (lambda: EF.rrelu(xi), lambda: TF.rrelu(ti)),
        (lambda: EF.rrelu(xi.half(), training=True), lambda: TF.rrelu(ti.half(), training=True)),
        (lambda: EF.leaky_relu(xi), lambda: TF.leaky_relu(ti)), (lambda: EF.gelu(xi), lambda: TF.gelu(ti)),
        (lambda: EF.softplus(xi), lambda: TF.softplus(ti)), (lambda: EF.silu(xi), lambda: TF.silu(ti)),
        (lambda: EF.prelu(xi, ember.tensor([1])), lambda: TF.prelu(ti, torch.tensor([1]))),
        (lambda: EF.softmax(xi, 0), lambda: TF.softmax(ti, 0)),
    ]:
        _raises_like(fe, ft)
    # softmax of integers with an explicit floating dtype
    _close(EF.softmax(xi, 0, dtype=ember.float64), TF.softmax(ti, 0, dtype=torch.float64))
    assert EF.rrelu(ember.tensor([-1.0, 2.0]).bfloat16(), training=True).dtype is ember.bfloat16


INPLACE = ["relu", "relu6", "hardtanh", "elu", "selu", "celu", "leaky_relu", "rrelu", "silu", "mish", "hardswish",
           "hardsigmoid", "threshold"]


def _inplace(F, name, x):
    if name == "threshold":
        return F.threshold(x, 0.1, -2.0, inplace=True)
    return getattr(F, name)(x, inplace=True)


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_semantics_and_errors(name):
    """``inplace=True`` returns the input itself, bumps its version, writes through views to their base (gradients
    flow to the base's producer), and raises torch's errors on leaves and on views of leaves that require grad,
    on multi-output views, and at backward when the overwritten tensor was saved."""
    x = np.array([[-1.0, 0.0, 2.0], [-3.0, 0.5, 4.0]])
    g = np.arange(6.0).reshape(2, 3)
    res = []
    for lib, F in ((ember, EF), (torch, TF)):
        t = lib.tensor(x)
        v = t._version
        assert _inplace(F, name, t) is t and t._version > v
        a = lib.tensor(x, requires_grad=True)
        h = a * 1.5
        r = _inplace(F, name, h.t()[1:])  # a strided view of a non-leaf
        (h * lib.tensor(g)).sum().backward()
        res.append((t, r, h, a.grad))
    for e, t in zip(*res):
        _close(e, t)
    for fe, ft in [
        (lambda L, F: _inplace(F, name, L.ones(3, requires_grad=True)), None),
        (lambda L, F: _inplace(F, name, L.ones(3, requires_grad=True)[:2]), None),
        (lambda L, F: _inplace(F, name, (L.ones(2, 3, requires_grad=True) * 2).unbind(0)[0]), None),
        (lambda L, F: _inplace(F, name, (L.ones(2, 3, requires_grad=True) * 2).split(1)[0]), None),
    ]:
        _raises_like(lambda: fe(ember, EF), lambda: fe(torch, TF), match=False)

    def saved(L, F):
        a = L.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        h = a * 1
        s = h.sin()  # saves h
        _inplace(F, name, h)
        s.sum().backward()
    _raises_like(lambda: saved(ember, EF), lambda: saved(torch, TF), match=False)
    # under no_grad a leaf may be overwritten
    for lib, F in ((ember, EF), (torch, TF)):
        a = lib.tensor([-1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            _inplace(F, name, a)
        res.append(a.detach())
    _close(res[2], res[3])


def test_inplace_modules_in_a_sequential():
    """``nn.ReLU(inplace=True)`` after a conv (the torchvision idiom): same outputs and gradients, and reprs."""
    names = [("ReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.5}), ("Hardswish", {}),
             ("ReLU6", {}), ("SiLU", {}), ("Hardtanh", {"min_val": -0.3, "max_val": 0.3}), ("CELU", {}),
             ("Threshold", {"threshold": 0.1, "value": 7.0})]
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5))
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)) * 0.3
    for n, kw in names:
        res = []
        for lib in (ember, torch):
            m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, bias=False), getattr(lib.nn, n)(inplace=True, **kw))
            with lib.no_grad():
                m[0].weight.copy_(lib.tensor(w, dtype=lib.float32))
            xt = lib.tensor(x, dtype=lib.float32, requires_grad=True)
            y = m(xt)
            y.backward(lib.ones_like(y))
            res.append((y, xt.grad, m[0].weight.grad, repr(m)))
        assert res[0][3] == res[1][3]
        for a, b in zip(res[0][:3], res[1][:3]):
            _close(a, b, 1e-5, 1e-5)


def test_softmax_implicit_dim_rule_and_softmax2d():
    """``dim=None``: dim 0 for 0-, 1- and 3-D inputs, 1 otherwise, with torch's deprecation warning; Softmax2d
    normalizes over the channels of a 3-D or 4-D input."""
    for nd in range(5):
        x = np.random.default_rng(nd).standard_normal((2, 3, 4, 5)[:nd])
        for fe, ft in [(EF.softmax, TF.softmax), (EF.log_softmax, TF.log_softmax), (EF.softmin, TF.softmin),
                       (lambda t: ember.nn.Softmax()(t), lambda t: torch.nn.Softmax()(t))]:
            with warnings.catch_warnings(record=True) as we:
                warnings.simplefilter("always")
                e = fe(ember.tensor(x))
            with warnings.catch_warnings(record=True) as wt:
                warnings.simplefilter("always")
                t = ft(torch.tensor(x))
            _close(e, t)
            assert [str(w.message) for w in we] == [str(w.message) for w in wt] and len(we) == 1
    for shape in [(3, 2, 2), (2, 3, 2, 2)]:
        x = np.random.default_rng(9).standard_normal(shape)
        _close(ember.nn.Softmax2d()(ember.tensor(x)), torch.nn.Softmax2d()(torch.tensor(x)))
    for shape in [(2, 3), (1, 1, 1, 1, 1)]:
        _raises_like(lambda: ember.nn.Softmax2d()(ember.ones(shape)), lambda: torch.nn.Softmax2d()(torch.ones(shape)))
    # -inf rows, and a float16 input normalized in float32
    x = np.array([[-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0], [1e4, 0.0, -1e4]])
    for fe, ft in [(EF.softmax, TF.softmax), (EF.log_softmax, TF.log_softmax)]:
        _close(fe(ember.tensor(x), 1), ft(torch.tensor(x), 1))
        _close(fe(ember.tensor(x[2:]).half(), 1, dtype=ember.float32), ft(torch.tensor(x[2:]).half(), 1,
                                                                          dtype=torch.float32))


def test_glu_prelu_rrelu():
    """GLU over each dim (odd sizes refused), PReLU per channel with its weight's gradient and second derivative,
    RReLU's evaluation slope and its training slopes inside ``[lower, upper]``."""
    x = np.random.default_rng(0).standard_normal((2, 4, 6))
    for dim in (0, 1, 2, -1):
        res = []
        for lib in (ember, torch):
            xt = lib.tensor(x, requires_grad=True)
            y = lib.nn.GLU(dim)(xt)
            y.backward(lib.ones_like(y) * 0.5)
            res.append((y, xt.grad))
        _close(*[r[0] for r in res])
        _close(*[r[1] for r in res])
    _raises_like(lambda: ember.nn.GLU(1)(ember.ones(2, 3)), lambda: torch.nn.GLU(1)(torch.ones(2, 3)))
    _raises_like(lambda: EF.glu(ember.ones(2, 4), 2), lambda: TF.glu(torch.ones(2, 4), 2), match=False)
    res = []
    for lib in (ember, torch):
        m = lib.nn.PReLU(4, init=0.1).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0]))
        xt = lib.tensor(x, requires_grad=True)
        gx, = lib.autograd.grad(m(xt).pow(2).sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        res.append((gx, xt.grad, m.weight.grad, repr(m)))
    assert res[0][3] == res[1][3] == "PReLU(num_parameters=4)"
    for a, b in zip(res[0][:3], res[1][:3]):
        _close(a, b)
    _raises_like(lambda: ember.nn.PReLU(3)(ember.ones(2, 4)), lambda: torch.nn.PReLU(3)(torch.ones(2, 4)))
    xe = ember.tensor([-1.0, 2.0, -3.0])
    _close(ember.nn.RReLU(0.1, 0.3).eval()(xe), torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor([-1.0, 2.0, -3.0])))
    xe = ember.tensor(np.linspace(-3, 3, 1000), requires_grad=True)
    y = ember.nn.RReLU(0.1, 0.3)(xe)
    y.backward(ember.ones_like(y))
    slopes = xe.grad[:500]
    assert 0.1 <= slopes.min().item() and slopes.max().item() <= 0.3 and slopes.std().item() > 0.03
    np.testing.assert_allclose((y[:500] / xe[:500]).detach().numpy(), slopes.numpy(), rtol=1e-12)
    assert (xe.grad[500:] == 1).all()


# -- embeddings ------------------------------------------------------------------------------------------------------
W = np.random.default_rng(0).standard_normal((7, 4)) * 2


def _emb(lib, dtype="float64", **kw):
    m = lib.nn.Embedding(7, 4, **kw)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
    return m.to(getattr(lib, dtype))


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                {"padding_idx": -6, "scale_grad_by_freq": True}, {"max_norm": 1.0},
                                {"max_norm": 1.5, "norm_type": 1.0}, {"max_norm": 0.5, "norm_type": float("inf")},
                                {"max_norm": 2.0, "norm_type": 3.0}, {"sparse": True},
                                {"sparse": True, "padding_idx": 1}])
@pytest.mark.parametrize("index", ["2d", "0d", "int32"])
def test_embedding_options(kw, index):
    """Lookups of 0-d, 2-D and int32 indices; padding rows get no gradient; max_norm renormalizes the looked-up
    rows of the weight in place (other norms too); sparse weights get a sparse COO gradient."""
    if index == "0d" and kw.get("sparse") and "padding_idx" in kw:
        kw = {"sparse": True}  # torch's sparse backward fails on a 0-d index with padding_idx
    idx = {"2d": [[1, 2, 1], [0, 6, 2]], "0d": 6, "int32": [[1, 2, 1], [0, 6, 2]]}[index]
    res = []
    for lib in (ember, torch):
        m = _emb(lib, **kw)
        i = lib.tensor(idx, dtype=lib.int32 if index == "int32" else lib.int64)
        y = m(i)
        y.backward(lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))))
        res.append((y, m.weight.detach().clone(), m.weight.grad, repr(m)))
    assert res[0][3] == res[1][3]
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])  # the renormalized table
    ge, gt = res[0][2], res[1][2]
    assert ge.is_sparse == gt.is_sparse
    if gt.is_sparse:
        assert ge.layout is ember.sparse_coo and ge._nnz() == gt._nnz()
        assert ge._indices().tolist() == gt._indices().tolist()
        ge, gt = ge.to_dense(), gt.to_dense()
    _close(ge, gt)
    if kw.get("padding_idx") is not None:
        assert not ge[kw["padding_idx"]].any()


def test_embedding_double_backward_and_half_weights():
    """A gradient penalty through the table, and float16/bfloat16 tables."""
    res = []
    for lib in (ember, torch):
        w = lib.tensor(W, requires_grad=True)
        y = TF.embedding if lib is torch else EF.embedding
        gw, = lib.autograd.grad(y(lib.tensor([[1, 1, 3], [0, 4, 1]]), w, padding_idx=4).pow(2).sum(), w,
                                create_graph=True)
        gw.pow(2).sum().backward()
        res.append((gw, w.grad))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])
    for dt in ("float16", "bfloat16"):
        e, t = _emb(ember, dt, max_norm=1.0), _emb(torch, dt, max_norm=1.0)
        _close(e(ember.tensor([3, 1])), t(torch.tensor([3, 1])), 0, 0)
        _close(e.weight, t.weight, 0, 0)


def test_from_pretrained():
    """Frozen by default; padding_idx does not zero the given row; the table is the given tensor, renormalized in
    place by max_norm."""
    for lib in (ember, torch):
        pre = lib.tensor([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]])
        m = lib.nn.Embedding.from_pretrained(pre, padding_idx=1, max_norm=2.0)
        assert not m.weight.requires_grad and m.padding_idx == 1 and m.weight.data_ptr() == pre.data_ptr()
        assert repr(m) == "Embedding(3, 2, padding_idx=1, max_norm=2.0)"
        y = m(lib.tensor([1, 2]))
        np.testing.assert_allclose(pre.numpy(), [[1, 2], [1.2, 1.6], [0.5, 0.5]], rtol=1e-6)
        assert not y.requires_grad
        m = lib.nn.Embedding.from_pretrained(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), freeze=False, padding_idx=0)
        m(lib.tensor([0, 1, 1])).sum().backward()
        assert m.weight.grad.tolist() == [[0.0, 0.0], [2.0, 2.0]]
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), mode="max", padding_idx=1)
        assert not bag.weight.requires_grad and bag(lib.tensor([[0, 1]])).tolist() == [[1.0, 2.0]]


def test_embedding_errors():
    we, wt = ember.tensor(W), torch.tensor(W)
    for fe, ft in [
        (lambda: EF.embedding(ember.tensor([1, 7]), we), lambda: TF.embedding(torch.tensor([1, 7]), wt)),
        (lambda: EF.embedding(ember.tensor([-1]), we), lambda: TF.embedding(torch.tensor([-1]), wt)),
        (lambda: EF.embedding(ember.tensor([1, 70], dtype=ember.int32), we),
         lambda: TF.embedding(torch.tensor([1, 70], dtype=torch.int32), wt)),
        (lambda: EF.embedding(ember.tensor([1.0]), we), lambda: TF.embedding(torch.tensor([1.0]), wt)),
        (lambda: EF.embedding(ember.tensor([1], dtype=ember.int16), we),
         lambda: TF.embedding(torch.tensor([1], dtype=torch.int16), wt)),
        (lambda: EF.embedding([1, 2], we), lambda: TF.embedding([1, 2], wt)),
        (lambda: EF.embedding(ember.tensor([1]), we, padding_idx=7), lambda: TF.embedding(torch.tensor([1]), wt,
                                                                                         padding_idx=7)),
        (lambda: ember.nn.Embedding(5, 3, padding_idx=-6), lambda: torch.nn.Embedding(5, 3, padding_idx=-6)),
        (lambda: ember.nn.Embedding(5, 3, sparse=True, scale_grad_by_freq=True)(ember.tensor([1])).sum().backward(),
         lambda: torch.nn.Embedding(5, 3, sparse=True, scale_grad_by_freq=True)(torch.tensor([1])).sum().backward()),
    ]:
        _raises_like(fe, ft, match=False)


BAGS = [("sum", {}), ("mean", {}), ("max", {}), ("sum", {"padding_idx": 4}), ("mean", {"padding_idx": -3}),
        ("max", {"padding_idx": 4}), ("sum", {"include_last_offset": True}), ("mean", {"include_last_offset": True}),
        ("max", {"include_last_offset": True}), ("sum", {"max_norm": 1.0}), ("mean", {"max_norm": 1.0}),
        ("sum", {"sparse": True}), ("mean", {"sparse": True, "padding_idx": 4})]


@pytest.mark.parametrize("mode,kw", BAGS, ids=[f"{m}-{k}" for m, k in BAGS])
def test_embedding_bag_options(mode, kw):
    """Bags from offsets (empty bags give zeros) and from a 2-D input: values, the weight's gradient and layout,
    the renormalized table."""
    inp, off = [1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5]
    if kw.get("include_last_offset"):
        off = off + [8]
    for i, o in [(inp, off), ([[1, 2, 4], [5, 4, 4]], None), ([4, 4, 1], [0, 2] + [3] * bool(
            kw.get("include_last_offset")))]:
        res = []
        for lib in (ember, torch):
            m = lib.nn.EmbeddingBag(7, 4, mode=mode, **kw).double()
            with lib.no_grad():
                m.weight.copy_(lib.tensor(W))
            y = m(lib.tensor(i), None if o is None else lib.tensor(o))
            y.backward(lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))))
            g = m.weight.grad
            res.append((y, m.weight.detach(), g.to_dense() if g.is_sparse else g, g.is_sparse, repr(m)))
        assert res[0][3:] == res[1][3:]
        for a, b in zip(res[0][:3], res[1][:3]):
            _close(a, b)


def test_embedding_bag_per_sample_weights_and_edge_bags():
    """per_sample_weights (sum only) with its own gradient; int32 indices and offsets; no bags at all; float16
    tables summed in float32."""
    inp, off, psw = [1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5], np.linspace(-1, 2, 8)
    for o, kw in [(off, {}), (off + [8], {"include_last_offset": True}), (off, {"padding_idx": 4})]:
        res = []
        for lib, F in ((ember, EF), (torch, TF)):
            w, p = lib.tensor(W, requires_grad=True), lib.tensor(psw, requires_grad=True)
            y = F.embedding_bag(lib.tensor(inp), w, lib.tensor(o), mode="sum", per_sample_weights=p, **kw)
            y.backward(lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape))))
            res.append((y, w.grad, p.grad))
        for a, b in zip(*res):
            _close(a, b)
    for mode in ("sum", "mean", "max"):
        for dt in ("int32", "int64"):
            e = EF.embedding_bag(ember.tensor(inp, dtype=getattr(ember, dt)), ember.tensor(W),
                                 ember.tensor(off, dtype=getattr(ember, dt)), mode=mode)
            _close(e, TF.embedding_bag(torch.tensor(inp, dtype=getattr(torch, dt)), torch.tensor(W),
                                       torch.tensor(off, dtype=getattr(torch, dt)), mode=mode))
        for lo, kw in [([], {}), ([0], {"include_last_offset": True})]:
            e = EF.embedding_bag(ember.tensor([1, 2]), ember.tensor(W, requires_grad=True), ember.tensor(lo,
                                 dtype=ember.int64), mode=mode, **kw)
            assert e.shape == (0, 4) and e.requires_grad
        e = EF.embedding_bag(ember.tensor([], dtype=ember.int64), ember.tensor(W), ember.tensor([0, 0]), mode=mode)
        _close(e, TF.embedding_bag(torch.tensor([], dtype=torch.int64), torch.tensor(W), torch.tensor([0, 0]),
                                   mode=mode))
    rng = np.random.default_rng(1)
    big_inp, big_off = rng.integers(0, 50, 300), np.sort(rng.integers(0, 300, 30))
    big_off[0] = 0
    table, p = rng.standard_normal((50, 8)) * 2, rng.standard_normal(300)
    for mode in ("sum", "mean", "max"):
        ps = (lambda lib: lib.tensor(p).half()) if mode == "sum" else (lambda lib: None)
        _close(EF.embedding_bag(ember.tensor(big_inp), ember.tensor(table).half(), ember.tensor(big_off), mode=mode,
                                per_sample_weights=ps(ember)),
               TF.embedding_bag(torch.tensor(big_inp), torch.tensor(table).half(), torch.tensor(big_off), mode=mode,
                                per_sample_weights=ps(torch)), 0, 0)


def test_embedding_bag_errors():
    i, w, o = ember.tensor([1, 2, 3]), ember.tensor(W), ember.tensor([0, 1])
    it, wt, ot = torch.tensor([1, 2, 3]), torch.tensor(W), torch.tensor([0, 1])
    for call, match in [
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode="mean", per_sample_weights=lib.ones(3,
                                                 dtype=lib.float64)), True),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode="max", per_sample_weights=lib.ones(3,
                                                 dtype=lib.float64)), True),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=lib.ones(3)), False),
        # decreasing offsets (torch refuses them for float32 tables)
        (lambda lib, F, i, w, o: F.embedding_bag(i, w.float(), lib.tensor([0, 3, 1])), False),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w.float(), lib.tensor([0, 2, 1]), mode="sum"), False),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, lib.tensor([], dtype=lib.int64), include_last_offset=True),
         True),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, lib.tensor([1, 2])), False),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, lib.tensor([0, 4])), False),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w), True),
        (lambda lib, F, i, w, o: F.embedding_bag(i.reshape(1, 3), w, o), False),
        (lambda lib, F, i, w, o: F.embedding_bag(lib.tensor([1, 7]), w, o), False),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode="max", scale_grad_by_freq=True), True),
        (lambda lib, F, i, w, o: F.embedding_bag(i, w, o, mode="max", sparse=True), True),
        (lambda lib, F, i, w, o: lib.nn.EmbeddingBag(5, 3, padding_idx=5), True),
    ]:
        _raises_like(lambda: call(ember, EF, i, w, o), lambda: call(torch, TF, it, wt, ot), match)


def test_one_hot():
    """num_classes=-1 infers one more than the largest class; 0-d, 2-D and non-contiguous inputs; torch's errors
    for negative or too large classes, empty inputs without a class count, and non-int64 inputs."""
    for x, n in [([[0, 2], [4, 1]], -1), (2, 4), (2, -1), ([], 3), ([[1, 0], [2, 1]], 3)]:
        e, t = EF.one_hot(ember.tensor(x, dtype=ember.int64), n), TF.one_hot(torch.tensor(x, dtype=torch.long), n)
        assert e.dtype is ember.int64 and e.shape == t.shape and e.tolist() == t.tolist()
    e, t = EF.one_hot(ember.tensor([[1, 0], [2, 1]]).t(), 3), TF.one_hot(torch.tensor([[1, 0], [2, 1]]).t(), 3)
    assert e.tolist() == t.tolist()
    assert EF.one_hot(ember.tensor([1, 2]), num_classes=3).float().dtype is ember.float32
    for x, n, dt in [([0, -1], -1, "int64"), ([0, -1], 3, "int64"), ([0, 3], 3, "int64"), ([], 0, "int64"),
                     ([], -1, "int64"), ([1], -2, "int64"), ([1], 0, "int64"), ([1], 3, "int32"), ([1], 3, "uint8"),
                     ([True], -1, "bool"), ([1.0], 3, "float32")]:
        _raises_like(lambda: EF.one_hot(ember.tensor(x, dtype=getattr(ember, dt)), n),
                     lambda: TF.one_hot(torch.tensor(x, dtype=getattr(torch, dt)), n))
