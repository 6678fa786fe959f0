"""saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks against torch."""
import torch

import ember
from .common import data, same, same_error

A = data(3, seed=2)


def _custom(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            (x2,) = ctx.saved_tensors  # each access unpacks again
            return g * 3 * x * x2
    return Cube


def test_pack_and_unpack_calls_of_a_custom_function():
    def run(lib):
        calls = []

        def pack(t):
            calls.append(("pack", list(t.shape)))
            return t

        def unpack(t):
            calls.append(("unpack",))
            return t
        Cube = _custom(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            Cube.apply(lib.tensor(A))  # no graph recorded: nothing saved
            x = lib.tensor(A, requires_grad=True)
            y = Cube.apply(x)
        calls.append("backward")
        y.sum().backward()
        return calls, x.grad
    same(run)


def test_pack_hook_changes_the_saved_values():
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            x = lib.tensor(A, requires_grad=True)
            y = x * x
        y.backward(lib.tensor(data(3, seed=3)))
        return x.grad
    same(run)


def test_hooks_apply_only_inside_and_innermost_wins():
    def run(lib):
        log = []
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t)
        inner = lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t)
        x = lib.tensor(A, requires_grad=True)
        Cube = _custom(lib)
        with outer:
            Cube.apply(x)
            with inner:
                Cube.apply(x)
            Cube.apply(x)
        Cube.apply(x)
        return log
    same(run)


def test_packed_value_may_be_any_object_and_builtin_ops_differentiate():
    def run(lib):
        store = {}

        def pack(t):
            key = len(store)
            store[key] = t.detach().clone()
            return key

        def unpack(key):
            return store[key]
        x = lib.tensor(A, requires_grad=True)
        w = lib.tensor(data(3, 3, seed=4), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (lib.tanh(w @ x) * x.exp()).sum()
        y.backward()
        return x.grad, w.grad
    same(run)


def test_double_backward_through_unpacked_leaf_and_output():
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            x = lib.tensor(A, requires_grad=True)
            y = (x ** 3).sum() + x.exp().sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    same(run)


def test_save_on_cpu_is_transparent():
    def run(lib):
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            x = lib.tensor(A, requires_grad=True)
            y = (x.sigmoid() * x).sum()
        y.backward()
        return y, x.grad
    same(run)


def test_unpack_must_return_a_tensor():
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: (t,)):
            x = lib.tensor(A, requires_grad=True)
            y = _custom(lib).apply(x)
        y.sum().backward()
    same_error(run)


def test_saved_tensors_after_release_raise():
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            x = lib.tensor(A, requires_grad=True)
            y = _custom(lib).apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors
    same_error(run)


def test_disable_saved_tensors_hooks():
    def enter_inside(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    same_error(enter_inside)

    def disable_inside(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with lib.autograd.graph.disable_saved_tensors_hooks("no hooks either"):
                pass
    same_error(disable_inside)

    def after(lib):  # leaving restores them
        with lib.autograd.graph.disable_saved_tensors_hooks("x"):
            pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            x = lib.tensor(A, requires_grad=True)
            (x * x).sum().backward()
        return x.grad
    same(after)


def test_no_hooks_left_behind():
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    assert ember.autograd.function.SAVED_HOOKS == []
    assert torch.autograd.graph.saved_tensors_hooks is not None
