"""``spawn``: runs ``fn(i, *args)`` in ``nprocs`` new processes and waits for them, raising the first failure."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile

__all__ = ["ProcessException", "ProcessRaisedException", "ProcessExitedException", "ProcessContext", "spawn",
           "start_processes"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.error_pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed with an exception: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process was killed by a signal or exited with a non-zero code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        import traceback
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    """The processes :func:`spawn` started; ``join()`` waits for them."""

    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits up to ``timeout`` seconds for a process to end; True once all have ended successfully. On a
        failure, ends the others and raises :class:`ProcessRaisedException` or :class:`ProcessExitedException`."""
        alive = {p.sentinel: i for i, p in enumerate(self.processes) if p.exitcode is None}
        if not alive:
            return True
        for sentinel in multiprocessing.connection.wait(list(alive), timeout):
            self.processes[alive[sentinel]].join()
        # every ended process, not only those the wait reported: another may have failed meanwhile
        for i, p in enumerate(self.processes):
            if p.exitcode not in (None, 0):
                self._fail(i)
        return all(p.exitcode is not None for p in self.processes)

    def _fail(self, i):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        p = self.processes[i]
        if os.path.getsize(self.error_files[i]):
            with open(self.error_files[i], "rb") as f:
                tb = pickle.load(f)
            raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n{tb}", i, p.pid)
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i, p.pid, p.exitcode, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes of ``start_method`` running ``fn(i, *args)``; with ``join``, waits for them,
    else returns their :class:`ProcessContext`."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="ember-spawn-")
        os.close(fd)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    finally:
        for path in error_files:
            os.unlink(path)


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process (see :func:`start_processes`)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
