"""ember.func (functional_call, grad, vjp, jacrev, hessian, vmap) against torch.func."""
import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef


def _t(x, lib, requires_grad=False):
    return lib.tensor(np.asarray(x, dtype=np.float64), requires_grad=requires_grad)


def _close(a, b, tol=1e-10):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _close(a[k], b[k], tol)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
X, Y, W = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((3, 4))


def f_scalar(lib):
    return lambda x, y: (lib.sin(x) * y).sum() + (x ** 3).sum()


def f_vec(lib):
    return lambda x, w: lib.tanh(w @ x)


# -- models -----------------------------------------------------------------------------------------------------------
def _models(bn=False):
    torch.manual_seed(0)
    layers_t = [torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3)]
    layers_e = [ember.nn.Linear(4, 5), ember.nn.ReLU(), ember.nn.Linear(5, 3)]
    if bn:
        layers_t.insert(1, torch.nn.BatchNorm1d(5))
        layers_e.insert(1, ember.nn.BatchNorm1d(5))
    mt, me = torch.nn.Sequential(*layers_t).double(), ember.nn.Sequential(*layers_e).double()
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    return mt, me


def test_functional_call_grads_flow_and_module_restored():
    mt, me = _models()
    pt = {k: torch.randn_like(v).requires_grad_() for k, v in mt.named_parameters()}
    pe = {k: ember.tensor(v.detach().numpy(), requires_grad=True) for k, v in pt.items()}
    x = RNG.standard_normal((6, 4))
    out_t = tf.functional_call(mt, pt, (torch.tensor(x),))
    out_e = ef.functional_call(me, pe, (ember.tensor(x),))
    _close(out_e, out_t)
    g = RNG.standard_normal(out_t.shape)
    out_t.backward(torch.tensor(g))
    out_e.backward(ember.tensor(g))
    for k in pt:
        _close(pe[k].grad, pt[k].grad)
    assert all(p.grad is None for p in me.parameters())
    assert me[0].weight is dict(me.named_parameters())["0.weight"] and isinstance(me[0].weight, ember.nn.Parameter)
    _close(me(ember.tensor(x)), mt(torch.tensor(x)))


def test_functional_call_restores_on_error():
    _, me = _models()
    w = me[0].weight
    with pytest.raises(RuntimeError):
        ef.functional_call(me, {"0.weight": ember.zeros(5, 4, dtype=ember.float64)}, (ember.zeros(2, 7),))
    assert me[0].weight is w


def test_functional_call_dicts_strict_and_ties():
    mt, me = _models(bn=True)
    params = {k: v.detach() for k, v in me.named_parameters()}
    buffers = {k: v.detach().clone() for k, v in me.named_buffers()}
    x = ember.tensor(RNG.standard_normal((6, 4)))
    out = ef.functional_call(me, (params, buffers), x)
    assert buffers["1.num_batches_tracked"].item() == 1 and me[1].num_batches_tracked.item() == 0
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        ef.functional_call(me, (params, params), x)
    with pytest.raises(RuntimeError, match="Missing key"):
        ef.functional_call(me, params, x, strict=True)
    assert out.shape == (6, 3)
    lin = ember.nn.Linear(2, 2)
    tied = ember.nn.ModuleDict({"a": lin, "b": lin})
    assert len(list(tied.named_parameters(remove_duplicate=False))) == 4
    t = ember.nn.Module()
    t.a, t.b = ember.nn.Linear(2, 2, bias=False), ember.nn.Linear(2, 2, bias=False)
    t.b.weight = t.a.weight
    t.forward = lambda x: t.b(t.a(x))
    w = ember.eye(2) * 2
    assert ef.functional_call(t, {"a.weight": w}, ember.ones(1, 2)).tolist() == [[4.0, 4.0]]
    with pytest.raises(ValueError, match="tied"):
        ef.functional_call(t, {"a.weight": w, "b.weight": w * 1}, ember.ones(1, 2))
    with pytest.warns(FutureWarning):
        ember.nn.utils.stateless.functional_call(t, {"a.weight": w}, ember.ones(1, 2))


# -- grad, vjp, jacrev, hessian -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_and_value(argnums):
    ge, ve = ef.grad_and_value(f_scalar(ember), argnums=argnums)(_t(X, ember), _t(Y, ember))
    gt, vt = tf.grad_and_value(f_scalar(torch), argnums=argnums)(_t(X, torch), _t(Y, torch))
    _close(ge, gt)
    _close(ve, vt)
    assert not ve.requires_grad and not (ge[0] if isinstance(ge, tuple) else ge).requires_grad


