"""Tensor hooks, node hooks, retain_grad ordering, and the graph's shape (next_functions, names)."""
import pytest
import torch

import ember
from .common import data, same, same_error

A = data(3, seed=1)


def test_leaf_hook_replaces_gradient_and_removes():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        calls = []
        h = a.register_hook(lambda g: calls.append(g.clone()) or g * 10)
        (a * a).sum().backward()
        first = a.grad.clone()
        h.remove()
        (a * 2).sum().backward()
        return first, a.grad, calls
    same(run)


def test_non_leaf_hooks_run_in_order_before_retain_grad():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.retain_grad()  # registered first, but still sees what the hooks return
        x.register_hook(lambda g: g * 10)
        x.register_hook(lambda g: g + 1)
        (x * x).sum().backward()
        return x.grad, a.grad
    same(run)


def test_removed_non_leaf_hook():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.register_hook(lambda g: g * 10).remove()
        x.sum().backward()
        return a.grad
    same(run)


def test_hooks_and_retain_grad_fire_in_autograd_grad():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.retain_grad()
        calls = []
        x.register_hook(lambda g: calls.append("x") or g * 3)
        a.register_hook(lambda g: calls.append("a") or g + 1)
        (ga,) = m.autograd.grad((x * 3).sum(), a)
        return ga, x.grad, a.grad, calls
    same(run)


def test_hook_changing_shape_raises():
    def run(m):
        x = m.tensor(A, requires_grad=True) * 2
        x.register_hook(lambda g: g[:2])
        x.sum().backward()
    same_error(run)
    same_error(lambda m: m.tensor(A).register_hook(lambda g: g))

    def retype(m):
        def to_float(g):
            return g.float()
        x = m.tensor(A, requires_grad=True) * 2
        x.register_hook(to_float)
        x.sum().backward()
    same_error(retype)


def test_hook_handle_as_context_manager():
    a = ember.tensor(A, requires_grad=True)
    with a.register_hook(lambda g: g * 0):
        (a * 1).sum().backward()
    (a * 1).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0]


def test_node_pre_and_post_hooks():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a * 2).exp()
        seen = []

        def pre(grad_outputs):
            seen.append(("pre", grad_outputs[0].clone()))
            return (grad_outputs[0] * 2,)

        def post(grad_inputs, grad_outputs):
            seen.append(("post", grad_inputs[0].clone(), grad_outputs[0].clone()))
        h1 = y.grad_fn.register_prehook(pre)
        y.grad_fn.register_hook(post)
        y.sum().backward(retain_graph=True)
        h1.remove()
        y.sum().backward()
        return a.grad, seen
    same(run)


def test_post_hook_replaces_grad_inputs():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a * 2).exp()
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 1,))
        y.sum().backward()
        return a.grad
    same(run)


def test_accumulate_grad_prehook():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        acc = (a * 2).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: (go[0] + 100,))
        (a * 2).sum().backward()
        return a.grad
    same(run)


def test_next_functions_and_names():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(A)
        y = ((a * b + 1).exp() - a).sum()
        names = []

        def walk(node):
            if node is None:
                names.append(None)
                return
            names.append(node.name())
            for nxt, nr in node.next_functions:
                names.append(nr)
                walk(nxt)
        walk(y.grad_fn)
        acc1 = (a * 2).grad_fn.next_functions[0][0]
        acc2 = (a * 3).grad_fn.next_functions[0][0]
        return names, acc1 is acc2, acc1.variable is a, (-a).grad_fn.name(), (a / 2).grad_fn.name()
    e, t = run(ember), run(torch)
    assert e == t


def test_grad_fn_is_a_graph_node_with_metadata():
    a = ember.tensor(A, requires_grad=True)
    node = (a * 2).grad_fn
    assert isinstance(node, ember.autograd.graph.Node)
    node.metadata["k"] = 1
    assert node.metadata == {"k": 1}
    edge = ember.autograd.graph.get_gradient_edge(a)
    assert type(edge.node).__name__ == "AccumulateGrad" and edge.output_nr == 0


@pytest.mark.parametrize("m", [ember, torch], ids=["ember", "torch"])
def test_hook_on_tensor_used_twice_runs_once_on_the_sum(m):
    a = m.tensor(A, requires_grad=True)
    x = a * 1
    calls = []
    x.register_hook(lambda g: calls.append(g.tolist()))
    (x * 2 + x * 3).sum().backward()
    assert calls == [[5.0, 5.0, 5.0]]
