"""Advanced autograd idioms (custom Functions, hooks, higher-order gradients, autograd.functional, torch.func,
forward AD, checkpointing, gradcheck, in-place/version errors, grad modes) against torch."""
import importlib

import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)


def _close(e, t, rtol=1e-5, atol=1e-6):
    if e is None or t is None:  # a gradient that is None in one must be None in both
        assert e is None and t is None
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _all_close(es, ts, **kw):
    assert len(es) == len(ts)
    for e, t in zip(es, ts):
        _close(e, t, **kw)


def _np(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _sub(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


def _copy_state(src, dst, lib):
    dst.load_state_dict({k: lib.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})
    return dst


# -- custom autograd.Function ------------------------------------------------------------------------------------------
def _custom_functions(lib):
    class ScaledSort(lib.autograd.Function):
        """Non-tensor argument, a non-differentiable index output, None gradients for non-tensors."""
        @staticmethod
        def forward(ctx, x, scale, descending=False):
            v, i = x.sort(dim=-1, descending=descending)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            ctx.scale = scale
            return v * scale, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return lib.zeros_like(gv).scatter_(-1, i, gv * ctx.scale), None, None

    class Split(lib.autograd.Function):
        """Two outputs; with set_materialize_grads(False) the unused one gets None."""
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.exp(), x.sin()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * 2 if g2 is None else g1 * 2 + g2

    class Linear(lib.autograd.Function):
        """setup_context style, with forward-mode jvp through save_for_forward."""
        @staticmethod
        def forward(x, w):
            return x @ w.t()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return (g @ w if ctx.needs_input_grad[0] else None), (g.t() @ x if ctx.needs_input_grad[1] else None)

        @staticmethod
        def jvp(ctx, tx, tw):
            x, w = ctx.saved_tensors
            return (0 if tx is None else tx @ w.t()) + (0 if tw is None else x @ tw.t())

    seen = []
    return ScaledSort, Split, Linear, seen


def test_custom_function_non_tensor_args_non_differentiable_outputs_and_none_grads():
    x, g = _np((3, 5), 0), _np((3, 5), 1)
    res = []
    for lib in LIBS:
        ScaledSort, _, _, _ = _custom_functions(lib)
        xt = lib.tensor(x, requires_grad=True)
        v, i = ScaledSort.apply(xt, 2.5, True)
        (v * lib.tensor(g)).sum().backward()
        res.append((v, i, xt.grad, i.requires_grad, v.requires_grad, v.grad_fn.name()))
    _all_close(res[0][:3], res[1][:3])
    assert res[0][3:] == res[1][3:] == (False, True, "ScaledSortBackward")


def test_set_materialize_grads_false_passes_none_for_unused_outputs():
    x = _np((4,), 2)
    res = []
    for lib in LIBS:
        _, Split, _, seen = _custom_functions(lib)
        xt = lib.tensor(x, requires_grad=True)
        a, b = Split.apply(xt)
        a.sum().backward()
        res.append((xt.grad, seen))
    _close(res[0][0], res[1][0])
    assert res[0][1] == res[1][1] == [(False, True)]


def test_setup_context_backward_and_forward_mode_jvp():
    x, w, tx, tw, g = _np((3, 4), 3), _np((2, 4), 4), _np((3, 4), 5), _np((2, 4), 6), _np((3, 2), 7)
    res = []
    for lib in LIBS:
        _, _, Linear, _ = _custom_functions(lib)
        fw = _sub(lib, "autograd.forward_ad")
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w)
        y = Linear.apply(xt, wt)
        y.backward(lib.tensor(g))
        with fw.dual_level():
            out = Linear.apply(fw.make_dual(lib.tensor(x), lib.tensor(tx)), fw.make_dual(lib.tensor(w), lib.tensor(tw)))
            tangent = fw.unpack_dual(out).tangent.clone()
        _, t2 = lib.func.jvp(lambda a: Linear.apply(a, lib.tensor(w)), (lib.tensor(x),), (lib.tensor(tx),))
        res.append((y, xt.grad, tangent, t2, wt.grad is None))
    _all_close(res[0][:4], res[1][:4])
    assert res[0][4] and res[1][4]


def test_custom_function_vmap_staticmethod_and_generate_vmap_rule():
    x = _np((5, 3), 8)
    res = []
    for lib in LIBS:
        class Cube(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x ** 3, 3 * x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0], output[1])

            @staticmethod
            def backward(ctx, g, gd):
                x, d = ctx.saved_tensors
                return g * d + gd * 6 * x

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return 2 * ctx.saved_tensors[0] * g

            @staticmethod
            def vmap(info, in_dims, x):
                return x ** 2, in_dims[0]

        xt = lib.tensor(x)
        res.append((lib.func.vmap(lambda v: Cube.apply(v)[0])(xt),
                    lib.func.vmap(lib.func.grad(lambda v: Cube.apply(v)[0].sum()))(xt),
                    lib.func.vmap(Square.apply, in_dims=1, out_dims=1)(xt),
                    lib.func.vmap(lib.func.grad(lambda v: Square.apply(v).sum()))(xt)))
    _all_close(res[0], res[1])


