"""Global defaults against torch: the default dtype and device (factories, modules, scalar promotion, meta
initialization), print options, deterministic modes, threads and grad mode as a function."""
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)


def _name(x):
    return str(x).split(".")[-1]


@pytest.fixture
def default_dtype(request):
    """Sets the default dtype named by the test's parameter in both libraries, and restores float32."""
    for lib in LIBS:
        lib.set_default_dtype(getattr(lib, request.param))
    yield request.param
    for lib in LIBS:
        lib.set_default_dtype(lib.float32)


@pytest.fixture
def restore_defaults():
    yield
    for lib in LIBS:
        lib.set_default_dtype(lib.float32)
        lib.set_default_device(None)
        lib.use_deterministic_algorithms(False)
        lib.set_grad_enabled(True)
        lib.set_printoptions(profile="default")
        lib.set_printoptions(sci_mode=None)


FACTORIES = [
    lambda l: l.tensor(3.0), lambda l: l.tensor([1, 2.5]), lambda l: l.tensor([[1], [2.0]]), lambda l: l.zeros(2),
    lambda l: l.ones(2, 3), lambda l: l.arange(0.0, 1.0, 0.25), lambda l: l.arange(0, 3, 0.5), lambda l: l.arange(3),
    lambda l: l.linspace(0, 1, 5), lambda l: l.logspace(0, 1, 3), lambda l: l.full((2,), 1.5),
    lambda l: l.full((2,), 7), lambda l: l.full((2,), True), lambda l: l.eye(2), lambda l: l.hann_window(4),
    lambda l: l.scalar_tensor(1), lambda l: l.as_tensor(1.5), lambda l: l.FloatTensor([1]),
    lambda l: l.tensor(np.float32(1.5)), lambda l: l.ones(1, dtype=l.int64).new_full((2,), 1.5),
    lambda l: l.full_like(l.tensor([1, 2]), 1.5),
]
UNFILLED = [  # random or uninitialized: dtype and shape only
    lambda l: l.empty(2), lambda l: l.rand(2), lambda l: l.randn(2), lambda l: l.Tensor(2),
    lambda l: l.normal(0.0, 1.0, (2,)), lambda l: l.randint(0, 3, (2,)), lambda l: l.randperm(3),
]
PROMOTIONS = [
    lambda l: l.tensor([1, 2]) * 1.5, lambda l: l.tensor([1, 2]) / 2, lambda l: l.tensor([1, 2], dtype=l.int32) ** 0.5,
    lambda l: l.tensor([True]) + 0.5, lambda l: l.sqrt(l.tensor([1, 4])), lambda l: l.sigmoid(l.tensor([True])),
    lambda l: l.tensor([1, 2]).clamp(0.5), lambda l: l.where(l.tensor([True, False]), 1.5, 0),
    lambda l: l.ones(2, dtype=l.float32) + 1.5, lambda l: l.ones(2, dtype=l.float32) * l.tensor(1.5),
    lambda l: l.tensor([1, 2]) + l.tensor(1.5), lambda l: l.tensor([1, 2], dtype=l.int32) * l.tensor(1.5, dtype=l.half),
    lambda l: l.atan2(l.tensor([1]), l.tensor([2])), lambda l: l.true_divide(l.tensor([5]), 2),
]


@pytest.mark.parametrize("default_dtype", ["float32", "float64", "float16", "bfloat16"], indirect=True)
@pytest.mark.parametrize("make", FACTORIES + PROMOTIONS + UNFILLED)
def test_factories_and_promotion_follow_the_default_dtype(default_dtype, make):
    e, t = make(ember), make(torch)
    assert _name(e.dtype) == _name(t.dtype) and tuple(e.shape) == tuple(t.shape)
    if make not in UNFILLED:
        np.testing.assert_allclose(e.double().numpy(), t.double().numpy(), rtol=1e-6)


