"""Random sampling idioms against torch: the API surface, result dtypes/shapes, argument errors, reproducibility
(seeds, generators, states, fork_rng), sample statistics and the deterministic Sobol sequence.

ember's random streams are its own, so draws are compared by their distribution, never by value."""
import pickle

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

N = 100_000


def _dt(lib, t):
    return str(t.dtype).rpartition(".")[2]


def _np(t):
    return t.detach().double().numpy()


def _both(fn):
    return fn(ember), fn(torch)


def _same_error(fn):
    errs = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errs.append(info.type)
    assert errs[0] is errs[1], errs


# -- generators and global state -------------------------------------------------------------------------------------
def test_generator_methods_and_state_round_trip():
    for lib in (ember, torch):
        g = lib.Generator(device="cpu")
        assert g.device == lib.device("cpu") and g.manual_seed(3) is g and g.initial_seed() == 3
        a = lib.rand(4, generator=g)
        st = g.get_state()
        assert st.dtype == lib.uint8 and st.ndim == 1
        b = lib.randn(5, generator=g)
        assert lib.equal(lib.randn(5, generator=lib.Generator().set_state(st)), b)
        assert lib.equal(lib.rand(3, generator=g.clone_state()), lib.rand(3, generator=g))
        h = pickle.loads(pickle.dumps(g))
        assert lib.equal(lib.rand(3, generator=h), lib.rand(3, generator=g)) and h.initial_seed() == 3
        assert lib.equal(lib.rand(4, generator=g.manual_seed(3)), a)
        s = g.seed()
        assert isinstance(s, int) and g.initial_seed() == s
    for call in (lambda lib: lib.Generator().get_offset(), lambda lib: lib.Generator().set_offset(4),
                 lambda lib: lib.Generator().graphsafe_get_state(),
                 lambda lib: lib.Generator().graphsafe_set_state(lib.Generator()),
                 lambda lib: lib.Generator("meta"), lambda lib: lib.Generator().manual_seed(1.5),
                 lambda lib: lib.Generator().set_state(lib.zeros(7, dtype=lib.uint8)),
                 lambda lib: lib.Generator().set_state(lib.zeros(48))):
        _same_error(call)
    with pytest.raises(NotImplementedError, match="graphsafe_get_state is not supported"):
        ember.Generator().graphsafe_get_state()
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        ember.Generator().get_offset()


def test_global_seed_state_and_fork_rng():
    for lib in (ember, torch):
        assert isinstance(lib.manual_seed(11), lib.Generator) and lib.initial_seed() == 11
        assert lib.random.initial_seed() == 11 and lib.default_generator.initial_seed() == 11
        a = lib.rand(3)
        state = lib.get_rng_state()
        assert state.dtype == lib.uint8 and lib.equal(state, lib.random.get_rng_state())
        b = lib.randn(4)
        lib.set_rng_state(state)
        assert lib.equal(lib.randn(4), b)
        lib.manual_seed(11)
        assert lib.equal(lib.rand(3), a)
        with lib.random.fork_rng(devices=[]):
            lib.rand(10)
        c = lib.rand(3)
        lib.manual_seed(11)
        lib.rand(3)
        assert lib.equal(lib.rand(3), c)
        with lib.random.fork_rng(enabled=False):
            lib.rand(1)
        assert isinstance(lib.seed(), int) and lib.random.thread_safe_generator() is None


