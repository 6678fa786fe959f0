"""Weight norm, spectral norm (hook-based and as parametrizations) and nn.utils.parametrize against torch."""
import copy
import doctest
import importlib
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import parametrize

MODULES = {
    "linear": (lambda nn: nn.Linear(5, 4), (3, 5)),
    "conv2d": (lambda nn: nn.Conv2d(3, 4, 3), (2, 3, 6, 6)),
    "conv_transpose2d": (lambda nn: nn.ConvTranspose2d(3, 4, 3), (2, 3, 5, 5)),
}

UTILS = {  # U is torch.nn.utils or ember.nn.utils
    "weight_norm": lambda U, m: U.weight_norm(m),
    "weight_norm_dim_none": lambda U, m: U.weight_norm(m, dim=None),
    "weight_norm_dim1": lambda U, m: U.weight_norm(m, dim=1),
    "spectral_norm": lambda U, m: U.spectral_norm(m),
    "spectral_norm_3_iters_dim1": lambda U, m: U.spectral_norm(m, n_power_iterations=3, dim=1),
    "p_weight_norm": lambda U, m: U.parametrizations.weight_norm(m),
    "p_weight_norm_dim_none": lambda U, m: U.parametrizations.weight_norm(m, dim=None),
    "p_spectral_norm": lambda U, m: U.parametrizations.spectral_norm(m),
    "p_spectral_norm_3_iters_dim1": lambda U, m: U.parametrizations.spectral_norm(m, n_power_iterations=3, dim=1),
}


def _np(t):
    return t.detach().cpu().numpy()


def _close(a, b, tol=1e-5):
    """Equal to ``tol``, relative to the scale of ``b`` (float32 sums of many terms, e.g. conv gradients)."""
    b = _np(b)
    np.testing.assert_allclose(_np(a), b, rtol=tol, atol=tol * max(1.0, np.abs(b).max(initial=0)))


def _to_ember(state_dict):
    return {k: ember.tensor(_np(v)) for k, v in state_dict.items()}


def _check_state(e, t):
    """The same state_dict keys, in the same order, holding the same values."""
    se, st = e.state_dict(), t.state_dict()
    assert list(se) == list(st)
    for k in st:
        _close(se[k], st[k])


def _pair(module, util=None, device="cpu"):
    """A torch module and an ember one with the same weights, ``util`` applied to both, random u/v copied over."""
    make, shape = MODULES[module]
    torch.manual_seed(0)
    t, e = make(torch.nn), make(ember.nn).to(device)
    e.load_state_dict(_to_ember(t.state_dict()))
    if util is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            UTILS[util](torch.nn.utils, t)
            UTILS[util](ember.nn.utils, e)
        e.load_state_dict(_to_ember(t.state_dict()))
    return t, e, shape


def _forward_backward(t, e, x, device="cpu"):
    """Runs both modules on ``x`` with the loss ``sum(out ** 2)``; checks outputs and parameter gradients."""
    outs = []
    for m, lib, kw in ((t, torch, {}), (e, ember, {"device": device})):
        out = m(lib.tensor(x, **kw))
        (out ** 2).sum().backward()
        outs.append(out)
    _close(outs[1], outs[0])
    named_t, named_e = dict(t.named_parameters()), dict(e.named_parameters())
    assert list(named_e) == list(named_t)
    for name, p in named_t.items():
        _close(named_e[name].grad, p.grad)


