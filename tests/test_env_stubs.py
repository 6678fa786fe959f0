"""Environment modules and stubs that boilerplate touches (ember.cuda memory queries, version, cpu, jit, amp
decorators, distributed, multiprocessing, DataParallel, nn helpers), compared with torch's CPU build."""
import sys
import warnings

import numpy as np
import pytest
import torch

import ember

no_cuda = pytest.mark.skipif(ember.cuda.is_available(), reason="compares with torch's CPU-only behaviour")


def raises_like(fe, ft):
    with pytest.raises(Exception) as want:
        ft()
    with pytest.raises(want.type):
        fe()


@no_cuda
@pytest.mark.parametrize("name", ["empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
                                  "max_memory_reserved", "is_bf16_supported", "reset_peak_memory_stats",
                                  "synchronize", "get_device_name"])
def test_cuda_queries_without_cuda(name):
    try:
        want = getattr(torch.cuda, name)()
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(ember.cuda, name)()
    else:
        assert getattr(ember.cuda, name)() == want


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CUDA")
def test_cuda_memory_queries():
    before = ember.cuda.memory_allocated()
    x = ember.zeros(1 << 20, device="cuda")
    assert ember.cuda.memory_allocated() >= before + x.nbytes
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del x
    ember.cuda.empty_cache()
    ember.cuda.reset_peak_memory_stats()
    ember.cuda.synchronize()
    assert isinstance(ember.cuda.get_device_name(), str) and isinstance(ember.cuda.is_bf16_supported(), bool)


def test_version():
    import ember.version
    assert ember.version.__version__ == ember.__version__
    if not ember.cuda.is_available():
        assert ember.version.cuda is torch.version.cuda is None


def test_interop_threads(monkeypatch):
    from ember import _interop
    monkeypatch.setattr(_interop, "_interop", None)
    assert ember.get_num_interop_threads() >= 1
    for bad in (0, 2.0):
        raises_like(lambda: ember.set_num_interop_threads(bad), lambda: torch.set_num_interop_threads(bad))
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        ember.set_num_interop_threads(2)


def test_cpu_module():
    for name in ("is_available", "device_count", "current_device", "synchronize"):
        assert getattr(ember.cpu, name)() == getattr(torch.cpu, name)()
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ac = ember.cpu.amp.autocast()
    assert isinstance(ac, ember.amp.autocast) and ac.fast_dtype is ember.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.cpu.amp.autocast():
            y = ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3))
    assert y.dtype is ember.bfloat16


def test_autocast_dtype_getters():
    for name in ("get_autocast_cpu_dtype", "get_autocast_gpu_dtype"):
        with pytest.warns(DeprecationWarning):
            got = getattr(ember, name)()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert got.name == str(getattr(torch, name)())[6:]


def _autocast_function(m):
    class Mul(m.autograd.Function):
        @staticmethod
        @m.amp.custom_fwd(device_type="cpu", cast_inputs=m.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.inside = m.is_autocast_enabled("cpu")
            return a.mm(b)

        @staticmethod
        @m.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)
    return Mul


@pytest.mark.parametrize("cast", [True, False])
def test_custom_fwd_bwd(cast):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    outs = []
    for m in (ember, torch):
        fn = _autocast_function(m)
        if not cast:
            fn.forward = staticmethod(m.amp.custom_fwd(fn.forward.__wrapped__, device_type="cpu"))
        a = m.tensor(a_np, dtype=m.bfloat16, requires_grad=True)
        b = m.tensor(b_np, dtype=m.float32, requires_grad=True)
        with m.autocast("cpu"):
            y = fn.apply(a, b)
        y.float().sum().backward()
        outs.append((str(y.dtype)[6:], str(a.grad.dtype)[6:], y.float().detach().numpy(), a.grad.float().numpy(),
                     b.grad.numpy()))
    assert outs[0][:2] == outs[1][:2]
    tol = 1e-6 if cast else 2e-2  # cast: float32 throughout; else the product runs in bfloat16
    for e, t in zip(outs[0][2:], outs[1][2:]):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)
    with pytest.raises(TypeError):
        ember.amp.custom_fwd(lambda x: x)