GEN_CALLS = {
    "rand": lambda lib, g: lib.rand(2, 3, generator=g),
    "randn_f64": lambda lib, g: lib.randn(5, generator=g, dtype=lib.float64),
    "randint": lambda lib, g: lib.randint(3, 10, (6,), generator=g),
    "randperm": lambda lib, g: lib.randperm(7, generator=g),
    "rand_like": lambda lib, g: lib.rand_like(lib.zeros(3), generator=g),
    "randn_like": lambda lib, g: lib.randn_like(lib.zeros(3), generator=g),
    "randint_like": lambda lib, g: lib.randint_like(lib.zeros(3), 10, generator=g),
    "normal_tt": lambda lib, g: lib.normal(lib.zeros(4), lib.ones(4), generator=g),
    "normal_size": lambda lib, g: lib.normal(0.0, 1.0, (2, 2), generator=g),
    "bernoulli": lambda lib, g: lib.bernoulli(lib.full((8,), 0.5), generator=g),
    "bernoulli_p": lambda lib, g: lib.bernoulli(lib.zeros(8), 0.5, generator=g),
    "multinomial": lambda lib, g: lib.multinomial(lib.ones(2, 5), 3, generator=g),
    "poisson": lambda lib, g: lib.poisson(lib.full((6,), 4.0), generator=g),
    "binomial": lambda lib, g: lib.binomial(lib.full((6,), 9.0), lib.full((6,), 0.4), generator=g),
    "uniform_": lambda lib, g: lib.empty(5).uniform_(-1, 1, generator=g),
    "normal_": lambda lib, g: lib.empty(5, dtype=lib.float64).normal_(2, 3, generator=g),
    "exponential_": lambda lib, g: lib.empty(5).exponential_(2.0, generator=g),
    "geometric_": lambda lib, g: lib.empty(5).geometric_(0.3, generator=g),
    "cauchy_": lambda lib, g: lib.empty(5).cauchy_(generator=g),
    "log_normal_": lambda lib, g: lib.empty(5).log_normal_(generator=g),
    "random_": lambda lib, g: lib.empty(5, dtype=lib.int16).random_(-4, 9, generator=g),
    "bernoulli_t": lambda lib, g: lib.empty(2, 4).bernoulli_(lib.full((4,), 0.4), generator=g),
    "rrelu": lambda lib, g: lib.rrelu(-lib.ones(6), 0.1, 0.3, True, g),
    "rrelu_": lambda lib, g: lib.rrelu_(-lib.ones(6), 0.1, 0.3, True, generator=g),
    "init_uniform": lambda lib, g: lib.nn.init.uniform_(lib.empty(4), generator=g),
    "init_trunc_normal": lambda lib, g: lib.nn.init.trunc_normal_(lib.empty(4), generator=g),
    "init_kaiming": lambda lib, g: lib.nn.init.kaiming_uniform_(lib.empty(3, 4), a=5 ** 0.5, generator=g),
    "init_orthogonal": lambda lib, g: lib.nn.init.orthogonal_(lib.empty(3, 4), generator=g),
    "random_sampler": lambda lib, g: lib.tensor(list(lib.utils.data.RandomSampler(range(9), generator=g))),
    "weighted_sampler": lambda lib, g: lib.tensor(list(lib.utils.data.WeightedRandomSampler([.1, .5, .4], 6,
                                                                                             generator=g))),
    "dataloader": lambda lib, g: lib.cat(list(lib.utils.data.DataLoader(lib.arange(10), 4, shuffle=True,
                                                                         generator=g))),
}


@pytest.mark.parametrize("name", GEN_CALLS)
def test_generator_keyword_reproduces(name):
    """``generator=`` is accepted wherever torch takes it; the same seed gives the same draws, dtypes and shapes."""
    call = GEN_CALLS[name]
    e1, e2 = (call(ember, ember.Generator().manual_seed(5)) for _ in range(2))
    t = call(torch, torch.Generator().manual_seed(5))
    assert ember.equal(e1, e2)
    assert _dt(ember, e1) == _dt(torch, t) and tuple(e1.shape) == tuple(t.shape)


