"""The setup boilerplate of training and inference repositories (compiler switches and configs, backend flags,
benchmark timers, FLOP counters, environment reports, weak tensor maps, ``__torch_function__`` helpers) against
torch."""
import gc
import importlib
import typing
import warnings

import numpy as np
import pytest
import torch

import ember


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


@pytest.fixture
def configs():
    """Both libraries' compiler configs, restored after the test."""
    mods = [_mod(lib, n) for lib in (ember, torch) for n in ("_dynamo.config", "_inductor.config")]
    saved = [m.get_config_copy() for m in mods]
    yield
    with warnings.catch_warnings():  # torch warns of its deprecated settings as they are loaded back
        warnings.simplefilter("ignore", FutureWarning)
        for m, s in zip(mods, saved):
            m.load_config(s)


_DYNAMO_KEYS = ["suppress_errors", "cache_size_limit", "accumulated_cache_size_limit", "recompile_limit",
                "capture_scalar_outputs", "capture_dynamic_output_shape_ops", "optimize_ddp", "verbose",
                "automatic_dynamic_shapes", "assume_static_by_default",
                "specialize_int", "compiled_autograd", "error_on_recompile", "allow_rnn", "trace_numpy"]
_INDUCTOR_KEYS = ["coordinate_descent_tuning", "coordinate_descent_check_all_directions", "fx_graph_cache",
                  "epilogue_fusion", "max_autotune", "max_autotune_gemm_backends", "freezing", "fallback_random",
                  "debug", "cpp_wrapper", "aggressive_fusion", "conv_1x1_as_mm", "shape_padding", "triton.cudagraphs",
                  "triton.unique_kernel_names", "triton.cudagraph_trees", "triton.max_tiles", "trace.enabled",
                  "trace.graph_diagram", "cpp.enable_kernel_profile", "cpp.threads"]


def _get(mod, dotted):
    for part in dotted.split("."):
        mod = getattr(mod, part)
    return mod


@pytest.mark.parametrize("name,keys", [("_dynamo.config", _DYNAMO_KEYS), ("_inductor.config", _INDUCTOR_KEYS)])
def test_config_defaults_match(name, keys):
    e, t = _mod(ember, name), _mod(torch, name)
    assert {k: _get(e, k) for k in keys} == {k: _get(t, k) for k in keys}


def test_gpt_fast_and_nanogpt_setup_lines(configs):
    """The compiler lines at the top of gpt-fast / nanoGPT / HF training scripts keep what they assign."""
    for lib in (ember, torch):
        lib._inductor.config.coordinate_descent_tuning = True
        lib._inductor.config.triton.unique_kernel_names = True
        lib._inductor.config.fx_graph_cache = True
        lib._dynamo.config.suppress_errors = True
        lib._dynamo.config.cache_size_limit = 64
        lib._dynamo.config.capture_scalar_outputs = True
    for lib in (ember, torch):
        d, i = lib._dynamo.config, lib._inductor.config
        assert (d.suppress_errors, d.cache_size_limit, d.recompile_limit, d.capture_scalar_outputs) == (True, 64, 64,
                                                                                                        True)
        assert (i.coordinate_descent_tuning, i.triton.unique_kernel_names, i.fx_graph_cache) == (True, True, True)
        assert d.get_config_copy()["recompile_limit"] == 64 and "cache_size_limit" not in d.get_config_copy()


@pytest.mark.parametrize("target", ["_dynamo.config", "_inductor.config", "_inductor.config.triton"])
def test_config_unknown_names_raise(target, configs):
    for lib in (ember, torch):
        mod = _get(lib, target)
        with pytest.raises(AttributeError, match="does_not_exist_flag does not exist"):
            mod.does_not_exist_flag = 1
        with pytest.raises(AttributeError, match="does not exist"):
            mod.does_not_exist_flag


