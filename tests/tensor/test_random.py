"""Random numbers: generators and seeding (reproducibility, state replay), distributions (moments and
Kolmogorov-Smirnov checks with fixed seeds), dtypes and errors against torch."""
import numpy as np
import pytest
import torch
from scipy import stats

import ember

from .helpers import same_error, torch_dtype

N = 20000


def g(seed=0):
    return ember.Generator().manual_seed(seed)


def np_(t):
    return t.detach().double().numpy() if t.dtype.is_floating_point else t.numpy()


# -- generators and seeding ------------------------------------------------------------------------------------------
def test_generator_basics():
    gen = ember.Generator()
    assert gen.device == ember.device("cpu")
    assert gen.initial_seed() == torch.Generator().initial_seed()
    assert gen.manual_seed(5) is gen and gen.initial_seed() == 5
    assert gen.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    s = gen.seed()
    assert isinstance(s, int) and gen.initial_seed() == s
    assert gen.get_state().dtype is ember.uint8
    assert "Generator" in repr(gen)
    same_error(lambda: ember.Generator().manual_seed(2 ** 64), lambda: torch.Generator().manual_seed(2 ** 64))
    same_error(lambda: ember.Generator().manual_seed(-2 ** 63 - 1), lambda: torch.Generator().manual_seed(-2 ** 63 - 1))
    same_error(lambda: ember.Generator().manual_seed(1.5), lambda: torch.Generator().manual_seed(1.5))


