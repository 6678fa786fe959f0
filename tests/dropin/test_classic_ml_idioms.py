"""Classic machine learning written in PyTorch (k-means, GMM EM, LBFGS/SGD regression, kNN, naive Bayes, lstsq,
kernel ridge, PCA, t-SNE), the random sampling APIs and the data utilities, against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)


def _close(e, t, rtol=1e-6, atol=1e-7):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _close(a, b, rtol, atol)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _both(f, **tol):
    _close(f(ember), f(torch), **tol)


def _same_error(f):
    with pytest.raises(Exception) as want:
        f(torch)
    with pytest.raises(type(want.value)):
        f(ember)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((120, 4)).astype(np.float32)
X[60:] += 3


def test_kmeans_lloyd_updates():
    """Lloyd iterations: cdist/argmin assignment, index_add_ and scatter_add_ sums, weighted bincount."""
    def run(lib):
        x, k = lib.tensor(X), 3
        c = x[[0, 60, 100]].clone()
        for _ in range(6):
            a = lib.cdist(x, c).argmin(dim=1)
            s = lib.zeros(k, 4).index_add_(0, a, x)
            s2 = lib.zeros(k, 4).scatter_add_(0, a[:, None].expand(-1, 4), x)
            n = lib.bincount(a, minlength=k).float()
            c = s / n[:, None].clamp(min=1)
        inertia = ((x - c[a]) ** 2).sum()
        return c, a, s2, lib.bincount(a, weights=x[:, 0], minlength=k), inertia, lib.unique(a, return_counts=True)
    _both(run, rtol=1e-5, atol=1e-5)


def test_gmm_em_full_covariance():
    """EM with MultivariateNormal (covariance / scale_tril / precision), logsumexp responsibilities, and the
    fitted MixtureSameFamily's log_prob, mean and variance."""
    def run(lib):
        D = lib.distributions
        x = lib.tensor(X[:, :2]).double()
        mu, cov = x[[0, 60]].clone(), lib.eye(2, dtype=lib.float64).repeat(2, 1, 1)
        pi = lib.full((2,), 0.5, dtype=lib.float64)
        for _ in range(4):
            lp = D.MultivariateNormal(mu, covariance_matrix=cov).log_prob(x[:, None]) + pi.log()
            r = (lp - lp.logsumexp(1, keepdim=True)).exp()
            nk = r.sum(0)
            mu = r.T @ x / nk[:, None]
            d = x[:, None] - mu
            cov = lib.einsum("nk,nki,nkj->kij", r, d, d) / nk[:, None, None] + 1e-6 * lib.eye(2, dtype=lib.float64)
            pi = nk / nk.sum()
        tril = D.MultivariateNormal(mu, scale_tril=lib.linalg.cholesky(cov))
        prec = D.MultivariateNormal(mu, precision_matrix=lib.linalg.inv(cov))
        mix = D.MixtureSameFamily(D.Categorical(probs=pi), tril)
        return (mu, cov, pi, tril.log_prob(x[:, None]), prec.log_prob(x[:, None]), mix.log_prob(x), mix.mean,
                mix.variance, tril.entropy())
    _both(run, rtol=1e-9, atol=1e-10)


def test_diagonal_mixture_log_prob_gradients():
    """A trainable diagonal GMM: MixtureSameFamily(Categorical(logits), Independent(Normal, 1))."""
    def run(lib):
        D = lib.distributions
        lg = lib.tensor([0.1, -0.3, 0.2], requires_grad=True)
        loc = lib.tensor([[0., 1.], [2., 0.], [-1., 1.]], requires_grad=True)
        sc = lib.tensor([[1., .5], [.7, 1.2], [.3, .9]], requires_grad=True)
        m = D.MixtureSameFamily(D.Categorical(logits=lg), D.Independent(D.Normal(loc, sc), 1))
        lp = m.log_prob(lib.tensor(X[:5, :2]))
        lp.backward(lib.tensor([1., 0.5, -1., 2., 0.3]))
        return lp, lg.grad, loc.grad, sc.grad
    _both(run, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [{}, dict(line_search_fn="strong_wolfe", history_size=10, max_iter=50),
                                dict(line_search_fn="strong_wolfe", tolerance_grad=1e-5, tolerance_change=1e-9,
                                     max_eval=30, max_iter=20),
                                dict(lr=0.5, max_iter=5, history_size=3)])