# -- factories: dtypes, shapes, errors -------------------------------------------------------------------------------
SHAPES = {
    "rand_kw_size": lambda lib: lib.rand(size=(2, 3)),
    "randn_bf16": lambda lib: lib.randn(2, 3, dtype=lib.bfloat16),
    "randn_f16": lambda lib: lib.randn(4, dtype=lib.float16),
    "randint_high": lambda lib: lib.randint(10, (3,)),
    "randint_i32": lambda lib: lib.randint(3, 10, (3, 1), dtype=lib.int32),
    "randint_kw": lambda lib: lib.randint(low=2, high=5, size=(4,)),
    "randint_float": lambda lib: lib.randint(0, 5, (3,), dtype=lib.float32),
    "randint_like_i32": lambda lib: lib.randint_like(lib.zeros(2, 3, dtype=lib.int32), 2, 5),
    "randn_like_f64": lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.float64)),
    "randperm_0": lambda lib: lib.randperm(0),
    "randperm_i32": lambda lib: lib.randperm(5, dtype=lib.int32),
    "normal_bcast": lambda lib: lib.normal(lib.zeros(3, 1), lib.ones(1, 4)),
    "normal_float_mean": lambda lib: lib.normal(2.0, lib.ones(3, dtype=lib.float64)),
    "normal_float_std": lambda lib: lib.normal(lib.ones(3), 2.0),
    "normal_size": lambda lib: lib.normal(0., 1., size=(2, 3)),
    "normal_out": lambda lib: lib.normal(lib.zeros(3), lib.ones(3), out=lib.empty(3)),
    "bernoulli_out_int": lambda lib: lib.bernoulli(lib.full((3,), 0.5), out=lib.empty(3, dtype=lib.int64)),
    "bernoulli_out_f64": lambda lib: lib.bernoulli(lib.full((3,), 0.5), out=lib.empty(3, dtype=lib.float64)),
    "bernoulli_int_inplace": lambda lib: lib.zeros(2, 3, dtype=lib.int64).bernoulli_(0.3),
    "multinomial_3d_rows": lambda lib: lib.multinomial(lib.ones(3, 4), 2),
    "multinomial_f64_rep": lambda lib: lib.multinomial(lib.ones(4, dtype=lib.float64), 7, True),
    "poisson_f64": lambda lib: lib.poisson(lib.ones(3, dtype=lib.float64)),
    "random_i8_from_none": lambda lib: lib.zeros(3, dtype=lib.int8).random_(-3, None),
    "random_to_kw": lambda lib: lib.zeros(3).random_(to=10),
    "dropout_f16": lambda lib: lib.nn.functional.dropout(lib.ones(8, dtype=lib.float16), 0.5),
}


@pytest.mark.parametrize("name", SHAPES)
def test_result_dtype_and_shape(name):
    e, t = _both(SHAPES[name])
    assert _dt(ember, e) == _dt(torch, t) and tuple(e.shape) == tuple(t.shape) and str(e.device) == str(t.device)


ERRORS = {
    "rand_int_dtype": lambda lib: lib.rand(3, dtype=lib.int64),
    "rand_neg": lambda lib: lib.rand(-1),
    "randint_size_int": lambda lib: lib.randint(10, 3),
    "randint_empty_range": lambda lib: lib.randint(5, 5, (3,)),
    "randint_u8_oob": lambda lib: lib.randint(0, 300, (3,), dtype=lib.uint8),
    "randperm_neg": lambda lib: lib.randperm(-1),
    "randperm_f16_big": lambda lib: lib.randperm(3000, dtype=lib.float16),
    "normal_float_float": lambda lib: lib.normal(0.0, 1.0),
    "normal_neg_std": lambda lib: lib.normal(lib.zeros(3), -lib.ones(3)),
    "normal_int_mean": lambda lib: lib.normal(lib.zeros(3, dtype=lib.int64), 1.0),
    "normal_bad_bcast": lambda lib: lib.normal(lib.zeros(3), lib.ones(4)),
    "bernoulli_oob": lambda lib: lib.bernoulli(lib.full((3,), 1.5)),
    "bernoulli_int": lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.int64)),
    "bernoulli_p_out": lambda lib: lib.bernoulli(lib.zeros(3), 0.5, out=lib.empty(3)),
    "bernoulli__bad_bcast": lambda lib: lib.zeros(2, 3).bernoulli_(lib.full((2,), .5)),
    "multinomial_too_many": lambda lib: lib.multinomial(lib.tensor([0.1, 0.9]), 5),
    "multinomial_zero_row": lambda lib: lib.multinomial(lib.tensor([[0., 0.], [1., 1.]]), 1),
    "multinomial_zero_samples": lambda lib: lib.multinomial(lib.ones(4), 0),
    "multinomial_3d": lambda lib: lib.multinomial(lib.ones(2, 2, 3), 2),
    "multinomial_int": lambda lib: lib.multinomial(lib.ones(4, dtype=lib.int64), 2),
    "multinomial_negative": lambda lib: lib.multinomial(lib.tensor([-1., 2.]), 1),
    "poisson_negative": lambda lib: lib.poisson(lib.tensor([-1.])),
    "uniform_int": lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    "uniform_reversed": lambda lib: lib.zeros(3).uniform_(2, 1),
    "uniform_f16_oob": lambda lib: lib.zeros(3, dtype=lib.float16).uniform_(0, 1e5),
    "uniform_bad_kw": lambda lib: lib.zeros(3).uniform_(a=0),
    "normal__int": lambda lib: lib.zeros(3, dtype=lib.int64).normal_(),
    "normal__neg": lambda lib: lib.zeros(3).normal_(0, -1),
    "exponential_int": lambda lib: lib.zeros(3, dtype=lib.int64).exponential_(),
    "exponential_neg": lambda lib: lib.zeros(3).exponential_(-1.0),
    "geometric_bad": lambda lib: lib.zeros(3).geometric_(1.5),
    "geometric_bool": lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(.5),
    "cauchy_int": lambda lib: lib.zeros(3, dtype=lib.int32).cauchy_(),
    "cauchy_neg_sigma": lambda lib: lib.zeros(3).cauchy_(0, -1),
    "log_normal_int": lambda lib: lib.zeros(3, dtype=lib.int32).log_normal_(),
    "log_normal_neg_std": lambda lib: lib.zeros(3).log_normal_(0, -1),
    "random_empty_to": lambda lib: lib.zeros(3).random_(0),
    "random_from_kw_only": lambda lib: lib.zeros(3).random_(**{"from": 2}),
    "random_reversed": lambda lib: lib.zeros(3).random_(5, 2),
    "random_i8_oob": lambda lib: lib.zeros(3, dtype=lib.int8).random_(0, 200),
    "random_u8_negative": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(-1, 5),
    "random_complex": lambda lib: lib.zeros(3, dtype=lib.complex64).random_(0, 3),
    "dropout_p": lambda lib: lib.nn.functional.dropout(lib.ones(10), 1.5),
    "dropout_int": lambda lib: lib.nn.functional.dropout(lib.ones(10, dtype=lib.int64), 0.5),
    "dropout2d_int": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4, dtype=lib.int32), 0.5),
    "dropout_complex": lambda lib: lib.nn.functional.dropout(lib.ones(4, dtype=lib.complex64), 0.5),
    "rrelu_bounds": lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.5, 0.1, True),
    "generator_type": lambda lib: lib.randn(2, generator=3),
}


