"""Forward mode (autograd.forward_ad, func.jvp/linearize/jacfwd, autograd.functional's forward-mode paths) against
torch's forward-mode results."""
import numpy as np
import pytest
import torch

import ember

from .common import assert_same, data, same, same_error

X, Y, V, W = data(3, seed=1), data(3, seed=2), data(3, seed=3), data(3, seed=4)


def _plain(tree):
    """``tree`` with each dict as a list of (key, value) pairs, which ``assert_same`` compares."""
    if isinstance(tree, dict):
        return [(k, _plain(v)) for k, v in tree.items()]
    return type(tree)(map(_plain, tree)) if type(tree) in (tuple, list) else tree


def _net(m, dtype):
    """A conv -> layer_norm -> linear -> softmax net; ember's copies torch's weights."""
    torch.manual_seed(0)
    conv, ln, lin = torch.nn.Conv2d(2, 3, 3), torch.nn.LayerNorm([3, 3]), torch.nn.Linear(27, 4)
    mods = [mod.to(getattr(torch, dtype)) for mod in (conv, ln, lin)]
    if m is ember:
        mine = [ember.nn.Conv2d(2, 3, 3), ember.nn.LayerNorm([3, 3]), ember.nn.Linear(27, 4)]
        for e, t in zip(mine, mods):
            e.to(getattr(ember, dtype)).load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
        mods = mine
    conv, ln, lin = mods

    def f(x):
        h = ln(m.nn.functional.gelu(conv(x)))
        return lin(h.reshape(x.shape[0], -1)).softmax(-1)
    return f


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
def test_dual_through_nn_layers(dtype, tol):
    x, v, t = data(2, 2, 5, 5, seed=5, dtype=dtype), data(2, 2, 5, 5, seed=6, dtype=dtype), data(2, 4, seed=7,
                                                                                                  dtype=dtype)

    def run(m):
        fwad, f = m.autograd.forward_ad, _net(m, dtype)
        with fwad.dual_level():
            out = f(fwad.make_dual(m.tensor(x), m.tensor(v)))
            loss = m.nn.functional.mse_loss(out, m.tensor(t))
            unpacked = [fwad.unpack_dual(y) for y in (out, loss, (out @ out.T).sum(0).exp())]
            assert all(u.tangent.requires_grad for u in unpacked)  # the weights require grad
            return [u for pair in unpacked for u in pair]
    same(run, rtol=tol, atol=tol)


def test_unpack_dual_cases():
    def run(m):
        fwad = m.autograd.forward_ad
        x, v = m.tensor(X), m.tensor(V)
        with fwad.dual_level() as level:
            d, e = fwad.make_dual(x, v), fwad.make_dual(m.tensor(Y), m.tensor(W))
            assert level == 0 and isinstance(fwad.unpack_dual(d), fwad.UnpackedDualTensor)
            assert fwad.unpack_dual(d).tangent is v and fwad.unpack_dual(x).tangent is None
            both = fwad.unpack_dual(d.sin() * e + d.cumsum(0))  # two duals: J_1 v_1 + J_2 v_2
            assert not both.primal.requires_grad
            results = [both, fwad.unpack_dual(d.sign()), fwad.unpack_dual(e * 0 + x)]
            results += [fwad.unpack_dual(t).tangent for t in (d.argmax(), d.detach(), x * 2)]  # None
            y = (d @ d) * d
        results.append(fwad.unpack_dual(y).tangent)  # the level dropped its duals
        return results
    same(run, rtol=1e-12)


def test_tangents_mix_with_reverse_mode():
    def run(m):
        fwad = m.autograd.forward_ad
        x, v = m.tensor(X, requires_grad=True), m.tensor(V, requires_grad=True)
        with fwad.dual_level():
            d = fwad.make_dual(x, v)
            primal, tangent = fwad.unpack_dual((d ** 3).sum() + (d.exp() * m.tensor(Y)).sum())
        assert primal.requires_grad and tangent.requires_grad
        (tangent * 2 + primal).backward()
        return primal, tangent, x.grad, v.grad
    same(run, rtol=1e-12)