def test_once_differentiable_refuses_double_backward():
    x = _np((4,), 9, np.float64)
    res = []
    for lib in LIBS:
        once = _sub(lib, "autograd.function").once_differentiable

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @once
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        xt = lib.tensor(x, requires_grad=True)
        (gx,) = lib.autograd.grad(Square.apply(xt).sum(), xt, create_graph=True)
        with pytest.raises(RuntimeError):
            gx.sum().backward()
        res.append(gx)
    _close(res[0], res[1])


@pytest.mark.parametrize("forward", ["identity", "view"])
def test_in_place_on_a_view_output_of_a_custom_function_raises(forward):
    """An input returned as is (or a view made in forward) cannot be written in place, nor can its base: the
    view+inplace logic would bypass the custom backward."""
    for lib in LIBS:
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x if forward == "identity" else x.view(2, 2)

            @staticmethod
            def backward(ctx, g):
                return g.reshape(4) * 2

        leaf = lib.arange(4.0, requires_grad=True)
        y = F.apply(leaf.clone())
        with pytest.raises(RuntimeError, match="view and is being modified inplace"):
            y.mul_(3)
        base = leaf * 1
        y = F.apply(base)
        base.add_(1)
        with pytest.raises(RuntimeError, match="its base or another view of its base has been modified"):
            (y * 1).sum()
        y = F.apply(leaf * 1).clone()  # cloning is the fix
        y.mul_(3)
        y.sum().backward()
        np.testing.assert_allclose(leaf.grad.numpy(), np.full(4, 6.0))


