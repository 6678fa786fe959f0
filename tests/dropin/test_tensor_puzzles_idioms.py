"""Tensor manipulation idioms (rearrangements, strided windows, advanced indexing, gather/scatter, sorting and
searching, cumulative ops, type promotion, views and layouts) against torch."""
import numpy as np
import pytest
import torch

import ember


def _np(t):
    t = t.detach()
    return t.numpy() if t.dtype.is_complex or str(t.dtype).endswith("bool") else t.double().numpy()


def _same(e, t, rtol=1e-6, atol=1e-7, strides=True):
    """``e`` (ember) and ``t`` (torch) agree in type, shape, dtype, strides and values (nested tuples/lists too)."""
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, rtol, atol, strides)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if strides and t.numel():  # (an empty tensor's strides are a convention)
        assert e.stride() == t.stride()
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _both(fn, **kw):
    """Runs ``fn(lib)`` with ember and torch and compares the results."""
    _same(fn(ember), fn(torch), **kw)


def _raises(fn, exc):
    """``fn(lib)`` raises ``exc`` under both libraries."""
    for lib in (ember, torch):
        with pytest.raises(exc):
            fn(lib)


def _grads(fn, *arrays, rtol=1e-6, atol=1e-7):
    """Output of ``fn(lib, *tensors)`` and the gradients of the inputs for a random output gradient."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        g = lib.tensor(np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(arrays[0].dtype))
        res.append((y,) + lib.autograd.grad(y, xs, g))
    _same(res[0], res[1], rtol=rtol, atol=atol, strides=False)


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- layouts: strides of index results, contiguous outputs ------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (5,), ()])
def test_nonzero_is_column_major_and_where_rows_are_contiguous(shape):
    """nonzero() is laid out (1, n); the tuple forms (nonzero(as_tuple=True), where(cond)) hold contiguous rows."""
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(np.float32)
    _both(lambda lib: lib.nonzero(lib.tensor(a)))
    _both(lambda lib: lib.argwhere(lib.tensor(a)))
    _both(lambda lib: lib.where(lib.tensor(a) > 0))
    _both(lambda lib: lib.tensor(a).nonzero(as_tuple=True))


@pytest.mark.parametrize("key", [
    (None,), (Ellipsis, None), (None, None, slice(1, None), None, slice(None, None, 2), None), (slice(None), None, 2),
    (1, None), (None, slice(None), None),
])
@pytest.mark.parametrize("transposed", [False, True])
def test_none_in_an_index_inserts_dims_as_unsqueeze(key, transposed):
    """``x[None]`` and friends: the new dimension's stride is the one ``unsqueeze`` gives, and the view writes
    through to its base."""
    def run(lib):
        x = lib.arange(12.).view(3, 4)
        x = x.t() if transposed else x
        v = x[key]
        v.mul_(2)
        return v, v.storage_offset(), x
    _both(run)
    _grads(lambda lib, x: x[key] * 3, _r(3, 4))


def test_ops_torch_returns_contiguous_for_a_transposed_input():
    """cumsum/cumprod, masked_fill, tile with ones and narrow_copy return contiguous tensors, so ``.view`` works."""
    ops = [lambda lib, x: x.cumsum(0), lambda lib, x: x.cumprod(1), lambda lib, x: x.cumsum(1, dtype=lib.float64),
           lambda lib, x: x.masked_fill(x > 0, 0.), lambda lib, x: x.masked_fill(lib.tensor(True), 1.),
           lambda lib, x: x.tile(1), lambda lib, x: x.repeat(1, 1), lambda lib, x: x.narrow_copy(0, 0, 2)]
    for op in ops:
        _both(lambda lib: op(lib, lib.tensor(_r(3, 4)).t()).view(-1))
        _both(lambda lib: op(lib, lib.tensor(_r(3, 4)).t()))
    _both(lambda lib: (lib.tensor(3.).cumsum(0), lib.tensor(3.).masked_fill(lib.tensor(True), 1.),
                       lib.tensor(3.).tile(()), lib.tensor(2.).cumprod(-1)))


def test_clone_memory_formats_and_view_pointers():
    def run(lib):
        x = lib.arange(48.).view(2, 3, 2, 4)
        c = x.clone(memory_format=lib.channels_last)
        t = x.transpose(0, 2)
        return [c.stride(), c.is_contiguous(), c.is_contiguous(memory_format=lib.channels_last), c.contiguous().stride(),
                c.clone().stride(), t.clone().stride(), t.clone(memory_format=lib.contiguous_format).stride(),
                x[:, ::2].clone().stride(), x.expand(2, 2, 3, 2, 4).clone().stride(),
                x[1].data_ptr() - x.data_ptr(), x.diagonal(1, 2, 3).storage_offset(), x.unflatten(3, (2, 2)).stride(),
                x.movedim((0, 1), (2, 3)).stride(), x.narrow(3, 1, 2).storage_offset(), x.unfold(3, 2, 1).stride()]
    _both(run)
    _raises(lambda lib: lib.zeros(2, 3, 4).clone(memory_format=lib.channels_last), RuntimeError)


# -- setitem with Python numbers: torch's overflow checks --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int8", "uint8", "int32", "int64", "bool",
                                   "complex64"])
@pytest.mark.parametrize("value", [70000., 1e300, 2 ** 60, 2 ** 63, -2 ** 63, -1, -255, 300, 3.7, -3.5,
                                   float("nan"), float("inf"), 1e300j, 2 + 1j, True])
def test_setitem_number_overflow(dtype, value):
    """``x[key] = number`` for int, slice, index-tensor and mask keys: the value wraps, truncates or raises
    as torch's conversion does."""
    out = []
    for lib in (ember, torch):
        res = []
        for key in (0, slice(None), lib.tensor([1]), lib.tensor([True, False])):
            t = lib.zeros(2, dtype=getattr(lib, dtype))
            try:
                t[key] = value
                res.append(t.tolist())
            except (RuntimeError, ValueError, OverflowError, TypeError) as e:
                res.append(type(e).__name__)
        out.append(res)
    assert str(out[0]) == str(out[1])


