"""Losses (functional and modules) and distances against torch: values and gradients for every reduction,
weights, ignore_index, label smoothing, K-dimensional inputs, stability at extreme logits, CTC, gradcheck of the
primitives, legacy reduction flags and errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from .torch_ref import Const, check_fn, check_module, close, same_error

E = ember.nn.modules
EF = ember.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(0)
REDUCTIONS = ["none", "mean", "sum"]

X = RNG.standard_normal((5, 4))
T = np.array([1, 0, 3, 3, 2])
W = RNG.uniform(0.2, 1.5, 4)
P = RNG.uniform(0.05, 0.95, (5, 4))
Y = (RNG.random((5, 4)) > 0.5).astype(np.float64)
S = np.sign(RNG.standard_normal(5))

# name, fn(F, *args, reduction=...), args
CASES = [
    ("ce", lambda F, x, t, **k: F.cross_entropy(x, t, **k), (X, Const(T))),
    ("ce_weight_ignore", lambda F, x, t, w, **k: F.cross_entropy(x, t, weight=w, ignore_index=3, **k),
     (X, Const(T), Const(W))),
    ("ce_smoothing", lambda F, x, t, **k: F.cross_entropy(x, t, label_smoothing=0.3, **k), (X, Const(T))),
    ("ce_smoothing_weight", lambda F, x, t, w, **k: F.cross_entropy(x, t, weight=w, ignore_index=0,
                                                                     label_smoothing=0.2, **k),
     (X, Const(T), Const(W))),
    ("ce_kdim", lambda F, x, t, **k: F.cross_entropy(x, t, **k),
     (RNG.standard_normal((2, 4, 3, 2)), Const(RNG.integers(0, 4, (2, 3, 2))))),
    ("ce_kdim_smoothing", lambda F, x, t, w, **k: F.cross_entropy(x, t, weight=w, label_smoothing=0.1, **k),
     (RNG.standard_normal((2, 4, 3)), Const(RNG.integers(0, 4, (2, 3))), Const(W))),
    ("ce_1d", lambda F, x, t, **k: F.cross_entropy(x, t, **k), (X[0], Const(np.array(2)))),
    ("ce_uint8_target", lambda F, x, t, **k: F.cross_entropy(x, t, **k), (X, Const(T.astype(np.uint8)))),
    ("ce_probs", lambda F, x, t, **k: F.cross_entropy(x, t, **k), (X, P)),
    ("ce_probs_weight_smoothing", lambda F, x, t, w, **k: F.cross_entropy(x, t, weight=w, label_smoothing=0.2, **k),
     (RNG.standard_normal((2, 4, 3)), RNG.random((2, 4, 3)), Const(W))),
    ("nll", lambda F, x, t, w, **k: F.nll_loss(x, t, weight=w, ignore_index=1, **k), (X, Const(T), Const(W))),
    ("nll_kdim", lambda F, x, t, **k: F.nll_loss(x, t, **k),
     (RNG.standard_normal((2, 4, 2, 2, 2)), Const(RNG.integers(0, 4, (2, 2, 2, 2))))),
    ("bce", lambda F, p, y, w, **k: F.binary_cross_entropy(p, y, weight=w, **k), (P, Y, Const(W))),
    ("bce_soft_target", lambda F, p, y, **k: F.binary_cross_entropy(p, y, **k), (P, P[::-1].copy())),
    ("bce_logits", lambda F, x, y, w, pw, **k: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw, **k),
     (X * 3, Y, Const(W), Const(RNG.uniform(0.5, 2, 4)))),
    ("bce_logits_plain", lambda F, x, y, **k: F.binary_cross_entropy_with_logits(x, y, **k), (X, P)),
    ("kl_div", lambda F, x, y, **k: F.kl_div(x, y, **k), (X, P)),
    ("kl_div_log_target", lambda F, x, y, **k: F.kl_div(x, y, log_target=True, **k), (X, X[::-1].copy())),
    ("l1", lambda F, x, y, **k: F.l1_loss(x, y, **k), (X, P)),
    ("l1_weight", lambda F, x, y, w, **k: F.l1_loss(x, y, weight=w, **k), (X, P, P[::-1].copy())),
    ("mse", lambda F, x, y, **k: F.mse_loss(x, y, **k), (X, P)),
    ("mse_weight", lambda F, x, y, w, **k: F.mse_loss(x, y, weight=w, **k), (X, P, P[::-1].copy())),
    ("smooth_l1", lambda F, x, y, **k: F.smooth_l1_loss(x, y, beta=0.5, **k), (X, P)),
    ("smooth_l1_beta0", lambda F, x, y, **k: F.smooth_l1_loss(x, y, beta=0.0, **k), (X, P)),
    ("huber", lambda F, x, y, **k: F.huber_loss(x, y, delta=0.7, **k), (X, P)),
    ("huber_weight", lambda F, x, y, w, **k: F.huber_loss(x, y, weight=w, **k), (X, P, P[::-1].copy())),
    ("poisson", lambda F, x, y, **k: F.poisson_nll_loss(x, y, full=True, **k), (X, P * 3)),
    ("poisson_linear", lambda F, x, y, **k: F.poisson_nll_loss(x, y, log_input=False, **k), (P, P * 3)),
    ("gaussian", lambda F, x, y, v, **k: F.gaussian_nll_loss(x, y, v, full=True, **k),
     (X, P, RNG.uniform(0.1, 2, (5, 1)))),
    ("gaussian_clamped_var", lambda F, x, y, v, **k: F.gaussian_nll_loss(x, y, v, eps=0.3, **k),
     (X, P, RNG.uniform(0, 1, 5))),
    ("gaussian_float_var", lambda F, x, y, **k: F.gaussian_nll_loss(x, y, 0.5, **k), (X, P)),
    ("cosine_embedding", lambda F, a, b, y, **k: F.cosine_embedding_loss(a, b, y, margin=0.2, **k),
     (X, P, Const(S))),
    ("cosine_embedding_1d", lambda F, a, b, y, **k: F.cosine_embedding_loss(a, b, y, **k),
     (X[0], P[0], Const(np.array(-1.0)))),
    ("margin_ranking", lambda F, a, b, y, **k: F.margin_ranking_loss(a, b, y, margin=0.1, **k),
     (X[:, 0].copy(), P[:, 0].copy(), S)),
    ("hinge_embedding", lambda F, a, y, **k: F.hinge_embedding_loss(a, y, margin=0.5, **k), (X, Const(np.sign(X)))),
    ("multi_margin", lambda F, a, t, **k: F.multi_margin_loss(a, t, **k), (X, Const(T))),
    ("multi_margin_p2_weight", lambda F, a, t, w, **k: F.multi_margin_loss(a, t, p=2, margin=0.8, weight=w, **k),
     (X, Const(T), Const(W))),
    ("multi_margin_1d", lambda F, a, t, **k: F.multi_margin_loss(a, t, **k), (X[0], Const(np.array(1)))),
    ("multilabel_margin", lambda F, a, t, **k: F.multilabel_margin_loss(a, t, **k),
     (X, Const(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 1, 2], [0, 0, -1, 2], [2, -1, 0, 0]])))),
    ("multilabel_margin_1d", lambda F, a, t, **k: F.multilabel_margin_loss(a, t, **k),
     (X[0], Const(np.array([2, 1, -1, 3])))),
    ("multilabel_soft_margin", lambda F, a, y, w, **k: F.multilabel_soft_margin_loss(a, y, weight=w, **k), (X, Y, W)),
    ("soft_margin", lambda F, a, y, **k: F.soft_margin_loss(a, y, **k), (X, Const(np.sign(X)))),
    ("triplet", lambda F, a, p, n, **k: F.triplet_margin_loss(a, p, n, margin=2.0, swap=True, **k),
     (X, P, X[::-1].copy())),
    ("triplet_p1", lambda F, a, p, n, **k: F.triplet_margin_loss(a, p, n, p=1, eps=0.1, **k), (X, P, P * 2)),
    ("triplet_distance", lambda F, a, p, n, **k: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), swap=True, **k),
     (X, P, X[::-1].copy())),
    ("triplet_distance_default", lambda F, a, p, n, **k: F.triplet_margin_with_distance_loss(a, p, n, **k),
     (X, P, P * 2)),
]


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loss_vs_torch(name, fn, args, reduction, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning
        check_fn(fn, *args, dtype=dtype, reduction=reduction)


@pytest.mark.parametrize("name,fn,args", [c for c in CASES if c[0] in ("ce", "ce_smoothing_weight", "ce_probs",
                                                                       "nll", "bce", "bce_logits", "mse", "huber")],
                         ids=lambda c: c if isinstance(c, str) else "")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_loss_half(name, fn, args, dtype):
    check_fn(fn, *args, dtype=dtype, reduction="mean")


def test_kl_div_batchmean_and_warning():
    check_fn(lambda F, x, y: F.kl_div(x, y, reduction="batchmean"), X, P)
    check_fn(lambda F, x, y: F.kl_div(x, y, reduction="batchmean", log_target=True), X[0], X[1])
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        EF.kl_div(ember.tensor(X), ember.tensor(P))
    check_module(torch.nn.KLDivLoss(reduction="batchmean"), E.KLDivLoss(reduction="batchmean"), X, P)


@pytest.fixture(autouse=True)
def _no_kl_warning():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "reduction: 'mean' divides the total loss")
        yield


def test_extreme_logits():
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 5.0], [3.0, 1e4, -1e4]])
    for dtype in ("float32", "float64"):
        for kw in ({}, {"label_smoothing": 0.1}, {"weight": Const(np.array([1.0, 2.0, 0.5]))}):
            w = kw.pop("weight", None)
            args = (logits, Const(np.array([1, 1, 2]))) + ((w,) if w is not None else ())
            ye, _ = check_fn(lambda F, x, t, *w: F.cross_entropy(x, t, *w, **kw), *args, dtype=dtype)
            assert np.isfinite(ye.detach().numpy()).all()
        check_fn(lambda F, x, t: F.cross_entropy(x, t), logits, np.array([[0.0, 1, 0], [0.5, 0.5, 0], [1, 0, 0]]),
                 dtype=dtype)
        check_fn(lambda F, x, t: F.nll_loss(F.log_softmax(x, 1), t), logits, Const(np.array([1, 1, 2])), dtype=dtype)
        y = np.array([[1.0, 0, 1], [0, 1, 0.5], [1, 1, 0]])
        check_fn(lambda F, x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=2 * t.detach() + 1), logits, y,
                 dtype=dtype)
        check_fn(lambda F, x, t: F.multilabel_soft_margin_loss(x, t), logits, y, dtype=dtype)
        xe = ember.tensor(logits, requires_grad=True)
        loss = EF.soft_margin_loss(xe, ember.tensor(np.sign(logits) * -1 + (logits == 0)))
        loss.backward()
        assert math.isfinite(loss.item()) and np.isfinite(xe.grad.numpy()).all()
    # torch's clamp of log at -100, and its gradient formula at 0 and 1
    check_fn(lambda F, p, y: F.binary_cross_entropy(p, y), np.array([0.0, 1.0, 1e-30, 0.5]),
             Const(np.array([1, 0, 1, 0.5])), dtype="float64", tol=(1e-8, 1e-10))


def test_ignored_targets():
    for kw in ({}, {"label_smoothing": 0.2}, {"weight": ember.ones(4, dtype=ember.float64)}):
        x = ember.tensor(X, requires_grad=True)
        loss = EF.cross_entropy(x, ember.tensor([-100] * 5), **kw)
        assert math.isnan(loss.item())
        loss.backward()
        assert not x.grad.numpy().any()
    check_fn(lambda F, x, t: F.cross_entropy(x, t, reduction="none"), X, Const(np.array([-100, 1, -100, 0, 2])))
    check_fn(lambda F, x, t: F.cross_entropy(x, t, ignore_index=7), X, Const(np.array([7, 1, 7, 0, 2])))


@pytest.mark.parametrize("kw", [{}, {"weight": "w", "ignore_index": 0, "label_smoothing": 0.3},
                                {"reduction": "none", "label_smoothing": 0.1}, {"reduction": "sum", "weight": "w"}],
                         ids=["plain", "weight_ignore_smoothing", "none_smoothing", "sum_weight"])
def test_gradcheck_class_losses(kw):
    x = ember.tensor(RNG.standard_normal((4, 5)), requires_grad=True)
    t = ember.tensor([1, 0, 4, 2])
    kw = {k: (ember.tensor(RNG.uniform(0.5, 2, 5)) if v == "w" else v) for k, v in kw.items()}
    ce = lambda x: EF.cross_entropy(x, t, **kw)
    nll = lambda x: EF.nll_loss(x, t, **{k: v for k, v in kw.items() if k != "label_smoothing"})
    for f in (ce, nll):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))
    x4 = ember.tensor(RNG.standard_normal((2, 3, 2, 2)), requires_grad=True)
    t4 = ember.tensor(RNG.integers(0, 3, (2, 2, 2)))
    assert gradcheck(lambda x: EF.cross_entropy(x, t4, **{k: v for k, v in kw.items() if k != "weight"}), (x4,))


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # ember.logit's backward at 0 and 1
def test_gradcheck_bce_and_second_derivative_vs_torch():
    p = ember.tensor(RNG.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    y = ember.tensor(RNG.random((3, 4)), requires_grad=True)
    assert gradcheck(lambda p, y: EF.binary_cross_entropy(p, y), (p, y))
    assert gradgradcheck(lambda p, y: EF.binary_cross_entropy(p, y), (p, y))
    x, t, h = RNG.standard_normal((4, 5)), [1, 0, 4, 2], RNG.standard_normal((4, 5))
    out = []
    for lib, F in ((torch, TF), (ember, EF)):
        xx = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(F.cross_entropy(xx, lib.tensor(t), label_smoothing=0.3), xx, create_graph=True)
        out.append(lib.autograd.grad(g, xx, lib.tensor(h))[0])
    close(out[1], out[0], "float64")


def _ctc_data(rng, t=12, n=4, c=5):
    lp = np.log(rng.dirichlet(np.ones(c), size=(t, n)))
    tg = rng.integers(1, c, (n, 7))
    tg[0, 1] = tg[0, 0]  # a repeated label needs a blank between
    return lp, tg


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # NaN gradients of impossible alignments
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_vs_torch(reduction, zero_infinity):
    lp, tg = _ctc_data(np.random.default_rng(1))
    il = np.array([12, 10, 7, 12])
    for tl in (np.array([3, 0, 5, 4]), np.array([3, 2, 7, 4])):  # the second has an impossible alignment
        kw = dict(reduction=reduction, zero_infinity=zero_infinity)
        check_fn(lambda F, lp, tg, il, tl: F.ctc_loss(lp, tg, il, tl, **kw), lp, Const(tg), Const(il), Const(tl),
                 dtype="float64")
        cat = np.concatenate([tg[i, :tl[i]] for i in range(4)])
        check_fn(lambda F, lp, tg, il, tl: F.ctc_loss(lp, tg, il, tl, **kw), lp, Const(cat), Const(il), Const(tl),
                 dtype="float64")


def test_ctc_variants():
    rng = np.random.default_rng(2)
    lp, tg = _ctc_data(rng)
    # unbatched, lengths as lists, another blank, float32, module
    check_fn(lambda F, lp, tg, il, tl: F.ctc_loss(lp, tg, il, tl), lp[:, 0], Const(tg[0, :3]), Const(np.array(12)),
             Const(np.array(3)), dtype="float64")
    check_fn(lambda F, lp, tg: F.ctc_loss(lp, tg, [12, 11, 12, 9], [3, 3, 2, 3], blank=4), lp, Const(tg - 1))
    tm, em = torch.nn.CTCLoss(blank=0, zero_infinity=True), E.CTCLoss(blank=0, zero_infinity=True)
    check_module(tm, em, lp, Const(tg), Const(np.array([12, 12, 10, 8])), Const(np.array([7, 1, 2, 3])),
                 dtype="float64")
    # gradcheck through log_softmax (the gradient is torch's, exact for normalized log-probabilities)
    z = ember.tensor(rng.standard_normal((6, 2, 4)), requires_grad=True)
    f = lambda z: EF.ctc_loss(z.log_softmax(2), ember.tensor([[1, 2], [3, 3]]), ember.tensor([6, 5]),
                              ember.tensor([2, 2]))
    assert gradcheck(f, (z,))
    same_error(lambda: EF.ctc_loss(ember.tensor(lp), ember.tensor(tg), [13] * 4, [3] * 4),
               lambda: TF.ctc_loss(torch.tensor(lp), torch.tensor(tg), [13] * 4, [3] * 4))


MODULES = [
    ("L1Loss", {}, (X, P)), ("MSELoss", {"reduction": "sum"}, (X, P)),
    ("CrossEntropyLoss", {"weight": "w", "ignore_index": 1, "label_smoothing": 0.1}, (X, Const(T))),
    ("NLLLoss", {"weight": "w", "reduction": "none"}, (X, Const(T))), ("BCELoss", {"weight": "w"}, (P, Y)),
    ("BCEWithLogitsLoss", {"weight": "w", "pos_weight": "w"}, (X, Y)), ("KLDivLoss", {"log_target": True}, (X, X)),
    ("SmoothL1Loss", {"beta": 0.3}, (X, P)), ("HuberLoss", {"delta": 0.4}, (X, P)),
    ("PoissonNLLLoss", {"full": True}, (X, P)), ("GaussianNLLLoss", {"full": True}, (X, P, P)),
    ("CosineEmbeddingLoss", {"margin": 0.1}, (X, P, Const(S))), ("MarginRankingLoss", {}, (X[:, 0], P[:, 0], S)),
    ("HingeEmbeddingLoss", {"margin": 2.0}, (X, Const(np.sign(X)))),
    ("MultiMarginLoss", {"p": 2, "weight": "w"}, (X, Const(T))),
    ("MultiLabelMarginLoss", {}, (X, Const(np.array([[1, -1, 0, 0]] * 5)))),
    ("MultiLabelSoftMarginLoss", {"weight": "w"}, (X, Y)), ("SoftMarginLoss", {}, (X, Const(np.sign(X)))),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0}, (X, P, P * 2)),
    ("TripletMarginWithDistanceLoss", {"margin": 0.5}, (X, P, P * 2)),
]


@pytest.mark.parametrize("name,kwargs,args", MODULES, ids=[m[0] for m in MODULES])
def test_loss_modules(name, kwargs, args):
    tkw = {k: (torch.tensor(W) if v == "w" else v) for k, v in kwargs.items()}
    ekw = {k: (ember.tensor(W) if v == "w" else v) for k, v in kwargs.items()}
    tm, em = getattr(torch.nn, name)(**tkw), getattr(E, name)(**ekw)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    check_module(tm, em, *args, dtype="float64")


def test_legacy_reduction_flags():
    x, t = ember.tensor(X), ember.tensor(T)
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        s = EF.cross_entropy(x, t, size_average=False)
    assert s.item() == pytest.approx(TF.cross_entropy(torch.tensor(X), torch.tensor(T), reduction="sum").item())
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert EF.mse_loss(x, x, reduce=False).shape == (5, 4)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert E.L1Loss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning, match="elementwise_mean"):
        EF.l1_loss(x, x, reduction="elementwise_mean")
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        E.NLLLoss2d()


def test_errors():
    x, xt = ember.tensor(X), torch.tensor(X)
    t, tt = ember.tensor(T), torch.tensor(T)
    cases = [
        (lambda F, x, t, lib: F.cross_entropy(x, lib.tensor([1, 2, 5, 0, 0]))),
        (lambda F, x, t, lib: F.cross_entropy(x, lib.tensor([1, 2, -1, 0, 0]))),
        (lambda F, x, t, lib: F.cross_entropy(x, t.int())),
        (lambda F, x, t, lib: F.cross_entropy(x, t[:3])),
        (lambda F, x, t, lib: F.cross_entropy(x, t.reshape(5, 1))),
        (lambda F, x, t, lib: F.cross_entropy(lib.randn(2, 4, 3), lib.zeros(2, 2, dtype=lib.int64))),
        (lambda F, x, t, lib: F.cross_entropy(lib.randn(2, 4, 3, 2), lib.zeros(2, 3, dtype=lib.int64))),
        (lambda F, x, t, lib: F.cross_entropy(lib.randn(2, 4, 3, 2), lib.zeros(2, 3, 3, dtype=lib.int64))),
        (lambda F, x, t, lib: F.cross_entropy(x, x.long())),
        (lambda F, x, t, lib: F.cross_entropy(x, lib.rand(5, 4), ignore_index=1)),
        (lambda F, x, t, lib: F.cross_entropy(x, t, weight=lib.ones(3))),
        (lambda F, x, t, lib: F.cross_entropy(x, lib.rand(5, 4), weight=lib.ones(3))),
        (lambda F, x, t, lib: F.cross_entropy(x, t, label_smoothing=1.5)),
        (lambda F, x, t, lib: F.cross_entropy(x, t, reduction="foo")),
        (lambda F, x, t, lib: F.cross_entropy(x, t, weight=lib.ones(4, requires_grad=True))),
        (lambda F, x, t, lib: F.nll_loss(lib.tensor(1.0), lib.tensor(0))),
        (lambda F, x, t, lib: F.nll_loss(x[0], t)),
        (lambda F, x, t, lib: F.binary_cross_entropy(x.sigmoid(), x.sigmoid()[0])),
        (lambda F, x, t, lib: F.binary_cross_entropy(x, x)),
        (lambda F, x, t, lib: F.binary_cross_entropy(x.sigmoid(), x)),
        (lambda F, x, t, lib: F.binary_cross_entropy_with_logits(x, x[0])),
        (lambda F, x, t, lib: F.smooth_l1_loss(x, x, beta=-1.0)),
        (lambda F, x, t, lib: F.huber_loss(x, x, delta=0.0)),
        (lambda F, x, t, lib: F.mse_loss(x, x, weight=lib.ones(4))),
        (lambda F, x, t, lib: F.gaussian_nll_loss(x, x, lib.ones(4))),
        (lambda F, x, t, lib: F.gaussian_nll_loss(x, x, -lib.ones(5, 4))),
        (lambda F, x, t, lib: F.gaussian_nll_loss(x, x, lib.ones(5, 4), reduction="foo")),
        (lambda F, x, t, lib: F.poisson_nll_loss(x, x, reduction="foo")),
        (lambda F, x, t, lib: F.margin_ranking_loss(x[:, 0], x[:, 0], x)),
        (lambda F, x, t, lib: F.cosine_embedding_loss(x, x, lib.ones(5, 1))),
        (lambda F, x, t, lib: F.cosine_embedding_loss(x, x[0], lib.ones(5))),
        (lambda F, x, t, lib: F.multi_margin_loss(x, t[:2])),
        (lambda F, x, t, lib: F.multi_margin_loss(x, t + 1)),
        (lambda F, x, t, lib: F.multi_margin_loss(x, t, p=3)),
        (lambda F, x, t, lib: F.multi_margin_loss(x, t, weight=lib.ones(3))),
        (lambda F, x, t, lib: F.multi_margin_loss(lib.randn(2, 3, 4), t[:2])),
        (lambda F, x, t, lib: F.multilabel_margin_loss(x, t)),
        (lambda F, x, t, lib: F.multilabel_margin_loss(x, lib.full((5, 4), 5, dtype=lib.int64))),
        (lambda F, x, t, lib: F.multilabel_soft_margin_loss(x, x, reduction="foo")),
        (lambda F, x, t, lib: F.triplet_margin_loss(x, x[0], x)),
        (lambda F, x, t, lib: F.triplet_margin_loss(x, x, x, margin=0)),
        (lambda F, x, t, lib: F.triplet_margin_with_distance_loss(x, x, x, reduction="foo")),
        (lambda F, x, t, lib: F.soft_margin_loss(x, x.detach().requires_grad_())),
    ]
    for case in cases:
        same_error(lambda: case(EF, x, t, ember), lambda: case(TF, xt, tt, torch))
    same_error(lambda: E.MultiMarginLoss(p=3), lambda: torch.nn.MultiMarginLoss(p=3))
    same_error(lambda: E.TripletMarginLoss(margin=-1), lambda: torch.nn.TripletMarginLoss(margin=-1))
    same_error(lambda: E.HuberLoss(delta="1"), lambda: torch.nn.HuberLoss(delta="1"))
    with pytest.warns(UserWarning, match="that is different to the input size"):
        EF.mse_loss(x, x[0])


# -- distances -------------------------------------------------------------------------------------------------------
def test_distances_vs_torch():
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    for p in (2.0, 1.0, 3.0, math.inf, 0.0):
        check_fn(lambda F, a, b: F.pairwise_distance(a, b, p=p), a, b, dtype="float64")
    check_fn(lambda F, a, b: F.pairwise_distance(a, b, keepdim=True, eps=0.1), a, b[:1], dtype="float64")
    check_fn(lambda F, a, b: F.pairwise_distance(a, b), a[0], b[0], dtype="float64")
    for dim in (0, 1, -1):
        check_fn(lambda F, a, b: F.cosine_similarity(a, b, dim), a, b, dtype="float64")
    check_fn(lambda F, a, b: F.cosine_similarity(a, b, 1, eps=0.5), a * 1e-3, b[:1], dtype="float64")
    c = a.copy()
    c[2] = c[0]  # a zero distance: zero gradient
    for p in (2, 1, 3, math.inf):
        check_fn(lambda F, x: F.pdist(x, p), c, dtype="float64")
    for p, dim in ((2.0, 1), (1.0, 0), (3.0, -1)):
        check_fn(lambda F, x: F.normalize(x, p, dim), a, dtype="float64")
    check_fn(lambda F, x: F.normalize(x), np.zeros((2, 3)), dtype="float64")
    check_module(torch.nn.PairwiseDistance(p=1.0, keepdim=True), E.PairwiseDistance(p=1.0, keepdim=True), a, b)
    check_module(torch.nn.CosineSimilarity(dim=0, eps=1e-3), E.CosineSimilarity(dim=0, eps=1e-3), a, b)
    out = ember.zeros(4, 5)
    assert EF.normalize(ember.tensor(a, dtype=ember.float32), out=out) is out
    assert gradcheck(lambda x, y: EF.cosine_similarity(x, y), (ember.tensor(a, requires_grad=True),
                                                               ember.tensor(b, requires_grad=True)))
    same_error(lambda: EF.pdist(ember.randn(2, 3, 4)), lambda: TF.pdist(torch.randn(2, 3, 4)))
    same_error(lambda: EF.cosine_similarity(ember.tensor([1, 2]), ember.tensor([1, 2]), 0),
               lambda: TF.cosine_similarity(torch.tensor([1, 2]), torch.tensor([1, 2]), 0))