def test_lbfgs_softmax_regression(kw):
    """Multinomial logistic regression fit by LBFGS with a closure: weights, losses and the iteration counts."""
    y = (X[:, 0] - 2 * X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)
    w0 = np.random.default_rng(1).standard_normal((3, 4)) * 0.1

    def run(lib):
        x, t = lib.tensor(X).double(), lib.tensor(y)
        lin = lib.nn.Linear(4, 3).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w0))
            lin.bias.zero_()
        opt = lib.optim.LBFGS(lin.parameters(), **kw)

        def closure():
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(lin(x), t) + 1e-2 * lin.weight.pow(2).sum()
            loss.backward()
            return loss
        losses = lib.stack([opt.step(closure).detach() for _ in range(2)])
        st = opt.state_dict()["state"][0]
        return lin.weight, lin.bias, losses, st["func_evals"], st["n_iter"]
    _both(run, rtol=1e-7, atol=1e-9)


def test_sgd_nesterov_softmax_regression():
    """Softmax regression by SGD with Nesterov momentum, weight decay and label smoothing."""
    y = (X[:, 0] + X[:, 3] > 1.5).astype(np.int64)
    w0 = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32) * 0.1

    def run(lib):
        x, t = lib.tensor(X), lib.tensor(y)
        w, b = lib.tensor(w0).requires_grad_(), lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w, b], lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
        for _ in range(15):
            opt.zero_grad(set_to_none=True)
            lib.nn.functional.cross_entropy(x @ w.T + b, t, label_smoothing=0.1).backward()
            opt.step()
        return w, b, opt.state_dict()["state"][0]["momentum_buffer"], lib.softmax(x @ w.T + b, 1)
    _both(run, rtol=1e-5, atol=1e-6)


def test_knn_and_gaussian_naive_bayes():
    """kNN by cdist + topk and majority vote; Gaussian naive Bayes by per-class mean/var and log_softmax."""
    xtr, ytr = X[::2].astype(np.float64), (X[::2, 0] > 1).astype(np.int64) + (X[::2, 1] > 1)
    xq = X[1::2][:15].astype(np.float64)

    def run(lib):
        x, y, q = lib.tensor(xtr), lib.tensor(ytr), lib.tensor(xq)
        d = lib.cdist(q, x)
        v, i = d.topk(5, dim=1, largest=False)
        votes = lib.zeros(15, 3, dtype=lib.float64).scatter_add_(1, y[i], 1 / (v + 1e-8))
        prior = lib.bincount(y, minlength=3).double() / len(y)
        mu = lib.stack([x[y == c].mean(0) for c in range(3)])
        var = lib.stack([x[y == c].var(0, unbiased=False) for c in range(3)]) + 1e-9
        ll = lib.distributions.Normal(mu, var.sqrt()).log_prob(q[:, None]).sum(-1) + prior.log()
        return v, i, y[i].mode(dim=1).values, votes.argmax(1), ll.log_softmax(1), d.kthvalue(3, dim=1).values
    _both(run, rtol=1e-9, atol=1e-10)


def test_lstsq_kernel_ridge_and_pca():
    """Linear regression by lstsq (values and gradients), kernel ridge by solve/cholesky_solve, PCA by SVD."""
    a, g = X[:40].astype(np.float64), np.random.default_rng(3).standard_normal((5, 2))

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        x1 = lib.cat([x, lib.ones(40, 1, dtype=lib.float64)], 1)
        b = lib.tensor(a[:, :2] @ np.array([[1., 2.], [3., 4.]]) + 0.1)
        sol = lib.linalg.lstsq(x1, b).solution
        sol.backward(lib.tensor(g))
        r = lib.linalg.lstsq(x1.detach(), b, driver="gelsd")
        k = lib.exp(-lib.cdist(x.detach(), x.detach()) ** 2 / 2) + 0.1 * lib.eye(40, dtype=lib.float64)
        alpha = lib.linalg.solve(k, b[:, 0])
        alpha2 = lib.cholesky_solve(b[:, :1], lib.linalg.cholesky(k))
        xc = x.detach() - x.detach().mean(0, keepdim=True)
        _, s, vh = lib.linalg.svd(xc, full_matrices=False)
        vh = vh * lib.sign(vh[:, :1])
        return sol, x.grad, r.solution, r.residuals, r.rank, alpha, alpha2, s, xc @ vh[:2].T, s ** 2 / (s ** 2).sum()
    _both(run, rtol=1e-8, atol=1e-9)