def test_fill_checks_complex_parts():
    """Filling complex64 checks both parts against float's range; a complex number fills a bool tensor by
    being non-zero."""
    _raises(lambda lib: lib.zeros(2, dtype=lib.complex64).fill_(1e300j), RuntimeError)
    _raises(lambda lib: lib.full((2,), 1e300, dtype=lib.complex64), RuntimeError)
    _both(lambda lib: (lib.zeros(2, dtype=lib.complex128).fill_(1e300j),
                       lib.zeros(2, dtype=lib.bool).fill_(1j), lib.full((1,), 0j, dtype=lib.bool)))


# -- promotion of out=, alpha and value --------------------------------------------------------------------------------
def test_reductions_and_scans_compute_in_the_dtype_of_out():
    def run(lib):
        res = []
        for op, src, dt in [("cumsum", [1.7, 2.6], "int64"), ("cumprod", [1.7, 2.6], "int32"),
                            ("cumsum", [1, 2], "float64"), ("cumsum", [True, True], "int32"),
                            ("sum", [1.5, 2.7], "int64"), ("sum", [1, 2], "float16"), ("prod", [1.5, 2.7], "int64"),
                            ("sum", [1.5, 2.7], "float64")]:
            o = lib.empty(2 if op.startswith("cum") else (), dtype=getattr(lib, dt))
            r = getattr(lib, op)(lib.tensor(src), 0, out=o)
            res += [r, o]
        return res
    _both(run)
    _raises(lambda lib: lib.cumsum(lib.tensor([1.5]), 0, dtype=lib.float32, out=lib.empty(1, dtype=lib.int64)),
            RuntimeError)


