"""Tensor.backward / autograd.backward, leaves and requires_grad, detach and retain_grad, against torch."""
import warnings

import numpy as np
import pytest

import ember
from .common import data, same, same_error

A, B = data(3, seed=1), data(3, seed=2)


def test_backward_values_and_accumulation():
    def run(m):
        a, b = m.tensor(A, requires_grad=True), m.tensor(B, requires_grad=True)
        (a * b).exp().sum().backward()
        first = (a.grad.clone(), b.grad.clone())
        (a * a).sum().backward()  # accumulates into a.grad only
        return first, a.grad, b.grad
    same(run)


def test_second_backward_through_freed_graph_raises():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a * 2).exp().sum()
        y.backward()
        y.backward()
    same_error(run)


def test_retain_graph_allows_second_backward():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a * a).exp().sum()
        y.backward(retain_graph=True)
        y.backward()
        return a.grad
    same(run)


def test_graph_without_saved_tensors_backward_twice():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a + 1).sum()
        y.backward()
        y.backward()  # nothing was saved, so nothing was freed
        return a.grad
    same(run)


def test_non_scalar_needs_gradient():
    same_error(lambda m: (m.tensor(A, requires_grad=True) * 2).backward())


def test_non_scalar_with_gradient():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        (a * a).backward(m.tensor(B))
        return a.grad
    same(run)


def test_gradient_shape_mismatch():
    same_error(lambda m: (m.tensor(A, requires_grad=True) * 2).backward(m.ones(2, dtype=m.float64)))


def test_gradient_dtype_is_cast_to_output_dtype():
    def run(m):
        a = m.tensor(A, dtype=m.float32, requires_grad=True)
        (a * 2).backward(m.ones(3, dtype=m.float64))
        return a.grad
    same(run)


def test_backward_on_tensor_without_grad_raises():
    same_error(lambda m: m.tensor(A).sum().backward())
    same_error(lambda m: (m.tensor(A) * 2).sum().backward())


def test_broadcasting_is_undone():
    def run(m):
        a = m.tensor(data(3, 1, seed=3), requires_grad=True)
        b = m.tensor(data(4, seed=4), requires_grad=True)
        c = m.tensor(2.5, dtype=m.float64, requires_grad=True)
        ((a + b) * c * m.tensor(data(2, 3, 4, seed=5))).sum().backward()
        return a.grad, b.grad, c.grad
    same(run)


def test_grads_cast_to_leaf_dtype():
    def run(m):
        a = m.tensor(A, dtype=m.float32, requires_grad=True)
        b = m.tensor(B, dtype=m.float64, requires_grad=True)
        (a * b).sum().backward()
        return a.grad, b.grad
    same(run, rtol=1e-5)


def test_backward_inputs_leaf_and_non_leaf():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(B, requires_grad=True)
        x = a * b
        (x * x).sum().backward(inputs=[x, b])
        return a.grad, b.grad, x.grad
    same(run)
    same_error(lambda m: (m.tensor(A, requires_grad=True) * 2).sum().backward(inputs=[]))


def test_autograd_backward_several_roots():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        m.autograd.backward([(a * 2).sum(), a * a], [None, m.tensor(B)])
        return a.grad
    same(run)
    same_error(lambda m: m.autograd.backward([(m.tensor(A, requires_grad=True) * 2).sum()] * 2,
                                             [m.tensor(1.0, dtype=m.float64)]))


def test_backward_on_leaf_copies_gradient():
    def run(m):
        c = m.tensor(A, requires_grad=True)
        g = m.tensor(B)
        c.backward(g)
        assert c.grad is not g and c.grad.data_ptr() != g.data_ptr()
        return c.grad
    same(run)


def test_grad_of_shared_subexpression_does_not_alias():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(B, requires_grad=True)
        (a + b).sum().backward()  # the same gradient flows to both leaves
        a.grad.add_(1)
        return a.grad, b.grad
    same(run)


def test_create_graph_backward_makes_differentiable_grad():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (a * a * a).sum().backward(create_graph=True)
        assert a.grad.requires_grad
        g = a.grad
        a.grad = None
        g.sum().backward()
        return g, a.grad
    same(run)


def test_create_graph_backward_warns():
    a = ember.tensor(A, requires_grad=True)
    with pytest.warns(UserWarning, match="reference cycle"):
        (a * a).sum().backward(create_graph=True)


# -- leaves, requires_grad ---------------------------------------------------------------------------------------
def test_leaf_and_requires_grad_propagation():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        p = m.tensor(B)
        x, y = a * 2, p * 2
        with m.no_grad():
            z = a * 2
        return [(t.is_leaf, t.requires_grad, t.grad_fn is None) for t in (a, p, x, y, z, x.detach())]
    e, t = run(ember), run(__import__("torch"))
    assert e == t


def test_integer_results_do_not_require_grad():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        return [(t.requires_grad, t.is_leaf) for t in (a > 0, a.argmax(), (a * 2).long())]
    assert run(ember) == run(__import__("torch"))


def test_integer_tensors_cannot_require_grad():
    same_error(lambda m: m.tensor([1, 2]).requires_grad_())

    def set_flag(m):
        t = m.tensor([1, 2])
        t.requires_grad = True
    same_error(set_flag)
    assert ember.tensor([1, 2]).requires_grad_(False).requires_grad is False


def test_requires_grad_false_on_non_leaf_raises():
    same_error(lambda m: (m.tensor(A, requires_grad=True) * 2).requires_grad_(False))
    x = ember.tensor(A, requires_grad=True) * 2
    x.requires_grad_(True)  # allowed: it already requires grad
    assert x.requires_grad and not x.is_leaf


def test_requires_grad_toggle_on_leaf():
    def run(m):
        a = m.tensor(A)
        a.requires_grad_()
        (a * a).sum().backward()
        a.requires_grad = False
        return a.grad, (a * 2).requires_grad
    same(run)


# -- detach ------------------------------------------------------------------------------------------------------
def test_detach_shares_memory_and_version_counter():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        d = x.detach()
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        d.add_(1)
        return x.detach().clone(), x._version, d._version
    same(run)


def test_detach_in_place_write_invalidates_saved_tensor():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        y = x * x
        x.detach().mul_(3)
        y.sum().backward()
    same_error(run)


def test_detach_():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.detach_()
        return x.is_leaf, x.requires_grad, x.grad_fn
    assert run(ember) == run(__import__("torch"))
    same_error(lambda m: m.tensor(A).view(3).detach_(), match="Can't detach views in-place. Use detach() instead.")


# -- retain_grad -------------------------------------------------------------------------------------------------
def test_retain_grad_accumulates_on_non_leaf():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.retain_grad()
        x.retain_grad()  # idempotent
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad, a.grad, x.retains_grad, a.retains_grad
    same(run)


def test_retain_grad_on_leaf_is_noop_and_requires_grad_needed():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        a.retain_grad()
        (a * 3).sum().backward()
        return a.grad, a.retains_grad
    same(run)
    same_error(lambda m: m.tensor(A).retain_grad())


def test_retained_grad_is_not_an_alias():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a + 0
        x.retain_grad()
        x.sum().backward()
        x.grad.mul_(5)
        return x.grad, a.grad
    same(run)


def test_non_leaf_grad_is_none_without_retain_grad():
    a = ember.tensor(A, requires_grad=True)
    x = a * 2
    x.sum().backward()
    assert x.grad is None and a.grad is not None
    assert np.allclose(a.grad.numpy(), 2)
