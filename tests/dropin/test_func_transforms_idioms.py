"""Function-transform idioms of research code (per-sample gradients, ensembling, NTK, MAML, vmap over nn.functional,
jacobians and hessians, functionalize) against torch."""
import copy

import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)
RNG = np.random.default_rng(0)


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for c in x for leaf in _leaves(c)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    return [x]


def _close(e, t, rtol=1e-5, atol=1e-6):
    le, lt = _leaves(e), _leaves(t)
    assert len(le) == len(lt)
    for a, b in zip(le, lt):
        if not isinstance(b, torch.Tensor):
            assert a == b
            continue
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype).replace("torch", "ember")
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _copy(ref, m):
    m.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return m


def _both(fn, rtol=1e-5, atol=1e-6):
    _close(fn(ember), fn(torch), rtol, atol)


def _raise_alike(fn, exc=RuntimeError):
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(exc) as ee:
        fn(ember)
    return str(ee.value), str(te.value)


# -- per-sample gradients and ensembles ------------------------------------------------------------------------------
def _cnn(lib):
    nn, F = lib.nn, lib.nn.functional

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.norm = nn.GroupNorm(2, 4)
            self.fc = nn.Linear(36, 10)

        def forward(self, x):
            x = F.max_pool2d(self.norm(F.relu(self.conv(x))), 2)
            return F.log_softmax(self.fc(lib.flatten(x, 1)), dim=1)
    return CNN()


def test_per_sample_grads_of_a_cnn_with_buffers_chunks_and_aux():
    torch.manual_seed(0)
    ref = _cnn(torch)
    models = {torch: ref, ember: _copy(ref, _cnn(ember))}
    x, y = RNG.standard_normal((6, 1, 8, 8)).astype(np.float32), RNG.integers(0, 10, 6)
    res = []
    for lib in LIBS:
        m, F = models[lib], lib.func
        params = {k: v.detach() for k, v in m.named_parameters()}
        buffers = {k: v.detach() for k, v in m.named_buffers()}

        def loss(params, buffers, sample, target):
            pred = F.functional_call(m, (params, buffers), (sample.unsqueeze(0),))
            return lib.nn.functional.nll_loss(pred, target.unsqueeze(0)), pred.argmax()
        per_sample = F.vmap(F.grad(loss, has_aux=True), in_dims=(None, None, 0, 0))(
            params, buffers, lib.tensor(x), lib.tensor(y))
        chunked = F.vmap(F.grad_and_value(loss, has_aux=True), in_dims=(None, None, 0, 0), chunk_size=4)(
            params, buffers, lib.tensor(x), lib.tensor(y))
        assert not any(g.requires_grad for g in per_sample[0].values())
        res.append((per_sample, chunked))
    _close(*res)
    # the mean of per-sample gradients is the batch gradient
    batch = ember.func.grad(lambda p: ember.nn.functional.nll_loss(
        ember.func.functional_call(models[ember], p, (ember.tensor(x),)), ember.tensor(y)))(
        {k: v.detach() for k, v in models[ember].named_parameters()})
    for k, g in batch.items():
        np.testing.assert_allclose(res[0][0][0][k].mean(0).numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_model_ensembling_with_stack_module_state_on_a_meta_base():
    torch.manual_seed(1)
    refs = [torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3)) for _ in range(4)]
    x = np.arange(200, dtype=np.float32).reshape(4, 10, 5) / 100
    res = []
    for lib in LIBS:
        ms = refs if lib is torch else [_copy(r, ember.nn.Sequential(ember.nn.Linear(5, 7), ember.nn.ReLU(),
                                                                     ember.nn.Linear(7, 3))) for r in refs]
        params, buffers = lib.func.stack_module_state(ms)
        base = copy.deepcopy(ms[0]).to("meta")

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))
        per_model = lib.vmap(fmodel)(params, buffers, lib.tensor(x))
        shared = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, lib.tensor(x[0]))
        (per_model.sum() + shared.pow(2).sum()).backward()
        res.append((per_model, shared, params["0.weight"].grad, params["2.bias"].grad))
    _close(*res)