SAMPLERS = {
    "rand": lambda gen: ember.rand(50, generator=gen),
    "randn": lambda gen: ember.randn(3, 4, generator=gen, dtype=ember.float64),
    "randint": lambda gen: ember.randint(-5, 5, (30,), generator=gen),
    "randperm": lambda gen: ember.randperm(20, generator=gen),
    "normal": lambda gen: ember.normal(ember.zeros(10), 2.0, generator=gen),
    "normal_size": lambda gen: ember.normal(1.0, 2.0, (10,), generator=gen),
    "bernoulli": lambda gen: ember.bernoulli(ember.full((30,), 0.5), generator=gen),
    "multinomial": lambda gen: ember.multinomial(ember.ones(2, 10), 5, generator=gen),
    "multinomial_r": lambda gen: ember.multinomial(ember.ones(10), 20, True, generator=gen),
    "poisson": lambda gen: ember.poisson(ember.full((20,), 3.0), generator=gen),
    "uniform_": lambda gen: ember.empty(20).uniform_(-1, 1, generator=gen),
    "normal_": lambda gen: ember.empty(20).normal_(generator=gen),
    "bernoulli_": lambda gen: ember.empty(20).bernoulli_(0.3, generator=gen),
    "random_": lambda gen: ember.empty(20, dtype=ember.int64).random_(0, 100, generator=gen),
    "exponential_": lambda gen: ember.empty(20).exponential_(generator=gen),
    "geometric_": lambda gen: ember.empty(20).geometric_(0.3, generator=gen),
    "log_normal_": lambda gen: ember.empty(20).log_normal_(generator=gen),
    "cauchy_": lambda gen: ember.empty(20).cauchy_(generator=gen),
    "rand_like": lambda gen: ember.rand_like(ember.ones(5), generator=gen),
    "randn_like": lambda gen: ember.randn_like(ember.ones(5), generator=gen),
    "randint_like": lambda gen: ember.randint_like(ember.ones(5), 10, generator=gen),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_seeded_streams_reproduce(name):
    f = SAMPLERS[name]
    a, b = f(g(1)), f(g(1))
    assert a.tolist() == b.tolist()
    assert f(g(1)).tolist() != f(g(2)).tolist()
    gen = g(3)
    f(gen)
    state = gen.get_state()
    first = f(gen).tolist()
    second = f(gen).tolist()
    gen.set_state(state)
    assert f(gen).tolist() == first and f(gen).tolist() == second
    gen.set_state(bytes(state.numpy()))  # a state as bytes works too
    assert f(gen).tolist() == first


def test_default_generator_and_module_functions():
    assert ember.manual_seed(7) is ember.default_generator
    assert ember.initial_seed() == 7
    a = ember.rand(5)
    ember.manual_seed(7)
    assert ember.rand(5).tolist() == a.tolist()
    state = ember.get_rng_state()
    b = ember.randn(4)
    ember.set_rng_state(state)
    assert ember.randn(4).tolist() == b.tolist()
    assert ember.random.manual_seed is ember.manual_seed
    ember.random.manual_seed(7)
    assert ember.rand(5).tolist() == a.tolist()
    s = ember.seed()
    assert ember.initial_seed() == s
    ember.cuda.manual_seed_all(3)  # a no-op without CUDA


def test_fork_rng():
    ember.manual_seed(0)
    with ember.random.fork_rng():
        inside = ember.rand(3).tolist()
    assert ember.rand(3).tolist() == inside
    with ember.random.fork_rng(enabled=False):
        ember.rand(3)
    assert ember.rand(3).tolist() != inside


def test_state_errors():
    same_error(lambda: ember.Generator().set_state(ember.zeros(5056)),
               lambda: torch.Generator().set_state(torch.zeros(5056)))
    with pytest.raises(RuntimeError, match="state size"):
        ember.Generator().set_state(ember.zeros(3, dtype=ember.uint8))
    with pytest.raises(TypeError):
        ember.rand(2, generator=3)


def test_generator_state_is_independent_of_default():
    ember.manual_seed(0)
    ref = ember.rand(4).tolist()
    ember.manual_seed(0)
    ember.rand(3, generator=g(9))
    assert ember.rand(4).tolist() == ref


# -- distributions ---------------------------------------------------------------------------------------------------
def _ks(sample, cdf, *args):
    return stats.kstest(sample, cdf, args=args).pvalue


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_rand_and_randn(dtype):
    u = np_(ember.rand(N, generator=g(), dtype=dtype))
    assert u.min() >= 0 and u.max() < 1
    assert _ks(u, "uniform") > 1e-3
    z = np_(ember.randn(N, generator=g(), dtype=dtype))
    assert _ks(z, "norm") > 1e-3
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03


def test_uniform_and_normal_methods():
    u = np_(ember.empty(N).uniform_(-2, 3, generator=g()))
    assert u.min() >= -2 and u.max() < 3 and _ks(u, "uniform", -2, 5) > 1e-3
    z = np_(ember.empty(N, dtype=ember.float64).normal_(1.5, 0.5, generator=g()))
    assert _ks(z, "norm", 1.5, 0.5) > 1e-3


def test_normal_overloads():
    mean = ember.tensor([0.0, 10.0, -5.0]).reshape(3, 1)
    std = ember.tensor([1.0, 0.1, 3.0, 0.5] * 1000)
    x = np_(ember.normal(mean, std, generator=g()))
    assert x.shape == (3, 4000)
    z = (x - np.array([0, 10, -5])[:, None]) / np.tile([1.0, 0.1, 3.0, 0.5], 1000)
    assert _ks(z.ravel(), "norm") > 1e-3
    x = np_(ember.normal(ember.full((N,), 2.0), 3.0, generator=g()))
    assert _ks(x, "norm", 2, 3) > 1e-3
    x = np_(ember.normal(-1.0, ember.full((N,), 0.5), generator=g()))
    assert _ks(x, "norm", -1, 0.5) > 1e-3
    x = ember.normal(4.0, 2.0, (N,), generator=g())
    assert x.dtype is ember.float32 and _ks(np_(x), "norm", 4, 2) > 1e-3
    assert ember.normal(0., 1., (2,), dtype=ember.float64).dtype is ember.float64
    assert ember.normal(ember.zeros(2, dtype=ember.float64), ember.ones(2)).dtype is ember.float64
    assert ember.normal(mean=ember.zeros(2)).shape == (2,)


def test_normal_std_zero_gives_mean():
    assert ember.normal(ember.arange(3.), 0.0).tolist() == [0., 1., 2.]


def test_randint_and_random_():
    r = ember.randint(-3, 4, (N,), generator=g())
    assert r.dtype is ember.int64
    counts = np.bincount(r.numpy() + 3, minlength=7)
    assert r.numpy().min() == -3 and r.numpy().max() == 3
    assert stats.chisquare(counts).pvalue > 1e-3
    assert ember.randint(5, (3,)).numpy().max() < 5
    assert ember.randint(high=5, size=(3,)).shape == (3,)
    assert ember.randint(0, 10, (3,), dtype=ember.float32).dtype is ember.float32
    assert set(ember.randint(0, 2, (50,), dtype=ember.bool).tolist()) == {True, False}
    for dtype in (ember.int8, ember.uint8, ember.int32, ember.int64, ember.float32, ember.float16, ember.bool):
        x = ember.empty(2000, dtype=dtype).random_(generator=g())
        lo, hi = (0, 1) if dtype is ember.bool else (0, 2 ** {ember.float16: 11, ember.float32: 24}[dtype]) \
            if dtype.is_floating_point else (0, np.iinfo(dtype.np).max)
        v = x.numpy().astype(np.float64)
        assert v.min() >= lo and v.max() <= hi and len(np.unique(v)) > 1, dtype
    x = ember.empty(N).random_(-3, 3, generator=g()).numpy()
    assert set(np.unique(x)) == {-3, -2, -1, 0, 1, 2}
    assert set(np.unique(ember.empty(1000).random_(4, generator=g()).numpy())) == {0, 1, 2, 3}
    assert ember.empty(100).random_(to=3).numpy().max() <= 2


def test_randperm():
    for n in (0, 1, 7, 100):
        p = ember.randperm(n, generator=g())
        assert p.dtype is ember.int64 and sorted(p.tolist()) == list(range(n))
    assert ember.randperm(5, dtype=ember.float32).dtype is ember.float32
    # each position is uniform over the values
    firsts = [ember.randperm(4, generator=g(i)).tolist()[0] for i in range(800)]
    assert stats.chisquare(np.bincount(firsts, minlength=4)).pvalue > 1e-3


def test_bernoulli():
    p = ember.from_numpy(np.tile(np.array([0.0, 0.2, 0.7, 1.0], np.float32), 5000))
    x = ember.bernoulli(p, generator=g()).numpy().reshape(5000, 4)
    assert x.dtype == np.float32 and set(np.unique(x)) <= {0.0, 1.0}
    freq = x.mean(0)
    assert freq[0] == 0 and freq[3] == 1 and abs(freq[1] - 0.2) < 0.02 and abs(freq[2] - 0.7) < 0.02
    y = ember.bernoulli(ember.zeros(N), 0.3, generator=g()).numpy()
    assert abs(y.mean() - 0.3) < 0.015
    assert ember.bernoulli(ember.tensor([0.5], dtype=ember.float16)).dtype is ember.float16
    z = ember.empty(N, dtype=ember.int64).bernoulli_(0.25, generator=g())
    assert z.dtype is ember.int64 and abs(z.numpy().mean() - 0.25) < 0.015
    w = ember.ones(3).bernoulli_(ember.tensor([0., 1., 1.]))
    assert w.tolist() == [0., 1., 1.]
    b = ember.ones(3, dtype=ember.bool).bernoulli_(0.5)
    assert b.dtype is ember.bool
    assert ember.full((4,), 1.0).bernoulli().tolist() == [1.0] * 4


def test_multinomial_with_replacement():
    probs = ember.tensor([0.1, 0.0, 0.6, 0.3])
    x = ember.multinomial(probs, N, replacement=True, generator=g())
    assert x.dtype is ember.int64 and x.shape == (N,)
    counts = np.bincount(x.numpy(), minlength=4)
    assert counts[1] == 0
    assert stats.chisquare(counts[[0, 2, 3]], N * np.array([0.1, 0.6, 0.3])).pvalue > 1e-3
    # unnormalised weights, several rows
    w = ember.tensor([[1.0, 3.0], [5.0, 0.0]])
    x = ember.multinomial(w, 4000, True, generator=g()).numpy()
    assert x.shape == (2, 4000) and (x[1] == 0).all() and abs(x[0].mean() - 0.75) < 0.03


def test_multinomial_without_replacement():
    w = ember.tensor([1.0, 2.0, 0.0, 4.0, 3.0])
    for i in range(50):
        x = ember.multinomial(w, 4, generator=g(i)).tolist()
        assert len(set(x)) == 4 and 2 not in x
    firsts = [ember.multinomial(w, 2, generator=g(i)).tolist()[0] for i in range(1000)]
    counts = np.bincount(firsts, minlength=5)
    assert counts[2] == 0 and stats.chisquare(counts[[0, 1, 3, 4]], 100 * np.array([1, 2, 4, 3])).pvalue > 1e-3
    rows = ember.multinomial(ember.ones(3, 6), 6, generator=g())
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    assert ember.multinomial(ember.ones(0, 3), 2).shape == (0, 2)
    assert ember.multinomial(ember.tensor([0., 1.]), 1).tolist() == [1]
    assert ember.multinomial(ember.tensor([1., 2.], dtype=ember.float64), 1).dtype is ember.int64


def test_poisson():
    rates = ember.tensor([0.0, 0.5, 4.0, 50.0])
    x = np.stack([ember.poisson(rates, generator=g(i)).numpy() for i in range(2000)])
    assert x.dtype == np.float32 and (x[:, 0] == 0).all()
    assert np.allclose(x.mean(0), [0, 0.5, 4, 50], rtol=0.05, atol=0.05)
    assert np.allclose(x.var(0), [0, 0.5, 4, 50], rtol=0.1, atol=0.05)
    assert ember.poisson(ember.tensor([1., 2.], dtype=ember.float64)).dtype is ember.float64


def test_exponential_geometric_lognormal_cauchy():
    x = np_(ember.empty(N, dtype=ember.float64).exponential_(2.0, generator=g()))
    assert x.min() >= 0 and _ks(x, "expon", 0, 0.5) > 1e-3
    k = np_(ember.empty(N).geometric_(0.3, generator=g()))
    assert k.min() >= 1 and (k == np.round(k)).all()
    freq = np.bincount(k.astype(int), minlength=8)[1:6] / N
    assert np.allclose(freq, stats.geom.pmf(np.arange(1, 6), 0.3), atol=0.01)
    assert ember.empty(3, dtype=ember.int64).geometric_(0.5).dtype is ember.int64
    ln = np_(ember.empty(N, dtype=ember.float64).log_normal_(1.0, 0.5, generator=g()))
    assert ln.min() > 0 and _ks(np.log(ln), "norm", 1.0, 0.5) > 1e-3
    c = np_(ember.empty(N, dtype=ember.float64).cauchy_(2.0, 0.5, generator=g()))
    assert _ks(c, "cauchy", 2.0, 0.5) > 1e-3


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.float32, ember.float64])
def test_float_dtypes(dtype):
    for f in (lambda: ember.rand(100, dtype=dtype), lambda: ember.randn(100, dtype=dtype),
              lambda: ember.empty(100, dtype=dtype).uniform_(), lambda: ember.empty(100, dtype=dtype).normal_(),
              lambda: ember.empty(100, dtype=dtype).exponential_(), lambda: ember.empty(100, dtype=dtype).cauchy_(),
              lambda: ember.empty(100, dtype=dtype).log_normal_(), lambda: ember.rand_like(ember.ones(2, dtype=dtype))):
        x = f()
        assert x.dtype is dtype and np.isfinite(np_(x)).any()


