"""Behaviour of shape and sort ops beyond values: out=, named results, warnings, second derivatives."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradgradcheck


def test_cat_and_stack_out():
    out = ember.empty(0)
    assert ember.cat([ember.ones(2), ember.zeros(1)], out=out) is out
    assert out.tolist() == [1, 1, 0]
    out = ember.empty(2, 2, dtype=ember.int64)
    ember.stack([ember.tensor([1, 2]), ember.tensor([3, 4])], 1, out=out)
    assert out.tolist() == [[1, 3], [2, 4]]


def test_sort_results_are_named_tuples():
    x = ember.tensor([[3., 1., 2.]])
    for res, name in ((ember.sort(x), "sort"), (x.topk(2), "topk"), (x.kthvalue(2, keepdim=True), "kthvalue")):
        values, indices = res
        assert res.values is values and res.indices is indices and type(res).__name__ == name
    assert ember.sort(x, descending=True).indices.tolist() == [[0, 2, 1]]
    v, i = ember.empty(3), ember.empty(3, dtype=ember.int64)
    res = ember.sort(ember.tensor([2., 0., 1.]), out=(v, i))
    assert res.values is v and v.tolist() == [0, 1, 2] and i.tolist() == [1, 2, 0]


def test_sort_half_dtypes_exact():
    a = np.random.default_rng(0).standard_normal(40).astype(np.float32)
    for dt in ("float16", "bfloat16"):
        t = torch.tensor(a).to(getattr(torch, dt))
        e = ember.tensor(a).to(getattr(ember, dt))
        te, ee = torch.sort(t, stable=True), ember.sort(e, stable=True)
        assert ee.values.dtype is getattr(ember, dt)
        np.testing.assert_array_equal(ee.values.float().numpy(), te.values.float().numpy())
        np.testing.assert_array_equal(ee.indices.numpy(), te.indices.numpy())


def test_unique_outputs_need_grad_but_have_no_derivative():
    for lib, err in ((torch, NotImplementedError), (ember, NotImplementedError)):
        x = lib.tensor([3., 1., 3.], requires_grad=True)
        u = lib.unique(x)
        assert u.requires_grad
        with pytest.raises(err, match="the derivative for '_unique2' is not implemented"):
            u.sum().backward()


def test_meshgrid_warns_without_indexing_and_returns_views():
    a, b = ember.arange(2.), ember.arange(3.)
    with pytest.warns(UserWarning, match="indexing argument"):
        gx, gy = ember.meshgrid(a, b)
    assert gx.shape == (2, 3) and gx._base is a and gx.stride() == (1, 0)


def test_repeat_interleave_forms():
    assert ember.repeat_interleave(ember.tensor([1, 0, 2])).tolist() == [0, 2, 2]
    assert ember.tensor([[1, 2], [3, 4]]).repeat_interleave(2, output_size=8).tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert ember.tensor([1, 2]).repeat_interleave(ember.tensor(3)).tolist() == [1, 1, 1, 2, 2, 2]


def test_searchsorted_scalar_and_int32():
    seq = ember.tensor([1., 3., 5.])
    r = ember.searchsorted(seq, 3, right=True)
    assert r.ndim == 0 and r.item() == 2 and r.dtype is ember.int64
    assert ember.bucketize(ember.tensor([0., 4.]), seq, out_int32=True).dtype is ember.int32


def test_flatten_and_atleast_identity():
    x = ember.ones(2, 3)
    assert ember.flatten(x, 1, 1) is x and ember.atleast_2d(x) is x
    assert ember.flatten(x)._base is x and ember.ravel(x.t())._base is not x  # a copy


def test_diag_of_matrix_is_a_copy():
    x = ember.arange(6.).reshape(2, 3)
    d = ember.diag(x, 1)
    d.add_(10)
    assert d.tolist() == [11, 15] and x[0, 1].item() == 1


def _t(rng, *shape):
    return ember.tensor(rng.standard_normal(shape), requires_grad=True)


SECOND_ORDER = {
    "sort": lambda x: ember.sort(x, 1).values,
    "topk": lambda x: ember.topk(x, 2, largest=False).values,
    "kthvalue": lambda x: ember.kthvalue(x, 2, 0).values,
    "cat": lambda x: ember.cat([x, x * 2], 1),
    "repeat": lambda x: x.repeat(2, 1, 2),
    "roll": lambda x: x.roll(1, 1),
    "rot90": lambda x: x.rot90(),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 1)),
    "diag_embed": lambda x: ember.diag_embed(x, -1),
    "split": lambda x: x.split(2, 1),
    "unbind": lambda x: x.unbind(1),
    "tensor_split_overlapping": lambda x: x.tensor_split([2, 1], 1),
    "repeat_interleave": lambda x: x.repeat_interleave(ember.tensor([1, 0, 2]), 1),
    "tril": lambda x: x.tril(),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(name):
    assert gradgradcheck(SECOND_ORDER[name], (_t(np.random.default_rng(0), 2, 3),))
