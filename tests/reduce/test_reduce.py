"""Reductions beyond the op table: errors and their messages, named tuples, methods, in-place and out=,
second-order gradients, and half-precision accumulation."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops.softmax import softmin


def _raises_like(fn):
    """Calls ``fn(torch)`` and ``fn(ember)``: both must raise the same exception type with the same message."""
    with pytest.raises(Exception) as t:
        fn(torch)
    with pytest.raises(type(t.value)) as e:
        fn(ember)
    assert str(e.value) == str(t.value).split("\n")[0] or type(t.value) is TypeError, (str(e.value), str(t.value))


def _x(lib, shape=(2, 3), dtype="float32", fill=None):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) if fill is None else np.full(shape, fill, dtype)
    return lib.tensor(a)


BAD_DIM = [
    lambda m: m.sum(_x(m), 2), lambda m: m.mean(_x(m), (0, -3)), lambda m: m.prod(_x(m), -3),
    lambda m: m.amax(_x(m), 2), lambda m: m.max(_x(m), 2), lambda m: m.argmax(_x(m), 2),
    lambda m: m.median(_x(m), 2), lambda m: m.mode(_x(m), 2), lambda m: m.var(_x(m), 2),
    lambda m: m.logsumexp(_x(m), 2), lambda m: m.cumsum(_x(m), 2), lambda m: m.cummax(_x(m), -3),
    lambda m: m.softmax(_x(m), 2), lambda m: m.log_softmax(_x(m), -3), lambda m: m.norm(_x(m), 2, 2),
    lambda m: m.all(_x(m), 2), lambda m: m.count_nonzero(_x(m), 2), lambda m: m.quantile(_x(m), 0.5, 2),
    lambda m: m.aminmax(_x(m), dim=2), lambda m: m.logcumsumexp(_x(m), 2), lambda m: m.std(_x(m, ()), 1),
]


@pytest.mark.parametrize("fn", BAD_DIM)
def test_dim_out_of_range(fn):
    _raises_like(fn)


ERRORS = [
    lambda m: m.sum(_x(m), (1, -1)),  # repeated dim
    lambda m: m.mean(_x(m, dtype="int64")),
    lambda m: m.mean(_x(m), dtype=m.int32),
    lambda m: m.nanmean(_x(m, dtype="int32")),
    lambda m: m.var(_x(m, dtype="int64")),
    lambda m: m.std(_x(m, dtype="int64"), 0),
    lambda m: m.norm(_x(m, dtype="int64")),
    lambda m: m.norm(_x(m), dtype=m.float16),
    lambda m: m.norm(_x(m), "nuc", 1),
    lambda m: m.norm(_x(m), "abc"),
    lambda m: m.argmax(_x(m, dtype="bool")),
    lambda m: m.logcumsumexp(_x(m, dtype="int64"), 0),
    lambda m: m.softmax(_x(m, dtype="int64"), 1),
    lambda m: m.log_softmax(_x(m, dtype="int32"), 0),
    lambda m: m.median(_x(m, dtype="bool")),
    lambda m: m.median(_x(m, dtype="bool"), 0),
    lambda m: m.quantile(_x(m, dtype="int64"), 0.5),
    lambda m: m.quantile(_x(m), 1.5),
    lambda m: m.quantile(_x(m), m.tensor([0.5, -0.1])),
    lambda m: m.quantile(_x(m), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.quantile(_x(m), m.tensor([[0.5]])),
    lambda m: m.quantile(_x(m), 0.5, interpolation="cubic"),
    lambda m: m.nanquantile(_x(m, (0,)), 0.5),
    lambda m: m.max(_x(m, (0, 3))),
    lambda m: m.max(_x(m, (0, 3)), 0),
    lambda m: m.min(_x(m, (2, 0, 3)), -2),
    lambda m: m.amax(_x(m, (2, 0, 3)), (-2,)),
    lambda m: m.amin(_x(m, (0,))),
    lambda m: m.argmax(_x(m, (0, 3))),
    lambda m: m.argmin(_x(m, (0, 3)), 0),
    lambda m: m.aminmax(_x(m, (0, 3))),
    lambda m: m.aminmax(_x(m, (0, 3)), dim=0),
    lambda m: m.median(_x(m, (0, 3)), 0),
    lambda m: m.mode(_x(m, (0, 3)), 0),
    lambda m: m.norm(_x(m, (0, 3)), float("inf")),
    lambda m: m.norm(_x(m, (0, 3)), -1, 0),
    lambda m: m.max(_x(m), 1.5),
    lambda m: m.prod(_x(m), (0, 1)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torch(fn):
    _raises_like(fn)


@pytest.mark.parametrize("name,fields", [("max", ("values", "indices")), ("min", ("values", "indices")),
                                         ("median", ("values", "indices")), ("nanmedian", ("values", "indices")),
                                         ("mode", ("values", "indices")), ("cummax", ("values", "indices")),
                                         ("cummin", ("values", "indices")), ("aminmax", ("min", "max"))])
def test_named_tuples(name, fields):
    x = ember.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = ember.aminmax(x, dim=1) if name == "aminmax" else getattr(ember, name)(x, 1)
    t = torch.aminmax(torch.tensor(x.tolist()), dim=1) if name == "aminmax" else \
        getattr(torch, name)(torch.tensor(x.tolist()), 1)
    assert isinstance(r, tuple) and len(r) == 2 and type(r).__name__ == name
    assert type(r) is getattr(ember.return_types, name)
    first, second = r
    assert first is r[0] is getattr(r, fields[0]) and second is r[1] is getattr(r, fields[1])
    assert first.tolist() == t[0].tolist() and second.tolist() == t[1].tolist()
    assert repr(r).startswith(f"ember.return_types.{name}(\n{fields[0]}=tensor(")
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back[0].tolist() == first.tolist()


def test_max_min_forms():
    a, b = ember.tensor([1.0, 5.0, 3.0]), ember.tensor([4.0, 2.0, 3.0])
    assert ember.max(a, b).tolist() == [4.0, 5.0, 3.0]
    assert ember.min(a, b).tolist() == [1.0, 2.0, 3.0]
    assert a.max(b).tolist() == [4.0, 5.0, 3.0]
    assert ember.max(a, other=b).tolist() == [4.0, 5.0, 3.0]
    assert a.max().item() == 5.0 and a.min().item() == 1.0
    v, i = a.max(0, keepdim=True)
    assert v.shape == (1,) and i.tolist() == [1]
    v, i = a.max(dim=0)
    assert v.shape == () and i.item() == 1
    with pytest.raises(TypeError):
        ember.max(a, keepdim=True)


def test_methods_registered():
    names = ("sum mean nansum nanmean prod max min amax amin aminmax argmax argmin var std norm logsumexp cumsum "
             "cumprod cummax cummin logcumsumexp all any count_nonzero median nanmedian mode quantile nanquantile "
             "softmax log_softmax cumsum_ cumprod_").split()
    assert [n for n in names if not hasattr(ember.Tensor, n)] == []
    x = ember.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    assert x.softmax(-1).sum(-1).tolist() == pytest.approx([1.0, 1.0])
    assert x.max(dim=1).indices.tolist() == [2, 1]
    assert x.quantile(0.5, dim=1).tolist() == [1.0, 4.0]


def test_inplace_and_out():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0]
    x.cumprod_(0)
    assert x.tolist() == [1.0, 3.0, 18.0]
    i = ember.tensor([1, 2, 3], dtype=ember.int32)
    i.cumsum_(0)
    assert i.dtype is ember.int32 and i.tolist() == [1, 3, 6]
    out = ember.empty(0)
    r = ember.sum(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=out)
    assert r is out and out.tolist() == [3.0, 7.0]
    out = ember.empty(2, dtype=ember.int64)
    ember.argmax(ember.tensor([[1.0, 2.0], [4.0, 3.0]]), 1, out=out)
    assert out.tolist() == [1, 0]


def test_dtypes_of_results():
    i32 = ember.tensor([1, 2, 3], dtype=ember.int32)
    b = ember.tensor([True, False, True])
    assert i32.sum().dtype is ember.int64 and b.sum().dtype is ember.int64
    assert i32.sum(dtype=ember.int32).dtype is ember.int32
    assert i32.prod().dtype is ember.int64 and i32.cumsum(0).dtype is ember.int64
    assert i32.mean(dtype=ember.float64).dtype is ember.float64
    assert ember.tensor([1, 0], dtype=ember.uint8).all().dtype is ember.uint8
    assert b.any().dtype is ember.bool and i32.count_nonzero().dtype is ember.int64
    assert i32.logsumexp(0).dtype is ember.float32
    h = ember.tensor([1.0, 2.0], dtype=ember.float16)
    assert h.softmax(0, dtype=ember.float32).dtype is ember.float32
    assert h.sum().dtype is ember.float16 and h.mean().dtype is ember.float16


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_accumulates_in_float32(dtype):
    x = ember.ones(4096, dtype=getattr(ember, dtype))  # a half accumulator saturates at 2048 (256 for bfloat16)
    assert x.sum().item() == 4096
    assert x.cumsum(0)[-1].item() == 4096
    assert x.mean().item() == 1
    assert ember.ones(4097, dtype=getattr(ember, dtype)).norm().item() == pytest.approx(64.0, rel=1e-2)


def test_stable_at_large_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.tensor([[1e4, 1e4 - 1.0, -1e4], [-1e4, 0.0, 1e4]])
        assert np.isfinite(x.softmax(1).numpy()).all()
        assert x.log_softmax(1)[1].tolist() == pytest.approx([-2e4, -1e4, 0.0])
        assert x.logsumexp(1).tolist() == pytest.approx([1e4 + np.log1p(np.exp(-1.0)), 1e4])
        assert x.logcumsumexp(1)[1].tolist() == pytest.approx([-1e4, 0.0, 1e4])
        assert ember.tensor([-float("inf")] * 2).logsumexp(0).item() == -float("inf")


def test_norm_forms():
    a = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    x, t = ember.tensor(a), torch.tensor(a)
    for args, kw in [((), {}), (("fro",), {}), (("fro", (0, 1)), {"keepdim": True}), (("nuc",), {}),
                     ((None, 1), {}), ((2.5, 0), {"dtype": ember.float64}), ((float("inf"),), {})]:
        kw_t = {k: (torch.float64 if v is ember.float64 else v) for k, v in kw.items()}
        np.testing.assert_allclose(x.norm(*args, **kw).numpy(), t.norm(*args, **kw_t).numpy(), rtol=1e-12)


def test_var_degrees_of_freedom_warning():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = ember.var(ember.tensor([1.0]))
    assert np.isnan(r.item())
    assert ember.std(ember.tensor([1.0, 3.0]), correction=0).item() == 1.0
    assert ember.var(ember.tensor([1.0, 3.0]), unbiased=False).item() == 1.0
    assert ember.var(ember.tensor([[1.0, 3.0]]), 1, True, True).shape == (1, 1)


def test_softmin_implicit_dim():
    x = ember.tensor([[1.0, 2.0], [3.0, 5.0]])
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        r = softmin(x)
    np.testing.assert_allclose(r.numpy(), torch.nn.functional.softmin(torch.tensor(x.tolist()), 1).numpy(), 1e-6)


def _second_order(fn, x_np, seed=0):
    """d/dx <grad_x <f(x), u>, v> in ember and torch (create_graph through the backward)."""
    rng = np.random.default_rng(seed)
    results = []
    for lib in (ember, torch):
        x = lib.tensor(x_np, dtype=lib.float64, requires_grad=True)
        y = fn(lib, x)
        y = y[0] if isinstance(y, tuple) else y
        u = lib.tensor(rng.standard_normal(tuple(y.shape)), dtype=lib.float64)
        v = lib.tensor(np.random.default_rng(seed + 1).standard_normal(x_np.shape), dtype=lib.float64)
        (g,) = lib.autograd.grad(y, x, u, create_graph=True)
        (gg,) = lib.autograd.grad((g * v).sum(), x)
        results.append(gg.detach().numpy())
        rng = np.random.default_rng(seed)
    return results


SECOND = {
    "softmax": (lambda m, x: m.softmax(x, 1), None),
    "log_softmax": (lambda m, x: m.log_softmax(x, 0), None),
    "logsumexp": (lambda m, x: m.logsumexp(x, 1), None),
    "var": (lambda m, x: m.var(x, 1), None),
    "std": (lambda m, x: m.std(x, 0, correction=0), None),
    "mean": (lambda m, x: (m.mean(x, 1) * m.mean(x, 1)), None),
    "norm2": (lambda m, x: m.norm(x, dim=1), None),
    "norm3": (lambda m, x: m.norm(x, 3, dim=1), None),
    "prod": (lambda m, x: m.prod(x, 1), None),
    "prod_zero": (lambda m, x: m.prod(x), np.array([[1.5, 0.0, 2.0], [0.5, 3.0, -1.0]])),
    "prod_zeros_dim": (lambda m, x: m.prod(x, 1), np.array([[1.5, 0.0, 2.0], [0.0, 3.0, 0.0]])),
    "cumsum": (lambda m, x: m.cumsum(x, 1) ** 2, None),
    "cumprod": (lambda m, x: m.cumprod(x, 1), None),
    "cumprod_zeros": (lambda m, x: m.cumprod(x, 1), np.array([[1.5, 0.0, 2.0, 0.7], [0.5, 3.0, 0.0, 0.0]])),
    "logcumsumexp": (lambda m, x: m.logcumsumexp(x, 1), None),
    "amax": (lambda m, x: m.amax(x, 1) ** 2, None),
    "max_dim": (lambda m, x: m.max(x, 0)[0] ** 2, None),
    "median": (lambda m, x: m.median(x, 1)[0] ** 2, None),
    "quantile": (lambda m, x: m.quantile(x, 0.3, dim=1) ** 2, None),
    "cummax": (lambda m, x: m.cummax(x, 1)[0] ** 2, None),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_order_gradients(name):
    fn, x = SECOND[name]
    if x is None:
        x = np.random.default_rng(1).uniform(0.3, 2.0, (3, 4)) * np.array([1, -1, 1, 1])
    e, t = _second_order(fn, x)
    np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-8)


def test_grad_through_indices_of_ties():
    # max/median with a dim send the gradient to the returned index only; without a dim it is split evenly
    x = ember.tensor([[2.0, 7.0, 7.0]], requires_grad=True)
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0]]
    x.grad = None
    x.max().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5]]
    x.grad = None
    x.amax(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5]]


def test_numpy_style_keywords():
    a = np.arange(6.0).reshape(2, 3)
    x, t = ember.tensor(a), torch.tensor(a)
    for name in ("sum", "mean", "amax", "argmax", "std", "prod", "cumsum", "softmax", "logsumexp", "all", "median"):
        e, r = getattr(ember, name)(x, axis=1), getattr(torch, name)(t, axis=1)
        e, r = (e[0], r[0]) if isinstance(r, tuple) else (e, r)
        np.testing.assert_allclose(e.numpy(), r.numpy())
    assert x.sum(axis=0, keepdims=True).shape == (1, 3)
