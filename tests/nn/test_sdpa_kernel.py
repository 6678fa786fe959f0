"""ember.nn.attention (SDPBackend, sdpa_kernel) and the attention, matmul and linear-algebra switches of
ember.backends.cuda, against torch's CPU build."""
import doctest
import warnings

import pytest
import torch
import torch.nn.attention as tattn

import ember
import ember.nn.attention as eattn

ecuda, tcuda = ember.backends.cuda, torch.backends.cuda
QUERIES = ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled")


def flags(m):
    return tuple(getattr(m, q)() for q in QUERIES)


@pytest.fixture(autouse=True)
def restore_switches():
    matmul_state = dict(ecuda._matmul_state)
    yield
    ecuda._matmul_state.update(matmul_state)
    for m in (ecuda, tcuda):
        for name in ("flash", "mem_efficient", "math", "cudnn"):
            getattr(m, f"enable_{name}_sdp")(True)
        m.allow_fp16_bf16_reduction_math_sdp(False)
    ember.set_float32_matmul_precision("highest")


def test_sdp_backend_members():
    assert [(b.name, int(b)) for b in eattn.SDPBackend] == [(b.name, int(b)) for b in tattn.SDPBackend.__members__
                                                             .values()]
    assert repr(eattn.SDPBackend.MATH) == repr(tattn.SDPBackend.MATH) == "<SDPBackend.MATH: 0>"
    assert str(eattn.SDPBackend.FLASH_ATTENTION) == str(tattn.SDPBackend.FLASH_ATTENTION)
    assert (eattn.SDPBackend.MATH == 0) == (tattn.SDPBackend.MATH == 0)


@pytest.mark.parametrize("backends", [
    lambda m: m.SDPBackend.MATH,
    lambda m: [m.SDPBackend.FLASH_ATTENTION, m.SDPBackend.EFFICIENT_ATTENTION],
    lambda m: [m.SDPBackend.CUDNN_ATTENTION, m.SDPBackend.MATH, m.SDPBackend.MATH],
    lambda m: [],
])
@pytest.mark.parametrize("set_priority", [False, True])
def test_sdpa_kernel_sets_and_restores(backends, set_priority):
    assert flags(ecuda) == flags(tcuda) == (True,) * 4
    with eattn.sdpa_kernel(backends(eattn), set_priority) as e, tattn.sdpa_kernel(backends(tattn), set_priority) as t:
        assert e == t == {}
        assert flags(ecuda) == flags(tcuda)
        assert not all(flags(ecuda))
    assert flags(ecuda) == flags(tcuda) == (True,) * 4


def test_sdpa_kernel_error_backend_disables_all():
    # (not with set_priority: torch then files ERROR's -1 as a priority and turns flash attention back on)
    with eattn.sdpa_kernel([eattn.SDPBackend.ERROR]), tattn.sdpa_kernel([tattn.SDPBackend.ERROR]):
        assert flags(ecuda) == flags(tcuda) == (False,) * 4


def test_sdpa_kernel_restores_after_an_error_and_nests():
    with pytest.raises(KeyError):
        with eattn.sdpa_kernel(eattn.SDPBackend.MATH):
            raise KeyError
    assert all(flags(ecuda))
    ecuda.enable_cudnn_sdp(False)
    with eattn.sdpa_kernel([eattn.SDPBackend.FLASH_ATTENTION]):
        with eattn.sdpa_kernel(eattn.SDPBackend.MATH):
            assert flags(ecuda) == (False, False, True, False)
        assert flags(ecuda) == (True, False, False, False)
    assert flags(ecuda) == (True, True, True, False)


@pytest.mark.parametrize("bad", [lambda m: (m.SDPBackend.MATH,), lambda m: "math", lambda m: None])
def test_sdpa_kernel_rejects_what_torch_rejects(bad):
    for m in (tattn, eattn):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a list"):
            with m.sdpa_kernel(bad(m)):
                pass


def test_sdpa_runs_the_same_under_any_backend_choice():
    q, k, v = (ember.randn(2, 3, 4, 8) for _ in range(3))
    want = ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    with eattn.sdpa_kernel([eattn.SDPBackend.FLASH_ATTENTION]):
        got = ember.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert ember.equal(got, want)


