"""Random index expressions (ints, slices, None, Ellipsis, bools, int arrays, masks) on random shapes, against
torch: the same values and view-or-copy, the same writes, the same gradients, or the same error."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from .util import T, assert_same, conv, run_both

SETTINGS = settings(max_examples=120, deadline=None)


@st.composite
def cases(draw):
    """(shape, key): a key mostly valid for the shape; invalid ones must fail alike in ember and torch."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    index_shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))  # shared so that int arrays broadcast
    items, d, ellipsis = [], 0, False
    for _ in range(draw(st.integers(0, len(shape) + 2))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "array", "mask", "bool"]))
        size = shape[d] if d < len(shape) else 0
        if kind in ("int", "array") and size == 0 or kind == "mask" and d >= len(shape):
            kind = "slice" if d < len(shape) else "none"
        if kind == "slice" and d >= len(shape):
            kind = "none"
        if kind == "int":
            items.append(int(rng.integers(-size, size)))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 2, size + 2)
            items.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
        elif kind == "array":
            a = rng.integers(-size, size, size=index_shape)
            items.append(draw(st.sampled_from([T(a), a, a.tolist() if a.ndim else T(a)])))
        elif kind == "mask":
            k = draw(st.integers(1, min(2, len(shape) - d)))
            m = rng.random(shape[d:d + k]) < 0.5
            items.append(draw(st.sampled_from([T(m), m])))
            d += k - 1
        elif kind == "ellipsis" and not ellipsis:
            ellipsis = True
            items.append(Ellipsis)
            continue
        elif kind == "bool":
            items.append(draw(st.booleans()))
            continue
        else:
            items.append(None)
            continue
        d += 1
    key = items[0] if len(items) == 1 and not isinstance(items[0], list) and draw(st.booleans()) else tuple(items)
    return shape, key


def _x(m, shape, **kw):
    return m.arange(float(math.prod(shape)), **kw).reshape(shape)


@SETTINGS
@given(cases())
def test_random_getitem(case):
    shape, key = case
    e, t = run_both(lambda m: (lambda x: (x, x[conv(key, m)]))(_x(m, shape)))
    if isinstance(t, Exception):  # of the same type (run_both checks); messages are checked in test_indexing
        return
    (ex, e), (_, t) = e, t
    assert_same(e, t)
    if e.numel():
        assert (e._base is not None) == t._is_view()
        assert np.shares_memory(e._data, ex._data) == t._is_view()


@SETTINGS
@given(cases(), st.booleans())
def test_random_setitem(case, tensor_value):
    shape, key = case

    def run(m):
        x = _x(m, shape)
        region = x[conv(key, m)]
        if tensor_value:  # distinct values: only written when each element is written once
            flat = region.reshape(-1)
            if flat.unique().numel() != flat.numel():
                return x
            x[conv(key, m)] = -1.0 - m.arange(float(region.numel())).reshape(region.shape)
        else:
            x[conv(key, m)] = -7.0
        return x
    e, t = run_both(run)
    if not isinstance(t, Exception):
        assert_same(e, t)


@SETTINGS
@given(cases())
def test_random_getitem_grad(case):
    shape, key = case

    def run(m):
        x = _x(m, shape, dtype=m.float64).requires_grad_()
        y = x[conv(key, m)]
        g = np.random.default_rng(0).standard_normal(tuple(y.shape))
        (y * m.tensor(g)).sum().backward()
        return x.grad
    e, t = run_both(run)
    if not isinstance(t, Exception):
        assert_same(e, t, rtol=1e-12)
