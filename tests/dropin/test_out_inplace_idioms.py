"""``out=`` and in-place idioms against torch: resizing and casting ``out``, aliasing, the autograd errors, in-place
type promotion and broadcasting, expanded and overlapping memory, version counters, views, ``set_``/``resize_``."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _run(lib, fn):
    """``fn(lib)``'s result (or exception) and the messages of the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is what gets compared
            r = e
    return r, [str(w.message) for w in caught]


def _same(e, t):
    if isinstance(t, Exception):
        assert type(e) is type(t), (e, t)
        assert str(e).split("\n")[0].replace("ember", "torch") == str(t).split("\n")[0]
    elif isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), e
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
        assert e.stride() == t.stride()
        np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=1e-6, atol=1e-6)
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b)
    else:
        assert e == t


def _check(fn, warned=None):
    """``fn`` gives the same result, error and warnings under ember and torch."""
    (e, ew), (t, tw) = _run(ember, fn), _run(torch, fn)
    _same(e, t)
    assert [m.split(" (Triggered")[0] for m in ew] == [m.split(" (Triggered")[0] for m in tw]
    if warned is not None:
        assert bool(tw) is warned
    return e


def _x(lib, shape=(2, 3), seed=0):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _spd(lib):
    a = np.random.default_rng(3).standard_normal((3, 3)).astype(np.float32)
    return lib.tensor(a @ a.T + 3 * np.eye(3, dtype=np.float32))


OUT_OPS = {
    "exp": lambda lib, o: lib.exp(_x(lib), out=o),
    "add": lambda lib, o: lib.add(_x(lib), _x(lib, (3,), 1), alpha=2, out=o),
    "mul": lambda lib, o: lib.mul(_x(lib), 3, out=o),
    "sum_dim": lambda lib, o: lib.sum(_x(lib), 1, out=o),
    "sum_keepdim": lambda lib, o: lib.sum(_x(lib), 1, keepdim=True, out=o),
    "mean": lambda lib, o: lib.mean(_x(lib), 0, out=o),
    "amax": lambda lib, o: lib.amax(_x(lib), 1, out=o),
    "logsumexp": lambda lib, o: lib.logsumexp(_x(lib), 1, out=o),
    "matmul": lambda lib, o: lib.matmul(_x(lib), _x(lib, (3, 4), 1), out=o),
    "mm": lambda lib, o: lib.mm(_x(lib), _x(lib, (3, 4), 1), out=o),
    "bmm": lambda lib, o: lib.bmm(_x(lib, (2, 2, 3)), _x(lib, (2, 3, 2), 1), out=o),
    "addmm": lambda lib, o: lib.addmm(_x(lib, (2, 4), 2), _x(lib), _x(lib, (3, 4), 1), out=o),
    "mv": lambda lib, o: lib.mv(_x(lib), _x(lib, (3,), 1), out=o),
    "cat": lambda lib, o: lib.cat([_x(lib), _x(lib, (1, 3), 1)], 0, out=o),
    "stack": lambda lib, o: lib.stack([_x(lib), _x(lib, seed=1)], 1, out=o),
    "where": lambda lib, o: lib.where(_x(lib) > 0, _x(lib), _x(lib, seed=1), out=o),
    "clamp": lambda lib, o: lib.clamp(_x(lib), -0.5, 0.5, out=o),
    "cumsum": lambda lib, o: lib.cumsum(_x(lib), 1, out=o),
    "pow": lambda lib, o: lib.pow(_x(lib), 2, out=o),
    "index_select": lambda lib, o: lib.index_select(_x(lib), 1, lib.tensor([2, 0]), out=o),
    "gather": lambda lib, o: lib.gather(_x(lib), 1, lib.tensor([[2], [0]]), out=o),
    "linalg.inv": lambda lib, o: lib.linalg.inv(_spd(lib), out=o).contiguous(),
    "linalg.solve": lambda lib, o: lib.linalg.solve(_spd(lib), _x(lib, (3,)), out=o),
    "linalg.norm": lambda lib, o: lib.linalg.norm(_x(lib), out=o),
}


