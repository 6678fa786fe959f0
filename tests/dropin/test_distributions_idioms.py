"""Probabilistic-programming idioms (VAE, SAC, PPO, mixtures, flows, priors) of the distributions package against
torch: deterministic quantities and their gradients exactly-ish, draws by shape, dtype and statistics."""
import numpy as np
import pytest
import torch

import ember

R = np.random.default_rng


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _both(fn, rtol=1e-5, atol=1e-6):
    """Runs ``fn(lib)`` for ember and torch and compares what it returns (tensors by value, the rest by ``str``)."""
    e, t = fn(ember), fn(torch)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        if isinstance(b, torch.Tensor):
            _close(a, b, rtol, atol)
        else:
            assert str(a).replace("ember", "torch") == str(b)


MU = R(0).standard_normal((4, 2)).astype(np.float32)
LOGSTD = (R(1).standard_normal((4, 2)) * 0.3).astype(np.float32)
EPS = R(2).standard_normal((4, 2)).astype(np.float32)


def test_vae_reparameterized_elbo():
    """VAE: rsample-style ``mu + std * eps``, Gaussian log-likelihood, analytic KL to the prior, with gradients."""
    def run(lib):
        D = lib.distributions
        mu, lv = lib.tensor(MU, requires_grad=True), lib.tensor(LOGSTD, requires_grad=True)
        q = D.Normal(mu, (0.5 * lv).exp())
        p = D.Normal(lib.zeros_like(mu), lib.ones_like(lv))
        z = mu + q.stddev * lib.tensor(EPS)
        rec = D.Independent(D.Normal(z, 0.5), 1).log_prob(lib.tensor(EPS[::-1].copy()))
        kl = D.kl_divergence(q, p).sum(-1)
        kl_ind = D.kl_divergence(D.Independent(q, 1), D.Independent(p, 1))
        loss = (kl - rec).mean()
        return [rec, kl, kl_ind, *lib.autograd.grad(loss, [mu, lv])]
    _both(run)


def test_sac_tanh_squashed_gaussian():
    """SAC actor: a Normal pushed through a cached TanhTransform and an action-scale affine map; the log-density of
    the squashed action and its gradient in the policy's parameters."""
    def run(lib):
        D = lib.distributions
        T = D.transforms
        mu, ls = lib.tensor(MU, requires_grad=True), lib.tensor(LOGSTD, requires_grad=True)
        pi = D.TransformedDistribution(D.Independent(D.Normal(mu, ls.exp()), 1), [
            T.TanhTransform(cache_size=1), T.AffineTransform(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 3.0]))])
        u = mu + ls.exp() * lib.tensor(EPS)
        a = pi.transforms[1](pi.transforms[0](u))
        lp = pi.log_prob(a)
        return [a, lp, *lib.autograd.grad(lp.sum(), [mu, ls]), pi.batch_shape, pi.event_shape, pi.has_rsample,
                pi.support]
    _both(run, rtol=1e-4, atol=1e-5)


def test_ppo_categorical_clipped_objective():
    """PPO: Categorical(logits) log-probabilities of taken actions, the clipped ratio and an entropy bonus."""
    def run(lib):
        D = lib.distributions
        logits = lib.tensor(R(3).standard_normal((5, 4)).astype(np.float32), requires_grad=True)
        d = D.Categorical(logits=logits)
        act = lib.tensor([0, 3, 1, 1, 2])
        old = d.log_prob(act).detach() - 0.1
        ratio = (d.log_prob(act) - old).exp()
        adv = lib.tensor([1.0, -1.0, 0.5, 2.0, -0.3])
        loss = -lib.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() - 0.01 * d.entropy().mean()
        return [loss, d.probs, d.entropy(), *lib.autograd.grad(loss, [logits])]
    _both(run)