def test_like_functions():
    x = ember.ones(2, 3, dtype=ember.float64)
    assert ember.rand_like(x).dtype is ember.float64 and ember.rand_like(x).shape == (2, 3)
    assert ember.randn_like(x, dtype=ember.float32).dtype is ember.float32
    r = ember.randint_like(x, 10)
    assert r.dtype is ember.float64 and r.numpy().max() < 10
    r = ember.randint_like(x, 3, 10)
    assert r.numpy().min() >= 3
    assert ember.randint_like(x, high=4).numpy().max() < 4
    assert ember.rand(2, 3, requires_grad=True).requires_grad


def test_out():
    out = ember.empty(7)
    assert ember.rand(3, out=out, generator=g()) is out and out.shape == (3,)
    out = ember.empty(1, dtype=ember.int64)
    assert ember.randint(0, 5, (4,), out=out) is out and out.shape == (4,)
    assert ember.randperm(4, out=out).shape == (4,)
    assert ember.randn(2, 2, out=ember.empty(0, dtype=ember.float64)).dtype is ember.float64


# -- autograd interplay ----------------------------------------------------------------------------------------------
def test_random_ops_give_zero_gradients():
    x = ember.ones(3, requires_grad=True)
    for f in (lambda: ember.normal(x, 1.), lambda: ember.normal(0., x), lambda: ember.normal(x, x),
              lambda: ember.bernoulli(x * 0.5), lambda: ember.poisson(x), lambda: (x * 2).uniform_(),
              lambda: (x * 2).normal_(), lambda: (x * 2).bernoulli_(0.5), lambda: (x * 2).exponential_()):
        x.grad = None
        y = f()
        assert y.requires_grad and y.grad_fn is not None
        y.backward(ember.arange(3.))
        assert x.grad.tolist() == [0., 0., 0.]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.uniform_()


