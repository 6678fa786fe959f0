"""The profiler's results, as ``torch.autograd.profiler_util``: FunctionEvent, FunctionEventAvg and EventList (its
table and Chrome trace)."""
import json
import os


class FunctionEvent:
    """One recorded range: an op's dispatch, a backward node, or a ``record_function`` block. Times are in
    microseconds; ``cpu_children`` are the ranges that ran directly inside it on the same thread."""

    def __init__(self, id, name, thread, start_us, end_us=0.0, input_shapes=None, stack=None, cpu_memory_usage=0):
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes
        self.stack = stack or []
        self.cpu_memory_usage = cpu_memory_usage
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.is_async = False
        self.device_type = "cpu"

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us cpu_children={[c.id for c in self.cpu_children]}>")


class FunctionEventAvg:
    """The totals of the events sharing a key (``EventList.key_averages``)."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes, self.stack = input_shapes, stack
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.cpu_parent = None
        self.is_async = False

    def add(self, evt):
        self.count += evt.count
        self.cpu_time_total += evt.cpu_time_total
        self.self_cpu_time_total += evt.self_cpu_time_total
        self.cpu_memory_usage += evt.cpu_memory_usage
        self.self_cpu_memory_usage += evt.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time:.3f}us input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's summaries."""

    def __init__(self, *args, profile_memory=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One FunctionEventAvg per event name (and input shapes, or top ``group_by_stack_n`` stack frames), in
        order of first appearance."""
        groups = {}
        for e in self:
            name = "ProfilerStep*" if e.key.startswith("ProfilerStep#") else e.key  # steps add up, as in torch
            key = (name, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(name, e.input_shapes if group_by_input_shape else None,
                                                     e.stack[:group_by_stack_n] if group_by_stack_n else None)
            avg.add(e)
        return EventList(groups.values(), profile_memory=self._profile_memory)

    def total_average(self):
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as torch's text table, sorted by ``sort_by`` (an attribute such as ``"cpu_time_total"``,
        ``"self_cpu_time_total"`` or ``"count"``, largest first) and cut to ``row_limit`` rows."""
        return _build_table(self, sort_by, header, row_limit, max_name_column_width, max_shapes_column_width,
                            self._profile_memory, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto)."""
        pid = os.getpid()
        events = [{"ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": e.thread, "ts": e.start_us,
                   "dur": e.cpu_time_total, "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                  for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _format_time(time_us, unit=None):
    if unit == "s" or unit is None and time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms" or unit is None and time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _build_table(events, sort_by, header, row_limit, max_name_width, max_shapes_width, profile_memory,
                 top_level_events_only, time_unit):
    if not events:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_width is not None:
        shapes_width = min(shapes_width, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total), _format_time(e.self_cpu_time_total, time_unit),
               _format_time_share(e.cpu_time_total, total), _format_time(e.cpu_time_total, time_unit),
               _format_time(e.cpu_time, time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            shapes = str(e.input_shapes)
            row.append(shapes[:shapes_width - 3] + "..." if len(shapes) >= shapes_width - 3 else shapes)
        lines.append(row_format.format(*row))
    lines += [sep, f"Self CPU time total: {_format_time(total, time_unit)}"]
    return "\n".join(lines) + "\n"
