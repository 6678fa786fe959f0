"""What runs inside a DataLoader worker process, and the pieces both sides of the queues share.

A worker caps its BLAS/OpenMP thread pools to one thread (workers run side by side: more threads only oversubscribe
the cores), seeds its random number generators, then serves ``(task index, dataset indices, seed)`` requests until it
is told to stop, its parent dies, or the loader shuts down. Results travel back pickled through one shared queue.
"""
import ctypes
import os
import queue
import random
import re
import sys
import traceback
from multiprocessing import queues, reduction

import numpy as np

_POLL_S = 0.1  # how often a blocked side checks whether the other side is still alive
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
# setters of the thread-pool size that BLAS/OpenMP runtimes export (NumPy and SciPy wheels prefix OpenBLAS's)
_SET_THREADS = ("openblas_set_num_threads", "openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                "scipy_openblas_set_num_threads64_", "MKL_Set_Num_Threads", "bli_thread_set_num_threads",
                "omp_set_num_threads")
_GET_THREADS = ("openblas_get_num_threads", "openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                "scipy_openblas_get_num_threads64_", "MKL_Get_Max_Threads", "bli_thread_get_num_threads",
                "omp_get_max_threads")

_RUNTIME_NAMES = re.compile(r"openblas|libmkl|libgomp|libiomp|libomp|libblis")


class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker: ``id``, ``num_workers``, ``seed`` and the worker's
    copy of the ``dataset``."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):
        for name, value in zip(self.__slots__, (id, num_workers, seed, dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_worker_info = None


def get_worker_info():
    """Inside a DataLoader worker, its :class:`WorkerInfo`; in the main process, None.

    ``seed`` is the worker's own seed (the loader's base seed plus ``id``); ``dataset`` is this process's copy, so
    an ``IterableDataset`` can pick its shard in ``__iter__`` or in ``worker_init_fn``.
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process with its formatted traceback."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises the exception again, with the original traceback in its message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)  # KeyError's str() would show the text as a repr
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """A persistent worker starts a new epoch (it echoes this back once ready)."""


class ResultQueue(queues.Queue):
    """The workers' result queue. A batch that cannot be pickled comes back as that error instead of being dropped
    by the queue's feeder thread (which would leave the main process waiting for it forever)."""

    def __init__(self, ctx):
        super().__init__(ctx=ctx)

    def _on_queue_feeder_error(self, e, obj):
        if isinstance(obj, tuple) and len(obj) == 2 and not isinstance(obj[1], ExceptionWrapper):
            wid = _worker_info.id if _worker_info is not None else "?"
            self.put((obj[0], ExceptionWrapper(where=f"in DataLoader worker process {wid} (pickling its batch)")))
        else:
            super()._on_queue_feeder_error(e, obj)


def _rebuild_tensor(array, dtype_name, requires_grad):
    from ... import _dtype
    from ..._device import CPU
    from ..._tensor import Tensor
    return Tensor._make(array, getattr(_dtype, dtype_name), CPU, requires_grad)


def _reduce_tensor(t):
    """Sends a CPU tensor between processes as its array (which unpickles into fresh memory the tensor can own),
    skipping the copies of the general pickling path; batches from workers travel this way."""
    if t.device.type != "cpu" or t.grad_fn is not None:
        return t.__reduce_ex__(4)
    return _rebuild_tensor, (t._data, t.dtype.name, t._requires_grad)


def _register_reductions():
    from ..._tensor import Tensor
    reduction.ForkingPickler.register(Tensor, _reduce_tensor)


_register_reductions()


# -- threads -----------------------------------------------------------------------------------------------------
def _thread_libraries():
    """The loaded shared libraries that look like BLAS or OpenMP runtimes."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].strip() for line in f if line.count(" ") >= 5 and ".so" in line}
    except OSError:  # not Linux: only the environment variables apply
        return []
    return sorted(p for p in paths if _RUNTIME_NAMES.search(os.path.basename(p).lower()))


def _call_each(names, *args):
    """Calls each of ``names`` found in the loaded BLAS/OpenMP libraries; returns {"library:name": result}."""
    out = {}
    for path in _thread_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in names:
            fn = getattr(lib, name, None)
            if fn is not None:
                out[f"{os.path.basename(path)}:{name}"] = fn(*args)
    return out


def limit_threads():
    """Caps ember's intra-op threads and BLAS/OpenMP to one thread in this process: through the environment
    (libraries loaded later, child processes) and, for runtimes already loaded (as after a fork), through
    threadpoolctl when installed or their own ``*_set_num_threads`` entry points."""
    from ..._kernels.parallel import set_num_threads
    set_num_threads(1)
    for var in _THREAD_VARS:
        os.environ[var] = "1"
    try:
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        threadpoolctl.threadpool_limits(1)
    else:
        _call_each(_SET_THREADS, 1)


def blas_threads():
    """The thread-pool size each loaded BLAS/OpenMP runtime reports, as {library:getter: threads}."""
    return _call_each(_GET_THREADS)


# -- seeds -------------------------------------------------------------------------------------------------------
def seed_all(seed):
    """Seeds Python's ``random``, NumPy's global generator and ember's default CPU generator from one 64-bit seed
    (ember's ``initial_seed()`` is then ``seed``)."""
    from ..._random import default_generator
    random.seed(seed)
    np.random.seed(np.random.SeedSequence(seed).generate_state(4))
    default_generator.manual_seed(seed)


def batch_seed(base_seed, idx):
    """The seed batch ``idx`` of an epoch is fetched under: it depends on the epoch's base seed and the batch's
    position only, so which worker (or the main process) fetches the batch does not matter."""
    return int(np.random.SeedSequence([base_seed, idx]).generate_state(2, np.uint64)[0] >> np.uint64(1))


class _RngStates:
    """Saves and restores the global generators around an in-process fetch seeded by :func:`seed_all`."""

    def __enter__(self):
        from ..._random import default_generator
        self.states = random.getstate(), np.random.get_state(), default_generator.get_state()
        return self

    def __exit__(self, *exc):
        from ..._random import default_generator
        py, npy, ember = self.states
        random.setstate(py)
        np.random.set_state(npy)
        default_generator.set_state(ember)


# -- fetchers ----------------------------------------------------------------------------------------------------
class MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            if getattr(self.dataset, "__getitems__", None):
                data = self.dataset.__getitems__(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    return (IterableFetcher if iterable else MapFetcher)(dataset, auto_collation, collate_fn, drop_last)


# -- the worker --------------------------------------------------------------------------------------------------
def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """The body of worker process ``worker_id``."""
    global _worker_info
    try:
        limit_threads()
        seed = base_seed + worker_id
        seed_all(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        parent = os.getppid()
        ended = False
        while os.getppid() == parent:  # a worker whose loader's process died exits by itself
            try:
                task = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                # The loader may be shutting down from a garbage collection, which can close the index queue's
                # feeder before the stop message goes out: the event is the signal that always arrives.
                if done_event.is_set():
                    break
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                ended = False
                fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or ended:
                continue
            idx, index, seed = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    if seed is not None:
                        seed_all(seed)
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data, ended = _IterableDatasetStopIteration(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, task  # do not hold a batch while waiting for the next task
    except KeyboardInterrupt:  # the main process handles Ctrl-C
        pass
    if done_event.is_set():
        # Shutting down: results nobody will read must not keep this process alive flushing the queue.
        data_queue.cancel_join_thread()
        data_queue.close()
