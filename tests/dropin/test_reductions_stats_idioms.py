"""Reductions and statistics idioms (sum/mean/var/std over dim tuples, order statistics, norms, cov/corrcoef,
histograms, cumulative ops) against torch: values, dtypes, shapes, named-tuple fields, gradients and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

_RNG = np.random.default_rng(0)
X = _RNG.standard_normal((3, 4, 5)).astype(np.float32)
C = (_RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4))).astype(np.complex64)
I = _RNG.integers(-5, 5, (3, 4)).astype(np.int64)
N = np.array([[1., np.nan, 3, np.nan], [2, 2, 1, 1], [0.5, -1, 4, 4]], np.float32)


def _np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor) and t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    return t.numpy() if t.dtype.is_complex else t.to(t.dtype if t.dtype.is_floating_point else torch.float64).numpy() \
        if isinstance(t, torch.Tensor) else t.numpy()


def _same(e, t, rtol=1e-5, atol=1e-6):
    """Tensors, or nested tuples of them, equal in shape, dtype and value (NaNs included); named fields too."""
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        if hasattr(t, "__match_args__"):
            assert e._fields == t.__match_args__
        for a, b in zip(e, t):
            _same(a, b, rtol, atol)
        return
    assert isinstance(e, ember.Tensor)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    a, b = e.detach().numpy(), _np(t)
    np.testing.assert_allclose(a.astype(b.dtype), b, rtol=rtol, atol=atol, equal_nan=True)


def _both(fn, *arrays, rtol=1e-5, atol=1e-6):
    res = [fn(lib, *[lib.tensor(a) for a in arrays]) for lib in (ember, torch)]
    _same(*res, rtol=rtol, atol=atol)


def _grads(fn, *arrays, rtol=1e-5, atol=1e-6, seed=1):
    """Outputs and input gradients for a random output gradient."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        go = np.random.default_rng(seed).standard_normal(tuple(y.shape))
        go = (go + 1j * go[::-1]).astype(np.complex64) if y.dtype.is_complex else go
        res.append((y,) + lib.autograd.grad(y, xs, lib.tensor(go).to(y.dtype)))
    _same(*res, rtol=rtol, atol=atol)


def _raises(fn, *arrays, exc):
    for lib in (ember, torch):
        with pytest.raises(exc):
            fn(lib, *[lib.tensor(a) for a in arrays])


# -- sum / mean / prod / nansum ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda L, x: x.sum((0, -1), keepdim=True),
    lambda L, x: x.sum(1, dtype=L.float64),
    lambda L, x: L.sum(x, axis=1),
    lambda L, x: x.mean((-1, -2)),
    lambda L, x: L.mean(x, 1, True, dtype=L.float64),
    lambda L, x: x.prod(-1, keepdim=True),
    lambda L, x: L.nansum(x.masked_fill(x > 1, float("nan")), (0, 2)),
    lambda L, x: L.nanmean(x.masked_fill(x > 1, float("nan")), 1, keepdim=True),
    lambda L, x: (x > 0).sum(1),
    lambda L, x: (x > 0).prod(),
    lambda L, x: L.zeros(0, 3).sum(0),
    lambda L, x: L.zeros(0, 2).prod(0),
    lambda L, x: L.zeros(0).mean(),
    lambda L, x: x.sum(()),
    lambda L, x: L.tensor(3.).mean(0, keepdim=True),
], ids=range(15))
def test_sum_mean_prod(fn):
    _both(fn, X)


def test_int_reductions_and_mean_errors():
    _both(lambda L, x: (x.sum(), x.int().sum(0), x.prod(), x.mean(dtype=L.float32), x.to(L.uint8).sum()), I)
    _raises(lambda L, x: x.mean(0), I, exc=RuntimeError)
    _raises(lambda L, x: x.mean(dtype=L.int64), I, exc=RuntimeError)
    _raises(lambda L, x: x.sum(3), X, exc=IndexError)
    _raises(lambda L, x: x.prod((0, 1)), X, exc=TypeError)


def test_nansum_nanmean_reject_complex_on_cpu():
    _raises(lambda L, c: c.nansum(), C, exc=RuntimeError)
    _raises(lambda L, c: L.nanmean(c, 1), C, exc=RuntimeError)


