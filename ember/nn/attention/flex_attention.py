"""``ember.nn.attention.flex_attention``: attention whose scores are edited by a user ``score_mod`` and masked by a
``mask_mod`` (carried in a :class:`BlockMask`).

ember computes it densely: the mods are called once on broadcast index tensors ``b (B,1,1,1)``, ``h (1,H,1,1)``,
``q_idx (1,1,L,1)``, ``kv_idx (1,1,1,S)`` (per batch and head, with ``q_idx (L,1)`` and ``kv_idx (1,S)``, when a mod
does not broadcast), so gradients reach q, k, v and every tensor a mod captures. The block structure of a
:class:`BlockMask` is bookkeeping for sparse kernels; the mask applied is its ``mask_mod``.
"""
import inspect
import itertools
import math
import warnings
from typing import Callable, NamedTuple, TypedDict

import ember
from ember import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of the fused kernels; ember's dense implementation accepts and ignores them."""


class AuxRequest(NamedTuple):
    """Which auxiliary outputs :func:`flex_attention` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of :func:`flex_attention`: the requested fields hold tensors, the others ``None``."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def _identity(score, batch, head, token_q, token_kv):
    return score


def noop_mask(batch, head, token_q, token_kv):
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=ember.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    raise RuntimeError("Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
                       "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod.")


def or_masks(*mask_mods):
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=ember.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result
    return or_mask


def and_masks(*mask_mods):
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=ember.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result
    return and_mask


def _num_positional(fn):
    if hasattr(fn, "__code__"):
        return fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    return sum(p.default is inspect.Parameter.empty for p in inspect.signature(fn).parameters.values())


def _is_score_mod(fn):
    n = _num_positional(fn)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n == 5


def _evaluate(fn, lead, B, H, Q, KV, device):
    """``fn(*lead, b, h, q_idx, kv_idx)`` over the (B, H, Q, KV) grid, broadcastable to it; ``lead`` is ``()`` or
    ``(scores,)`` with scores of that shape."""
    full = (B, H, Q, KV)
    idx = [ember.arange(n, device=device).view([n if i == d else 1 for i in range(4)]) for d, n in enumerate(full)]
    try:
        out = fn(*lead, *idx)
        if ember.broadcast_shapes(tuple(out.shape), full) == full:
            return out
    except (IndexError, RuntimeError, ValueError, TypeError):
        pass
    # per (batch, head), for mods that index with b or h first (``bias[h][q_idx, kv_idx]``)
    q, kv = idx[2].view(Q, 1), idx[3].view(1, KV)
    rows = [fn(*(s[bi, hi] for s in lead), ember.tensor(bi, device=device), ember.tensor(hi, device=device), q, kv)
            .expand(Q, KV) for bi in range(B) for hi in range(H)]
    return ember.stack(rows).view(full)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    r"""Creates the dense boolean mask (True = attend) of shape ``(B, H, Q_LEN, KV_LEN)`` of a mask_mod, or of a
    score_mod (True where it does not give ``-inf``). ``B`` and ``H`` of ``None`` mean 1.

    Example::

        >>> from ember.nn.attention.flex_attention import create_mask
        >>> create_mask(lambda b, h, q, kv: q >= kv, 1, 1, 2, 2, "cpu")[0, 0]
        tensor([[ True, False],
                [ True,  True]])
    """
    if device is None:
        device = ember.accelerator.current_accelerator() or "cpu"
    B, H = B or 1, H or 1
    if _is_score_mod(mod_fn):
        out = _evaluate(mod_fn, (ember.zeros(B, H, Q_LEN, KV_LEN, device=device),), B, H, Q_LEN, KV_LEN, device)
        return ember.where(ember.isneginf(out), False, True).expand(B, H, Q_LEN, KV_LEN).contiguous()
    return _evaluate(mod_fn, (), B, H, Q_LEN, KV_LEN, device).expand(B, H, Q_LEN, KV_LEN).contiguous()


def _ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    """(..., rows) counts and (..., rows, n) column indices as a dense (..., rows, num_cols) int32 block mask."""
    valid = ember.arange(col_indices.shape[-1], device=col_indices.device) < num_blocks_in_row.unsqueeze(-1)
    cols = ember.where(valid, col_indices.long(), num_cols)  # invalid entries write one column past the end
    dense = ember.zeros(*col_indices.shape[:-1], num_cols + 1, dtype=ember.int32, device=col_indices.device)
    return dense.scatter_(-1, cols, 1)[..., :num_cols].contiguous()


def _dense_to_ordered(dense_mask):
    dense_mask = dense_mask.to(ember.int32)
    col_indices = ember.argsort(dense_mask, dim=-1, descending=True, stable=True)
    return dense_mask.sum(-1).to(ember.int32), col_indices.to(ember.int32)


def _transpose_ordered(num_blocks_in_row, col_indices):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks, indices, new_num_rows, new_num_cols):
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows].clamp(max=new_num_cols)
    return (indices < num_blocks[:, :, :, None]).sum(-1).to(ember.int32), indices


class BlockMask:
    r"""A block-sparse attention mask: for each (batch, head, query block) the key/value blocks to visit, split into
    partial blocks (where ``mask_mod`` is applied) and full blocks, plus the transposed (query block) view.

    Build one with :func:`create_block_mask` or :meth:`from_kv_blocks`.
    """

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                     "q_indices", "full_q_num_blocks", "full_q_indices"]

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE), mask_mod=noop_mask):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None, compute_q_blocks=True):
        """Creates a BlockMask from the key/value block counts and indices of each query block row (and of its full
        blocks); the query-block view is derived by transposing them. ``seq_lengths`` defaults to the blocks'
        extent."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks, full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                   q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE,
                   mask_mod if mask_mod is not None else noop_mask)

    def as_tuple(self, flatten=True):
        """The BlockMask's fields as a tuple; ``flatten`` splits ``seq_lengths`` and ``BLOCK_SIZE`` into ints."""
        seq_lengths, block_size = (self.seq_lengths, self.BLOCK_SIZE) if flatten else ((self.seq_lengths,),
                                                                                      (self.BLOCK_SIZE,))
        return (*seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices,
                None, None, None, None, *block_size, self.mask_mod)

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None
        fields = "".join(f"    {name}={shape_or_none(getattr(self, name))},\n" for name in self._TENSOR_ATTRS)
        return (f"BlockMask(\n{fields}    BLOCK_SIZE={self.BLOCK_SIZE},\n    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={getattr(self.mask_mod, '__name__', self.mask_mod)}\n)")

    def __getitem__(self, index):
        """The BlockMask of the selected batches, heads and query blocks; an integer keeps its dimension. The new
        mask's ``mask_mod`` must be set from the original one."""
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
                      for i, n in zip(padded, self.kv_num_blocks.shape[:3]))
        full = self.full_kv_num_blocks is not None
        return BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index], self.full_kv_num_blocks[index] if full else None,
            self.full_kv_indices[index] if full else None, BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]
        kv = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full = (None, None) if self.full_kv_num_blocks is None else _adjust_num_blocks_and_indices(
            self.full_kv_num_blocks, self.full_kv_indices, rows, cols)
        return self.from_kv_blocks(*kv, *full, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                   seq_lengths=(new_q_len, new_kv_len), compute_q_blocks=self.q_indices is not None)

    def numel(self):
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return math.prod(self.shape)

    def sparsity(self):
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self):
        """Returns a dense block that is equivalent to the block mask."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """Returns a string drawing of the block mask (█ computed, ░ partly, blank skipped) of up to ``limit``
        batch/head pairs; ``grid_size=-1`` draws every block."""
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        elif isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        row_step, col_step = max(1, -(-num_rows // max_rows)), max(1, -(-num_cols // max_cols))
        total = []
        for n, batch_idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if n == limit:
                total += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            cur = dense[batch_idx]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    frac = cur[r:r + row_step, c:c + col_step].float().mean().item()
                    vis += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                vis += "\n"
            total.append(vis)
        return "\n".join(total)

    def to(self, device):
        """Returns a copy of the BlockMask with its tensors on ``device``."""
        moved = {a: None if getattr(self, a) is None else getattr(self, a).to(device) for a in self._TENSOR_ATTRS}
        return BlockMask(self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod)


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE, KV_BLOCK_SIZE, separate_full_blocks):
    """Per (Q_BLOCK_SIZE, KV_BLOCK_SIZE) tile of a (B, H, Q, KV) mask: partial (some) and full (all) int8 maps."""
    B, H, Q, KV = mask.shape
    rows, cols = -(-Q // Q_BLOCK_SIZE), -(-KV // KV_BLOCK_SIZE)
    padded = ember.zeros(B, H, rows * Q_BLOCK_SIZE, cols * KV_BLOCK_SIZE, dtype=ember.int32, device=mask.device)
    padded[:, :, :Q, :KV] = mask
    counts = padded.view(B, H, rows, Q_BLOCK_SIZE, cols, KV_BLOCK_SIZE).sum(dim=(3, 5))
    if not separate_full_blocks:
        return (counts > 0).to(ember.int8), None
    whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
    return ((counts > 0) & (counts < whole)).to(ember.int8), (counts == whole).to(ember.int8)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    r"""Creates a :class:`BlockMask` from a mask_mod ``(b, h, q_idx, kv_idx) -> bool tensor`` (True = attend).

    Args:
        mask_mod (Callable): the mask function, written with tensor ops.
        B (int): batch size, or ``None`` to broadcast over the batch.
        H (int): number of query heads, or ``None`` to broadcast over heads.
        Q_LEN (int): query sequence length.
        KV_LEN (int): key/value sequence length.
        device (str): device of the mask.
        BLOCK_SIZE (int or tuple[int, int]): the (query, key/value) tile size.
        separate_full_blocks (bool): store fully unmasked tiles apart from partial ones.
        compute_dq_write_order, dq_kv_order (bool): orderings for GPU kernels' gradient writes, accepted and
            unused (ember's attention is dense).

    Example::

        >>> from ember.nn.attention.flex_attention import create_block_mask
        >>> create_block_mask(lambda b, h, q, kv: q >= kv, None, None, 256, 256, "cpu").to_dense()[0, 0]
        tensor([[1, 0],
                [1, 1]], dtype=ember.int32)
    """
    if device is None:
        device = ember.accelerator.current_accelerator() or "cpu"
    if _is_score_mod(mask_mod):
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    if _compile:
        warnings.warn("_compile flag on create_block_mask is deprecated and has no effect.", DeprecationWarning,
                      stacklevel=2)
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_block, kv_block, separate_full_blocks)
    full = (None, None) if full is None else _dense_to_ordered(full)
    return BlockMask.from_kv_blocks(*_dense_to_ordered(partial), *full, BLOCK_SIZE=(q_block, kv_block),
                                    mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def _check_inputs(query, key, value, block_mask, enable_gqa):
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got "
                         f"E={query.size(-1)} and E={key.size(-1)}.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    Hq, Hkv = query.size(1), key.size(1)
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={Hq} and "
                         f"Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and Hq % Hkv != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} and "
                         f"Hkv={Hkv}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
    if block_mask is None:
        return
    if block_mask.mask_mod is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    q_len, kv_len = block_mask.shape[-2:]
    if query.size(-2) > q_len or key.size(-2) > kv_len:
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                         f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created for a "
                         "smaller length than you're using it for, you likely need to create a new block mask.")
    if query.size(-2) < q_len or key.size(-2) < kv_len:
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                         f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created for a "
                         "larger length than you're using it for, you can either 1. create a new block mask with the "
                         "correct length, or 2. 'adjust' the existing block mask to the correct length by calling "
                         "block_mask._adjust(q_len, kv_len).")
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got {query.device} and "
                           f"{block_mask.kv_num_blocks.device}.")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    r"""Scaled dot product attention whose scores pass through ``score_mod(score, b, h, q_idx, kv_idx)`` and are
    masked where ``block_mask.mask_mod(b, h, q_idx, kv_idx)`` is False; fully masked rows give zeros (and an lse of
    ``-inf``). Scores are computed in float32 (float64 for float64 inputs).

    Args:
        query (Tensor): :math:`(B, Hq, L, E)`.
        key (Tensor): :math:`(B, Hkv, S, E)`.
        value (Tensor): :math:`(B, Hkv, S, Ev)`.
        score_mod (Callable): edits each score; written with tensor ops, may capture tensors (they get gradients).
        block_mask (BlockMask): from :func:`create_block_mask`.
        scale (float): defaults to :math:`1/\sqrt{E}`.
        enable_gqa (bool): let ``Hq`` be a multiple of ``Hkv`` (grouped query attention).
        return_lse (bool): deprecated; also return the log-sum-exp of the scores, :math:`(B, Hq, L)`.
        kernel_options (dict): kernel tuning options, accepted and ignored.
        return_aux (AuxRequest): return an :class:`AuxOutput` with the requested ``lse`` / ``max_scores``.

    Shape:
        output: :math:`(B, Hq, L, Ev)`.

    Example::

        >>> from ember.nn.attention.flex_attention import flex_attention
        >>> q = ember.randn(1, 2, 4, 8)
        >>> flex_attention(q, q, q, score_mod=lambda s, b, h, qi, kvi: s + (qi - kvi)).shape
        ember.Size([1, 2, 4, 8])
    """
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning, stacklevel=2)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    group = query.size(1) // key.size(1)
    if group > 1:
        key, value = key.repeat_interleave(group, dim=1), value.repeat_interleave(group, dim=1)
    B, H, Q, KV = query.size(0), query.size(1), query.size(2), key.size(2)
    key, value = key.expand(B, *key.shape[1:]), value.expand(B, *value.shape[1:])

    wp = ember.float64 if query.dtype == ember.float64 else ember.float32
    scores = (query.to(wp) @ key.to(wp).transpose(-2, -1)) * scale  # (B, H, L, S)
    if score_mod is not None:
        scores = _evaluate(score_mod, (scores,), B, H, Q, KV, query.device).to(wp).expand(B, H, Q, KV)
    if block_mask is not None and block_mask.mask_mod is not noop_mask:
        mask = _evaluate(block_mask.mask_mod, (), B, H, Q, KV, query.device)
        scores = ember.where(mask, scores, ember.tensor(float("-inf"), dtype=wp, device=query.device))
    # softmax and logsumexp that leave fully masked rows at 0 and -inf without NaN gradients
    row_max = scores.detach().amax(-1, keepdim=True)
    row_max = ember.where(ember.isinf(row_max), 0.0, row_max)
    e = (scores - row_max).exp()
    total = e.sum(-1, keepdim=True)
    safe = ember.where(total == 0, 1.0, total)
    out = (e / safe).to(query.dtype) @ value.to(query.dtype)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    lse = ember.where(total > 0, safe.log() + row_max, float("-inf")).squeeze(-1) if want_lse else None
    max_scores = scores.amax(-1) if want_max else None
    if return_aux is not None:
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    return (out, lse) if return_lse else out
