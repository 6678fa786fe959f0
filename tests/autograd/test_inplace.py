"""Version counters and in-place operations: saved-tensor checks, leaves, history rebasing, views."""
import torch

import ember
from .common import data, same, same_error

A, B = data(3, seed=1), data(3, seed=2)


def test_inplace_on_leaf_requiring_grad_raises():
    same_error(lambda m: m.tensor(A, requires_grad=True).add_(1))
    same_error(lambda m: m.tensor(A, requires_grad=True).mul_(m.tensor(B)))


def test_inplace_on_leaf_under_no_grad_bumps_version():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        with m.no_grad():
            a.mul_(2)
        return a, a._version, a.requires_grad, a.is_leaf
    same(run)


def test_modified_saved_input_raises():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        c = m.tensor(B)
        y = a * c
        c.add_(1)
        y.sum().backward()
    same_error(run)


def test_modified_saved_non_leaf_raises():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        y = x * x
        x.add_(1)
        y.sum().backward()
    same_error(run)


def test_modified_saved_output_raises():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        y = (a * 2).exp()
        y.mul_(2)
        y.sum().backward()
    same_error(run)


def test_self_multiply_in_place_raises():
    def run(m):
        x = m.tensor(A, requires_grad=True) * 2
        x.mul_(x)
        x.sum().backward()
    same_error(run)


def test_rebased_history_gives_torch_gradients():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(B, requires_grad=True)
        x = a * 2
        x.add_(b)
        x.mul_(b)
        x.sub_(a, alpha=0.5)
        x.mul_(0.3)
        x.exp_()
        y = (x * x).sum()
        y.backward()
        return x, x._version, x.grad_fn.name(), a.grad, b.grad
    same(run)


def test_inplace_op_saving_its_result_then_modified_raises():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.exp_()  # saves its result: x itself
        x.mul_(2)
        x.sum().backward()
    same_error(run)


def test_inplace_into_plain_tensor_joins_the_graph():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        p = m.zeros(3, dtype=m.float64)
        p.add_(a)
        p.mul_(a)
        assert not p.is_leaf and p.requires_grad
        p.sum().backward()
        return a.grad
    same(run)


def test_version_counter_counts_inplace_ops():
    def run(m):
        x = m.tensor(A)
        v = [x._version]
        x.add_(1)
        x.mul_(2)
        x += 1
        v.append(x._version)
        y = x.view(3)
        y.sub_(1)
        v.append((x._version, y._version))
        return v
    e, t = run(ember), run(torch)
    assert e == t


def test_inplace_through_view_updates_base_gradient():
    def run(m):
        a = m.tensor(data(2, 3, seed=3), requires_grad=True)
        x = a * 2
        v = x.view(6)
        v.mul_(m.tensor(data(6, seed=4)))
        (x * x).sum().backward()
        return x, a.grad, x._version, v._version
    same(run)


def test_inplace_on_view_of_leaf_raises():
    same_error(lambda m: m.tensor(A, requires_grad=True).view(3).add_(1))


def test_retain_grad_follows_inplace():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        x.retain_grad()
        x.mul_(3)
        (x * 1).sum().backward()
        return x.grad, a.grad
    same(run)


def test_inplace_result_cast_and_shape_errors():
    same_error(lambda m: m.tensor([1, 2, 3]).add_(0.5))
    same_error(lambda m: m.tensor(A).add_(m.tensor(data(2, 3))))


def test_out_of_place_clone_protects_saved_tensor():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        x = a * 2
        y = x.clone() * x
        x.clone().add_(1)
        y.sum().backward()
        return a.grad
    same(run)
