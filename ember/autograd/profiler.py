"""The profiler's recording, as ``torch.autograd.profiler``: ``profile`` and ``record_function``.

While a profile records, each op's dispatch (``Function.apply``, named by the op's class: ``Add``, ``Matmul``) and
each backward node (``MulBackward0``) is timed. Their dispatchers are swapped for timing wrappers when recording
starts and put back when it stops, so that ops cost nothing extra while no profiler records.
"""
import contextlib
import sys
import threading
import time
import traceback
import types

from . import engine as _engine, function as _fn
from .profiler_util import EventList, FunctionEvent

_RECORDER = [None]  # the recording profile's _Recorder, or None


class _Recorder:
    """The events of one recording, each nested under the range open on its thread when it began."""

    def __init__(self, record_shapes, profile_memory, with_stack):
        self.events = []
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self._open = threading.local()

    def begin(self, name, inputs=()):
        Tensor = _fn.Tensor
        shapes = [list(x.shape) if isinstance(x, Tensor) else [] for x in inputs] if self.record_shapes else None
        stack = [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(traceback.extract_stack()[:-2])
                 ] if self.with_stack else None
        ev = FunctionEvent(len(self.events), name, threading.get_native_id(), time.perf_counter_ns() / 1e3,
                           input_shapes=shapes, stack=stack)
        open_ = getattr(self._open, "stack", None)
        if open_ is None:
            open_ = self._open.stack = []
        if open_:
            ev.cpu_parent = open_[-1]
            open_[-1].cpu_children.append(ev)
        open_.append(ev)
        self.events.append(ev)
        return ev

    def end(self, ev, out=None):
        ev.end_us = time.perf_counter_ns() / 1e3
        open_ = self._open.stack
        if ev in open_:
            del open_[open_.index(ev):]
        if self.profile_memory:
            ev.cpu_memory_usage = _nbytes(out) + sum(c.cpu_memory_usage for c in ev.cpu_children)


def _nbytes(out):
    if isinstance(out, _fn.Tensor):
        return out._data.nbytes
    if isinstance(out, tuple):
        return sum(_nbytes(o) for o in out)
    return 0


def _timed_apply(name, apply):
    def profiled_apply(*inputs, **params):
        rec = _RECORDER[0]
        if rec is None:
            return apply(*inputs, **params)
        ev = rec.begin(name, inputs)
        try:
            out = apply(*inputs, **params)
        except BaseException:
            rec.end(ev)
            raise
        rec.end(ev, out)
        return out
    return profiled_apply


def _timed_call_node(call_node):
    def profiled_call_node(node, gs, create_graph):
        rec = _RECORDER[0]
        if rec is None:
            return call_node(node, gs, create_graph)
        ev = rec.begin(node.name())
        try:
            return call_node(node, gs, create_graph)
        finally:
            rec.end(ev)
    return profiled_call_node


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _patch():
    """Swaps every op's dispatcher (on its class and in the closures of public functions that captured it) and
    the engine's node call for timing wrappers; returns what undoes it."""
    undo = []
    wrappers = {}
    for cls in set(_subclasses(_fn.Function)):
        sm = cls.__dict__.get("apply")
        fn = getattr(sm, "__func__", None)
        if fn is None or getattr(fn, "dispatches", None) is not cls:
            continue  # torch-style Functions: the ops they run are timed
        wrappers[fn] = _timed_apply(cls.__name__, fn)
        undo.append((cls, "apply", sm))
        cls.apply = staticmethod(wrappers[fn])
    namespaces = [vars(m) for name, m in list(sys.modules.items())
                  if (name == "ember" or name.startswith("ember.")) and m is not None]
    for ns in namespaces + [vars(_fn.Tensor)]:
        for obj in list(ns.values()):
            if type(obj) is types.FunctionType and obj.__closure__:
                for cell in obj.__closure__:
                    try:
                        f = cell.cell_contents
                    except ValueError:  # an empty cell
                        continue
                    if type(f) is types.FunctionType and f in wrappers:
                        undo.append((cell, "cell_contents", f))
                        cell.cell_contents = wrappers[f]
    undo.append((_engine, "_call_node", _engine._call_node))
    _engine._call_node = _timed_call_node(_engine._call_node)
    return undo


class profile:
    """Context manager that records the time of each op, backward node and ``record_function`` block run inside
    it, as ``torch.autograd.profiler.profile``; read the results with ``key_averages()``, ``function_events`` or
    ``export_chrome_trace(path)``. ``record_shapes`` keeps the input shapes of each op, ``profile_memory`` the bytes
    of its outputs, ``with_stack`` the Python stack of each event.

    Example::

        >>> x = ember.randn(64, 64)
        >>> with ember.autograd.profiler.profile() as prof:
        ...     y = x @ x
        >>> prof.key_averages()[0].key
        'Matmul'
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.function_events = None
        self._recorder = self._undo = None

    def __enter__(self):
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop()

    def _start(self):
        if _RECORDER[0] is not None:
            raise RuntimeError("Profiler is already enabled")
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        self._undo = _patch()
        _RECORDER[0] = self._recorder

    def _stop(self):
        _RECORDER[0] = None
        for obj, name, old in reversed(self._undo):
            setattr(obj, name, old)
        self._undo = None
        self.function_events = EventList(self._recorder.events, profile_memory=self.profile_memory)

    def _events(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events' totals per name: see ``EventList.key_averages``."""
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        return self._events().table(sort_by=sort_by, row_limit=row_limit, max_name_column_width=max_name_column_width,
                                    max_shapes_column_width=max_shapes_column_width, header=header,
                                    top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path):
        self._events().export_chrome_trace(path)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def __str__(self):
        return self.table()


class record_function(contextlib.ContextDecorator):
    """Context manager and decorator that records the block (or each call) as an event named ``name`` when a
    profiler records; the ops inside are its children.

    Example::

        >>> with ember.profiler.profile() as prof:
        ...     with ember.profiler.record_function("my_block"):
        ...         y = ember.ones(3) * 2
    """

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._open = []  # (recorder, event) per entry, innermost last

    def __enter__(self):
        rec = _RECORDER[0]
        self._open.append((rec, rec.begin(self.name) if rec is not None else None))
        return self

    def __exit__(self, *exc):
        rec, ev = self._open.pop()
        if ev is not None:
            rec.end(ev)
