import pytest

from ember._kernels import compiled, elementwise, parallel, reduction


@pytest.fixture
def threads():
    """Three intra-op threads (uneven chunks) whatever the machine, restored afterwards."""
    old = parallel._set
    parallel.set_num_threads(3)
    yield 3
    parallel._set = old


@pytest.fixture
def small(monkeypatch, threads):
    """Thresholds lowered so that small arrays take the threaded paths; counts the parallel calls made."""
    calls = []

    def spy(fn, items):
        calls.append(len(items))
        return parallel.parallel_map(fn, items)
    for mod in (elementwise, reduction):
        monkeypatch.setattr(mod, "MIN_SIZE", 16)
        monkeypatch.setattr(mod, "_ALIGN", 8)
        monkeypatch.setattr(mod, "_GRAIN", 8)
        monkeypatch.setattr(mod, "parallel_map", spy)
    return calls


def spy_loops(monkeypatch):
    """The names of the loops that ``compiled.kernel`` hands out from now on."""
    names, kernel = [], compiled.kernel

    def spy(name, size):
        fn = kernel(name, size)
        if fn is not None:
            names.append(name)
        return fn
    monkeypatch.setattr(compiled, "kernel", spy)
    return names