def test_maml_vmap_of_inner_grad_steps_then_outer_backward():
    torch.manual_seed(2)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    xs = RNG.standard_normal((5, 2, 3))
    res = []
    for lib in LIBS:
        net = ref if lib is torch else _copy(ref, ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(),
                                                                      ember.nn.Linear(4, 2)).double())
        F = lib.func
        params = {k: v.detach().clone().requires_grad_() for k, v in net.named_parameters()}

        def loss(p, x):
            return F.functional_call(net, p, (x,)).pow(2).mean()

        def task(x):
            g = F.grad(loss)(params, x)
            return loss({k: params[k] - 0.1 * g[k] for k in params}, x)
        losses = F.vmap(task)(lib.tensor(xs))
        losses.sum().backward()
        res.append((losses, {k: v.grad for k, v in params.items()}))
    _close(*res, rtol=1e-10, atol=1e-12)


def test_empirical_ntk_by_jacobians_and_by_vjp_jvp():
    torch.manual_seed(3)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    x = RNG.standard_normal((4, 3))
    res = []
    for lib in LIBS:
        net = ref if lib is torch else _copy(ref, ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(),
                                                                      ember.nn.Linear(4, 2)).double())
        F = lib.func
        params = {k: v.detach() for k, v in net.named_parameters()}

        def f(params, x):
            return F.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)
        x1, x2 = lib.tensor(x), lib.tensor(x[:3])
        j1 = [j.flatten(2) for j in F.vmap(F.jacrev(f), (None, 0))(params, x1).values()]
        j2 = [j.flatten(2) for j in F.vmap(F.jacrev(f), (None, 0))(params, x2).values()]
        ntk = lib.stack([lib.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(j1, j2)]).sum(0)

        def ntk_vp(a, b):
            out, vjp_fn = F.vjp(lambda p: f(p, a), params)
            basis = lib.eye(out.numel(), dtype=out.dtype)
            return F.vmap(lambda v: F.jvp(lambda p: f(p, b), (params,), vjp_fn(v))[1])(basis)
        res.append((ntk, F.vmap(F.vmap(ntk_vp, (None, 0)), (0, None))(x1, x2)))
    _close(*res, rtol=1e-10, atol=1e-12)
    _close(res[0][0], res[1][1], rtol=1e-10, atol=1e-12)


# -- vmap over ops ---------------------------------------------------------------------------------------------------
A = RNG.standard_normal((4, 3, 5)).astype(np.float32)
W, BIAS = RNG.standard_normal((6, 5)).astype(np.float32), RNG.standard_normal(6).astype(np.float32)
IMG, KER = RNG.standard_normal((3, 2, 2, 6, 6)).astype(np.float32), RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
IDX, EMB = RNG.integers(0, 10, (4, 7)), RNG.standard_normal((10, 5)).astype(np.float32)
LABELS, ROWS, COLS = RNG.integers(0, 5, (4, 3)), RNG.integers(0, 3, (4, 2)), RNG.integers(0, 5, (4, 3, 2))
T = lambda lib, a: lib.tensor(a)  # noqa: E731

