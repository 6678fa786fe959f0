"""``ember.utils.flop_counter``: :class:`FlopCounterMode` counts the floating-point operations of the products
(matrix products, linear layers, convolutions and attention) that run inside it, forward and backward."""
import math

from .._ops.attention import ScaledDotProductAttention
from .._ops.conv import Conv, ConvInput, ConvWeight
from .._ops.matmul import AddMatmul, Einsum, Matmul
from ..nn.functional.linear import Linear

__all__ = ["FlopCounterMode"]


def _batch(*shapes):
    """The number of matrices of broadcast batch dimensions ``shapes``."""
    n = max(len(s) for s in shapes)
    return math.prod(max(s[i - n + len(s)] if i - n + len(s) >= 0 else 1 for s in shapes) for i in range(n))


def _mm(a, b):
    return 2 * _batch(a[:-2], b[:-2]) * a[-2] * a[-1] * b[-1] if len(a) >= 2 and len(b) >= 2 else 0


def _linear(x, w):
    return 2 * math.prod(x[:-1]) * w[0] * w[1]


def _linear_backward(ctx, g, x, w):
    """The products of Linear's adjoints, (N, out) by (out, in), one for each gradient of x and w needed."""
    n_in = w[1] if x is None else x[-1]
    return (ctx.needs_input_grad[0] + ctx.needs_input_grad[1]) * 2 * math.prod(g) * n_in


def _sdpa(q, k, v):
    return 2 * _batch(q[:-2], k[:-2]) * q[-2] * k[-2] * (q[-1] + v[-1])


def _einsum(*shapes, labels, output, needs=None):
    """Contracted left to right, a pair at a time: a pair that sums over a label is a batched product (``2 *`` the
    product of the sizes of its labels), one that does not is a broadcast multiplication (no FLOPs counted). With
    ``needs`` (the operands' ``needs_input_grad``), the backward's: the product again for each side that needs a
    gradient."""
    size = {c: n for lab, shape in zip(labels, shapes) for c, n in zip(lab, shape)}
    flops, left = 0, set(labels[0])
    for i in range(1, len(labels)):
        kept = set(output).union(*labels[i + 1:])
        right = set(labels[i])
        left, right = {c for c in left if c in kept or c in right}, {c for c in right if c in kept or c in left}
        if (left & right) - kept:
            times = 1 if needs is None else any(needs[:i]) + needs[i]
            flops += times * 2 * math.prod(size[c] for c in left | right)
        left = (left | right) & kept
    return flops


# the flops of a call of each counted primitive, from its inputs' shapes (and parameters), by the name torch's
# flop counter reports it under
_FORWARD = {
    Matmul: ("aten.mm", lambda a, b, **p: _mm(a, b)),
    AddMatmul: ("aten.addmm", lambda c, a, b, *r, **p: _mm(a, b)),
    Linear: ("aten.addmm", lambda x, w, b, **p: _linear(x, w)),
    Einsum: ("aten.bmm", _einsum),
    Conv: ("aten.convolution", lambda x, w, b, *r, plan, **p: 2 * x[0] * math.prod(plan.out) * math.prod(w)),
    ConvInput: ("aten.convolution", lambda g, w, *r, **p: 2 * g[0] * math.prod(g[2:]) * math.prod(w)),
    ConvWeight: ("aten.convolution_backward",
                 lambda x, g, *r, plan, **p: 2 * math.prod(plan.ksize) * x[1] * x[0] * g[1] * math.prod(g[2:])),
    ScaledDotProductAttention: ("aten.bmm", lambda q, k, v, *r, **p: _sdpa(q, k, v)),
}

# primitives whose backward may compute on raw arrays or through other products: counted by formula (as the products
# of the forward's adjoints), what runs inside is not
_BACKWARD = {
    Linear: ("aten.mm", _linear_backward),
    ScaledDotProductAttention: ("aten.bmm", lambda ctx, g, q, k, v, *r: 2 * _sdpa(q, k, v)),
    Einsum: ("aten.bmm", lambda ctx, g, *r: _einsum(*ctx.shapes, labels=ctx.labels, output=ctx.output,
                                                   needs=ctx.needs_input_grad)),
}

_active = []  # the entered counters, innermost last
_saved = {}  # the patched classes' own apply and backward
_quiet = [0]  # > 0 inside a backward counted by formula


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else x


def _count(name, flops):
    for counter in _active:
        counter._counts[name] = counter._counts.get(name, 0) + flops


def _counting_apply(cls, apply):
    name, flops = _FORWARD[cls]

    def counted(*inputs, **params):
        if not _quiet[0]:
            _count(name, flops(*map(_shape, inputs), **params))
        return apply(*inputs, **params)
    return staticmethod(counted)


def _counting_backward(cls, backward):
    name, flops = _BACKWARD[cls]

    def counted(ctx, *grads):
        if not _quiet[0]:
            _count(name, flops(ctx, tuple(grads[0].shape), *(None if t is None else tuple(t.shape)
                                                               for t in ctx.saved_tensors)))
        _quiet[0] += 1
        try:
            return backward(ctx, *grads)
        finally:
            _quiet[0] -= 1
    return staticmethod(counted)


def _patch():
    for cls in _FORWARD:
        _saved[cls] = (cls.__dict__["apply"], cls.__dict__["backward"])
        cls.apply = _counting_apply(cls, cls.__dict__["apply"].__func__)
        if cls in _BACKWARD:
            cls.backward = _counting_backward(cls, cls.__dict__["backward"].__func__)


def _unpatch():
    for cls, (apply, backward) in _saved.items():
        cls.apply, cls.backward = apply, backward
    _saved.clear()


class FlopCounterMode:
    """Counts the FLOPs of matrix products, linear layers, convolutions and attention (forward and backward) run
    inside the ``with`` block; a product of (m, k) and (k, n) matrices counts ``2 * m * k * n``.

    Args:
        mods: accepted for compatibility (the counts are global).
        depth: accepted for compatibility.
        display: print the counts when the block ends.
        custom_mapping: accepted if empty.

    Example::

        >>> lin = ember.nn.Linear(16, 8)
        >>> with FlopCounterMode(display=False) as counter:
        ...     _ = lin(ember.ones(4, 16))
        >>> counter.get_total_flops()
        1024
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if custom_mapping:
            raise NotImplementedError("FlopCounterMode: custom_mapping is not supported")
        self.depth, self.display = depth, display
        self._counts = {}

    def __enter__(self):
        self._counts = {}
        if not _active:
            _patch()
        _active.append(self)
        return self

    def __exit__(self, *exc_info):
        _active.remove(self)
        if not _active:
            _unpatch()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def get_total_flops(self):
        """The number of FLOPs counted."""
        return sum(self._counts.values())

    def get_flop_counts(self):
        """The FLOPs by op name, under ``'Global'``: ``{'Global': {'aten.mm': ...}}``."""
        return {"Global": dict(self._counts)} if self._counts else {}

    def get_table(self, depth=None):
        """The counts as a text table."""
        total = self.get_total_flops()
        rows = [("Global", _human(total), "100.00%")]
        rows += [(f" - {name}", _human(n), f"{100 * n / total:.2f}%") for name, n in self._counts.items()]
        widths = [max(len(r[i]) for r in rows + [("Module", "FLOP", "% Total")]) for i in range(3)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(("Module", "FLOP", "% Total"), widths)),
                 "  ".join("-" * w for w in widths)]
        return "\n".join(lines + ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows])


def _human(n):
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.3f}{suffix}"
    return str(n)
