"""torch's top-level switches that training scripts set: ember.backends, float32 matmul precision, deterministic
algorithms and compile, each against torch's behaviour."""
import pytest
import torch

import ember


def test_backend_flags_are_settable_and_read_back():
    cudnn = ember.backends.cudnn
    before = (cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32)
    assert before == (torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic,
                      torch.backends.cudnn.enabled, torch.backends.cudnn.allow_tf32)
    try:
        cudnn.benchmark, cudnn.deterministic = True, True
        assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
    finally:
        cudnn.benchmark, cudnn.deterministic = before[:2]
    assert ember.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    ember.backends.cuda.matmul.allow_tf32 = True
    assert ember.backends.cuda.matmul.allow_tf32
    ember.backends.cuda.matmul.allow_tf32 = False
    assert not ember.backends.mps.is_available() and not ember.backends.cudnn.is_available()
    assert ember.backends.cuda.is_built() == ember.cuda.is_available()
    # the usual device pick of a training script
    device = "cuda" if ember.cuda.is_available() else "mps" if ember.backends.mps.is_available() else "cpu"
    assert ember.ones(2, device=device).device.type == device


def test_float32_matmul_precision():
    for m in (torch, ember):
        assert m.get_float32_matmul_precision() == "highest"
        m.set_float32_matmul_precision("high")
        assert m.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            m.set_float32_matmul_precision("fastest")
        assert m.get_float32_matmul_precision() == "high"
        m.set_float32_matmul_precision("highest")


def test_deterministic_algorithms():
    for m in (torch, ember):
        assert not m.are_deterministic_algorithms_enabled()
        m.use_deterministic_algorithms(True, warn_only=True)
        assert m.are_deterministic_algorithms_enabled() and m.is_deterministic_algorithms_warn_only_enabled()
        m.use_deterministic_algorithms(False)
        assert not m.are_deterministic_algorithms_enabled() and not m.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError, match="must be bool"):
            m.use_deterministic_algorithms("yes")


def test_compile_returns_the_same_computation():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU())
    x = ember.randn(5, 3)
    compiled = ember.compile(model, mode="max-autotune")
    assert ember.equal(compiled(x), model(x))
    # as torch's OptimizedModule: the module under ``_orig_mod``, its keys prefixed, its attributes read through
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    tc = torch.compile(tm)
    assert type(compiled).__name__ == type(tc).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model and isinstance(compiled, ember.nn.Module)
    assert list(compiled.state_dict()) == list(tc.state_dict())
    assert [n for n, _ in compiled.named_modules()] == [n for n, _ in tc.named_modules()]
    model.extra = tm.extra = 7
    assert compiled.extra == tc.extra == 7
    compiled.eval()
    assert not model.training
    with pytest.raises(AttributeError):
        compiled.missing

    @ember.compile
    def f(a):
        return (a * 2).sum()

    @ember.compile(fullgraph=True, dynamic=False)
    def g(a):
        return a - 1
    assert f(ember.ones(3)).item() == 6.0 and ember.equal(g(ember.ones(2)), ember.zeros(2))
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(model, mode="default", options={"trace.enabled": True})
    with pytest.raises(TypeError, match="callable"):
        ember.compile(3)


def test_module_compile_is_in_place_and_changes_nothing():
    model = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    before = model(x)
    assert model.compile(mode="reduce-overhead") is None  # as torch's: compiled in place
    assert ember.equal(model(x), before)