def test_grad_has_aux_and_pytree():
    def f(lib):
        return lambda p, x: ((p["w"] @ x).pow(2).sum() + p["b"] ** 2, {"n": x.sum()})
    pe, pt = {"w": _t(W, ember), "b": _t(1.5, ember)}, {"w": _t(W, torch), "b": _t(1.5, torch)}
    ge, aux_e = ef.grad(f(ember), has_aux=True)(pe, _t(X, ember))
    gt, aux_t = tf.grad(f(torch), has_aux=True)(pt, _t(X, torch))
    _close(ge, gt)
    _close(aux_e["n"], aux_t["n"])


def test_grad_nested_and_with_outer_autograd():
    f = lambda lib: lambda x: (x ** 4).sum()  # noqa: E731
    _close(ef.grad(lambda x: ef.grad(f(ember))(x).sum())(_t(X, ember)),
           tf.grad(lambda x: tf.grad(f(torch))(x).sum())(_t(X, torch)))
    xe, xt = _t(X, ember, True), _t(X, torch, True)
    ge, gt = ef.grad(f(ember))(xe), tf.grad(f(torch))(xt)
    assert ge.requires_grad and gt.requires_grad
    ge.sum().backward()
    gt.sum().backward()
    _close(xe.grad, xt.grad)
    # a closed-over tensor that requires grad keeps its graph too
    we, wt = _t(2.0, ember, True), _t(2.0, torch, True)
    ef.grad(lambda x: (we * x ** 2).sum())(_t(X, ember)).sum().backward()
    tf.grad(lambda x: (wt * x ** 2).sum())(_t(X, torch)).sum().backward()
    _close(we.grad, wt.grad)


def test_grad_errors():
    for fn, msg in [(lambda x: x, "scalar Tensor"), (lambda x: 1.0, "return a Tensor")]:
        with pytest.raises(RuntimeError, match=msg):
            ef.grad(fn)(ember.ones(3))
    with pytest.raises(RuntimeError, match="Got argnum=1, but only 1 positional inputs"):
        ef.grad(lambda x: x.sum(), argnums=1)(ember.ones(3))
    with pytest.raises(RuntimeError, match="argnums must be int"):
        ef.grad(lambda x: x.sum(), argnums="a")(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"should be a tuple: \(output, aux\)"):
        ef.grad(lambda x: x.sum(), has_aux=True)(ember.ones(3))
    assert ef.grad(lambda x: ember.ones(()))(ember.ones(3)).tolist() == [0.0] * 3


def test_vjp():
    fe = lambda x, w: (ember.tanh(w @ x), (x * x).sum())  # noqa: E731
    ft = lambda x, w: (torch.tanh(w @ x), (x * x).sum())  # noqa: E731
    oe, vjp_e = ef.vjp(fe, _t(X, ember), _t(W, ember))
    ot, vjp_t = tf.vjp(ft, _t(X, torch), _t(W, torch))
    _close(oe, ot)
    ct = RNG.standard_normal(3)
    _close(vjp_e((_t(ct, ember), _t(0.7, ember))), vjp_t((_t(ct, torch), _t(0.7, torch))))
    _close(vjp_e((_t(ct, ember), _t(0.7, ember))), vjp_t((_t(ct, torch), _t(0.7, torch))))  # callable again
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_e(_t(ct, ember))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev_and_jacfwd(argnums):
    for e_tr, t_tr in [(ef.jacrev, tf.jacrev), (ef.jacfwd, tf.jacfwd)]:
        _close(e_tr(f_vec(ember), argnums=argnums)(_t(X, ember), _t(W, ember)),
               t_tr(f_vec(torch), argnums=argnums)(_t(X, torch), _t(W, torch)))


def test_jacrev_pytree_outputs():
    fe = lambda x: {"a": x.sin(), "b": (x ** 2).sum()}  # noqa: E731
    ft = lambda x: {"a": x.sin(), "b": (x ** 2).sum()}  # noqa: E731
    _close(ef.jacrev(fe)(_t(X, ember)), tf.jacrev(ft)(_t(X, torch)))


def test_hessian():
    _close(ef.hessian(f_scalar(ember))(_t(X, ember), _t(Y, ember)),
           tf.hessian(f_scalar(torch))(_t(X, torch), _t(Y, torch)))
    _close(ef.hessian(f_scalar(ember), argnums=(0, 1))(_t(X, ember), _t(Y, ember)),
           tf.hessian(f_scalar(torch), argnums=(0, 1))(_t(X, torch), _t(Y, torch)))


# -- vmap -------------------------------------------------------------------------------------------------------------
A, B = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 5))


@pytest.mark.parametrize("in_dims,out_dims,b", [(0, 0, A), ((0, 1), 0, B), ((0, None), (1, 0), A[0]),
                                                 ((-2, -1), -1, B)])