def test_integer_multipliers_take_no_part_in_promotion():
    """``value=``/``alpha=`` on integer tensors are truncated to integers and never make the result float."""
    def run(lib):
        i = lib.tensor([5, 6])
        return [lib.tensor([2]).addcmul(lib.tensor([3]), lib.tensor([2]), value=1.7),
                lib.tensor([2]).addcmul_(lib.tensor([3]), lib.tensor([2]), value=0.5),
                lib.tensor([2]).addcmul(lib.tensor([3]), lib.tensor([2]), value=-0.7),
                lib.tensor([2]).addcmul(lib.tensor([3]), lib.tensor([2.]), value=1.5),
                i.clone().index_add_(0, lib.tensor([0]), lib.tensor([2]), alpha=1.7),
                i.index_add(0, lib.tensor([0, 0]), lib.tensor([2, 3]), alpha=-1.2),
                lib.tensor([5.]).index_add(0, lib.tensor([0]), lib.tensor([2.]), alpha=0.5)]
    _both(run)
    _raises(lambda lib: lib.tensor([5, 6]).add(lib.tensor([1, 1]), alpha=0.5), RuntimeError)


@pytest.mark.parametrize("case", [
    lambda lib: lib.tensor([1, 2, -3]) + 1.5, lambda lib: lib.tensor([1, 2, -3]) // -2,
    lambda lib: lib.tensor([1, 2, -3]) % -2, lambda lib: lib.tensor([-3.5, 3.5]) % -2,
    lambda lib: lib.tensor([1, 2, -3]) / 2, lambda lib: lib.div(lib.tensor([-7, 7]), 2, rounding_mode="trunc"),
    lambda lib: lib.tensor([True, False]) + lib.tensor([True, True]), lambda lib: lib.tensor([True, False]) + 1.5,
    lambda lib: lib.tensor([250], dtype=lib.uint8) + 10, lambda lib: lib.tensor([250], dtype=lib.uint8) + lib.tensor(10),
    lambda lib: lib.tensor([250], dtype=lib.uint8) + lib.tensor([1], dtype=lib.int8),
    lambda lib: lib.tensor([1], dtype=lib.float16) + lib.tensor(10., dtype=lib.float64),
    lambda lib: lib.tensor([1], dtype=lib.int32) + lib.tensor(1., dtype=lib.float64),
    lambda lib: lib.tensor([3], dtype=lib.int16) + lib.tensor(200, dtype=lib.uint8),
    lambda lib: lib.tensor([1.], dtype=lib.bfloat16) + lib.tensor([2.], dtype=lib.float16),
    lambda lib: lib.where(lib.tensor([True, False]), 1., 0), lambda lib: lib.where(lib.tensor([True, False]), 1, 0),
    lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int32), 2.5),
    lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1., 2.], dtype=lib.float16), 2.5),
    lambda lib: lib.where(lib.tensor([True, False]), lib.tensor(1., dtype=lib.float64), lib.tensor([1, 2])),
    lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), 2.5),
    lambda lib: lib.tensor([True, False]).sum(), lambda lib: lib.tensor([200, 100], dtype=lib.uint8).cumsum(0),
    lambda lib: lib.tensor([1, 2], dtype=lib.int32).cumsum(0), lambda lib: lib.tensor([1.5, 2.5]).cumsum(0, dtype=lib.int64),
])
def test_type_promotion_corners(case):
    _both(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.tensor([1, 2]).add_(1.5), lambda lib: lib.tensor([1, 2]).mul_(lib.tensor(1.5)),
    lambda lib: lib.tensor([1, 2]).div_(2), lambda lib: lib.tensor([1, 4]).sqrt_(),
    lambda lib: lib.tensor([True]).add_(1), lambda lib: lib.tensor([1, 2]).add_(lib.tensor([1., 2.])),
    lambda lib: lib.tensor([1.]).mul_(1j), lambda lib: lib.tensor([2]).pow_(0.5),
    lambda lib: lib.tensor([5, 6]).index_add_(0, lib.tensor([0]), lib.tensor([2.5])),
    lambda lib: lib.tensor([5, 6]).scatter_add_(0, lib.tensor([0]), lib.tensor([2.5])),
    lambda lib: lib.tensor([1, 2]) ** -1, lambda lib: lib.tensor([1.]) & lib.tensor([1.]),
])
def test_inplace_ops_that_would_change_dtype_raise(case):
    _raises(case, RuntimeError)


