"""The profiler: event structure, counts and nesting (timings are not compared), schedules, Chrome traces."""
import json

import pytest
import torch

import ember
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _work():
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3) * 2
    (a * b).exp().sum().backward()
    x = ember.randn(4, 4)
    return x @ x


def test_ops_and_backward_nodes_are_counted():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _work()
    counts = {e.key: e.count for e in prof.key_averages()}
    muls = [e.cpu_parent.name if e.cpu_parent else None for e in prof.events() if e.name == "Mul"]
    assert sorted(muls, key=str) == sorted([None, None, "MulBackward0", "ExpBackward0"], key=str)
    assert counts["Mul"] == 4 and counts["Exp"] == 1 and counts["Sum"] == 1 and counts["Matmul"] == 1
    assert counts["MulBackward0"] == 1 and counts["ExpBackward0"] == 1 and counts["SumBackward0"] == 1
    for row in prof.key_averages():
        assert row.cpu_time_total >= row.self_cpu_time_total >= 0
        assert row.cpu_time == pytest.approx(row.cpu_time_total / row.count)


def test_nothing_recorded_outside_and_ops_restored():
    apply = ember.autograd.function.Function.apply
    mul = ember._ops.binary.Mul.apply if hasattr(ember._ops, "binary") and hasattr(ember._ops.binary, "Mul") else None
    with profile() as prof:
        pass
    _work()
    assert len(prof.events()) == 0
    assert ember.autograd.function.Function.apply is apply
    if mul is not None:
        assert ember._ops.binary.Mul.apply is mul
    assert ember.autograd.engine._call_node.__name__ == "_call_node"


def test_record_function_nesting_matches_torch():
    def run(lib):
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
            with lib.profiler.record_function("outer"):
                with lib.profiler.record_function("inner"):
                    lib.ones(2) + 1
                with lib.profiler.record_function("inner"):
                    pass
        events = {e.name: e for e in prof.events() if e.name in ("outer", "inner")}
        outer = events["outer"]
        inner = [c for c in outer.cpu_children if c.name == "inner"]
        return (len(inner), outer.cpu_parent is None, inner[0].cpu_parent is outer,
                outer.cpu_time_total >= sum(c.cpu_time_total for c in outer.cpu_children),
                {e.key: e.count for e in prof.key_averages() if e.key in ("outer", "inner")})
    assert run(ember) == run(torch)


def test_record_function_decorator_and_no_profiler():
    @record_function("decorated")
    def f(x):
        return x * 2

    assert f(ember.ones(2)).tolist() == [2.0, 2.0]  # no profiler: a no-op
    with profile() as prof:
        f(ember.ones(2))
        f(ember.ones(2))
    (dec,) = [e for e in prof.key_averages() if e.key == "decorated"]
    assert dec.count == 2
    mul = [e for e in prof.events() if e.name == "Mul"]
    assert len(mul) == 2 and all(e.cpu_parent.name == "decorated" for e in mul)


def test_backward_ops_nest_under_their_node():
    with profile() as prof:
        a = ember.ones(3, requires_grad=True)
        (a.exp() * a).sum().backward()
    nodes = [e for e in prof.events() if e.name == "ExpBackward0"]
    assert len(nodes) == 1 and any(c.name == "Mul" for c in nodes[0].cpu_children)


def test_table_format_like_torch():
    with profile() as prof:
        _work()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    with torch.profiler.profile() as tprof:
        torch.ones(2) + 1
    ttable = tprof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    lines, tlines = table.splitlines(), ttable.splitlines()
    assert lines[1].split() == tlines[1].split()  # the header row
    assert len(lines) == 3 + 3 + 2 and lines[-1].startswith("Self CPU time total:")
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    rows = prof.key_averages()
    top = max(rows, key=lambda e: e.cpu_time_total).key
    assert lines[3].split()[0] == top[:52]
    assert prof.key_averages().table(sort_by="count", row_limit=1).splitlines()[3].split()[-1] == "4"


def test_record_shapes_and_memory():
    with profile(record_shapes=True, profile_memory=True) as prof:
        x = ember.ones(2, 3)
        x + x
        x.sum()
    rows = {(e.key, str(e.input_shapes)): e for e in prof.key_averages(group_by_input_shape=True)}
    assert ("Add", "[[2, 3], [2, 3]]") in rows
    assert rows[("Add", "[[2, 3], [2, 3]]")].cpu_memory_usage == 2 * 3 * 4
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in table and "CPU Mem" in table


def test_chrome_trace(tmp_path):
    with profile() as prof:
        with record_function("block"):
            _work()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == len(prof.events())
    for e in events:
        assert e["ph"] == "X" and {"name", "ts", "dur", "pid", "tid"} <= set(e)
    block = next(e for e in events if e["name"] == "block")
    assert all(block["ts"] <= e["ts"] and e["ts"] + e["dur"] <= block["ts"] + block["dur"] + 1e-3
               for e in events if e["name"] != "block")


def test_schedule_matches_torch():
    for args in [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=1, active=1, repeat=2, skip_first=1)]:
        ours, theirs = schedule(**args), torch.profiler.schedule(**args)
        assert [ours(i).name for i in range(12)] == [theirs(i).name for i in range(12)]
    assert ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"


def test_schedule_steps_and_on_trace_ready_match_torch():
    def run(lib):
        traces = []

        def ready(p):
            traces.append(sorted((e.key, e.count) for e in p.key_averages() if e.key in ("work", "ProfilerStep*")))
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                  on_trace_ready=ready) as p:
            for _ in range(10):
                with lib.profiler.record_function("work"):
                    lib.ones(2) + 1
                p.step()
        return traces
    assert run(ember) == run(torch)


def test_autograd_profiler_alias_and_errors():
    with ember.autograd.profiler.profile() as prof:
        with ember.autograd.profiler.record_function("r"):
            ember.ones(2) * 3
    assert [e.key for e in prof.key_averages()] == ["r", "Mul"]
    assert "Self CPU time total" in prof.table()
    with pytest.raises(RuntimeError, match="already enabled"):
        with profile():
            with profile():
                pass
    with pytest.raises(NotImplementedError, match="tensorboard"):
        ember.profiler.tensorboard_trace_handler("/tmp/x")
    assert ProfilerActivity.CPU in ember.profiler.supported_activities()