VMAP_CASES = {
    "linear": lambda lib: lib.vmap(lib.nn.functional.linear, in_dims=(0, None, None))(
        T(lib, A), T(lib, W), T(lib, BIAS)),
    "linear_batched_weight": lambda lib: lib.vmap(lib.nn.functional.linear, in_dims=(None, 0, None))(
        T(lib, A[0]), T(lib, np.stack([W, 2 * W])), T(lib, BIAS)),
    "conv2d": lambda lib: lib.vmap(lambda x: lib.nn.functional.conv2d(x, T(lib, KER), padding=1, stride=2))(
        T(lib, IMG)),
    "layer_norm": lambda lib: lib.vmap(lambda x: lib.nn.functional.layer_norm(x, (5,)))(T(lib, A)),
    "softmax_in_dim_1": lambda lib: lib.vmap(lib.nn.functional.softmax, in_dims=(1, None))(T(lib, A), 0),
    "cross_entropy": lambda lib: lib.vmap(lambda x, y: lib.nn.functional.cross_entropy(
        x, y, label_smoothing=0.1, reduction="none"))(T(lib, A), T(lib, LABELS)),
    "embedding": lambda lib: lib.vmap(lib.nn.functional.embedding, in_dims=(0, None))(T(lib, IDX), T(lib, EMB)),
    "embedding_batched_weight": lambda lib: lib.vmap(lib.nn.functional.embedding, in_dims=(None, 0))(
        T(lib, IDX), T(lib, np.stack([EMB, -EMB]))),
    "reductions": lambda lib: lib.vmap(lambda x: (x.sum(1), x.mean(dim=(0, 1), keepdim=True), x.max(-1), x.argmax(),
                                                  lib.topk(x, 2)), in_dims=2)(T(lib, A)),
    "indexing": lambda lib: lib.vmap(lambda x, i, j: (x[:, 1:3], x[i], x.gather(-1, j)))(
        T(lib, A), T(lib, ROWS), T(lib, COLS)),
    "matmul_broadcasting": lambda lib: (lib.vmap(lib.matmul, in_dims=(0, None))(T(lib, A), T(lib, W.T)),
                                        lib.vmap(lib.matmul, in_dims=(None, 0))(T(lib, W), T(lib, A.swapaxes(1, 2)))),
    "nested": lambda lib: lib.vmap(lib.vmap(lib.dot, in_dims=(0, None)), in_dims=(None, 0))(
        T(lib, A[0]), T(lib, A[1])),
    "negative_dims": lambda lib: lib.vmap(lambda x: (x * 2, x.sum()), in_dims=-1, out_dims=(-1, 0))(T(lib, A)),
    "pytree_in_dims": lambda lib: lib.vmap(lambda d, l: d["a"] + d["b"] * l[0] * l[1],
                                           in_dims=({"a": 0, "b": None}, [0, 1]))(
        {"a": T(lib, A), "b": T(lib, A[0])}, [T(lib, A), T(lib, A.swapaxes(0, 1))]),
    "unbatched_output": lambda lib: lib.vmap(lambda x, y: (x * 2, y), in_dims=(0, None), out_dims=(0, None))(
        T(lib, A), T(lib, BIAS)),
    "batch_of_one": lambda lib: lib.vmap(lambda x: x @ x.T)(T(lib, A[:1])),
    "empty_batch": lambda lib: lib.vmap(lambda x: (x @ x.T, x.argmax()))(T(lib, np.zeros((0, 3, 5), np.float32))),
    "chunked": lambda lib: lib.vmap(lambda x: x.sin().cumsum(-1), chunk_size=3)(T(lib, A)),
    "sdpa_and_where": lambda lib: lib.vmap(lambda q: lib.where(q > 0, lib.nn.functional.scaled_dot_product_attention(
        q, q, q, is_causal=True), 0.0))(T(lib, A)),
    "transforms_inside": lambda lib: (lib.vmap(lib.func.jacrev(lambda x: x.sin() * x.sum()))(T(lib, A[:, 0])),
                                      lib.vmap(lib.func.hessian(lambda x: (x.sin() * x.sum()).sum()))(T(lib, A[:, 0]))),
}


@pytest.mark.parametrize("case", sorted(VMAP_CASES))
def test_vmap_over_ops(case):
    _both(VMAP_CASES[case])


def test_vmap_dropout_randomness_modes():
    x = np.ones((4, 50), np.float32)
    same = ember.vmap(lambda t: ember.nn.functional.dropout(t, 0.5), randomness="same")(ember.tensor(x))
    assert bool((same == same[0]).all()) and set(same.unique().tolist()) == {0.0, 2.0}
    diff = ember.vmap(lambda t: ember.nn.functional.dropout(t, 0.5), randomness="different")(ember.tensor(x))
    assert not bool((diff == diff[0]).all())
    _raise_alike(lambda lib: lib.vmap(lambda t: lib.nn.functional.dropout(t, 0.5))(lib.tensor(x)))
    _both(lambda lib: lib.vmap(lambda t: lib.nn.functional.dropout(t, 0.5, training=False))(lib.tensor(x)))


def test_vmap_in_place_ops():
    # into a batched slice: writes through to the input, as in torch
    _both(lambda lib: (lambda a: (lib.vmap(lambda x, y: x.mul_(2).add_(y), in_dims=(0, None))(a, T(lib, A[0])), a))(
        T(lib, A).clone()))
    # into an unbatched input: it would be written once per slice
    _raise_alike(lambda lib: lib.vmap(lambda x, y: y.add_(x), in_dims=(0, None))(T(lib, A), T(lib, A[0]).clone()))