@pytest.mark.parametrize("name", ERRORS)
def test_argument_errors(name):
    _same_error(ERRORS[name])


def test_random_bounds_semantics():
    """``random_(from, None)`` runs up to the dtype's largest value; ``random_(to)`` is ``[0, to)``."""
    x = ember.empty(N, dtype=ember.int8).random_(-3, None)
    assert x.min().item() == -3 and x.max().item() == 127
    x = ember.empty(N, dtype=ember.int64).random_(2 ** 62, None)
    assert (x >= 2 ** 62).all()
    x = ember.empty(2000).random_(to=3)
    assert set(x.tolist()) == {0.0, 1.0, 2.0}
    assert set(ember.empty(2000, dtype=ember.bool).random_().tolist()) == {False, True}
    f16 = ember.empty(N, dtype=ember.float16).random_()
    assert f16.min().item() == 0 and f16.max().item() == 2048 and (f16 == f16.round()).all()


# -- distributions of samples ----------------------------------------------------------------------------------------
def _moments(x):
    x = _np(x)
    return x.mean(), x.var()


STATS = {  # sampler, true mean, true variance
    "rand": (lambda lib: lib.rand(N), 0.5, 1 / 12),
    "randn_bf16": (lambda lib: lib.randn(N, dtype=lib.bfloat16), 0.0, 1.0),
    "randint": (lambda lib: lib.randint(-3, 7, (N,)), 1.5, (10 ** 2 - 1) / 12),
    "randint_like": (lambda lib: lib.randint_like(lib.zeros(N, dtype=lib.int32), 2, 9), 5.0, 4.0),
    "normal_tensors": (lambda lib: lib.normal(lib.full((N,), 2.0), lib.full((1,), 3.0)), 2.0, 9.0),
    "normal_float_mean": (lambda lib: lib.normal(-1.0, lib.full((N,), 0.5)), -1.0, 0.25),
    "normal_size": (lambda lib: lib.normal(4.0, 2.0, size=(N,)), 4.0, 4.0),
    "bernoulli": (lambda lib: lib.bernoulli(lib.full((N,), 0.3)), 0.3, 0.21),
    "bernoulli_p": (lambda lib: lib.bernoulli(lib.zeros(N), 0.7), 0.7, 0.21),
    "bernoulli_": (lambda lib: lib.zeros(N, dtype=lib.float64).bernoulli_(lib.full((N,), 0.2)), 0.2, 0.16),
    "multinomial": (lambda lib: lib.multinomial(lib.tensor([1., 2., 3., 4.]), N, True), 2.0, 1.0),
    "poisson": (lambda lib: lib.poisson(lib.full((N,), 3.5)), 3.5, 3.5),
    "uniform_f16": (lambda lib: lib.empty(N, dtype=lib.float16).uniform_(-2, 3), 0.5, 25 / 12),
    "uniform_bf16": (lambda lib: lib.empty(N, dtype=lib.bfloat16).uniform_(-2, 3), 0.5, 25 / 12),
    "normal_f64": (lambda lib: lib.empty(N, dtype=lib.float64).normal_(1, 2), 1.0, 4.0),
    "exponential_f16": (lambda lib: lib.empty(N, dtype=lib.float16).exponential_(0.5), 2.0, 4.0),
    "exponential_bf16": (lambda lib: lib.empty(N, dtype=lib.bfloat16).exponential_(2.0), 0.5, 0.25),
    "geometric_int": (lambda lib: lib.empty(N, dtype=lib.int32).geometric_(0.25), 4.0, 12.0),
    "log_normal": (lambda lib: lib.empty(N, dtype=lib.float64).log_normal_(0.5, 0.5),
                   np.exp(0.625), (np.exp(0.25) - 1) * np.exp(1.25)),
    "random_u8": (lambda lib: lib.empty(N, dtype=lib.uint8).random_(), 127.5, (256 ** 2 - 1) / 12),
    "random_i16": (lambda lib: lib.empty(N, dtype=lib.int16).random_(-100, 50), -25.5, (150 ** 2 - 1) / 12),
    "dropout": (lambda lib: lib.nn.functional.dropout(lib.ones(N), 0.3), 1.0, 0.3 / 0.7),
    "alpha_dropout": (lambda lib: lib.nn.functional.alpha_dropout(lib.randn(N), 0.3, True), 0.0, 1.0),
    "rrelu": (lambda lib: lib.nn.functional.rrelu(-lib.ones(N), 0.1, 0.4, True), -0.25, 0.09 / 12),
}


