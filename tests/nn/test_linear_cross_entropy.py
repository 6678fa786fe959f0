"""linear_cross_entropy, LinearCrossEntropyLoss and LinearCrossEntropyOptions against torch: the reference path and
the chunked path, values and gradients of input, weight and bias, every reduction, class weights, ignore_index, label
smoothing, probability targets, K-dimensional loss, the fallback warning, backward-twice semantics, the chunk-size
rule, the module's state_dict, and the chunked path's smaller peak memory."""
import tracemalloc
import warnings

import numpy as np
import pytest
import torch

import ember
from .torch_ref import Const, check_fn, check_module, close, same_error

EF, TF = ember.nn.functional, torch.nn.functional
RNG = np.random.default_rng(0)
X, LW, B = RNG.standard_normal((10, 6)), RNG.standard_normal((7, 6)), RNG.standard_normal(7)
T = np.array([1, 0, 6, 3, 3, 2, -100, 5, 2, 4])
CW = RNG.uniform(0.2, 1.5, 7)
OPTIONS = [None, {}, {"batch_chunk_size": 3}, {"batch_chunk_size": 1}, {"chunking_method": "aspect_ratio"}]
FALLBACK = "options`` ignored"


def _opts(F, options):
    nn = torch.nn if F is TF else ember.nn
    return None if options is None else nn.LinearCrossEntropyOptions(**options)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("options", OPTIONS)
def test_values_and_grads(dtype, reduction, options):
    fn = lambda F, x, lw, t, b: F.linear_cross_entropy(x, lw, t, linear_bias=b, reduction=reduction,
                                                      options=_opts(F, options))
    check_fn(fn, X, LW, Const(T), B, dtype=dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 4}])
def test_class_weight_and_ignore_index(reduction, options):
    t = np.where(T == -100, 3, T)
    fn = lambda F, x, lw, t, w: F.linear_cross_entropy(x, lw, t, weight=w, ignore_index=3, reduction=reduction,
                                                      options=_opts(F, options))
    check_fn(fn, X, LW, Const(t), Const(CW))
    fn = lambda F, x, lw, t, w: F.linear_cross_entropy(x, lw, t, weight=w, reduction=reduction,
                                                      options=_opts(F, options))
    check_fn(fn, X, LW, Const(T), Const(CW), dtype="float64")


@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 2}])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_unbatched(options, reduction):
    fn = lambda F, x, lw, t, b: F.linear_cross_entropy(x, lw, t, linear_bias=b, reduction=reduction,
                                                      options=_opts(F, options))
    check_fn(fn, X[0], LW, Const(np.array(4)), B)


@pytest.mark.parametrize("case", ["smoothing", "probs", "kdim", "kdim_probs"])
@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 3}])
def test_reference_only_cases(case, options):
    """Label smoothing, probability targets and K-dimensional loss: the reference path; with options, the same
    values after torch's fallback warning."""
    lw, b, t, kw = LW, B, Const(T), {}
    if case == "smoothing":
        kw = {"label_smoothing": 0.2}
    elif case == "probs":
        t = RNG.dirichlet(np.ones(7), 10)
    else:
        lw, b = RNG.standard_normal((7, 2, 3, 6)), RNG.standard_normal((7, 2, 3))
        t = RNG.dirichlet(np.ones(7), (10, 2, 3)).transpose(0, 3, 1, 2) if case == "kdim_probs" else \
            Const(RNG.integers(0, 7, (10, 2, 3)))
    fn = lambda F, x, lw, t, b: F.linear_cross_entropy(x, lw, t, linear_bias=b, weight=(torch if F is TF else
                                                      ember).tensor(CW), options=_opts(F, options), **kw)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        check_fn(fn, X, lw, t, b, dtype="float64")
    assert sum(FALLBACK in str(w.message) for w in got) == (2 if options else 0)
    if options:
        with pytest.warns(UserWarning, match=FALLBACK) as rec:
            fn(EF, ember.tensor(X), ember.tensor(lw), ember.tensor(T) if case == "smoothing" else
               ember.tensor(t.a if isinstance(t, Const) else t), ember.tensor(b))
        assert rec[0].filename == __file__