# -- rearrangements, windows, splits --------------------------------------------------------------------------------
def test_einops_style_rearrangements_and_gradients():
    x = _r(2, 3, 4, 6)
    _grads(lambda lib, t: t.permute(0, 2, 3, 1).reshape(2, 24, 3), x)  # b c h w -> b (h w) c
    _grads(lambda lib, t: t.flatten(2).transpose(1, 2).unflatten(1, (4, 6)).movedim(-1, 1), x)
    _grads(lambda lib, t: t.reshape(2, 3, 2, 2, 3, 2).permute(0, 2, 4, 3, 5, 1).flatten(1, 2).flatten(2), x)  # patchify
    _grads(lambda lib, t: t[:, None].expand(-1, 2, -1, -1, -1).reshape(4, 3, 4, 6), x)
    _grads(lambda lib, t: t.repeat(1, 2, 1, 1) + t.tile((2, 1, 1)).view(2, 6, 4, 6), x)
    _grads(lambda lib, t: t.repeat_interleave(lib.tensor([2, 0, 1]), dim=1), x)
    _both(lambda lib: [lib.tensor(x).expand(3, -1, -1, -1, -1).stride(), lib.tensor(x).movedim((0, 1), (2, 3)).shape])
    _raises(lambda lib: lib.tensor(x).permute(0, 2, 1, 3).view(-1), RuntimeError)
    _raises(lambda lib: lib.tensor(x).unflatten(1, (2, 2)), RuntimeError)
    _raises(lambda lib: lib.tensor(x).expand(2, 4, 4, 6), RuntimeError)
    _raises(lambda lib: lib.tensor(x).repeat(2), RuntimeError)


def test_unfold_windows_and_as_strided():
    x = _r(2, 3, 8)
    _both(lambda lib: (lib.tensor(x).unfold(2, 3, 2), lib.tensor(x).unfold(2, 3, 2).stride(),
                       lib.tensor(x).unfold(0, 1, 1).stride(), lib.tensor(3.).unfold(0, 1, 1)))
    _grads(lambda lib, t: t.unfold(0, 3, 1).unfold(1, 2, 2), _r(6, 6))
    _grads(lambda lib, t: t.as_strided((3, 3), (1, 1)), _r(6).astype(np.float64))
    _grads(lambda lib, t: t[1:].as_strided((2, 2), (2, 1), 1), _r(6).astype(np.float64))
    _both(lambda lib: lib.tensor(np.arange(12.))[2:].as_strided((2, 2), (1, 2)))
    _raises(lambda lib: lib.tensor(x).unfold(2, 9, 1), RuntimeError)
    _raises(lambda lib: lib.tensor(np.arange(12.)).as_strided((4, 4), (4, 1)), RuntimeError)


def test_fold_unfold_im2col():
    img = _r(2, 3, 7, 6).astype(np.float64)

    def fn(lib):
        return lib.nn.functional
    _grads(lambda lib, t: fn(lib).unfold(t, kernel_size=3, padding=1, stride=2), img)
    _grads(lambda lib, t: fn(lib).unfold(t, kernel_size=(2, 3), dilation=(2, 1), stride=(1, 2)), img)
    _grads(lambda lib, t: fn(lib).fold(t, output_size=(4, 4), kernel_size=2), _r(2, 12, 9).astype(np.float64))
    _both(lambda lib: fn(lib).fold(fn(lib).unfold(lib.tensor(img), 3, padding=1), (7, 6), 3, padding=1)
          / fn(lib).fold(fn(lib).unfold(lib.ones(2, 3, 7, 6, dtype=lib.float64), 3, padding=1), (7, 6), 3, padding=1))
    _raises(lambda lib: lib.nn.functional.unfold(lib.zeros(1, 2, 3, 7, 6), kernel_size=2), RuntimeError)
    _raises(lambda lib: lib.nn.functional.unfold(lib.zeros(2, 0, 4, 4), kernel_size=2), RuntimeError)
    _raises(lambda lib: lib.nn.functional.fold(lib.zeros(2, 12, 10), 4, 2), RuntimeError)
    _both(lambda lib: lib.nn.functional.unfold(lib.zeros(0, 3, 4, 4), kernel_size=2))