# -- var / std ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("correction", [0, 1, 2, None, 0.5])
def test_var_std_corrections(correction):
    _both(lambda L, x: (x.var(1, correction=correction), x.std((0, 2), correction=correction, keepdim=True),
                        L.var_mean(x, (0, -1), correction=correction),
                        L.std_mean(x, dim=1, correction=correction, keepdim=True)), X)
    _grads(lambda L, x: x.std((0, 1), correction=correction), X)


def test_var_legacy_unbiased_and_dof():
    _both(lambda L, x: (x.var(1, unbiased=False), x.var(1, False), x.var(False), L.std(x, True),
                        L.var_mean(x, 1, False, True), x.var(0, True, True)), X)
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="degrees of freedom"):
            assert lib.tensor(X[:, :1]).var(1).isnan().all()
    _grads(lambda L, x: x.std(1), np.ones((2, 3), np.float32))  # zero std: zero gradient
    _raises(lambda L, x: x.var(), I, exc=RuntimeError)
    _raises(lambda L, x: x.var(1, unbiased=True, correction=1), X, exc=TypeError)


def test_var_std_of_complex_are_real():
    """The variance of complex input is that of ``|x - mean|``: a real tensor, with a complex gradient."""
    _both(lambda L, c: (c.var(1), c.std(0, correction=0, keepdim=True), L.var_mean(c, 1), L.std_mean(c)), C)
    _grads(lambda L, c: c.var(1), C)
    _grads(lambda L, c: c.std(), C)


def test_cov_corrcoef_complex_conjugate():
    aw = np.array([.1, .2, .3, .4], np.float32)
    _both(lambda L, c: (L.cov(c), L.cov(c, correction=0, aweights=L.tensor(aw)), L.corrcoef(c)), C)


def test_cov_weights_and_errors():
    x, fw, aw = X[0], np.array([1, 2, 0, 3, 1]), np.linspace(.1, 1, 5).astype(np.float32)
    _both(lambda L, x: (L.cov(x), L.cov(x, correction=2), L.cov(x, fweights=L.tensor(fw)),
                        L.cov(x, correction=0, fweights=L.tensor(fw), aweights=L.tensor(aw)), L.cov(x[0]),
                        L.corrcoef(x), x.cov(correction=0)), x)
    _grads(lambda L, x: L.corrcoef(x), x.astype(np.float64))
    _raises(lambda L, x: L.cov(x, fweights=L.tensor(fw.astype(np.float32))), x, exc=RuntimeError)
    _raises(lambda L, x: L.cov(x, aweights=L.tensor(-aw)), x, exc=RuntimeError)


# -- order statistics --------------------------------------------------------------------------------------------------
def test_max_min_values_indices_nan_and_ties():
    _both(lambda L, x: (x.max(), x.max(1), x.max(1, keepdim=True), L.min(x, dim=0), x.amax(1), x.amin((0, 1)),
                        L.aminmax(x), L.aminmax(x, dim=1, keepdim=True), x.argmax(), x.argmax(1),
                        x.argmin(1, keepdim=True), x.cummax(1), x.median(1), x.nanmedian(1)), N)


def test_max_min_empty_raise():
    for fn, exc in [(lambda L: L.zeros(0).max(), RuntimeError), (lambda L: L.zeros(0, 3).max(0), IndexError),
                    (lambda L: L.zeros(0).argmax(), IndexError), (lambda L: L.zeros(0, 3).amax(0), IndexError),
                    (lambda L: L.aminmax(L.zeros(0)), RuntimeError)]:
        for lib in (ember, torch):
            with pytest.raises(exc):
                fn(lib)
    _both(lambda L, x: (L.zeros(0, 3).max(1), L.zeros(0, 3).amax(1)), X)


@pytest.mark.parametrize("fn", [
    lambda L, x: x.max(), lambda L, x: x.max(1), lambda L, x: x.amin(1), lambda L, x: L.aminmax(x),
    lambda L, x: x.argmax(), lambda L, x: x.argmin(0), lambda L, x: x.median(), lambda L, x: x.median(0),
    lambda L, x: x.nanmedian(), lambda L, x: x.mode(), lambda L, x: x.cummax(0), lambda L, x: x.cummin(1),
], ids=range(12))
def test_order_reductions_reject_complex(fn):
    _raises(fn, C, exc=RuntimeError)  # NotImplementedError for some, a RuntimeError subclass


