"""Embedding and EmbeddingBag: lookup tables of ``num_embeddings`` vectors of size ``embedding_dim``."""

__all__ = ["Embedding", "EmbeddingBag"]
from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _padding_idx(padding_idx, num, what):
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
            raise AssertionError(f"{what} must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += num
    return padding_idx


class _Table(Module):
    def _init_weight(self, num_embeddings, embedding_dim, _weight, freeze, device, dtype):
        if _weight is None:
            self.weight = Parameter(_creation.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _repr_options(self):
        s = ""
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return s


class Embedding(_Table):
    """A lookup table: ``input`` (indices, any shape) gives ``input.shape + (embedding_dim,)`` rows of ``weight``.

    Args:
        num_embeddings: the number of rows.
        embedding_dim: the size of each row.
        padding_idx: a row that gets no gradient (initialised to zeros).
        max_norm: looked-up rows with a larger ``norm_type``-norm are renormalized in place.
        scale_grad_by_freq: divide gradients by the indices' counts in the batch.

    Example::

        >>> emb = nn.Embedding(10, 3)
        >>> emb(ember.tensor([[1, 2], [4, 5]])).shape
        ember.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self._init_weight(num_embeddings, embedding_dim, _weight, _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        s += self._repr_options()
        return s + (", sparse=True" if self.sparse else "")

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (2-D), trainable unless ``freeze``."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_Table):
    """Sums, means or maxima of bags of embeddings, without materialising the per-index rows' gradients apart.

    ``forward(input, offsets=None, per_sample_weights=None)``: ``input`` 2-D ``(B, N)`` (B bags of N indices) or
    1-D with ``offsets`` giving where each bag starts.
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, "padding_idx")
        self._init_weight(num_embeddings, embedding_dim, _weight, False, device, dtype)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}" + self._repr_options() + f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (2-D), trainable unless ``freeze``."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