@pytest.mark.parametrize("default_dtype", ["float64"], indirect=True)
@pytest.mark.parametrize("make", [
    lambda l: l.tensor(1 + 2j), lambda l: l.tensor([1, 2.5j]), lambda l: l.tensor([1, 2]) * 1j,
    lambda l: l.full((2,), 1j), lambda l: l.linspace(0, 1j, 3), lambda l: l.fft.fft(l.tensor([1, 2, 3])),
    lambda l: l.complex(l.tensor([1.0]), l.tensor([0.0])), lambda l: l.polar(l.tensor([1.0]), l.tensor([0.5])),
])
def test_complex_default_follows_float64(default_dtype, make):
    e, t = make(ember), make(torch)
    assert _name(e.dtype) == _name(t.dtype) == "complex128"
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("default_dtype", ["float64", "float16", "bfloat16"], indirect=True)
@pytest.mark.parametrize("make", [
    lambda l: l.nn.Linear(2, 2), lambda l: l.nn.Conv2d(2, 2, 3), lambda l: l.nn.BatchNorm1d(3),
    lambda l: l.nn.Embedding(3, 2), lambda l: l.nn.LSTM(2, 3, num_layers=2, bidirectional=True),
    lambda l: l.nn.LayerNorm(2), lambda l: l.nn.MultiheadAttention(4, 2), lambda l: l.nn.PReLU(),
    lambda l: l.nn.TransformerEncoderLayer(4, 2, 8), lambda l: l.nn.Bilinear(2, 2, 3), lambda l: l.nn.RMSNorm(3),
])
def test_module_parameters_follow_the_default_dtype(default_dtype, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, t = make(ember).state_dict(), make(torch).state_dict()
    assert [(k, _name(v.dtype)) for k, v in e.items()] == [(k, _name(v.dtype)) for k, v in t.items()]


@pytest.mark.parametrize("default_dtype", ["float64"], indirect=True)
def test_float64_training_step_matches(default_dtype):
    """A float64 MLP (weights copied), Adam state and a step, as scripts that set float64 globally do."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    init = {k: v.numpy() for k, v in torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                                         torch.nn.Linear(5, 1)).state_dict().items()}
    res = []
    for lib in LIBS:
        net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 1))
        net.load_state_dict({k: lib.from_numpy(v) for k, v in init.items()})
        opt = lib.optim.Adam(net.parameters(), lr=0.01)
        for _ in range(3):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(net(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
        state = opt.state[net[0].weight]
        res.append(({k: v.detach().numpy().copy() for k, v in net.state_dict().items()}, loss.dtype,
                    {k: _name(v.dtype) for k, v in state.items()}))
    assert _name(res[0][1]) == _name(res[1][1]) == "float64" and res[0][2] == res[1][2]
    for k in res[1][0]:
        np.testing.assert_allclose(res[0][0][k], res[1][0][k], rtol=1e-12, atol=1e-14)


def test_set_default_dtype_accepts_only_the_four_float_types(restore_defaults):
    for name in ("float16", "bfloat16", "float64", "float32"):
        ember.set_default_dtype(getattr(ember, name))
        assert ember.get_default_dtype() is getattr(ember, name) and ember.finfo().bits == torch.finfo(
            getattr(torch, name)).bits
    for bad in ("float8_e4m3fn", "float8_e5m2", "int64", "complex64", "bool"):
        for lib in LIBS:
            with pytest.raises(TypeError):
                lib.set_default_dtype(getattr(lib, bad))
    for bad in ("float64", float, None):
        for lib in LIBS:
            with pytest.raises(TypeError):
                lib.set_default_dtype(bad)
    assert ember.get_default_dtype() is ember.float32


def test_set_default_tensor_type_warns_and_sets_the_dtype(restore_defaults):
    """(torch warns once per process, so only ember's warning is checked.)"""
    with pytest.warns(UserWarning, match="deprecated"):
        ember.set_default_tensor_type(ember.DoubleTensor)
    ember.set_default_dtype(ember.float32)
    res = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in LIBS:
            lib.set_default_tensor_type(lib.DoubleTensor)
            r = [lib.get_default_dtype(), lib.zeros(1).dtype, lib.tensor([1.0]).dtype, lib.Tensor([1]).dtype]
            lib.set_default_tensor_type("torch.FloatTensor")
            res.append([_name(d) for d in r + [lib.get_default_dtype()]])
            for bad in (lib.LongTensor, lib.float64, "torch.LongTensor"):
                with pytest.raises(TypeError):
                    lib.set_default_tensor_type(bad)
    assert res[0] == res[1] == ["float64"] * 4 + ["float32"]


# -- default device and the meta device -------------------------------------------------------------------------
def _dev(x):
    return str(x.device)


def test_device_context_manager_nests_and_restores():
    res = []
    for lib in LIBS:
        with lib.device("meta") as d:
            r = [str(d), _dev(lib.zeros(1)), _dev(lib.tensor([1, 2])), _dev(lib.arange(3)), _dev(lib.randn(2, 3)),
                 _dev(lib.randperm(4)), _dev(lib.nn.Linear(2, 2).weight), _dev(lib.zeros(1, device="cpu")),
                 _dev(lib.zeros_like(lib.ones(2, device="cpu"))), str(lib.get_default_device())]
            with lib.device("cpu"):
                r.append(_dev(lib.ones(1)))
            r.append(_dev(lib.ones(1)))
        res.append(r + [_dev(lib.zeros(1)), str(lib.get_default_device())])
    assert res[0] == res[1]


def test_set_default_device(restore_defaults):
    res = []
    for lib in LIBS:
        lib.set_default_device("meta")
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
        y = m(lib.ones(2, 3))
        r = [str(lib.get_default_device()), _dev(m[0].weight), _dev(y), tuple(y.shape), _dev(lib.full((2,), 1.0))]
        lib.set_default_device(lib.device("cpu"))
        r += [str(lib.get_default_device()), _dev(lib.zeros(1))]
        lib.set_default_device(None)
        res.append(r + [str(lib.get_default_device())])
    assert res[0] == res[1]


def test_meta_init_then_to_empty_and_load():
    """Build on meta (no memory), materialize with ``to_empty``, then initialize or load real weights."""
    src = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    sd = {k: v.numpy() for k, v in src.state_dict().items()}
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out = []
    for lib in LIBS:
        with lib.device("meta"):
            m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
        assert m[0].weight.is_meta and m[1].num_batches_tracked.is_meta
        m.to_empty(device="cpu")
        assert _dev(m[0].weight) == "cpu" and type(m[0].weight) is lib.nn.Parameter and m[0].weight.requires_grad
        m.load_state_dict({k: lib.from_numpy(v) for k, v in sd.items()})
        out.append(m.eval()(lib.from_numpy(x)).detach().numpy())
        with lib.device("meta"):
            m2 = lib.nn.Linear(3, 4)
        m2.load_state_dict({k[2:]: lib.from_numpy(v) for k, v in sd.items() if k.startswith("0.")}, assign=True)
        assert _dev(m2.weight) == "cpu" and type(m2.weight) is lib.nn.Parameter and m2.weight.requires_grad
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", [
    lambda l, x: l.multinomial(x, 2), lambda l, x: l.multinomial(x.expand(3, 4), 5, True),
    lambda l, x: x.multinomial(1), lambda l, x: l.distributions.Categorical(probs=x, validate_args=False).sample(),
])
def test_multinomial_on_meta_gives_the_shape(call):
    e, t = call(ember, ember.ones(4, device="meta")), call(torch, torch.ones(4, device="meta"))
    assert e.is_meta and tuple(e.shape) == tuple(t.shape) and _name(e.dtype) == _name(t.dtype)


