"""Every loss of ``torch.nn`` and its functional form against torch, with the options swept: reductions, weights,
ignore_index, label smoothing, probability targets, K-dimensional inputs, gradients of inputs and of targets (where
torch differentiates them), second derivatives, dtypes (float64, float32, float16, bfloat16), CTC's length formats,
AdaptiveLogSoftmaxWithLoss, and the errors of mismatched dtypes and shapes."""
import warnings

import numpy as np
import pytest
import torch

import ember

TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "float16": (2e-3, 1e-3), "bfloat16": (1e-2, 1e-2)}
R = np.random.default_rng(0)
X = R.standard_normal((5, 4))
T = np.array([1, 0, 3, 3, 2])
W = R.uniform(0.2, 1.5, 4)
P = R.uniform(0.05, 0.95, (5, 4))
Y = (R.random((5, 4)) > 0.5).astype(np.float64)


class G:
    """An array argument that requires grad."""

    def __init__(self, a):
        self.a = a


def _to(a, lib, dtype):
    if isinstance(a, G):
        return _to(a.a, lib, dtype).requires_grad_()
    if isinstance(a, np.ndarray):
        return lib.tensor(a, dtype=getattr(lib, dtype)) if a.dtype.kind == "f" else lib.tensor(a)
    return a


def _np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy(force=True).astype(np.float64)
    return (t.float() if t.dtype is ember.bfloat16 else t).numpy().astype(np.float64)


def _close(e, t, dtype, what, scale=1):
    rtol, atol = TOL[dtype]
    assert tuple(e.shape) == tuple(t.shape), (what, tuple(e.shape), tuple(t.shape))
    assert e.dtype.name == str(t.dtype)[6:], (what, e.dtype, t.dtype)
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol * scale, atol=atol * scale, equal_nan=True, err_msg=what)


def check(fn, *args, dtype="float64"):
    """``fn(lib, F, *tensors)`` under ember and torch: the same value, dtype, and gradients of every argument that
    requires grad (under a random output gradient)."""
    out = []
    for lib in (torch, ember):
        ts = [_to(a, lib, dtype) for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(lib, lib.nn.functional, *ts)
        wrt = [t for t in ts if isinstance(t, lib.Tensor) and t.requires_grad]
        g = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))).to(y.dtype)
        out.append((y, lib.autograd.grad(y, wrt, g, allow_unused=True) if wrt else ()))
    (yt, gt), (ye, ge) = out
    _close(ye, yt, dtype, "value")
    for i, (a, b) in enumerate(zip(ge, gt)):
        assert (a is None) == (b is None), i
        if b is not None:
            _close(a, b, dtype, f"grad {i}", 10)
    return ye


def same_error(fn):
    """``fn(lib, F)`` raises the same exception type under ember and torch; the messages agree."""
    errs = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib, lib.nn.functional)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0]), (errs[0], errs[1])
    assert str(errs[1]).split("\n")[0] == str(errs[0]).split("\n")[0]


def _w(lib, x, a=W):
    return lib.tensor(a).to(x.dtype)


# -- the elementwise losses: input and target gradients, every reduction and dtype -----------------------------------
PAIRWISE = [
    ("mse", lambda l, F, a, b, **k: F.mse_loss(a, b, **k), X),
    ("l1", lambda l, F, a, b, **k: F.l1_loss(a, b, **k), X),
    ("smooth_l1", lambda l, F, a, b, **k: F.smooth_l1_loss(a, b, beta=0.3, **k), X),
    ("smooth_l1_beta0", lambda l, F, a, b, **k: F.smooth_l1_loss(a, b, beta=0.0, **k), X),
    ("huber_weight", lambda l, F, a, b, **k: F.huber_loss(a, b, delta=0.3, weight=_w(l, a, P[::-1].copy()), **k), X),
    ("kl_div", lambda l, F, a, b, **k: F.kl_div(a, b, **k), X),
    ("kl_div_log_target", lambda l, F, a, b, **k: F.kl_div(a, b, log_target=True, **k), X),
    ("bce", lambda l, F, a, b, **k: F.binary_cross_entropy(a, b, weight=_w(l, a), **k), P[::-1].copy()),
    ("bce_logits_pos_weight", lambda l, F, a, b, **k: F.binary_cross_entropy_with_logits(
        a, b, weight=_w(l, a, P[::-1].copy()), pos_weight=_w(l, a), **k), X),
    ("ce_probs_smoothing_weight", lambda l, F, a, b, **k: F.cross_entropy(a, b, weight=_w(l, a), label_smoothing=0.2,
                                                                          **k), X),
    ("poisson", lambda l, F, a, b, **k: F.poisson_nll_loss(a, b, **k), X),
    ("poisson_full", lambda l, F, a, b, **k: F.poisson_nll_loss(a, b * 3, full=True, **k), X),
    ("poisson_linear_eps", lambda l, F, a, b, **k: F.poisson_nll_loss(a.abs(), b, log_input=False, full=True, eps=0.1,
                                                                      **k), X),
    ("gaussian_var_grad", lambda l, F, a, b, **k: F.gaussian_nll_loss(a, b, (a * b).abs() + 0.05, **k), X),
    ("multilabel_soft_margin_weight", lambda l, F, a, b, **k: F.multilabel_soft_margin_loss(a, b, weight=_w(l, a),
                                                                                            **k), X),
]