@pytest.mark.parametrize("name", sorted(OUT_OPS))
@pytest.mark.parametrize("start", ["empty", "wrong_shape", "right_shape"])
def test_out_across_op_families(name, start):
    """The op writes into ``out`` and returns it; a non-empty ``out`` of another shape is resized with a warning."""
    def fn(lib):
        shape = tuple(OUT_OPS[name](lib, None).shape)
        o = {"empty": lib.empty(0), "wrong_shape": lib.full((7,), 5.), "right_shape": lib.zeros(shape)}[start]
        r = OUT_OPS[name](lib, o)
        return (r is o) if name != "linalg.inv" else True, o.contiguous()
    e = _check(fn, warned=start == "wrong_shape")
    assert e[0] is True


@pytest.mark.parametrize("op,has_indices", [
    (lambda lib, o: lib.sort(_x(lib), 1, out=o), True),
    (lambda lib, o: lib.topk(_x(lib), 2, out=o), True),
    (lambda lib, o: lib.max(_x(lib), 1, keepdim=True, out=o), True),
    (lambda lib, o: lib.min(_x(lib), 0, out=o), True),
    (lambda lib, o: lib.linalg.eigh(_spd(lib), out=o), False),
    (lambda lib, o: lib.linalg.qr(_spd(lib), out=o), False),
    (lambda lib, o: lib.linalg.svd(_spd(lib), out=o), False),
])
def test_out_tuples_are_the_given_tensors(op, has_indices):
    def fn(lib):
        n = len(op(lib, None))
        outs = tuple(lib.empty(0, dtype=lib.long if has_indices and i == 1 else lib.float32) for i in range(n))
        r = op(lib, outs)
        return type(r).__name__.replace("_out", ""), [a is b for a, b in zip(r, outs)], \
            [t.abs().contiguous() for t in outs]
    e = _check(fn)
    assert all(e[1])


@pytest.mark.parametrize("op", [
    lambda lib: lib.argmax(_x(lib), 1, out=lib.empty(0)),
    lambda lib: lib.argmin(_x(lib), 1, out=lib.empty(0, dtype=lib.int32)),
    lambda lib: lib.max(_x(lib), 1, out=(lib.empty(0), lib.empty(0))),
    lambda lib: lib.sort(_x(lib), out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.long))),
    lambda lib: lib.topk(_x(lib), 2, out=(lib.empty(0), lib.empty(0))),
    lambda lib: lib.linalg.qr(_spd(lib), out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.float64))),
    lambda lib: lib.linalg.eigh(_spd(lib), out=(lib.empty(0, dtype=lib.float64), lib.empty(0))),
])
def test_out_of_index_and_decomposition_ops_needs_their_dtype(op):
    assert isinstance(_check(op), RuntimeError)


@pytest.mark.parametrize("op", [
    lambda lib: lib.add(_x(lib), 1, out=lib.empty(0, dtype=lib.long)),
    lambda lib: lib.sum(_x(lib), 1, out=lib.empty(0, dtype=lib.long)),
    lambda lib: lib.exp(_x(lib), out=lib.empty(0, dtype=lib.int32)),
    lambda lib: lib.add(_x(lib), 1, out=lib.empty(0, dtype=lib.float64)),
    lambda lib: lib.mul(_x(lib), 2, out=lib.empty(0, dtype=lib.float16)),
    lambda lib: lib.add(lib.arange(6).reshape(2, 3), 1, out=lib.empty(0)),
    lambda lib: lib.sum(lib.arange(6).reshape(2, 3), 1, out=lib.empty(0)),
    lambda lib: lib.cumsum(lib.arange(6), 0, out=lib.empty(0)),
    lambda lib: lib.eq(_x(lib), 0, out=lib.empty(0)),
    lambda lib: lib.logical_and(lib.tensor([True, True]), lib.tensor([True, False]), out=lib.empty(0, dtype=lib.long)),
    lambda lib: lib.div(lib.arange(4), 2, out=lib.empty(0, dtype=lib.long)),
    lambda lib: lib.div(lib.arange(4), 2, rounding_mode="floor", out=lib.empty(0, dtype=lib.long)),
    lambda lib: lib.sqrt(lib.arange(4), out=lib.empty(0, dtype=lib.long)),
])
def test_out_of_another_dtype_casts_or_raises(op):
    _check(op)


