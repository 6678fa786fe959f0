"""User-defined autograd.Function written as in torch's docs: forward gets Tensors, backward returns gradients."""
import numpy as np
import pytest
import torch

import ember
from .common import data, same, same_error

X, W, B = data(5, 4, seed=1), data(3, 4, seed=2), data(3, seed=3)


def functions(m):
    """The same custom Functions, defined on ember's or torch's autograd.Function."""
    F = m.autograd.Function

    class LinearFunction(F):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class Exp(F):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class MulConstant(F):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class SplitStats(F):  # several outputs, one of them integer and one marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax(1)
            doubled, tripled = x * 2, x * 3
            ctx.mark_non_differentiable(tripled)
            return doubled, idx, tripled, 7

        @staticmethod
        def backward(ctx, g_doubled, g_idx, g_tripled, g_seven):
            ctx.seen = (g_idx is not None, g_tripled is not None, g_seven is None)
            return g_doubled * 2

    class NoMaterialize(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            out = 0
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    class Cube(F):  # backward in differentiable ops: double backward works
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    class SetupCtx(F):  # torch 2 style: forward without ctx, setup_context saves
        @staticmethod
        def forward(x, k):
            return x.sin() * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * ctx.k, None

    class AddOneInPlace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class Identity(F):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return locals()


@pytest.fixture(scope="module")
def fns():
    return {"ember": functions(ember), "torch": functions(torch)}


def lib_fns(fns, m):
    return fns["ember" if m is ember else "torch"]


def test_linear_function(fns):
    def run(m, with_bias):
        x, w = m.tensor(X, requires_grad=True), m.tensor(W, requires_grad=True)
        b = m.tensor(B, requires_grad=True) if with_bias else None
        y = lib_fns(fns, m)["LinearFunction"].apply(x, w, b)
        y.backward(m.tensor(data(5, 3, seed=4)))
        return y, x.grad, w.grad, (b.grad if with_bias else None), y.grad_fn.name()
    same(lambda m: run(m, True))
    same(lambda m: run(m, False))


def test_exp_saving_its_output(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = lib_fns(fns, m)["Exp"].apply(x)
        (y * y).sum().backward()
        return y, x.grad
    same(run)


def test_saved_output_modified_in_place_raises(fns):
    def run(m):
        y = lib_fns(fns, m)["Exp"].apply(m.tensor(X, requires_grad=True))
        y.add_(1)
        y.sum().backward()
    same_error(run)


def test_non_tensor_argument_and_keyword(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        f = lib_fns(fns, m)["MulConstant"]
        y = f.apply(x, 2.5) + f.apply(x, constant=-1.0)
        y.sum().backward()
        return y, x.grad
    same(run)


def test_forward_runs_without_recording_and_sees_tensors():
    seen = {}

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            seen["types"] = (type(x), type(k))
            seen["grad_enabled"] = ember.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            y = x * k
            seen["inner_requires_grad"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            return g, None

    x = ember.tensor(X, requires_grad=True)
    y = Probe.apply(x, 3)
    assert seen == {"types": (ember.Tensor, int), "grad_enabled": False, "needs": (True, False),
                    "inner_requires_grad": False}
    assert y.requires_grad and y.grad_fn.name() == "ProbeBackward"
    with ember.no_grad():
        z = Probe.apply(x, 3)
    assert not z.requires_grad and seen["needs"] == (True, False)


def test_multiple_outputs_non_differentiable_and_materialized(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        f = lib_fns(fns, m)["SplitStats"]
        d, idx, t, seven = f.apply(x)
        flags = (d.requires_grad, idx.requires_grad, t.requires_grad, seven)
        d.sum().backward()
        return flags, d.grad_fn.seen, x.grad
    same(run)


def test_set_materialize_grads_false(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        a, b = lib_fns(fns, m)["NoMaterialize"].apply(x)
        a.sum().backward()
        return a.grad_fn.seen, x.grad
    same(run)


def test_double_backward_through_custom_function(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = lib_fns(fns, m)["Cube"].apply(x).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x)
        return g, h
    same(run)


def test_setup_context_style(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = lib_fns(fns, m)["SetupCtx"].apply(x, 1.5)
        y.sum().backward()
        return y, x.grad
    same(run)


def test_mark_dirty(fns):
    def run(m):
        a = m.tensor(X, requires_grad=True)
        x = a * 1
        y = lib_fns(fns, m)["AddOneInPlace"].apply(x)
        assert y is x
        y.sum().backward()
        return x, a.grad, x._version
    same(run)
    same_error(lambda m: lib_fns(fns, m)["AddOneInPlace"].apply(m.tensor(X, requires_grad=True)))


def test_returning_an_input_gives_a_new_tensor(fns):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = lib_fns(fns, m)["Identity"].apply(x)
        assert y is not x and y.data_ptr() == x.data_ptr()
        y.sum().backward()
        return y, x.grad
    same(run)


def test_once_differentiable():
    def make(m):
        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        return Square

    def first(m):
        x = m.tensor(X, requires_grad=True)
        return m.autograd.grad(make(m).apply(x).sum(), x)
    same(first)

    def second(m):
        x = m.tensor(X, requires_grad=True)
        (g,) = m.autograd.grad(make(m).apply(x).sum(), x, create_graph=True)
        g.sum().backward()
    same_error(second)


def test_backward_errors():
    def make(m, backward, save=None):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, c):
                if save is not None:
                    ctx.save_for_backward(x, save)
                return x * c
        Bad.backward = staticmethod(backward)
        return Bad

    def call(m, backward, save=None):
        x = m.tensor(X, requires_grad=True)
        make(m, backward, save).apply(x, 2.0).sum().backward()

    same_error(call, lambda ctx, g: g)  # too few gradients
    same_error(call, lambda ctx, g: (g, g))  # a gradient for the number
    same_error(call, lambda ctx, g: (g[:2], None))  # wrong shape
    same_error(call, lambda ctx, g: (g, None), 3)  # saving a number
    call(ember, lambda ctx, g: (g, None, None))  # extra Nones are fine
    call(torch, lambda ctx, g: (g, None, None))


def test_missing_backward_raises():
    def run(m):
        class NoBackward(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        NoBackward.apply(m.tensor(X, requires_grad=True)).sum().backward()
    same_error(run)


def test_vjp_alias():
    class ViaVjp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = ember.tensor(X, requires_grad=True)
    ViaVjp.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 2)


def test_array_level_function_with_saved_arrays():
    """ember's built-in op base: forward on arrays; saved inputs, outputs and new arrays come back as Tensors."""
    from ember.autograd.function import Function

    class ScaledSoftplus(Function):
        @staticmethod
        def forward(ctx, x, scale):
            xp = ctx.xp
            y = xp.log1p(xp.exp(x)) * scale
            sig = 1 / (1 + xp.exp(-x))  # a new array, saved as a constant
            ctx.save_for_backward(x, y, sig)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, g):
            x, y, sig = ctx.saved_tensors
            assert isinstance(x, ember.Tensor) and y.grad_fn is ctx and not sig.requires_grad
            return g * sig * ctx.scale, None

    x = ember.tensor(X, requires_grad=True)
    y = ScaledSoftplus.apply(x, 2.0)
    assert y.grad_fn.name() == "ScaledSoftplusBackward0"
    y.sum().backward()
    t = torch.tensor(X, requires_grad=True)
    (torch.nn.functional.softplus(t) * 2).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), (torch.nn.functional.softplus(t) * 2).detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
