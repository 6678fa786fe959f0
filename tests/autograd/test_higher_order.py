"""autograd.grad: gradients of intermediates, unused inputs, and higher-order derivatives through create_graph."""
import pytest

import ember
from .common import data, same, same_error

X, W, V = data(4, seed=1), data(4, 3, seed=2), data(4, seed=3)


def _f(m, x):
    return ((x * x).sin() * x.exp() + (x * 0.5).tanh() * x).sum()


def test_grad_matches_and_leaves_dot_grad_alone():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        (g,) = m.autograd.grad(_f(m, x), x)
        assert x.grad is None and not g.requires_grad
        return g
    same(run)


@pytest.mark.parametrize("order", [2, 3])
def test_higher_derivatives_of_composition(order):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = _f(m, x)
        grads = []
        for _ in range(order):
            (y,) = m.autograd.grad(y, x, create_graph=True)
            grads.append(y)
            y = y.sum()
        return grads
    same(run, rtol=1e-10)


def test_scalar_third_derivative():
    def run(m):
        x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        y = x ** 3 * x.sin()
        (g1,) = m.autograd.grad(y, x, create_graph=True)
        (g2,) = m.autograd.grad(g1, x, create_graph=True)
        (g3,) = m.autograd.grad(g2, x)
        return g1, g2, g3
    same(run, rtol=1e-10)


def test_hessian_vector_product():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W)
        loss = ((x @ w).tanh() ** 2).sum() + (x.exp() * x).sum()
        (g,) = m.autograd.grad(loss, x, create_graph=True)
        (hv,) = m.autograd.grad(g, x, grad_outputs=m.tensor(V))
        return g, hv
    same(run, rtol=1e-10)


def test_gradient_penalty_double_backward():
    def run(m):
        w = m.tensor(W, requires_grad=True)
        x = m.tensor(data(5, 4, seed=4), requires_grad=True)
        out = (x @ w).sigmoid().sum(1)
        (gx,) = m.autograd.grad(out, x, grad_outputs=m.ones_like(out), create_graph=True)
        penalty = ((gx * gx).sum(1).sqrt() - 1) ** 2
        loss = out.mean() + 10 * penalty.mean()
        loss.backward()
        return w.grad, x.grad
    same(run, rtol=1e-9)


def test_grad_with_respect_to_intermediate():
    def run(m):
        a = m.tensor(X, requires_grad=True)
        h = a.exp()
        y = (h * h * a).sum()
        return m.autograd.grad(y, [h, a])
    same(run)


def test_grad_of_several_outputs_with_grad_outputs():
    def run(m):
        a = m.tensor(X, requires_grad=True)
        b = m.tensor(V, requires_grad=True)
        return m.autograd.grad([a * b, (a + b).sum()], [a, b], [m.tensor(V), None])
    same(run)


def test_unused_inputs():
    def run(m, **kw):
        a, b = m.tensor(X, requires_grad=True), m.tensor(V, requires_grad=True)
        return m.autograd.grad((a * 2).sum(), [a, b], **kw)
    same(lambda m: run(m, allow_unused=True))
    same(lambda m: run(m, materialize_grads=True))
    same_error(run)
    same_error(lambda m: run(m, allow_unused=False, materialize_grads=True))


def test_grad_argument_errors():
    same_error(lambda m: m.autograd.grad((m.tensor(X, requires_grad=True) * 2).sum(), []))
    same_error(lambda m: m.autograd.grad((m.tensor(X, requires_grad=True) * 2).sum(), [m.tensor(V)]))
    same_error(lambda m: m.autograd.grad((m.tensor(X, requires_grad=True) * 2).sum(), [[1.0]]))
    same_error(lambda m: m.autograd.grad(m.tensor(X).sum(), [m.tensor(V, requires_grad=True)]))


def test_grad_retains_graph_only_when_asked():
    def run(m):
        a = m.tensor(X, requires_grad=True)
        y = (a * a).sum()
        m.autograd.grad(y, a)
        m.autograd.grad(y, a)
    same_error(run)

    def retained(m):
        a = m.tensor(X, requires_grad=True)
        y = (a * a * a).sum()
        m.autograd.grad(y, a, create_graph=True)  # retain_graph defaults to create_graph
        return m.autograd.grad(y, a)
    same(retained)


def test_nodes_below_inputs_are_not_run_or_freed():
    calls = []

    class Spy(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            (x,) = ctx.saved_tensors
            return g * 2

    a = ember.tensor(X, requires_grad=True)
    h = Spy.apply(a)
    y = (h * h).sum()
    (gh,) = ember.autograd.grad(y, h)
    assert calls == [] and gh.allclose(2 * h)
    h.sum().backward()  # Spy's saved input was not freed by the grad() above
    assert calls == [1] and a.grad.allclose(ember.full_like(a, 2.0))


def test_grad_through_leaf_output():
    def run(m):
        c = m.tensor(X, requires_grad=True)
        return m.autograd.grad(c, c, m.tensor(V))
    same(run)


def test_is_grads_batched():
    def run(m):
        a = m.tensor(X, requires_grad=True)
        y = a.exp() * 3
        eye = m.eye(4, dtype=m.float64)
        return m.autograd.grad(y, a, eye, is_grads_batched=True)
    same(run)


def test_grad_of_integer_power_and_division_chain():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = (x ** 2 / (1 + x * x)).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x)
        return g, h
    same(run, rtol=1e-10)
