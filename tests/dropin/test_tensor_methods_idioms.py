"""The breadth of the Tensor method surface against torch: in-place variants (the result is ``self``), the less common
methods real code calls (``index_put_``, ``put_``, ``masked_scatter_``, ``renorm``, ``*_scatter``, ``index_reduce_``,
``map_``/``apply_``...), storages, ``is_set_to``, the deprecated ``resize``, and their errors."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _np(t):
    return t.detach().float().numpy() if t.dtype in (torch.bfloat16, ember.bfloat16) else t.detach().numpy()


def _same(e, t, rtol=1e-6, atol=1e-6):
    """The same structure, shapes, dtypes and values (Python values compared exactly)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
        np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, rtol, atol)
    else:
        assert e == t


_R = np.random.default_rng(0)
A = _R.standard_normal((3, 4)).astype(np.float32)
B = _R.standard_normal((3, 4)).astype(np.float32)
V3, V4 = _R.standard_normal(3).astype(np.float32), _R.standard_normal(4).astype(np.float32)
S = _R.standard_normal((4, 4)).astype(np.float32)
L = np.arange(12).reshape(3, 4)

# (id, call(lib, *inputs), inputs): each in-place call must return its first input, with torch's values
INPLACE = [
    ("index_put_", lambda l, x: x.index_put_((l.tensor([0, 2]), l.tensor([1, 3])), l.tensor([9., 8.])), (A,)),
    ("index_put_acc", lambda l, x: x.index_put_((l.tensor([0, 0]), l.tensor([1, 1])), l.tensor([9., 8.]),
                                                 accumulate=True), (A,)),
    ("index_put_bool", lambda l, x: x.index_put_((x > 0,), l.tensor(0.)), (A,)),
    ("put_acc", lambda l, x: x.put_(l.tensor([0, 0, -1]), l.tensor([1., 2., 3.]), accumulate=True), (A,)),
    ("masked_scatter_", lambda l, x: x.masked_scatter_(x > 0, l.arange(12.).reshape(3, 4)), (A,)),
    ("as_strided_", lambda l, x: x.as_strided_((2, 2), (1, 2)), (A,)),
    ("resize_", lambda l, x: x.resize_(2, 3), (A,)),
    ("renorm_", lambda l, x: x.renorm_(1, 1, 0.5), (A,)),
    ("addmv_", lambda l, x, m, v: x.addmv_(m, v, beta=0.5, alpha=2), (V3, A, V4)),
    ("addr_", lambda l, x, a, b: x.addr_(a, b), (A, V3, V4)),
    ("lerp_", lambda l, x, y: x.lerp_(y, l.full((4,), 0.7)), (A, B)),
    ("logit_", lambda l, x: x.sigmoid_().logit_(eps=0.1), (A,)),
    ("xlogy_", lambda l, x, y: x.xlogy_(y.abs()), (A, B)),
    ("sgn_", lambda l, x: x.sgn_(), (A,)),
    ("ldexp_", lambda l, x: x.ldexp_(l.tensor([1, 2, 3, -1])), (A,)),
    ("nan_to_num_", lambda l, x: x.div_(0).nan_to_num_(posinf=5.), (A,)),
    ("fill_diagonal_wrap", lambda l, x: x.fill_diagonal_(5., wrap=True), (np.zeros((7, 3), np.float32),)),
    ("tril_", lambda l, x: x.tril_(1), (A,)),
    ("triu_", lambda l, x: x.triu_(-1), (A,)),
    ("index_reduce_prod", lambda l, x: x.index_reduce_(0, l.tensor([0, 0, 2]), l.arange(1., 13).reshape(3, 4),
                                                       "prod"), (A,)),
    ("index_reduce_mean", lambda l, x: x.index_reduce_(0, l.tensor([0, 0, 2]), l.arange(1., 13).reshape(3, 4),
                                                       "mean", include_self=False), (A,)),
    ("scatter_reduce_", lambda l, x: x.scatter_reduce_(1, l.tensor([[0, 0, 1, 1]] * 3),
                                                       l.arange(12.).reshape(3, 4), "amax"), (A,)),
    ("map_", lambda l, x, y: x.map_(y, lambda a, b: a * 2 + b), (A, B)),
    ("map_bcast", lambda l, x: x.map_(l.tensor([1., 2, 3, 4]), lambda a, b: a - b), (A,)),
    ("apply_", lambda l, x: x.apply_(lambda a: a // 2), (L,)),
    ("cumsum_", lambda l, x: x.cumsum_(1, dtype=x.dtype), (A,)),
    ("set_", lambda l, x, y: x.set_(y), (A, B)),
]


@pytest.mark.parametrize("call,inputs", [c[1:] for c in INPLACE], ids=[c[0] for c in INPLACE])
def test_inplace_methods_return_self(call, inputs):
    res = []
    for lib in (ember, torch):
        args = [lib.tensor(a) for a in inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(lib, *args)
        assert out is args[0]
        res.append(out)
    _same(*res)


# (id, call(lib, *inputs), float inputs): values and the gradients of every input against torch
DIFFERENTIABLE = [
    ("index_put", lambda l, x: x.index_put((l.tensor([0, 2]),), l.tensor(5.)), (A,)),
    ("put", lambda l, x, y: x.put(l.tensor([0, 5]), y[0, :2]), (A, B)),
    ("take", lambda l, x: x.take(l.tensor([[0, 5], [11, -1]])), (A,)),
    ("masked_scatter", lambda l, x, y: x.masked_scatter(x > 0, y), (A, B)),
    ("unfold", lambda l, x: x.unfold(1, 2, 1), (A,)),
    ("as_strided", lambda l, x: x.as_strided((2, 2), (1, 2), 1), (A,)),
    ("renorm", lambda l, x: x.renorm(2, 0, 1.0), (A,)),
    ("addmv", lambda l, x, m, v: x.addmv(m, v, beta=0.5, alpha=2), (V3, A, V4)),
    ("addr", lambda l, x, a, b: x.addr(a, b, alpha=2), (A, V3, V4)),
    ("lerp", lambda l, x, y: x.lerp(y, 0.3), (A, B)),
    ("logit", lambda l, x: x.sigmoid().logit(0.3), (A,)),
    ("xlogy", lambda l, x, y: x.xlogy(y.abs()), (A, B)),
    ("sgn", lambda l, x: x.sgn() * x, (A,)),
    ("positive", lambda l, x: x.positive(), (A,)),
    ("diag_embed", lambda l, x: x.diag_embed(1, 0, 2), (A,)),
    ("diagonal_scatter", lambda l, x, y: x.diagonal_scatter(y, 1), (S, V3)),
    ("select_scatter", lambda l, x, y: x.select_scatter(y, 0, 1), (A, V4)),
    ("slice_scatter", lambda l, x, y: x.slice_scatter(y, 1, 0, 4, 2), (A, B[:, :2])),
    ("index_reduce", lambda l, x, s: x.index_reduce(0, l.tensor([0, 0, 2]), s, "prod"), (A, B)),
    ("scatter_reduce_amax", lambda l, x, s: x.scatter_reduce(1, l.tensor([[0, 0, 1, 1]] * 3), s, "amax"), (A, B)),
    ("fill_diagonal_", lambda l, x: (x * 1).fill_diagonal_(0.), (A,)),
    ("masked_scatter_", lambda l, x, y: (x * 1).masked_scatter_(x > 0, y), (A, B)),
    ("resize", lambda l, x: x.resize(4, 3), (A,)),
    ("resize_as", lambda l, x, y: x.t().resize_as(y), (A, B)),
]


@pytest.mark.parametrize("call,inputs", [c[1:] for c in DIFFERENTIABLE], ids=[c[0] for c in DIFFERENTIABLE])
def test_method_values_and_gradients(call, inputs):
    res = []
    for lib in (ember, torch):
        args = [lib.tensor(a, requires_grad=True) for a in inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(lib, *args)
        g = lib.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)).astype(np.float32))
        grads = lib.autograd.grad(out, args, g, allow_unused=True)
        res.append((out, [lib.zeros(a.shape) if d is None else d for a, d in zip(args, grads)]))
    _same(*res, rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda l, x: x.new_tensor([1, 2, 3]),
    lambda l, x: x.long().new_tensor([1.5, 2], dtype=l.float64),
    lambda l, x: x.long().new_full((2,), 3.5),
    lambda l, x: x.new_empty_strided((2, 3), (1, 2)).stride(),
    lambda l, x: x.new_ones([2, 3], dtype=l.int32),
    lambda l, x: x.half().tolist(),
    lambda l, x: x.bfloat16().tolist(),
    lambda l, x: l.tensor([0.1, 1 / 3, 65504., 1e-7]).half().tolist(),
    lambda l, x: (f"{x[0, 0]:.3f}", f"{x[0, :1]}"[:0], f"{l.tensor(3):5d}"),
    lambda l, x: (x.type(), x.half().type(), x.long().type()),
    lambda l, x: x.type("torch.DoubleTensor"),
    lambda l, x: x.type(l.IntTensor),
    lambda l, x: x.frexp(),
    lambda l, x: x.long().ldexp(l.tensor([1, 2, 3, -1])),
    lambda l, x: x.long().nan_to_num(),
    lambda l, x: l.zeros(3, 3, 3).fill_diagonal_(1.),
    lambda l, x: l.tensor([3 + 4j, 0j, -1j]).sgn(),
    lambda l, x: x.scatter_reduce(1, l.tensor([[0, 0, 1, 1]] * 3), l.ones(3, 4), "mean", include_self=False),
])
def test_method_results(call):
    x = [lib.tensor(A) for lib in (ember, torch)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(call(ember, x[0]), call(torch, x[1]))


@pytest.mark.parametrize("call", [
    lambda l, x: x.unfold(1, 5, 1),
    lambda l, x: x.take(l.tensor([12])),
    lambda l, x: x.put_(l.tensor([12]), l.tensor([1.])),
    lambda l, x: x.index_put_((l.tensor([0.]),), l.tensor(3.)),
    lambda l, x: x.index_put_((l.tensor([5]),), l.tensor(3.)),
    lambda l, x: x.masked_scatter_(x > -10, l.ones(3)),
    lambda l, x: x.diagonal_scatter(l.ones(4), 0),
    lambda l, x: x.take(l.tensor([1, 2], dtype=l.int32)),
    lambda l, x: x.select_scatter(l.ones(3), 0, 0),
    lambda l, x: x.index_reduce_(0, l.tensor([0, 0, 2]), l.ones(3, 4), "sum"),
    lambda l, x: x.renorm(-1, 0, 1.),
    lambda l, x: x.float_power_(2),
    lambda l, x: x.long().div_(3),
    lambda l, x: l.zeros(3, 2, 3).fill_diagonal_(1.),
    lambda l, x: l.tensor([1., 2]).is_nonzero(),
    lambda l, x: x.sum_to_size(2, 4),
    lambda l, x: x.sum_to_size(1, 3, 4),
    lambda l, x: x.sum_to_size(5),
    lambda l, x: x.cumsum_(1, dtype=l.float64),
    lambda l, x: x.long().int().cumprod_(0, dtype=l.int64),
    lambda l, x: x.resize(5),
    lambda l, x: x.requires_grad_().resize_(2, 3),
    lambda l, x: x.requires_grad_().apply_(lambda a: a),
])
def test_method_errors(call):
    """torch's exception types."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            call(torch, torch.tensor(A))
        with pytest.raises(type(want.value)):
            call(ember, ember.tensor(A))


def test_cumsum_inplace_dtype_message():
    with pytest.raises(RuntimeError, match="input tensor dtype float and output tensor dtype double should match"):
        ember.ones(3).cumsum_(0, dtype=ember.float64)


@pytest.mark.parametrize("other", [
    lambda x: x, lambda x: x.view(3, 4), lambda x: x[:], lambda x: x.detach(), lambda x: x.view(12),
    lambda x: x.t(), lambda x: x[1:], lambda x: x.clone(), lambda x: x.view(ember.int32 if isinstance(
        x, ember.Tensor) else torch.int32), lambda x: x.new_zeros(3, 4).set_(x), lambda x: x[:0],
])
def test_is_set_to(other):
    """Same memory, offset, size and strides; ``set_`` makes a tensor set to its source."""
    got = []
    for lib in (ember, torch):
        x = lib.arange(12.).reshape(3, 4)
        got.append((x.is_set_to(other(x)), x[:0].is_set_to(other(x)[:0])))
    assert got[0] == got[1]


def test_deprecated_resize_warns_and_keeps_elements():
    """``Tensor.resize`` (not ``resize_``): the elements in a new shape, with a warning and a gradient."""
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = lib.arange(6.).resize(3, 2)
        assert y.tolist() == [[0., 1.], [2., 3.], [4., 5.]]
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            assert lib.arange(6.).resize_as(lib.zeros(2, 3)).shape == (2, 3)


def test_storage_writes_reach_the_tensor():
    """``storage()[i] = v``, ``fill_``, ``copy_`` and ``clone`` on typed and untyped storages, as torch."""
    res = []
    for lib in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = lib.arange(6.)
            s = x[2:].storage()
            s[1] = 9.
            s[3:5] = 7.
            c = s.clone()
            c[0] = -1.
            z = lib.arange(6)
            z.storage()[2] = 2.7
            w = lib.zeros(6)
            assert w.storage().copy_(x.storage()) is not None
            assert s.fill_(2.) is s
            u = lib.zeros(2, dtype=lib.uint8)
            assert u.untyped_storage().fill_(3) is not None
            res.append((c.tolist(), x.tolist(), z.tolist(), w.tolist(), u.tolist(), type(c).__name__,
                        u.untyped_storage().get_device()))
            with pytest.raises(IndexError):
                s[6] = 1.
            with pytest.raises(RuntimeError, match="size does not match"):
                w.storage().copy_(lib.zeros(3).storage())
    assert res[0] == res[1]
    assert res[0][0][:3] == [-1., 9., 2.]


def test_backend_flags_and_module_load():
    """Device predicates of backends ember lacks are False; ``module_load`` copies (or assigns) a state value."""
    names = ["is_xpu", "is_mps", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla", "is_quantized", "is_sparse",
             "is_mkldnn", "is_nested", "is_meta", "is_cuda", "is_cpu"]
    for lib in (ember, torch):
        x = lib.ones(2)
        assert [getattr(x, n) for n in names] == [False] * 12 + [False, True]
        assert x.is_distributed() is False
    for lib in (ember, torch):
        p, v = lib.zeros(3, requires_grad=True), lib.arange(3.)
        with lib.no_grad():
            out = p.module_load(v)
        assert out is not p and out is not v and out.tolist() == [0., 1., 2.] and p.tolist() == [0., 1., 2.]
        assert not out.requires_grad
        out = lib.zeros(3).module_load(v, assign=True)
        assert out.data_ptr() == v.data_ptr() and out is not v
