"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers, decorators, nesting, per thread."""
import threading

import pytest
import torch

import ember

LIBS = [pytest.param(ember, id="ember"), pytest.param(torch, id="torch")]


@pytest.mark.parametrize("m", LIBS)
def test_context_managers_and_nesting(m):
    a = m.ones(2, requires_grad=True)
    seen = []
    with m.no_grad():
        seen.append(((a * 2).requires_grad, m.is_grad_enabled()))
        with m.enable_grad():
            seen.append(((a * 2).requires_grad, m.is_grad_enabled()))
            with m.set_grad_enabled(False):
                seen.append(((a * 2).requires_grad, m.is_grad_enabled()))
            seen.append(m.is_grad_enabled())
        seen.append(m.is_grad_enabled())
    seen.append(((a * 2).requires_grad, m.is_grad_enabled()))
    assert seen == [(False, False), (True, True), (False, False), True, False, (True, True)]


@pytest.mark.parametrize("m", LIBS)
def test_mode_restored_after_exception(m):
    with pytest.raises(ValueError):
        with m.no_grad():
            raise ValueError
    assert m.is_grad_enabled()


@pytest.mark.parametrize("m", LIBS)
def test_decorators_with_and_without_parentheses(m):
    @m.no_grad
    def bare():
        return m.is_grad_enabled()

    @m.no_grad()
    def called():
        return m.is_grad_enabled()

    @m.enable_grad
    def enabled():
        return m.is_grad_enabled()

    @m.set_grad_enabled(False)
    def disabled():
        return m.is_grad_enabled()

    @m.inference_mode
    def infer():
        return m.is_grad_enabled(), m.is_inference_mode_enabled()

    @m.inference_mode(False)
    def no_infer():
        return m.is_grad_enabled(), m.is_inference_mode_enabled()

    assert bare.__name__ == "bare"
    assert (bare(), called(), disabled(), m.is_grad_enabled()) == (False, False, False, True)
    with m.no_grad():
        assert enabled() is True
        assert no_infer() == (True, False)
    assert infer() == (False, True)
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


@pytest.mark.parametrize("m", LIBS)
def test_generator_functions(m):
    @m.no_grad()
    def gen():
        for _ in range(2):
            got = yield m.is_grad_enabled()
            assert got == "x"
        return "done"

    g = gen()
    outside = []
    assert next(g) is False
    outside.append(m.is_grad_enabled())  # the caller's code between steps runs in its own mode
    assert g.send("x") is False
    with pytest.raises(StopIteration) as stop:
        g.send("x")
    assert stop.value.value == "done" and outside == [True]


@pytest.mark.parametrize("m", LIBS)
def test_set_grad_enabled_as_function(m):
    m.set_grad_enabled(False)
    assert not m.is_grad_enabled()
    m.set_grad_enabled(True)
    assert m.is_grad_enabled()
    with m.set_grad_enabled(False):
        assert not m.is_grad_enabled()
    assert m.is_grad_enabled()
    with pytest.raises(TypeError):
        m.set_grad_enabled()


@pytest.mark.parametrize("m", LIBS)
def test_inference_mode(m):
    a = m.ones(2, requires_grad=True)
    with m.inference_mode():
        y = a * 2
        assert not m.is_grad_enabled() and m.is_inference_mode_enabled()
        with m.inference_mode(False):
            assert m.is_grad_enabled() and not m.is_inference_mode_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


def test_backward_inside_no_grad_still_computes_gradients():
    def run(m):
        a = m.ones(2, requires_grad=True)
        y = (a * a).sum()
        with m.no_grad():
            y.backward()
        return a.grad.tolist()
    assert run(ember) == run(torch)


@pytest.mark.parametrize("m", LIBS)
def test_grad_mode_is_per_thread(m):
    """A thread's switch does not reach another thread, and a new thread starts with gradients enabled."""
    x = m.ones(2, requires_grad=True)
    inside, resume, seen = threading.Event(), threading.Event(), {}

    def other():
        with m.no_grad():
            inside.set()
            resume.wait()
            seen["other"] = m.is_grad_enabled()

    t = threading.Thread(target=other)
    t.start()
    inside.wait()
    seen["main"], seen["main_records"] = m.is_grad_enabled(), (x * 2).requires_grad
    with m.no_grad():
        started = {}
        t2 = threading.Thread(target=lambda: started.setdefault("new", m.is_grad_enabled()))
        t2.start()
        t2.join()
    resume.set()
    t.join()
    assert seen == {"other": False, "main": True, "main_records": True} and started == {"new": True}


def test_intra_op_threads_run_in_the_callers_mode():
    from ember._kernels import parallel_map
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        with ember.no_grad():
            assert parallel_map(lambda i: ember.is_grad_enabled(), range(8)) == [False] * 8
        assert parallel_map(lambda i: ember.is_grad_enabled(), range(8)) == [True] * 8
    finally:
        ember.set_num_threads(before)