def test_custom_function_backward_errors():
    for lib in LIBS:
        class TooMany(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, g

        class WrongShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g[:2]

        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        x = lib.ones(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError):
            TooMany.apply(x).sum().backward()
        with pytest.raises(RuntimeError):
            WrongShape.apply(x).sum().backward()
        with pytest.raises(NotImplementedError):
            NoBackward.apply(x).sum().backward()


# -- hooks, retain_grad, autograd.grad options ---------------------------------------------------------------------------
def test_tensor_hooks_on_intermediates_retain_grad_and_handle_removal():
    x, w, g = _np((3, 4), 10), _np((4, 4), 11), _np((3, 4), 12)
    res = []
    for lib in LIBS:
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        z = xt @ wt
        seen = {}
        z.register_hook(lambda gr: seen.__setitem__("z", gr.clone()))
        z.register_hook(lambda gr: gr.clamp(-0.5, 0.5))
        z.retain_grad()
        z.tanh().backward(lib.tensor(g))
        h = xt.register_hook(lambda gr: gr * 10)
        h.remove()
        (xt * 2).sum().backward()
        res.append((seen["z"], z.grad, xt.grad, wt.grad, z.is_leaf, z.retains_grad))
    _all_close(res[0][:4], res[1][:4])
    assert res[0][4:] == res[1][4:] == (False, True)


def test_post_accumulate_grad_hook_optimizer_in_backward():
    torch.manual_seed(0)
    ref = torch.nn.Linear(4, 3)
    x = _np((5, 4), 13)
    res = []
    for lib in LIBS:
        lin = _copy_state(ref, lib.nn.Linear(4, 3), lib)
        opts = {p: lib.optim.SGD([p], lr=0.1, momentum=0.9) for p in lin.parameters()}

        def hook(p):
            opts[p].step()
            opts[p].zero_grad()
        handles = [p.register_post_accumulate_grad_hook(hook) for p in lin.parameters()]
        for _ in range(3):
            lin(lib.tensor(x)).pow(2).sum().backward()
        res.append((lin.weight, lin.bias, lin.weight.grad is None))
        for h in handles:
            h.remove()
        with pytest.raises(RuntimeError):
            (lin.weight * 2).register_post_accumulate_grad_hook(hook)
    _all_close(res[0][:2], res[1][:2])
    assert res[0][2] == res[1][2]


def test_autograd_grad_allow_unused_materialize_and_batched_grads():
    x, w = _np((3, 4), 14), _np((4, 4), 15)
    res = []
    for lib in LIBS:
        xt, yt = lib.tensor(x, requires_grad=True), lib.tensor(x, requires_grad=True)
        with pytest.raises(RuntimeError):
            lib.autograd.grad((xt * 2).sum(), [xt, yt])
        g = lib.autograd.grad((xt * 2).sum(), [xt, yt], allow_unused=True)
        gm = lib.autograd.grad((xt * 2).sum(), [xt, yt], allow_unused=True, materialize_grads=True)
        out = xt @ lib.tensor(w)
        (jac,) = lib.autograd.grad(out, xt, lib.eye(12).reshape(12, 3, 4), is_grads_batched=True)
        res.append((g[0], gm[1], jac, g[1] is None))
    _all_close(res[0][:3], res[1][:3])
    assert res[0][3] and res[1][3]


# -- higher-order gradients --------------------------------------------------------------------------------------------
def test_gradient_penalty_through_conv_norm_and_activation_layers():
    torch.manual_seed(0)

    def net(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.LeakyReLU(0.2),
                             nn.Conv2d(4, 2, 3, stride=2), nn.GroupNorm(1, 2), nn.SiLU(), nn.Flatten(),
                             nn.Linear(18, 1))
    ref = net(torch)
    x = _np((2, 3, 8, 8), 16, np.float64)
    res = []
    for lib in LIBS:
        d = _copy_state(ref, net(lib), lib).double()
        xt = lib.tensor(x, requires_grad=True)
        out = d(xt)
        (g,) = lib.autograd.grad(out, xt, grad_outputs=lib.ones_like(out), create_graph=True)
        penalty = ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        penalty.backward()
        res.append([out, g, penalty] + [p.grad for p in d.parameters()])
    _all_close(res[0], res[1], rtol=1e-9, atol=1e-10)


def test_maml_inner_loop_with_create_graph_and_functional_call():
    torch.manual_seed(1)

    def net(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))
    ref = net(torch)
    xs, ys, xq = _np((5, 4), 17), _np((5, 1), 18), _np((5, 4), 19)
    res = []
    for lib in LIBS:
        m = _copy_state(ref, net(lib), lib)
        fast = dict(m.named_parameters())
        for _ in range(2):
            loss = lib.nn.functional.mse_loss(lib.func.functional_call(m, fast, (lib.tensor(xs),)), lib.tensor(ys))
            grads = lib.autograd.grad(loss, list(fast.values()), create_graph=True)
            fast = {k: v - 0.1 * gr for (k, v), gr in zip(fast.items(), grads)}
        query = lib.nn.functional.mse_loss(lib.func.functional_call(m, fast, (lib.tensor(xq),)), lib.tensor(ys))
        query.backward()
        res.append([query] + [p.grad for p in m.parameters()])
    _all_close(res[0], res[1])


