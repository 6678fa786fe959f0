"""nn.init: gains and fans exactly as torch, deterministic fills exactly as torch, random fills by their statistics."""
import math

import numpy as np
import pytest
import scipy.stats
import torch

import ember
from ember.nn import init


def gen(seed=0):
    return ember.Generator().manual_seed(seed)


def arr(t):
    return np.asarray(t.detach().float().numpy(), dtype=np.float64)


def param(*shape, dtype=ember.float32):
    return ember.nn.Parameter(ember.zeros(*shape, dtype=dtype))


@pytest.mark.parametrize("nl,p", [("linear", None), ("conv1d", None), ("conv_transpose3d", None), ("sigmoid", None),
                                  ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                                  ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain(nl, p):
    assert init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)


def test_calculate_gain_errors():
    for args in [("swish",), ("leaky_relu", True), ("leaky_relu", "x")]:
        with pytest.raises(ValueError) as te:
            torch.nn.init.calculate_gain(*args)
        with pytest.raises(ValueError, match=str(te.value)):
            init.calculate_gain(*args)


@pytest.mark.parametrize("shape", [(3, 5), (7, 2, 3), (4, 6, 2, 2), (2, 3, 1, 2, 5)])
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(ember.zeros(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    assert init._calculate_correct_fan(ember.zeros(*shape), "FAN_OUT") == \
        torch.nn.init._calculate_correct_fan(torch.zeros(*shape), "FAN_OUT")


def test_fan_errors():
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        init.xavier_uniform_(ember.zeros(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of \\['fan_in', 'fan_out'\\]"):
        init.kaiming_normal_(ember.zeros(3, 3), mode="fan_avg")


def test_deterministic_fills_match_torch():
    for shape, fn in [((3, 4), lambda lib, t: lib.nn.init.constant_(t, 2.5)),
                      ((3, 4), lambda lib, t: lib.nn.init.ones_(t)),
                      ((3, 4), lambda lib, t: lib.nn.init.zeros_(t)),
                      ((3, 5), lambda lib, t: lib.nn.init.eye_(t)),
                      ((5, 3), lambda lib, t: lib.nn.init.eye_(t)),
                      ((4, 3, 3), lambda lib, t: lib.nn.init.dirac_(t)),
                      ((6, 2, 3, 3), lambda lib, t: lib.nn.init.dirac_(t, groups=2)),
                      ((4, 6, 3, 2, 3), lambda lib, t: lib.nn.init.dirac_(t, 2))]:
        t = torch.nn.Parameter(torch.full(shape, 9.0))
        e = ember.nn.Parameter(ember.full(shape, 9.0))
        fn(torch, t)
        re = fn(ember, e)
        assert re is e and e.requires_grad and e.grad_fn is None
        np.testing.assert_array_equal(arr(e), t.detach().numpy())


def test_fill_errors_match_torch():
    for fn, args in [("eye_", (3,)), ("dirac_", (3, 3)), ("sparse_", (3,)), ("orthogonal_", (3,))]:
        extra = (0.5,) if fn == "sparse_" else ()
        with pytest.raises(ValueError) as te:
            getattr(torch.nn.init, fn)(torch.zeros(*args), *extra)
        with pytest.raises(ValueError, match=str(te.value)):
            getattr(init, fn)(ember.zeros(*args), *extra)
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.zeros(3, 3, 3), groups=2)


def test_in_place_without_graph_and_version_bump():
    p = param(4, 5)
    v = p._version
    for fn in (init.zeros_, init.ones_, lambda t: init.constant_(t, 3.0), lambda t: init.uniform_(t, generator=gen()),
               lambda t: init.normal_(t, generator=gen()), lambda t: init.kaiming_uniform_(t, generator=gen()),
               lambda t: init.trunc_normal_(t, generator=gen()), lambda t: init.orthogonal_(t, generator=gen()),
               init.eye_):
        assert fn(p) is p
        assert p.grad_fn is None and p.requires_grad and type(p) is ember.nn.Parameter
        assert p._version > v
        v = p._version


def test_generator_reproducible():
    a, b = param(50), param(50)
    init.normal_(a, generator=gen(3))
    init.normal_(b, generator=gen(3))
    np.testing.assert_array_equal(arr(a), arr(b))
    init.normal_(b, generator=gen(4))
    assert not np.array_equal(arr(a), arr(b))
    ember.manual_seed(7)
    init.uniform_(a)
    ember.manual_seed(7)
    init.uniform_(b)
    np.testing.assert_array_equal(arr(a), arr(b))


def _ks(sample, dist):
    return scipy.stats.kstest(sample.ravel(), dist).pvalue


def test_uniform_normal_distributions():
    t = param(100, 100)
    x = arr(init.uniform_(t, -2.0, 3.0, generator=gen(1)))
    assert x.min() >= -2.0 and x.max() <= 3.0 and _ks(x, scipy.stats.uniform(-2, 5).cdf) > 1e-3
    x = arr(init.normal_(t, 1.5, 0.5, generator=gen(2)))
    assert _ks(x, scipy.stats.norm(1.5, 0.5).cdf) > 1e-3


@pytest.mark.parametrize("shape", [(200, 300), (64, 32, 3, 3)])
def test_xavier_and_kaiming(shape):
    t = param(*shape)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
    std = 1.5 * math.sqrt(2.0 / (fan_in + fan_out))
    x = arr(init.xavier_uniform_(t, gain=1.5, generator=gen(1)))
    assert np.abs(x).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert _ks(x, scipy.stats.uniform(-math.sqrt(3) * std, 2 * math.sqrt(3) * std).cdf) > 1e-3
    x = arr(init.xavier_normal_(t, gain=1.5, generator=gen(2)))
    assert _ks(x, scipy.stats.norm(0, std).cdf) > 1e-3
    gain = init.calculate_gain("leaky_relu", 0.1)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan_out)
    x = arr(init.kaiming_uniform_(t, a=0.1, mode="fan_out", generator=gen(3)))
    assert np.abs(x).max() <= bound * (1 + 1e-6) and _ks(x, scipy.stats.uniform(-bound, 2 * bound).cdf) > 1e-3
    x = arr(init.kaiming_normal_(t, nonlinearity="relu", generator=gen(4)))
    assert _ks(x, scipy.stats.norm(0, math.sqrt(2.0) / math.sqrt(fan_in)).cdf) > 1e-3


def test_kaiming_empty_warns():
    for fn in (init.kaiming_uniform_, init.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(ember.zeros(0, 3))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
def test_trunc_normal(dtype):
    t = param(100, 100, dtype=dtype)
    x = arr(init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=3.0, generator=gen(5)))
    assert t.dtype is dtype and x.min() >= -1.0 and x.max() <= 3.0
    if dtype is not ember.bfloat16:
        dist = scipy.stats.truncnorm((-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0, loc=0.5, scale=2.0)
        assert _ks(x, dist.cdf) > 1e-3
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\]"):
        init.trunc_normal_(param(3), mean=10.0, generator=gen())


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal(shape):
    t = param(*shape)
    q = arr(init.orthogonal_(t, gain=2.0, generator=gen(6))).reshape(shape[0], -1)
    small = min(q.shape)
    gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_sparse():
    t = param(40, 30)
    x = arr(init.sparse_(t, 0.25, std=0.5, generator=gen(7)))
    assert ((x == 0).sum(0) == math.ceil(0.25 * 40)).all()
    assert _ks(x[x != 0], scipy.stats.norm(0, 0.5).cdf) > 1e-3


def test_deprecated_aliases():
    with pytest.warns(FutureWarning, match="`nn.init.normal` is now deprecated in favor of `nn.init.normal_`"):
        init.normal(param(3))
    assert init.xavier_uniform.__name__ == "xavier_uniform"
