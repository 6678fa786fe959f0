"""Sorting, searching and counting: sort/argsort/msort, topk, kthvalue, unique/unique_consecutive,
searchsorted/bucketize, bincount/histc.

Comparisons follow torch: NaN is larger than every number (last in ascending order, first in descending), and the
order of equal elements is kept (a stable sort) wherever torch's CPU kernels keep it.
"""

__all__ = ["bincount", "histc", "sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive", "searchsorted",
           "bucketize"]
import math

from .. import _dtype, return_types
from .._tensor import Tensor, register, wrap_dim, write_out
from ..autograd.function import Function
from ._strided import ScatterAdd
from ._ufunc_at import ufunc_at
from .order import _write_pair


def _result(name, qualname):
    """A (values, indices) named tuple printed as torch.return_types.<name>, picklable from this module."""
    cls = return_types.structseq(name, ("values", "indices"))
    cls.__module__, cls.__qualname__ = __name__, qualname
    return cls


SortResult = _result("sort", "SortResult")
TopkResult = _result("topk", "TopkResult")
KthvalueResult = _result("kthvalue", "KthvalueResult")


def _argsort(xp, x, axis, descending):
    """Stable argsort along ``axis``; NaN last ascending, first descending (equal elements keep their order)."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed array ascending and reversing the result keeps equal elements in order.
    idx = xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind="stable"), axis)
    return (x.shape[axis] - 1) - idx


def _flat_positions(xp, idx, axis, shape):
    """The flat position, in an array of ``shape``, of each element ``idx`` picks along ``axis``."""
    pos = xp.arange(math.prod(shape)).reshape(shape)
    return xp.take_along_axis(pos, idx, axis=axis)


class Pick(Function):
    """Selects elements of ``x`` by sorted position along ``dim``: positions ``start:stop`` of the stable order
    (``descending`` or not), as (values, indices). The values' gradient flows back to the picked elements."""
    half_in_float32 = True  # NumPy sorts float16/bfloat16 slowly or not at all; values round-trip exactly

    @staticmethod
    def forward(ctx, x, dim, descending, start, stop, keepdim):
        xp = ctx.xp
        ctx.shape = x.shape
        if x.ndim == 0:
            idx = xp.zeros((), dtype="int64")
            ctx.flat = idx
            return x.copy(), idx
        idx = _argsort(xp, x, dim, descending)
        if (start, stop) != (0, x.shape[dim]):
            idx = idx[(slice(None),) * dim + (slice(start, stop),)]
        ctx.flat = _flat_positions(xp, idx, dim, x.shape)
        values = xp.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            idx, values = xp.squeeze(idx, dim), xp.squeeze(values, dim)
            ctx.flat = xp.squeeze(ctx.flat, dim)
        return values, idx.astype("int64")

    @staticmethod
    def backward(ctx, grad, _):
        return ScatterAdd.apply(grad, index=ctx.flat, shape=ctx.shape)


def _no_bool(t, kernel):
    if t.dtype is _dtype.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _no_complex(t, name):
    if t.dtype.is_complex:
        raise RuntimeError(f" {name} does not support complex dtypes on {t.device.type.upper()}")


_UNSET = object()


def _sort_args(name, args, dim, descending, stable):
    """torch's two signatures ``(dim=-1, descending=False)`` and ``(*, stable, dim=-1, descending=False)``: with
    ``stable`` given, ``dim`` and ``descending`` are keywords too."""
    if args:
        if stable is not _UNSET or len(args) > 2:
            kinds = ", ".join([type(a).__name__ for a in args] + (["stable"] if stable is not _UNSET else []))
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({kinds}), but expected "
                            f"one of:\n * (int dim = -1, bool descending = False)\n * (*, bool stable, int dim = -1, "
                            f"bool descending = False)")
        if dim is not _UNSET or len(args) == 2 and descending is not _UNSET:
            raise TypeError(f"{name}() got multiple values for argument "
                            f"'{'dim' if dim is not _UNSET else 'descending'}'")
        dim = args[0]
        if len(args) == 2:
            descending = args[1]
    return -1 if dim is _UNSET else dim, descending is not _UNSET and descending