@pytest.mark.parametrize("case", [
    lambda lib, x: x.chunk(3), lambda lib, x: lib.arange(6).chunk(4), lambda lib, x: lib.arange(0).chunk(3),
    lambda lib, x: x.split(3), lambda lib, x: x.split([2, 3, 5]), lambda lib, x: x.tensor_split(3),
    lambda lib, x: lib.arange(2).tensor_split(4), lambda lib, x: x.tensor_split([1, 4, 12]),
    lambda lib, x: x.tensor_split([5, 2]), lambda lib, x: x.tensor_split(lib.tensor([1, 4])),
    lambda lib, x: x.tensor_split(lib.tensor(3)), lambda lib, x: x.view(2, 5).tensor_split(3, dim=1),
    lambda lib, x: x.view(2, 5).split([1, 4], dim=1), lambda lib, x: x.view(5, 2).vsplit([1, 3]),
    lambda lib, x: x.view(2, 5).chunk(2, -1),
])
def test_chunk_split_tensor_split(case):
    _both(lambda lib: case(lib, lib.arange(10.)))


# -- indexing and gather/scatter ------------------------------------------------------------------------------------
def test_advanced_indexing_and_assignment():
    x = _r(4, 5, 6)

    def run(lib):
        t = lib.tensor(x)
        out = [t[lib.tensor([0, 2, -1])], t[lib.tensor([0, 1]), :, lib.tensor([2, 3])], t[:, [0, 1], [2, 3]],
               t[lib.tensor([[0], [1]]), lib.tensor([2, 3, 4])], t[..., lib.tensor([0, 5])], t[t > 0],
               t[lib.tensor([True, False, True, False]), lib.tensor([1, 2])], t[True].shape, t[False].shape,
               t[lib.tensor(2)].stride(), t[lib.tensor([1, 3], dtype=lib.int32)]]
        c = t.clone()
        c[lib.tensor([0, 2]), :, lib.tensor([1, 1])] = lib.tensor(_r(2, 5, seed=1))
        c[c > 1] = 0.
        c[..., 0] = lib.tensor(_r(4, 5, seed=2))
        z = lib.zeros(3, 4).index_put_((lib.tensor([0, 0, 2]), lib.tensor([1, 1, -1])), lib.tensor([1., 2., 3.]),
                                       accumulate=True)
        return out + [c, z, lib.zeros(5).put_(lib.tensor([0, 0, -1]), lib.tensor([1., 2., 3.]), accumulate=True)]
    _both(run)
    _grads(lambda lib, t: t[lib.tensor([0, 0, 2])][:, lib.tensor([1, 1])], x)
    _grads(lambda lib, t, v: lib.index_put(t, (lib.tensor([0, 0, 1]),), v, accumulate=True), _r(3, 4), _r(3, 4))
    _raises(lambda lib: lib.tensor(x)[lib.tensor([4])], IndexError)
    _raises(lambda lib: lib.tensor(x)[lib.tensor([0, 1]), lib.tensor([0, 1, 2])], IndexError)
    _raises(lambda lib: lib.tensor(x)[lib.tensor([1.])], IndexError)
    _raises(lambda lib: lib.zeros(4).index_put_((lib.tensor([1]),), lib.tensor([5.], dtype=lib.float64)),
            RuntimeError)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    idx = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2], [1, 1, 1, 1, 0]])
    src = _r(3, 5)
    src[0, 3] = src[0, 4]  # a tie for amax/amin
    _grads(lambda lib, a, s: a.scatter_reduce(0, lib.tensor(idx), s, reduce=reduce, include_self=include_self),
           _r(3, 5, seed=1), src, rtol=1e-5, atol=1e-6)
    _both(lambda lib: lib.full((3, 5), 7).scatter_reduce(0, lib.tensor(idx), lib.tensor((src * 10).astype(np.int64)),
                                                         reduce=reduce, include_self=include_self))


