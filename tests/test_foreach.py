"""torch._foreach_* against torch: values, return values, in-place behaviour, autograd and errors."""
import numpy as np
import pytest
import torch

import ember

SHAPES = [(3,), (2, 4), ()]


def _arrays(seed, positive=False):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    return [np.abs(a) + 0.5 for a in out] if positive else out


def _both(arrays, requires_grad=False):
    return ([ember.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


def _close(e, t, **kw):
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6, **kw)


UNARY = ["sqrt", "neg", "abs", "exp", "sign", "reciprocal", "log", "sigmoid", "tanh", "floor", "expm1", "sin"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    e, t = _both(_arrays(0, positive=op in ("sqrt", "log")))
    out_e, out_t = getattr(ember, f"_foreach_{op}")(e), getattr(torch, f"_foreach_{op}")(t)
    assert isinstance(out_e, tuple) and isinstance(out_t, tuple)
    _close(out_e, out_t)
    assert getattr(ember, f"_foreach_{op}_")(e) is e
    getattr(torch, f"_foreach_{op}_")(t)
    _close(e, t)


def _other(kind, seed, lib):
    if kind == "scalar":
        return 1.5
    if kind == "scalars":
        return [0.5, -2.0, 3.0]
    if kind == "tensor":
        return lib.tensor(1.25)
    return [lib.tensor(a) for a in _arrays(seed, positive=True)]


BINARY = [(op, kind) for op in ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow"]
          for kind in ["scalar", "scalars", "list"]] + [(op, "tensor") for op in ["add", "sub", "mul", "div"]]


@pytest.mark.parametrize("op,kind", BINARY)
def test_binary(op, kind):
    positive = op == "pow"
    e, t = _both(_arrays(1, positive))
    oe, ot = _other(kind, 2, ember), _other(kind, 2, torch)
    _close(getattr(ember, f"_foreach_{op}")(e, oe), getattr(torch, f"_foreach_{op}")(t, ot))
    assert getattr(ember, f"_foreach_{op}_")(e, oe) is e
    getattr(torch, f"_foreach_{op}_")(t, ot)
    _close(e, t)


@pytest.mark.parametrize("op,kind", [("add", "list"), ("sub", "list"), ("add", "tensor")])  # torch: no sub.Tensor
def test_alpha(op, kind):
    e, t = _both(_arrays(3))
    oe, ot = _other(kind, 4, ember), _other(kind, 4, torch)
    _close(getattr(ember, f"_foreach_{op}")(e, oe, alpha=-0.3), getattr(torch, f"_foreach_{op}")(t, ot, alpha=-0.3))
    getattr(ember, f"_foreach_{op}_")(e, oe, alpha=2)
    getattr(torch, f"_foreach_{op}_")(t, ot, alpha=2)
    _close(e, t)


def test_pow_scalar_base():
    e, t = _both(_arrays(5))
    _close(ember._foreach_pow(2.0, e), torch._foreach_pow(2.0, t))


@pytest.mark.parametrize("kind", ["scalar", "scalars", "list"])
def test_lerp(kind):
    e, t = _both(_arrays(6))
    ee, te = _both(_arrays(7))
    if kind == "scalar":
        we = wt = 0.3
    elif kind == "scalars":
        we = wt = [0.1, 0.5, 0.9]
    else:
        we, wt = _both(_arrays(8, positive=True))
    _close(ember._foreach_lerp(e, ee, we), torch._foreach_lerp(t, te, wt))
    assert ember._foreach_lerp_(e, ee, we) is e
    torch._foreach_lerp_(t, te, wt)
    _close(e, t)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("kind", ["default", "value", "scalars", "tensor"])
def test_addc(op, kind):
    e, t = _both(_arrays(9))
    e1, t1 = _both(_arrays(10))
    e2, t2 = _both(_arrays(11, positive=True))
    kw_e = kw_t = {}
    if kind == "value":
        kw_e = kw_t = {"value": -0.5}
    elif kind == "scalars":
        kw_e = kw_t = {"value": [0.5, 2.0, -1.0]}
    elif kind == "tensor":
        kw_e, kw_t = {"value": ember.tensor([0.5, 2.0, -1.0])}, {"value": torch.tensor([0.5, 2.0, -1.0])}
    args_t = (t, t1, t2, kw_t["value"]) if kw_t else (t, t1, t2)
    _close(getattr(ember, f"_foreach_{op}")(e, e1, e2, **kw_e), getattr(torch, f"_foreach_{op}")(*args_t))
    assert getattr(ember, f"_foreach_{op}_")(e, e1, e2, **kw_e) is e
    getattr(torch, f"_foreach_{op}_")(*args_t)
    _close(e, t)


@pytest.mark.parametrize("ord", [2, 1, float("inf")])
def test_norm(ord):
    e, t = _both(_arrays(12))
    _close(ember._foreach_norm(e, ord), torch._foreach_norm(t, ord))
    out = ember._foreach_norm(e, dtype=ember.float64)
    assert all(o.dtype == ember.float64 for o in out)


def test_zero_and_copy():
    e, t = _both(_arrays(13))
    se, st = _both(_arrays(14))
    assert ember._foreach_copy_(e, se) is e
    torch._foreach_copy_(t, st)
    _close(e, t)
    assert ember._foreach_zero_(e) is e
    assert all((x == 0).all() for x in e)


def test_tuple_in_place_returns_self():
    e = tuple(ember.tensor(a) for a in _arrays(15))
    assert ember._foreach_mul_(e, 2.0) is e


def test_autograd():
    e, t = _both(_arrays(16), requires_grad=True)
    o_e, o_t = _both(_arrays(17, positive=True), requires_grad=True)
    ge, gt = _both(_arrays(18))
    outs_e = ember._foreach_lerp(ember._foreach_mul(e, o_e), ember._foreach_sqrt(o_e), 0.3)
    outs_e = ember._foreach_add(outs_e, ember._foreach_norm(e)[0], alpha=2)
    outs_t = torch._foreach_lerp(torch._foreach_mul(t, o_t), torch._foreach_sqrt(o_t), 0.3)
    outs_t = [o + 2 * torch.linalg.vector_norm(t[0]) for o in outs_t]  # torch's _foreach_add.Tensor backward fails
    _close(outs_e, outs_t)
    ember.autograd.backward(list(outs_e), ge)
    torch.autograd.backward(list(outs_t), gt)
    _close([x.grad for x in e + o_e], [x.grad for x in t + o_t])


def test_in_place_on_leaf_raises():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ember._foreach_add_([x], 1.0)


def test_in_place_no_grad_on_params():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        ember._foreach_mul_([x], 3.0)
    assert x.tolist() == [3.0, 3.0]


def test_errors_match_torch():
    e, t = _both(_arrays(19))
    cases = [lambda lib, xs: getattr(lib, "_foreach_add")(xs, [lib.ones(3)]),
             lambda lib, xs: getattr(lib, "_foreach_mul")(xs, [1.0]),
             lambda lib, xs: getattr(lib, "_foreach_add")([], 1.0),
             lambda lib, xs: getattr(lib, "_foreach_add")(xs, lib.ones(2)),
             lambda lib, xs: getattr(lib, "_foreach_lerp_")(xs, xs[:1], 0.5),
             lambda lib, xs: getattr(lib, "_foreach_addcmul")(xs, xs, xs, [1.0])]
    for case in cases:
        with pytest.raises(RuntimeError) as te:
            case(torch, t)
        with pytest.raises(RuntimeError) as ee:
            case(ember, e)
        assert str(ee.value) == str(te.value)
    with pytest.raises(TypeError, match="tuple of Tensors"):
        ember._foreach_sqrt(ember.ones(2))


def test_docstrings_and_names():
    for name in ember._foreach.__all__:
        fn = getattr(ember, name)
        assert fn.__name__ == name and fn.__doc__.startswith(name)
        assert hasattr(torch, name), name