@pytest.mark.parametrize("util", UTILS)
@pytest.mark.parametrize("module", MODULES)
def test_training_and_eval_match_torch(module, util, device):
    t, e, shape = _pair(module, util, device)
    _check_state(e, t)
    opt_t = torch.optim.SGD(t.parameters(), lr=0.05, momentum=0.9)
    opt_e = ember.optim.SGD(e.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    for _ in range(3):
        opt_t.zero_grad()
        opt_e.zero_grad()
        _forward_backward(t, e, rng.standard_normal(shape).astype(np.float32), device)
        opt_t.step()
        opt_e.step()
        _check_state(e, t)
    t.eval()
    e.eval()
    before = {k: _np(v).copy() for k, v in e.state_dict().items()}
    for _ in range(2):
        _forward_backward(t, e, rng.standard_normal(shape).astype(np.float32), device)
    for k, v in e.state_dict().items():  # no power iteration in eval mode: u and v unchanged
        np.testing.assert_array_equal(_np(v), before[k])
    _check_state(e, t)
    # the trained torch state loads into a fresh ember module with the same reparametrization
    _, fresh, _ = _pair(module, util, device)
    fresh.load_state_dict(_to_ember(t.state_dict()))
    fresh.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    _close(fresh(ember.tensor(x, device=device)), t(torch.tensor(x)))


@pytest.mark.parametrize("module", MODULES)
def test_parameter_and_buffer_names_and_shapes(module):
    for util, names in [("weight_norm", ["weight_g", "weight_v"]), ("spectral_norm", ["weight_orig"]),
                        ("p_weight_norm", ["parametrizations.weight.original0", "parametrizations.weight.original1"]),
                        ("p_spectral_norm", ["parametrizations.weight.original"])]:
        t, e, _ = _pair(module, util)
        assert [n for n, _ in e.named_parameters()] == ["bias"] + names
        assert [(n, tuple(b.shape)) for n, b in e.named_buffers()] == \
            [(n, tuple(b.shape)) for n, b in t.named_buffers()]
    _, e, _ = _pair(module, "spectral_norm")
    assert e.weight_u.shape == (4,)  # the output dimension: dim 1 of a ConvTranspose weight, else dim 0


def test_hook_weight_is_recomputed_before_each_forward():
    t, e, shape = _pair("linear", "weight_norm")
    assert not isinstance(e.weight, ember.nn.Parameter) and "weight" not in e._parameters
    _close(e.weight, t.weight)
    old = _np(e.weight).copy()
    with torch.no_grad(), ember.no_grad():
        t.weight_g.mul_(2)
        e.weight_g.mul_(2)
    np.testing.assert_array_equal(_np(e.weight), old)  # stale until the next forward
    x = np.ones(shape, np.float32)
    _close(e(ember.tensor(x)), t(torch.tensor(x)))
    _close(e.weight, ember.tensor(2 * old))
    _close(e.weight, t.weight)


def test_spectral_norm_power_iteration_only_in_training():
    t, e, shape = _pair("linear", "spectral_norm")
    u0 = _np(e.weight_u).copy()
    x = np.ones(shape, np.float32)
    e.eval()
    e(ember.tensor(x))
    np.testing.assert_array_equal(_np(e.weight_u), u0)
    e.train()
    e(ember.tensor(x))
    t(torch.tensor(x))
    assert not np.array_equal(_np(e.weight_u), u0)
    _close(e.weight_u, t.weight_u)
    _close(e.weight_v, t.weight_v)
    # the largest singular value of the normalized weight is about 1 after some iterations
    for _ in range(30):
        e(ember.tensor(x))
    assert abs(np.linalg.svd(_np(e.weight), compute_uv=False)[0] - 1) < 1e-3



@pytest.mark.parametrize("util", ["spectral_norm", "p_spectral_norm"])
def test_spectral_norm_backward_through_two_forwards(util):
    t, e, shape = _pair("conv2d", util)  # the GAN pattern: loss = D(real) - D(fake), u and v updated in between
    x, y = np.ones(shape, np.float32), np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 100
    (t(torch.tensor(x)).sum() - t(torch.tensor(y)).sum()).backward()
    (e(ember.tensor(x)).sum() - e(ember.tensor(y)).sum()).backward()
    for (name, p), (name_e, q) in zip(t.named_parameters(), e.named_parameters()):
        assert name_e == name
        _close(q.grad, p.grad)

def test_spectral_norm_state_dict_metadata_and_version_0_loading():
    t, e, _ = _pair("conv2d", "spectral_norm")
    assert e.state_dict()._metadata[""]["spectral_norm"] == t.state_dict()._metadata[""]["spectral_norm"] == \
        {"weight.version": 1}
    torch.manual_seed(0)
    t = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 5))  # a tall weight: the solve for v is well-conditioned
    e = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 5))
    e.load_state_dict(_to_ember(t.state_dict()))
    x = np.ones((2, 3), np.float32)
    e(ember.tensor(x))
    t(torch.tensor(x))
    # a version-0 state dict: the normalized weight stored, no v; v is solved for on load
    old_t = {k: v for k, v in t.state_dict().items() if k != "weight_v"}
    old_t["weight"] = t.weight.detach()
    old_e = _to_ember(old_t)
    t.load_state_dict(old_t)
    e.load_state_dict(old_e)
    _close(e.weight_v, t.weight_v, 1e-4)
    _close(e.weight_u, ember.nn.functional.normalize(e.weight_orig.mv(e.weight_v), dim=0), 1e-4)
    assert "weight" in old_e and "weight_v" not in old_e  # the caller's dict is not modified


