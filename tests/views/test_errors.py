"""Invalid arguments to view, shape and sort ops raise torch's exception type with torch's message."""
import numpy as np
import pytest
import torch

import ember


def x(m, *shape, dtype="float32"):
    return m.tensor((np.arange(int(np.prod(shape))) % (2 if dtype == "bool" else 100)).astype(dtype).reshape(shape))


CASES = {
    "view_incompatible": lambda m: x(m, 2, 3).t().view(-1),
    "view_bad_size": lambda m: x(m, 2, 3).view(4, -1),
    "view_two_inferred": lambda m: x(m, 2, 3).view(-1, -1),
    "reshape_bad_size": lambda m: x(m, 2, 3).reshape(5),
    "transpose_dim": lambda m: x(m, 2, 3).transpose(0, 2),
    "permute_len": lambda m: x(m, 2, 3).permute(0),
    "permute_dup": lambda m: x(m, 2, 3).permute(1, 1),
    "permute_none": lambda m: x(m, 2, 3).permute(),
    "t_3d": lambda m: m.t(x(m, 2, 3, 4)),
    "mT_1d": lambda m: x(m, 3).mT,
    "H_3d": lambda m: x(m, 2, 2, 2).H,
    "mH_1d": lambda m: x(m, 3).mH,
    "movedim_repeat": lambda m: m.movedim(x(m, 2, 3, 4), (0, 1), (2, 2)),
    "movedim_len": lambda m: m.movedim(x(m, 2, 3, 4), (0, 1), (2,)),
    "expand_shrink": lambda m: x(m, 3, 1).expand(3, 1, 1),
    "expand_mismatch": lambda m: x(m, 3, 2).expand(3, 4),
    "expand_few": lambda m: x(m, 3, 2).expand(2),
    "expand_leading_neg": lambda m: x(m, 2).expand(-1, 2),
    "squeeze_dim": lambda m: x(m, 2, 1).squeeze(5),
    "unsqueeze_dim": lambda m: x(m, 2).unsqueeze(3),
    "flatten_order": lambda m: x(m, 2, 3).flatten(1, 0),
    "unflatten_size": lambda m: x(m, 2, 6).unflatten(1, (4, -1)),
    "unflatten_empty": lambda m: x(m, 2, 6).unflatten(1, ()),
    "narrow_start": lambda m: x(m, 4).narrow(0, 5, 0),
    "narrow_neg_start": lambda m: x(m, 4).narrow(0, -5, 1),
    "narrow_length": lambda m: x(m, 4).narrow(0, 2, 3),
    "narrow_neg_length": lambda m: x(m, 4).narrow(0, 2, -1),
    "narrow_0d": lambda m: x(m).narrow(0, 0, 1),
    "select_index": lambda m: x(m, 3).select(0, 3),
    "select_0d": lambda m: x(m).select(0, 0),
    "diagonal_same": lambda m: x(m, 2, 2).diagonal(0, 1, -1),
    "unfold_size": lambda m: x(m, 4).unfold(0, 5, 1),
    "unfold_step": lambda m: x(m, 4).unfold(0, 2, 0),
    "unfold_neg_size": lambda m: x(m, 4).unfold(0, -1, 1),
    "as_strided_bounds": lambda m: x(m, 2, 3).as_strided((2, 2), (1, 2), 100),
    "as_strided_negative": lambda m: x(m, 4).as_strided((2,), (-1,)),
    "split_zero": lambda m: x(m, 4).split(0),
    "split_negative": lambda m: x(m, 4).split(-1),
    "split_sizes_sum": lambda m: x(m, 4).split([1, 2]),
    "split_sizes_negative": lambda m: x(m, 4).split([5, -1]),
    "split_0d": lambda m: x(m).split(1),
    "chunk_zero": lambda m: x(m, 4).chunk(0),
    "chunk_0d": lambda m: x(m).chunk(1),
    "tensor_split_zero": lambda m: x(m, 4).tensor_split(0),
    "tensor_split_0d": lambda m: x(m).tensor_split(2),
    "hsplit_divisible": lambda m: m.hsplit(x(m, 2, 3), 2),
    "hsplit_0d": lambda m: m.hsplit(x(m), 1),
    "vsplit_1d": lambda m: m.vsplit(x(m, 4), 2),
    "dsplit_2d": lambda m: m.dsplit(x(m, 2, 2), 2),
    "unbind_0d": lambda m: x(m).unbind(),
    "clone_channels_last_rank": lambda m: m.clone(x(m, 2, 3), memory_format=m.channels_last),
    "cat_empty_list": lambda m: m.cat([]),
    "cat_0d": lambda m: m.cat([x(m), x(m)]),
    "cat_ndim": lambda m: m.cat([x(m, 2, 3), x(m, 3)]),
    "cat_sizes": lambda m: m.cat([x(m, 2, 3), x(m, 2, 4)]),
    "cat_dim": lambda m: m.cat([x(m, 2, 3), x(m, 2, 3)], 2),
    "cat_tensor": lambda m: m.cat(x(m, 2, 3)),
    "stack_empty": lambda m: m.stack([]),
    "stack_sizes": lambda m: m.stack([x(m, 2, 3), x(m, 3, 2)]),
    "flip_dup": lambda m: m.flip(x(m, 2, 3), (0, -2)),
    "flip_int": lambda m: m.flip(x(m, 2, 3), 0),
    "fliplr_1d": lambda m: m.fliplr(x(m, 3)),
    "flipud_0d": lambda m: m.flipud(x(m)),
    "roll_align": lambda m: m.roll(x(m, 2, 3), (1, 2), 0),
    "roll_flat_align": lambda m: m.roll(x(m, 2, 3), (1, 2)),
    "roll_0d_dim": lambda m: m.roll(x(m), 1, 0),
    "rot90_dims": lambda m: m.rot90(x(m, 2, 3), 1, (0,)),
    "rot90_1d": lambda m: m.rot90(x(m, 3)),
    "rot90_same": lambda m: m.rot90(x(m, 2, 3), 1, (1, -1)),
    "repeat_few": lambda m: x(m, 2, 3).repeat(2),
    "repeat_negative": lambda m: x(m, 2, 3).repeat(-1, 2),
    "repeat_interleave_negative": lambda m: m.repeat_interleave(x(m, 3), -1),
    "repeat_interleave_size": lambda m: m.repeat_interleave(x(m, 2, 3), m.tensor([1, 2, 3]), 0),
    "repeat_interleave_2d": lambda m: m.repeat_interleave(x(m, 2), m.tensor([[1, 2]]), 0),
    "repeat_interleave_neg_tensor": lambda m: m.repeat_interleave(x(m, 2), m.tensor([1, -2]), 0),
    "repeat_interleave_float": lambda m: m.repeat_interleave(x(m, 2), m.tensor([1., 2.]), 0),
    "tril_1d": lambda m: m.tril(x(m, 3)),
    "triu_1d": lambda m: m.triu(x(m, 3)),
    "diag_3d": lambda m: m.diag(x(m, 2, 2, 2)),
    "diag_0d": lambda m: m.diag(x(m)),
    "diag_embed_same": lambda m: m.diag_embed(x(m, 3), 0, 0, 0),
    "meshgrid_2d": lambda m: m.meshgrid(x(m, 2, 2), indexing="ij"),
    "meshgrid_dtypes": lambda m: m.meshgrid(x(m, 2), x(m, 3, dtype="int64"), indexing="ij"),
    "meshgrid_indexing": lambda m: m.meshgrid(x(m, 2), indexing="foo"),
    "meshgrid_empty": lambda m: m.meshgrid(indexing="ij"),
    "block_diag_3d": lambda m: m.block_diag(x(m, 2, 2, 2)),
    "cartesian_prod_2d": lambda m: m.cartesian_prod(x(m, 2, 2)),
    "sort_dim": lambda m: m.sort(x(m, 3), dim=1),
    "topk_k": lambda m: m.topk(x(m, 3), 4),
    "topk_negative": lambda m: m.topk(x(m, 3), -1),
    "topk_bool": lambda m: m.topk(x(m, 3, dtype="bool"), 1),
    "kthvalue_k": lambda m: m.kthvalue(x(m, 3), 0),
    "kthvalue_bool": lambda m: m.kthvalue(x(m, 3, dtype="bool"), 1),
    "unique_zero_sized": lambda m: m.unique(x(m, 3, 0), dim=0),
    "searchsorted_side": lambda m: m.searchsorted(x(m, 3), x(m, 2), side="foo"),
    "searchsorted_opposite": lambda m: m.searchsorted(x(m, 3), x(m, 2), side="left", right=True),
    "searchsorted_shapes": lambda m: m.searchsorted(x(m, 2, 3), x(m, 3, 2)),
    "searchsorted_scalar_nd": lambda m: m.searchsorted(x(m, 2, 3), 1),
    "searchsorted_bool": lambda m: m.searchsorted(x(m, 2, dtype="bool"), x(m, 2, dtype="bool")),
    "searchsorted_sorter": lambda m: m.searchsorted(x(m, 3), x(m, 2), sorter=m.tensor([0, 1])),
    "bucketize_2d": lambda m: m.bucketize(x(m, 3), x(m, 2, 2)),
}


PREFIX_ONLY = {"meshgrid_2d": "but got:"}  # torch prints the tensor in its C++ format


@pytest.mark.parametrize("name", list(CASES))
def test_error_matches_torch(name):
    with pytest.raises(Exception) as expected:
        CASES[name](torch)
    with pytest.raises(type(expected.value)) as actual:
        CASES[name](ember)
    want, got = str(expected.value), str(actual.value)
    if name in PREFIX_ONLY:
        cut = want.index(PREFIX_ONLY[name])
        want, got = want[:cut], got[:cut]
    assert got == want