@pytest.mark.parametrize("call", [
    lambda l, x: x.nonzero(), lambda l, x: l.argwhere(x), lambda l, x: l.where(x > 0), lambda l, x: x[x > 0],
    lambda l, x: l.masked_select(x, x > 0), lambda l, x: x.unique(), lambda l, x: l.unique_consecutive(x),
    lambda l, x: x.nonzero(as_tuple=True),
])
def test_data_dependent_shapes_refuse_meta(call):
    for lib in LIBS:
        with pytest.raises(NotImplementedError):
            call(lib, lib.ones(3, device="meta"))


# -- print options ----------------------------------------------------------------------------------------------
def _r(x):
    return repr(x).replace("torch.", "T.").replace("ember.", "T.")


_A = np.random.default_rng(0).standard_normal((6, 7)).astype(np.float32) * 50
PRINTED = [
    lambda l: l.tensor(_A), lambda l: l.tensor(_A).double() * 1e-5, lambda l: l.tensor(_A).half(),
    lambda l: l.tensor(_A).bfloat16(), lambda l: l.complex(l.tensor(_A[:2, :3]), l.tensor(_A[2:4, :3])),
    lambda l: l.tensor((_A * 1000).astype(np.int64)), lambda l: l.tensor(_A > 0),
    lambda l: l.arange(1500).reshape(5, 10, 30), lambda l: l.tensor([1e-10, 1.0, 1e10, float("nan"), float("inf")]),
    lambda l: l.tensor([1.0, 2.0, 3e9]), lambda l: l.tensor(3.14159265, dtype=l.float64),
    lambda l: l.ones(3, 2, device="meta", dtype=l.float16), lambda l: l.ones(2, requires_grad=True) * 3,
]


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False), dict(threshold=10, edgeitems=2),
    dict(linewidth=40), dict(profile="short"), dict(profile="full"), dict(threshold=float("inf")),
    dict(precision=2, sci_mode=True, linewidth=60),
])
def test_printoptions_on_several_dtypes(restore_defaults, opts, default):
    """Each option set, under each default dtype (which decides whether the repr names the dtype)."""
    res = []
    for lib in LIBS:
        lib.set_default_dtype(getattr(lib, default))
        lib.set_printoptions(**opts)
        res.append([_r(make(lib)) for make in PRINTED])
        lib.set_printoptions(profile="default")
        lib.set_printoptions(sci_mode=None)
    assert res[0] == res[1]