def test_config_patch_as_context_and_decorator(configs):
    seen = []
    for lib in (ember, torch):
        cfg = lib._dynamo.config
        with cfg.patch(suppress_errors=True, cache_size_limit=16):
            seen.append((cfg.suppress_errors, cfg.recompile_limit))
        seen.append((cfg.suppress_errors, cfg.recompile_limit))

        @lib._inductor.config.patch({"triton.cudagraphs": True})
        def f():
            return lib._inductor.config.triton.cudagraphs
        seen.append((f(), lib._inductor.config.triton.cudagraphs))
        with pytest.raises(AttributeError, match="no_such_key does not exist"):
            with cfg.patch("no_such_key", 1):
                pass
        with pytest.raises(AttributeError):  # a section is no setting
            with lib._inductor.config.patch(triton={}):
                pass
    assert seen[:3] == seen[3:] == [(True, 16), (False, 8), (True, False)]


def test_dynamo_disable_forms():
    """``@disable``, ``@disable(recursive=False)`` and ``compiler.disable`` run the function eagerly; the context
    form is refused with RuntimeError, as torch's."""
    for lib in (ember, torch):
        @lib._dynamo.disable
        def f(x):
            return x * 2

        @lib.compiler.disable(recursive=False)
        def g(x):
            return x + 1

        assert f(3) == 6 and g(3) == 4
        assert lib._dynamo.disable(lambda: 5, recursive=False)() == 5
        for ctx in (lib._dynamo.disable(), lib.compiler.disable()):
            with pytest.raises(RuntimeError, match="context manager"):
                with ctx:
                    pass
        with pytest.raises(AssertionError, match="fn must be callable"):
            lib._dynamo.disable(3)


def test_dynamo_markings_and_queries():
    res = []
    for lib in (ember, torch):
        x, y, z = lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3)
        lib._dynamo.mark_dynamic(x, 0)
        lib._dynamo.mark_dynamic(x, [1])
        lib._dynamo.mark_static(y)
        lib._dynamo.maybe_mark_dynamic(z, 1)
        lib._dynamo.mark_static_address(z)
        lib._dynamo.graph_break("a reason")
        lib._dynamo.reset()
        fn = lambda t: t + 1  # noqa: E731
        assert lib._dynamo.allow_in_graph(fn) is fn
        assert lib._dynamo.allow_in_graph([fn, fn]) == [fn, fn]
        res.append((x._dynamo_dynamic_indices, y._dynamo_static_indices, z._dynamo_weak_dynamic_indices,
                    x._has_dynamo_dim_marking, z._dynamo_static_input_type, lib._dynamo.is_compiling(),
                    lib.compiler.is_compiling(), lib.compiler.is_dynamo_compiling()))
    assert res[0] == res[1] == ({0, 1}, {0, 1}, {1}, True, "unguarded", False, False, False)


def test_compiled_model_runs_eagerly_with_markings():
    """nanoGPT-style: a compiled model with a marked dynamic batch gives the eager values (torch's side runs
    uncompiled: torch.compile alone takes seconds to set up)."""
    w = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        lin = lib.nn.Linear(4, 5, bias=False)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
        model = lib.compile(lin, dynamic=True, mode="reduce-overhead") if lib is ember else lin
        xt = lib.tensor(x)
        lib._dynamo.mark_dynamic(xt, 0)
        with lib.compiler.set_stance("force_eager"):
            outs.append(model(xt).detach().numpy())
    assert list(model.state_dict()) == ["weight"] and list(ember.compile(ember.nn.Linear(2, 2)).state_dict()) == [
        "_orig_mod.weight", "_orig_mod.bias"]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6)


def test_types_in_annotations():
    for lib in (ember, torch):
        T = lib.types

        def f(x: lib.Tensor, device: T.Device = None, n: T.Number = 1, dtype: T._dtype = None,
              size: T._size = (1,)) -> T._TensorOrTensors:
            return x
        hints = typing.get_type_hints(f)
        assert hints["dtype"] is lib.dtype and T._dtype is lib.dtype and T._device is lib.device
        assert set(typing.get_args(T.Number)) == {int, float, bool}
        assert T._Number == (int, float, bool) and isinstance(2.0, T._Number)
        assert lib.device in typing.get_args(T.Device) and str in typing.get_args(T.Device)
        assert T._int is int and T._bool is bool and T._layout is lib.layout


