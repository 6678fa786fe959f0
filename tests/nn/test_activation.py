"""Activations (functional and modules) against torch: values, gradients, second derivatives, dtypes, in-place
forms, errors and reprs."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from .torch_ref import check_fn, check_module, close, same_error

E = ember.nn.modules
EF = ember.nn.functional
TF = torch.nn.functional


def _inputs(rng, stable=True):
    """Random values plus the kinks (0, +-3, +-0.5...) and, for stable activations, +-1e4 and +-30."""
    x = rng.uniform(-5, 5, (4, 8))
    x[0, :8] = [0.0, 3.0, -3.0, 0.5, -0.5, 1.0, -1.0, 6.0]
    if stable:
        x[1, :4] = [1e4, -1e4, 30.0, -30.0]
    return x


# name, kwargs, stable at +-1e4 (value and gradient), has a second derivative in torch
ACTIVATIONS = [
    ("relu", {}, True, True), ("relu6", {}, True, True), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, True, True),
    ("elu", {"alpha": 0.7}, True, True), ("selu", {}, True, True), ("celu", {"alpha": 1.5}, True, True),
    ("leaky_relu", {"negative_slope": 0.2}, True, True), ("gelu", {}, True, True),
    ("gelu", {"approximate": "tanh"}, True, True), ("silu", {}, True, True), ("mish", {}, True, True),
    ("logsigmoid", {}, True, True), ("hardshrink", {"lambd": 0.5}, True, True),
    ("softshrink", {"lambd": 0.5}, True, True), ("tanhshrink", {}, True, True), ("softsign", {}, True, True),
    ("softplus", {}, True, True), ("softplus", {"beta": 2.0, "threshold": 5.0}, True, True),
    ("hardsigmoid", {}, True, False), ("hardswish", {}, True, True), ("sigmoid", {}, True, True),
    ("tanh", {}, True, True), ("rrelu", {}, True, True), ("glu", {}, True, True), ("glu", {"dim": 0}, False, True),
    ("threshold", {"threshold": 0.5, "value": -2.0}, True, True),
]
IDS = [f"{n}-{'-'.join(map(str, k.values()))}" if k else n for n, k, _, _ in ACTIVATIONS]


def _call(F, name, x, kwargs):
    if name == "threshold":
        return F.threshold(x, kwargs["threshold"], kwargs["value"])
    return getattr(F, name)(x, **kwargs)


@pytest.mark.parametrize("name,kwargs,stable,dd", ACTIVATIONS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_vs_torch(name, kwargs, stable, dd, dtype):
    x = _inputs(np.random.default_rng(1), stable)
    ye, _ = check_fn(lambda F, x: _call(F, name, x, kwargs), x, dtype=dtype)
    if stable:
        assert np.isfinite(ye.detach().numpy()).all()


@pytest.mark.parametrize("name,kwargs,stable,dd", ACTIVATIONS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_activation_half(name, kwargs, stable, dd, dtype):
    x = _inputs(np.random.default_rng(2), stable=False)
    check_fn(lambda F, x: _call(F, name, x, kwargs), x, dtype=dtype)


@pytest.mark.parametrize("name,kwargs,stable,dd", [a for a in ACTIVATIONS if a[3]],
                         ids=[i for i, a in zip(IDS, ACTIVATIONS) if a[3]])
def test_second_derivative_vs_torch(name, kwargs, stable, dd):
    rng = np.random.default_rng(3)
    x = _inputs(rng, stable=False)
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    g, h = rng.standard_normal(tuple(_call(TF, name, xt, kwargs).shape)), rng.standard_normal(x.shape)
    gt, ge = torch.tensor(g, requires_grad=True), ember.tensor(g, requires_grad=True)
    dt, = torch.autograd.grad(_call(TF, name, xt, kwargs), xt, gt, create_graph=True)
    de, = ember.autograd.grad(_call(EF, name, xe, kwargs), xe, ge, create_graph=True)
    close(de, dt, "float64")
    if not dt.requires_grad:
        return
    at = torch.autograd.grad(dt, (xt, gt), torch.tensor(h), allow_unused=True)
    ae = ember.autograd.grad(de, (xe, ge), ember.tensor(h), allow_unused=True)
    for a, b in zip(ae, at):
        if b is not None:
            close(ember.zeros(b.shape, dtype=ember.float64) if a is None else a, b, "float64")


@pytest.mark.parametrize("fn", [
    EF.relu, EF.gelu, lambda x: EF.gelu(x, approximate="tanh"), EF.silu, EF.mish, EF.elu, EF.selu,
    lambda x: EF.celu(x, 2.0), EF.softplus, lambda x: EF.softplus(x, 2.0, 1.0), EF.logsigmoid, EF.hardswish,
    EF.hardsigmoid, EF.leaky_relu, EF.hardtanh, EF.softshrink, EF.hardshrink, EF.glu, EF.tanhshrink],
    ids=["relu", "gelu", "gelu_tanh", "silu", "mish", "elu", "selu", "celu", "softplus", "softplus_beta",
         "logsigmoid", "hardswish", "hardsigmoid", "leaky_relu", "hardtanh", "softshrink", "hardshrink", "glu",
         "tanhshrink"])
def test_gradcheck(fn):
    x = ember.tensor(np.random.default_rng(4).uniform(-4, 4, (3, 4)), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_extreme_logits_finite_gradients():
    x = np.array([1e4, -1e4, 50.0, -50.0, 0.0])
    for name in ("logsigmoid", "softplus", "silu", "gelu", "elu", "selu", "mish", "sigmoid", "tanh"):
        xe = ember.tensor(x, dtype=ember.float32, requires_grad=True)
        y = getattr(EF, name)(xe)
        y.backward(ember.ones(5))
        assert np.isfinite(y.detach().numpy()).all() and np.isfinite(xe.grad.numpy()).all(), name


MODULES = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("Hardtanh", (-2.0, 1.5), {}), ("ELU", (0.5,), {}), ("SELU", (), {}),
    ("CELU", (1.3,), {}), ("LeakyReLU", (0.1,), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
    ("Mish", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}), ("LogSigmoid", (), {}), ("Hardshrink", (0.3,), {}),
    ("Softshrink", (0.3,), {}), ("Tanhshrink", (), {}), ("Softsign", (), {}), ("Softplus", (2.0, 4.0), {}),
    ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Threshold", (0.1, 20.0), {}), ("GLU", (1,), {}),
    ("Softmax", (1,), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}), ("PReLU", (), {}),
    ("PReLU", (4,), {"init": 0.1}), ("RReLU", (0.1, 0.3), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=[f"{m[0]}{m[1]}" for m in MODULES])
def test_module_vs_torch(name, args, kwargs):
    tm, em = getattr(torch.nn, name)(*args, **kwargs), getattr(E, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    x = np.random.default_rng(5).standard_normal((3, 4, 2)) * 3
    train = name != "RReLU"  # its training slopes are random
    check_module(tm, em, x, train=train)
    if name == "PReLU":
        assert em.weight.shape == tm.weight.shape and em.weight.requires_grad


def test_inplace_modules_and_functions():
    x = np.random.default_rng(6).standard_normal((4, 5))
    for name, kw in [("ReLU", {}), ("ReLU6", {}), ("Hardtanh", {}), ("ELU", {}), ("SELU", {}), ("CELU", {}),
                     ("LeakyReLU", {}), ("SiLU", {}), ("Mish", {}), ("Hardswish", {}), ("Hardsigmoid", {}),
                     ("Threshold", {"threshold": 0.1, "value": 2.0})]:
        tm, em = getattr(torch.nn, name)(inplace=True, **kw), getattr(E, name)(inplace=True, **kw)
        assert repr(em) == repr(tm)
        at, ae = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
        ht, he = at * 2, ae * 2  # a non-leaf, written in place
        rt, re = tm(ht), em(he)
        assert re is he and re.shape == (4, 5)
        g = np.random.default_rng(7).standard_normal((4, 5))
        rt.backward(torch.tensor(g))
        re.backward(ember.tensor(g))
        close(re, rt, "float64", name)
        close(ae.grad, at.grad, "float64", name)
    y = ember.tensor([-1.0, 2.0])
    assert EF.relu_(y) is y and y.tolist() == [0.0, 2.0]
    y = ember.tensor([-1.0, 2.0])
    assert y.relu().tolist() == [0.0, 2.0] and y.relu_() is y and y.tolist() == [0.0, 2.0]
    for fn, ref in [(EF.elu_, TF.elu_), (EF.leaky_relu_, TF.leaky_relu_), (EF.hardtanh_, TF.hardtanh_),
                    (EF.selu_, torch.selu_), (EF.celu_, torch.celu_), (EF.rrelu_, TF.rrelu_)]:
        a, b = ember.tensor(x), torch.tensor(x)
        assert fn(a) is a
        ref(b)
        close(a, b, "float64")
    a, b = ember.tensor(x), torch.tensor(x)
    EF.threshold_(a, 0.2, -1.0)
    TF.threshold_(b, 0.2, -1.0)
    close(a, b, "float64")
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        EF.relu(ember.ones(2, requires_grad=True), inplace=True)


def test_integer_and_bool_inputs():
    xi = np.array([-2, 0, 3])
    for name in ("relu", "relu6", "hardtanh"):
        ye, yt = getattr(EF, name)(ember.tensor(xi)), getattr(TF, name)(torch.tensor(xi))
        assert ye.dtype is ember.int64 and ye.tolist() == yt.tolist()
    assert EF.threshold(ember.tensor(xi), 0, 7).tolist() == TF.threshold(torch.tensor(xi), 0, 7).tolist()
    for name in ("gelu", "silu", "elu", "leaky_relu", "softplus", "logsigmoid", "mish", "hardswish", "hardsigmoid",
                 "hardshrink", "softshrink", "selu"):
        same_error(lambda: getattr(EF, name)(ember.tensor(xi)), lambda: getattr(TF, name)(torch.tensor(xi)))
    same_error(lambda: ember.tensor([True]).relu(), lambda: torch.tensor([True]).relu())


def test_errors():
    x, xt = ember.randn(2, 3), torch.randn(2, 3)
    same_error(lambda: EF.gelu(x, approximate="foo"), lambda: TF.gelu(xt, approximate="foo"))
    same_error(lambda: EF.glu(x, 1), lambda: TF.glu(xt, 1))
    same_error(lambda: EF.glu(ember.tensor(1.0)), lambda: TF.glu(torch.tensor(1.0)))
    same_error(lambda: EF.hardtanh(x, 2.0, 1.0), lambda: TF.hardtanh(xt, 2.0, 1.0))
    same_error(lambda: EF.prelu(x, ember.ones(4)), lambda: TF.prelu(xt, torch.ones(4)))
    same_error(lambda: EF.prelu(x, ember.ones(1, 3)), lambda: TF.prelu(xt, torch.ones(1, 3)))
    same_error(lambda: EF.prelu(ember.randn(3), ember.ones(3)), lambda: TF.prelu(torch.randn(3), torch.ones(3)))
    same_error(lambda: EF.rrelu(x, 0.5, 0.1, True), lambda: TF.rrelu(xt, 0.5, 0.1, True))
    same_error(lambda: E.Softmax2d()(x), lambda: torch.nn.Softmax2d()(xt))
    same_error(lambda: E.Hardtanh(1.0, 1.0), lambda: torch.nn.Hardtanh(1.0, 1.0))
    same_error(lambda: EF.celu(x, 0.0), lambda: TF.celu(xt, 0.0))


def test_prelu_shapes():
    rng = np.random.default_rng(8)
    for shape, n in [((2, 3, 4), 3), ((2, 3), 3), ((5,), 1), ((), 1), ((2, 3, 2, 2), 1)]:
        x = rng.standard_normal(shape)
        w = rng.uniform(0, 1, n)
        check_fn(lambda F, x, w: F.prelu(x, w), x, w, dtype="float64")


def test_softmax_family():
    x = np.random.default_rng(9).standard_normal((2, 3, 4))
    for dim in (0, 1, -1):
        check_fn(lambda F, x: F.softmax(x, dim), x)
        check_fn(lambda F, x: F.log_softmax(x, dim), x)
        check_fn(lambda F, x: F.softmin(x, dim), x)
    check_fn(lambda F, x: F.softmax(x, 1, dtype=torch.float64 if F is TF else ember.float64), x)
    check_fn(lambda F, x: F.softmin(x, 0, dtype=torch.float64 if F is TF else ember.float64), x)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        ye = EF.softmax(ember.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(ye, TF.softmax(torch.tensor(x)), "float64")
        close(E.LogSoftmax()(ember.tensor(x[0])), torch.nn.LogSoftmax()(torch.tensor(x[0])), "float64")
    check_module(torch.nn.Softmax2d(), E.Softmax2d(), x)
    check_module(torch.nn.Softmax2d(), E.Softmax2d(), x[None])
    check_fn(lambda F, x: F.log_softmax(x, 1), np.array([[1e4, -1e4, 0.0]]))


def test_rrelu_training():
    ember.manual_seed(0)
    x = ember.full((2000,), -1.0, requires_grad=True)
    y = EF.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and abs(slopes.mean() - 0.2) < 0.01
    y.backward(ember.ones(2000))
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    ember.manual_seed(0)
    assert np.array_equal(EF.rrelu(x.detach(), 0.1, 0.3, training=True).numpy(), -slopes)
    m = E.RReLU(0.1, 0.3)
    m.eval()
    assert m(ember.tensor([-1.0, 2.0])).tolist() == pytest.approx([-0.2, 2.0])
    assert EF.rrelu(ember.tensor([3.0]), training=True).tolist() == [3.0]


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.randn(5, 4, requires_grad=True)
    y = EF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(1).detach().numpy(), 1, rtol=1e-6)
    h = EF.gumbel_softmax(logits, hard=True)
    assert set(np.unique(h.detach().numpy())) <= {0.0, 1.0} and (h.sum(1) == 1).all()
    h.backward(ember.randn(5, 4))
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()


DOC_MODULES = ["ember.nn.functional.activation", "ember.nn.functional.normalization", "ember.nn.functional.dropout",
               "ember.nn.functional.sparse", "ember.nn.functional.loss", "ember.nn.functional.distance",
               "ember.nn.modules.activation", "ember.nn.modules.normalization", "ember.nn.modules.batchnorm",
               "ember.nn.modules.dropout", "ember.nn.modules.sparse", "ember.nn.modules.loss",
               "ember.nn.modules.distance"]


@pytest.mark.parametrize("name", DOC_MODULES)
def test_docstring_examples(name):
    import doctest
    import importlib
    module = importlib.import_module(name)
    globs = {"ember": ember, "F": EF, "nn": E}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