def test_out_resize_of_a_view_writes_its_base():
    """A view ``out`` of the wrong shape is resized contiguously in its base's memory, with the warning."""
    def fn(lib):
        b = lib.zeros(4, 4)
        o = b[1:, :2]
        r = lib.neg(lib.ones(2, 2), out=o)
        b2 = lib.zeros(4, 4)
        lib.exp(lib.zeros(2, 2), out=b2.t())
        return r is o, o, b, b2
    assert _check(fn, warned=True)[0] is True


def test_out_keeps_the_layout_of_a_right_shaped_transposed_out():
    def fn(lib):
        o = lib.zeros(3, 2).t()
        lib.mul(_x(lib), 2, out=o)
        return o
    _check(fn, warned=False)


@pytest.mark.parametrize("factory", [
    lambda lib, o: lib.zeros(2, 3, out=o), lambda lib, o: lib.ones(4, out=o), lambda lib, o: lib.arange(6, out=o),
    lambda lib, o: lib.arange(5, out=o), lambda lib, o: lib.arange(5, out=o.view(5, 1)),
    lambda lib, o: lib.full((2, 3), 1.5, out=o), lambda lib, o: lib.eye(3, out=o)])
def test_factories_resize_out_without_the_out_warning(factory):
    """Factories resize ``out`` silently; ``arange`` warns where the number of elements differs."""
    def fn(lib):
        o = lib.full((5,), 9.)
        return factory(lib, o) is o, o
    _check(fn)


def test_out_aliasing_an_input():
    def fn(lib):
        x, y = _x(lib), _x(lib, (3,), 1)
        r1 = lib.add(x, y, out=x)
        z = _x(lib, seed=2)
        r2 = lib.tanh(z, out=z)
        w = _x(lib, (3, 3), 4)
        lib.matmul(w, w, out=w)
        return r1 is x, r2 is z, x, z, w
    _check(fn)


@pytest.mark.parametrize("op", [
    lambda lib, x, o: lib.mul(x, 2, out=o), lambda lib, x, o: lib.exp(x, out=o),
    lambda lib, x, o: lib.add(x, x, out=o), lambda lib, x, o: lib.sum(x, 1, out=o),
    lambda lib, x, o: lib.matmul(x, x.t(), out=o), lambda lib, x, o: lib.cat([x, x], out=o),
    lambda lib, x, o: lib.clamp(x, 0, 1, out=o), lambda lib, x, o: lib.cumsum(x, 0, out=o)])
@pytest.mark.parametrize("who", ["input", "out"])
def test_out_with_autograd_raises_naming_the_op(op, who):
    def fn(lib):
        x = _x(lib).requires_grad_(who == "input")
        return op(lib, x, lib.empty(0, requires_grad=who == "out"))
    assert isinstance(_check(fn), RuntimeError)

    def no_grad(lib):  # the usual way out: compute under no_grad
        x = _x(lib).requires_grad_(who == "input")
        o = lib.empty(0, requires_grad=who == "out")
        with lib.no_grad():
            r = op(lib, x, o)
        return r is o, o, o.requires_grad, o.grad_fn is None
    _check(no_grad)