@pytest.mark.parametrize("util", ["weight_norm", "spectral_norm"])
@pytest.mark.parametrize("module", MODULES)
def test_remove_hook_based(module, util):
    t, e, shape = _pair(module, util)
    x = np.ones(shape, np.float32)
    e(ember.tensor(x))
    t(torch.tensor(x))
    remove = "remove_" + util
    getattr(torch.nn.utils, remove)(t)
    getattr(ember.nn.utils, remove)(e)
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight.requires_grad
    assert not e._forward_pre_hooks and not e._state_dict_hooks and not e._load_state_dict_pre_hooks
    _check_state(e, t)
    _close(e(ember.tensor(x)), t(torch.tensor(x)))
    e.load_state_dict(e.state_dict())  # torch keeps spectral norm's load hook, which then fails here
    with pytest.raises(ValueError) as ee:
        getattr(ember.nn.utils, remove)(e)
    with pytest.raises(ValueError) as et:
        getattr(torch.nn.utils, remove)(t)
    assert str(ee.value) == str(et.value) == f"{util} of 'weight' not found in {e}"


def test_hook_based_errors_and_warnings():
    m = ember.nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match=r"`torch.nn.utils.weight_norm` is deprecated in favor of "
                                           r"`torch.nn.utils.parametrizations.weight_norm`"):
        ember.nn.utils.weight_norm(m)
    for U, mod in ((torch.nn.utils, torch.nn.Linear(3, 2)), (ember.nn.utils, ember.nn.Linear(3, 2))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            U.spectral_norm(mod)  # no warning
            U.parametrizations.spectral_norm(U.parametrizations.weight_norm(type(mod)(3, 2)), name="bias")
        with pytest.raises(RuntimeError, match="^Cannot register two spectral_norm hooks on the same parameter "
                                               "weight$"):
            U.spectral_norm(mod)
        with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got "
                                             "n_power_iterations=0$"):
            U.spectral_norm(type(mod)(3, 2), n_power_iterations=0)
    with pytest.raises(RuntimeError, match="^Cannot register two weight_norm hooks on the same parameter weight$"), \
            pytest.warns(FutureWarning):
        ember.nn.utils.weight_norm(m)
    with pytest.raises(KeyError):
        ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2), name="nope")


def test_parametrized_weight_norm_loads_hook_based_state_dict():
    t, _, shape = _pair("conv2d", "weight_norm")
    _, e, _ = _pair("conv2d", "p_weight_norm")
    e.load_state_dict(_to_ember(t.state_dict()))
    x = np.ones(shape, np.float32)
    _close(e(ember.tensor(x)), t(torch.tensor(x)))
    _close(e.parametrizations.weight.original0, t.weight_g)


# -- parametrize ---------------------------------------------------------------------------------------------------
def _symmetric(nn, with_right_inverse=False):
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    if with_right_inverse:
        Symmetric.right_inverse = lambda self, A: A.triu()
    return Symmetric()