@pytest.mark.parametrize("param", ["scale_tril", "covariance_matrix", "precision_matrix"])
def test_multivariate_normal_parametrizations(param):
    """MultivariateNormal from each of its three matrices: log_prob and its gradients, entropy, moments, expand."""
    a = R(4).standard_normal((2, 3, 3))
    cov = (a @ a.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float32)
    mat = {"scale_tril": np.linalg.cholesky(cov), "covariance_matrix": cov,
           "precision_matrix": np.linalg.inv(cov)}[param].astype(np.float32)
    loc, x = R(5).standard_normal((2, 3)).astype(np.float32), R(6).standard_normal((5, 2, 3)).astype(np.float32)

    def run(lib):
        m, M = lib.tensor(loc, requires_grad=True), lib.tensor(mat, requires_grad=True)
        d = lib.distributions.MultivariateNormal(m, **{param: M})
        lp = d.log_prob(lib.tensor(x))
        e = d.expand((4, 2))
        return [lp, *lib.autograd.grad(lp.sum(), [m, M]), d.entropy(), d.variance, d.covariance_matrix,
                d.precision_matrix, d.scale_tril, e.batch_shape, e.log_prob(lib.tensor(x[0]))]
    _both(run, rtol=1e-4, atol=1e-5)


def test_low_rank_mvn_and_kl_to_full():
    """LowRankMultivariateNormal (a factor-analysis posterior): log_prob, gradients, and KL to a full MVN."""
    W, d = R(7).standard_normal((3, 2)).astype(np.float32), np.array([0.5, 1.0, 2.0], np.float32)
    x = R(8).standard_normal((4, 3)).astype(np.float32)

    def run(lib):
        D = lib.distributions
        w, dg = lib.tensor(W, requires_grad=True), lib.tensor(d, requires_grad=True)
        q = D.LowRankMultivariateNormal(lib.zeros(3), w, dg)
        p = D.MultivariateNormal(lib.ones(3), covariance_matrix=2 * lib.eye(3))
        lp, kl = q.log_prob(lib.tensor(x)), D.kl_divergence(q, p)
        return [lp, kl, *lib.autograd.grad(lp.sum() + kl, [w, dg]), q.entropy(), q.covariance_matrix]
    _both(run, rtol=1e-4, atol=1e-5)


def test_gaussian_mixture_same_family():
    """A GMM as MixtureSameFamily(Categorical, MultivariateNormal): log-likelihood, its gradients, moments."""
    def run(lib):
        D = lib.distributions
        w = lib.tensor([0.2, 0.3, 0.5], requires_grad=True)
        mus = lib.tensor(R(9).standard_normal((3, 2)).astype(np.float32), requires_grad=True)
        tril = lib.eye(2).expand(3, 2, 2) * lib.tensor([1.0, 2.0, 0.5]).view(3, 1, 1)
        gmm = D.MixtureSameFamily(D.Categorical(probs=w), D.MultivariateNormal(mus, scale_tril=tril))
        lp = gmm.log_prob(lib.tensor(EPS))
        return [lp, *lib.autograd.grad(lp.sum(), [w, mus]), gmm.mean, gmm.variance, gmm.sample((5,)).shape,
                gmm.batch_shape, gmm.event_shape]
    _both(run)