def test_storage_names():
    for lib in (ember, torch):
        t = lib.arange(6, dtype=lib.float32)
        assert lib.UntypedStorage is lib.storage.UntypedStorage and lib.TypedStorage is lib.storage.TypedStorage
        s = t.untyped_storage()
        assert isinstance(s, lib.UntypedStorage) and s.nbytes() == 24
        assert t[2:].untyped_storage().data_ptr() == s.data_ptr()


# -- benchmark ---------------------------------------------------------------------------------------------------
def _bench(lib):
    importlib.import_module(lib.__name__ + ".utils.benchmark")
    return lib.utils.benchmark


def _timer(lib, description, sub_label="sub", num_threads=1, label="ops"):
    """A Timer whose clock advances 1 us per run of the statement: the measurements are exact."""
    box = [0]
    return _bench(lib).Timer(stmt="box[0] += 1", globals={"box": box}, timer=lambda: box[0] * 1e-6,
                                     label=label, sub_label=sub_label, description=description,
                                     num_threads=num_threads)


def _strip_address(text):
    return "\n".join(text.splitlines()[1:])


def test_benchmark_timeit_measurement():
    res = []
    for lib in (ember, torch):
        m = _timer(lib, "add").timeit(100)
        assert isinstance(m, _bench(lib).Measurement)
        res.append((m.number_per_run, m.raw_times, m.times, m.mean, m.median, m.iqr, m.title, m.description,
                    m.has_warnings, _strip_address(repr(m))))
    assert res[0] == res[1]
    assert res[0][0] == 100 and res[0][-1].splitlines()[-2:] == ["  1.00 us", "  1 measurement, 100 runs , 1 thread"]


def test_benchmark_indented_statements():
    """A statement written as an indented triple-quoted block runs, as torch's Timer dedents it."""
    stmt = """
        y = x + 1
        z = y * 2
    """
    for lib in (ember, torch):
        g = {"x": 1}
        assert _bench(lib).Timer(stmt, setup="""
            x = 2
        """, globals=g).timeit(3).number_per_run == 3


def test_benchmark_autorange_and_globals():
    res = []
    for lib in (ember, torch):
        b = _bench(lib)
        m = _timer(lib, "blocked").blocked_autorange(min_run_time=0.01)
        a = _timer(lib, "adaptive").adaptive_autorange(min_run_time=0.001, max_run_time=0.05)
        x = lib.ones(8)
        real = b.Timer("torch.add(x, x)", globals={"x": x}).timeit(5)  # `torch` is the library in the statement
        res.append((m.number_per_run, len(m.times), m.median, _strip_address(repr(m)), a.number_per_run,
                    len(a.times), a.significant_figures, real.number_per_run, len(real.raw_times)))
    assert res[0] == res[1]
    assert res[0][3].splitlines()[2].strip() == "Median: 1.00 us"


def test_benchmark_compare_table():
    res = []
    for lib in (ember, torch):
        b = _bench(lib)
        results = [_timer(lib, d, sub_label=s, num_threads=n).blocked_autorange(min_run_time=0.002)
                   for n in (1, 4) for s in ("[16, 16]", "[256]") for d in ("ember", "numpy")]
        results.append(_timer(lib, "numpy", label="other").timeit(7))
        c = b.Compare(results)
        plain = str(c)
        c.trim_significant_figures()
        c.colorize(rowwise=True)
        c.highlight_warnings()
        res.append((plain, str(c)))
        with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
            b.Compare([1.0])
    assert res[0] == res[1]
    assert "1 threads: " in res[0][0] and "Times are in microseconds (us)." in res[0][0]