@pytest.mark.parametrize("name,fn,inp", PAIRWISE, ids=[c[0] for c in PAIRWISE])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_pairwise_losses_input_and_target_gradients(name, fn, inp, reduction, dtype):
    check(lambda l, F, a, b: fn(l, F, a, b, reduction=reduction), G(inp), G(P), dtype=dtype)


# -- class-index losses ----------------------------------------------------------------------------------------------
X4 = R.standard_normal((2, 4, 3, 2))
T4 = R.integers(0, 4, (2, 3, 2))
T4[0, 0, 0], T4[1, 2, 1] = 2, 2


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_class_index_losses_kdim_weight_ignore_smoothing(reduction, dtype):
    """Segmentation-style (N, C, H, W) logits with class weights, an ignored label and label smoothing at once."""
    check(lambda l, F, x, t: F.cross_entropy(x, t, weight=_w(l, x), ignore_index=2, label_smoothing=0.15,
                                             reduction=reduction), G(X4), T4, dtype=dtype)
    check(lambda l, F, x, t: F.nll_loss(x.log_softmax(1), t, weight=_w(l, x), reduction=reduction), G(X4), T4,
          dtype=dtype)
    # every target ignored: NaN under 'mean', nothing flows back
    check(lambda l, F, x, t: F.cross_entropy(x, t, ignore_index=3, label_smoothing=0.1, weight=_w(l, x),
                                             reduction=reduction), G(X), np.full(5, 3), dtype=dtype)
    check(lambda l, F, x, t: F.nll_loss(x, t, reduction=reduction), G(X), np.full(5, -100), dtype=dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_size_zero_batches(reduction):
    for fn, t in ((lambda l, F, x, t: F.nll_loss(x.log_softmax(1), t, reduction=reduction), np.zeros(0, np.int64)),
                  (lambda l, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1, reduction=reduction),
                   np.zeros(0, np.int64)),
                  (lambda l, F, x, t: F.cross_entropy(x, t, reduction=reduction), np.zeros((0, 4))),
                  (lambda l, F, x, t: F.mse_loss(x, t, reduction=reduction), np.zeros((0, 4))),
                  (lambda l, F, x, t: F.binary_cross_entropy(x, t, reduction=reduction), np.zeros((0, 4)))):
        check(fn, G(np.zeros((0, 4))), t)
    check(lambda l, F, x, t: F.cross_entropy(x, t, reduction=reduction), G(np.zeros((0, 4, 2, 2))),
          np.zeros((0, 2, 2), np.int64))