def sort(input, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET, out=None):
    """``sort(input, dim=-1, descending=False)`` or ``sort(input, *, stable, dim=-1, descending=False)``: sorts
    ``input`` along ``dim``; returns (values, indices). NaN sorts as the largest value; equal elements keep their
    order (every sort is stable).

    Example::

        >>> ember.sort(ember.tensor([3., 1., 2.]))
        ember.return_types.sort(
        values=tensor([1., 2., 3.]),
        indices=tensor([1, 2, 0]))
    """
    dim, descending = _sort_args("sort", args, dim, descending, stable)
    _no_complex(input, "Sort")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    return _write_pair(SortResult(*Pick.apply(input, dim=d, descending=bool(descending), start=0, stop=n,
                                              keepdim=True)), out)


def argsort(input, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET):
    """The indices that sort ``input`` along ``dim`` (the signatures of :func:`sort`)."""
    dim, descending = _sort_args("argsort", args, dim, descending, stable)
    return sort(input, dim=dim, descending=descending).indices


def msort(input):
    """``input`` sorted along its first dimension."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements of ``input`` along ``dim``, in sorted order; (values, indices)."""
    if isinstance(k, float):
        raise TypeError("topk(): argument 'k' (position 1) must be int, not float")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.dtype is _dtype.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    _no_complex(input, "topk")
    return _write_pair(TopkResult(*Pick.apply(input, dim=d, descending=bool(largest), start=0, stop=int(k),
                                              keepdim=True)), out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) of ``input`` along ``dim`` and its index."""
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        if n == 0:
            raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _no_bool(input, "kthvalue_cpu")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for '{_dtype.scalar_name(input.dtype)}'")
    return _write_pair(KthvalueResult(*Pick.apply(input, dim=d, descending=False, start=int(k) - 1, stop=int(k),
                                                  keepdim=bool(keepdim) or input.ndim == 0)), out)


class Unique(Function):
    """Distinct elements (or slices along ``dim``) as (values, inverse, counts); NaNs are all distinct, as torch."""
    half_in_float32 = True
    no_complex = "unique"

    @staticmethod
    def forward(ctx, x, dim, consecutive):
        xp = ctx.xp
        shape = x.shape
        if dim is None:
            rows = x.reshape(-1, 1)
        else:
            if any(s == 0 for i, s in enumerate(shape) if i != dim):
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                                   "applied")
            rows = xp.moveaxis(x, dim, 0).reshape(shape[dim], math.prod(shape[:dim] + shape[dim + 1:]))
        n = rows.shape[0]
        if consecutive:
            perm = xp.arange(n)
        elif rows.shape[1] == 1:
            perm = xp.argsort(rows[:, 0], kind="stable")
        else:  # lexicographic order of the slices; lexsort's primary key is the last
            perm = xp.lexsort(rows.T[::-1]) if rows.shape[1] else xp.arange(n)
        srt = rows[perm]
        new = xp.ones(n, dtype=bool)
        if n:
            new[1:] = xp.any(srt[1:] != srt[:-1], axis=1)
        group = xp.cumsum(new) - 1
        inverse = xp.empty(n, dtype="int64")
        inverse[perm] = group
        starts = xp.nonzero(new)[0]
        counts = xp.diff(xp.concatenate([starts, xp.asarray([n])])).astype("int64")
        values = srt[new]
        if dim is None:
            return values.reshape(-1), inverse.reshape(shape), counts
        values = xp.moveaxis(values.reshape((-1,) + shape[:dim] + shape[dim + 1:]), 0, dim)
        return values, inverse, counts

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for '_unique2' is not implemented.")


def _unique_result(res, return_inverse, return_counts):
    values, inverse, counts = res
    if not return_inverse and not return_counts:
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` in ascending order (slices along ``dim`` if given), optionally with the
    index of each input element in them (``return_inverse``) and their multiplicities (``return_counts``).

    Example::

        >>> ember.unique(ember.tensor([3, 1, 3]), return_counts=True)
        (tensor([1, 3]), tensor([1, 2]))
    """
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return _unique_result(Unique.apply(input, dim=d, consecutive=False), return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive elements (or slices along ``dim``) of ``input`` into one."""
    d = None if dim is None else wrap_dim(dim, input.ndim)
    return _unique_result(Unique.apply(input, dim=d, consecutive=True), return_inverse, return_counts)


class SearchSorted(Function):
    promote = True
    half_in_float32 = True
    no_complex = "searchsorted_out_cpu"

    @staticmethod
    def forward(ctx, seq, values, side, sorter, int32):
        xp = ctx.xp
        if sorter is not None:
            seq = xp.take_along_axis(seq, sorter, axis=-1)
        if seq.ndim <= 1:
            out = xp.searchsorted(seq, values, side=side)
        else:
            rows = seq.reshape(-1, seq.shape[-1])
            vals = values.reshape(rows.shape[0], -1)
            out = xp.stack([xp.searchsorted(r, v, side=side) for r, v in zip(rows, vals)]).reshape(values.shape)
        return xp.asarray(out).astype("int32" if int32 else "int64")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """For each value of ``input``, the index where it would be inserted into the innermost dimension of
    ``sorted_sequence`` to keep it sorted (after equal entries with ``right=True`` / ``side='right'``).

    Example::

        >>> ember.searchsorted(ember.tensor([1, 3, 5, 7]), ember.tensor([3, 6, 9]))
        tensor([1, 3, 4])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if out is not None and out.dtype is not (_dtype.int32 if out_int32 else _dtype.int64):
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
                           f"dtype {_dtype.scalar_name(out.dtype)} and out_int32 flag is {bool(out_int32)}")
    if isinstance(input, Tensor):
        if seq.ndim > 1 and (input.ndim != seq.ndim or input.shape[:-1] != seq.shape[:-1]):
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(seq.shape)} and input value tensor {list(input.shape)}")
    elif seq.ndim > 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    else:  # a number is compared in the promoted dtype, not as a double
        input = seq.new_full((), input, dtype=_dtype.result_type(seq, input))
    if _dtype.result_type(seq, input) is _dtype.bool:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    if sorter is not None:
        if sorter.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter.dtype is not _dtype.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_dtype.scalar_name(sorter.dtype)}")
        sorter = sorter._data
        if sorter.size and (sorter.min() < 0 or sorter.max() >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    res = SearchSorted.apply(seq, input, side="right" if right else "left", sorter=sorter, int32=bool(out_int32))
    return write_out(res, out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The index of the bucket of ``boundaries`` (1-D, ascending) each element of ``input`` falls in:
    ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` with ``right=True``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


register(sort, argsort, msort, topk, kthvalue, unique, unique_consecutive)


class BinCount(Function):
    @staticmethod
    def forward(ctx, x, weights, minlength):
        xp = ctx.xp
        n = max(int(x.max()) + 1 if x.size else 0, minlength)
        if weights is None or not x.size:  # no elements: int64 zeros, even with weights
            return xp.bincount(x, minlength=n).astype("int64")
        if weights.dtype != xp.float32:
            return xp.bincount(x, weights=weights.astype("float64"), minlength=n)
        out = xp.zeros(n, weights.dtype)  # float32 sums accumulate in float32, in order
        ufunc_at(xp, "add", out, x, weights)
        return out


def bincount(input, weights=None, minlength=0):
    """How many times each value 0, 1, ... occurs in the 1-D non-negative integer ``input`` (at least ``minlength``
    counts); with ``weights``, their sums per value (float32 for float32 weights, else float64; int64 zeros for an
    empty ``input``).

    Example::

        >>> ember.bincount(ember.tensor([0, 1, 1, 3]))
        tensor([1, 2, 0, 1])
    """
    if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is _dtype.bool:
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_dtype.scalar_name(input.dtype)}\'')
    if input.ndim != 1 or (input.numel() and bool((input < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    return BinCount.apply(input, weights, minlength=minlength)


class Histc(Function):
    @staticmethod
    def forward(ctx, x, bins, lo, hi):
        xp = ctx.xp
        if lo == hi and x.size:
            lo, hi = float(x.min()), float(x.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
        # the bin of each element by division in the input's dtype; the last bin includes its right edge
        lo, hi = xp.asarray(lo, x.dtype), xp.asarray(hi, x.dtype)
        x = x[(x >= lo) & (x <= hi)]
        pos = ((x - lo) * xp.asarray(bins, x.dtype) / (hi - lo)).astype(xp.int64)
        counts = xp.bincount(xp.minimum(pos, bins - 1), minlength=bins).astype(x.dtype)
        ctx.mark_non_differentiable(counts)
        return counts


def histc(input, bins=100, min=0, max=0, *, out=None):
    """A histogram of ``input``: ``bins`` equal-width bins over [``min``, ``max``] (the data's range when both are
    0); elements outside are ignored, the last bin includes ``max``."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{_dtype.scalar_name(input.dtype)}\'')
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return write_out(Histc.apply(input, bins=bins, lo=float(min), hi=float(max)), out)


register(bincount, histc)
