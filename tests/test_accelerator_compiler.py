"""ember.accelerator and ember.compiler against torch's CPU build (torch.accelerator with no accelerator,
torch.compiler's decorators and switches)."""
import inspect

import pytest
import torch

import ember

no_cuda = pytest.mark.skipif(ember.cuda.is_available(), reason="compares with torch's CPU-only behaviour")
needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CUDA")


def same_outcome(fe, ft):
    """fe and ft return equal values, or raise the same exception type with the same message."""
    try:
        want = ft()
    except Exception as e:
        with pytest.raises(type(e)) as got:
            fe()
        assert str(got.value) == str(e)
    else:
        assert fe() == want


def parameters(fn):
    """(name, kind, default) of each parameter: the signature without annotations."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_accelerator_names_and_signatures_match_torch():
    assert ember.accelerator.__name__ == "ember.accelerator"
    for name in ember.accelerator.__all__:
        assert parameters(getattr(ember.accelerator, name)) == parameters(getattr(torch.accelerator, name)), name


@no_cuda
def test_queries_without_an_accelerator():
    a, t = ember.accelerator, torch.accelerator
    assert a.is_available() is t.is_available() is False
    assert a.current_accelerator() is t.current_accelerator() is None
    assert a.current_accelerator(check_available=True) is None
    assert a.device_count() == t.device_count() == 0


@no_cuda
@pytest.mark.parametrize("name, args", [
    ("current_device_index", ()), ("synchronize", ()), ("synchronize", (0,)), ("synchronize", ("cuda",)),
    ("set_device_index", (0,)), ("set_device_index", ("cuda:0",)), ("set_device_index", (-1,)),
    ("empty_cache", ()), ("memory_allocated", ()), ("memory_allocated", (0,)), ("memory_allocated", ("cuda:0",)),
    ("max_memory_allocated", ()), ("memory_reserved", ()), ("max_memory_reserved", ()),
    ("reset_peak_memory_stats", ()), ("get_memory_info", ("cuda:0",)), ("get_memory_info", (0,)),
])
def test_calls_without_an_accelerator_fail_as_torch(name, args):
    same_outcome(lambda: getattr(ember.accelerator, name)(*args), lambda: getattr(torch.accelerator, name)(*args))


@no_cuda
def test_device_index_context_without_an_accelerator():
    for m in (torch.accelerator, ember.accelerator):
        with m.device_index(None):
            pass
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            with m.device_index(0):
                pass
        with pytest.warns(FutureWarning, match="Use `current_device_index` instead"), pytest.raises(RuntimeError):
            m.current_device_idx()


@needs_cuda
def test_accelerator_is_cuda():
    a = ember.accelerator
    assert a.is_available() and a.current_accelerator() == ember.device("cuda")
    assert a.device_count() == ember.cuda.device_count() >= 1
    assert a.current_device_index() == ember.cuda.current_device()
    x = ember.ones(1 << 20, device=a.current_accelerator())
    assert a.memory_allocated() >= x.nbytes and a.memory_allocated("cuda:0") == a.memory_allocated(0)
    free, total = a.get_memory_info()
    assert 0 < free <= total
    with a.device_index(0):
        a.synchronize()
    a.set_device_index(0)
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        a.synchronize("cpu")
    with pytest.raises(ValueError, match="Expected a torch.device with a specified index"):
        a.set_device_index("cuda")


def test_compiler_names_and_signatures_match_torch():
    for name in ember.compiler.__all__:
        e, t = getattr(ember.compiler, name), getattr(torch.compiler, name)
        if name != "compile":  # torch's is (*args, **kwargs), ember's is torch.compile's
            assert parameters(e) == parameters(t), name


def test_compiler_queries_and_no_ops():
    for m in (torch.compiler, ember.compiler):
        assert m.is_compiling() is m.is_dynamo_compiling() is m.is_exporting() is False
        assert m.reset() is None and m.cudagraph_mark_step_begin() is None


def test_compiler_decorators_keep_the_function():
    def f(x):
        return x * 2

    for dec in (ember.compiler.disable, ember.compiler.disable(), ember.compiler.disable(recursive=False),
                ember.compiler.disable(reason="slow"), ember.compiler.allow_in_graph,
                ember.compiler.assume_constant_result, ember.compiler.set_stance("force_eager")):
        g = dec(f)
        assert g(3) == torch.compiler.disable(f)(3) == 6
    model = ember.nn.Linear(2, 2)
    assert ember.compiler.disable(model) is model
    assert ember.compiler.allow_in_graph((f, f)) == torch.compiler.allow_in_graph((f, f)) == [f, f]
    for m in (torch.compiler, ember.compiler):
        with pytest.raises(AssertionError, match="fn must be callable"):
            m.disable(3)
        with pytest.raises(AssertionError, match="fn must be callable"):
            m.disable(recursive=False)(3)
        with pytest.raises(AssertionError, match="allow_in_graph expects a callable"):
            m.allow_in_graph(3)


def test_set_stance_as_call_context_and_decorator():
    for m in (torch.compiler, ember.compiler):
        m.set_stance("force_eager")
        m.set_stance("default")
        with m.set_stance("eager_on_recompile"):
            pass

        @m.set_stance("force_eager")
        def g(x):
            return x + 1
        assert g(1) == 2
        with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend set"):
            m.set_stance("force_eager", force_backend="eager")


def test_compiler_compile_is_ember_compile():
    model = ember.nn.Linear(2, 2)
    assert ember.compiler.compile(model)._orig_mod is model