def test_class_losses_zero_total_weight():
    """Class weight 0 for every class present (a background-only batch): the mean is 0 / 0, smoothing or not, and
    the counted rows' gradients are NaN while the ignored row's stay 0."""
    w, t = np.array([0.0, 0, 1, 1, 1]), np.array([0, 1, -100])
    for ls in (0.0, 0.3):
        y = check(lambda l, F, x, t: F.cross_entropy(x, t, weight=l.tensor(w), label_smoothing=ls),
                  G(R.standard_normal((3, 5))), t)
        assert np.isnan(y.item())
    check(lambda l, F, x, t: F.nll_loss(x, t, weight=l.tensor(w)), G(R.standard_normal((3, 5))), t)
    x = R.standard_normal((3, 5))
    grads = []
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(t), weight=lib.tensor(w))
        grads.append(lib.autograd.grad(loss, xt, create_graph=True)[0])
    _close(grads[1], grads[0], "float64", "create_graph gradient")


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_margin_losses(reduction, dtype):
    kw = {"reduction": reduction}
    mlm_t = np.array([[3, 0, -1, 1], [-1, 2, 3, 0], [1, 1, -1, 2], [0, 1, 2, 3], [2, -1, -1, -1]])
    check(lambda l, F, x, t: F.multi_margin_loss(x, t, margin=0.7, weight=_w(l, x), **kw), G(X), T, dtype=dtype)
    check(lambda l, F, x, t: F.multi_margin_loss(x, t, p=2, margin=1.3, weight=_w(l, x), **kw), G(X), T, dtype=dtype)
    check(lambda l, F, x, t: F.multilabel_margin_loss(x, t, **kw), G(X), mlm_t, dtype=dtype)
    check(lambda l, F, x, t: F.soft_margin_loss(x, t, **kw), G(X), np.sign(X), dtype=dtype)
    check(lambda l, F, a, b, t: F.margin_ranking_loss(a, b, t, margin=0.2, **kw), G(X[:, 0]), G(X[:, 1]),
          np.sign(X[:, 2]), dtype=dtype)
    check(lambda l, F, a, b, t: F.cosine_embedding_loss(a, b, t, margin=-0.2, **kw), G(X), G(P), np.sign(X[:, 0]),
          dtype=dtype)
    check(lambda l, F, a, b, c: F.triplet_margin_loss(a, b, c, p=1, swap=True, **kw), G(X), G(P), G(X[::-1].copy()),
          dtype=dtype)
    check(lambda l, F, a, b, c: F.triplet_margin_loss(a, b, c, p=3, **kw), G(X[0]), G(P[0]), G(X[1]), dtype=dtype)
    check(lambda l, F, a, b, c: F.triplet_margin_with_distance_loss(
        a, b, c, distance_function=l.nn.PairwiseDistance(p=1), swap=True, margin=0.5, **kw), G(X), G(P),
        G(X[::-1].copy()), dtype=dtype)
    check(lambda l, F, a, b, c: F.triplet_margin_with_distance_loss(
        a, b, c, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), **kw), G(X), G(P), G(X[::-1].copy()),
        dtype=dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_embedding_losses_keep_half_dtypes(dtype):
    """hinge/cosine embedding losses of bfloat16 inputs stay bfloat16 (a Python 0.0 in a select does not widen)."""
    check(lambda l, F, a, t: F.hinge_embedding_loss(a, t, margin=0.5), G(X), np.sign(X[::-1]), dtype=dtype)
    check(lambda l, F, a, b, t: F.cosine_embedding_loss(a, b, t, reduction="none"), G(X), G(P), np.sign(X[:, 0]),
          dtype=dtype)
    e = ember.tensor([1.0, -2.0], dtype=getattr(ember, dtype))
    assert ember.where(e > 0, e, 0.0).dtype is e.dtype
    assert ember.nn.functional.hinge_embedding_loss(e, ember.tensor([1.0, -1.0]).to(e.dtype)).dtype is e.dtype


