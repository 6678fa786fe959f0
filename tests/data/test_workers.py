"""DataLoader with worker processes: order, parallelism, errors, dead workers, cleanup, threads, seeding, sharing."""
import gc
import multiprocessing as mp
import os
import random
import signal
import time

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, _worker

from . import helpers


def _gone(pids):
    """Whether every process in ``pids`` has exited and been reaped."""
    live = {p.pid for p in mp.active_children()}
    for pid in pids:
        if pid in live:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


def _flatten(batches):
    return [x for b in batches for x in b.tolist()]


def test_batches_arrive_in_order():
    loader = DataLoader(helpers.Jittery(40), batch_size=3, num_workers=2)
    assert _flatten(loader) == list(range(40))
    assert _flatten(loader) == list(range(40))  # a second epoch


def test_out_of_order_delivers_everything():
    loader = DataLoader(helpers.Jittery(30), batch_size=2, num_workers=2, in_order=False)
    assert sorted(_flatten(loader)) == list(range(30))


class _Rendezvous(helpers.Range):
    """Items 0 and 2 (the first items of the first two batches of 2) wait for each other: only two workers
    loading at the same time get past them."""

    def __init__(self, n, barrier):
        super().__init__(n)
        self.barrier = barrier

    def __getitem__(self, i):
        if i in (0, 2):
            self.barrier.wait(timeout=30)
        return super().__getitem__(i)


def test_two_workers_run_in_parallel():
    barrier = mp.get_context("fork").Barrier(2)
    out = _flatten(DataLoader(_Rendezvous(8, barrier), batch_size=2, num_workers=2))
    assert out == list(range(8))  # a worker loading alone would have broken the barrier (BrokenBarrierError)


def test_worker_exception_carries_original_traceback():
    with pytest.raises(ValueError) as info:
        for _ in DataLoader(helpers.Failing(10), batch_size=2, num_workers=2):
            pass
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "Original Traceback (most recent call last)" in msg
    assert "helpers.py" in msg and 'raise ValueError(f"cannot load sample {i}")' in msg
    assert "ValueError: cannot load sample 5" in msg


def test_worker_key_error_message_is_readable():
    with pytest.raises(KeyError) as info:
        list(DataLoader(helpers.KeyFailing(6), num_workers=1))
    assert "\\n" not in str(info.value) and "KeyError: 'missing'" in str(info.value)


def test_iteration_continues_after_a_worker_exception():
    it = iter(DataLoader(helpers.Failing(8), batch_size=2, num_workers=2))
    assert [next(it).tolist(), next(it).tolist()] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError):
        next(it)
    assert next(it).tolist() == [6, 7]  # as torch: the next batch still comes


def test_killed_worker_raises_instead_of_hanging():
    loader = DataLoader(helpers.Pid(200, delay=0.02), batch_size=2, num_workers=2)
    it = iter(loader)
    pids = set(next(it).tolist())
    victim = pids.pop()
    os.kill(victim, signal.SIGKILL)
    t = time.perf_counter()
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid {victim}\) is killed by signal: Killed"):
        for _ in it:
            pass
    assert time.perf_counter() - t < 10
    assert _gone(pids | {victim})


def test_timeout():
    loader = DataLoader(helpers.Range(4, delay=3.0), num_workers=1, timeout=0.3)
    t = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        next(iter(loader))
    assert time.perf_counter() - t < 5


def test_workers_exit_when_iteration_finishes():
    pids = set(_flatten(DataLoader(helpers.Pid(8), batch_size=2, num_workers=2)))
    assert len(pids) == 2 and _gone(pids)


def test_workers_exit_when_iterator_is_dropped():
    it = iter(DataLoader(helpers.Pid(100), batch_size=2, num_workers=2))
    pids = set(next(it).tolist())
    del it
    gc.collect()
    assert _gone(pids)


def test_workers_exit_after_an_exception_escapes_the_loop():
    before = {p.pid for p in mp.active_children()}
    with pytest.raises(ValueError) as info:
        for _ in DataLoader(helpers.Failing(100), batch_size=2, num_workers=2):
            pass
    assert info.value is not None  # the exception (and its traceback) is still alive here
    assert not {p.pid for p in mp.active_children()} - before


def test_persistent_workers_survive_epochs_and_exit_with_the_loader():
    loader = DataLoader(helpers.Pid(8), batch_size=2, num_workers=2, persistent_workers=True)
    first, second = set(_flatten(loader)), set(_flatten(loader))
    assert first == second and len(first) == 2
    assert not _gone(first)
    del loader
    gc.collect()
    assert _gone(first)


def test_unpicklable_batch_is_an_error_not_a_hang():
    loader = DataLoader(helpers.Range(4), batch_size=2, num_workers=1, collate_fn=helpers.unpicklable_collate,
                        timeout=20)
    with pytest.raises(Exception, match="pickling its batch"):
        next(iter(loader))


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers_use_one_blas_thread(context):
    env = os.environ.get("OMP_NUM_THREADS")
    before = ember.get_num_threads()
    ember.set_num_threads(2)  # workers still run one: ember's own threads are capped as torch's are
    loader = DataLoader(helpers.Threads(2), batch_size=None, num_workers=1, multiprocessing_context=context)
    for threads, omp in loader:
        assert threads == 1 and omp == "1"
    assert os.environ.get("OMP_NUM_THREADS") == env  # the main process keeps its own setting
    assert ember.get_num_threads() == 2
    ember.set_num_threads(before)