# -- errors ----------------------------------------------------------------------------------------------------------
ERRORS = [
    "rand(2, dtype={m}.int64)", "randn(2, dtype={m}.int64)", "randint(5, 5, (2,))", "randint(3, 2)",
    "randint(2**63, (2,))", "randint(0, 300, (2,), dtype={m}.uint8)", "randint(3.5, (2,))", "randperm(-1)",
    "randperm(300, dtype={m}.uint8)", "normal(0., -1., (2,))", "normal(Z(2), -1.)", "normal(Z(2), O(3))",
    "normal(Z(4), O(2, 2))", "normal(Z(2, dtype={m}.int64), 1.)", "normal(Z(2), T([1., -1.]))",
    "bernoulli(T([0.5, 1.5]))", "bernoulli(T([0.5, 1.0]), 2.)", "bernoulli(T([1, 0]))", "multinomial(T([0.2, 0.8]), 0)",
    "multinomial(T([0.2, 0.8]), 3)", "multinomial(T([0., 0.]), 1)", "multinomial(T([-1., 2.]), 1)",
    "multinomial(T([float('nan'), 2.]), 1)", "multinomial(T([float('inf'), 2.]), 1)", "multinomial(O(2, 2, 2), 1)",
    "multinomial(T(1.), 1)", "multinomial(T([1, 2]), 1)", "multinomial(T([[0., 0.], [1., 1.]]), 1)",
    "multinomial(O(2, 0), 2)", "poisson(T([-1.]))", "poisson(T([1, 2]))", "poisson(T([float('nan')]))",
    "rand_like(O(2, dtype={m}.int64))", "O(2).uniform_(2, 1)", "O(2).uniform_(0, float('inf'))",
    "O(2, dtype={m}.int64).uniform_()", "O(2).normal_(0, -1)", "O(2, dtype={m}.int64).normal_()",
    "O(2).exponential_(0)",
    "O(2).exponential_(-1)", "O(2).geometric_(0)", "O(2).geometric_(1)", "O(2).geometric_(1.5)",
    "O(2).log_normal_(0, 0)",
    "O(2).log_normal_(0, -1)", "O(2).cauchy_(0, -1)", "O(2, dtype={m}.int64).cauchy_()",
    "O(2, dtype={m}.int64).exponential_()", "O(2, dtype={m}.int64).log_normal_()", "O(4).random_(3, 3)",
    "O(4, dtype={m}.uint8).random_(300)", "O(3).bernoulli_(T([2., 1., 1.]))", "O(3).bernoulli_(2.)",
    "O(3).bernoulli_(O(2))",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    def run(m, lib):
        return eval(call.format(m=m) if call[0] in "OTZ" else f"{m}.{call.format(m=m)}",
                    {m: lib, "O": lib.ones, "T": lib.tensor, "Z": lib.zeros})
    same_error(lambda: run("ember", ember), lambda: run("torch", torch))


def test_result_dtypes_match_torch():
    for call in ["randint(3, (2,))", "randint(0, 10, (3,), dtype={m}.float32)", "randperm(4, dtype={m}.float32)",
                 "normal(0., 1., (2,))", "normal(0, 1, (2,))", "normal(Z(2, dtype={m}.float64), 1.)",
                 "normal(0., O(2, dtype={m}.float64))", "normal(Z(2, dtype={m}.float64), O(2))", "poisson(O(2))",
                 "multinomial(O(2, 3), 2)", "randint_like(O(2), 10)", "randn_like(O(2), dtype={m}.float64)",
                 "bernoulli(O(2, dtype={m}.float64))"]:
        e = eval(f"ember.{call.format(m='ember')}", {"ember": ember, "O": ember.ones, "Z": ember.zeros})
        t = eval(f"torch.{call.format(m='torch')}", {"torch": torch, "O": torch.ones, "Z": torch.zeros})
        assert torch_dtype(e.dtype) == t.dtype and tuple(e.shape) == tuple(t.shape), call


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("draw", [lambda t: t.normal_(1.5, 0.25), lambda t: t.uniform_(-2.0, 3.0)])
def test_in_place_draws_into_dense_memory_match_strided_ones(dtype, draw):
    ember.manual_seed(7)
    dense = draw(ember.empty(40, 3, dtype=dtype))  # drawn straight into the tensor's memory
    ember.manual_seed(7)
    strided = draw(ember.empty(3, 40, dtype=dtype).t())  # drawn, then written through the view
    np.testing.assert_array_equal(dense.numpy(), strided.numpy())
    assert dense._version == 1 and dense.std().item() > 0