@pytest.mark.parametrize("name", STATS)
def test_sample_moments(name):
    """Mean within 5 standard errors; variance within 5 of its standard errors (a kurtosis-free bound)."""
    fn, mean, var = STATS[name]
    ember.manual_seed(0)
    torch.manual_seed(0)
    for lib in (ember, torch):
        m, v = _moments(fn(lib))
        assert abs(m - mean) < 5 * np.sqrt(var / N) + 1e-2 * ("16" in name)
        assert abs(v - var) < 0.05 * var


def test_cauchy_and_supports():
    c = ember.empty(N).cauchy_(1.0, 2.0)
    q = np.percentile(_np(c), [25, 50, 75])
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.06)
    g = ember.empty(N, dtype=ember.float16).geometric_(0.5)
    assert g.min().item() == 1 and (g == g.round()).all()
    perm = ember.randperm(1000)
    assert sorted(perm.tolist()) == list(range(1000))
    m = ember.multinomial(ember.tensor([[0., 1., 1., 0.], [3., 0., 0., 1.]]), 2)
    assert sorted(m[0].tolist()) == [1, 2] and sorted(m[1].tolist()) == [0, 3]
    assert ember.poisson(ember.zeros(5)).eq(0).all()


def test_gumbel_softmax_hard_straight_through():
    """One-hot samples whose gradient is the soft sample's (the same draws regenerated from the same seed)."""
    logits = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    g = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)
    for lib, F in ((ember, EF), (torch, TF)):
        lt = lib.tensor(logits, requires_grad=True)
        lib.manual_seed(3)
        hard = F.gumbel_softmax(lt, tau=0.5, hard=True)
        hard.backward(lib.tensor(g))
        lib.manual_seed(3)
        soft = F.gumbel_softmax(lt.detach(), tau=0.5)
        assert hard.dtype == lib.float32 and tuple(hard.shape) == (6, 5)
        np.testing.assert_array_equal(_np(hard), np.eye(5)[_np(soft).argmax(-1)])
        y = _np(soft)
        expected = y * (g - (g * y).sum(-1, keepdims=True)) / 0.5
        np.testing.assert_allclose(_np(lt.grad), expected, rtol=1e-4, atol=1e-5)
        assert np.allclose(y.sum(-1), 1, atol=1e-6)
        assert tuple(F.gumbel_softmax(lt, dim=0).shape) == (6, 5)