INPLACE = {
    "add_bcast_error": lambda lib: lib.ones(3).add_(lib.ones(2, 3)),
    "iadd_bcast_error": lambda lib: lib.ones(3).__iadd__(lib.ones(2, 3)),
    "mul_bcast_ok": lambda lib: _x(lib).mul_(lib.tensor([1., 2, 3])),
    "int_iadd_float": lambda lib: lib.arange(3).__iadd__(1.5),
    "int_iadd_float_tensor": lambda lib: lib.arange(3).__iadd__(lib.ones(3)),
    "int_imul_float": lambda lib: lib.arange(3).__imul__(2.0),
    "int_itruediv": lambda lib: lib.arange(3).__itruediv__(2),
    "int_ifloordiv": lambda lib: lib.arange(5).__ifloordiv__(2),
    "int_sqrt_": lambda lib: lib.arange(3).sqrt_(),
    "int_div_floor_": lambda lib: lib.arange(5).div_(2, rounding_mode="floor"),
    "int_pow_float_": lambda lib: lib.arange(3).pow_(0.5),
    "int_iadd_0d_float": lambda lib: lib.arange(3).__iadd__(lib.tensor(1.5)),
    "float_iadd_int": lambda lib: lib.ones(3).__iadd__(lib.arange(3)),
    "f32_iadd_f64": lambda lib: lib.ones(3).__iadd__(lib.full((3,), 0.1, dtype=lib.float64)),
    "f16_add_f32": lambda lib: lib.ones(3, dtype=lib.float16).add_(lib.full((3,), 0.1)),
    "int32_iadd_int64": lambda lib: lib.ones(3, dtype=lib.int32).__iadd__(lib.ones(3, dtype=lib.int64)),
    "uint8_iadd_wraps": lambda lib: lib.full((3,), 200, dtype=lib.uint8).__iadd__(100),
    "float_iadd_complex": lambda lib: lib.ones(3).__iadd__(1j),
    "bool_iadd_int": lambda lib: lib.ones(3, dtype=lib.bool).__iadd__(1),
    "bool_iadd_bool": lambda lib: lib.tensor([True, False]).__iadd__(lib.tensor([True, True])),
    "bool_ior": lambda lib: lib.tensor([True, False]).__ior__(lib.tensor([False, True])),
    "bool_iand_int": lambda lib: lib.tensor([True, False]).__iand__(lib.tensor([1, 1])),
    "int_iand_bool": lambda lib: lib.tensor([3, 5]).__iand__(lib.tensor([True, False])),
    "bool_isub": lambda lib: lib.tensor([True]).__isub__(lib.tensor([True])),
    "bool_neg_": lambda lib: lib.tensor([True, False]).neg_(),
    "clamp_tensor_bounds": lambda lib: _x(lib).clamp_(min=lib.tensor([-0.5, 0, 0.5]), max=lib.tensor(1.)),
    "clamp_bcast_error": lambda lib: lib.ones(3).clamp_(min=lib.zeros(2, 3)),
    "ilshift": lambda lib: lib.tensor([1, 2]).__ilshift__(1),
    "imod": lambda lib: lib.arange(5.).__imod__(2),
    "ipow_tensor": lambda lib: lib.arange(3.).__ipow__(lib.tensor([1., 2, 3])),
    "self_mul_": lambda lib: _x(lib).mul_(_x(lib)),
    "copy_bcast": lambda lib: lib.zeros(2, 3).copy_(lib.tensor([1., 2, 3])),
    "copy_bcast_error": lambda lib: lib.zeros(3).copy_(lib.ones(2, 3)),
    "copy_size_error": lambda lib: lib.zeros(3).copy_(lib.ones(4)),
    "copy_to_long": lambda lib: lib.zeros(3, dtype=lib.long).copy_(lib.tensor([1.7, -2.7, 3.2])),
    "copy_to_bool": lambda lib: lib.zeros(3, dtype=lib.bool).copy_(lib.tensor([1.7, 0, -3.2])),
    "copy_device_str": lambda lib: lib.zeros(3).copy_(lib.ones(3, device="cpu"), non_blocking=True),
    "copy_not_tensor": lambda lib: lib.zeros(3).copy_([1, 2, 3]),
    "fill_0d": lambda lib: lib.zeros(3).fill_(lib.tensor(2.5)),
    "fill_1d_error": lambda lib: lib.zeros(3).fill_(lib.tensor([2.5])),
    "fill_int_float": lambda lib: lib.zeros(3, dtype=lib.long).fill_(2.7),
    "zero_": lambda lib: _x(lib).zero_(),
    "index_add_": lambda lib: lib.zeros(3, 2).index_add_(0, lib.tensor([0, 2, 0]), lib.ones(3, 2), alpha=2),
    "index_copy_": lambda lib: lib.zeros(3, 2).index_copy_(0, lib.tensor([2, 0]), _x(lib, (2, 2))),
    "index_fill_": lambda lib: lib.zeros(3, 2).index_fill_(1, lib.tensor([1]), -1),
    "index_fill_0d": lambda lib: lib.zeros(3, 2).index_fill_(1, lib.tensor([1]), lib.tensor(-1.)),
    "index_put_acc": lambda lib: lib.zeros(3).index_put_((lib.tensor([0, 0, 2]),), lib.tensor([1., 2, 3]),
                                                        accumulate=True),
    "masked_fill_": lambda lib: _x(lib).masked_fill_(_x(lib) > 0, float("-inf")),
    "masked_fill_bcast": lambda lib: _x(lib).masked_fill_(lib.tensor([True, False, True]), 0),
    "masked_fill_bcast_error": lambda lib: lib.ones(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 0),
    "masked_fill_long_mask": lambda lib: lib.ones(3).masked_fill_(lib.ones(3, dtype=lib.long), 0),
    "masked_fill_1d_value_error": lambda lib: lib.ones(3).masked_fill_(lib.tensor([True, False, True]),
                                                                       lib.tensor([5.])),
    "masked_scatter_": lambda lib: lib.zeros(4).masked_scatter_(lib.tensor([True, False, True, False]),
                                                                lib.tensor([1., 2, 3])),
    "scatter_value": lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[2], [0]]), 5.),
    "scatter_src": lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[2, 1], [0, 0]]), _x(lib, (2, 2))),
    "scatter_reduce_add": lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[2, 2], [0, 0]]), lib.ones(2, 2),
                                                               reduce="add"),
    "scatter_add_": lambda lib: lib.zeros(2, 3).scatter_add_(1, lib.tensor([[2, 2], [0, 0]]), lib.ones(2, 2)),
    "scatter_reduce_amax": lambda lib: lib.zeros(2, 3).scatter_reduce_(
        1, lib.tensor([[2, 2], [0, 0]]), lib.tensor([[1., 4], [3, 2]]), "amax", include_self=False),
    "scatter_dtype_error": lambda lib: lib.zeros(2, 3).scatter_(1, lib.tensor([[2], [0]]),
                                                                lib.ones(2, 1, dtype=lib.float64)),
    "addcdiv_": lambda lib: _x(lib).addcdiv_(lib.ones(3), lib.full((2, 3), 2.), value=3),
    "lerp_": lambda lib: _x(lib).lerp_(lib.ones(3), 0.5),
    "clamp_min_": lambda lib: _x(lib).clamp_min_(0),
    "fill_diagonal_": lambda lib: lib.zeros(3, 4).fill_diagonal_(2),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_op_values_dtypes_and_errors(name):
    """Each in-place op returns its tensor itself, with torch's values and dtype, or raises torch's error."""
    (e, _), (t, _) = _run(ember, INPLACE[name]), _run(torch, INPLACE[name])  # torch warns some things once a process
    _same(e, t)