@pytest.mark.filterwarnings("ignore:index_reduce")
def test_gather_scatter_index_ops():
    src, idx = _r(3, 5), np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])

    def run(lib):
        s, i = lib.tensor(src), lib.tensor(idx)
        return [s.gather(0, i), s.gather(1, i[:, :3]), lib.zeros(3, 5).scatter_add(0, i, s[:2]),
                lib.zeros(4, 6).scatter_(1, lib.tensor([3, 0, 5, 1]).unsqueeze(1), 1),
                lib.ones(3, 5).scatter(1, lib.tensor([[0, 0], [2, 3], [4, 0]]), 2.0, reduce="multiply"),
                lib.ones(5, 3).index_add(0, lib.tensor([0, 4, 0]), s[:, :3], alpha=2),
                lib.zeros(5, 3).index_copy(0, lib.tensor([0, 4, 2]), s[:, :3]),
                lib.zeros(5, 3).index_fill(1, lib.tensor([0, -1]), -1.),
                lib.ones(5, 3).index_reduce(0, lib.tensor([0, 4, 0]), s[:, :3], "amax", include_self=False),
                lib.zeros(3, 4).masked_scatter(lib.tensor([True, False, True, True]), lib.arange(12.)),
                lib.take(s, lib.tensor([[0, 5], [5, -1]])), lib.take_along_dim(s, lib.tensor([[0], [1], [4]]), dim=1),
                lib.take_along_dim(s, lib.tensor([3, 0, 14])), s.index_select(1, lib.tensor(2))]
    _both(run)
    _grads(lambda lib, a, s: a.index_add(1, lib.tensor([0, 2, 0]), s, alpha=-0.5), _r(3, 4), _r(3, 3))
    _grads(lambda lib, a, s: a.masked_scatter(lib.tensor([[True, False], [False, True]]), s), _r(2, 2), _r(2, 3))
    _grads(lambda lib, a: lib.take_along_dim(a, lib.tensor([[0, 1], [2, 2], [1, 0]]), dim=1), _r(3, 4))
    _raises(lambda lib: lib.tensor(src).gather(1, lib.tensor([[5]])), RuntimeError)
    _raises(lambda lib: lib.zeros(3, 5).scatter_(1, lib.tensor([[0]]), lib.tensor([[1.]], dtype=lib.float64)),
            RuntimeError)
    _raises(lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.tensor([1.]), "median"), RuntimeError)
    _raises(lambda lib: lib.zeros(3, 4).index_add(1, lib.tensor([0]), lib.ones(3, 1, dtype=lib.float64)),
            RuntimeError)


# -- sorting, searching, unique, cumulative --------------------------------------------------------------------------
def test_sort_unique_search():
    v = np.array([3, 1, 2, 3, 1, 0, 2, 2], dtype=np.float32)
    m = np.array([[3, 1, 3], [1, 1, 2], [3, 1, 3], [0, 5, 1]])
    s = np.array([1, 3, 5, 7, 9], dtype=np.float32)

    def run(lib):
        t = lib.tensor(v)
        return [lib.sort(t, stable=True), lib.sort(t, stable=True, descending=True), lib.argsort(t, stable=True),
                lib.sort(lib.tensor([1., float("nan"), 0., float("-inf")]), descending=True),
                lib.unique(t, return_inverse=True, return_counts=True),
                lib.unique(lib.tensor(m), dim=0, return_inverse=True, return_counts=True),
                lib.unique(lib.tensor(m), dim=1, return_inverse=True, return_counts=True),
                lib.unique_consecutive(t, return_inverse=True, return_counts=True),
                lib.unique(lib.zeros(0, 3), dim=0, return_inverse=True, return_counts=True),
                lib.unique_consecutive(lib.zeros(0, 3), dim=0, return_counts=True),
                lib.searchsorted(lib.tensor(s), lib.tensor([3., 6., 9., 10., 0.])),
                lib.searchsorted(lib.tensor(s), lib.tensor([3., 6.]), side="right", out_int32=True),
                lib.searchsorted(lib.tensor([5., 1., 3.]), lib.tensor([2., 4.]), sorter=lib.tensor([1, 2, 0])),
                lib.searchsorted(lib.tensor([[1., 3.], [2., 4.]]), lib.tensor([[2., 3.], [0., 5.]])),
                lib.bucketize(lib.tensor([[3., 6.], [9., 10.]]), lib.tensor(s), right=True),
                lib.topk(lib.tensor(m), 1, dim=1), lib.kthvalue(lib.tensor(v[:5]), 2), lib.tensor(m).max(dim=1)]
    _both(run)
    _grads(lambda lib, a: lib.topk(a, 2, dim=1)[0] + lib.sort(a, dim=1)[0][:, :2], _r(3, 4))
    _raises(lambda lib: lib.unique(lib.zeros(3, 0), dim=0), RuntimeError)
    _raises(lambda lib: lib.topk(lib.tensor(v), 9), RuntimeError)
    _raises(lambda lib: lib.searchsorted(lib.tensor([[1., 3.]]), lib.tensor([[2., 3.], [4., 5.]])), RuntimeError)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
