"""Lookup tables: embedding, embedding_bag, and one_hot."""

__all__ = ["embedding", "embedding_bag", "one_hot"]
import warnings

from ... import _dtype
from ..._creation import arange, zeros
from ..._device import array_module
from ..._ops.nn_ops import Embedding
from ..._tensor import Tensor


def _check_padding_idx(padding_idx, num, what="Padding_idx"):
    """``padding_idx`` as a row number (negative counts from the end), or -1 for none."""
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
        raise AssertionError(f"{what} must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _check_indices(input, op):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'indices' (position 2) must be Tensor, not {type(input).__name__}")
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for {op})")


def _renorm_(weight, input, max_norm, norm_type):
    """Rescales, in place, the rows of ``weight`` that ``input`` looks up to a ``norm_type``-norm of at most
    ``max_norm``."""
    xp = array_module(weight.device)
    rows = xp.unique(input._data.reshape(-1))
    if rows.size == 0:
        return
    w = weight._data
    sel = w[rows]
    # as torch: each row's norm and scale rounded to the weight's dtype, the product taken in float32 (or float64)
    norm = xp.linalg.norm(sel.astype(xp.float64), ord=norm_type, axis=1).astype(w.dtype).astype(xp.float64)
    opmath = xp.float64 if w.dtype == xp.float64 else xp.float32
    scale = xp.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0).astype(w.dtype).astype(opmath)
    w[rows] = (sel.astype(opmath) * scale[:, None]).astype(w.dtype)
    weight._bump()


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the indices ``input``: an ``input.shape + (embedding_dim,)`` tensor.

    ``padding_idx`` rows get no gradient; ``max_norm`` renormalizes the looked-up rows of ``weight`` in place;
    ``scale_grad_by_freq`` divides each row's gradient by the index's count in ``input``. With ``sparse``, the
    gradient of a leaf ``weight`` is a sparse COO tensor holding the rows looked up.

    Example::

        >>> F.embedding(ember.tensor([[0, 2]]), ember.tensor([[0., 1.], [2., 3.], [4., 5.]]))
        tensor([[[0., 1.],
                 [4., 5.]]])
    """
    _check_indices(input, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _check_padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    return Embedding.apply(weight, input, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                           sparse=sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings: the rows of ``input`` (2-D), or the slices of ``input`` (1-D)
    that start at ``offsets``. Entries equal to ``padding_idx`` are left out; empty bags give zeros.
    ``per_sample_weights`` (mode ``'sum'`` only) weights each looked-up row.
    """
    if weight.dtype in (_dtype.int64, _dtype.int32) and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    _check_indices(input, "embedding_bag")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = arange(0, input.numel(), input.shape[1], dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    a = input._data
    if a.size and (a.min() < 0 or a.max() >= weight.shape[0]):
        i = int(((a < 0) | (a >= weight.shape[0])).argmax())
        raise RuntimeError(f"Index {i} of input takes value {int(a[i])} which is not in the valid range "
                           f"[0, {weight.shape[0]})")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                           f"#1 'per_sample_weights'; but type {weight.type()} does not equal "
                           f"{per_sample_weights.type()} (while checking arguments for embedding_bag)")
    xp_off = offsets._data
    n = input.shape[0]
    if xp_off.size and int(xp_off[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(xp_off[0])}")
    if xp_off.size and int(xp_off[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(xp_off[-1])}")
    if include_last_offset and not xp_off.size:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if mode != "max" and xp_off.size > 1 and bool((xp_off[1:] < xp_off[:-1]).any()):
        raise RuntimeError("embedding_bag: offsets has to be a non-decreasing sequence")
    bags = xp_off.shape[0] - (1 if include_last_offset else 0)
    starts = xp_off[:bags]
    end = 0 if bags == 0 else int(xp_off[-1]) if include_last_offset else n
    xp = array_module(input.device)
    # positions kept: inside some bag and not padding; each one's bag number
    pos = xp.arange(end)
    keep = xp.ones(end, bool) if padding_idx is None else \
        input._data[:end] != _check_padding_idx(padding_idx, weight.shape[0], "padding_idx")
    pos = pos[keep]
    seg = xp.searchsorted(starts, pos, side="right") - 1
    idx = Tensor._make(input._data[pos], input.dtype, input.device)
    rows = embedding(idx, weight, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    half = mode != "max" and rows.dtype in (_dtype.float16, _dtype.bfloat16)  # summed in float32
    if half:
        rows = rows.float()
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[Tensor._make(pos, _dtype.int64, input.device)].unsqueeze(1)
    seg_t = Tensor._make(seg.astype(xp.int64), _dtype.int64, input.device)
    out = zeros((bags, weight.shape[1]), dtype=rows.dtype, device=weight.device)
    if mode == "max":
        index = seg_t.unsqueeze(1).expand(rows.shape)
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    out = out.index_add(0, seg_t, rows)
    if half:
        out = out.to(weight.dtype)
    if mode == "mean":
        counts = xp.bincount(seg, minlength=bags).astype(out.dtype.np)
        out = out / Tensor._make(xp.maximum(counts, 1)[:, None], out.dtype, out.device)
    return out


def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index of ``tensor``
    (``num_classes=-1``: one more than the largest index).

    Example::

        >>> F.one_hot(ember.tensor([0, 2]))
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor._data
    xp = array_module(tensor.device)
    if a.size == 0 and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = int(a.max()) + 1
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = (a[..., None] == xp.arange(num_classes)).astype(xp.int64)
    return Tensor._make(out, _dtype.int64, tensor.device)
