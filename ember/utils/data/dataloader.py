"""DataLoader, as ``torch.utils.data.DataLoader``: batches from a dataset, in the main process or in worker processes.

Randomness and ``num_workers``: each iteration draws a base seed from the loader's ``generator`` (ember's default
generator if None). For a map-style dataset every batch is fetched with Python's ``random``, NumPy's global generator
and ember's default generator seeded from (base seed, batch position), in a worker or, with ``num_workers=0``, in the
main process (whose generators are restored afterwards). A seeded run therefore yields the same batches, random
augmentations included, for any ``num_workers``. Workers of an ``IterableDataset`` are seeded once, with
``base_seed + worker_id``, as in torch.

Workers: started with 'fork' on Linux (the dataset is shared copy-on-write), otherwise its large arrays go through
shared memory; each worker caps BLAS/OpenMP to one thread. A worker's exception is raised again in the main process
with the worker's traceback; a worker that dies raises a RuntimeError instead of hanging; workers are stopped when
the iteration ends, the iterator is dropped, or (``persistent_workers``) the loader is dropped.

Resuming: ``state_dict``/``load_state_dict`` (as torchdata's ``StatefulDataLoader``; torch's DataLoader has none)
record the epoch in progress: its base seed, the batches yielded so far, and what its sampler pass started from (the
sampler's state and ember's default generator). After ``load_state_dict`` the next ``iter()`` replays the sampler
pass without loading anything, skips the batches already yielded, and yields the rest, fetched under the same
per-batch seeds, so the same augmentations; the epochs after it follow as they would have. An ``IterableDataset``
has no sampler to replay: its yielded batches are fetched again and dropped.
"""
import atexit
import contextlib
import itertools
import math
import multiprocessing
import os
import queue
import signal
import sys
import time
import warnings
import weakref
from typing import Generic

from . import _worker
from ._shared import SharedPayload
from .collate import default_collate, default_convert
from .dataset import IterableDataset, T_co
from .sampler import BatchSampler, RandomSampler, SequentialSampler, Sampler

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info

_exiting = []  # non-empty once the interpreter is shutting down: workers are then left to multiprocessing's cleanup
_payloads = weakref.WeakSet()  # datasets in shared memory, freed at exit at the latest


@atexit.register
def _at_exit():
    _exiting.append(True)
    for payload in list(_payloads):
        payload.release()


class _Epoch:
    """Where an epoch stands; kept by the loader, so that ``state_dict`` works after its iterator is dropped."""

    __slots__ = ("base_seed", "sampler", "rng", "num_yielded", "finished")

    def __init__(self, base_seed):
        self.base_seed = base_seed
        self.sampler = self.rng = None  # the sampler's and the default generator's states when its pass began
        self.num_yielded = 0
        self.finished = False


_STATE_KEYS = ("generator", "sampler", "base_seed", "num_yielded", "sampler_rng_state")


def _sampler_state(sampler):
    fn = getattr(sampler, "state_dict", None)
    return None if fn is None else fn()