def test_bce_log_clamp_and_gradient_clamp():
    """log clamped at -100 in the value; the gradient divides by max(x (1 - x), 1e-12 in float32) exactly."""
    p = np.array([0.0, 1.0, 0.0, 1.0, 1e-50, 0.5])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.3])
    for red in ("none", "mean", "sum"):
        for dtype in ("float64", "float32"):
            check(lambda l, F, x, t: F.binary_cross_entropy(x, t, reduction=red), G(p), y, dtype=dtype)
    # cosine_embedding_loss adds the same float32 1e-12 to the squared norms: a zero vector's gradient
    check(lambda l, F, a, b, t: F.cosine_embedding_loss(a, b, t, reduction="none"), G(np.zeros((2, 3))),
          G(np.ones((2, 3))), np.array([1.0, -1]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_pos_weight_broadcasts_over_last_dim(reduction):
    check(lambda l, F, x, t: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=l.tensor([1.0, 2.0, 3.0]).to(x.dtype), weight=l.tensor([[0.5], [2.0]]).to(x.dtype),
        reduction=reduction), G(R.standard_normal((4, 2, 3))), G(R.random((4, 2, 3))))
    check(lambda l, F, x, t: l.nn.BCEWithLogitsLoss(pos_weight=l.tensor([3.0]).to(x.dtype), reduction=reduction)(x, t),
          G(R.standard_normal((4, 1))), (R.random((4, 1)) > 0.5).astype(np.float64))


# -- KL, Poisson, Gaussian -------------------------------------------------------------------------------------------
def test_kl_div_batchmean_and_mean_warning():
    check(lambda l, F, x, t: F.kl_div(x, t, reduction="batchmean"), G(X.reshape(5, 2, 2)), G(P.reshape(5, 2, 2)))
    check(lambda l, F, x, t: l.nn.KLDivLoss(reduction="batchmean", log_target=True)(x, t), G(X), G(X[::-1].copy()))
    check(lambda l, F, x, t: F.kl_div(x, t, reduction="batchmean"), G(np.array(-0.3)), G(np.array(0.4)))
    check(lambda l, F, x, t: F.kl_div(x, t, reduction="sum"), G(X), G(np.array([0.0, 0.5, 0.0, 0.5]) * np.ones((5, 1))))
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            lib.nn.KLDivLoss()(lib.tensor(X), lib.tensor(P))
        with pytest.warns(UserWarning, match="reduction='sum'"):
            assert lib.nn.functional.kl_div(lib.tensor(X), lib.tensor(P), size_average=False).shape == ()


VAR_SHAPES = [((5,), (5,)), ((5, 4), (5, 1)), ((5, 4), (5,)), ((5, 4), (1, 4)), ((2, 3, 4), (2, 3)),
              ((2, 3, 4), (2, 3, 1)), ((2, 3, 4), (2, 1, 4)), ((5, 1), (5,))]


@pytest.mark.parametrize("shape,var_shape", VAR_SHAPES, ids=[f"{a}-{b}" for a, b in VAR_SHAPES])
def test_gaussian_nll_var_shapes(shape, var_shape):
    """Homoscedastic (N, 1) / (N,) variances, heteroscedastic ones, one broadcast dim; eps clamps (no gradient
    change), full adds the constant."""
    for red in ("none", "mean", "sum"):
        check(lambda l, F, x, t, v: F.gaussian_nll_loss(x, t, v, reduction=red, eps=0.3), G(R.standard_normal(shape)),
              G(R.standard_normal(shape)), G(R.uniform(0, 2, var_shape)))
    check(lambda l, F, x, t, v: l.nn.GaussianNLLLoss(reduction="sum", full=True)(x, t, v),
          G(R.standard_normal(shape)), G(R.standard_normal(shape)), G(R.uniform(0.1, 2, var_shape)))


def test_gaussian_nll_scalar_var_and_bad_shapes():
    check(lambda l, F, x, t: F.gaussian_nll_loss(x, t, 0.3), G(X), G(P))
    for shape, var_shape in (((5, 4), (4,)), ((5,), (5, 1)), ((5, 4), (5, 2))):
        same_error(lambda l, F: F.gaussian_nll_loss(l.zeros(shape), l.zeros(shape), l.ones(var_shape)))


def test_poisson_nll_options():
    check(lambda l, F, x, t: F.poisson_nll_loss(x, t, full=True, reduction="none"), G(X),
          G(np.array([0.0, 1.0, 2.0, 5.0]) * np.ones((5, 1))))
    check(lambda l, F, x, t: l.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3, reduction="sum")(x, t),
          G(np.abs(X)), G(P * 4))
    check(lambda l, F, x, t: F.poisson_nll_loss(x, t, log_input=False, eps=0.5), G(np.abs(X)), G(P * 4))


# -- second derivatives ----------------------------------------------------------------------------------------------
GG = [
    ("mse", lambda l, F, a, b: F.mse_loss(a, b)), ("smooth_l1", lambda l, F, a, b: F.smooth_l1_loss(a, b, beta=0.5)),
    ("huber", lambda l, F, a, b: F.huber_loss(a, b, delta=0.5)),
    ("kl_log_target", lambda l, F, a, b: F.kl_div(a, b, reduction="batchmean", log_target=True)),
    ("bce", lambda l, F, a, b: F.binary_cross_entropy(a.sigmoid(), b)),
    ("bce_logits", lambda l, F, a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=l.tensor(W))),
    ("ce_probs", lambda l, F, a, b: F.cross_entropy(a, b, label_smoothing=0.1)),
    ("gaussian", lambda l, F, a, b: F.gaussian_nll_loss(a, b, a.exp())),
    ("multilabel_soft_margin", lambda l, F, a, b: F.multilabel_soft_margin_loss(a, b, weight=l.tensor(W))),
    ("cosine_embedding", lambda l, F, a, b: F.cosine_embedding_loss(a, b, l.tensor([1.0, -1, 1, -1, 1]))),
    ("triplet", lambda l, F, a, b: F.triplet_margin_loss(a, b, a.flip(0) * 2, swap=True)),
    ("nll", lambda l, F, a, b: F.nll_loss(a.log_softmax(1), l.tensor(T), weight=l.tensor(W))),
]