@pytest.mark.parametrize("name", ["Normal", "Dirichlet", "Gamma", "Beta", "MVN", "RelaxedCat", "LowRank", "StudentT"])
def test_distribution_rsample_shapes(name):
    make = {
        "Normal": lambda lib: lib.distributions.Normal(lib.zeros(2, 3), lib.ones(3)),
        "Dirichlet": lambda lib: lib.distributions.Dirichlet(lib.ones(2, 4)),
        "Gamma": lambda lib: lib.distributions.Gamma(lib.ones(3), 2.0),
        "Beta": lambda lib: lib.distributions.Beta(lib.ones(3), lib.ones(1)),
        "MVN": lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2, 3), scale_tril=lib.eye(3)),
        "RelaxedCat": lambda lib: lib.distributions.RelaxedOneHotCategorical(lib.tensor(0.5),
                                                                              probs=lib.ones(2, 4)),
        "LowRank": lambda lib: lib.distributions.LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 2),
                                                                           lib.ones(3)),
        "StudentT": lambda lib: lib.distributions.StudentT(lib.ones(3) * 3),
    }[name]
    e, t = (make(lib).rsample((5, 2)) for lib in (ember, torch))
    assert tuple(e.shape) == tuple(t.shape) and _dt(ember, e) == _dt(torch, t)


# -- the Sobol sequence: deterministic, compared exactly -------------------------------------------------------------
@pytest.mark.parametrize("dim", [1, 3, 40, 1111])
def test_sobol_engine_matches_exactly(dim):
    e, t = ember.quasirandom.SobolEngine(dim), torch.quasirandom.SobolEngine(dim)
    np.testing.assert_array_equal(e.sobolstate.numpy(), t.sobolstate.numpy())
    steps = (lambda s, lib: s.draw(), lambda s, lib: s.draw(7, dtype=lib.float64), lambda s, lib: s.fast_forward(5),
             lambda s, lib: s.draw(9), lambda s, lib: s.draw(0), lambda s, lib: s.reset().draw_base2(4),
             lambda s, lib: s.draw(3, out=lib.empty(1)))
    for step in steps:
        a, b = step(e, ember), step(t, torch)
        if isinstance(b, torch.Tensor):
            assert _dt(ember, a) == _dt(torch, b)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert e.num_generated == t.num_generated
        np.testing.assert_array_equal(e.quasi.numpy(), t.quasi.numpy())
    assert repr(e) == repr(t)


def test_sobol_engine_scramble_and_errors():
    for lib in (ember, torch):
        s = lib.quasirandom.SobolEngine(4, scramble=True, seed=7)
        x = s.draw_base2(6)
        assert x.dtype == lib.float32 and tuple(x.shape) == (64, 4) and repr(s) == \
            "SobolEngine(dimension=4, scramble=True, seed=7)"
        # a scrambled net keeps the balance: one point per interval [k/64, (k+1)/64) in every dimension
        assert (np.sort(np.floor(_np(x) * 64), axis=0) == np.arange(64)[:, None]).all()
        np.testing.assert_array_equal(_np(lib.quasirandom.SobolEngine(4, scramble=True, seed=7).draw(64)), _np(x))
        assert not np.array_equal(_np(lib.quasirandom.SobolEngine(4, scramble=True, seed=8).draw(64)), _np(x))
        y = lib.quasirandom.SobolEngine(2, scramble=True, seed=0).draw(4096, dtype=lib.float64)
        assert abs(_np(y).mean() - 0.5) < 1e-3 and (_np(y) >= 0).all() and (_np(y) < 1).all()
    for call in (lambda lib: lib.quasirandom.SobolEngine(0), lambda lib: lib.quasirandom.SobolEngine(21202),
                 lambda lib: lib.quasirandom.SobolEngine(2).fast_forward(1).draw_base2(2),
                 lambda lib: lib.quasirandom.SobolEngine(2).draw(3, dtype=lib.bfloat16),
                 lambda lib: lib.quasirandom.SobolEngine(2).draw(3, dtype=lib.int64),
                 lambda lib: lib.quasirandom.SobolEngine(2).draw(0)):
        _same_error(call)