def test_cuda_amp_custom_fwd_is_deprecated():
    with pytest.warns(FutureWarning):
        f = ember.cuda.amp.custom_fwd(lambda ctx, x: x)
    assert callable(f)


def test_jit():
    def f(x):
        return x + 1
    m = ember.nn.Linear(2, 2)
    with pytest.warns(DeprecationWarning):
        assert ember.jit.script(f) is f and ember.jit.script(m) is m
    with pytest.warns(DeprecationWarning):
        assert ember.jit.trace(f, ember.ones(1)) is f
    assert ember.jit.ignore(f) is f and ember.jit.ignore()(f) is f and ember.jit.unused(f) is f
    assert ember.jit.export(f) is f and ember.jit.annotate(int, 3) == torch.jit.annotate(int, 3)
    assert ember.jit.is_scripting() == torch.jit.is_scripting() is False
    assert ember.jit.is_tracing() == torch.jit.is_tracing() is False
    assert ember.jit.Final is torch.jit.Final
    raises_like(lambda: ember.jit.ignore(3), lambda: torch.jit.ignore(3))
    with pytest.warns(FutureWarning):
        ember.jit.ignore(drop=True)


def test_nn_modules_utils_and_common_types():
    from ember.nn.modules import utils as eu
    from torch.nn.modules import utils as tu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4]):
            assert getattr(eu, name)(v) == getattr(tu, name)(v)
        assert getattr(eu, name).__name__ == name
    assert eu._ntuple(5)(1) == tu._ntuple(5)(1) and eu._reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    sd_e, sd_t = {"module.w": 1, "b": 2}, {"module.w": 1, "b": 2}
    eu.consume_prefix_in_state_dict_if_present(sd_e, "module.")
    tu.consume_prefix_in_state_dict_if_present(sd_t, "module.")
    assert sd_e == sd_t
    from ember.nn import common_types
    assert common_types._size_2_t == (int | tuple[int, int])


def test_removable_handle():
    from collections import OrderedDict

    import torch.utils.hooks
    from ember.utils.hooks import RemovableHandle
    raises_like(lambda: RemovableHandle({}), lambda: torch.utils.hooks.RemovableHandle({}))  # a dict has no weakref
    hooks = OrderedDict()
    h = RemovableHandle(hooks)
    hooks[h.id] = print
    h.remove()
    assert hooks == {}
    handle = ember.nn.Linear(2, 2).register_forward_hook(lambda *a: None)
    assert isinstance(handle, RemovableHandle)


def test_distributed():
    import ember.distributed as dist
    assert dist.is_available() is False and dist.is_initialized() is False


def test_multiprocessing_reexports():
    import multiprocessing

    import ember.multiprocessing as mp
    for name in ("get_context", "set_start_method", "Process", "Queue", "cpu_count"):
        assert getattr(mp, name) is getattr(multiprocessing, name)
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    raises_like(lambda: mp.set_sharing_strategy("nope"), lambda: torch.multiprocessing.set_sharing_strategy("nope"))


def test_spawn():
    import ember.multiprocessing as mp
    mp.spawn(sys.exit, nprocs=1, start_method="fork")  # sys.exit(0): a clean exit
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with exit code 1"):
        mp.spawn(sys.exit, nprocs=2, start_method="fork")  # process 1 runs sys.exit(1)
    with pytest.raises(mp.ProcessRaisedException, match="ZeroDivisionError"):
        mp.spawn(divmod, args=(0,), nprocs=1, start_method="fork")
    ctx = mp.spawn(sys.exit, nprocs=1, join=False, start_method="fork")
    while not ctx.join():
        pass


@pytest.mark.skipif(ember.cuda.is_available(), reason="compares with torch's CPU-only wrapper")
def test_data_parallel_on_cpu():
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    em = ember.nn.Linear(3, 2)
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    edp, tdp = ember.nn.DataParallel(em), torch.nn.DataParallel(tm)
    assert list(edp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert edp.module is em and edp.device_ids == tdp.device_ids == []
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(edp(input=ember.tensor(x)).detach().numpy(), tdp(input=torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)  # float32 sums in another order
    assert repr(edp) == repr(tdp)
    assert ember.nn.parallel.DataParallel is ember.nn.DataParallel