def test_bfloat16_chunked():
    fn = lambda F, x, lw, t, b: F.linear_cross_entropy(x, lw, t, linear_bias=b, options=_opts(F, {}))
    check_fn(fn, X, LW, Const(T), B, dtype="bfloat16")


@pytest.mark.parametrize("options", [None, {"batch_chunk_size": 3}])
def test_nothing_counted(options):
    """Every target ignored, or an empty batch: 'mean' is NaN (and torch's chunked gradients NaN as well)."""
    fn = lambda F, x, lw, t: F.linear_cross_entropy(x, lw, t, options=_opts(F, options))
    check_fn(fn, X, LW, Const(np.full(10, -100)))
    check_fn(fn, X[:0], LW, Const(T[:0]))


def test_backward_twice():
    def loss(**options):
        x, lw = ember.tensor(X, requires_grad=True), ember.tensor(LW, requires_grad=True)
        return EF.linear_cross_entropy(x, lw, ember.tensor(T), options=ember.nn.LinearCrossEntropyOptions(
            batch_chunk_size=4, **options)), x

    for retain in (False, True):
        y, _ = loss()
        y.backward(retain_graph=retain)
        with pytest.raises(RuntimeError, match="chunked backward called twice"):
            y.backward()
    y, x = loss(allow_retain_graph=True)
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    close(x.grad, torch.tensor(2 * first.numpy()), "float64")
    x, lw = ember.tensor(X, requires_grad=True), ember.tensor(LW, requires_grad=True)
    y = EF.linear_cross_entropy(x, lw, ember.tensor(T), reduction="none", options=ember.nn.LinearCrossEntropyOptions())
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    xt = torch.tensor(X, requires_grad=True)
    TF.linear_cross_entropy(xt, torch.tensor(LW), torch.tensor(T), reduction="none").sum().backward()
    close(x.grad, 2 * xt.grad, "float64")


def test_no_grad_chunked():
    x, lw = ember.tensor(X, requires_grad=True), ember.tensor(LW, requires_grad=True)
    with ember.no_grad():
        y = EF.linear_cross_entropy(x, lw, ember.tensor(T), options=ember.nn.LinearCrossEntropyOptions())
    assert not y.requires_grad
    close(y, TF.linear_cross_entropy(torch.tensor(X), torch.tensor(LW), torch.tensor(T)), "float64")


def test_errors():
    x, lw, t, b = X, LW, T, B

    def both(f, **kw):
        same_error(lambda: f(EF, ember, **kw), lambda: f(TF, torch, **kw))

    both(lambda F, L: F.linear_cross_entropy(L.tensor(x[None]), L.tensor(lw), L.tensor(t)))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw[0]), L.tensor(t)))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw[:, :5]), L.tensor(t)))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw), L.tensor(t), linear_bias=L.tensor(b[:3])))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x[0]), L.tensor(lw[:, None]), L.tensor(t[0])))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw), L.tensor(RNG.random((10, 7))),
                                             ignore_index=1))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw), L.tensor(np.where(t == 2, 9, t)),
                                             options=_opts(F, {"batch_chunk_size": 3})))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x), L.tensor(lw), L.tensor(t), options=_opts(
        F, {"batch_chunk_size": 3, "chunking_method": "aspect_ratio"})))
    both(lambda F, L: F.linear_cross_entropy(L.tensor(x, dtype=L.float32), L.tensor(lw, dtype=L.float32), L.tensor(t),
                                             options=_opts(F, {"acc_dtype": L.float64})))
    for bad in ({"acc_policy": "fast"}, {"chunking_method": "aspect_ratio:0"}, {"chunking_method": "rows"},
                {"batch_chunk_size": 0}, {"acc_dtype": "float32"}):
        both(lambda F, L: _opts(F, bad), match_message="acc_dtype" not in bad)
    both(lambda F, L: (torch.nn if L is torch else ember.nn).LinearCrossEntropyLoss(4, 5, weight=L.ones(4)))
    both(lambda F, L: (torch.nn if L is torch else ember.nn).LinearCrossEntropyLoss(4, 5, label_smoothing=1.5))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape", [(4096, 64, 32000), (8, 4, 10), (100, 128, 50), (0, 4, 10), (1, 3, 1000)])