def _draw_base_seed(generator):
    from ... import empty, int64
    return int(empty((), dtype=int64).random_(generator=generator).item())


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: an endless stream of None."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over batches of a dataset, optionally loading them in worker processes.

    Args:
        dataset (Dataset): map-style (``__getitem__``/``__len__``) or iterable-style (``IterableDataset``)
        batch_size (int, optional): samples per batch; None disables auto-batching. Default: 1
        shuffle (bool, optional): reshuffle every epoch. Default: False
        sampler (Sampler or Iterable, optional): the order of indices (excludes ``shuffle``)
        batch_sampler (Sampler or Iterable, optional): yields whole lists of indices (excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``)
        num_workers (int, optional): worker processes; 0 loads in the main process. Default: 0
        collate_fn (Callable, optional): merges a list of samples into a batch (default ``default_collate``, or
            ``default_convert`` without auto-batching)
        pin_memory (bool, optional): accepted for torch compatibility (NumPy host memory is not pinned)
        drop_last (bool, optional): drop the last incomplete batch. Default: False
        timeout (numeric, optional): seconds to wait for a batch from the workers before raising; 0 waits forever
        worker_init_fn (Callable, optional): called with the worker id in each worker after seeding
        multiprocessing_context (str or context, optional): the start method; default 'fork' on Linux
        generator (Generator, optional): draws the base seed and the shuffling order
        prefetch_factor (int, optional): batches loaded in advance per worker. Default: 2 with workers
        persistent_workers (bool, optional): keep the workers alive between epochs. Default: False
        in_order (bool, optional): False hands out batches as they are ready rather than in sampler order

    Example::

        >>> from ember.utils.data import DataLoader, TensorDataset
        >>> loader = DataLoader(TensorDataset(ember.arange(5)), batch_size=2)
        >>> [b[0].tolist() for b in loader]
        [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._epoch = None  # the _Epoch of the latest iterator
        self._resume = None  # a state from load_state_dict, for the next iterator
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._mp_context = context

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                          "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            it = self._iterator
        else:
            it = self._get_iterator()
        if it._refetch:
            it._skip_refetched()
        return it

    def state_dict(self):
        """Where iteration stands, for :meth:`load_state_dict`: the loader's ``generator`` state, the sampler's
        state, and for an epoch in progress its base seed, the number of batches yielded and the default
        generator's state when its sampler pass began (None outside an epoch).

        Example::

            >>> from ember.utils.data import DataLoader, TensorDataset
            >>> loader = DataLoader(TensorDataset(ember.arange(6)), batch_size=2, shuffle=True)
            >>> it = iter(loader)
            >>> first = next(it)
            >>> state = loader.state_dict()
            >>> rest = [b[0].tolist() for b in it]
            >>> loader.load_state_dict(state)
            >>> [b[0].tolist() for b in loader] == rest
            True
        """
        if self._resume is not None:
            return dict(self._resume)
        epoch = self._epoch
        if epoch is None or epoch.finished:
            return {"generator": None if self.generator is None else self.generator.get_state(),
                    "sampler": _sampler_state(self._index_sampler), "base_seed": None, "num_yielded": 0,
                    "sampler_rng_state": None}
        if self.num_workers and not self.in_order and epoch.num_yielded:
            raise RuntimeError("DataLoader.state_dict: with in_order=False the batches are handed out as workers "
                               "finish them, so the number yielded does not say which ones; save the state between "
                               "epochs or use in_order=True")
        started = epoch.rng is not None
        return {"generator": None if self.generator is None else self.generator.get_state(),
                "sampler": epoch.sampler if started else _sampler_state(self._index_sampler),
                "base_seed": epoch.base_seed, "num_yielded": epoch.num_yielded,
                "sampler_rng_state": epoch.rng}

    def load_state_dict(self, state_dict):
        """Restores a state from :meth:`state_dict`: the loader's generator and sampler at once; the next
        ``iter()`` then continues the epoch that was in progress with its remaining batches (none if it had
        yielded them all), or starts a new epoch if none was."""
        if not isinstance(state_dict, dict) or set(state_dict) != set(_STATE_KEYS):
            got = sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict).__name__
            raise ValueError(f"DataLoader.load_state_dict: expected a dict with the keys {list(_STATE_KEYS)}, got "
                             f"{got}")
        saved = state_dict["generator"]
        if (saved is None) != (self.generator is None):
            raise ValueError(f"DataLoader.load_state_dict: the state was saved from a loader "
                             f"{'without' if saved is None else 'with'} a generator, but this one has "
                             f"{'one' if saved is None else 'none'}")
        sampler = state_dict["sampler"]
        load = getattr(self._index_sampler, "load_state_dict", None)
        if (sampler is None) != (load is None):
            raise ValueError(f"DataLoader.load_state_dict: the state {'has no' if sampler is None else 'has a'} "
                             f"sampler state, but this loader's {type(self._index_sampler).__name__} "
                             f"{'has' if sampler is None else 'has no'} load_state_dict")
        if state_dict["num_yielded"] and state_dict["sampler_rng_state"] is None and not self._iterable:
            raise ValueError("DataLoader.load_state_dict: the state has yielded batches but no sampler_rng_state")
        if saved is not None:
            self.generator.set_state(saved)
        if load is not None:  # after the generator: the sampler may share it, and its state is the older one
            load(sampler)
        self._resume = dict(state_dict)
        self._epoch = None

    def __len__(self):
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns when more workers are asked for than there are CPUs available to this process."""
        if not self.num_workers:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:
            cpus = os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            hint = (f"Our suggested max number of worker in current system is {cpus}, which is smaller than what "
                    "this DataLoader is going to create." if cpus is not None else
                    "DataLoader is not able to compute a suggested max number of worker in current system.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {hint} Please "
                          "be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                          "lower the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory:
            from ...cuda import is_available
            if not is_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                              "memory won't be used.", stacklevel=3)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._start_epoch(loader)

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        if not first_iter:  # a new epoch of persistent workers: new augmentations
            self._start_epoch(loader)

    def _start_epoch(self, loader):
        """A new sampler pass under a new base seed or, after ``loader.load_state_dict``, the interrupted epoch
        from the batch it had reached."""
        resume, loader._resume = loader._resume, None
        self._sampler_iter = iter(self._index_sampler)
        self._batches_fetched = 0
        self._refetch = 0
        if resume is None or resume["base_seed"] is None:
            self._base_seed = _draw_base_seed(loader.generator)
            self._epoch = loader._epoch = _Epoch(self._base_seed)
            return
        self._base_seed = resume["base_seed"]
        self._epoch = loader._epoch = _Epoch(self._base_seed)
        n = resume["num_yielded"]
        if self._iterable:
            self._refetch = n
        elif resume["sampler_rng_state"] is not None:
            self._replay_pass(resume, n)

    def _replay_pass(self, resume, n):
        """Restarts the sampler pass as it began and drops its first ``n`` batches, without loading them."""
        from ..._random import default_generator
        self._epoch.sampler, self._epoch.rng = resume["sampler"], resume["sampler_rng_state"]
        current = default_generator.get_state()
        default_generator.set_state(self._epoch.rng)  # a sampler without a generator draws its order from it
        try:
            # the first batch is drawn even when none was yielded: that draw starts the pass
            head = list(itertools.islice(self._sampler_iter, max(n, 1)))
        finally:
            default_generator.set_state(current)
        if len(head) < n:
            raise ValueError(f"DataLoader.load_state_dict: the state is {n} batches into its epoch, but the sampler "
                             f"now gives {len(head)} batches per epoch")
        self._sampler_iter = itertools.chain(head[n:], self._sampler_iter)
        self._batches_fetched = self._epoch.num_yielded = n

    def _skip_refetched(self):
        """Fetches again and drops the batches an interrupted epoch of an IterableDataset had yielded."""
        n, self._refetch = self._refetch, 0
        with _worker._RngStates() if self._num_workers == 0 else contextlib.nullcontext():
            for i in range(n):
                try:
                    next(self)
                except StopIteration:
                    raise ValueError(f"DataLoader.load_state_dict: the state is {n} batches into its epoch, but "
                                     f"the IterableDataset now ends after {i}") from None

    def _next_task(self):
        """The next batch's dataset indices and the seed to fetch it under (None for iterable datasets)."""
        if self._epoch.rng is None:  # the pass begins: note what from, to replay it after load_state_dict
            from ..._random import default_generator
            self._epoch.sampler = _sampler_state(self._index_sampler)
            self._epoch.rng = default_generator.get_state()
        index = next(self._sampler_iter)  # may raise StopIteration
        seed = None if self._iterable else _worker.batch_seed(self._base_seed, self._batches_fetched)
        self._batches_fetched += 1
        return index, seed

    def __next__(self):
        try:
            data = self._next_data()
        except StopIteration:
            self._epoch.finished = True
            raise
        if isinstance(data, _worker.ExceptionWrapper):
            # Raise from a frame that does not hold the iterator: a kept traceback must not keep workers alive.
            del self
            data.reraise()
        self._epoch.num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None \
                and self._epoch.num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._epoch.num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("DataLoader with num_workers=0 requires timeout == 0")
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation, self._collate_fn,
                                             self._drop_last)

    def _next_data(self):
        index, seed = self._next_task()
        if seed is None:
            return self._fetcher.fetch(index)  # may raise StopIteration
        with _worker._RngStates():
            _worker.seed_all(seed)
            return self._fetcher.fetch(index)


