"""Variable-length sequences for recurrent layers: PackedSequence and packing, padding and their inverses.

Every conversion is one ``index_select`` of the data (with a padding row appended where padding is written), so
gradients flow through packing and unpacking.
"""
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ... import _dtype
from ..._creation import arange, as_tensor, empty_like, full, tensor
from ..._ops.shape import cat
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _host(t):
    """A CPU int64 NumPy copy of a tensor or sequence of ints."""
    if isinstance(t, Tensor):
        return np.asarray(t.cpu()._data).astype(np.int64)
    return np.asarray(t, dtype=np.int64)


def _index(arr, like):
    return tensor(arr, dtype=_dtype.int64, device=like.device)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences packed time-major: ``data`` holds the ``batch_sizes[t]`` active rows of
    each step ``t`` in turn; ``sorted_indices`` maps the packed (length-sorted) batch order to the original one.
    Build it with ``pack_padded_sequence`` or ``pack_sequence``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                             "manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. "
                             "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data moved/cast as ``Tensor.to``; the indices follow the data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        """Whether ``data`` is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()

    def pin_memory(self):
        """A copy with ``data`` and the indices in page-locked memory (``batch_sizes`` stays as it is)."""
        pin = (lambda t: None if t is None else t.pin_memory())
        return type(self)(pin(self.data), self.batch_sizes, pin(self.sorted_indices), pin(self.unsorted_indices))


def invert_permutation(permutation):
    """The inverse of a permutation (a 1-D index tensor), or None for None."""
    if permutation is None:
        return None
    out = empty_like(permutation)
    return out.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


def _check_lengths(lengths, batch, steps, enforce_sorted):
    if lengths.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D cpu Long "
                           "tensor")
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch})")
    if enforce_sorted and np.any(np.diff(lengths) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if batch and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch and lengths.max() > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({lengths.max()}) exceeds the padded sequence length "
                           f"({steps})")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences of the given lengths.

    With ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is sorted and ``sorted_indices``
    recorded.

    Example::

        >>> from ember.nn.utils.rnn import pack_padded_sequence
        >>> pack_padded_sequence(ember.zeros(3, 2, 1), [3, 1]).batch_sizes
        tensor([2, 1, 1])
    """
    lens = _host(lengths)
    t_dim, b_dim = (1, 0) if batch_first else (0, 1)
    steps, batch = input.shape[t_dim], input.shape[b_dim]
    _check_lengths(lens, batch, steps, enforce_sorted)
    order = np.arange(batch)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = _index(order, input)
    max_len = int(lens[0]) if batch else 0
    batch_sizes = (lens[None, :] > np.arange(max_len)[:, None]).sum(1)  # (T,)
    t_idx, b_idx = np.nonzero(np.arange(max_len)[:, None] < lens[None, :])  # row-major: time-major packing
    src = order[b_idx]
    flat = src * steps + t_idx if batch_first else t_idx * batch + src
    rows = input.reshape((-1,) + tuple(input.shape[2:])).index_select(0, _index(flat, input))
    return PackedSequence(rows, tensor(batch_sizes, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpacks a PackedSequence into a padded batch; returns ``(padded, lengths)`` in the original batch order.

    ``total_length`` pads to that many steps (at least the longest sequence).

    Example::

        >>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> pad_packed_sequence(pack_sequence([ember.ones(2), ember.ones(1)]))[0]
        tensor([[1., 1.],
                [1., 0.]])
    """
    data, bs = sequence.data, _host(sequence.batch_sizes)
    steps = len(bs)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = int(bs[0]) if len(bs) else 0
    offs = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    lens = (bs[None, :] > np.arange(batch)[:, None]).sum(1)  # per sorted batch position
    perm = np.arange(batch) if sequence.unsorted_indices is None else _host(sequence.unsorted_indices)
    t = np.arange(steps)[:, None]
    b = perm[None, :]  # output column j reads the sorted position perm[j]
    valid = t < lens[b]
    idx = np.where(valid, offs[np.minimum(t, len(bs) - 1)] + b, data.shape[0])  # (T, B); invalid -> padding row
    view = batch_first and sequence.unsorted_indices is None  # then a transposed view of the time-major result
    if batch_first and not view:
        idx = idx.T
    pad = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = cat([data, pad]).index_select(0, _index(idx.ravel(), data)).reshape(idx.shape + tuple(data.shape[1:]))
    return (padded.transpose(0, 1) if view else padded), tensor(lens[perm], dtype=_dtype.int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` if ``batch_first``), padding each on
    ``padding_side`` ('right' or 'left') with ``padding_value``.

    Example::

        >>> from ember.nn.utils.rnn import pad_sequence
        >>> pad_sequence([ember.ones(2), ember.ones(1)], batch_first=True)
        tensor([[1., 1.],
                [1., 0.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if first.ndim == 0:
        raise RuntimeError("pad_sequence: expected sequences of at least 1 dimension, but got a 0-d tensor")
    rest = tuple(first.shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"pad_sequence: expected every sequence to have the trailing shape {list(rest)} of the "
                               f"first, but got {list(s.shape[1:])}")
    lens = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    steps = int(lens.max())
    t = np.arange(steps)[None, :]  # (1, T) against (B, 1)
    shift = (steps - lens)[:, None] if padding_side == "left" else 0
    pos = t - shift
    idx = np.where((pos >= 0) & (pos < lens[:, None]), starts[:, None] + pos, lens.sum())  # (B, T)
    if not batch_first:
        idx = idx.T
    parts = [s if s.dtype is first.dtype else s.to(first.dtype) for s in sequences]
    parts.append(full((1,) + rest, padding_value, dtype=first.dtype, device=first.device))
    out = cat(parts).index_select(0, _index(idx.ravel(), first))
    return out.reshape(idx.shape + rest)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch back into the list of its sequences (contiguous copies), each cut to its length.

    Without ``batch_first`` the padded batch is transposed in place to ``(B, T, *)``.
    """
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    steps = arange(padded_sequences.shape[1], device=padded_sequences.device)
    return [seq[steps < int(n)] for seq, n in zip(padded_sequences, _host(lengths), strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences ``(L_i, *)`` (decreasing lengths unless ``enforce_sorted=False``)."""
    lengths = as_tensor([v.shape[0] for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