def test_dual_level_decorator_and_errors():
    def run(m):
        fwad = m.autograd.forward_ad

        @fwad.dual_level()
        def jvp_of_tanh(x, v):
            return fwad.unpack_dual(fwad.make_dual(x, v).tanh()).tangent
        return jvp_of_tanh(m.tensor(X), m.tensor(V))
    same(run, rtol=1e-12)

    def in_level(body):
        def run(m):
            with m.autograd.forward_ad.dual_level():
                body(m, m.autograd.forward_ad)
        return run
    same_error(lambda m: m.autograd.forward_ad.make_dual(m.tensor(X), m.tensor(V)))
    same_error(lambda m: m.autograd.forward_ad.exit_dual_level())
    same_error(in_level(lambda m, f: f.enter_dual_level()))
    same_error(in_level(lambda m, f: f.exit_dual_level(level=3)))
    same_error(in_level(lambda m, f: f.make_dual(m.tensor(X), m.tensor(V[:2]))))
    same_error(in_level(lambda m, f: f.make_dual(m.tensor([1, 2]), m.tensor([1.0, 2.0]))))
    same_error(in_level(lambda m, f: f.make_dual(m.tensor(X), m.tensor([1, 2, 3]))))
    same_error(in_level(lambda m, f: f.make_dual(f.make_dual(m.tensor(X), m.tensor(V)) * 2, m.tensor(V))))


def test_make_dual_needs_grad_mode():
    """ember records forward gradients in the autograd graph, so it refuses duals that no graph would follow."""
    fwad = ember.autograd.forward_ad
    with fwad.dual_level(), ember.no_grad(), pytest.raises(RuntimeError, match="no_grad"):
        fwad.make_dual(ember.tensor(X), ember.tensor(V))
    with fwad.dual_level() as level:
        d = fwad.make_dual(ember.tensor(X), ember.tensor(V), level=level)
        assert_same(fwad.unpack_dual(d.exp(), level=level).tangent, torch.tensor(np.exp(X) * V))
    assert fwad.unpack_dual(d.exp(), level=0).tangent is None


# -- torch.func ------------------------------------------------------------------------------------------------------
def _two(m, x, y):
    return (x.sin() * y, {"s": (x * y.exp()).sum()})


def test_func_jvp():
    same(lambda m: _plain(m.func.jvp(lambda x, y: _two(m, x, y), (m.tensor(X), m.tensor(Y)),
                                     (m.tensor(V), m.tensor(W)))), rtol=1e-12)
    same(lambda m: m.func.jvp(lambda p: (p["a"] @ p["b"]).tanh(), ({"a": m.tensor(X), "b": m.tensor(Y)},),
                              ({"a": m.tensor(V), "b": m.tensor(W)},))[1], rtol=1e-12)
    same(lambda m: m.func.jvp(lambda x: (x.exp(), x.argmax()), (m.tensor(X),), (m.tensor(V),), has_aux=True),
         rtol=1e-12)
    same(lambda m: m.func.jvp(lambda x: x.round().long(), (m.tensor(X),), (m.tensor(V),)))


def test_func_jvp_errors():
    x, v = (lambda m: m.tensor(X)), (lambda m: m.tensor(V))
    same_error(lambda m: m.func.jvp(m.sin, [x(m)], (v(m),)))
    same_error(lambda m: m.func.jvp(m.mul, (x(m), x(m)), (v(m),)), match="Expected primals and tangents to have the "
                                                                           "same python structure")
    same_error(lambda m: m.func.jvp(m.sin, (x(m),), (v(m)[:2],)))
    same_error(lambda m: m.func.jvp(m.sin, (x(m).long(),), (v(m),)))
    same_error(lambda m: m.func.jvp(lambda x: 3, (x(m),), (v(m),)))
    same_error(lambda m: m.func.jvp(m.sin, (x(m),), (v(m),), has_aux=True))


def test_linearize():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        out, jvp_fn = m.func.linearize(lambda x, y: _two(m, x, y), x, m.tensor(Y))
        first, second = jvp_fn(m.tensor(V), m.tensor(W)), jvp_fn(m.tensor(W), m.tensor(V))
        assert first[0].requires_grad  # x requires grad
        return _plain((out, first, second))
    same(run, rtol=1e-12)
    same_error(lambda m: m.func.linearize(m.sin, m.tensor(X))[1](m.tensor(V[:2])))
    same_error(lambda m: m.func.linearize(m.sin, m.tensor(X))[1](m.tensor(V).float()))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacfwd(argnums):
    def f(x, y):
        return x.sin() * y, (x.reshape(3, 1) @ y.reshape(1, 3)).sum(0, keepdim=True)
    same(lambda m: m.func.jacfwd(f, argnums)(m.tensor(X), m.tensor(Y)), rtol=1e-12)
    same(lambda m: _plain(m.func.jacfwd(lambda x, y: (f(x, y)[0], {"aux": x.sum()}), argnums, has_aux=True)(
        m.tensor(X), m.tensor(Y))), rtol=1e-12)