def test_batch_norm_under_vmap_needs_batched_or_no_running_stats():
    x = RNG.standard_normal((5, 4, 8)).astype(np.float32)

    def unbatched_buffers(lib):
        m = lib.nn.BatchNorm1d(8)
        p, b = {k: v.detach() for k, v in m.named_parameters()}, dict(m.named_buffers())
        lib.func.vmap(lambda p, b, x: lib.func.functional_call(m, (p, b), (x,)), in_dims=(None, None, 0))(
            p, b, lib.tensor(x))
    _raise_alike(unbatched_buffers)
    _raise_alike(lambda lib: lib.vmap(lib.nn.BatchNorm1d(8))(lib.tensor(x)))

    torch.manual_seed(4)
    ref = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8))
    res = []
    for lib in LIBS:
        m = ref if lib is torch else _copy(ref, ember.nn.Sequential(ember.nn.Linear(8, 8), ember.nn.BatchNorm1d(8)))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        assert m[1].running_mean is None and m[1].num_batches_tracked is None and not m[1].track_running_stats
        res.append(lib.vmap(m)(lib.tensor(x)))
    _close(*res)


# -- jacobians, hessians, jvp/vjp ------------------------------------------------------------------------------------
X4, Y34, V4 = RNG.standard_normal(4), RNG.standard_normal((3, 4)), RNG.standard_normal(4)


def _f(lib):
    return lambda a, b: (b @ a.sin()) * a[:3].exp()


JAC_CASES = {
    "jacrev_argnums": lambda lib: lib.func.jacrev(_f(lib), argnums=(0, 1))(T(lib, X4), T(lib, Y34)),
    "jacfwd_argnums": lambda lib: lib.func.jacfwd(_f(lib), argnums=(1, 0))(T(lib, X4), T(lib, Y34)),
    "jacrev_negative_argnum": lambda lib: lib.func.jacrev(_f(lib), argnums=-1)(T(lib, X4), T(lib, Y34)),
    "jac_has_aux": lambda lib: [jac(lambda a: (a.sin(), {"n": a.norm()}), has_aux=True)(T(lib, X4))
                                for jac in (lib.func.jacrev, lib.func.jacfwd)],
    "jac_pytrees": lambda lib: [jac(lambda d: {"s": d["w"].sum(), "v": [d["w"] @ d["b"].tanh()]})(
        {"w": T(lib, Y34), "b": T(lib, X4)}) for jac in (lib.func.jacrev, lib.func.jacfwd)],
    "jac_float32_and_0d": lambda lib: (lib.func.jacrev(lambda a: a.double().sin())(T(lib, X4).float()),
                                       lib.func.jacfwd(lambda a: a.sin() * 3)(T(lib, 1.5))),
    "hessian_argnums": lambda lib: lib.func.hessian(lambda a, b: (b @ a.sin()).pow(2).sum(), argnums=(0, 1))(
        T(lib, X4), T(lib, Y34)),
    "jvp_vjp_linearize": lambda lib: (
        lib.func.jvp(_f(lib), (T(lib, X4), T(lib, Y34)), (T(lib, V4), T(lib, Y34 * 0.1))),
        lib.func.jvp(lambda a: (a.sin(), a.cos()), (T(lib, X4),), (T(lib, V4),), has_aux=True),
        lib.func.vjp(_f(lib), T(lib, X4), T(lib, Y34))[1](T(lib, V4[:3])),
        lib.func.vjp(lambda a: {"a": a.sin(), "b": a.sum()}, T(lib, X4))[1]({"a": T(lib, V4), "b": T(lib, 2.0)}),
        lib.func.linearize(lambda a: a.sin() * a.sum(), T(lib, X4))[1](T(lib, V4))),
    "grad_and_value_aux_argnum": lambda lib: lib.func.grad_and_value(
        lambda a, b: ((b @ a).sum(), {"p": b @ a}), argnums=1, has_aux=True)(T(lib, X4), T(lib, Y34)),
    "vmap_of_jvp_and_vjp": lambda lib: (
        lib.vmap(lambda t: lib.func.jvp(lambda a: a.sin() * a.sum(), (T(lib, X4),), (t,))[1])(T(lib, np.eye(4))),
        lib.vmap(lib.func.vjp(lambda a: a.sin() * a.sum(), T(lib, X4))[1])(T(lib, np.eye(4)))),
}


