"""register_multi_grad_hook, register_post_accumulate_grad_hook, set_multithreading_enabled against torch."""
import pytest

import ember
from .common import data, same, same_error


def _abcd(lib):
    a = lib.tensor(data(2, 3, seed=1), requires_grad=True)
    b = lib.tensor(data(2, 3, seed=2), requires_grad=True)
    return a, b, a * b, a * b


def test_multi_grad_hook_all():
    def run(lib):
        a, b, c, d = _abcd(lib)
        log = []
        h = lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: log.append(
            [None if g is None else g.clone() for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward(retain_graph=True)
        return log
    same(run)


def test_multi_grad_hook_any():
    def run(lib):
        a, b, c, d = _abcd(lib)
        log = []
        h = lib.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: log.append(g.clone()), mode="any")
        (c * 3).sum().backward(retain_graph=True)
        d.sum().backward(retain_graph=True)  # reaches a and b only
        with h:
            pass
        c.sum().backward()
        return log
    same(run)


def test_multi_grad_hook_bad_mode():
    same_error(lambda lib: lib.autograd.graph.register_multi_grad_hook(_abcd(lib)[:2], print, mode="some"))


def test_post_accumulate_grad_hook_runs_after_accumulation():
    def run(lib):
        w = lib.tensor(data(3, seed=5), requires_grad=True)
        seen = []
        w.register_hook(lambda g: seen.append(("pre", w.grad)) and None)
        h = w.register_post_accumulate_grad_hook(lambda p: seen.append(("post", p.grad.clone())))
        (w * w).sum().backward()
        (w * 3).sum().backward()
        h.remove()
        (w * 3).sum().backward()
        return seen, w.grad
    same(run)


def test_post_accumulate_grad_hook_optimizer_in_backward():
    def run(lib):
        lib.manual_seed(0)
        w = lib.tensor(data(4, 3, seed=6), requires_grad=True)
        b = lib.tensor(data(4, seed=7), requires_grad=True)
        opts = {p: lib.optim.SGD([p], lr=0.1) for p in (w, b)}

        def step(p):
            opts[p].step()
            opts[p].zero_grad()
        for p in (w, b):
            p.register_post_accumulate_grad_hook(step)
        x = lib.tensor(data(3, seed=8))
        for _ in range(3):
            ((w @ x + b) ** 2).sum().backward()
        return w, b, w.grad, b.grad
    same(run)


def test_post_accumulate_grad_hook_with_inputs_and_not_with_grad():
    def run(lib):
        a = lib.tensor(data(3, seed=9), requires_grad=True)
        b = lib.tensor(data(3, seed=10), requires_grad=True)
        calls = []
        a.register_post_accumulate_grad_hook(lambda p: calls.append("a"))
        b.register_post_accumulate_grad_hook(lambda p: calls.append("b"))
        (a * b).sum().backward(inputs=[b])
        lib.autograd.grad((a * b).sum(), a)
        return calls
    same(run)


def test_post_accumulate_grad_hook_errors():
    same_error(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(print))
    same_error(lambda lib: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print))

    def returns_value(lib):
        x = lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: 1)
        (x * 2).sum().backward()
    same_error(returns_value)


def test_gradient_edge_and_increment_version():
    def run(lib):
        x = lib.tensor(data(3, seed=11), requires_grad=True)
        y = x.exp()
        edge = lib.autograd.graph.get_gradient_edge(y)
        leaf_edge = lib.autograd.graph.get_gradient_edge(x)
        v = x._version
        lib.autograd.graph.increment_version(x)
        return (edge.node is y.grad_fn, edge.output_nr, leaf_edge.node.name(),
                isinstance(edge.node, lib.autograd.graph.Node), x._version - v)
    same(run)


@pytest.mark.parametrize("mode", [True, False])
def test_set_multithreading_enabled(mode):
    def run(lib):
        with lib.autograd.set_multithreading_enabled(mode):
            x = lib.tensor(data(3, seed=12), requires_grad=True)
            (x * x).sum().backward()
        with lib.autograd.grad_mode.set_multithreading_enabled(mode):
            pass
        return x.grad
    same(run)
    assert ember.autograd.grad_mode._MULTITHREADING == [True]