def test_inplace_clamp_of_int_by_float_bounds_raises():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type"):
            lib.arange(5).clamp_(0.5, 3.5)


def test_inplace_returns_the_same_object():
    def fn(lib):
        x = _x(lib)
        ids = {id(x)}
        for op in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__"):
            x = getattr(x, op)(2)
            ids.add(id(x))
        y = x
        x += 1
        methods = [getattr(x, m)(*a) is x for m, a in [("add_", (1,)), ("clamp_", (0, 1)), ("zero_", ()),
                                                         ("fill_", (2,)), ("copy_", (y,)), ("sigmoid_", ()),
                                                         ("uniform_", ()), ("requires_grad_", ())]]
        return len(ids), x is y, methods, type(lib.relu_(lib.zeros(2))).__name__
    _check(fn)


@pytest.mark.parametrize("op", [
    lambda x, lib: x.add_(1), lambda x, lib: x.mul_(2), lambda x, lib: x.copy_(lib.ones(2, 3)),
    lambda x, lib: x.__iadd__(x), lambda x, lib: lib.add(lib.ones(2, 3), 1, out=x),
    lambda x, lib: x.zero_(), lambda x, lib: x.fill_(1.5), lambda x, lib: x.fill_(lib.tensor(2.)),
])
def test_inplace_on_expanded_tensors(op):
    """Arithmetic into elements sharing memory raises; filling them with one value is allowed."""
    def fn(lib):
        base = lib.zeros(1, 3)
        x = base.expand(2, 3)
        op(x, lib)
        return x, base
    _check(fn)


