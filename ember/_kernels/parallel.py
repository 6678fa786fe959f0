"""The intra-op thread pool: NumPy releases the GIL inside ufunc loops and reductions, so chunks of one large array
computed on several threads run side by side. Sized as torch's (``set_num_threads``/``get_num_threads``).

The pool starts on first use in each process: a child made by fork inherits no threads, so it starts its own (and
a child's default size is read anew, so that a DataLoader worker that set ``OMP_NUM_THREADS=1`` gets one thread).
The calling thread works on its own job alongside the pool; work submitted from inside a pool thread runs inline.
"""
import contextvars
import itertools
import os
import threading
from queue import SimpleQueue

_set = None  # the size set_num_threads chose, or None for the default
_default = None  # the default size, read once per process
_queue = None  # work for the pool threads: (job, the caller's context)
_started = 0  # pool threads running in this process
_start_lock = threading.Lock()
_local = threading.local()  # ``inside`` is True on pool threads


def _default_threads():
    """OMP_NUM_THREADS when set (as torch), else the cores this process may run on."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def get_num_threads():
    """The number of threads used to parallelize CPU ops on large tensors.

    Example::

        >>> ember.get_num_threads() >= 1
        True
    """
    global _default
    if _set is not None:
        return _set
    if _default is None:
        _default = _default_threads()
    return _default


def set_num_threads(n):
    """Sets the number of threads used to parallelize CPU ops on large tensors (1 turns threading off)."""
    global _set
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _set = n


def chunks(n, parts=None, align=1, grain=1):
    """``(start, stop)`` ranges that cover ``range(n)`` in at most ``parts`` nearly equal pieces (default: four per
    thread, so that a thread slowed by other work takes fewer), each start a multiple of ``align`` and each piece
    at least ``grain`` long (unless ``n`` is shorter)."""
    if parts is None:
        parts = 4 * get_num_threads()
    parts = max(min(parts, n // max(grain, 1)), 1)
    step = -(-n // parts)
    step = max(-(-step // align) * align, 1)
    return [(i, min(i + step, n)) for i in range(0, n, step)]


def parallel_map(fn, items):
    """``[fn(item) for item in items]``, computed by the calling thread and the pool's threads together, each
    taking the next item as it finishes one (a thread the OS does not run promptly then takes fewer). Runs in the
    caller's context (``numpy.errstate`` and the like apply); the first exception raised is re-raised here once
    every item has finished."""
    items = list(items)
    helpers = min(get_num_threads(), len(items)) - 1
    if helpers <= 0 or getattr(_local, "inside", False):
        return [fn(x) for x in items]
    job = _Job(fn, items)
    q = _pool(helpers)
    for _ in range(helpers):
        q.put((job, contextvars.copy_context()))
    job.drain()
    job.done.acquire()  # released by whichever thread finishes the last item
    if job.errors:
        raise job.errors[0]
    return job.results


class _Job:
    __slots__ = ("fn", "items", "results", "errors", "taken", "finished", "done")

    def __init__(self, fn, items):
        self.fn, self.items = fn, items
        self.results = [None] * len(items)
        self.errors = []
        self.taken, self.finished = itertools.count(), itertools.count(1)  # next() on a count is atomic
        self.done = threading.Lock()
        self.done.acquire()

    def drain(self):
        fn, items, n = self.fn, self.items, len(self.items)
        while True:
            i = next(self.taken)
            if i >= n:
                return
            try:
                self.results[i] = fn(items[i])
            except BaseException as e:  # noqa: B036 (re-raised in the calling thread)
                self.errors.append(e)
            if next(self.finished) == n:
                self.done.release()


def _work(q):
    _local.inside = True
    while True:
        job, context = q.get()
        context.run(job.drain)


def _pool(workers):
    """The task queue, with at least ``workers`` threads serving it."""
    global _queue, _started
    if _started >= workers:
        return _queue
    with _start_lock:
        if _queue is None:
            _queue = SimpleQueue()
        while _started < workers:
            threading.Thread(target=_work, args=(_queue,), name=f"ember-intraop-{_started}", daemon=True).start()
            _started += 1
    return _queue


def _after_fork():
    """A forked child has none of its parent's pool threads (and maybe a lock another parent thread held)."""
    global _queue, _started, _default, _start_lock
    _queue, _started, _default, _start_lock = None, 0, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