@pytest.mark.parametrize("case", sorted(JAC_CASES))
def test_jacobians_and_products(case):
    _both(JAC_CASES[case], rtol=1e-10, atol=1e-12)


def test_transform_argument_errors():
    x = lambda lib: T(lib, X4)  # noqa: E731
    e, t = _raise_alike(lambda lib: lib.func.grad(lambda a, b: (a * b).sum(), argnums=(0, -2))(x(lib), x(lib)))
    assert e == t == "argnums elements must be unique, got (0, 0)"
    e, t = _raise_alike(lambda lib: lib.func.jacrev(lambda a: a, chunk_size=0), ValueError)
    assert e == t
    for fn in (lambda lib: lib.func.jacrev(lambda a: a * (1 + 1j))(x(lib)),
               lambda lib: lib.func.jacfwd(lambda a: a * (1 + 1j))(x(lib)),
               lambda lib: lib.func.jacrev(lambda a, b: (a, b * 1j))(x(lib), x(lib)),
               lambda lib: lib.func.hessian(lambda a: a.abs().sum())(x(lib) * 1j)):
        e, t = _raise_alike(fn)
        assert e == t
    _raise_alike(lambda lib: lib.func.grad(lambda a: a.sin())(x(lib)))
    _raise_alike(lambda lib: lib.func.vjp(lambda a: a.sin(), x(lib))[1](T(lib, Y34)))
    _raise_alike(lambda lib: lib.func.jvp(lambda a: a, (T(lib, [1, 2]),), (T(lib, [1, 2]),)), ValueError)


def test_autograd_functional_jacobian_hessian_vectorized_and_create_graph():
    def h(a, b):
        return (b @ a.tanh()) * a[:3]

    def g(a):
        return (a.sin() * a.sum()).pow(2).sum()
    res = []
    for lib in LIBS:
        AF = lib.autograd.functional
        args = (T(lib, X4), T(lib, Y34))
        out = [AF.jacobian(h, args, vectorize=True), AF.jacobian(h, args, vectorize=True, strategy="forward-mode"),
               AF.hessian(g, T(lib, X4), vectorize=True),
               AF.hessian(g, T(lib, X4), vectorize=True, outer_jacobian_strategy="forward-mode"),
               AF.hvp(g, T(lib, X4), T(lib, V4))[1], AF.vhp(g, T(lib, X4), T(lib, V4))[1]]
        a = T(lib, X4).requires_grad_()
        J = AF.jacobian(lambda t: t.sin() * t.sum(), a, create_graph=True, vectorize=True)
        H = AF.hessian(g, a, create_graph=True)
        (J.pow(2).sum() + H.trace()).backward()
        assert J.requires_grad and H.requires_grad
        res.append(out + [J, H, a.grad])
    _close(*res, rtol=1e-10, atol=1e-12)


def test_functionalize_keeps_semantics_and_composes():
    def f(a):
        b = a + 1
        b.view(-1).add_(1)
        return b

    def mutate_input(a):
        a.mul_(2)
        return a.sum()
    x = np.arange(6.0).reshape(2, 3)
    res = []
    for lib in LIBS:
        F, xt = lib.func, T(lib, x)
        copied = F.functionalize(lambda a: a.t(), remove="mutations_and_views")(xt)
        aliased = F.functionalize(lambda a: a.t())(xt)
        y = xt.clone()
        res.append((F.functionalize(f)(xt), copied, copied.stride(), aliased.stride(), aliased._base is xt,
                    F.functionalize(mutate_input)(y), y, F.jacfwd(F.functionalize(f))(xt),
                    F.grad(F.functionalize(lambda a: (a.clone().add_(1) ** 2).sum()))(xt),
                    F.debug_unwrap(xt) is xt))
    _close(*res)
    _raise_alike(lambda lib: lib.func.functionalize(lambda a: a, remove="views"))