def test_hessian_vector_products_by_double_backward_and_autograd_functional():
    x, v = _np((4,), 20, np.float64), _np((4,), 21, np.float64)
    res = []
    for lib in LIBS:
        F = lib.autograd.functional

        def f(t):
            return (t.sin() * t.exp()).sum() + (t ** 2).prod()
        xt = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(f(xt), xt, create_graph=True)
        (hv,) = lib.autograd.grad(g, xt, lib.tensor(v))
        res.append((hv, F.hvp(f, lib.tensor(x), lib.tensor(v))[1], F.vhp(f, lib.tensor(x), lib.tensor(v))[1],
                    F.hessian(f, lib.tensor(x)), F.hessian(f, lib.tensor(x), vectorize=True,
                                                           outer_jacobian_strategy="forward-mode")))
    _all_close(res[0], res[1], rtol=1e-10, atol=1e-12)


def test_autograd_functional_jacobian_strategies_and_errors():
    x, v = _np((3,), 22, np.float64), _np((3,), 23, np.float64)
    res = []
    for lib in LIBS:
        F = lib.autograd.functional

        def g(t):
            return t.sin() * t[0] + t.cumsum(0)
        xt = lib.tensor(x)
        res.append((F.jacobian(g, xt), F.jacobian(g, xt, vectorize=True, strategy="forward-mode"),
                    *F.jacobian(lambda a, b: a * b.tanh(), (xt, lib.tensor(v))), F.vjp(g, xt, lib.tensor(v))[1],
                    F.jvp(g, xt, lib.tensor(v))[1]))
        with pytest.raises(NotImplementedError):
            F.jacobian(g, xt, strategy="forward-mode")
        with pytest.raises(RuntimeError):
            F.jacobian(lambda a: a.detach() * 2, xt, strict=True)
        with pytest.raises(RuntimeError):
            F.vjp(g, xt)  # a non-scalar output needs v
    _all_close(res[0], res[1], rtol=1e-12, atol=1e-12)


# -- torch.func --------------------------------------------------------------------------------------------------------
def test_func_per_sample_grads_and_ensembles():
    torch.manual_seed(2)

    def net(lib):
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
    ref = net(torch)
    x, y = _np((5, 3), 24), _np((5,), 25)
    res = []
    for lib in LIBS:
        F = lib.func
        m = _copy_state(ref, net(lib), lib)
        params = {k: p.detach() for k, p in m.named_parameters()}

        def loss(p, xi, yi):
            return lib.nn.functional.mse_loss(F.functional_call(m, p, (xi.unsqueeze(0),)).squeeze(), yi)
        per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(x), lib.tensor(y))
        models = [_copy_state(ref, net(lib), lib) for _ in range(3)]
        with lib.no_grad():
            for i, mod in enumerate(models):
                for p in mod.parameters():
                    p.mul_(i + 1)
        stacked, buffers = F.stack_module_state(models)
        out = F.vmap(lambda p, b, xi: F.functional_call(m, (p, b), (xi,)), in_dims=(0, 0, None))(
            stacked, buffers, lib.tensor(x))
        res.append([per_sample[k] for k in sorted(per_sample)] + [out, stacked["0.weight"]])
    _all_close(res[0], res[1])