def test_out_pairs_of_values_and_indices():
    for fn in [lambda L, x, o: L.max(x, 1, keepdim=True, out=o), lambda L, x, o: L.min(x, 0, out=o),
               lambda L, x, o: L.median(x, 1, out=o), lambda L, x, o: L.nanmedian(x, 1, out=o),
               lambda L, x, o: L.mode(x, 1, out=o), lambda L, x, o: L.cummax(x, 0, out=o),
               lambda L, x, o: L.cummin(x, 1, out=o)]:
        res = []
        for lib in (ember, torch):
            out = (lib.empty(0), lib.empty(0, dtype=lib.long))
            r = fn(lib, lib.tensor(N), out)
            assert r[0] is out[0] and r[1] is out[1] and r.values is out[0]
            res.append(tuple(out))
        _same(*res)
    res = []
    for lib in (ember, torch):
        out = (lib.empty(0), lib.empty(0))
        r = lib.aminmax(lib.tensor(N), dim=0, out=out)
        assert r.min is out[0]
        res.append(tuple(out))
    _same(*res)
    _both(lambda L, x: (L.max(x, out=L.empty(0)), L.histc(x, 4, out=L.empty(0))), X)
    _raises(lambda L, x: L.median(x, out=L.empty(0)), X, exc=TypeError)
    _raises(lambda L, x: L.median(x, keepdim=True), X, exc=TypeError)


def test_max_amax_gradients_at_ties_and_nan():
    """max() and amax() split the gradient evenly among ties; max(dim) sends it to the returned index."""
    ties = np.array([[1., 3, 3, 0], [5, 5, 1, 5]], np.float32)
    for fn in [lambda L, x: x.max(), lambda L, x: x.amax(1), lambda L, x: x.amax((0, 1)),
               lambda L, x: x.max(1)[0], lambda L, x: L.aminmax(x, dim=1).max, lambda L, x: x.median(1)[0]]:
        _grads(fn, ties)
        _grads(fn, N)


def test_median_mode_ties():
    _both(lambda L, x: (x.median(), x.median(1), x.nanmedian(), x.mode(1), x.mode(0, keepdim=True)),
          np.array([[2., 1, 2, 1, 2, 1], [3, 3, 3, 3, 3, 3], [4, 1, 3, 2, 9, 9]], np.float32))
    _both(lambda L, x: (x.mode(), x.median(0)), np.array([[1, 2, 2, 3, 3], [4, 4, 4, 1, 1]]))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolations(interpolation):
    xn = X.copy()
    xn[0, 1, 2], xn[1, :, 3] = np.nan, np.nan
    q = np.array([0., .25, .5, .7, 1.], np.float32)
    _both(lambda L, x, q: (L.quantile(x, 0.3, dim=1, interpolation=interpolation),
                           L.quantile(x, q, dim=-1, keepdim=True, interpolation=interpolation)), X, q)
    _both(lambda L, x, q: (L.nanquantile(x, q, dim=2, interpolation=interpolation),
                           L.nanquantile(x, 0.65, interpolation=interpolation),
                           L.quantile(x, 0.65, dim=1, interpolation=interpolation)), xn, q)
    _grads(lambda L, x: L.quantile(x, L.tensor([.3, .5, .9]), dim=1, interpolation=interpolation), X)


def test_quantile_errors():
    _raises(lambda L, x: x.quantile(1.5), X, exc=RuntimeError)
    _raises(lambda L, x: x.quantile(L.tensor([.2, .4], dtype=L.float64), 0), X, exc=RuntimeError)
    _raises(lambda L, x: x.quantile(.5, interpolation="cubic"), X, exc=RuntimeError)
    _raises(lambda L, x: x.quantile(.5), I, exc=RuntimeError)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="too large"):
            lib.quantile(lib.zeros(2 ** 24 + 1), 0.5)


# -- logsumexp, logical, counting --------------------------------------------------------------------------------------
def test_logsumexp_inf_rows():
    rows = np.array([[-np.inf, -np.inf], [0., -np.inf], [np.inf, 1.], [np.nan, 1.]])
    _both(lambda L, x: (x.logsumexp(1), L.logsumexp(x, -1, keepdim=True)), rows)
    _both(lambda L, x: (x.logsumexp((0, 2)), L.zeros(2, 0).logsumexp(1)), X)
    _grads(lambda L, x: x.logsumexp(1), rows[:3])
    _grads(lambda L, x: x.logsumexp((0, 1), keepdim=True), X)


