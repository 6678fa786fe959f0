"""autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against torch."""
import pytest

from .common import data, same, same_error

X, Y, V = data(3, seed=1), data(3, seed=2), data(3, seed=3)


def _f(x, y):
    return (x * y).sin() + x.exp() * y


def _scalar(x, y):
    return ((x * y).tanh() * x).sum() + (y ** 3).sum()


def test_vjp_and_jvp():
    same(lambda m: m.autograd.functional.vjp(_f, (m.tensor(X), m.tensor(Y)), m.tensor(V)))
    same(lambda m: m.autograd.functional.vjp(lambda x: (x ** 2).sum(), m.tensor(X)))
    same(lambda m: m.autograd.functional.jvp(_f, (m.tensor(X), m.tensor(Y)), (m.tensor(V), m.tensor(X))))
    same(lambda m: m.autograd.functional.jvp(lambda x: x.exp() * 2, m.tensor(X), m.tensor(V)))


def test_jacobian_shapes_and_values():
    same(lambda m: m.autograd.functional.jacobian(lambda x: x.exp() * x, m.tensor(X)))
    same(lambda m: m.autograd.functional.jacobian(_f, (m.tensor(X), m.tensor(Y))))
    same(lambda m: m.autograd.functional.jacobian(lambda x, y: (x * y, (x + y).sum()), (m.tensor(X), m.tensor(Y))))
    same(lambda m: m.autograd.functional.jacobian(lambda x: x.reshape(3, 1) * x, m.tensor(X)))


def test_hessian_vhp_hvp():
    same(lambda m: m.autograd.functional.hessian(lambda x: (x.sin() * x).sum(), m.tensor(X)), rtol=1e-10)
    same(lambda m: m.autograd.functional.hessian(_scalar, (m.tensor(X), m.tensor(Y))), rtol=1e-10)
    same(lambda m: m.autograd.functional.vhp(_scalar, (m.tensor(X), m.tensor(Y)), (m.tensor(V), m.tensor(X))),
         rtol=1e-10)
    same(lambda m: m.autograd.functional.hvp(_scalar, (m.tensor(X), m.tensor(Y)), (m.tensor(V), m.tensor(X))),
         rtol=1e-10)


def test_create_graph_keeps_results_differentiable():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        _, g = m.autograd.functional.vjp(lambda x: (x ** 3).sum(), x, create_graph=True)
        assert g.requires_grad
        g.sum().backward()
        return x.grad
    same(run)


@pytest.mark.parametrize("strict", [False, True])
def test_unused_input(strict):
    def run(m):
        return m.autograd.functional.jacobian(lambda x, y: x * 2, (m.tensor(X), m.tensor(Y)), strict=strict)
    (same_error if strict else same)(run)


def test_v_required_for_non_scalar_output():
    same_error(lambda m: m.autograd.functional.vjp(lambda x: x * 2, m.tensor(X)))
