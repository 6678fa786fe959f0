"""``ember.utils.benchmark``: :class:`Timer` runs a statement and returns a :class:`Measurement` (times per run,
median, IQR, a readable repr); :class:`Compare` prints measurements as a table (rows: ``sub_label``, columns:
``description``, one table per ``label``)."""
import collections
import contextlib
import enum
import math
import textwrap
import timeit as _timeit

import numpy as np

__all__ = ["Timer", "Measurement", "Compare", "Colorize", "TaskSpec", "Language", "select_unit"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class TaskSpec:
    """What a :class:`Timer` measures: the statement, its setup and the labels that name it."""

    def __init__(self, stmt, setup, global_setup="", label=None, sub_label=None, description=None, env=None,
                 num_threads=1):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    def _key(self):
        return (self.stmt, self.setup, self.global_setup, self.label, self.sub_label, self.description, self.env,
                self.num_threads)

    def __eq__(self, other):
        return isinstance(other, TaskSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    @property
    def title(self):
        """The label (or the statement) and the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


def _log10(x):
    """log10 rounded through float32, where the table's layout is decided (digits, units, significant figures)."""
    return float(np.float32(math.log10(float(np.float32(x)))))


def select_unit(t):
    """The unit (``'ns'``, ``'us'``, ``'ms'`` or ``'s'``) and its scale in seconds for a time ``t``."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures."""
    scale = 10 ** (math.ceil(_log10(abs(x))) - n)
    return float(np.float32(np.round(np.float32(x / scale))) * scale)


class Measurement:
    """The result of a :class:`Timer`: ``raw_times`` of blocks of ``number_per_run`` runs each.

    ``times`` are per run; ``median``, ``mean`` and ``iqr`` summarize them; the task's fields (``label``,
    ``sub_label``, ``description``, ``num_threads``, ...) read through.
    """

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run, self.raw_times = number_per_run, raw_times
        self.task_spec, self.metadata = task_spec, metadata
        t = np.sort(np.asarray(self.times, dtype=np.float64))
        self._sorted_times = tuple(t.tolist())
        self._median, self._mean = (float(np.quantile(t, 0.5)), float(t.mean())) if t.size else (-1.0, -1.0)
        self._p25, self._p75 = (float(np.quantile(t, 0.25)), float(np.quantile(t, 0.75))) if t.size else (-1.0, -1.0)
        self._warnings = ()
        if t.size:
            for threshold, msg in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                                   (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
                if not self.meets_confidence(threshold):
                    self._warnings = (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                                      f"of the median measurement.\n           {msg}",)
                    break

    def __getattr__(self, name):
        if name in ("stmt", "setup", "global_setup", "label", "sub_label", "description", "num_threads"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        return self._median

    @property
    def mean(self):
        return self._mean

    @property
    def iqr(self):
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Significant figures of the median, estimated from the spread of the interquartile times (1 to 4)."""
        n = len(self._sorted_times)
        points = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        std = float(np.std(np.asarray(points, dtype=np.float32)))
        ci = max(1.645 * std / float(np.sqrt(np.float32(len(points)))), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(math.floor(_log10(self._median / ci))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        """Whether IQR / median is below ``threshold``."""
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """Measurements of the same task joined into one (with ``number_per_run=1``)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


@contextlib.contextmanager
def _threads(n):
    import ember
    previous = ember.get_num_threads()
    ember.set_num_threads(n)
    try:
        yield
    finally:
        ember.set_num_threads(previous)


def _dedent(code):
    """Statement text as written in an indented triple-quoted string: its common indentation and the blank first and
    last lines removed."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times ``stmt`` (code or a callable) after ``setup``, in ``globals`` (where ``torch`` names ember).

    Example::

        >>> x = ember.ones(16)
        >>> m = Timer("x * 2", globals={"x": x}, label="mul").timeit(10)
        >>> m.number_per_run
        10
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`: ember's Timer runs Python statements only.")
        import ember
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ember)
        stmt, setup = (_dedent(c) if isinstance(c, str) else c for c in (stmt, setup))
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt if isinstance(stmt, str) else getattr(stmt, "__name__", repr(stmt)),
                                   setup=setup if isinstance(setup, str) else "", global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Runs ``stmt`` ``number`` times (after a short warm-up) and measures them as one block."""
        with _threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def _block_size(self, min_run_time):
        with _threads(self._task_spec.num_threads):
            overhead = float(np.median(np.asarray([self._timeit(0) for _ in range(5)], dtype=np.float32)))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000 or taken > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        with _threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Runs blocks of a size that makes the timer's overhead negligible until ``min_run_time`` seconds."""
        number = self._block_size(min_run_time)
        return Measurement(number, self._loop(number, lambda times: True, min_run_time, callback=callback),
                           self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Runs blocks until IQR / median is below ``threshold`` (after at least four blocks and ``min_run_time``
        seconds), or for ``max_run_time`` seconds."""
        number = self._block_size(0.05)

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return Measurement(number, self._loop(number, stop, min_run_time, max_run_time, callback), self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


_BEST, _GOOD, _BAD, _VERY_BAD, _BOLD, _END = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m", "\033[1m", "\033[0m"


def _color(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + segment + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + segment + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + segment + _END * 2
    if value >= best * 2:
        return _BAD + segment + _END * 2
    return segment


class Compare:
    """Prints measurements as tables: one per ``label``, a row per (``num_threads``, ``sub_label``), a column per
    ``description``; replicates of a task are merged.

    Args:
        results: list of :class:`Measurement`.
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim, self._colorize, self._highlight = False, Colorize.NONE, False

    def extend_results(self, results):
        """Adds measurements to the table."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Shows each time to its estimated significant figures."""
        self._trim = True

    def colorize(self, rowwise=False):
        """Colors times relative to the best of their column (or of their row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Marks times whose IQR is high with ``(! XX%)``."""
        self._highlight = True

    def print(self):
        print(str(self))

    def __str__(self):
        groups = collections.defaultdict(list)
        for r in Measurement.merge(self._results):
            groups[r.label].append(r)
        return "\n".join(self._table(results) for results in groups.values())

    def _table(self, results):
        unit, scale = select_unit(min(r.median for r in results))
        row_keys = list(dict.fromkeys((r.num_threads, r.env, r.as_row_name) for r in results))
        row_keys.sort(key=lambda k: k[:2])
        col_keys = list(dict.fromkeys(r.description for r in results))
        cells = {((r.num_threads, r.env, r.as_row_name), r.description): r for r in results}
        grid = [[cells.get((rk, ck)) for ck in col_keys] for rk in row_keys]
        group_of = [len({rk[0] for rk in row_keys[:i + 1]}) - 1 for i in range(len(row_keys))]
        envs = {r.env for r in results}
        env_len = max(len(e) for e in envs) if len(envs) > 1 else 0

        templates = []
        for j in range(len(col_keys)):
            column = [row[j] for row in grid if row[j] is not None]
            lead = [math.ceil(_log10(m.median / scale)) for m in column]
            decimals = min(max(m.significant_figures - d, 0) for d, m in zip(lead, column)) if self._trim else 1
            warn = self._highlight and any(m.has_warnings for m in column)
            length = max(lead) + decimals + (1 if decimals else 0)
            templates.append((f"{{:>{length}.{decimals}f}}{{:>{7 if warn else 0}}}", warn))

        def cell(m, j):
            template, warn = templates[j]
            if m is None:
                return " " * len(template.format(1, " (! 0%)" if warn else ""))
            value = m.median / scale
            if self._trim:
                value = trim_sigfig(value, m.significant_figures)
            spread = f" (! {m.iqr / m.median * 100:.0f}%)" if warn and m.has_warnings else ""
            return template.format(value, spread)

        strings = [[""] + [str(c) for c in col_keys]]
        prior_env = None
        for i, (rk, row) in enumerate(zip(row_keys, grid)):
            new_group = i == 0 or group_of[i] != group_of[i - 1]
            env = f"({rk[1]})" if env_len and (new_group or rk[1] != prior_env) else ""
            prior_env = rk[1]
            strings.append(["  " + env.ljust(env_len + 4) + rk[2]] + [cell(m, j) for j, m in enumerate(row)])
        widths = [max(len(s[k]) for s in strings) for k in range(len(strings[0]))]
        header = "  |  ".join(s.center(w) for s, w in zip(strings[0], widths))
        lines = [header]
        for i, (s, row) in enumerate(zip(strings[1:], grid)):
            if i == 0 or group_of[i] != group_of[i - 1]:
                lines.append(f"{row_keys[i][0]} threads: ".ljust(len(header), "-"))
            best = [None] * len(row)
            if self._colorize is Colorize.ROWWISE:
                best = [min(m.median for m in row if m is not None)] * len(row)
            elif self._colorize is Colorize.COLUMNWISE:
                best = [min((grid[k][j].median for k in range(len(grid))
                             if group_of[k] == group_of[i] and grid[k][j] is not None), default=None)
                        for j in range(len(row))]
            parts = [s[0].ljust(widths[0])]
            for text, w, m, b in zip(s[1:], widths[1:], row, best):
                text = text.center(w)
                parts.append(_color(text, m.median, b) if self._colorize is not Colorize.NONE and m is not None
                             and b is not None else text)
            lines.append("  |  ".join(parts))
        names = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}
        warn_line = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                     if self._highlight and any(r.has_warnings for r in results) else "")
        return (f"[{(' ' + (results[0].label or '') + ' ').center(len(header) - 2, '-')}]\n" + "\n".join(lines)
                + f"\n\nTimes are in {names[unit]}s ({unit}).\n{warn_line}")