def test_all_any_count_nonzero():
    _both(lambda L, x: (x.to(L.uint8).all(), x.to(L.uint8).all(1), x.to(L.uint8).any(0, keepdim=True),
                        x.float().all(), x.any(1), x.any((0, 1)), L.count_nonzero(x), L.count_nonzero(x, dim=1),
                        x.count_nonzero([0, -1]), L.zeros(0).all(), L.zeros(0, dtype=L.uint8).any()), I)


# -- norms and distances -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [0, 1, 2, 3, 0.5, float("inf"), float("-inf"), -1])
def test_vector_norm_orders(ord):
    x = X.copy()
    x[0, 0, 0] = 0.
    _both(lambda L, x: (L.linalg.vector_norm(x, ord=ord, dim=(0, 2)), L.linalg.vector_norm(x, ord),
                        x.norm(p=ord, dim=1)), x, rtol=1e-4)
    _both(lambda L, c: L.linalg.vector_norm(c, ord, dim=1), C, rtol=1e-4)
    if ord != 0:  # the 0-norm's gradient is unused in the graph, in both
        _grads(lambda L, x: L.linalg.vector_norm(x, ord=ord, dim=-1, keepdim=True), x, rtol=1e-4, atol=1e-5)
        _grads(lambda L, c: L.linalg.vector_norm(c, ord, dim=1), C, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ord", [1, float("inf")])
def test_vector_norm_double_backward(ord):
    """The gradient of the 1- and inf-norms stays a function of x, so a second grad is defined (zero)."""
    res = []
    for lib in (ember, torch):
        x = lib.tensor(X[0].astype(np.float64), requires_grad=True)
        y = lib.linalg.vector_norm(x, ord, dim=0)
        (gx,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        res.append(lib.autograd.grad(gx, x, lib.ones_like(gx)))
    _same(*res)


def test_vector_norm_dtype_and_empty():
    _both(lambda L, x: (L.linalg.vector_norm(x, dtype=L.float64), L.linalg.vector_norm(x.half(), dtype=L.float32),
                        L.linalg.vector_norm(L.zeros(0)), L.norm(x, dim=1, dtype=L.float64),
                        L.linalg.vector_norm(L.zeros(0, 3), float("inf"), dim=1)), X, rtol=1e-3)
    _raises(lambda L, x: L.linalg.vector_norm(x, dtype=L.float16), X, exc=RuntimeError)
    _raises(lambda L, x: L.linalg.vector_norm(L.zeros(0), float("inf")), X, exc=RuntimeError)
    _raises(lambda L, x: L.linalg.vector_norm(x), I, exc=RuntimeError)


def test_dist_renorm_cdist():
    a, b = X[0], X[1, :2]
    _both(lambda L, x: (L.dist(x, x.flip(0)), L.dist(x, x[0], 3), L.dist(x, x[0], float("inf")), L.dist(x, x[0], 0),
                        x.renorm(2, 0, 1.0), L.renorm(x, 1, 2, 2.0), L.renorm(x, float("inf"), -1, 1.0)), X)
    for p in (0, 1, 1.5, 2, float("inf")):
        _both(lambda L, a, b: L.cdist(a, b, p=p), a, b, rtol=1e-4)
        if p:
            _grads(lambda L, a, b: L.cdist(a, b, p=p), a, b, rtol=1e-4, atol=1e-5)
    _grads(lambda L, x, y: L.dist(x, y, 3), C, C[0], rtol=1e-4, atol=1e-5)
    _grads(lambda L, x: x.renorm(2, 1, 1.5), X)
    _raises(lambda L, x: x.renorm(-1, 0, 1.0), X, exc=RuntimeError)
    _raises(lambda L, a, b: L.cdist(a, b, p=-1), a, b, exc=RuntimeError)


# -- histograms and counting -------------------------------------------------------------------------------------------
def test_histograms():
    x, w = X.ravel()[:12], np.linspace(.1, 1.2, 12).astype(np.float32)
    edges = np.array([-2., 0, .5, 3], np.float32)
    _both(lambda L, x, w, e: (L.histc(x, bins=5), L.histc(x, bins=4, min=-1, max=1), L.histc(L.ones(5), bins=4),
                              L.histogram(x, 4), L.histogram(x, 4, range=(-1., 1.), density=True),
                              L.histogram(x, e, weight=w, density=True),
                              L.histogramdd(x.reshape(4, 3), bins=[2, 3, 4]),
                              L.histogramdd(x.reshape(6, 2), bins=2, weight=w[:6], density=True)), x, w, edges)
    _raises(lambda L, x: L.histc(x, bins=4, min=2, max=1), X, exc=RuntimeError)
    _raises(lambda L, x: L.histc(x, bins=4), I, exc=RuntimeError)


def test_bincount():
    idx, w = np.array([0, 3, 3, 1, 6, 1]), np.linspace(.1, .6, 6).astype(np.float32)
    _both(lambda L, i, w: (L.bincount(i), L.bincount(i, minlength=10), L.bincount(i, weights=w),
                           L.bincount(i, weights=w.double()), i.bincount(w, 9), L.bincount(i.int()),
                           L.bincount(i[:0]), L.bincount(i[:0], weights=w[:0], minlength=3)), idx, w)
    _raises(lambda L, i: L.bincount(i - 1), idx, exc=RuntimeError)
    _raises(lambda L, i: L.bincount(i, minlength=-1), idx, exc=RuntimeError)
    _raises(lambda L, i: L.bincount(i.float()), idx, exc=RuntimeError)


def test_unique_counts():
    _both(lambda L, i: (L.unique(i, return_counts=True), L.unique(i, return_inverse=True, return_counts=True),
                        L.unique(i.reshape(6, 2), dim=0, return_counts=True),
                        L.unique_consecutive(i, return_counts=True, return_inverse=True)), I.ravel())


# -- cumulative ops, diff, trapezoid -----------------------------------------------------------------------------------
def test_cumulative_boundaries_and_grads():
    _both(lambda L, x: (x.cumsum(-1), (x > 0).cumsum(0), x.cummax(0), x.cummin(1), L.zeros(3, 0).cumsum(1),
                        L.tensor([-float("inf"), -float("inf"), 1.]).logcumsumexp(0)), N)
    _both(lambda L, i: (i.cumsum(1), i.cumsum(1, dtype=L.float32), i.int().cumprod(0)), I)
    for fn in [lambda L, x: x.cumprod(1), lambda L, x: x.prod(1), lambda L, x: x.cummax(1)[0],
               lambda L, x: x.logcumsumexp(1)]:
        _grads(fn, np.array([[1., 0, 2, 0, 3], [2, 3, 0, 1, 1], [1, 2, 2, 4, 1]], np.float32))


def test_diff_prepend_append():
    _both(lambda L, x: (L.diff(x), L.diff(x, n=2, dim=0), L.diff(x, n=0), L.diff(x, n=10),
                        L.diff(x, prepend=x[:, :2], append=x[:, :1]), L.diff(x > 0), x.diff(1, 0)), X[0])
    _grads(lambda L, x, p: L.diff(x, n=2, prepend=p), X[0], X[0, :, :1])
    _raises(lambda L, x: L.diff(x, prepend=x[0]), X[0], exc=RuntimeError)
    _raises(lambda L, x: L.diff(x, prepend=L.tensor(0.)), X[0], exc=RuntimeError)
    _raises(lambda L, x: L.diff(x, append=x[:2, :1]), X[0], exc=RuntimeError)
    _raises(lambda L, x: L.diff(x, n=-1), X[0], exc=RuntimeError)


def test_trapezoid():
    y, x = X[0], np.cumsum(np.abs(X[1, 0]))
    _both(lambda L, y, x, i: (L.trapezoid(y), L.trapezoid(y, dx=0.5, dim=0), L.trapezoid(y, x), L.trapezoid(i),
                              L.trapezoid(i, dx=2), L.trapz(y, dx=0.3), L.cumulative_trapezoid(y),
                              L.cumulative_trapezoid(y, x), L.cumulative_trapezoid(i), L.trapezoid(L.zeros(0))),
          y, x, I)
    _grads(lambda L, y, x: L.trapezoid(y, x), y, x)
    _grads(lambda L, y, x: L.cumulative_trapezoid(y, x), y, x)
    _raises(lambda L, y: L.trapezoid(y, y[0, :3]), y, exc=RuntimeError)


def test_no_spurious_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ember.corrcoef(ember.tensor([[1., 1, 1], [1, 2, 3]]))
        ember.tensor(N).nanmedian(1)