def _scale(nn, calls=None):
    class Scale(nn.Module):
        def forward(self, X):
            if calls is not None:
                calls.append(1)
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    return Scale()


def _split(nn):
    class Split(nn.Module):  # the weight as a sum of two tensors: right_inverse returns a tuple
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X / 4, 3 * X / 4

    return Split()


def _square_pair():
    torch.manual_seed(0)
    t, e = torch.nn.Linear(4, 4), ember.nn.Linear(4, 4)
    e.load_state_dict(_to_ember(t.state_dict()))
    return t, e


@pytest.mark.parametrize("chain", [[_symmetric], [lambda nn: _symmetric(nn, True)], [_symmetric, _scale],
                                   [_split], [_split, _symmetric]])
def test_register_parametrization_matches_torch(chain):
    t, e = _square_pair()
    e_weight = e.weight
    for make in chain:
        torch.nn.utils.parametrize.register_parametrization(t, "weight", make(torch.nn))
        parametrize.register_parametrization(e, "weight", make(ember.nn))
    _close(e.weight, t.weight)
    _check_state(e, t)
    assert repr(e) == repr(t)
    assert type(e).__name__ == "ParametrizedLinear" and isinstance(e, ember.nn.Linear)
    assert parametrize.type_before_parametrizations(e) is ember.nn.Linear
    plist = e.parametrizations.weight
    assert isinstance(plist, parametrize.ParametrizationList) and isinstance(plist, ember.nn.ModuleList)
    if plist.is_tensor:
        assert plist.original is e_weight  # the optimizer's parameter is kept
    else:
        assert plist.ntensors == 2
    opt_t, opt_e = torch.optim.SGD(t.parameters(), lr=0.1), ember.optim.SGD(e.parameters(), lr=0.1)
    for _ in range(2):
        opt_t.zero_grad()
        opt_e.zero_grad()
        _forward_backward(t, e, np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
        opt_t.step()
        opt_e.step()
    _check_state(e, t)
    if any(type(p).__name__ == "Symmetric" for p in plist):
        assert np.array_equal(_np(e.weight), _np(e.weight).T)


def test_assignment_calls_right_inverse_through_the_chain():
    t, e = _square_pair()
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib.nn, True))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib.nn))
    S = np.arange(16, dtype=np.float32).reshape(4, 4)
    S = S + S.T
    original = e.parametrizations.weight.original
    t.weight = torch.tensor(S)
    e.weight = ember.tensor(S)
    assert e.parametrizations.weight.original is original
    np.testing.assert_allclose(_np(e.weight), S)
    _check_state(e, t)
    t2, e2 = _square_pair()
    torch.nn.utils.parametrize.register_parametrization(t2, "weight", _symmetric(torch.nn))
    parametrize.register_parametrization(e2, "weight", _symmetric(ember.nn))
    with pytest.raises(RuntimeError, match="^parametrization Symmetric does not implement right_inverse.$"):
        t2.weight = torch.tensor(S)
    with pytest.raises(RuntimeError, match="^parametrization Symmetric does not implement right_inverse.$"):
        e2.weight = ember.tensor(S)


