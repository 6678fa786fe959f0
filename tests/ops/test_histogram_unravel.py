"""histogram and unravel_index against torch (ops whose outputs the op table's rows do not fit: bin edges computed
from the data, tuples of index tensors)."""
import numpy as np
import pytest
import torch

import ember
from .opinfo import assert_close


def _both(fn):
    return fn(torch), fn(ember)


HIST_CASES = [
    lambda m, x: m.histogram(x, 5),
    lambda m, x: m.histogram(x, 4, range=(-1.0, 1.0)),
    lambda m, x: m.histogram(x, 3, density=True),
    lambda m, x: m.histogram(x, 6, weight=x.abs()),
    lambda m, x: m.histogram(x, 4, range=(0.0, 2.0), weight=x.abs(), density=True),
    lambda m, x: m.histogram(x, m.tensor([-2.0, -0.5, 0.0, 0.3, 2.0], dtype=x.dtype)),
    lambda m, x: x.histogram(m.tensor([-1.0, 1.0], dtype=x.dtype), density=True),
    lambda m, x: m.histogram(x.reshape(3, 4), 2),
    lambda m, x: m.histogram(x[:0], 3),
    lambda m, x: m.histogram(x * 0 + 2, 2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(HIST_CASES)))
def test_histogram(case, dtype):
    x = np.random.default_rng(case).standard_normal(12).astype(dtype)
    t, e = (HIST_CASES[case](m, m.tensor(x)) for m in (torch, ember))
    assert type(e).__name__ == "histogram" and e._fields == ("hist", "bin_edges")
    assert_close(tuple(e), tuple(t), 1e-6, 1e-6, "histogram")


@pytest.mark.parametrize("bad", [
    lambda m: m.histogram(m.tensor([1, 2]), 2),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 0),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, range=(3.0, 1.0)),
    lambda m: m.histogram(m.tensor([1.0, float("nan")]), 2),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), m.tensor([0.0, 3.0], dtype=m.float64)),
    lambda m: m.histogram(m.tensor([1.0, 2.0]), 2, weight=m.ones(2, dtype=m.float64)),
])
def test_histogram_errors(bad):
    with pytest.raises(Exception) as te:
        bad(torch)
    with pytest.raises(te.type):
        bad(ember)


def test_histogram_out():
    x = ember.tensor([1.0, 2.0, 1.0])
    hist, edges = ember.empty(0), ember.empty(0)
    r = ember.histogram(x, 2, out=(hist, edges))
    assert r.hist is hist and r.bin_edges is edges
    assert hist.tolist() == [2.0, 1.0] and edges.tolist() == [1.0, 1.5, 2.0]


@pytest.mark.parametrize("indices,shape", [
    ([4, 1, 0, 5], (2, 3)), (5, (2, 3)), ([[3, 4]], (2, 3)), ([6, -1, -7], (2, 3)), ([1], 3), ([1], ()),
    ([0, 23, 11], [2, 3, 4]), ([7], ember.Size([2, 4])),
])
def test_unravel_index(indices, shape):
    t = torch.unravel_index(torch.tensor(indices), torch.Size(shape) if isinstance(shape, ember.Size) else shape)
    e = ember.unravel_index(ember.tensor(indices), shape)
    assert isinstance(e, tuple)
    assert_close(e, t, 0, 0, "unravel_index")


@pytest.mark.parametrize("bad", [lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)),
                                 lambda m: m.unravel_index(m.tensor([True]), (2, 3)),
                                 lambda m: m.unravel_index(m.tensor([1]), (2, -3)),
                                 lambda m: m.unravel_index(m.tensor([1]), (0,))])
def test_unravel_index_errors(bad):
    with pytest.raises(Exception) as te:
        bad(torch)
    with pytest.raises(te.type):
        bad(ember)