def test_cumulative_ops(op):
    def pick(r):
        return r[0] if op in ("cummax", "cummin") else r
    _grads(lambda lib, a: pick(getattr(lib, op)(a, dim=0)), _r(3, 4).astype(np.float64))
    _both(lambda lib: [getattr(lib, op)(lib.tensor(2.), dim=-1), getattr(lib, op)(lib.zeros(0, 3), dim=0),
                       getattr(lib, op)(lib.tensor([1., 3., 3., 2., float("nan"), 3.]), 0)])
    _raises(lambda lib: getattr(lib, op)(lib.zeros(3, 4), dim=2), IndexError)


# -- constructions ------------------------------------------------------------------------------------------------------
def test_combinatorial_and_diagonal_constructions():
    def run(lib):
        return [lib.block_diag(lib.tensor(_r(2, 2)), lib.tensor([1., 2.]), lib.tensor(3.), lib.tensor(_r(1, 3))),
                lib.block_diag(lib.tensor([[1, 2]]), lib.tensor([[1.5]], dtype=lib.float64)), lib.block_diag(),
                lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3, 4, 5])), lib.cartesian_prod(lib.tensor([1, 2])),
                lib.combinations(lib.tensor([1, 2, 3, 4]), r=3),
                lib.combinations(lib.tensor([1, 2, 3]), with_replacement=True), lib.combinations(lib.tensor([1, 2]), 3),
                lib.tril_indices(4, 3, -1), lib.triu_indices(3, 4, 1), lib.triu_indices(4, 3, -2),
                lib.tril_indices(3, 3, dtype=lib.int32), lib.triu_indices(3, 3, 5),
                lib.diag_embed(lib.tensor(_r(2, 3)), offset=-2, dim1=-1, dim2=0),
                lib.tensor(_r(3, 4, 5)).diagonal(offset=2, dim1=2, dim2=0),
                lib.tensor(_r(3, 4)).diagonal(offset=5), lib.flip(lib.tensor(_r(2, 3, 4)), [0, 2]),
                lib.tensor(_r(3, 4)).roll((1, -5), (0, 1)), lib.tensor(_r(3, 4)).roll(5),
                lib.rot90(lib.tensor(_r(2, 3, 4)), 3, [1, 2]), lib.rot90(lib.tensor(_r(2, 3)), -1, [1, 0])]
    _both(run)
    _grads(lambda lib, a, b: lib.block_diag(a, b), _r(2, 3), _r(1, 2))
    _grads(lambda lib, a: lib.diag_embed(a, 1, 0, 2).roll(1, 0).flip(1), _r(2, 3))
    _grads(lambda lib, a: lib.combinations(a, 2), _r(4))
    _raises(lambda lib: lib.block_diag([lib.zeros(2)]), TypeError)
    _raises(lambda lib: lib.block_diag(lib.zeros(1, 1, 1)), RuntimeError)
    _raises(lambda lib: lib.roll(lib.zeros(3, 4), (1, 2), (0,)), RuntimeError)
    _raises(lambda lib: lib.rot90(lib.zeros(3, 4), 1, [0, 0]), RuntimeError)
    _raises(lambda lib: lib.combinations(lib.zeros(2, 2)), RuntimeError)