@pytest.mark.parametrize("name,fn", GG, ids=[c[0] for c in GG])
def test_second_derivatives(name, fn):
    h = R.standard_normal((5, 4))

    def gg(l, F, x, t):
        g, = l.autograd.grad(fn(l, F, x, t), x, create_graph=True)
        return (g * l.tensor(h)).sum()
    check(gg, G(X), G(P))


# -- CTC -------------------------------------------------------------------------------------------------------------
LP = R.standard_normal((10, 3, 5))
CTC_T = R.integers(1, 5, (3, 6))
IL, TL = np.array([10, 6, 10]), np.array([4, 0, 6])
CAT = np.concatenate([CTC_T[i, :TL[i]] for i in range(3)])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_formats(reduction):
    """Padded (N, S) and concatenated targets, lengths as tensors, tuples, lists and int32, another blank, an
    impossible alignment with and without zero_infinity, transposed (batch-first) log-probs, unbatched input."""
    kw = {"reduction": reduction}
    check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(2), t, l.tensor(IL), l.tensor(TL), **kw), G(LP), CTC_T,
          dtype="float32")
    check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(2), t, tuple(IL.tolist()), tuple(TL.tolist()), **kw), G(LP),
          CAT)
    check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(2), t.int(), l.tensor(IL).int(), l.tensor(TL).int(), **kw),
          G(LP), CTC_T)
    check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(2), t - 1, list(IL), list(TL), blank=4, **kw), G(LP), CTC_T)
    for zero_infinity in (False, True):
        check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(2), t, [3, 3, 3], [3, 0, 6], zero_infinity=zero_infinity,
                                            **kw), G(LP), CTC_T)
    check(lambda l, F, x, t: l.nn.CTCLoss(zero_infinity=True, **kw)(x.log_softmax(2).transpose(0, 1), t,
                                                                    [10, 8, 9], [3, 2, 4]),
          G(LP.transpose(1, 0, 2).copy()), CTC_T)
    check(lambda l, F, x, t: F.ctc_loss(x.log_softmax(1), t, l.tensor(10), l.tensor(4), **kw), G(LP[:, 0]),
          CTC_T[0, :4])
    check(lambda l, F, x, t: F.ctc_loss(x, t, l.tensor(IL), l.tensor(TL), **kw), G(LP), CTC_T)  # unnormalized


@pytest.mark.parametrize("call", [
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(3, 6, dtype=l.long), l.tensor([10.0, 10, 10]),
                            l.tensor([4, 2, 6])),
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(3, 6, dtype=l.long), l.tensor([10, 10, 10]),
                            l.tensor([4.0, 2, 6])),
    lambda l, F: F.ctc_loss(l.randn(5), l.ones(3, 6, dtype=l.long), [10, 10, 10], [4, 2, 6]),
    lambda l, F: F.ctc_loss(l.randn(1, 10, 3, 5), l.ones(3, 6, dtype=l.long), [10, 10, 10], [4, 2, 6]),
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(1, 3, 6, dtype=l.long), [10, 10, 10], [4, 2, 6]),
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(3, 6, dtype=l.long), [10, 10, 10], [4, -1, 6]),
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(3, 6, dtype=l.long), [10, -2, 10], [4, 1, 6]),
    lambda l, F: F.ctc_loss(l.randn(10, 3, 5), l.ones(18, dtype=l.long), [10, 10, 10], [4, 2, 6]),
    lambda l, F: F.ctc_loss(l.randn(10, 5), l.ones(6, dtype=l.long), l.tensor(10), l.tensor(4)),
], ids=["float_input_lengths", "float_target_lengths", "1d_log_probs", "4d_log_probs", "3d_targets",
        "negative_target_length", "negative_input_length", "concatenated_too_long", "unbatched_too_long"])
