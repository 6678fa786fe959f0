"""The graph is freed as backward walks it: a long training loop keeps flat memory and creates no cycles."""
import gc
import sys
import tracemalloc

import numpy as np

import ember
from ember.autograd.function import Function


def _count_nodes():
    return sum(issubclass(type(o), Function) for o in gc.get_objects())


def test_training_loop_memory_is_flat_and_acyclic():
    """10,000 steps of a small MLP with gc disabled: the number of live memory blocks and graph nodes after the
    last step is what it was after step 1,000 (no graph kept alive, by references or by cycles)."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((8, 4)), dtype=ember.float32)
    target = ember.tensor(rng.standard_normal((8, 1)), dtype=ember.float32)
    w1 = ember.tensor(rng.standard_normal((4, 16)) * 0.3, dtype=ember.float32, requires_grad=True)
    b1 = ember.zeros(16, requires_grad=True)
    w2 = ember.tensor(rng.standard_normal((16, 1)) * 0.3, dtype=ember.float32, requires_grad=True)
    params = (w1, b1, w2)

    def step():
        h = (x @ w1 + b1).tanh()
        h.retain_grad()
        loss = ((h @ w2 - target) ** 2).mean()
        loss.backward()
        with ember.no_grad():
            for p in params:
                p.sub_(p.grad * 0.01)
                p.grad = None
        return loss.item()

    gc.collect()
    gc.disable()
    try:
        first = step()
        for _ in range(999):
            step()
        blocks, nodes = sys.getallocatedblocks(), _count_nodes()
        for _ in range(9000):
            last = step()
        blocks_after, nodes_after = sys.getallocatedblocks(), _count_nodes()
    finally:
        gc.enable()
    assert last < first  # it trains
    assert nodes_after <= nodes + 5, (nodes, nodes_after)
    # A leaked graph would be thousands of blocks per step; the margin covers NumPy's own one-off caches.
    assert blocks_after <= blocks + 2000, (blocks, blocks_after)


def test_traced_memory_is_flat():
    """tracemalloc over steps 1,000 to 10,000 of a small loop: what is still allocated at the end (Python objects
    and array buffers) stays within a few kilobytes."""
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32)
    w = ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32, requires_grad=True)
    g = ember.ones(4, 3)

    def step():
        (x * w).exp().backward(g)
        w.grad = None

    for _ in range(1000):
        step()
    tracemalloc.start()
    try:
        for _ in range(9000):
            step()
        grown, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert grown < 16 * 1024, f"{grown} bytes still allocated after 9,000 more steps"


def test_backward_frees_saved_tensors():
    a = ember.ones(1000, requires_grad=True)
    y = (a * a).exp()
    nodes = [y.grad_fn, y.grad_fn.next_functions[0][0]]
    assert all(n._saved is not None for n in nodes)
    y.sum().backward()
    assert all(n._saved is None for n in nodes)


def test_dropped_graph_is_collected_without_gc():
    import weakref
    gc.disable()
    try:
        a = ember.ones(3, requires_grad=True)
        y = (a * 2).exp()
        y.retain_grad()
        y.register_hook(lambda g: g)
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None
    finally:
        gc.enable()