def test_parametrize_a_buffer_and_several_tensors():
    t, e = _square_pair()
    for m, lib in ((t, torch), (e, ember)):
        m.register_buffer("scale", m.bias.detach().clone())
        lib.nn.utils.parametrize.register_parametrization(m, "scale", _scale(lib.nn))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib.nn))
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()] == \
        ["parametrizations.scale.original"]
    _close(e.scale, t.scale)
    _check_state(e, t)
    assert parametrize.is_parametrized(e) and parametrize.is_parametrized(e, "scale")
    assert not parametrize.is_parametrized(e, "bias") and not parametrize.is_parametrized(ember.nn.Linear(2, 2))
    parametrize.remove_parametrizations(e, "scale")
    assert type(e).__name__ == "ParametrizedLinear"  # weight is still parametrized
    assert "scale" in e._buffers and not parametrize.is_parametrized(e, "scale")
    parametrize.remove_parametrizations(e, "weight")
    assert type(e) is ember.nn.Linear and not hasattr(e, "parametrizations")
    assert parametrize.type_before_parametrizations(e) is ember.nn.Linear


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations(leave_parametrized):
    t, e = _square_pair()
    weight = e.weight
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib.nn))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib.nn))
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave_parametrized)
    assert e.weight is weight and isinstance(weight, ember.nn.Parameter)
    assert type(e) is ember.nn.Linear and type(t) is torch.nn.Linear
    _check_state(e, t)
    assert np.array_equal(_np(e.weight), _np(e.weight).T) == leave_parametrized


def test_remove_parametrizations_of_a_tuple_parametrization():
    t, e = _square_pair()
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _split(lib.nn))
    for m, lib in ((t, torch), (e, ember)):
        with pytest.raises(ValueError, match=r"^Cannot leave unparametrized \(`leave_parametrized=False`\) a tensor "
                                             "that is parametrized in terms of a sequence of tensors.$"):
            lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight.grad_fn is None
    _check_state(e, t)


def test_cached():
    calls_t, calls_e = [], []
    t, e = _square_pair()
    torch.nn.utils.parametrize.register_parametrization(t, "weight", _scale(torch.nn, calls_t))
    parametrize.register_parametrization(e, "weight", _scale(ember.nn, calls_e))
    calls_t.clear()
    calls_e.clear()
    for m in (t, e):
        m.weight
        m.weight
    assert len(calls_e) == len(calls_t) == 2
    with parametrize.cached():
        with parametrize.cached():
            assert e.weight is e.weight
        assert e.weight is e.weight
        with torch.nn.utils.parametrize.cached():
            t.weight
            t.weight
    assert len(calls_e) == len(calls_t) == 3
    assert e.weight is not e.weight and len(calls_e) == 5 and not parametrize._cache


def test_parametrized_module_copies_but_does_not_pickle():
    t, e = _square_pair()
    parametrize.register_parametrization(e, "weight", _symmetric(ember.nn))
    c = copy.deepcopy(e)
    assert type(c) is type(e) and c.parametrizations.weight.original is not e.parametrizations.weight.original
    _close(c.weight, e.weight)
    with pytest.raises(RuntimeError, match="^Serialization of parametrized modules is only supported through "
                                           r"state_dict\(\)"):
        pickle.dumps(e)


def test_transfer_parametrizations_and_params():
    t, e = _square_pair()
    parametrize.register_parametrization(e, "weight", _symmetric(ember.nn))
    target = ember.nn.Linear(4, 4)
    parametrize.transfer_parametrizations_and_params(e, target)
    assert target.parametrizations.weight.original is e.parametrizations.weight.original
    _close(target.weight, e.weight)


def _msg(exc):
    return str(exc.value).replace("torch.", "ember.")


@pytest.mark.parametrize("case", ["missing", "shape", "shape_chained", "right_inverse_type", "not_parametrized",
                                  "p_spectral_norm_name", "p_spectral_norm_dim"])
