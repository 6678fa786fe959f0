"""Options that select the chunked path of :func:`ember.nn.functional.linear_cross_entropy`."""
import dataclasses
from typing import Literal, NamedTuple

from ... import _dtype

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's picks for the "auto" sentinels, by (device type, input dtype); other pairs take _AUTO_FALLBACK
_AUTO_DEFAULTS = {
    ("cuda", _dtype.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", _dtype.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _dtype.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", _dtype.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration of the chunked :func:`~ember.nn.functional.linear_cross_entropy`: the batch is processed in
    chunks of rows, so the full ``(N, C)`` logits are never materialised.

    Args:
        allow_retain_graph: allow a second backward of a 'mean'/'sum' loss (the precomputed gradients are then
            copied, not scaled in place). Default: ``False``
        batch_chunk_size: rows per chunk; ``None`` means one chunk. Cannot disagree with ``chunking_method``.
        chunking_method: ``"auto"``, ``"aspect_ratio"``, ``"aspect_ratio:N"`` or ``None``: the heuristic that picks
            the chunk size, ``next_pow2(ceil(N / ceil(C / in_features))) // factor``, capped at ``N``.
        acc_policy: ``"auto"``, ``"accurate"``, ``"balanced"`` or ``"compact"``; validated and resolved as in torch.
            ember computes float16/bfloat16 in float32 under every policy.
        acc_dtype: accumulation dtype; ``None`` resolves from the input dtype.

    Example::

        >>> nn.LinearCrossEntropyOptions(batch_chunk_size=1024).batch_chunk_size
        1024
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: _dtype.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                   and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {{None, ember.float16, ember.bfloat16, ember.float32, "
                             f"ember.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    @staticmethod
    def _compute_batch_chunk_size(num_batches, in_features, num_classes, method):
        """The chunk size of ``"aspect_ratio[:factor]"``: a ``(chunk, C)`` logits block about the size of the
        ``(N, in_features)`` input, divided by ``factor``."""
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // in_features))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options with the ``"auto"`` and ``None`` defaults resolved for one call."""
        acc_policy, chunking_method = self.acc_policy, self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            ap, cm = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK) if device is not None else _AUTO_FALLBACK
            acc_policy = ap if acc_policy == "auto" else acc_policy
            chunking_method = cm if chunking_method == "auto" else chunking_method
        batch_chunk_size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                                 f"('{chunking_method}') give different chunk sizes ({self.batch_chunk_size} vs "
                                 f"{batch_chunk_size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            halves = device is not None and dtype in (_dtype.float16, _dtype.bfloat16)
            acc_dtype = _dtype.float32 if self.acc_policy == "auto" and halves else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size), acc_dtype=acc_dtype)