# -- deterministic algorithms, threads, flush denormal, grad mode -------------------------------------------------
def test_deterministic_modes(restore_defaults):
    res = []
    for lib in LIBS:
        r = [lib.are_deterministic_algorithms_enabled(), lib.get_deterministic_debug_mode()]
        for mode in ("warn", "error", "default", 1, 2, 0, True):
            lib.set_deterministic_debug_mode(mode)
            r += [lib.get_deterministic_debug_mode(), lib.are_deterministic_algorithms_enabled(),
                  lib.is_deterministic_algorithms_warn_only_enabled()]
        lib.use_deterministic_algorithms(True, warn_only=True)
        r.append(lib.get_deterministic_debug_mode())
        for bad, exc in (("bogus", RuntimeError), (5, RuntimeError), (1.5, TypeError)):
            with pytest.raises(exc):
                lib.set_deterministic_debug_mode(bad)
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms("yes")
        res.append(r)
    assert res[0] == res[1]


def test_num_threads():
    res = []
    for lib in LIBS:
        n = lib.get_num_threads()
        try:
            lib.set_num_threads(2)
            res.append(lib.get_num_threads())
        finally:
            lib.set_num_threads(n)
        assert lib.get_num_threads() == n and lib.get_num_interop_threads() > 0
    assert res[0] == res[1] == 2


def test_set_flush_denormal_returns_a_bool_and_keeps_values():
    for mode in (True, False):
        assert isinstance(ember.set_flush_denormal(mode), bool)
    ember.set_flush_denormal(False)
    assert ember.tensor([1e-310], dtype=ember.float64).mul(1).item() == 1e-310


def test_set_grad_enabled_as_function_context_and_decorator(restore_defaults):
    res = []
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        lib.set_grad_enabled(False)
        r = [(x * 2).requires_grad, lib.is_grad_enabled()]
        lib.set_grad_enabled(True)
        r += [(x * 2).requires_grad]
        with lib.set_grad_enabled(False):
            r += [(x * 2).requires_grad]
        r += [(x * 2).requires_grad]

        @lib.set_grad_enabled(False)
        def f():
            return (x * 2).requires_grad
        r += [f(), lib.is_grad_enabled()]
        with lib.no_grad():
            with lib.set_grad_enabled(True):
                r += [(x * 2).requires_grad]
            r += [lib.is_grad_enabled()]
        for bad in ("yes", 1, None):
            with pytest.raises(TypeError, match="must be bool"):
                lib.set_grad_enabled(bad)
        res.append(r + [lib.is_grad_enabled()])
    assert res[0] == res[1]