def test_func_transforms_with_aux_argnums_and_nesting():
    x = _np((3,), 26, np.float64)
    res = []
    for lib in LIBS:
        F = lib.func

        def f(t):
            return (t.sin() ** 2).sum(), {"cos": t.cos()}
        xt = lib.tensor(x)
        g, aux = F.grad(f, has_aux=True)(xt)
        g2, (val, aux2) = F.grad_and_value(f, has_aux=True)(xt)
        ga, gb = F.grad(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))(xt, xt * 2)

        def h(t):
            return (t.sin() * t.sum()).sum()
        res.append((g, aux["cos"], g2, val, ga, gb, F.jacrev(lambda t: t.sin() * t.sum())(xt),
                    F.jacfwd(lambda t: t.sin() * t.sum())(xt), F.hessian(h)(xt), F.jacfwd(F.jacrev(h))(xt),
                    F.vmap(lambda t: t.sin(), chunk_size=2)(xt.reshape(3, 1)),
                    F.jvp(F.grad(h), (xt,), (xt * 0.5,))[1]))
    _all_close(res[0], res[1], rtol=1e-10, atol=1e-12)


# -- forward-mode AD ---------------------------------------------------------------------------------------------------
def test_forward_ad_dual_numbers_through_a_module():
    torch.manual_seed(3)
    ref = torch.nn.Linear(4, 3)
    x, t = _np((3, 4), 27), _np((3, 4), 28)
    res = []
    for lib in LIBS:
        fw = _sub(lib, "autograd.forward_ad")
        lin = _copy_state(ref, lib.nn.Linear(4, 3), lib)
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            y = lib.nn.functional.gelu(lib.nn.functional.layer_norm(lin(d), (3,))).softmax(-1)
            p, tangent = fw.unpack_dual(y)
            res.append((p.clone(), tangent.clone()))
        with pytest.raises(RuntimeError):
            with fw.dual_level():
                fw.make_dual(lib.tensor(x), lib.tensor(t[:2]))
    _all_close(res[0], res[1])


# -- activation checkpointing ------------------------------------------------------------------------------------------
def _ckpt_net(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.GELU(), lib.nn.Dropout(0.5), lib.nn.Linear(8, 6))


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_matches_plain_backward_with_dropout(reentrant):
    torch.manual_seed(4)
    ref = _ckpt_net(torch)
    x = _np((4, 6), 29)
    for lib in LIBS:
        ck = _sub(lib, "utils.checkpoint")
        m = _copy_state(ref, _ckpt_net(lib), lib)
        grads = []
        for use_ckpt in (True, False):
            xt = lib.tensor(x, requires_grad=True)
            m.zero_grad()
            lib.manual_seed(1)
            y = ck.checkpoint(m, xt, use_reentrant=reentrant) if use_ckpt else m(xt)
            y.pow(2).sum().backward()
            grads.append([xt.grad] + [p.grad.clone() for p in m.parameters()])
        _all_close(grads[0], grads[1])  # recomputation replays forward's dropout masks


def test_non_reentrant_checkpoint_with_autograd_grad_and_create_graph():
    """Gradient penalty through a checkpointed region: autograd.grad leaves the parameters' .grad alone, and
    create_graph gives a differentiable gradient."""
    torch.manual_seed(5)
    ref = _ckpt_net(torch).eval()
    x = _np((4, 6), 30)
    res = []
    for lib in LIBS:
        ck = _sub(lib, "utils.checkpoint")
        m = _copy_state(ref, _ckpt_net(lib), lib).eval()
        xt = lib.tensor(x, requires_grad=True)
        y = ck.checkpoint(m, xt, use_reentrant=False)
        (g,) = lib.autograd.grad(y.pow(2).sum(), xt, create_graph=True)
        untouched = all(p.grad is None for p in m.parameters())
        (g ** 2).sum().backward()
        y2 = ck.checkpoint(m, lib.tensor(x), use_reentrant=False)  # no input requires grad
        m.zero_grad()
        y2.sum().backward()
        res.append(([g, xt.grad] + [p.grad for p in m.parameters()], untouched))
    _all_close(res[0][0], res[1][0])
    assert res[0][1] and res[1][1]


