"""Writes into expanded (broadcast) tensors and their views against torch: which writes are allowed, which raise,
which warn, and what the base tensor sees afterwards."""
import warnings

import numpy as np
import pytest
import torch

import ember

_OVERLAP = "more than one element of the written-to tensor refers to a single memory location"


def _run(lib, write, base=(4,), shape=(3, 4)):
    """``write(t, x)`` on ``x = t.expand(shape)``: (error type or None, warning messages, base values, x values)."""
    t = lib.arange(float(np.prod(base))).reshape(base)
    x = t.expand(*shape)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            write(lib, t, x)
            err = None
        except (RuntimeError, IndexError, ValueError, TypeError) as e:
            err = (type(e), str(e))
    msgs = [str(m.message).split(" (Triggered")[0] for m in w if m.category is UserWarning]
    return err, msgs, t.numpy().copy(), x.numpy().copy()


def _same(write, **kw):
    e, t = _run(ember, write, **kw), _run(torch, write, **kw)
    assert (e[0] is None) == (t[0] is None), (e[0], t[0])
    if t[0] is not None:
        assert e[0][0] is t[0][0]
        assert _OVERLAP in e[0][1] and _OVERLAP in t[0][1]
    assert e[1] == t[1]
    np.testing.assert_array_equal(e[2], t[2])
    np.testing.assert_array_equal(e[3], t[3])
    return e


_SETITEM = {
    "one_element": lambda L, t, x: x.__setitem__((0, 0), 10.),
    "other_element": lambda L, t, x: x.__setitem__((1, 2), 10.),
    "element_from_0d": lambda L, t, x: x.__setitem__((2, 3), L.tensor(7.)),
    "row_scalar": lambda L, t, x: x.__setitem__(0, 10.),
    "row_vector": lambda L, t, x: x.__setitem__(1, L.tensor([5., 6., 7., 8.])),
    "row_2d_value": lambda L, t, x: x.__setitem__(0, L.tensor([[5., 6., 7., 8.]])),
    "row_from_row": lambda L, t, x: x.__setitem__(0, x[1] + 1),
    "row_slice": lambda L, t, x: x.__setitem__((0, slice(1, 3)), 9.),
    "size1_slice": lambda L, t, x: x.__setitem__((slice(0, 1), 1), 10.),
    "tail_slice": lambda L, t, x: x.__setitem__((slice(2, None), 0), 10.),
    "none_key": lambda L, t, x: x.__setitem__((None, 0, 0), 10.),
    "empty_region": lambda L, t, x: x.__setitem__(slice(0, 0), 10.),
    "chained": lambda L, t, x: x[0].__setitem__(2, 10.),
    "column": lambda L, t, x: x.__setitem__((slice(None), 0), 10.),
    "column_vector": lambda L, t, x: x.__setitem__((slice(None), 0), L.tensor([5., 6., 7.])),
    "ellipsis": lambda L, t, x: x.__setitem__(Ellipsis, 1.),
    "full_slice": lambda L, t, x: x.__setitem__(slice(None), 1.),
    "two_rows": lambda L, t, x: x.__setitem__((slice(1, None), 0), 10.),
    "column_block": lambda L, t, x: x.__setitem__((slice(None), slice(1, 2)), 10.),
    "column_iadd": lambda L, t, x: x.__setitem__((slice(None), 0), x[:, 0] + 1),
}


@pytest.mark.parametrize("case", sorted(_SETITEM))
def test_setitem_basic(case):
    """Basic indexing writes where the region's elements have their own memory, and raises where they share it."""
    _same(_SETITEM[case])


def test_setitem_rules():
    """The allowed/refused split itself (so that a matching failure on both sides cannot pass unnoticed)."""
    assert _same(_SETITEM["one_element"])[0] is None
    assert _same(_SETITEM["row_vector"])[2].tolist() == [5., 6., 7., 8.]
    assert _same(_SETITEM["ellipsis"])[0][0] is RuntimeError
    assert _same(_SETITEM["column"])[0][0] is RuntimeError


def test_setitem_column_of_expanded_column():
    """``t[:, None].expand(3, 4)[:, 0] = v`` writes each row's one memory location; ``[:, 1:]`` shares it."""
    _same(lambda L, t, x: x.__setitem__((slice(None), 0), L.tensor([7., 8., 9.])), base=(3, 1), shape=(3, 4))
    e = _same(lambda L, t, x: x.__setitem__((slice(None), slice(1, None)), 1.), base=(3, 1), shape=(3, 4))
    assert e[0][0] is RuntimeError


def test_setitem_expanded_scalar():
    """A 0-d tensor expanded to a vector: one element written, the whole view refused."""
    for lib in (ember, torch):
        t = lib.tensor(2.)
        x = t.expand(5)
        x[3] = 9.
        assert t.item() == 9. and x.tolist() == [9.] * 5
        with pytest.raises(RuntimeError, match=_OVERLAP):
            x[:] = 1.
        x11 = lib.tensor(2.).expand(1, 1)
        x11[...] = 4.  # one element: no memory shared
        assert x11.item() == 4.