def test_ctc_errors(call):
    same_error(call)


# -- AdaptiveLogSoftmaxWithLoss --------------------------------------------------------------------------------------
def _adaptive(lib, head_bias, div_value):
    lib.manual_seed(0)
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], div_value=div_value, head_bias=head_bias).double()
    return m


@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("div_value", [4.0, 1.0, 2.0])
def test_adaptive_log_softmax(head_bias, div_value):
    tm, em = _adaptive(torch, head_bias, div_value), _adaptive(ember, head_bias, div_value)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x, t = R.standard_normal((6, 8)), np.array([0, 4, 5, 11, 12, 19])
    res = []
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt, lib.tensor(t))
        (out.loss * 2 + (out.output * lib.tensor(x[:, 0])).sum()).backward()
        single = m(xt[0], lib.tensor(13))
        res.append((out.output, out.loss, xt.grad, m.head.weight.grad, m.tail[1][1].weight.grad, m.log_prob(xt),
                    m.predict(xt), single.output, single.loss))
    for i, (a, b) in enumerate(zip(res[1], res[0])):
        _close(a, b, "float64", f"output {i}")
    for bad in (np.array([0, 1, 2, 3, 4, 20]), np.array([0, 1, 2, 3, 4, -1]), np.array([0, 1, 2])):
        same_error(lambda l, F: (tm if l is torch else em)(l.tensor(x), l.tensor(bad)))


# -- dtype agreement and errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    # a float64 class-weight array (from NumPy) with float32 logits: torch refuses it
    lambda l, F: F.cross_entropy(l.randn(3, 4), l.tensor([0, 1, 3]), weight=l.rand(4, dtype=l.float64)),
    lambda l, F: F.cross_entropy(l.randn(3, 4, 2), l.zeros(3, 2, dtype=l.long), weight=l.ones(4, dtype=l.float64),
                                 label_smoothing=0.1),
    lambda l, F: F.nll_loss(l.randn(3, 4, 1, 1), l.zeros(3, 1, 1, dtype=l.long), weight=l.ones(4, dtype=l.float64)),
    lambda l, F: F.cross_entropy(l.randn(3, 4).half(), l.tensor([0, 1, 3]), weight=l.ones(4)),
    lambda l, F: F.cross_entropy(l.randn(3, 4).bfloat16(), l.tensor([0, 1, 3]), weight=l.ones(4),
                                 label_smoothing=0.2),
    lambda l, F: F.cross_entropy(l.randn(3, 4), l.tensor([0, 1, 3]), weight=l.ones(4, dtype=l.long)),
    lambda l, F: F.multi_margin_loss(l.randn(3, 4), l.tensor([0, 1, 3]), weight=l.ones(4, dtype=l.float64)),
    lambda l, F: F.multi_margin_loss(l.randn(3, 4), l.tensor([0, 1, 3], dtype=l.int32)),
    # integer regression inputs
    lambda l, F: F.mse_loss(l.tensor([1, 2]), l.tensor([2, 2])),
    lambda l, F: F.mse_loss(l.tensor([1, 2]), l.tensor([2, 2]), reduction="sum"),
    lambda l, F: F.mse_loss(l.tensor([True]), l.tensor([False])),
    lambda l, F: F.smooth_l1_loss(l.tensor([1, 2]), l.tensor([2, 2]), reduction="none"),
    lambda l, F: F.huber_loss(l.tensor([1, 2]), l.tensor([2, 2])),
    lambda l, F: F.huber_loss(l.tensor([1, 2]), l.tensor([2.0, 2])),
    lambda l, F: F.kl_div(l.tensor([1, 2]), l.tensor([0.5, 0.5]), reduction="sum"),
    lambda l, F: F.kl_div(l.randn(2), l.tensor([1, 0]), reduction="batchmean"),
    lambda l, F: F.kl_div(l.randn(2), l.tensor([True, False]), reduction="sum"),
    # weights that would broadcast the loss beyond the input
    lambda l, F: F.binary_cross_entropy_with_logits(l.randn(2, 3), l.rand(2, 3), pos_weight=l.ones(4, 2, 3)),
    lambda l, F: F.binary_cross_entropy_with_logits(l.randn(2, 3), l.rand(2, 3), weight=l.ones(4, 2, 3)),
    lambda l, F: F.binary_cross_entropy_with_logits(l.randn(2, 3), l.rand(2, 3), pos_weight=l.ones(4)),
    lambda l, F: F.mse_loss(l.randn(2, 3), l.randn(2, 3), weight=l.ones(3)),
    lambda l, F: F.gaussian_nll_loss(l.randn(5, 4), l.randn(5, 4), l.ones(5, 2)),
    lambda l, F: F.triplet_margin_with_distance_loss(l.randn(2, 3), l.randn(2, 3), l.randn(2, 3), margin=0.0),
])
def test_dtype_and_shape_errors(call):
    same_error(call)