def test_jacfwd_randomness_and_dtypes():
    same_error(lambda m: m.func.jacfwd(lambda x: x + m.rand(3))(m.tensor(X)))
    same_error(lambda m: m.func.jacfwd(lambda x: x, randomness="sometimes")(m.tensor(X)))
    same_error(lambda m: m.func.jacfwd(m.sin)(m.tensor([1, 2])))
    e = ember.func.jacfwd(lambda x: x * 2 + ember.rand(3), randomness="same")(ember.tensor(X))
    assert_same(e, torch.eye(3, dtype=torch.float64) * 2)
    same(lambda m: m.func.jacfwd(lambda x: x.long())(m.tensor(X)))


def test_transforms_nest():
    same(lambda m: m.func.hessian(lambda x: (x.sin() * x).sum() * x.prod())(m.tensor(X)), rtol=1e-10)
    same(lambda m: m.func.jvp(m.func.grad(lambda x: (x.exp() * x).sum()), (m.tensor(X),), (m.tensor(V),)),
         rtol=1e-12)
    same(lambda m: m.func.grad(lambda x: m.func.jvp(m.tanh, (x,), (m.tensor(V),))[1].sum())(m.tensor(X)),
         rtol=1e-12)
    same(lambda m: m.func.jvp(lambda x: m.func.jvp(m.sin, (x,), (m.tensor(V),))[1], (m.tensor(X),),
                              (m.tensor(W),)), rtol=1e-12)
    same(lambda m: m.func.jacfwd(m.func.jacfwd(lambda x: x.exp() * x.sum()))(m.tensor(X)), rtol=1e-12)


# -- autograd.functional ---------------------------------------------------------------------------------------------
def _f(x, y):
    return (x * y).sin(), x.exp().sum() * y


def test_functional_jacobian_forward_mode():
    same(lambda m: m.autograd.functional.jacobian(_f, (m.tensor(X), m.tensor(Y)), vectorize=True,
                                                  strategy="forward-mode"), rtol=1e-12)
    same(lambda m: m.autograd.functional.jacobian(lambda x: x.exp() * x.sum(), m.tensor(X), vectorize=True,
                                                  strategy="forward-mode"), rtol=1e-12)
    same(lambda m: m.autograd.functional.hessian(lambda x, y: (x.sin() * y ** 2).sum(), (m.tensor(X), m.tensor(Y)),
                                                 vectorize=True, outer_jacobian_strategy="forward-mode"), rtol=1e-10)
    same(lambda m: m.autograd.functional.hessian(lambda x: (x.sin() * x).sum(), m.tensor(X), vectorize=True,
                                                 outer_jacobian_strategy="forward-mode"), rtol=1e-10)
    same_error(lambda m: m.autograd.functional.jacobian(m.sin, m.tensor(X), strategy="forward-mode"),
               match="forward-AD")
    for kwargs in [dict(strategy="forward-mode", vectorize=True, create_graph=True),
                   dict(strategy="forward-mode", vectorize=True, strict=True), dict(strict=True, vectorize=True),
                   dict(strategy="sideways")]:
        same_error(lambda m: m.autograd.functional.jacobian(m.sin, m.tensor(X), **kwargs))


def test_functional_jvp_hvp_vhp_checks():
    fn = ember.autograd.functional
    same(lambda m: m.autograd.functional.hvp(lambda x, y: (x.sin() * y ** 3).sum(), (m.tensor(X), m.tensor(Y)),
                                             (m.tensor(V), m.tensor(W))), rtol=1e-12)
    for name in ["jvp", "hvp", "vhp", "vjp"]:
        same_error(lambda m: getattr(m.autograd.functional, name)(lambda x: (x * x).sum(), m.tensor(X),
                                                                  m.tensor(V[:2])))
        same_error(lambda m: getattr(m.autograd.functional, name)(lambda x, y: (x * y).sum(),
                                                                  (m.tensor(X), m.tensor(Y)), (m.tensor(V),)))
    for name in ["hvp", "vhp"]:
        same_error(lambda m: getattr(m.autograd.functional, name)(lambda x: (x * 2).sum(), m.tensor(X), m.tensor(V),
                                                                  strict=True))
        same_error(lambda m: getattr(m.autograd.functional, name)(lambda x: x * 2, m.tensor(X), m.tensor(V)))
    same_error(lambda m: m.autograd.functional.jvp(lambda x, y: x * 2, (m.tensor(X), m.tensor(Y)),
                                                   (m.tensor(V), m.tensor(W)), strict=True))
    same_error(lambda m: m.autograd.functional.jvp(lambda x: x.detach(), m.tensor(X), m.tensor(V), strict=True))
    same_error(lambda m: m.autograd.functional.jvp(m.sin, m.tensor(X), (m.tensor(V), m.tensor(V))))
    assert np.allclose(fn.jvp(ember.sin, ember.tensor(X), ember.tensor(V))[1].numpy(), np.cos(X) * V)
