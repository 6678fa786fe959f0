"""NaN and infinity semantics as real code meets them (reductions, selection, activations, losses, masking
idioms, nan_to_num / isclose, anomaly detection): values, gradients, dtypes and errors against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember

nan, inf = float("nan"), float("inf")
V = np.array([nan, inf, -inf, 0., -0., 1., -1., 4., 0.5, -3.], np.float32)
G = np.random.default_rng(0).standard_normal(64).astype(np.float32)


def _flat(o):
    if isinstance(o, (tuple, list)):
        return [y for x in o for y in _flat(x)]
    return [o]


def _same(e, t, rtol=1e-6, atol=1e-7, signed_zeros=False):
    """Nested outputs of ember and torch agree: shapes, dtypes, values (NaN where NaN)."""
    e, t = _flat(e), _flat(t)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        if not isinstance(b, torch.Tensor):
            assert a == b or (a != a and b != b), (a, b)
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        an, bn = a.detach(), b.detach()
        if b.dtype.is_floating_point:
            an, bn = an.double(), bn.double()
        an, bn = an.numpy(), bn.numpy()
        np.testing.assert_allclose(an, bn, rtol=rtol, atol=atol, equal_nan=True)
        if signed_zeros:
            np.testing.assert_array_equal(np.signbit(an) & (an == 0), np.signbit(bn) & (bn == 0))


def _both(fn, **tol):
    _same(fn(ember), fn(torch), **tol)


def _grad(L, f, a, dt="float32"):
    """``f(x)`` and the gradient of ``x`` for a random output gradient."""
    x = L.tensor(a).to(getattr(L, dt)).requires_grad_()
    y = f(L, x)
    g = L.tensor(G[:y.numel()].reshape(tuple(y.shape))).to(y.dtype)
    return y, L.autograd.grad(y, x, g)[0]


# -- pow: x ** -0.5 is rsqrt, and x ** 0.5's gradient goes through it --------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("f", [lambda L, x: x ** -0.5, lambda L, x: x ** 0.5, lambda L, x: L.pow(x, -0.5),
                               lambda L, x: x.pow(-0.5) * x.sqrt()])
def test_pow_minus_half_at_negative_zero_and_infinity(dt, f):
    tol = dict(rtol=1e-2, atol=1e-2) if dt == "bfloat16" else {}
    _both(lambda L: _grad(L, f, V, dt), signed_zeros=True, **tol)


def test_float16_pow_minus_half_stays_a_pow():
    _both(lambda L: L.tensor(V).half() ** -0.5, rtol=1e-3, signed_zeros=True)
    for L in (ember, torch):
        assert L.tensor([4.], requires_grad=True).pow(-0.5).grad_fn.name() == "PowBackward0"


# -- activations -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_prelu_nan_input_takes_the_negative_branch(dt):
    def f(L):
        x = L.tensor(V).to(getattr(L, dt)).requires_grad_()
        w = L.tensor([0.25], dtype=x.dtype, requires_grad=True)
        y = L.nn.functional.prelu(x, w)
        return (y,) + L.autograd.grad(y, (x, w), L.tensor(G[:10]).to(y.dtype))
    _both(f)


@pytest.mark.parametrize("f", [
    lambda L, x: L.nn.functional.relu(x), lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    lambda L, x: L.nn.functional.softplus(x), lambda L, x: L.nn.functional.softplus(x, beta=2, threshold=3),
    lambda L, x: L.nn.functional.silu(x), lambda L, x: L.nn.functional.mish(x), lambda L, x: L.nn.functional.gelu(x[2:]),
    lambda L, x: L.nn.functional.logsigmoid(x), lambda L, x: L.nn.functional.hardsigmoid(x),
    lambda L, x: x.sigmoid(), lambda L, x: x.tanh(), lambda L, x: x.clamp(-1, 2), lambda L, x: x.abs(),
    lambda L, x: L.nn.functional.threshold(x, 1., -5.), lambda L, x: L.logit(x, 1e-6),
])
def test_activations_at_nan_and_infinity(f):
    for dt in ("float32", "float64"):
        _both(lambda L: _grad(L, f, V, dt), rtol=1e-5, atol=1e-6)


# -- softmax family with -inf rows -------------------------------------------------------------------------------------
Z = np.array([[0., -inf, 1.], [-inf, -inf, -inf], [inf, 0., 1.], [-inf, 3., -inf]], np.float32)


@pytest.mark.parametrize("f", [lambda L, x: x.softmax(-1), lambda L, x: x.log_softmax(-1),
                               lambda L, x: L.nn.functional.softmin(-x, 1), lambda L, x: x.logsumexp(-1),
                               lambda L, x: x.softmax(-1, dtype=L.float64)])
def test_softmax_log_softmax_logsumexp_neginf_rows(f):
    for dt in ("float32", "float64", "bfloat16"):
        tol = dict(rtol=2e-2, atol=1e-2) if dt == "bfloat16" else dict(rtol=1e-6, atol=1e-7)
        _both(lambda L: _grad(L, f, Z, dt), **tol)


# -- losses ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1}, {"weight": [1., 2., 0.5]},
                                {"weight": [1., 2., 0.5], "label_smoothing": 0.2}])
def test_cross_entropy_ignored_rows_with_neginf_logits(dt, kw):
    """Vocabulary masking (-inf logits) with padded (ignored) targets: ignored rows count exactly 0."""
    x = np.array([[-inf, 1., 0.], [2., -inf, -inf], [0., 1., -inf], [-inf, -inf, 3.]], np.float32)

    def f(L, reduction):
        xt = L.tensor(x).to(getattr(L, dt)).requires_grad_()
        k = {n: (L.tensor(v).to(xt.dtype) if n == "weight" else v) for n, v in kw.items()}
        y = L.nn.functional.cross_entropy(xt, L.tensor([-100, 0, 1, -100]), reduction=reduction, **k)
        return y, L.autograd.grad(y, xt, L.ones_like(y) * 0.7)[0]
    for reduction in ("none", "sum", "mean"):
        _same(f(ember, reduction), f(torch, reduction), rtol=1e-2 if dt == "bfloat16" else 1e-6)


def test_all_ignored_targets():
    """Nothing counted: NaN for 'mean' (with a zero gradient), 0 for 'sum'."""
    def f(L, red, kw):
        x = L.tensor([[0., 1.], [-inf, 2.]], requires_grad=True)
        y = L.nn.functional.cross_entropy(x, L.tensor([-100, -100]), reduction=red, **kw)
        return y, L.autograd.grad(y.sum(), x)[0]
    for red in ("none", "sum", "mean"):
        for kw in ({}, {"label_smoothing": 0.3}):
            _both(lambda L: f(L, red, kw))


@pytest.mark.parametrize("loss, kw", [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                      ("huber_loss", {}), ("huber_loss", {"delta": 2.0})])
def test_smooth_l1_huber_infinite_difference(loss, kw):
    """An infinite residual gets a +-1 (or +-delta) gradient, not the NaN of the unused square branch."""
    def f(L):
        x = L.tensor([inf, -inf, nan, 0.5, -3., 2.], requires_grad=True)
        y = getattr(L.nn.functional, loss)(x, L.tensor([0., 1., 0., 0., 0., 0.]), reduction="none", **kw)
        g, = L.autograd.grad(y, x, L.tensor([1., 2., 3., 4., 5., 6.]), create_graph=True)
        return y, g, L.autograd.grad(g.sum(), x)[0]
    _both(f)


def test_bce_kl_div_at_zero_and_one():
    p = np.array([[0., 1., 0.5, 1e-8], [1 - 1e-7, 0.3, 0., 1.]], np.float32)
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    y = np.array([[0., 1., 1., 0.], [1., 0., 0.5, 1.]], np.float32)

    def f(L):
        pt = L.tensor(p, requires_grad=True)
        lp = L.tensor(logp, requires_grad=True)
        F, t = L.nn.functional, L.tensor(y)
        out = (F.binary_cross_entropy(pt, t, reduction="none"), F.kl_div(lp, t, reduction="none"),
               F.kl_div(lp, t, reduction="batchmean"), F.binary_cross_entropy_with_logits(lp, t, reduction="none"))
        return out, L.autograd.grad(sum(o.sum() for o in out), (pt, lp))
    _both(f, rtol=1e-5)


# -- distances ---------------------------------------------------------------------------------------------------------
def test_cosine_similarity_with_overflowing_norms():
    """Norms that overflow to inf give 0 (not inf - inf); tiny and zero vectors still take eps."""
    a = np.array([[1e20, 1e20], [1e38, 3e38], [0., 0.], [1e-30, 1e-30], [1., inf], [1e-9, 0.]], np.float32)
    b = np.array([[1e20, 2e20], [3e38, 1e38], [1., 0.], [1e-30, 2e-30], [1., 1.], [1e-9, 1e-9]], np.float32)
    _both(lambda L: _grad(L, lambda L, x: L.nn.functional.cosine_similarity(x, L.tensor(b)), a))


# -- where / masking idioms: the NaN gradient of the unselected branch -------------------------------------------------
@pytest.mark.parametrize("f", [
    lambda L, x: L.where(x > 0, x.sqrt(), L.zeros_like(x)),            # NaN gradient through where, as torch
    lambda L, x: L.where(x != 0, x.abs().log(), 0.),
    lambda L, x: L.where(x > 0, L.where(x > 0, x, L.ones_like(x)).log(), x),   # the double-where fix
    lambda L, x: x.masked_fill(x <= 0, 1.).log().masked_fill(x <= 0, 0.),
    lambda L, x: (x / x).nan_to_num(),
    lambda L, x: x.sqrt()[x > 0],
    lambda L, x: L.where(x.log().isnan(), L.zeros(()), x.log()),
    lambda L, x: L.linalg.vector_norm(x - x.detach()),
    lambda L, x: L.fmax(x, x.flip(0)), lambda L, x: L.maximum(x, x.flip(0)), lambda L, x: L.fmin(x, x.flip(0)),
    lambda L, x: x.nan_to_num(0., 1., -1.),
])
def test_nan_gradients_through_masks(f):
    _both(lambda L: _grad(L, f, np.array([0., 1., -1., 4., nan, inf], np.float32)))


# -- reductions and selection with NaN ---------------------------------------------------------------------------------
X = np.array([[1., nan, 3., -inf], [2., 5., inf, 0.], [inf, -inf, 1., 2.], [0.5, 0.25, -1., 7.]], np.float32)


@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(1), lambda L, x: x.nansum(1), lambda L, x: x.nanmean(1), lambda L, x: x.max(1),
    lambda L, x: x.amin(0), lambda L, x: x.argmax(1), lambda L, x: x.argmin(), lambda L, x: x.median(1),
    lambda L, x: x.nanmedian(), lambda L, x: x.std(1), lambda L, x: x.var(0), lambda L, x: x.logsumexp(1),
    lambda L, x: x.cumsum(1), lambda L, x: x.cummax(1), lambda L, x: x.prod(1), lambda L, x: x.sort(1),
    lambda L, x: x.sort(dim=1, descending=True, stable=True), lambda L, x: x.topk(2, 1), lambda L, x: x.kthvalue(2, 1),
    lambda L, x: L.unique(x, return_counts=True), lambda L, x: L.aminmax(x, dim=1),
    lambda L, x: L.quantile(x.float(), L.tensor([0.25, 0.9]), dim=1),
    lambda L, x: L.nanquantile(x.float(), 0.5, dim=1), lambda L, x: L.clamp(x, min=L.tensor([nan, 0., 5., 0.]).to(x.dtype)),
])
def test_reductions_and_selection_with_nan(f):
    for dt in ("float32", "float64", "float16", "bfloat16"):
        tol = dict(rtol=1e-2, atol=1e-2) if dt in ("float16", "bfloat16") else dict(rtol=1e-6, atol=1e-7)
        _both(lambda L: f(L, L.tensor(X).to(getattr(L, dt))), **tol)


@pytest.mark.parametrize("f", [lambda L, x: x.max(), lambda L, x: x.amax(0), lambda L, x: x.median(),
                               lambda L, x: x.nanmedian(), lambda L, x: x.nanquantile(0.4), lambda L, x: x.nanmean(),
                               lambda L, x: x.sort()[0], lambda L, x: x.topk(2)[0], lambda L, x: x.std()])
def test_reduction_gradients_with_nan(f):
    _both(lambda L: _grad(L, f, np.array([1., nan, 3., nan, 2.], np.float32)))


# -- nan_to_num, isclose ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_nan_to_num_variants(dt):
    _both(lambda L: (lambda x: (x.nan_to_num(), x.nan_to_num(1e10, 1e40, -1e40), x.nan_to_num(1, 2, -3),
                                L.nan_to_num(x, posinf=-1.), x.clone().nan_to_num_(0.5, neginf=0.)))(
        L.tensor([nan, inf, -inf, 1., -0.]).to(getattr(L, dt))))


def test_nan_to_num_out_dtype_must_match():
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="dtype of out"):
            L.nan_to_num(L.tensor([nan, 1.]), out=L.empty(2, dtype=L.float64))


def test_isclose_equal_nan_and_errors():
    a = np.array([1., 1.0001, nan, inf, -inf, 0.], np.float32)
    b = np.array([1., 1., nan, inf, inf, 1e-9], np.float32)
    _both(lambda L: (L.isclose(L.tensor(a), L.tensor(b)), L.isclose(L.tensor(a), L.tensor(b), equal_nan=True),
                     L.allclose(L.tensor(a[2:4]), L.tensor(b[2:4]), equal_nan=True),
                     L.isclose(L.tensor([1., inf]), L.tensor([1e30, -inf]), rtol=inf)))
    for L in (ember, torch):
        with pytest.raises(TypeError):
            L.isclose(L.tensor([1.]), 1.)
        with pytest.raises(RuntimeError, match="rtol must be greater"):
            L.isclose(L.tensor([1.]), L.tensor([1.]), rtol=nan)
        with pytest.raises(RuntimeError, match="atol must be greater"):
            L.allclose(L.tensor([1.]), L.tensor([1.]), atol=nan)


# -- sampling arguments ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda L: L.normal(0., nan, (2,)), lambda L: L.normal(L.zeros(2), nan),
                                  lambda L: L.normal(L.zeros(2), L.tensor([1., nan])),
                                  lambda L: L.normal(0., L.tensor([nan])), lambda L: L.empty(2).normal_(0, nan)])
def test_normal_rejects_nan_std(call):
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="normal expects"):
            call(L)


# -- training guards -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("v", [inf, nan])
@pytest.mark.parametrize("norm_type", [2.0, inf])
def test_clip_grad_norm_with_nonfinite_gradients(v, norm_type):
    def f(L, **kw):
        p, q = L.nn.Parameter(L.ones(3)), L.nn.Parameter(L.ones(2))
        p.grad, q.grad = L.tensor([1., v, 2.]), L.tensor([3., 4.])
        return L.nn.utils.clip_grad_norm_([p, q], 1.0, norm_type=norm_type, **kw), p.grad, q.grad
    _both(f)
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="non-finite"):
            f(L, error_if_nonfinite=True)


@pytest.mark.parametrize("v, weight, scale", [(inf, [1., 1.], 2.), (nan, [1., 1.], 2.), (3., [0.9, 0.7], 4.)])
def test_grad_scaler_skips_step_on_nonfinite_gradients(v, weight, scale):
    """torch's values: a non-finite gradient skips the step and halves the scale (torch's GradScaler is slow to
    import, so its results are spelled out)."""
    m = ember.nn.Linear(2, 1)
    with ember.no_grad():
        m.weight.fill_(1.)
        m.bias.fill_(0.)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    s = ember.amp.GradScaler("cpu", init_scale=4.)
    s.scale(m(ember.tensor([[1., v]])).sum()).backward()
    s.unscale_(opt)
    assert bool(m.weight.grad.isfinite().all()) == (v == 3.)
    s.step(opt)
    s.update()
    np.testing.assert_allclose(m.weight.detach().numpy(), [weight], rtol=1e-6)
    assert s.get_scale() == scale


def test_anomaly_detection_names_the_op():
    msgs = []
    for L in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = L.tensor([0., 1.], requires_grad=True)
            with pytest.raises(RuntimeError) as e, L.autograd.detect_anomaly():
                (x.sqrt() * 0).sum().backward()
            msgs.append(str(e.value))
            y = L.tensor([0., 1.], requires_grad=True)
            with L.autograd.detect_anomaly(check_nan=False):
                (y.sqrt() * 0).sum().backward()  # NaN gradients pass when not checked
            assert bool(y.grad.isnan().any())
    assert msgs[0] == msgs[1] == "Function 'SqrtBackward0' returned nan values in its 0th output."