def test_tsne_from_scratch():
    """t-SNE as the reference scripts write it: per-point perplexity binary search, gains and momentum updates,
    ``num[range(n), range(n)] = 0``, and the autograd KL gradient matching the closed form."""
    xs, y0 = X[:20].astype(np.float64), np.random.default_rng(4).standard_normal((20, 2))

    def run(lib):
        x, n = lib.tensor(xs), 20
        sx = (x * x).sum(1)
        dist = (-2 * x @ x.t() + sx).t() + sx
        p, beta, log_u = lib.zeros(n, n, dtype=lib.float64), lib.ones(n, 1, dtype=lib.float64), np.log(5.0)
        idx = list(range(n))
        for i in range(n):
            lo = hi = None
            di = dist[i, idx[:i] + idx[i + 1:]]
            for _ in range(50):
                pi = lib.exp(-di * beta[i])
                h = lib.log(pi.sum()) + beta[i] * (di * pi).sum() / pi.sum()
                if lib.abs(h - log_u) < 1e-5:
                    break
                if h > log_u:
                    lo = beta[i].clone()
                    beta[i] = beta[i] * 2 if hi is None else (beta[i] + hi) / 2
                else:
                    hi = beta[i].clone()
                    beta[i] = beta[i] / 2 if lo is None else (beta[i] + lo) / 2
            p[i, idx[:i] + idx[i + 1:]] = pi / pi.sum()
        p = lib.max((p + p.t()) / (2 * n), lib.tensor([1e-12]))
        y, iy, gains = lib.tensor(y0), lib.zeros(n, 2, dtype=lib.float64), lib.ones(n, 2, dtype=lib.float64)
        for _ in range(10):
            num = 1 / (1 + lib.cdist(y, y) ** 2)
            num[range(n), range(n)] = 0.
            q = lib.max(num / num.sum(), lib.tensor([1e-12]))
            pq = (p - q) * num
            dy = 4 * (pq.sum(1, keepdim=True) * y - pq @ y)
            gains = (gains + 0.2) * ((dy > 0) != (iy > 0)).double() + gains * 0.8 * ((dy > 0) == (iy > 0)).double()
            gains[gains < 0.01] = 0.01
            iy = 0.5 * iy - 100 * gains * dy
            y = y + iy - (y + iy).mean(0)
        yg = y.clone().requires_grad_()
        num = (1 / (1 + lib.cdist(yg, yg) ** 2)).masked_fill(lib.eye(n, dtype=lib.bool), 0)
        kl = (p * (p.log() - (num / num.sum()).clamp_min(1e-12).log())).sum()
        kl.backward()
        return beta, p, y, kl, yg.grad
    _both(run, rtol=1e-8, atol=1e-10)


# -- random sampling --------------------------------------------------------------------------------------------------
N = 100_000


def _parts(z):
    return [z.real.mean().item(), z.imag.mean().item(), z.real.std().item(), z.imag.std().item()]


@pytest.mark.parametrize("case", [
    lambda lib: lib.randn(N, dtype=lib.complex64),
    lambda lib: lib.rand(N, dtype=lib.complex128),
    lambda lib: lib.empty(N, dtype=lib.complex128).normal_(1., 2.),
    lambda lib: lib.empty(N, dtype=lib.complex64).uniform_(-1., 3.),
    lambda lib: lib.normal(lib.full((N,), 1 + 2j), 2.),
    lambda lib: lib.normal(lib.full((N,), 1 + 2j), lib.full((N,), 2.)),
    lambda lib: lib.normal(1., 2., (N,), dtype=lib.complex64),
    lambda lib: lib.randn_like(lib.zeros(N, dtype=lib.complex64)),
    lambda lib: lib.rand_like(lib.zeros(N, dtype=lib.complex128)),
])
def test_complex_sampling(case):
    """Complex samples: independent real and imaginary parts (normal ones of std / sqrt(2) each)."""
    e, t = case(ember), case(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_parts(e), _parts(t), atol=0.03)
    assert e.real.std().item() > 0.2 and len(ember.unique(e.real)) > N // 2