def test_parametrize_errors_match_torch(case):
    class Transpose:
        def __init__(self, nn):
            self.module = type("Transpose", (nn.Module,), {"forward": lambda self, X: X.T})()

    class BadInverse:
        def __init__(self, nn):
            self.module = type("BadInverse", (nn.Module,), {"forward": lambda self, X: X,
                                                            "right_inverse": lambda self, X: 3})()

    def run(lib):
        m = lib.nn.Linear(3, 2)
        P = lib.nn.utils.parametrize
        if case == "missing":
            P.register_parametrization(m, "nope", _scale(lib.nn))
        elif case == "shape":
            P.register_parametrization(m, "weight", Transpose(lib.nn).module)
        elif case == "shape_chained":
            P.register_parametrization(m, "weight", _scale(lib.nn))
            P.register_parametrization(m, "weight", Transpose(lib.nn).module)
        elif case == "right_inverse_type":
            P.register_parametrization(m, "weight", BadInverse(lib.nn).module)
        elif case == "not_parametrized":
            P.remove_parametrizations(m, "weight")
        elif case == "p_spectral_norm_name":
            lib.nn.utils.parametrizations.spectral_norm(m, name="nope")
        else:
            lib.nn.utils.parametrizations.spectral_norm(m, dim=2)

    with pytest.raises(Exception) as et:
        run(torch)
    with pytest.raises(et.type) as ee:
        run(ember)
    assert _msg(ee) == _msg(et)


# -- orthogonal ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("out_features, in_features", [(4, 4), (6, 3), (3, 6)])
def test_orthogonal_matches_torch(out_features, in_features, orthogonal_map, use_trivialization):
    torch.manual_seed(0)
    t, e = torch.nn.Linear(in_features, out_features), ember.nn.Linear(in_features, out_features)
    e.load_state_dict(_to_ember(t.state_dict()))
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                                 use_trivialization=use_trivialization)
    e.load_state_dict(_to_ember(t.state_dict()))  # the random completion of a rectangular ``base``
    _check_state(e, t)
    opt_t, opt_e = torch.optim.SGD(t.parameters(), lr=0.1), ember.optim.SGD(e.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        opt_t.zero_grad()
        opt_e.zero_grad()
        _forward_backward(t, e, rng.standard_normal((3, in_features)).astype(np.float32))
        opt_t.step()
        opt_e.step()
    _check_state(e, t)
    W = _np(e.weight)
    gram = W.T @ W if out_features >= in_features else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(W.shape)), atol=1e-5)


def test_orthogonal_assignment_and_errors():
    torch.manual_seed(0)
    t, e = torch.nn.Linear(3, 5), ember.nn.Linear(3, 5)
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrizations.orthogonal(m)
    assert type(e.parametrizations.weight[0]).__name__ == "_Orthogonal" and e.parametrizations.weight[0].base.shape \
        == (5, 5)  # householder (the default for a rectangular weight) on an n x n base
    Q = np.linalg.qr(np.random.default_rng(1).standard_normal((5, 3)))[0].astype(np.float32)
    e.weight = ember.tensor(Q)  # an orthogonal Q is kept as it is
    np.testing.assert_allclose(_np(e.weight), Q, atol=1e-6)
    for lib in (torch, ember):
        orthogonal = lib.nn.utils.parametrizations.orthogonal
        with pytest.raises(ValueError, match="^Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.$"):
            orthogonal(lib.nn.Linear(3, 5), "bias")
        with pytest.raises(ValueError, match='^orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                                             "Got: qr$"):
            orthogonal(lib.nn.Linear(3, 5), orthogonal_map="qr")
        m = orthogonal(lib.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(NotImplementedError, match="^It is not possible to assign to the matrix exponential"):
            m.weight = lib.eye(3)


def test_spectral_norm_parametrization_of_a_vector():
    torch.manual_seed(0)
    t, e = torch.nn.Linear(3, 4), ember.nn.Linear(3, 4)
    e.load_state_dict(_to_ember(t.state_dict()))
    for m, lib in ((t, torch), (e, ember)):
        lib.nn.utils.parametrizations.spectral_norm(m, name="bias")
    assert list(e.state_dict()) == list(t.state_dict()) == ["weight", "parametrizations.bias.original"]
    _close(e.bias, t.bias)
    assert abs(np.linalg.norm(_np(e.bias)) - 1) < 1e-6


@pytest.mark.parametrize("name", ["weight_norm", "spectral_norm", "parametrize", "parametrizations"])
def test_docstring_examples(name):
    module = importlib.import_module("ember.nn.utils." + name)
    globs = {"ember": ember, **{k: getattr(module, k) for k in dir(module)}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
