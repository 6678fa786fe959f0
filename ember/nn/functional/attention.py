"""Attention: scaled_dot_product_attention and the multi-head attention forward of ``nn.MultiheadAttention``."""
import math
import warnings

from ... import _dtype
from ..._autocast import lower_precision_inputs
from ..._creation import empty, zeros
from ..._ops.attention import ScaledDotProductAttention
from ..._ops.matmul import _CPP, addmm
from ..._ops.view import broadcast_pair
from ..._ops.shape import cat
from ..._tensor import Tensor

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _linear(x, w, b):
    """``x @ w^T + b`` as one GEMM over the flattened leading dimensions."""
    lead = tuple(x.shape[:-1])
    x2 = x.reshape(-1, x.shape[-1])
    y = x2 @ w.mT if b is None else addmm(b, x2, w.mT)
    return y.reshape(lead + (w.shape[0],))


def _keep_mask(shape, p, like):
    """Dropout's scaled keep mask: 1/(1-p) with probability 1-p, else 0 (all zeros for p == 1)."""
    keep = empty(shape, dtype=like.dtype, device=like.device)
    if p >= 1:
        return keep.zero_()
    return keep.bernoulli_(1 - p).mul_(1 / (1 - p))


def _additive(mask, dtype):
    """A boolean mask (True = attend) as the float bias sdpa adds: 0 where True, -inf where False."""
    bias = zeros(mask.shape, dtype=dtype, device=mask.device)
    return bias.masked_fill_(mask.logical_not(), float("-inf"))


def _check_sdpa(query, key, value, attn_mask):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not query.dtype is key.dtype is value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_CPP[query.dtype.name]} key.dtype: {_CPP[key.dtype.name]} and value.dtype: "
                           f"{_CPP[value.dtype.name]} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, key and value, but got "
                           f"{_CPP[query.dtype.name]}")
    if attn_mask is not None:
        md = attn_mask.dtype
        if md is not _dtype.bool and md is not _dtype.float32 and md is not query.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_CPP[md.name]} and  query.dtype: {_CPP[query.dtype.name]} "
                               "instead.")
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: the last dimension of query ({query.shape[-1]}) and key "
                           f"({key.shape[-1]}) must match")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, but "
                           f"got {key.shape[-2]} and {value.shape[-2]}")


def _attend(query, key, value, bias, dropout_p, is_causal, scale, safe):
    """The primitive's ``(output, weights after dropout)``."""
    shape = broadcast_pair(tuple(query.shape[:-2]), tuple(key.shape[:-2])) + (query.shape[-2], key.shape[-2])
    if bias is not None and broadcast_pair(shape, tuple(bias.shape)) != shape:  # the mask is added in place
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_pair(shape, tuple(bias.shape)))}")
    keep = _keep_mask(shape, dropout_p, query) if dropout_p > 0 else None
    out, weights = ScaledDotProductAttention.apply(query, key, value, bias, keep, scale=scale,
                                                   causal=bool(is_causal), safe=safe)
    return out, weights if keep is None else weights * keep


@lower_precision_inputs
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions.

    ``attn_mask`` is boolean (True = take part in attention) or float (added to the scores) and broadcasts to
    ``(..., L, S)``; ``is_causal`` masks as ``tril(ones(L, S))`` (together with ``attn_mask`` if both are given, as
    torch's fused CPU kernel does). Rows that mask every key give zeros. ``dropout_p``
    always applies (pass 0.0 in eval). ``scale`` defaults to ``1/sqrt(E)``. ``enable_gqa`` repeats the key/value heads
    (dimension -3) to the number of query heads.

    Shape:
        query ``(N, ..., Hq, L, E)``, key ``(N, ..., H, S, E)``, value ``(N, ..., H, S, Ev)`` -> ``(N, ..., Hq, L, Ev)``

    Example::

        >>> q = k = v = ember.ones(1, 2, 3, 4)
        >>> ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).shape
        ember.Size([1, 2, 3, 4])
    """
    _check_sdpa(query, key, value, attn_mask)
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        if hk != hq:
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    bias = attn_mask
    if attn_mask is not None and attn_mask.dtype is _dtype.bool:
        bias = _additive(attn_mask, query.dtype)
    return _attend(query, key, value, bias, dropout_p, is_causal, float(scale), True)[0]


# -- multi-head attention ----------------------------------------------------------------------------------------
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean mask (True = masked out) as a float mask of ``target_type`` with -inf; float masks pass through."""
    if mask is None:
        return None
    if mask.dtype is not _dtype.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if mask.dtype is _dtype.bool:
        mask = zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D), with torch's assertions on the other arguments' ranks."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         "tensor")


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate):
    """q, k, v projected by the packed ``(3E, E)`` weight, or by the separate ``(q, k, v)`` weights."""
    E = query.shape[-1]
    if separate is None:
        if key is value and query is key:  # self-attention: one GEMM for all three
            qkv = _linear(query, in_proj_weight, in_proj_bias)
            return qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = separate
        for name, w, shape in (("query", w_q, (E, E)), ("key", w_k, (E, key.shape[-1])),
                               ("value", w_v, (E, value.shape[-1]))):
            if tuple(w.shape) != shape:
                raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    if key is value and separate is None:
        kv = _linear(key, in_proj_weight[E:], in_proj_bias[E:] if in_proj_bias is not None else None)
        return _linear(query, w_q, b_q), kv[..., :E], kv[..., E:]
    return _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)


def _pad_last(mask):
    """The mask with one more column of zeros (for the added bias_k / zero-attention key)."""
    return cat([mask, zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype, device=mask.device)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """The forward of ``nn.MultiheadAttention`` on sequence-first inputs ``(L, N, E)`` (or unbatched ``(L, E)``).

    Returns ``(attn_output, attn_weights)``; the weights (averaged over heads if ``average_attn_weights``) only
    with ``need_weights``, else None.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        q, k, v = _in_projection(query, key, value, None, in_proj_bias, (q_proj_weight, k_proj_weight, v_proj_weight))
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, None)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static(static_k, bsz * num_heads, head_dim, "k") if static_k is not None else \
        k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _static(static_v, bsz * num_heads, head_dim, "v") if static_v is not None else \
        v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = cat([v, zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        out, weights = _attend(q, k, v, attn_mask, dropout_p, False, 1.0 / math.sqrt(head_dim), False)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            weights = weights.squeeze(0)
    else:
        q = q.reshape(bsz, num_heads, tgt_len, head_dim)
        k = k.reshape(bsz, num_heads, src_len, head_dim)
        v = v.reshape(bsz, num_heads, src_len, head_dim)
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
                attn_mask.reshape(bsz, num_heads, attn_mask.shape[-2], src_len)
        out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
        weights = None
    # (N * heads, L, head_dim) -> (L, N, E)
    out = out.reshape(bsz, num_heads, tgt_len, head_dim).permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
    if not is_batched:
        out = out.squeeze(1)
    return out, weights


def _static(t, n, head_dim, name):
    if t.shape[0] != n:
        raise AssertionError(f"expecting static_{name}.size(0) of {n}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t