def test_reentrant_checkpoint_refuses_autograd_grad():
    for lib in LIBS:
        ck = _sub(lib, "utils.checkpoint")
        lin = lib.nn.Linear(3, 3)
        xt = lib.ones(2, 3, requires_grad=True)
        y = ck.checkpoint(lin, xt, use_reentrant=True)
        with pytest.raises(RuntimeError, match="use_reentrant=True"):
            lib.autograd.grad(y.sum(), xt)
        with pytest.raises(ValueError):
            ck.checkpoint(lambda a, *, s: a * s, xt, s=2.0, use_reentrant=True)


# -- gradcheck ---------------------------------------------------------------------------------------------------------
def test_gradcheck_and_gradgradcheck_as_user_code_calls_them():
    x = _np((3, 4), 31, np.float64)
    for lib in LIBS:
        class BadSquare(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t ** 2

            @staticmethod
            def backward(ctx, g):
                return 3 * ctx.saved_tensors[0] * g

        xt = lib.tensor(x, requires_grad=True)
        assert lib.autograd.gradcheck(lambda t: t.sin().cumsum(0), (xt,))
        assert lib.autograd.gradcheck(lambda t, k: t * k, (xt, 3.0), fast_mode=True, check_batched_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: (t ** 3).sum(1), (xt,), fast_mode=True)
        assert lib.autograd.gradcheck(lambda t: (t.sin(), t.sum()), (xt,), check_forward_ad=True)
        assert lib.autograd.gradcheck(BadSquare.apply, (xt,), raise_exception=False) is False
        assert lib.autograd.gradcheck(BadSquare.apply, (xt,), raise_exception=False, fast_mode=True) is False
        with pytest.raises(RuntimeError):
            lib.autograd.gradcheck(BadSquare.apply, (xt,))


# -- in-place / version-counter errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["sigmoid_out", "mul_input", "setitem_exp", "relu_"])
def test_modified_by_an_inplace_operation(case):
    for lib in LIBS:
        x, w = lib.ones(3, 4, requires_grad=True), lib.ones(3, 4, requires_grad=True)
        if case == "sigmoid_out":
            y = x.sigmoid()
            y.mul_(2)
        elif case == "mul_input":
            a = x.exp()
            y = a * w
            a.add_(1)
        elif case == "setitem_exp":
            y = x.exp()
            y[0] = 0
        else:
            y = x.tanh().relu_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_leaf_and_requires_grad_errors():
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            x.add_(1)
        with lib.no_grad():
            x.add_(1)
        with pytest.raises(RuntimeError):
            (x * 2).requires_grad_(False)
        with pytest.raises(RuntimeError):
            lib.tensor([1, 2]).requires_grad_()
        with pytest.raises(RuntimeError):
            x[:2].detach_()
        y = x * 2
        y.detach_()
        assert not y.requires_grad and y.is_leaf and y.grad_fn is None
        with pytest.raises(RuntimeError):
            y.sum().backward()


# -- grad modes --------------------------------------------------------------------------------------------------------
def test_grad_mode_nesting_and_decorators_on_generators():
    res = []
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        log = []

        @lib.no_grad()
        def gen(n):
            for i in range(n):
                got = yield (x * i).requires_grad, lib.is_grad_enabled()
                log.append((got, lib.is_grad_enabled()))

        g = gen(2)
        log.append(next(g))
        log.append(lib.is_grad_enabled())
        log.append(g.send("a"))

        @lib.enable_grad()
        def inner():
            yield (x * 2).requires_grad

        with lib.no_grad():
            log.extend(inner())
            log.append((x * 2).requires_grad)
            with lib.enable_grad():
                log.append((x * 2).requires_grad)
                with lib.set_grad_enabled(False):
                    log.append(lib.is_grad_enabled())

        @lib.inference_mode
        def infer():
            return (x * 2).requires_grad, lib.is_inference_mode_enabled()
        log.append(infer())
        log.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        res.append(log)
    assert res[0] == res[1]