def test_benchmark_merge():
    res = []
    for lib in (ember, torch):
        b = _bench(lib)
        t = _timer(lib, "d")
        merged = b.Measurement.merge([t.timeit(10), t.timeit(20)])
        res.append((len(merged), merged[0].number_per_run, len(merged[0].times)))
    assert res[0] == res[1] == (1, 1, 2)


# -- flop counter ------------------------------------------------------------------------------------------------
def _flops(lib, build, run):
    fc_cls = importlib.import_module(lib.__name__ + ".utils.flop_counter").FlopCounterMode
    lib.manual_seed(0)
    args = build(lib)
    with fc_cls(display=False) as fc:
        run(lib, *args)
    return fc.get_total_flops()


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.GELU(), lib.nn.Linear(32, 8)), lib.randn(4, 7, 16)


def _cnn(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, groups=2),
                      nn.ConvTranspose2d(8, 4, 2, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 10))
    return m, lib.randn(2, 3, 12, 12, requires_grad=True)


def _attn(lib):
    q = lib.randn(2, 4, 8, 16, requires_grad=True)
    return q, lib.randn(2, 4, 6, 16, requires_grad=True), lib.randn(2, 4, 6, 32, requires_grad=True)


_FLOP_CASES = {
    "mlp_forward": (_mlp, lambda lib, m, x: m(x)),
    "mlp_train_step": (_mlp, lambda lib, m, x: lib.nn.functional.mse_loss(m(x), lib.zeros(4, 7, 8)).backward()),
    "mlp_no_grad": (_mlp, lambda lib, m, x: lib.no_grad()(m)(x)),
    "cnn_train_step": (_cnn, lambda lib, m, x: lib.nn.functional.cross_entropy(m(x), lib.tensor([1, 2])).backward()),
    "sdpa_train_step": (_attn, lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True).sum().backward()),
    "mha_train_step": (lambda lib: (lib.nn.MultiheadAttention(16, 4, batch_first=True), lib.randn(3, 5, 16)),
                       lambda lib, m, x: m(x, x, x)[0].sum().backward()),
    "matmul_family": (lambda lib: (lib.randn(3, 4, 5, requires_grad=True), lib.randn(5, 6, requires_grad=True)),
                      lambda lib, a, b: ((a @ b).sum() + lib.bmm(a, b.expand(3, 5, 6)).sum()
                                         + lib.addmm(lib.zeros(4, 6), a[0], b).sum()
                                         + lib.baddbmm(lib.zeros(3, 4, 6), a, b.expand(3, 5, 6)).sum()).backward()),
    "einsum": (lambda lib: (lib.randn(2, 3, 4, requires_grad=True), lib.randn(4, 5, requires_grad=True),
                            lib.randn(5, 6)),
               lambda lib, a, b, c: (lib.einsum("abc,cd,de->abe", a, b, c).sum() + lib.einsum("bi,bj->bij", a[0],
                                                                                             a[1]).sum()).backward()),
}


@pytest.mark.parametrize("case", list(_FLOP_CASES))
def test_flop_counter_totals(case):
    build, run = _FLOP_CASES[case]
    e, t = _flops(ember, build, run), _flops(torch, build, run)
    assert e == t and e > 0


def test_flop_counter_nested_and_meta():
    counts = []
    for lib in (ember, torch):
        fc_cls = importlib.import_module(lib.__name__ + ".utils.flop_counter").FlopCounterMode
        lin = lib.nn.Linear(64, 128, device="meta")
        with fc_cls(display=False) as outer:
            lin(lib.empty(8, 64, device="meta"))
            with fc_cls(display=False) as inner:
                lin(lib.empty(2, 64, device="meta"))
        counts.append((outer.get_total_flops(), inner.get_total_flops(), sum(outer.get_flop_counts()["Global"].values())))
    assert counts[0] == counts[1] == (2 * 10 * 64 * 128, 2 * 2 * 64 * 128, 2 * 10 * 64 * 128)
    from ember.nn.functional.linear import Linear
    from ember.utils import flop_counter
    assert not flop_counter._saved and getattr(Linear.apply, "dispatches", None) is Linear  # nothing left patched