def test_worker_info_and_init_fn():
    assert ember.utils.data.get_worker_info() is None
    g = ember.Generator().manual_seed(3)
    out = list(DataLoader(helpers.Info(4), batch_size=None, num_workers=2, worker_init_fn=helpers.init_fn,
                          generator=g))
    base = ember.empty((), dtype=ember.int64).random_(generator=ember.Generator().manual_seed(3)).item()
    assert [o[0] for o in out] == [0, 1, 0, 1]
    assert all(o[1] == 2 and o[3] == "Info" for o in out)
    assert [o[2] for o in out[:2]] == [base, base + 1]
    assert [o[4] for o in out[:2]] == ["init-0", "init-1"]


def _epoch(num_workers, seed=0, **kw):
    g = ember.Generator().manual_seed(seed)
    loader = DataLoader(helpers.Augmented(), batch_size=3, shuffle=True, num_workers=num_workers, generator=g, **kw)
    return [[x.numpy().copy() if hasattr(x, "numpy") else x for x in batch] for batch in loader]


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for ba, bb in zip(a, b) for x, y in zip(ba, bb))


def test_seeded_augmentations_do_not_depend_on_num_workers():
    ref = _epoch(0)
    assert _same(ref, _epoch(1)) and _same(ref, _epoch(2))
    assert not _same(ref, _epoch(2, seed=1))
    imgs = np.concatenate([b[0] for b in ref])
    assert len({x.tobytes() for x in imgs}) == len(imgs)  # the augmentations really are random


def test_in_process_loading_leaves_global_generators_alone():
    states = random.getstate(), np.random.get_state()[1].copy(), ember.get_rng_state()
    _epoch(0)
    assert random.getstate() == states[0]
    assert np.array_equal(np.random.get_state()[1], states[1])
    assert ember.get_rng_state().tolist() == states[2].tolist()


def test_persistent_workers_draw_new_augmentations_each_epoch():
    g = ember.Generator().manual_seed(0)
    loader = DataLoader(helpers.Augmented(6), batch_size=3, num_workers=2, generator=g, persistent_workers=True)
    e1 = [b[1].tolist() for b in loader]
    e2 = [b[1].tolist() for b in loader]
    assert e1 != e2


def test_fork_shares_the_dataset_without_pickling():
    ds = helpers.NoPickle()
    address = ds.array.__array_interface__["data"][0]
    out = list(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork"))
    assert [a for a, _ in out] == [address] * 4  # the same (copy-on-write) buffer, not a copy
    assert [v for _, v in out] == [0.0, 1.0, 2.0, 3.0]


def test_spawn_maps_arrays_from_shared_memory():
    ds = helpers.BigArray()
    def segments():  # SharedMemory's own names (other processes' semaphores may come and go meanwhile)
        return {n for n in os.listdir("/dev/shm") if n.startswith("psm_")} if os.path.isdir("/dev/shm") else set()
    shm = segments()
    loader = DataLoader(ds, batch_size=None, num_workers=1, multiprocessing_context="spawn")
    out = list(loader)
    assert all(mapped_array and mapped_tensor for mapped_array, mapped_tensor, _, _ in out)
    assert [s for *_, s, _ in out] == [float(ds.array[i].sum()) for i in range(4)]
    assert [s for *_, s in out] == [float(ds.tensor[i].sum()) for i in range(4)]
    assert segments() <= shm  # segments freed with the workers


def test_iterable_dataset_shards_per_worker():
    loader = DataLoader(helpers.Shards(10), batch_size=2, num_workers=2)
    assert sorted(_flatten(loader)) == list(range(10))
    unsharded = DataLoader(helpers.Shards(4, shard=False), batch_size=None, num_workers=2)
    assert sorted(x.item() if hasattr(x, "item") else x for x in unsharded) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_iterable_dataset_with_persistent_workers():
    loader = DataLoader(helpers.Shards(9), batch_size=2, num_workers=2, persistent_workers=True)
    assert sorted(_flatten(loader)) == sorted(_flatten(loader)) == list(range(9))


def test_batch_fetching_is_seeded_per_batch():
    # a batch's seed depends on the base seed and its position only
    assert _worker.batch_seed(5, 0) == _worker.batch_seed(5, 0) != _worker.batch_seed(5, 1)


def test_tensors_cross_processes_intact():
    from multiprocessing.reduction import ForkingPickler
    import pickle
    for t in (ember.arange(6.0).reshape(2, 3)[:, 1:], ember.ones(2, dtype=ember.bfloat16),
              ember.zeros(2, requires_grad=True), ember.ones(3, requires_grad=True) * 2):
        u = pickle.loads(ForkingPickler.dumps(t))
        assert u.dtype == t.dtype and u.shape == t.shape and u.tolist() == t.tolist()
        assert u.requires_grad == t.requires_grad and u.grad_fn is None
    ds = ember.utils.data.TensorDataset(ember.arange(10), ember.arange(20.0).reshape(10, 2))
    got = list(DataLoader(ds, batch_size=4, num_workers=2))
    assert [b[0].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert got[0][1].dtype == ember.float32 and got[2][1].tolist() == [[16.0, 17.0], [18.0, 19.0]]