def test_dtype_of_results():
    """huber_loss writes into the input's dtype; other regression losses promote; probability targets promote."""
    for fn in (lambda l, F, a, b: F.huber_loss(a, b), lambda l, F, a, b: F.huber_loss(b, a),
               lambda l, F, a, b: F.mse_loss(a, b), lambda l, F, a, b: F.smooth_l1_loss(a, b),
               lambda l, F, a, b: F.l1_loss(a, b), lambda l, F, a, b: F.huber_loss(a.half(), a),
               lambda l, F, a, b: F.huber_loss(a, l.tensor([1, 0, 2])), lambda l, F, a, b: F.mse_loss(a, a > 0),
               lambda l, F, a, b: F.cross_entropy(a[None], b[None]),
               lambda l, F, a, b: F.cross_entropy(a[None], a[None].softmax(1), weight=b),
               lambda l, F, a, b: F.multilabel_soft_margin_loss(a[None], a[None].sigmoid(), weight=b),
               lambda l, F, a, b: F.binary_cross_entropy(a.sigmoid(), a.sigmoid(), weight=b)):
        out = [fn(lib, lib.nn.functional, lib.tensor([0.3, -1.2, 2.0]),
                  lib.tensor([0.1, 0.5, -0.7], dtype=lib.float64)) for lib in (torch, ember)]
        _close(out[1], out[0], "float32", "value")


# -- modules: the legacy flags, attributes ---------------------------------------------------------------------------
LEGACY = ["L1Loss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss", "SoftMarginLoss",
          "CrossEntropyLoss", "NLLLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "HingeEmbeddingLoss",
          "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "PoissonNLLLoss", "TripletMarginLoss"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_size_average_reduce(name):
    for size_average, reduce in ((False, None), (None, False), (True, True), (False, True)):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            e = getattr(ember.nn, name)(size_average=size_average, reduce=reduce)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)
        assert e.reduction == t.reduction
        assert repr(e) == repr(t)


def test_module_attributes_and_buffers():
    def attrs(lib):
        nn, w = lib.nn, lib.tensor([1.0, 2.0, 0.5])
        return [
            list(nn.CrossEntropyLoss(weight=w).state_dict()),
            list(nn.BCEWithLogitsLoss(weight=w, pos_weight=w).state_dict()),
            list(nn.MultiMarginLoss(weight=w).state_dict()), list(nn.NLLLoss().state_dict()),
            str(nn.CrossEntropyLoss(weight=w).double().weight.dtype)[-7:],
            (lambda m: (m.ignore_index, m.label_smoothing, m.reduction))(
                nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.2, reduction="sum")),
            (lambda m: (m.log_target, m.reduction))(nn.KLDivLoss(reduction="batchmean", log_target=True)),
            (lambda m: (m.delta, m.reduction))(nn.HuberLoss("sum", 2.0)),
            (lambda m: (m.beta, m.reduction))(nn.SmoothL1Loss(reduction="sum", beta=0.5)),
            (lambda m: (m.full, m.eps))(nn.GaussianNLLLoss(full=True, eps=1e-3)),
            (lambda m: (m.log_input, m.full, m.eps))(nn.PoissonNLLLoss(False, True, eps=1e-3)),
            (lambda m: (m.margin, m.p, m.eps, m.swap))(nn.TripletMarginLoss(0.5, 1.0, 1e-3, True)),
            (lambda m: (m.margin, m.swap, repr(m.distance_function)))(nn.TripletMarginWithDistanceLoss(margin=0.3)),
            (lambda m: (m.p, m.margin))(nn.MultiMarginLoss(2, 0.5)),
            (lambda m: (m.blank, m.zero_infinity, m.reduction))(nn.CTCLoss(3, "sum", True)),
        ]
    assert attrs(ember) == attrs(torch)