# -- environment, weak maps, overrides, backends -----------------------------------------------------------------
def test_collect_env():
    """The report's fields as torch's (torch's own report runs compilers and takes seconds: only its fields)."""
    ce = ember.utils.collect_env
    info = ce.get_env_info()
    text = ce.get_pretty_env_info()
    common = {"torch_version", "is_debug_build", "python_version", "python_platform", "is_cuda_available", "os"}
    assert common <= set(ce.SystemEnv._fields) & set(torch.utils.collect_env.SystemEnv._fields)
    assert info.is_cuda_available == "False" and info.is_debug_build == "False"
    for line in ("Is debug build: False", "Python platform: ", "Is CUDA available: False", "Python version: 3."):
        assert line in text


def test_weak_tensor_key_dictionary():
    for lib in (ember, torch):
        weak = lib.utils.weak
        d = weak.WeakTensorKeyDictionary()
        a, b = lib.ones(3), lib.ones(3)  # equal values, distinct keys
        d[a], d[b] = "a", "b"
        assert len(d) == 2 and d[a] == "a" and b in d and lib.ones(3) not in d
        ref = weak.WeakIdRef(a)
        assert ref() is a and hash(ref) == id(a) and ref == weak.WeakIdRef(a)
        del a
        gc.collect()
        assert len(d) == 1 and list(d.values()) == ["b"]
        del d[b]
        assert len(d) == 0
        with pytest.raises(KeyError):
            d[b]
        assert weak.WeakTensorKeyDictionary is weak.WeakIdKeyDictionary and weak.TensorWeakRef(b)() is b


class _Tracked:
    """A library's tensor-like wrapper, as in libraries that call handle_torch_function."""
    handled = []

    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.handled.append(func.__name__)
        return sum(a.value if isinstance(a, _Tracked) else a for a in args)


class _Refuses:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_overrides_protocol():
    res = []
    for lib in (ember, torch):
        o = lib.overrides

        def total(*xs):
            if o.has_torch_function(xs):
                return o.handle_torch_function(total, xs, *xs)
            return "plain"

        res.append((o.has_torch_function((lib.ones(1), 2)), o.has_torch_function_unary(_Tracked(1)),
                    o.has_torch_function_variadic(1, _Tracked(1)), o.is_tensor_like(lib.ones(1)),
                    o.is_tensor_like(_Tracked(1)), o.is_tensor_like(3.0), total(1, 2), total(_Tracked(2), 5)))
        with pytest.raises(TypeError, match="no implementation found for"):
            o.handle_torch_function(total, (_Refuses(),), _Refuses())
    assert res[0] == res[1] == (False, True, True, True, True, False, "plain", 7)


def test_backend_flags_round_trip():
    saved = [(lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic, lib.backends.cudnn.allow_tf32,
              lib.get_float32_matmul_precision()) for lib in (ember, torch)]
    try:
        res = []
        for lib in (ember, torch):
            b = lib.backends
            b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32 = True, True, False
            b.cuda.matmul.allow_tf32 = True
            first = lib.get_float32_matmul_precision()
            b.cuda.matmul.allow_tf32 = False
            res.append((b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32, first,
                        lib.get_float32_matmul_precision(), b.cuda.matmul.allow_tf32, b.mps.is_available(),
                        b.mps.is_built(), b.opt_einsum.is_available(), b.opt_einsum.enabled, b.opt_einsum.strategy,
                        b.opt_einsum.get_opt_einsum()))
            with pytest.raises(AttributeError, match="Unknown attribute"):
                b.cuda.matmul.allow_tf33 = True
        assert res[0] == res[1]
    finally:
        for lib, (bench, det, tf32, prec) in zip((ember, torch), saved):
            lib.backends.cudnn.benchmark, lib.backends.cudnn.deterministic = bench, det
            lib.backends.cudnn.allow_tf32 = tf32
            lib.set_float32_matmul_precision(prec)