def test_sampling_statistics():
    """multinomial with/without replacement, bernoulli with a p tensor, randint, normal overloads."""
    for lib in LIBS:
        p = lib.tensor([0.5, 0.3, 0.15, 0.05])
        s = lib.multinomial(p.expand(N, 4), 2)
        assert (s[:, 0] != s[:, 1]).all()
        np.testing.assert_allclose(np.bincount(s[:, 0].numpy(), minlength=4) / N, p.numpy(), atol=0.01)
        s = lib.multinomial(p, N, replacement=True, generator=lib.Generator().manual_seed(1))
        np.testing.assert_allclose(np.bincount(s.numpy(), minlength=4) / N, p.numpy(), atol=0.01)
        b = lib.bernoulli(lib.tensor([0.1, 0.5, 0.9]).expand(N, 3))
        np.testing.assert_allclose(b.mean(0).numpy(), [0.1, 0.5, 0.9], atol=0.01)
        r = lib.randint(-5, 5, (N,))
        assert r.dtype == lib.int64 and r.min().item() == -5 and r.max().item() == 4
        z = lib.normal(lib.tensor([0., 10.]).expand(N, 2), lib.tensor([1., 3.]))
        np.testing.assert_allclose(z.std(0).numpy(), [1, 3], rtol=0.02)


@pytest.mark.parametrize("call", [
    lambda lib: lib.randperm(2, dtype=lib.bool),
    lambda lib: lib.randperm(0, dtype=lib.complex64),
    lambda lib: lib.randperm(2050, dtype=lib.float16),
    lambda lib: lib.randint(0, 3, (2,), dtype=lib.complex64),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(),
    lambda lib: lib.empty(3, dtype=lib.complex64).random_(0, 3),
    lambda lib: lib.empty(3, dtype=lib.float16).random_(0, 100000),
    lambda lib: lib.empty(3, dtype=lib.float16).random_(-70000, 3),
    lambda lib: lib.empty(3, dtype=lib.bool).random_(0, 3),
    lambda lib: lib.empty(3, dtype=lib.bool).random_(-1, 1),
    lambda lib: lib.empty(3, dtype=lib.complex64).geometric_(0.5),
    lambda lib: lib.empty(3, dtype=lib.bool).geometric_(0.5),
    lambda lib: lib.empty(3, dtype=lib.complex64).bernoulli_(0.5),
    lambda lib: lib.empty(3, dtype=lib.complex64).bernoulli_(lib.rand(3)),
    lambda lib: lib.zeros(3).bernoulli_(lib.tensor([1, 0, 1])),
    lambda lib: lib.bernoulli(lib.zeros(3, dtype=lib.complex64)),
    lambda lib: lib.bernoulli(lib.zeros(3, dtype=lib.complex64), 0.5),
    lambda lib: lib.normal(1., lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.complex64, requires_grad=True), 1.),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(2), (2,)),
    lambda lib: lib.empty(3, dtype=lib.long).uniform_(),
    lambda lib: lib.empty(3, dtype=lib.long).normal_(),
])
def test_sampling_argument_checks(call):
    """torch's dtype and bound checks of the samplers, with its exception types."""
    _same_error(call)


def test_random_beyond_float_precision_warns():
    """random_ past 2**mantissa still draws, with a precision warning, and randperm in float16 stops at 2049."""
    for lib in LIBS:
        with pytest.warns(UserWarning, match="out of bounds"):
            x = lib.empty(1000, dtype=lib.float16).random_(0, 5000)
        assert x.max().item() > 2048
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert lib.empty(100, dtype=lib.float16).random_().max().item() <= 2048
        assert sorted(lib.randperm(2049, dtype=lib.float16).tolist()) == list(range(2049))
        assert str(lib.randperm(2049, dtype=lib.float16, device="meta").device) == "meta"