def _default_context():
    if multiprocessing.get_start_method(allow_none=True) is None and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")  # as torch on Linux: workers share the dataset copy-on-write
    return multiprocessing.get_context()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Workers each take tasks from their own index queue and put results on one shared queue; the main process
    keeps ``prefetch_factor * num_workers`` tasks in flight and hands batches out in order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or _default_context()
        self._workers, self._index_queues, self._payload, self._worker_result_queue = [], [], None, None
        self._shutdown = False
        self._owner = os.getpid()  # a forked child inherits this object and must not shut down its workers
        self._worker_result_queue = _worker.ResultQueue(ctx)
        self._workers_done_event = ctx.Event()
        dataset = self._dataset
        forking = ctx.get_start_method() == "fork"
        if not forking:
            dataset = self._payload = SharedPayload(dataset)
            _payloads.add(self._payload)
        try:
            with contextlib.nullcontext() if forking else _single_threaded_env():
                for i in range(self._num_workers):
                    index_queue = ctx.Queue()
                    index_queue.cancel_join_thread()
                    w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                        self._iterable, dataset, index_queue, self._worker_result_queue, self._workers_done_event,
                        self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                        loader.worker_init_fn, i, self._num_workers))
                    w.start()
                    self._index_queues.append(index_queue)
                    self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to hand out
        self._task_info = {}  # task -> (worker,) while outstanding, (worker, data) once arrived out of order
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # -- receiving -----------------------------------------------------------------------------------------------
    def _check_workers(self):
        """Raises (after shutting the others down) if a worker died."""
        for wid, w in enumerate(self._workers):
            if self._workers_status[wid] and not w.is_alive():
                code = w.exitcode
                if code is not None and code < 0:
                    try:
                        name = signal.strsignal(-code) or signal.Signals(-code).name
                    except ValueError:
                        name = f"signal {-code}"
                    msg = f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
                else:
                    msg = (f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly with exit code {code}. Details "
                           "are lost due to multiprocessing. Rerunning with num_workers=0 may give better error "
                           "trace.")
                self._shutdown_workers(graceful=False)
                raise RuntimeError(msg)

    def _get_data(self):
        """The next (task, data) from the workers, checking between short waits that they are all alive."""
        waited = 0.0
        while True:
            try:
                return self._data_queue.get(timeout=_worker._POLL_S)
            except queue.Empty:
                waited += _worker._POLL_S
            self._check_workers()
            if 0 < self._timeout <= waited:
                self._shutdown_workers(graceful=False)
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        if self._shutdown:  # exhausted, or stopped by an error
            raise StopIteration
        while True:
            # skip tasks of workers that ran out of data (iterable datasets)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        return data  # an ExceptionWrapper is raised by __next__

    # -- sending -------------------------------------------------------------------------------------------------
    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index, seed = self._next_task()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            wid = next(self._worker_queue_idx_cycle)
            if self._workers_status[wid] and (self._in_order or
                                              self._workers_num_tasks[wid] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index, seed))
        self._task_info[self._send_idx] = (wid,)
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    # -- shutting down -------------------------------------------------------------------------------------------
    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self, graceful=True):
        """Stops every worker and frees shared memory; idempotent. Workers get a moment to finish the batch in hand
        (unless not ``graceful``: after an error their work is lost anyway), then are terminated."""
        if self._shutdown or _exiting or os.getpid() != self._owner:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                q.put(None)
            deadline = time.monotonic() + (20 * _worker._POLL_S if graceful else 0)
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=10 * _worker._POLL_S)
                if w.is_alive():
                    os.kill(w.pid, signal.SIGKILL)
                    w.join()
            if self._payload is not None:
                self._payload.release()
            if self._worker_result_queue is not None:
                self._worker_result_queue.close()

    def __del__(self):
        if hasattr(self, "_shutdown"):
            self._shutdown_workers()


class _single_threaded_env:
    """Sets the BLAS/OpenMP thread variables to 1 while workers start, so a spawned worker's NumPy starts with a
    one-thread pool (a forked worker caps the pools it inherited itself)."""

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in _worker._THREAD_VARS}
        os.environ.update(dict.fromkeys(_worker._THREAD_VARS, "1"))

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