@pytest.mark.parametrize("cls", ["Normal", "Laplace", "Gumbel", "Cauchy", "LogNormal"])
def test_location_scale_cdf_icdf_and_second_derivatives(cls):
    """Location-scale families in float64: log_prob, cdf, icdf, entropy and double-backward gradients."""
    def run(lib):
        D = lib.distributions
        loc = lib.tensor([0.3, -1.0], dtype=lib.float64, requires_grad=True)
        scale = lib.tensor([1.5, 0.4], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([1.0, 0.2], dtype=lib.float64, requires_grad=True)
        d = getattr(D, cls)(loc, scale)
        out = []
        for fn in ("log_prob", "cdf"):
            v = getattr(d, fn)(x)
            g = lib.autograd.grad(v.sum(), [loc, scale, x], create_graph=True)
            h = lib.autograd.grad(sum(q.sum() for q in g), [loc, scale, x], retain_graph=True)
            out += [v, *g, *h]
        q = d.icdf(lib.tensor([0.2, 0.7], dtype=lib.float64))
        out += [q, *lib.autograd.grad(q.sum(), [loc, scale], retain_graph=True), d.entropy()]
        return out
    _both(run, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("spec", [
    "D.Beta(a, b)", "D.Gamma(a, b)", "D.Kumaraswamy(a, b)", "D.Weibull(b, a)", "D.StudentT(a, b, b)",
    "D.FisherSnedecor(a, b)", "D.InverseGamma(a, b)", "D.VonMises(a, b)", "D.Binomial(10, probs=a / 3)",
    "D.NegativeBinomial(b, probs=a / 3)", "D.Geometric(probs=a / 3)", "D.Poisson(a)", "D.Chi2(a)",
    "D.ContinuousBernoulli(a / 3)", "D.Pareto(b, a)", "D.Exponential(a)", "D.HalfNormal(a)", "D.HalfCauchy(a)"])
def test_shape_parameter_log_prob_entropy_gradients(spec):
    """Non-location-scale families: log_prob (and entropy where defined) with gradients in every parameter."""
    x = {"Binomial": [2.0, 7.0], "NegativeBinomial": [2.0, 7.0], "Geometric": [0.0, 3.0], "Poisson": [0.0, 3.0],
         "Pareto": [2.5, 3.0]}.get(spec[2:].split("(")[0], [0.1, 0.8])

    def run(lib):
        a = lib.tensor([0.3, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.5, 0.4], dtype=lib.float64, requires_grad=True)
        d = eval(spec, {"D": lib.distributions, "a": a, "b": b})
        v = d.log_prob(lib.tensor(x, dtype=lib.float64))
        out = [v, *[g for g in lib.autograd.grad(v.sum(), [a, b], allow_unused=True) if g is not None],
               d.batch_shape, d.support]
        try:
            out.append(d.entropy())
        except NotImplementedError:
            out.append("no entropy")
        return out
    _both(run, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("probs", [True, False])
def test_discrete_probs_vs_logits(probs):
    """Bernoulli / Categorical / OneHotCategorical built from probs or logits: log_prob, entropy, enumerate_support,
    moments and the score-function gradient ``log_prob(sample) * reward``."""
    p = R(10).uniform(0.1, 1.0, (3, 5)).astype(np.float32)
    idx = R(11).integers(0, 5, (7, 3))

    def run(lib):
        D = lib.distributions
        w = lib.tensor(p if probs else np.log(p), requires_grad=True)
        kw = {"probs": w} if probs else {"logits": w}
        cat, ohc = D.Categorical(**kw), D.OneHotCategorical(**kw)
        bern = D.Bernoulli(**({"probs": w[0] / 1.1} if probs else {"logits": w[0]}))
        a = lib.tensor(idx)
        sf = (cat.log_prob(a) * lib.arange(3.0)).sum() + ohc.log_prob(lib.nn.functional.one_hot(a, 5).float()).sum()
        sf = sf + bern.log_prob(lib.tensor([1.0, 0.0, 1.0, 1.0, 0.0])).sum()
        return [cat.logits, cat.probs, cat.entropy(), ohc.entropy(), bern.entropy(), bern.mean, bern.variance,
                ohc.mode, cat.enumerate_support().shape, bern.enumerate_support(expand=False).shape,
                *lib.autograd.grad(sf + cat.entropy().sum(), [w]), cat.sample((2,)).dtype, ohc.sample().dtype]
    _both(run)


def test_count_distributions():
    """Binomial / Multinomial / NegativeBinomial / Poisson: log_prob at the support's edges, moments, modes."""
    def run(lib):
        D = lib.distributions
        p = lib.tensor([0.2, 0.5, 0.9], requires_grad=True)
        b = D.Binomial(lib.tensor([3.0, 5.0, 7.0]), probs=p)
        m = D.Multinomial(10, probs=lib.stack([p, 1 - p], -1))
        nb = D.NegativeBinomial(lib.tensor([0.5, 3.0, 30.0]), logits=p)
        po = D.Poisson(lib.tensor([0.0, 2.0, 30.0]))
        v = lib.tensor([0.0, 5.0, 4.0])
        lp = b.log_prob(v) + m.log_prob(lib.stack([v, 10 - v], -1)) + nb.log_prob(v) + po.log_prob(v)
        return [lp, *lib.autograd.grad(lp.sum(), [p]), b.mean, b.variance, b.mode, m.mean, m.variance, nb.mean,
                nb.variance, nb.mode, po.mode, D.Binomial(4, probs=p).entropy(), D.Binomial(4, p).enumerate_support(),
                b.sample((2,)).dtype, m.sample().sum(-1)]
    _both(run)


def test_dirichlet_beta_lkj_wishart_priors():
    """Priors of Bayesian models: Dirichlet, Beta, LKJCholesky and Wishart log-densities, moments and KL."""
    a = R(12).standard_normal((2, 3, 3))
    cov = (a @ a.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float32)
    corr = np.linalg.cholesky(cov) / np.linalg.norm(np.linalg.cholesky(cov), axis=-1, keepdims=True)

    def run(lib):
        D = lib.distributions
        c = lib.tensor([[0.5, 2.0, 3.0], [1.5, 1.0, 4.0]], requires_grad=True)
        dir_, beta = D.Dirichlet(c), D.Beta(c[:, 0], c[:, 1])
        lkj = D.LKJCholesky(3, lib.tensor([0.5, 2.0]))
        wis = D.Wishart(df=lib.tensor([7.0, 8.0]), covariance_matrix=lib.tensor(cov))
        lp = dir_.log_prob(lib.tensor([0.2, 0.3, 0.5])) + beta.log_prob(lib.tensor(0.3))
        kl = D.kl_divergence(dir_, D.Dirichlet(lib.ones(3))) + D.kl_divergence(beta, D.Beta(2.0, 2.0))
        return [lp, kl, *lib.autograd.grad((lp + kl).sum(), [c]), dir_.mean, dir_.variance, dir_.entropy(),
                beta.mode, lkj.log_prob(lib.tensor(corr.astype(np.float32))), wis.log_prob(lib.tensor(cov)),
                wis.mean, wis.variance, wis.entropy(), lkj.sample((3,)).shape, wis.rsample((2,)).shape]
    _both(run, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("pq", [
    ("Normal(x, y)", "Laplace(y, x)"), ("Gamma(x, y)", "Exponential(y)"), ("Beta(x, y)", "Uniform(-1.0, 2.0)"),
    ("Uniform(z, x + 1)", "Normal(y, x)"), ("Gumbel(x, y)", "Normal(z, y)"), ("Exponential(x)", "Gumbel(y, x)"),
    ("Poisson(x)", "Poisson(y)"), ("Pareto(x, y + 1)", "Exponential(x)"), ("ContinuousBernoulli(z)", "Normal(x, y)"),
    ("Binomial(5, z)", "Binomial(5, z / 2)"), ("Geometric(z)", "Geometric(z / 2)"), ("HalfNormal(x)", "HalfNormal(y)"),
    ("LogNormal(x, y)", "LogNormal(y, x)"), ("Bernoulli(z)", "Poisson(x)"), ("Cauchy(x, y)", "Cauchy(y, x)")])
def test_registered_kl_pairs(pq):
    """``kl_divergence`` for registered (p, q) pairs and its gradient in p's parameters."""
    def run(lib):
        x = lib.tensor([0.4, 1.5], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([2.0, 0.7], dtype=lib.float64)
        z = lib.tensor([0.2, 0.6], dtype=lib.float64, requires_grad=True)
        env = {"x": x, "y": y, "z": z, **vars(lib.distributions)}
        kl = lib.distributions.kl_divergence(eval(pq[0], env), eval(pq[1], env))
        return [kl, *[g for g in lib.autograd.grad(kl.sum(), [x, z], allow_unused=True) if g is not None]]
    _both(run, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["real", "positive", "unit_interval", "simplex", "corr_cholesky", "greater_than(2.)",
                                  "interval(-1., 3.)", "less_than(1.)", "real_vector", "nonnegative",
                                  "independent(constraints.positive, 1)"])
def test_transform_to_constraints_round_trip(name):
    """Unconstrained parametrization (as in variational inference): ``biject_to``/``transform_to`` of a constraint,
    the constrained value, the check, the inverse and log|det J| with its gradient."""
    def run(lib):
        C = lib.distributions.constraints
        c = eval("C." + name, {"C": C, "constraints": C})
        x = lib.tensor(R(13).standard_normal((2, 6 if name == "corr_cholesky" else 3)), requires_grad=True)
        out = []
        for fn in ("biject_to", "transform_to"):
            t = getattr(lib.distributions, fn)(c)
            y = t(x)
            try:
                ladj = t.log_abs_det_jacobian(x, y)
            except NotImplementedError:  # softmax, for transform_to(simplex), is not bijective
                ladj = y.new_zeros(())
            out += [y, c.check(y).all(), t.inv(y), ladj, *lib.autograd.grad(ladj.sum() + y.sum(), [x])]
        return out
    _both(run, rtol=1e-4, atol=1e-5)


def test_flow_transforms():
    """A normalizing flow built from transforms: composition, inverse, cache identity, shapes and log|det J|."""
    def run(lib):
        D = lib.distributions
        T = D.transforms
        x = lib.tensor(R(14).standard_normal((4, 3)).astype(np.float32), requires_grad=True)
        flow = T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.SigmoidTransform(), T.AffineTransform(-1.0, 2.0)])
        sb = T.StickBreakingTransform()
        y, s = flow(x), sb(x)
        ladj = flow.log_abs_det_jacobian(x, y).sum(-1) + sb.log_abs_det_jacobian(x, s)
        exp = T.ExpTransform(cache_size=1)
        e = exp(x)
        td = D.TransformedDistribution(D.Normal(lib.zeros(3), 1.0), [flow])
        return [y, s, ladj, *lib.autograd.grad(ladj.sum(), [x]), flow.inv(y), sb.inv(s), exp.inv(e) is x,
                T.ExpTransform().inv(e) is x, exp.inv.inv is exp, sb.forward_shape((4, 3)), sb.inverse_shape((4, 4)),
                flow.sign, flow.bijective, td.log_prob(y.detach()), td.cdf(y.detach()), td.icdf(lib.full((4, 3), 0.3)),
                T.SigmoidTransform().inv(lib.tensor([0.0, 1.0])), T.TanhTransform().inv(lib.tensor([-1.0, 1.0]))]
    _both(run, rtol=1e-5, atol=1e-6)


def test_batch_event_shapes_expand_and_sample_shapes():
    """batch/event shapes, ``expand`` and ``sample(sample_shape)`` across families, Independent reinterpretation."""
    specs = ["Normal(T([0., 1]), T([1., 2]))", "Categorical(probs=T([[.3, .3, .4]] * 2))",
             "OneHotCategorical(probs=T([[.3, .3, .4]] * 2))", "Dirichlet(T([[1., 1, 1]] * 2))",
             "MultivariateNormal(T([[1., -1]] * 2), covariance_matrix=T([[2., .3], [.3, 1]]))",
             "Independent(Normal(T([[1., -1]] * 2), T([2., .5])), 1)", "Binomial(5, T([.4, .5]))",
             "RelaxedOneHotCategorical(T(0.5), T([[.2, .3, .5]] * 2))", "LKJCholesky(3, T([0.5, 2.]))",
             "MixtureSameFamily(Categorical(T([.3, .7])), Normal(T([-2., 3.]), T([1., .5])))",
             "TransformedDistribution(Normal(T([1., -1]), T([2., .5])), [transforms.ExpTransform()])"]

    def run(lib):
        out = []
        for s in specs:
            d = eval(s, {"T": lambda a: lib.tensor(a, dtype=lib.float32), **vars(lib.distributions)})
            x = d.sample((4, 3, 1))
            out += [d.batch_shape, d.event_shape, x.shape, x.dtype, d.log_prob(x).shape, d.support.event_dim]
            if "Mixture" not in s:
                e = d.expand((3, *d.batch_shape))
                out += [e.batch_shape, e.sample().shape, e.log_prob(x).shape]
        return out
    _both(run)


def test_validate_args_errors_and_default_switch():
    """Invalid parameters and out-of-support values raise ValueError with the same message; the global
    ``set_default_validate_args`` switch and the per-instance ``validate_args=False`` turn checks off."""
    bad = ["Normal(T([0., 1.]), T([-1., 1.]))", "Bernoulli(T([0.3, 1.2]))", "Categorical(T([[0.3, -0.2]]))",
           "Normal(T([0., 1.]), 1.).log_prob(T([1., 2., 3.]))", "Uniform(T([0.]), T([1.])).log_prob(T([1.5]))",
           "Categorical(T([0.3, 0.2])).log_prob(T([2]))", "Dirichlet(T([1., 2., 3.])).log_prob(T([0.2, 0.3, 0.6]))",
           "MultivariateNormal(T([0., 0.]), T([[1., 2.], [2., 1.]]))", "Bernoulli(probs=T([0.3]), logits=T([0.2]))",
           "MultivariateNormal(T(0.), T([[1., 0.], [0., 1.]]))", "Poisson(T([2., -1.])).log_prob(T([1.5, 0.]))"]
    for s in bad:
        msgs = []
        for lib in (ember, torch):
            with pytest.raises(ValueError) as info:
                eval(s, {"T": lib.tensor, **vars(lib.distributions)})
            msgs.append(str(info.value).replace("ember", "torch"))
        assert msgs[0] == msgs[1], s

    def run(lib):
        D = lib.distributions
        D.Distribution.set_default_validate_args(False)
        try:
            n = D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))
        finally:
            D.Distribution.set_default_validate_args(True)
        u = D.Uniform(lib.tensor([0.0]), lib.tensor([1.0]), validate_args=False)
        v = lib.tensor([1.5, -0.1, 0.0, 1.0])
        return [n.scale, n._validate_args, u.log_prob(v), u.cdf(v),
                D.Exponential(lib.tensor([2.0]), validate_args=False).log_prob(lib.tensor([-1.0])),
                D.Gamma(lib.tensor([0.5, 1.0, 2.0]), 1.0, validate_args=False).log_prob(lib.tensor(0.0)),
                D.Normal(0.0, 1.0)._validate_args]
    _both(run)


def test_custom_distribution_and_register_kl():
    """User code subclassing Distribution / Transform / Constraint and registering a KL rule."""
    def run(lib):
        D = lib.distributions

        class Rate(D.Distribution):
            arg_constraints = {"rate": D.constraints.positive}
            support = D.constraints.positive

            def __init__(self, rate, validate_args=None):
                self.rate = rate
                super().__init__(rate.shape, validate_args=validate_args)

            def log_prob(self, v):
                if self._validate_args:
                    self._validate_sample(v)
                return self.rate.log() - self.rate * v

        class Flip(D.Transform):
            domain = codomain = D.constraints.real
            bijective, sign = True, -1

            def _call(self, x):
                return -x

            def _inverse(self, y):
                return -y

            def log_abs_det_jacobian(self, x, y):
                return lib.zeros_like(x)

        class N2(D.Normal):
            pass

        D.register_kl(N2, N2)(lambda p, q: lib.zeros(p.batch_shape) + 7)
        r = Rate(lib.tensor([1.0, 2.0]))
        td = D.TransformedDistribution(D.Normal(lib.tensor([0.5, 1.0]), 1.0), Flip())
        out = [r.log_prob(lib.tensor([1.0, 1.0])), r.batch_shape, td.log_prob(lib.tensor([-1.0, 2.0])),
               D.kl_divergence(N2(0.0, 1.0), N2(1.0, 1.0)), D.kl_divergence(N2(0.0, 1.0), D.Normal(1.0, 2.0))]
        for call in (lambda: Rate(lib.tensor([-1.0])), lambda: r.log_prob(lib.tensor([-1.0, 2.0]))):
            try:
                call()
            except ValueError as e:
                out.append(str(e).split(" of distribution")[0])
        return out
    _both(run)


def test_scalar_parameters_and_default_dtype():
    """Python-number parameters give 0-d float tensors of the default dtype; integer values promote in log_prob."""
    def run(lib):
        D = lib.distributions
        out = []
        for dt in (lib.float32, lib.float64):
            lib.set_default_dtype(dt)
            try:
                out += [D.Normal(0.0, 1.0).sample().dtype, D.Gamma(2.0, 1.0).rsample((2,)).dtype,
                        D.Categorical(logits=lib.zeros(3)).sample().dtype, D.Poisson(2.0).sample().dtype,
                        D.MultivariateNormal(lib.zeros(2), lib.eye(2)).sample().dtype, D.Normal(0, 1).mean.dtype]
            finally:
                lib.set_default_dtype(lib.float32)
        out += [D.Normal(lib.tensor([0.0, 1.0]), 1.0).log_prob(lib.tensor([1, 2])),
                D.Normal(lib.tensor([0.0, 1.0]), 1.0).log_prob(lib.tensor([1.0, 2.0], dtype=lib.float64)),
                D.Categorical(logits=lib.tensor([0.3, -1.0, 2.0])).log_prob(lib.tensor([2, 0], dtype=lib.int32))]
        return out
    _both(run)


def _stats(mk, n=40000, f=lambda s: s):
    ember.manual_seed(0)
    torch.manual_seed(0)
    e = f(mk(ember).sample((n,))).double().numpy()
    t = f(mk(torch).sample((n,))).double().numpy()
    np.testing.assert_allclose(e.mean(0), t.mean(0), rtol=0.05, atol=0.05 * np.sqrt(t.var(0)).max())
    np.testing.assert_allclose(e.var(0), t.var(0), rtol=0.1, atol=0.02)


@pytest.mark.parametrize("spec", [
    "Gamma(T([0.05, 0.5, 5., 100.]), T([1., 2., .5, 1.]))", "Beta(T([0.1, 0.5, 5.]), T([0.2, 2., 50.]))",
    "Dirichlet(T([[0.1, 0.5, 1.], [5., 100., 1.]]))", "Binomial(T([1., 10., 100., 1e5]), T([.3, .01, .5, .7]))",
    "Poisson(T([0.01, 1., 10., 300.]))", "NegativeBinomial(T([0.5, 3., 30.]), T([0.2, .5, .9]))",
    "StudentT(T([5., 10., 30.]))", "Multinomial(20, T([0.2, .5, .3]))", "Kumaraswamy(T([0.5, 2.]), T([2., 3.]))",
    "ContinuousBernoulli(T([0.2, .5, .9]))", "RelaxedOneHotCategorical(T(0.5), T([0.2, .5, .3]))",
    "LowRankMultivariateNormal(T([0.2, .5]), T([[1.], [2.]]), T([1., .5]))", "Geometric(T([0.2, .5, .9]))"])
def test_sample_statistics(spec):
    """Samplers (rejection, inversion, transformation) agree with torch's in mean and variance."""
    _stats(lambda lib: eval(spec, {"T": lambda a: lib.tensor(a, dtype=lib.float32), **vars(lib.distributions)}))


def test_von_mises_and_lkj_sample_statistics():
    """Circular and correlation-matrix samplers: trigonometric moments; LKJ correlations have mean 0 and, for each
    pair, the variance of a symmetric Beta(eta - 1 + d / 2) on (-1, 1), ``1 / (2 eta + d - 1)`` (checked against
    the theory: torch's draws miss it off the first column)."""
    _stats(lambda lib: lib.distributions.VonMises(lib.tensor([0.0, 1.0, 3.0]), lib.tensor([0.01, 1.0, 100.0])),
           f=lambda s: s.cos())
    ember.manual_seed(0)
    L = ember.distributions.LKJCholesky(3, ember.tensor([0.5, 2.0, 1.0])).sample((20000,))
    c = (L @ L.mT).double().numpy()
    off = c[..., [1, 2, 2], [0, 0, 1]]
    np.testing.assert_allclose(np.diagonal(c, axis1=-2, axis2=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(off.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(off.var(0), (1 / (2 * np.array([0.5, 2.0, 1.0]) + 2))[:, None] * np.ones(3), rtol=0.06)


def test_gamma_implicit_reparameterization_gradient():
    """Pathwise gradients of Gamma draws: ``d x / d alpha`` at fixed draws agrees with torch's (which is itself an
    approximation, hence the tolerance), and ``d E[x] / d alpha`` estimated from rsample is ``1 / rate``."""
    from ember.distributions.gamma import _StandardGamma
    a = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 100.0], np.float64)
    x = np.array([1e-5, 0.2, 1.0, 3.0, 8.0, 90.0], np.float64)
    ae = ember.tensor(a, requires_grad=True)
    (ge,) = ember.autograd.grad(_StandardGamma.apply(ae, ember.tensor(x)).sum(), [ae])
    gt = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=2e-3)
    ember.manual_seed(0)
    conc = ember.tensor([0.5, 3.0], requires_grad=True)
    s = ember.distributions.Gamma(conc, ember.tensor([2.0, 4.0])).rsample((40000,))
    (g,) = ember.autograd.grad(s.mean(0).sum(), [conc])
    np.testing.assert_allclose(g.numpy(), [0.5, 0.25], rtol=0.05)


def test_parameters_stay_leaves_for_optimizers():
    """Parameters already of the batch shape are stored as given (``broadcast_tensors`` returns them unchanged), so
    a distribution's own ``loc``/``scale`` can be handed to an optimizer and fitted by maximum likelihood."""
    x = R(15).standard_normal(64).astype(np.float32) * 2 + 1

    def run(lib):
        loc, log_scale = lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)
        d = lib.distributions.Normal(loc, 1.0)
        a, b = lib.broadcast_tensors(loc, log_scale)
        opt = lib.optim.SGD([d.loc, log_scale], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            nll = -lib.distributions.Normal(d.loc, log_scale.exp()).log_prob(lib.tensor(x)).mean()
            nll.backward()
            opt.step()
        return [d.loc is loc, a is loc, b is log_scale, d.loc.is_leaf, d.loc, log_scale]
    _both(run)