def test_vmap_dims(in_dims, out_dims, b):
    fn = lambda lib: lambda x, y: (lib.outer(x, y), lib.dot(x, y))  # noqa: E731
    _close(ember.vmap(fn(ember), in_dims, out_dims)(_t(A, ember), _t(b, ember)),
           torch.vmap(fn(torch), in_dims, out_dims)(_t(A, torch), _t(b, torch)))


def test_vmap_nested_and_pytrees():
    fn = lambda lib: lambda d, y: lib.dot(d["x"], y)  # noqa: E731
    e = ef.vmap(ef.vmap(fn(ember), in_dims=(None, 0)), in_dims=({"x": 0}, None))({"x": _t(A, ember)}, _t(B.T, ember))
    t = tf.vmap(tf.vmap(fn(torch), in_dims=(None, 0)), in_dims=({"x": 0}, None))({"x": _t(A, torch)}, _t(B.T, torch))
    _close(e, t)
    _close(ember.vmap(lambda x: x, out_dims=(0,))(_t(A, ember)), torch.vmap(lambda x: x, out_dims=(0,))(_t(A, torch)))
    _close(ember.vmap(lambda x: x.sum())(ember.zeros(0, 3)), torch.vmap(lambda x: x.sum())(torch.zeros(0, 3)))


def test_vmap_errors_match_torch():
    cases = [lambda lib: lib.vmap(lambda x, y: x * y)(lib.ones(3), lib.ones(4)),
             lambda lib: lib.vmap(lambda x, y: x * y, in_dims=(None, None))(lib.ones(3), lib.ones(4)),
             lambda lib: lib.vmap(lambda x, y: x * y, in_dims=(0, 2))(lib.ones(3), lib.ones(3)),
             lambda lib: lib.vmap(lambda x, y: x * y, in_dims=(0, 0))(lib.ones(3), 2.0),
             lambda lib: lib.vmap(lambda x: x, in_dims=[0])(lib.ones(3)),
             lambda lib: lib.vmap(lambda x: 1.0)(lib.ones(3)),
             lambda lib: lib.vmap(lambda x: x, chunk_size=0)(lib.ones(3)),
             lambda lib: lib.vmap(lambda x: x)()]
    for case in cases:
        with pytest.raises(ValueError) as te:
            case(torch)
        with pytest.raises(ValueError) as ee:
            case(ember)
        assert str(ee.value) == str(te.value)
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        ember.vmap(lambda x, y: x, in_dims=(0,))(ember.ones(3), ember.ones(3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ember.vmap(lambda x: x + ember.rand(()))(ember.ones(3))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ember.vmap(lambda x: x, randomness="foo")


def test_vmap_randomness():
    same = ember.vmap(lambda x: x + ember.rand(()), randomness="same")(ember.zeros(4))
    assert len(set(same.tolist())) == 1
    diff = ember.vmap(lambda x: x + ember.rand(()), randomness="different")(ember.zeros(4))
    assert len(set(diff.tolist())) == 4


def test_per_sample_grads():
    mt, me = _models()
    x, y = RNG.standard_normal((8, 4)), RNG.integers(0, 3, 8)

    def loss(lib, model, F):
        def f(params, xi, yi):
            out = tf.functional_call(model, params, (xi[None],)) if lib is torch else \
                ef.functional_call(model, params, (xi[None],))
            return F.cross_entropy(out, yi[None])
        return f
    pt = {k: v.detach() for k, v in mt.named_parameters()}
    pe = {k: v.detach() for k, v in me.named_parameters()}
    gt = tf.vmap(tf.grad(loss(torch, mt, torch.nn.functional)), in_dims=(None, 0, 0))(
        pt, torch.tensor(x), torch.tensor(y))
    ge = ef.vmap(ef.grad(loss(ember, me, ember.nn.functional)), in_dims=(None, 0, 0))(
        pe, ember.tensor(x), ember.tensor(y))
    _close(ge, gt)
    assert not any(g.requires_grad for g in ge.values())


def test_stack_module_state_ensemble():
    models_t = [torch.nn.Linear(4, 2).double() for _ in range(3)]
    models_e = [ember.nn.Linear(4, 2).double() for _ in range(3)]
    for me, mt in zip(models_e, models_t):
        me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    pt, bt = tf.stack_module_state(models_t)
    pe, be = ef.stack_module_state(models_e)
    assert pe["weight"].shape == (3, 2, 4) and pe["weight"].is_leaf and pe["weight"].requires_grad
    base_t, base_e = models_t[0], models_e[0]
    out_t = tf.vmap(lambda p, b, x: tf.functional_call(base_t, (p, b), (x,)), in_dims=(0, 0, None))(
        pt, bt, _t(X, torch))
    out_e = ef.vmap(lambda p, b, x: ef.functional_call(base_e, (p, b), (x,)), in_dims=(0, 0, None))(
        pe, be, _t(X, ember))
    _close(out_e, out_t)
