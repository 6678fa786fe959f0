"""Shape manipulation as real code writes it: reshape/view (-1, 0-size, non-contiguous inputs, dtype views), flatten and
unflatten, movedim, squeeze/unsqueeze, the split family, narrow, roll/flip/rot90, diagonals and triangles, T/mT/mH,
atleast_nd and the stack family, cat's legacy empty rule and promotion, expand/broadcast, repeat_interleave, tile,
unique, complex views and as_strided. Values, shapes, strides, memory sharing, dtypes, gradients and errors against
torch."""
import warnings

import numpy as np
import pytest
import torch

import ember


def ar(m, *shape, dtype="float32"):
    return m.arange(float(np.prod(shape))).reshape(shape).to(getattr(m, dtype))


def x0(m):
    return m.tensor(1.5, dtype=m.float64)


def _np(t):
    t = t.detach()
    return t.resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _same(e, t, base_e=None, base_t=None):
    """Same shape, dtype, values and (where non-empty) strides, offsets, contiguity and memory sharing with the input."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, base_e, base_t)
        return
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
    np.testing.assert_array_equal(_np(e), _np(t))
    if t.numel():
        assert (e.stride(), e.is_contiguous()) == (t.stride(), t.is_contiguous())
        if base_t is not None:
            shares = np.shares_memory(_np(t), _np(base_t))
            assert np.shares_memory(_np(e), _np(base_e)) == shares
            if shares:
                assert e.storage_offset() == t.storage_offset()


LAYOUTS = {
    "view_0size_m1": lambda m, x: x[:0].view(-1, 4),
    "reshape_0size": lambda m, x: x[:0].reshape(-1, 2, 4),
    "view_split_t": lambda m, x: x.t().view(2, 2, 6),  # splits a dimension of a transposed input
    "view_split_slice": lambda m, x: x[:, :2].unsqueeze(0).view(3, 2, 2),
    "view_rows_step": lambda m, x: x[::2].view(3, 2, 2),
    "view_permuted": lambda m, x: x.view(3, 2, 2, 2).permute(2, 0, 1, 3).view(2, 6, 2),
    "view_expand": lambda m, x: x[:, :1].expand(6, 4).view(6, 2, 2),
    "reshape_copies_t": lambda m, x: x.t().reshape(-1),
    "reshape_expand_copies": lambda m, x: x[:, :1].expand(6, 4).reshape(24),
    "view_to_0d": lambda m, x: x[:1, :1].view(()),
    "view_size": lambda m, x: x.view(m.Size([2, 12])),
    "view_dtype_int32": lambda m, x: x.view(m.int32),
    "view_dtype_half_t": lambda m, x: x.view(m.int16).t(),
    "view_dtype_double": lambda m, x: x.view(m.float64),
    "view_dtype_complex": lambda m, x: x.t().contiguous().view(m.complex64),
    "unflatten_m1": lambda m, x: x.reshape(2, 12).unflatten(1, (3, -1, 2)),
    "unflatten_t": lambda m, x: x.t().unflatten(1, (2, 3)),
    "unflatten_size": lambda m, x: m.unflatten(x, -1, m.Size([2, 2])),
    "flatten_0d": lambda m, x: x[0, 0].flatten(),
    "flatten_0d_range": lambda m, x: x[0, 0].flatten(-1, 0),
    "flatten_t": lambda m, x: x.view(2, 3, 4).transpose(0, 1).flatten(1),
    "flatten_t_copy": lambda m, x: x.view(2, 3, 4).transpose(0, 1).flatten(0, 1),
    "flatten_same": lambda m, x: x.view(2, 3, 4).flatten(1, 1),
    "movedim_lists": lambda m, x: m.movedim(x.view(1, 2, 3, 4), [0, 1], [-1, -2]),
    "moveaxis_tuple": lambda m, x: x.view(2, 3, 4).moveaxis((0, 2), (2, 0)),
    "movedim_0d": lambda m, x: x[1, 1].movedim(0, -1),
    "squeeze_tuple": lambda m, x: x.view(1, 6, 1, 4, 1).squeeze((0, 1, -1)),
    "squeeze_t": lambda m, x: x.view(6, 1, 4).transpose(0, 2).squeeze(1),
    "squeeze_0d": lambda m, x: x[0, 0].squeeze((0,)),
    "unsqueeze_neg": lambda m, x: x.unsqueeze(-3),
    "unsqueeze_t": lambda m, x: x.t().unsqueeze(2),
    "unsqueeze_step": lambda m, x: x[:, ::2].unsqueeze(1),
    "tensor_split_sections": lambda m, x: m.tensor_split(x, 4),
    "tensor_split_list": lambda m, x: x.tensor_split([1, 5, 10, 3], dim=0),
    "tensor_split_tensor": lambda m, x: m.tensor_split(x, m.tensor([1, 3]), dim=1),
    "tensor_split_0d_tensor": lambda m, x: m.tensor_split(x, m.tensor(3), 1),
    "hsplit": lambda m, x: m.hsplit(x, [1, 3]),
    "hsplit_1d": lambda m, x: m.hsplit(x[0], 2),
    "vsplit": lambda m, x: x.vsplit(3),
    "dsplit": lambda m, x: m.dsplit(x.view(2, 3, 4), [1]),
    "chunk_fewer": lambda m, x: x.chunk(5),  # 6 rows in chunks of 2: only 3 chunks
    "chunk_dim": lambda m, x: m.chunk(x, 3, -1),
    "split_sizes": lambda m, x: x.split([1, 0, 3], dim=1),
    "split_bigger": lambda m, x: x.split(10),
    "split_uneven": lambda m, x: x.t().split(3),
    "unbind": lambda m, x: x.unbind(1),
    "narrow_neg": lambda m, x: x.narrow(0, -4, 2),
    "narrow_tensor": lambda m, x: x.narrow(1, m.tensor(1), 3),
    "narrow_end": lambda m, x: x.narrow(-1, 4, 0),
    "roll_dims": lambda m, x: m.roll(x, (1, -5), (0, 1)),
    "roll_flat": lambda m, x: x.t().roll(7),
    "roll_same_dim": lambda m, x: x.roll((2, 3), (0, 0)),
    "flip_dims": lambda m, x: x.view(2, 3, 4).flip(0, -1),
    "flip_none": lambda m, x: m.flip(x, ()),
    "rot90_neg": lambda m, x: m.rot90(x, -1),
    "rot90_large": lambda m, x: x.rot90(7, [1, 0]),
    "rot90_dims": lambda m, x: m.rot90(x.view(2, 3, 4), 2, (-1, 0)),
    "diag_vec": lambda m, x: m.diag(x[0], -2),
    "diag_mat": lambda m, x: m.diag(x, 5),
    "diag_embed": lambda m, x: m.diag_embed(x[:2], 1, 0, 2),
    "diag_embed_neg": lambda m, x: m.diag_embed(x[:2, :3], -1, -1, 0),
    "diagonal_dims": lambda m, x: x.view(2, 3, 4).diagonal(1, 2, 0),
    "diagonal_beyond": lambda m, x: x.diagonal(-10),
    "diagflat": lambda m, x: m.diagflat(x[:2, :2], -1),
    "tril_batch": lambda m, x: x.view(2, 3, 4).tril(1),
    "triu_beyond": lambda m, x: x.view(2, 3, 4).triu(10),
    "tril_beyond": lambda m, x: x.view(2, 3, 4).tril(-10),
    "triu_t": lambda m, x: x.t().triu(-1),
    "T_1d": lambda m, x: x[0].T,
    "mT": lambda m, x: x.view(2, 3, 4).mT,
    "mH_real": lambda m, x: x.view(2, 3, 4).mH,
    "atleast_1d_0d": lambda m, x: m.atleast_1d(x[0, 0]),
    "atleast_2d_list": lambda m, x: m.atleast_2d([x[0, 0], x[0], x]),
    "atleast_3d_tuple": lambda m, x: m.atleast_3d((x[0], x)),
    "atleast_3d_args": lambda m, x: m.atleast_3d(x[0, 0], x.view(1, 2, 3, 4)),
    "column_stack": lambda m, x: m.column_stack([x[0], x[1], x[:, :2].reshape(4, 3)[:, :1].view(-1)]),
    "column_stack_0d": lambda m, x: m.column_stack([x[0, 0], x[0, 1]]),
    "row_stack_0d": lambda m, x: m.row_stack([x[0, 0], x[0, 1]]),
    "vstack_1d": lambda m, x: m.vstack([x[0], x[:2]]),
    "hstack_0d": lambda m, x: m.hstack([x[0, 0], x[0, 1]]),
    "hstack_2d": lambda m, x: m.hstack([x, x[:, :1]]),
    "dstack_1d": lambda m, x: m.dstack([x[0], x[1]]),
    "dstack_0d": lambda m, x: m.dstack((x[0, 0], x[1, 1])),
    "cat_empty_1d": lambda m, x: m.cat([x, m.tensor([]), x[:1]]),
    "cat_empty_1d_dim1": lambda m, x: m.cat([x, m.tensor([]), x[:, :1]], 1),
    "cat_promote": lambda m, x: m.cat([x.long(), x, x.double()]),
    "cat_empty_promotes": lambda m, x: m.cat([x.long(), m.tensor([])]),
    "cat_t": lambda m, x: m.cat([x.t(), x.t()], -1),
    "stack_0d": lambda m, x: m.stack([x[0, 0], x[1, 2]], -1),
    "stack_promote": lambda m, x: m.stack([x.int(), x.to(m.int16), x.to(m.uint8)], 1),
    "expand_lead": lambda m, x: x[:, :1].expand(2, -1, 5),
    "expand_0d": lambda m, x: x[0, 0].expand(2, 3),
    "expand_as": lambda m, x: x[:1].expand_as(m.zeros(2, 6, 4)),
    "broadcast_to": lambda m, x: m.broadcast_to(x[:, 1], (3, 6)).t(),
    "broadcast_tensors": lambda m, x: m.broadcast_tensors(x[:, :1], x[0]),
    "tile_fewer": lambda m, x: x.tile((2,)),
    "tile_more": lambda m, x: m.tile(x[0], (2, 1, 2)),
    "swapdims": lambda m, x: m.swapdims(x.view(2, 3, 4), 0, -1),
    "swapaxes": lambda m, x: x.view(2, 3, 4).swapaxes(1, 2),
    "as_strided_offset": lambda m, x: m.as_strided(x, (2, 3), (3, 1), 2),
    "as_strided_of_view": lambda m, x: x[2:].as_strided((2, 2), (1, 2), 9),  # the offset counts from the storage
    "as_strided_broadcast": lambda m, x: x.as_strided((3, 3), (0, 1), storage_offset=5),
    "view_as_complex": lambda m, x: m.view_as_complex(x.view(6, 2, 2)[1:]),
    "view_as_real_roundtrip": lambda m, x: m.view_as_real(m.view_as_complex(x.view(12, 2))),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layouts_values_and_memory_sharing(name):
    """The same values and layout as torch, sharing the input's memory exactly where torch's result does."""
    t, e = ar(torch, 6, 4), ar(ember, 6, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(LAYOUTS[name](ember, e), LAYOUTS[name](torch, t), e, t)


GRADS = {
    "view_t": ((4, 6), lambda m, x: x.t().view(3, 2, 4)),
    "reshape_t": ((4, 6), lambda m, x: x.t().reshape(24)),
    "unflatten": ((2, 12), lambda m, x: x.unflatten(1, (3, -1))),
    "flatten_0d": ((), lambda m, x: x.flatten()),
    "movedim": ((2, 3, 4, 1), lambda m, x: m.movedim(x, [0, 1], [-1, -2])),
    "squeeze": ((1, 3, 1, 4), lambda m, x: x.squeeze((0, 1, 2))),
    "tensor_split": ((7, 2), lambda m, x: m.tensor_split(x, m.tensor([1, 5]))),
    "hsplit": ((2, 6), lambda m, x: m.hsplit(x, [1, 4])),
    "dsplit": ((2, 2, 4), lambda m, x: m.dsplit(x, 2)),
    "chunk_one": ((5, 2), lambda m, x: x.chunk(4)[1]),
    "split_sizes": ((7,), lambda m, x: x.split([2, 5])),
    "unbind_one": ((2, 3), lambda m, x: x.unbind(1)[2]),
    "narrow_tensor": ((6, 2), lambda m, x: x.narrow(0, m.tensor(-3), 2)),
    "roll": ((3, 4), lambda m, x: m.roll(x, (1, -2), (0, 1))),
    "roll_flat": ((3, 4), lambda m, x: x.t().roll(5)),
    "flip": ((2, 3, 4), lambda m, x: x.flip(0, 2)),
    "rot90": ((2, 3, 4), lambda m, x: m.rot90(x, -3, (2, 0))),
    "diag": ((3,), lambda m, x: m.diag(x, -1)),
    "diag_mat": ((3, 4), lambda m, x: m.diag(x, 1)),
    "diag_embed": ((2, 3), lambda m, x: m.diag_embed(x, 1, 0, 2)),
    "diagonal": ((2, 3, 4), lambda m, x: x.diagonal(1, 2, 0)),
    "tril": ((2, 3, 4), lambda m, x: x.tril(1)),
    "mT": ((2, 3, 4), lambda m, x: x.mT),
    "atleast_3d": ((3,), lambda m, x: m.atleast_3d(x)),
    "column_stack": ((3,), lambda m, x: m.column_stack([x, x * 2])),
    "dstack": ((2, 3), lambda m, x: m.dstack([x, x])),
    "cat_empty_promote": ((2, 3), lambda m, x: m.cat([x.float(), m.tensor([], dtype=m.float64), x])),
    "stack_0d": ((3,), lambda m, x: m.stack([x[0], x[2]])),
    "expand": ((3, 1), lambda m, x: x.expand(2, -1, 4)),
    "broadcast_to": ((3, 1), lambda m, x: m.broadcast_to(x, (2, 3, 4))),
    "repeat_interleave": ((3, 2), lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 2]), 0, output_size=3)),
    "repeat_interleave_flat": ((3, 2), lambda m, x: x.repeat_interleave(2)),
    "tile": ((2, 3), lambda m, x: x.tile((2, 1, 2))),
    "view_as_complex": ((3, 2), lambda m, x: m.view_as_complex(x) * (1 + 2j)),
    "view_as_real": ((3, 2), lambda m, x: m.view_as_real(m.view_as_complex(x) * 2j)),
    "as_strided_overlap": ((12,), lambda m, x: x.as_strided((3, 3), (1, 1), 1)),
    "as_strided_of_view": ((12,), lambda m, x: x[3:].as_strided((2, 2), (1, 2), 2)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_torch(name):
    shape, f = GRADS[name]
    a = np.random.default_rng(0).standard_normal(shape)
    grads = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        out = f(m, x)
        outs = list(out) if isinstance(out, tuple) else [out]
        rng = np.random.default_rng(1)
        loss = 0
        for o in outs:
            g = m.tensor(rng.standard_normal(tuple(o.shape) + ((2,) if o.is_complex() else ())))
            loss = loss + ((o * m.view_as_complex(g)).real if o.is_complex() else o * g).sum()
        grads.append(m.autograd.grad(loss, x)[0])
    np.testing.assert_allclose(_np(grads[1]), _np(grads[0]), rtol=1e-12, atol=1e-12)


def test_writes_through_views_reach_the_base():
    res = []
    for m in (torch, ember):
        x = ar(m, 3, 4).clone()
        x.diagonal(1).zero_()
        x.T[0] = -1
        x.mT[1].mul_(2)
        x.unflatten(1, (2, 2))[:, 1, 0] = 9
        x.movedim(0, 1)[3].fill_(5)
        x.split([1, 2])[1].add_(0.5)
        x.chunk(2, 1)[1].narrow(0, -1, 1).neg_()
        x.as_strided((2, 2), (4, 1), 1).add_(100)
        x.view(m.int32)[0, 0] = 0
        parts = x.unbind(0)
        parts[2].sub_(1)
        r = ar(m, 3, 2).clone()
        m.view_as_complex(r).mul_(1j)
        z = m.tensor([1 + 2j, 3 - 4j])
        m.view_as_real(z)[:, 1] = 0
        res.append((x, x._version, parts[0]._version, r, z))
    for e, t in zip(res[1], res[0]):
        if isinstance(t, int):
            assert e == t
        else:
            np.testing.assert_array_equal(_np(e), _np(t))


def test_grad_through_inplace_on_views_of_a_nonleaf():
    a = np.random.default_rng(2).standard_normal((4, 6))
    g = np.random.default_rng(3).standard_normal((4, 6))
    res = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        y = x * 1
        y.unflatten(1, (2, 3))[:, 0].mul_(3)
        y.t().diagonal(-1).pow_(2)
        y.narrow(0, 1, 3).narrow(1, -2, 2).mul_(x[1:, :2])
        y.backward(m.tensor(g))
        res.append((y, x.grad))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chain", [
    lambda m, x, y: (y.pow_(2), y.mul_(3)),
    lambda m, x, y: (y[0].pow_(2), y.mul_(x)),
    lambda m, x, y: (y.diagonal().pow_(3), y.narrow(0, 1, 1).mul_(x[1])),
    lambda m, x, y: (y.t()[0].pow_(0.5), y.t()[0].mul_(2)),
])
def test_pow_in_place_then_more_in_place_writes(chain):
    """pow_ with a number exponent keeps its input for the gradient, not its result: later writes are fine."""
    a = np.random.default_rng(4).uniform(0.5, 2, (3, 3))
    res = []
    for m in (torch, ember):
        x = m.tensor(a, requires_grad=True)
        y = x * 1
        chain(m, x, y)
        y.backward(m.tensor(a[::-1].copy()))
        res.append((y, x.grad))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-12, atol=1e-12)


ERRORS = {
    # (exception, message fragment) as torch gives them
    "view_two_inferred": lambda m: ar(m, 2, 3).reshape(-1, -1),
    "view_names_shape": lambda m: ar(m, 2, 3).reshape(4, 2),
    "view_0size_ambiguous": lambda m: ar(m, 0, 3).view(0, -1),
    "view_negative_dim": lambda m: ar(m, 2, 3).view(-2, 3),
    "view_noncontiguous": lambda m: ar(m, 4, 6).t().view(24),
    "view_dtype_stride": lambda m: ar(m, 3, 3)[:, :2].view(m.float64),
    "view_dtype_offset": lambda m: ar(m, 2, 4)[:, 1:3].view(m.float64),
    "view_dtype_last_stride": lambda m: ar(m, 2, 4)[:, ::2].view(m.float64),
    "view_dtype_shrink_t": lambda m: ar(m, 2, 2).t().view(m.float16),
    "unflatten_0d": lambda m: ar(m).unflatten(0, (1,)),
    "unflatten_sizes": lambda m: ar(m, 2, 12).unflatten(1, (5, -1)),
    "flatten_0d_dims": lambda m: ar(m).flatten(0, 1),
    "flatten_0d_start": lambda m: ar(m).flatten(1),
    "movedim_0d_out_of_range": lambda m: ar(m).movedim(1, 0),
    "squeeze_repeated": lambda m: ar(m, 1, 3).squeeze((0, -2)),
    "squeeze_out_of_range": lambda m: ar(m, 1, 3).squeeze((0, 5)),
    "unsqueeze_out_of_range": lambda m: ar(m, 2, 3).unsqueeze(-4),
    "narrow_float_start": lambda m: ar(m, 6).narrow(0, m.tensor(2.), 3),
    "narrow_1d_start": lambda m: ar(m, 6).narrow(0, m.tensor([1]), 2),
    "narrow_past_end": lambda m: ar(m, 6).narrow(0, -2, 3),
    "tensor_split_int32": lambda m: m.tensor_split(ar(m, 4), m.tensor([1, 2], dtype=m.int32)),
    "tensor_split_float": lambda m: m.tensor_split(ar(m, 4), m.tensor([1.])),
    "tensor_split_2d": lambda m: m.tensor_split(ar(m, 4), m.tensor([[1]])),
    "hsplit_indivisible": lambda m: m.hsplit(ar(m, 2, 6), 4),
    "split_dim": lambda m: ar(m, 3, 7).split(2, dim=2),
    "roll_no_shifts": lambda m: m.roll(ar(m, 2, 3), (), ()),
    "rot90_float_k": lambda m: m.rot90(ar(m, 2, 3), 1.0),
    "rot90_bool_k": lambda m: m.rot90(ar(m, 2, 3), True),
    "hstack_empty": lambda m: m.hstack([]),
    "vstack_empty": lambda m: m.vstack([]),
    "dstack_empty": lambda m: m.dstack(()),
    "column_stack_empty": lambda m: m.column_stack([]),
    "row_stack_empty": lambda m: m.row_stack([]),
    "cat_empty_2d": lambda m: m.cat([ar(m, 2, 3), m.zeros(0, 2)]),
    "cat_out_dtype": lambda m: m.cat([ar(m, 2), ar(m, 2)], out=m.empty(4, dtype=m.int64)),
    "stack_out_dtype": lambda m: m.stack([ar(m, 2), ar(m, 2)], out=m.empty(2, 2, dtype=m.int64)),
    "hstack_out_dtype": lambda m: m.hstack([ar(m, 2)], out=m.empty(2, dtype=m.bool)),
    "stack_0d_mismatch": lambda m: m.stack([ar(m), ar(m, 1)]),
    "expand_negative_new": lambda m: ar(m, 3).expand(-1, 3),
    "expand_as_mismatch": lambda m: ar(m, 3, 2).expand_as(ar(m, 2, 3, 4)),
    "broadcast_to_mismatch": lambda m: m.broadcast_to(ar(m, 3, 2), (3, 4)),
    "broadcast_to_fewer": lambda m: m.broadcast_to(ar(m, 3, 2), (2,)),
    "repeat_interleave_output_size": lambda m: ar(m, 3, 2).repeat_interleave(2, dim=0, output_size=5),
    "repeat_interleave_output_size_tensor": lambda m: m.repeat_interleave(ar(m, 3, 2), m.tensor([1, 0, 2]), 0,
                                                                          output_size=4),
    "repeat_interleave_index_output_size": lambda m: m.repeat_interleave(m.tensor([1, 2]), output_size=2),
    "repeat_interleave_int16": lambda m: m.repeat_interleave(ar(m, 3), m.tensor([1, 0, 2], dtype=m.int16)),
    "repeat_interleave_bool_index": lambda m: m.repeat_interleave(m.tensor([True, False])),
    "repeat_interleave_0d_index": lambda m: m.repeat_interleave(m.tensor(3)),
    "tile_negative": lambda m: ar(m, 2, 3).tile((-1,)),
    "unique_dim": lambda m: m.unique(m.tensor([[1, 2]]), dim=2),
    "view_as_complex_last": lambda m: m.view_as_complex(ar(m, 3, 3)),
    "view_as_complex_stride": lambda m: m.view_as_complex(ar(m, 2, 3)[:, :2]),
    "view_as_complex_int": lambda m: m.view_as_complex(m.arange(6).reshape(3, 2)),
    "view_as_real_real": lambda m: m.view_as_real(ar(m, 2)),
    "as_strided_bounds": lambda m: ar(m, 6).as_strided((2, 3), (3, 1), 2),
}
FULL_MESSAGE = {"view_0size_ambiguous", "view_negative_dim", "view_dtype_stride", "view_dtype_offset",
                "view_dtype_last_stride", "view_dtype_shrink_t", "flatten_0d_dims", "squeeze_repeated",
                "narrow_float_start", "narrow_1d_start", "tensor_split_int32", "tensor_split_float",
                "tensor_split_2d", "roll_no_shifts", "rot90_float_k", "rot90_bool_k", "hstack_empty", "vstack_empty",
                "dstack_empty", "column_stack_empty", "row_stack_empty", "cat_out_dtype", "stack_out_dtype",
                "hstack_out_dtype", "repeat_interleave_output_size", "repeat_interleave_output_size_tensor",
                "repeat_interleave_index_output_size", "repeat_interleave_int16", "repeat_interleave_bool_index",
                "repeat_interleave_0d_index", "view_names_shape", "view_two_inferred"}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as actual:
        ERRORS[name](ember)
    if name in FULL_MESSAGE:
        assert str(actual.value) == str(expected.value)


def test_repeat_interleave_index_form_keeps_the_counts_dtype():
    for dtype in ("int32", "int64"):
        e = ember.repeat_interleave(ember.tensor([2, 0, 3], dtype=getattr(ember, dtype)), output_size=5)
        t = torch.repeat_interleave(torch.tensor([2, 0, 3], dtype=getattr(torch, dtype)), output_size=5)
        _same(e, t)


def test_zero_dim_inputs_promote_as_scalars_in_block_diag():
    for a, b in [((2, 2), "float16"), ((1,), "int32")]:
        res = [m.block_diag(m.ones(*a, dtype=getattr(m, b)), m.tensor(2.5, dtype=m.float64), m.tensor([1, 2]))
               for m in (ember, torch)]
        _same(*res)
    res = [m.block_diag(m.tensor(1.), m.tensor(2., dtype=m.float64)) for m in (ember, torch)]
    _same(*res)


@pytest.mark.parametrize("call", [
    lambda m: m.unique(m.tensor([3, 1, 2, 3, 1]), return_inverse=True, return_counts=True),
    lambda m: m.unique(m.tensor([[3., 1.], [1., 2.]]), return_inverse=True),
    lambda m: m.unique(m.tensor([[1, 2], [0, 1], [1, 2]]), dim=0, return_inverse=True, return_counts=True),
    lambda m: m.unique(m.tensor([[2, 1, 2], [1, 2, 1]]), dim=-1, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True),
    lambda m: m.unique_consecutive(m.tensor([[1, 1], [1, 1], [2, 3], [1, 1]]), return_inverse=True,
                                   return_counts=True, dim=0),
    lambda m: m.tensor([[1, 1, 2], [1, 1, 3]]).unique_consecutive(return_counts=True, dim=1),
    lambda m: m.unique_consecutive(m.tensor([], dtype=m.int64), return_inverse=True, return_counts=True),
])
def test_unique_forms(call):
    _same(call(ember), call(torch))