# -- views and in-place ops ---------------------------------------------------------------------------------------------
def test_inplace_through_chains_of_views():
    def run(lib):
        b = lib.zeros(4, 5)
        v = b[1:3].t()
        w = v[::2]
        w.add_(1)
        w[0, 0] = 7
        b.view(-1)[3] = 9
        b.diagonal(1).mul_(2)
        return b, v, w.stride(), w.storage_offset(), b._version

    def grad(lib):
        a = lib.tensor(_r(3, 4), requires_grad=True)
        b = a * 1
        b[:, 1].mul_(3)
        b.diagonal().zero_()
        b[b > 1] = 0.
        b.unsqueeze(0).squeeze(0)[2].exp_()
        (b * lib.tensor(_r(3, 4, seed=3))).sum().backward()
        return b, a.grad
    _both(run)
    _both(grad, strides=False)
    _raises(lambda lib: lib.tensor(_r(3, 4), requires_grad=True)[0].add_(1), RuntimeError)
    _raises(lambda lib: lib.zeros(2, 3).expand(4, 2, 3).add_(1), RuntimeError)

    def modified(lib):
        a = lib.tensor(_r(3), requires_grad=True)
        b = a.sigmoid()
        b.mul_(2)
        b.sum().backward()
    _raises(modified, RuntimeError)


# -- idioms from research code --------------------------------------------------------------------------------------
def _sample_pdf(lib, bins, weights, u):
    """NeRF's inverse-transform sampling of a piecewise-constant pdf."""
    weights = weights + 1e-5
    cdf = lib.cumsum(weights / lib.sum(weights, -1, keepdim=True), -1)
    cdf = lib.cat([lib.zeros_like(cdf[..., :1]), cdf], -1)
    inds = lib.searchsorted(cdf, u, right=True)
    below = lib.max(lib.zeros_like(inds - 1), inds - 1)
    above = lib.min((cdf.shape[-1] - 1) * lib.ones_like(inds), inds)
    inds_g = lib.stack([below, above], -1)
    shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = lib.gather(cdf.unsqueeze(1).expand(shape), 2, inds_g)
    bins_g = lib.gather(bins.unsqueeze(1).expand(shape), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
    return bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0])


def _top_p(lib, logits, p=0.9):
    sorted_logits, sorted_indices = lib.sort(logits, descending=True)
    remove = lib.cumsum(lib.softmax(sorted_logits, dim=-1), dim=-1) > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = 0
    return logits.masked_fill(remove.scatter(1, sorted_indices, remove), -float("inf"))


def _swin_relative_index(lib, ws=3):
    coords = lib.stack(lib.meshgrid([lib.arange(ws), lib.arange(ws)], indexing="ij"))
    flat = lib.flatten(coords, 1)
    rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += ws - 1
    rel[:, :, 1] += ws - 1
    rel[:, :, 0] *= 2 * ws - 1
    return rel.sum(-1)


def test_research_code_idioms():
    bins = np.sort(_r(4, 9), -1)
    u = np.random.default_rng(3).random((4, 16)).astype(np.float32)
    _grads(lambda lib, b, w: _sample_pdf(lib, b, w, lib.tensor(u)), bins, np.abs(_r(4, 8, seed=1)),
           rtol=1e-5, atol=1e-5)
    _both(lambda lib: _top_p(lib, lib.tensor(_r(3, 10))))
    _both(_swin_relative_index)
    seg = np.array([0, 2, 2, 1, 0, 2])

    def segment_softmax(lib, s):
        i = lib.tensor(seg)
        m = lib.zeros(3, 3).scatter_reduce(0, i[:, None].expand(-1, 3), s, "amax", include_self=False)
        e = (s - m[i]).exp()
        return e / lib.zeros(3, 3).index_add(0, i, e)[i]
    _grads(segment_softmax, _r(6, 3), rtol=1e-5, atol=1e-6)
    _both(lambda lib: (lambda p: lib.empty_like(p).scatter_(0, p, lib.arange(p.numel())))(lib.argsort(
        lib.tensor(_r(7)))))  # inverse permutation
    _grads(lambda lib, x: x[lib.arange(3)[:, None], lib.tensor([[0, 2], [1, 1], [3, 0]])], _r(3, 4, 5))
    _grads(lambda lib, x: lib.roll(x, shifts=(-1, -1), dims=(1, 2)).view(2, 2, 2, 2, 2, 3).permute(
        0, 1, 3, 2, 4, 5).reshape(-1, 2, 2, 3), _r(2, 4, 4, 3))  # shifted-window partition
