"""The intra-op thread pool: chunking, results and errors, nesting, thread and fork safety, the thread count API."""
import multiprocessing
import os
import threading
import time

import numpy as np
import pytest
import torch

import ember
from ember._kernels import chunks, elementwise, get_num_threads, parallel, parallel_map, reduction, set_num_threads


@pytest.mark.parametrize("n,parts,align", [(10, 3, 1), (10, 4, 4), (1000, 2, 1024), (0, 3, 1), (7, 10, 1)])
def test_chunks_cover_range(n, parts, align):
    bounds = chunks(n, parts, align)
    assert len(bounds) <= max(parts, 1)
    assert [i for a, b in bounds for i in range(a, b)] == list(range(n))
    assert all(a % align == 0 and a < b for a, b in bounds)


def test_parallel_map_keeps_order(threads):
    seen = set()

    def fn(i):
        seen.add(threading.get_ident())
        time.sleep(0.002)  # long enough that no thread takes every item before the caller starts on one
        return i * i
    assert parallel_map(fn, range(10)) == [i * i for i in range(10)]
    assert parallel_map(fn, []) == []
    assert threading.get_ident() in seen  # the caller takes a share


def test_parallel_map_reraises_after_all_finish(threads):
    done = []

    def fn(i):
        if i == 1:
            raise ValueError("chunk 1 failed")
        done.append(i)
    with pytest.raises(ValueError, match="chunk 1 failed"):
        parallel_map(fn, range(3))
    assert sorted(done) == [0, 2]


def test_nested_calls_run_inline(threads):
    assert parallel_map(lambda i: sum(parallel_map(lambda j: i * j, range(4))), range(6)) == \
        [6 * i for i in range(6)]


def test_caller_context_reaches_pool_threads(threads, small):
    x = np.zeros(64, np.float64)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            elementwise.unary(np.log, x)
    with np.errstate(divide="ignore"):
        assert np.isneginf(elementwise.unary(np.log, x)).all()
    assert small


def test_concurrent_callers(threads):
    x = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
    want = np.exp(x)
    errors = []

    def worker():
        for _ in range(5):
            if not np.array_equal(elementwise.unary(np.exp, x), want):
                errors.append("wrong result")
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in ts)


def _child(queue):
    # In a forked child of a process whose pool was running: the pool must start anew (not wait on the parent's
    # threads), and the default size is read anew (a DataLoader worker sets OMP_NUM_THREADS=1 first).
    x = np.arange(1 << 18, dtype=np.float64)
    ok = np.array_equal(elementwise.unary(np.sqrt, x), np.sqrt(x)) and reduction.sum(x, (0,)) == x.sum()
    parallel._set = None
    os.environ["OMP_NUM_THREADS"] = "1"
    queue.put((bool(ok), get_num_threads()))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_pool_after_fork(threads, monkeypatch):
    elementwise.unary(np.sqrt, np.arange(1 << 18, dtype=np.float64))  # the parent's pool is up
    monkeypatch.setattr(parallel, "_default", 5)  # a default the child must not inherit
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    p.join(timeout=60)
    if p.is_alive():
        p.kill()
        pytest.fail("forked child hung")
    ok, n = q.get(timeout=5)
    assert p.exitcode == 0 and ok and n == 1


def test_set_num_threads_api():
    old = parallel._set
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert elementwise.unary(np.exp, np.zeros(1 << 18)).sum() == 1 << 18  # one thread: the plain call
    finally:
        parallel._set = old
    assert get_num_threads() >= 1
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(RuntimeError) as t:
            torch.set_num_threads(bad)
        with pytest.raises(RuntimeError) as e:
            set_num_threads(bad)
        assert str(e.value) == str(t.value)