_ADVANCED = {
    "index_rows": lambda L, t, x: x.__setitem__(L.tensor([0]), 10.),
    "index_in_row": lambda L, t, x: x.__setitem__((0, L.tensor([0, 1])), 10.),
    "mask_scalar": lambda L, t, x: x.__setitem__(x > 1, 10.),
    "mask_0d_tensor": lambda L, t, x: x.__setitem__(x > 1, L.tensor(5.)),
    "mask_vector": lambda L, t, x: x.__setitem__(x > 1, L.full((6,), 5.)),
    "false_0d_mask": lambda L, t, x: x.__setitem__(L.tensor(False), 10.),
    "masked_fill_": lambda L, t, x: x.masked_fill_(x > 1, 10.),
    "masked_fill_one": lambda L, t, x: x.masked_fill_(L.tensor([[True, False, False, False]] + [[False] * 4] * 2),
                                                      10.),
    "masked_fill_0d": lambda L, t, x: x.masked_fill_(x < 2, L.tensor(-1.)),
    "index_fill_cols": lambda L, t, x: x.index_fill_(1, L.tensor([0, 3]), 10.),
    "index_fill_rows": lambda L, t, x: x.index_fill_(0, L.tensor([0]), 10.),
    "index_put_": lambda L, t, x: x.index_put_((L.tensor([0]), L.tensor([1])), L.tensor(10.)),
    "index_put_accumulate": lambda L, t, x: x.index_put_((L.tensor([2]), L.tensor([3])), L.tensor(10.),
                                                         accumulate=True),
}


@pytest.mark.parametrize("case", sorted(_ADVANCED))
def test_indexed_writes_warn(case):
    """Indexed writes into an expanded tensor go through, with torch's deprecation warnings (none where the
    basic-indexed region does not overlap)."""
    e = _same(_ADVANCED[case])
    assert e[0] is None
    assert bool(e[1]) == (case != "index_in_row")
    assert all(m.startswith("Use of ") and "on expanded tensors is deprecated" in m for m in e[1])


_INPLACE = {
    "fill_": lambda L, t, x: x.fill_(10.),
    "zero_": lambda L, t, x: x.zero_(),
    "copy_": lambda L, t, x: x.copy_(L.ones(3, 4)),
    "copy_row": lambda L, t, x: x.copy_(L.ones(4)),
    "add_": lambda L, t, x: x.add_(1),
    "mul_": lambda L, t, x: x.mul_(2),
    "iadd": lambda L, t, x: x.__iadd__(1),
    "clamp_": lambda L, t, x: x.clamp_(0, 1),
    "scatter_": lambda L, t, x: x.scatter_(1, L.tensor([[0]]), 10.),
    "index_add_": lambda L, t, x: x.index_add_(1, L.tensor([0]), L.ones(3, 1)),
    "out": lambda L, t, x: L.add(L.ones(3, 4), 1, out=x),
    "column_iadd": lambda L, t, x: x[:, 0].__iadd__(1),
    "row_add_": lambda L, t, x: x[0].add_(1),
    "row_iadd": lambda L, t, x: x[1].__iadd__(1),
    "row_mul_": lambda L, t, x: x[2].mul_(2),
    "row_copy_": lambda L, t, x: x[0].copy_(L.tensor([4., 3., 2., 1.])),
    "row_clamp_": lambda L, t, x: x[0].clamp_(1, 2),
    "row_zero_": lambda L, t, x: x[0].zero_(),
    "row_masked_fill_": lambda L, t, x: x[0].masked_fill_(x[0] > 1, 9.),
    "row_index_fill_": lambda L, t, x: x[0].index_fill_(0, L.tensor([1]), 9.),
    "row_scatter_": lambda L, t, x: x[0].scatter_(0, L.tensor([1]), 9.),
    "element_add_": lambda L, t, x: x[0, 1].add_(5),
    "element_fill_": lambda L, t, x: x[0, 1].fill_(5),
    "size1_rows_add_": lambda L, t, x: x[1:2].add_(5),
    "transposed_row_add_": lambda L, t, x: x.t()[:, 0].add_(5),
    "row_view_add_": lambda L, t, x: x[0].view(2, 2).add_(5),
    "diagonal_add_": lambda L, t, x: x.diagonal().add_(1),
    "row_out": lambda L, t, x: L.add(L.ones(4), 1, out=x[0]),
    "contiguous_then_write": lambda L, t, x: x.contiguous().__setitem__(Ellipsis, 10.),
    "clone_then_write": lambda L, t, x: x.clone()[:, 0].add_(1),
}


@pytest.mark.parametrize("case", sorted(_INPLACE))
def test_inplace_ops(case):
    """In-place ops refuse an expanded tensor (fill_/zero_ aside) but write its non-overlapping views."""
    _same(_INPLACE[case])


def test_inplace_rules():
    assert _same(_INPLACE["add_"])[0][0] is RuntimeError
    assert _same(_INPLACE["row_add_"])[2].tolist() == [1., 2., 3., 4.]
    assert _same(_INPLACE["size1_rows_add_"])[2].tolist() == [5., 6., 7., 8.]


def test_broadcast_buffer_idiom():
    """A per-row update of a broadcast positional table: write one row, every row sees it; refuse a column."""
    rng = np.random.default_rng(0)
    pe, row = rng.standard_normal((1, 6)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    res = []
    for lib in (ember, torch):
        base = lib.tensor(pe)
        table = base.expand(4, 6)
        table[2] = lib.tensor(row) * 2
        table[0, :3] += 1
        with pytest.raises(RuntimeError, match=_OVERLAP):
            table[:, 0] = 0.
        res.append((base.numpy().copy(), table.sum(0).numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)


def test_read_only_memory_still_refused():
    """An expanded view of memory that is truly read-only keeps refusing the write."""
    a = np.arange(4.)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.from_numpy(a)
    with pytest.raises(RuntimeError):
        t.expand(3, 4)[0, 0] = 1.
    with pytest.raises(RuntimeError):
        t.expand(3, 4)[0].add_(1)
    assert a.tolist() == [0., 1., 2., 3.]