@pytest.mark.parametrize("op", [
    lambda b: b[1:].copy_(b[:-1]), lambda b: b[:3].copy_(b[3:]), lambda b: b.view(2, 3).t().copy_(b.view(3, 2)),
    lambda b: b[::2].copy_(b[1::2]), lambda b: b[1:3].copy_(b[0:4:2]), lambda b: b.copy_(b),
    lambda b: b.view(2, 3).copy_(b.view(2, 3)[0]), lambda b: b[:2].copy_(b[1]),
    lambda b: b[1:4].copy_(b[0:3].flip(0)),
])
def test_copy_between_overlapping_views(op):
    """A copy whose source partly overlaps its destination raises; the same memory, or a strided one, is allowed."""
    def fn(lib):
        b = lib.arange(6.)
        op(b)
        return b
    _check(fn)


def test_inplace_on_leaf_and_views_of_leaf_raise():
    for op in (lambda x: x.add_(1), lambda x: x[0].add_(1), lambda x: x[:2].__setitem__(0, 5.),
               lambda x: x.zero_(), lambda x: x.copy_(x.detach() * 2), lambda x: x.set_(x.detach())):
        _check(lambda lib: op(lib.ones(3, requires_grad=True)))


def test_optimizer_idiom_under_no_grad_keeps_leaves():
    def fn(lib):
        p = lib.nn.Parameter(_x(lib))
        p.grad = _x(lib, seed=1)
        v0 = p._version
        with lib.no_grad():
            p.add_(p.grad, alpha=-0.1)
            p.mul_(0.9)
            p.addcmul_(p.grad, p.grad, value=0.5)
            p.copy_(p * 2)
            p[0] = 7.
        steps = p._version - v0
        p.data.mul_(2)
        p.data.zero_()
        return p.detach().clone(), type(p).__name__, p.is_leaf, p.requires_grad, p.grad_fn is None, steps, \
            p._version - v0
    _check(fn)


def test_version_counter_bumps():
    def fn(lib):
        x = lib.zeros(3)
        vs = [x._version]
        x.add_(1); vs.append(x._version)  # noqa: E702
        x += 1; vs.append(x._version)  # noqa: E702
        x[0] = 2; vs.append(x._version)  # noqa: E702
        v = x[1:]
        v.mul_(2); vs += [x._version, v._version]  # noqa: E702
        lib.add(x, 1, out=x); vs.append(x._version)  # noqa: E702
        x.zero_(); vs.append(x._version)  # noqa: E702
        x.fill_(1); vs.append(x._version)  # noqa: E702
        x.detach().add_(1); vs.append(x._version)  # noqa: E702
        x.set_(lib.ones(2)); vs.append(x._version)  # noqa: E702
        return vs, x
    _check(fn)


def test_saved_tensor_modified_in_place_raises_at_backward():
    def fn(lib):
        a = _x(lib).requires_grad_()
        y = a.sigmoid()
        y.mul_(2)
        y.sum().backward()
    assert isinstance(_check(fn), RuntimeError)


def test_inplace_through_views_is_visible_both_ways():
    def fn(lib):
        b = lib.zeros(2, 3)
        col = b[:, 1]
        col += 5
        b[0, 1] = 9
        b.t()[2].fill_(1)
        b.view(-1)[::4] = -1
        a, c = b.unbind(0)
        c.add_(2)
        b.diagonal().mul_(10)
        return b, col, a, c
    _check(fn)


def test_inplace_on_non_leaf_gradients():
    def fn(lib):
        a = _x(lib).requires_grad_()
        x = a * 2
        y = x
        x += a
        x[:, 0] *= 3
        x.clamp_(max=2)
        x.backward(_x(lib, seed=5))
        return x is y, x, a.grad
    _check(fn)


def test_set_resize_and_resize_as():
    def fn(lib):
        x, y = lib.zeros(3), lib.arange(6.)
        r = x.set_(y)
        y[0] = 9
        z = lib.zeros(2).set_(y.untyped_storage(), 1, (2, 2), (1, 2))
        w = lib.zeros(2).set_(y, 2, (3,))
        e = lib.zeros(3).set_()
        a = lib.arange(6.)
        a.resize_(2, 2)
        b = lib.arange(6.).resize_as_(lib.zeros(3, 2))
        return r is x, x, x.data_ptr() == y.data_ptr(), z, w, e, a, b
    _check(fn)
    _check(lambda lib: lib.zeros(3).set_(lib.arange(3)))
    _check(lambda lib: lib.arange(6., requires_grad=True).resize_(2, 3))