def test_enable_sdp_switches():
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        for m in (ecuda, tcuda):
            getattr(m, f"enable_{name}_sdp")(False)
            assert not getattr(m, f"{name}_sdp_enabled")()
            with pytest.raises(RuntimeError, match="expects a bool"):
                getattr(m, f"enable_{name}_sdp")(1)
        assert flags(ecuda) == flags(tcuda)
    for m in (ecuda, tcuda):
        assert m.fp16_bf16_reduction_math_sdp_allowed() is False
        m.allow_fp16_bf16_reduction_math_sdp(True)
        assert m.fp16_bf16_reduction_math_sdp_allowed() is True
    assert ecuda.is_flash_attention_available() == tcuda.is_flash_attention_available() is False


def test_deprecated_sdp_kernel():
    for m in (ecuda, tcuda):
        with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
            with m.sdp_kernel(enable_flash=False, enable_cudnn=False) as ctx:
                assert ctx == {}
                assert flags(m) == (False, True, True, False)
        assert flags(m) == (True,) * 4


def test_matmul_switches_match_torch():
    names = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction_split_k",
             "allow_bf16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction_split_k",
             "allow_fp16_accumulation", "fp32_precision")
    assert [getattr(ecuda.matmul, n) for n in names] == [getattr(tcuda.matmul, n) for n in names]
    for value in ((False, False), [True], False):
        for m in (ecuda, tcuda):
            m.matmul.allow_fp16_reduced_precision_reduction = value
        assert [getattr(ecuda.matmul, n) for n in names[1:3]] == [getattr(tcuda.matmul, n) for n in names[1:3]]
    for bad, message in (((), "at least one"), ((True, False, True), "at most two"), ([1], "expects a bool for"),
                         (1, "a bool or a tuple/list")):
        for m in (ecuda, tcuda):
            with pytest.raises(TypeError, match=message):
                m.matmul.allow_bf16_reduced_precision_reduction = bad
    for m in (ecuda, tcuda):
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            m.matmul.foo
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            m.matmul.foo = 1
    for m in (ecuda, tcuda):
        m.matmul.allow_fp16_reduced_precision_reduction = True
        m.matmul.allow_bf16_reduced_precision_reduction = True


def test_allow_tf32_is_the_float32_matmul_precision():
    ecuda.matmul.allow_tf32 = True
    assert ember.get_float32_matmul_precision() == "high" and ecuda.matmul.fp32_precision == "tf32"
    ecuda.matmul.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest" and ecuda.matmul.fp32_precision == "ieee"
    ember.set_float32_matmul_precision("medium")
    assert ecuda.matmul.allow_tf32
    ecuda.matmul.fp32_precision = "ieee"
    assert ember.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="Unknown precision"):
        ecuda.matmul.fp32_precision = "x"
    with pytest.raises(RuntimeError, match="expects a bool"):
        ecuda.matmul.allow_tf32 = 1


def test_preferred_libraries_as_torch_cpu():
    for m in (ecuda, tcuda):
        assert m.preferred_linalg_library().name == "Default"
        assert m.preferred_linalg_library("default").name == "Default"
        with pytest.raises(RuntimeError, match="Unknown input value. Choose from: default, cusolver, magma."):
            m.preferred_linalg_library("x")
        with pytest.raises(RuntimeError, match="Unknown input value type"):
            m.preferred_linalg_library(3)
        with pytest.raises(RuntimeError, match="compiled with MAGMA"):
            m.preferred_linalg_library("magma")
        assert m.preferred_blas_library().name == "Cublas"
        with pytest.raises(RuntimeError, match="compiled with cuBLASLt"):
            m.preferred_blas_library("cublaslt")
        with pytest.raises(RuntimeError, match="Unknown input value"):
            m.preferred_blas_library("x")
    if not ember.cuda.is_available():
        for m in (ecuda, tcuda):
            with pytest.raises(RuntimeError, match="compiled with cuSOLVER"):
                m.preferred_linalg_library("cusolver")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ecuda.preferred_blas_library("default").name == tcuda.preferred_blas_library("default").name


def test_openmp_and_backends_namespace():
    assert ember.backends.openmp.is_available() is False  # ember's threads are its own pool
    assert "openmp" in ember.backends.__all__
    assert ember.nn.attention is eattn


def test_docstring_example():
    result = doctest.testmod(eattn, globs={"ember": ember}, verbose=False)
    assert result.attempted >= 1 and result.failed == 0
