"""``ember.profiler.profile``: the profiler with activities, a step schedule and trace callbacks."""
import enum
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function


class ProfilerActivity(enum.Enum):
    """Which activities a profile records. ember times ops on the host for every device (CPU)."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3


def supported_activities():
    """The activities this build can record."""
    from .. import cuda
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


class ProfilerAction(enum.Enum):
    """What a schedule asks of the profiler at a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule for ``profile``: skip ``skip_first`` steps, then cycles of ``wait`` idle steps, ``warmup`` steps
    and ``active`` recorded steps (the last one ends the cycle: ``on_trace_ready`` runs), ``repeat`` times (0:
    until the profile ends)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    raise NotImplementedError("ember.profiler.tensorboard_trace_handler is not supported: ember writes no "
                              "TensorBoard profiler plugin files; use on_trace_ready=lambda p: "
                              "p.export_chrome_trace(path) instead")


class profile:
    """Context manager that profiles the ops, backward nodes and ``record_function`` blocks run inside it, as
    ``torch.profiler.profile``.

    With a ``schedule``, call ``prof.step()`` at the end of each step: steps are recorded as the schedule says,
    each as a ``ProfilerStep#N`` event, and ``on_trace_ready(prof)`` runs at the end of each active cycle.
    ``key_averages()``, ``events()`` and ``export_chrome_trace(path)`` give the last recorded cycle.

    Example::

        >>> with ember.profiler.profile(activities=[ember.profiler.ProfilerActivity.CPU]) as prof:
        ...     y = ember.randn(8, 8) @ ember.randn(8, 8)
        >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.profiler = None
        self.step_rec_fn = None
        A = ProfilerAction
        prepare, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, self._trace_ready

        def warn(msg):
            return lambda: warnings.warn(msg)
        self.action_map = {
            (A.NONE, A.NONE): [], (A.NONE, A.WARMUP): [prepare], (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [warn("Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (A.WARMUP, A.WARMUP): [], (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [warn("Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [warn("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD, A.RECORD): [], (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready], (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop], (A.RECORD, None): [stop, ready], (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Signals that the next step starts."""
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def prepare_trace(self):
        self.profiler = _autograd_profiler.profile(record_shapes=self.record_shapes,
                                                   profile_memory=self.profile_memory, with_stack=self.with_stack)

    def start_trace(self):
        self.profiler._start()

    def stop_trace(self):
        self.profiler._stop()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

    def _results(self):
        if self.profiler is None or self.profiler.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.profiler

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The recorded events' totals per name (and input shapes, or stack): an EventList of FunctionEventAvg
        with ``.table()``."""
        return self._results().key_averages(group_by_input_shape, group_by_stack_n)

    def events(self):
        """The recorded events (FunctionEvent), in order of start."""
        return self._results().function_events

    def export_chrome_trace(self, path):
        """Writes the recorded events as Chrome trace JSON."""
        self._results().export_chrome_trace(path)
