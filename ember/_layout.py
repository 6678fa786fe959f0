"""Tensor layouts: ``ember.strided`` (dense) and ``ember.sparse_coo`` (``ember._sparse``), and the layout queries of
dense tensors (``layout``, ``dim_order``, ``is_sparse`` ... all False, ``to_dense``)."""
from ._ops.memory_format import channels_last, memory_format
from ._tensor import register

__all__ = ["layout", "strided", "sparse_coo"]


class layout:
    """How a tensor's elements are stored: ``ember.strided`` (dense, with strides) or ``ember.sparse_coo``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module-level singleton


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _layout(self):
    return strided


def _false(self):
    return False


def to_dense(self, dtype=None, *, masked_grad=True):
    """This (already dense) tensor, converted to ``dtype`` if given."""
    return self if dtype is None else self.to(dtype)


def _ge(a, b):
    return b == 0 or (a != 0 and (a >= b or a % b == 0))


def _order(shape, strides, a, b):
    """torch's comparison of dimensions ``a`` and ``b`` for the memory order: 1 if ``a`` is inner, -1 if outer,
    0 if ambiguous."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if _ge(shape[b], shape[a]) else 1
    return -1 if _ge(sb, sa) else 1


def dim_order(self, *, ambiguity_check=False):
    """The dimensions from outermost to innermost in memory: ``(0, 1, ..., ndim - 1)`` when contiguous.

    With ``ambiguity_check=True``, raises where the order is not unique (size-1 dimensions, equal strides);
    with a list of memory formats, only where the tensor is contiguous in none or several of them."""
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides, n = self.shape, self.stride(), self.ndim
    if ambiguity_check is not False and (any(a == b for a, b in zip(strides, strides[1:])) or 1 in shape):
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        if sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    if n < 2:
        return tuple(range(n))
    contiguous, nhwc = self.is_contiguous(), n == 4 and self.is_contiguous(memory_format=channels_last)
    if contiguous != nhwc:
        return tuple(range(n)) if contiguous else (0, 2, 3, 1)
    perm = list(range(n - 1, -1, -1))  # innermost first: torch's insertion sort, which keeps ambiguous pairs
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _order(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check and any(_order(shape, strides, a, b) != -1 for a, b in zip(perm, perm[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


register(to_dense, dim_order, layout=property(_layout), is_sparse=property(_false), is_sparse_csr=property(_false),
         is_quantized=property(_false), is_nested=property(_false), is_mkldnn=property(_false),
         is_distributed=_false,
         **{f"is_{kind}": property(_false) for kind in ("xpu", "mps", "ipu", "maia", "mtia", "vulkan", "xla")})