def test_generator_state_round_trips():
    """get_state/set_state, clone_state and a fresh generator replay the same draws of every kind."""
    g = ember.Generator().manual_seed(42)
    s = g.get_state()
    draws = [ember.rand(5, generator=g), ember.randn(3, dtype=ember.complex64, generator=g),
             ember.randint(0, 10, (4,), generator=g), ember.randperm(6, generator=g)]
    g.set_state(s)
    h = g.clone_state()
    assert isinstance(h, ember.Generator) and h.initial_seed() == 42
    for gen in (g, h):
        again = [ember.rand(5, generator=gen), ember.randn(3, dtype=ember.complex64, generator=gen),
                 ember.randint(0, 10, (4,), generator=gen), ember.randperm(6, generator=gen)]
        assert all((a == b).all() for a, b in zip(draws, again))
    assert s.dtype == ember.uint8 and isinstance(torch.Generator().clone_state(), torch.Generator)


# -- ops these idioms lean on ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    ((3,), 0, [0, 3], (2,), {}), ((3,), 0, [0, -1], (2,), {}), ((), 0, [1], (), {}),
    ((3, 3, 3), 0, [0, 3], (2, 3, 3), {}), ((3, 3, 3), 1, [0, 3], (3, 2, 3), {}), ((3, 3, 3), 2, [0, 3], (3, 3, 2), {}),
    ((3, 2), 0, [0, 3], (2, 2), dict(alpha=2)), ((3, 2), 0, [0, -1], (2, 2), {}), ((3, 2), -1, [0, 2], (3, 2), {}),
])
@pytest.mark.parametrize("int32", [False, True])
def test_index_add_out_of_range_error_types(case, int32):
    """An out-of-range index_add index: RuntimeError or IndexError, as torch's paths raise them."""
    shape, dim, idx, src, kw = case
    _same_error(lambda lib: lib.zeros(shape).index_add_(dim, lib.tensor(idx, dtype=lib.int32 if int32 else lib.int64),
                                                         lib.ones(src), **kw))


def test_cdist_compute_modes():
    """Every compute_mode gives the distances and gradients; an unknown one is a ValueError."""
    a, b = X[:30, :3], X[30:70, :3]
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        def run(lib):
            x = lib.tensor(a, requires_grad=True)
            d = lib.cdist(x, lib.tensor(b), compute_mode=mode)
            d.backward(lib.ones_like(d))
            return d, x.grad
        _both(run, rtol=1e-4, atol=1e-4)
    for mode in ("foo", None):
        _same_error(lambda lib: lib.cdist(lib.zeros(2, 3), lib.zeros(2, 3), compute_mode=mode))


# -- data utilities ---------------------------------------------------------------------------------------------------
def test_data_pipeline():
    """random_split by fractions, class-balancing WeightedRandomSampler, SubsetRandomSampler, BatchSampler and a
    DataLoader with collate_fn / drop_last."""
    def run(lib):
        data = lib.utils.data
        ds = data.TensorDataset(lib.arange(20.).view(10, 2), lib.tensor([0] * 8 + [1] * 2))
        a, b = data.random_split(ds, [0.7, 0.3], generator=lib.Generator().manual_seed(0))
        parts = [len(p) for p in data.random_split(range(11), [0.5, 0.5])]
        w = (1.0 / lib.bincount(ds.tensors[1]).float())[ds.tensors[1]]
        sampler = data.WeightedRandomSampler(w, num_samples=4000, replacement=True)
        ys = lib.cat([y for _, y in data.DataLoader(ds, batch_size=100, sampler=sampler)])
        sub = sorted(int(i) for i in data.SubsetRandomSampler([5, 6, 7, 8]))
        batches = list(data.BatchSampler(data.SequentialSampler(range(10)), 3, drop_last=True))

        def collate(batch):
            xs, y = zip(*batch)
            return lib.stack(xs).sum(1), lib.tensor(y)
        dl = data.DataLoader(ds, batch_size=4, collate_fn=collate, drop_last=True)
        out = [x for x, _ in dl]
        cat = data.ConcatDataset([a, data.Subset(ds, [1, 3])])
        return (len(a), len(b), sorted(a.indices + b.indices), parts, round(ys.float().mean().item(), 1), sub,
                batches, len(dl), out[0], out[1], len(cat), cat[-1][0])
    _both(run)