@pytest.mark.parametrize("options", [{}, {"batch_chunk_size": 16}, {"chunking_method": "aspect_ratio:4"},
                                     {"acc_policy": "balanced", "chunking_method": None}])
def test_options_adjust(dtype, shape, options):
    got = ember.nn.LinearCrossEntropyOptions(**options)._adjust(*shape, getattr(ember, dtype), ember.device("cpu"))
    want = torch.nn.LinearCrossEntropyOptions(**options)._adjust(*shape, getattr(torch, dtype), torch.device("cpu"))
    for name in ("allow_retain_graph", "batch_chunk_size", "chunking_method", "acc_policy"):
        assert getattr(got, name) == getattr(want, name), name
    assert got.acc_dtype.name == str(want.acc_dtype)[6:]


def test_options_dataclass():
    o = ember.nn.LinearCrossEntropyOptions()
    assert repr(o) == repr(torch.nn.LinearCrossEntropyOptions())
    with pytest.raises(AttributeError):
        o.batch_chunk_size = 3


@pytest.mark.parametrize("kw", [{}, {"bias": True, "reduction": "sum"}, {"out_features": (2, 3), "bias": True},
                                {"ignore_index": 2, "label_smoothing": 0.1, "reduction": "none"},
                                {"bias": True, "reduction": "none", "options": {"batch_chunk_size": 3}},
                                {"bias": True, "options": {}}])
def test_module(kw):
    kw = dict(kw)
    options = kw.pop("options", None)
    tm = torch.nn.LinearCrossEntropyLoss(6, 7, weight=torch.tensor(CW), options=_opts(TF, options), **kw)
    em = ember.nn.LinearCrossEntropyLoss(6, 7, weight=ember.tensor(CW), options=_opts(EF, options), **kw)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert repr(em) == repr(tm).replace("torch.", "ember.")
    t = RNG.integers(0, 7, (10, *kw.get("out_features", ())))
    check_module(tm, em, X, Const(t), dtype="float64")


def _peak(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_chunked_peak_memory():
    """A large-vocabulary head: the chunked path's peak stays far below the reference's (N, C) logits."""
    n, d, c = 512, 16, 4000
    x = ember.randn(n, d, requires_grad=True)
    lw = ember.randn(c, d, requires_grad=True)
    t = ember.randint(0, c, (n,))

    def run(options):
        return lambda: EF.linear_cross_entropy(x, lw, t, options=options).backward()

    reference = _peak(run(None))
    chunked = _peak(run(ember.nn.LinearCrossEntropyOptions()))
    assert reference > 2 * n * c * 4
    assert chunked < reference / 8, (chunked, reference)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_device(device, reduction):
    x, lw, b = (ember.tensor(a, device=device, requires_grad=True) for a in (X, LW, B))
    y = EF.linear_cross_entropy(x, lw, ember.tensor(T, device=device), linear_bias=b, reduction=reduction,
                                options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=4))
    y.sum().backward()
    tx, tlw, tb = (torch.tensor(a, requires_grad=True) for a in (X, LW, B))
    yt = TF.cross_entropy(TF.linear(tx, tlw, tb), torch.tensor(T), reduction=reduction)  # any torch version
    yt.sum().backward()
    assert y.device == x.device
    for got, want in ((y, yt), (x.grad, tx.grad), (lw.grad, tlw.grad), (b.grad, tb.grad)):
        close(got.cpu(), want, "float64")


def test_docstring_example():
    import doctest
    from ember.nn.modules import linear_cross_entropy_options
    result = doctest.testmod(linear_cross_entropy_options, globs={"ember": ember, "nn": ember.nn})
    assert result.failed == 0 and result.attempted == 1
