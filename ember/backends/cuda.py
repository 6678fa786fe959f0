"""``ember.backends.cuda``: CUDA's matmul, linear-algebra and attention switches, kept for compatibility.

ember's products run as CuPy's cuBLAS decides and its attention has one implementation (the math one), so the switches
are validated and read back as torch's, and change no computation.
"""
import contextlib
import enum
import warnings

from .. import _settings
from .._device import cuda_available

__all__ = ["is_built", "matmul", "preferred_linalg_library", "preferred_blas_library", "flash_sdp_enabled",
           "enable_flash_sdp", "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "allow_fp16_bf16_reduction_math_sdp",
           "fp16_bf16_reduction_math_sdp_allowed", "is_flash_attention_available", "sdp_kernel"]


def is_built():
    """Whether ember can run on CUDA here (CuPy installed and a GPU present)."""
    return cuda_available()


def _require_bool(name, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{name} expects a bool, but got {type(value).__name__}")


def _reduction_setting(name, value):
    """``(allow_reduced_precision, allow_splitk)`` from a bool or a list/tuple of one or two bools, as torch."""
    if isinstance(value, bool):
        return value, True
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")
    if not value:
        raise TypeError(f"{name} expects at least one boolean argument")
    if len(value) > 2:
        raise TypeError(f"{name} expects at most two boolean arguments")
    for which, v in zip(("allow_reduced_precision", "allow_splitk"), value):
        if not isinstance(v, bool):
            raise TypeError(f"{name} expects a bool for {which}, but got {type(v)!r}")
    return value[0], value[1] if len(value) == 2 else True


# (allow_reduced_precision, allow_splitk) of fp16 and bf16 products; fp32_precision's last explicit value
_matmul_state = {"fp16": (True, True), "bf16": (True, True), "allow_fp16_accumulation": False, "fp32": "none"}


class _Matmul:
    """``matmul.allow_tf32`` (torch's other spelling of :func:`ember.set_float32_matmul_precision`: True is 'high',
    False 'highest'), ``fp32_precision`` and the reduced-precision switches of cuBLAS."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _settings.get_float32_matmul_precision() != "highest"
        if name == "fp32_precision":
            return "tf32" if self.allow_tf32 else _matmul_state["fp32"]
        if name == "allow_fp16_accumulation":
            return _matmul_state[name]
        for kind in ("fp16", "bf16"):
            if name == f"allow_{kind}_reduced_precision_reduction":
                return _matmul_state[kind][0]
            if name == f"allow_{kind}_reduced_precision_reduction_split_k":
                return _matmul_state[kind][1]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _require_bool("set_allow_tf32_cublas", value)
            _settings.set_float32_matmul_precision("high" if value else "highest")
            _matmul_state["fp32"] = "ieee"
        elif name == "fp32_precision":
            if value == "bf16":
                raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
            if value not in ("none", "ieee", "tf32"):
                raise RuntimeError(f"Unknown precision: {value}")
            _settings.set_float32_matmul_precision("high" if value == "tf32" else "highest")
            _matmul_state["fp32"] = "ieee" if value == "tf32" else value
        elif name == "allow_fp16_accumulation":
            _require_bool("set_allow_fp16_accumulation_cublas", value)
            _matmul_state[name] = value
        elif name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            _matmul_state[name.split("_")[1]] = _reduction_setting(name, value)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = _Matmul()


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


_linalg_backend = _LinalgBackend.Default
_blas_backend = _BlasBackend.Cublas  # torch's answer for 'default' where cuBLASLt is not preferred


def preferred_linalg_library(backend=None):
    """Sets (``'default'``, ``'cusolver'``, or a ``_LinalgBackend``) and returns the library preferred for CUDA
    linear algebra. ember's CUDA linear algebra is CuPy's, on cuSOLVER: ``'cusolver'`` is accepted with CUDA,
    ``'magma'`` never (as in a torch built without them)."""
    global _linalg_backend
    if backend is None:
        return _linalg_backend
    if isinstance(backend, str):
        names = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver, "magma": _LinalgBackend.Magma}
        if backend not in names:
            raise RuntimeError("Unknown input value. Choose from: default, cusolver, magma.")
        backend = names[backend]
    elif not isinstance(backend, _LinalgBackend):
        raise RuntimeError("Unknown input value type.")
    if backend is _LinalgBackend.Magma or backend is _LinalgBackend.Cusolver and not cuda_available():
        lib = "MAGMA" if backend is _LinalgBackend.Magma else "cuSOLVER"
        raise RuntimeError(f"Cannot set preferred backend to {lib} if PyTorch has not been compiled with {lib}.")
    _linalg_backend = backend
    return backend


def preferred_blas_library(backend=None):
    """Sets (``'default'``, ``'cublas'``, ``'ck'``, or a ``_BlasBackend``) and returns the BLAS library preferred
    for CUDA products. ember's CUDA products are CuPy's, on cuBLAS: ``'cublaslt'`` is refused."""
    global _blas_backend
    if backend is None:
        return _blas_backend
    if isinstance(backend, str):
        names = {"default": _BlasBackend.Cublas, "cublas": _BlasBackend.Cublas, "hipblas": _BlasBackend.Cublas,
                 "cublaslt": _BlasBackend.Cublaslt, "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
        if backend not in names:
            raise RuntimeError("Unknown input value. Choose from: " + ", ".join(names) + ".")
        backend = names[backend]
    elif not isinstance(backend, _BlasBackend):
        raise RuntimeError("Unknown input value type.")
    if backend is _BlasBackend.Cublaslt:
        raise RuntimeError("Cannot set preferred backend to cuBLASLt if PyTorch has not been compiled with cuBLASLt.")
    _blas_backend = _BlasBackend.Cublas if backend is _BlasBackend.Default else backend
    return _blas_backend


# scaled_dot_product_attention's backends; ember.nn.attention.sdpa_kernel sets them too
_sdp_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
_sdp_math_reduction = False  # fp16/bf16 reductions in the math backend


def flash_sdp_enabled():
    """Whether the flash attention backend of scaled_dot_product_attention is enabled."""
    return _sdp_enabled["flash"]


def enable_flash_sdp(enabled):
    """Enables or disables the flash attention backend of scaled_dot_product_attention."""
    _require_bool("enable_flash_sdp", enabled)
    _sdp_enabled["flash"] = enabled


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient backend of scaled_dot_product_attention is enabled."""
    return _sdp_enabled["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    """Enables or disables the memory-efficient backend of scaled_dot_product_attention."""
    _require_bool("enable_mem_efficient_sdp", enabled)
    _sdp_enabled["mem_efficient"] = enabled


def math_sdp_enabled():
    """Whether the math backend of scaled_dot_product_attention is enabled."""
    return _sdp_enabled["math"]


def enable_math_sdp(enabled):
    """Enables or disables the math backend of scaled_dot_product_attention."""
    _require_bool("enable_math_sdp", enabled)
    _sdp_enabled["math"] = enabled


def cudnn_sdp_enabled():
    """Whether the cuDNN backend of scaled_dot_product_attention is enabled."""
    return _sdp_enabled["cudnn"]


def enable_cudnn_sdp(enabled):
    """Enables or disables the cuDNN backend of scaled_dot_product_attention."""
    _require_bool("enable_cudnn_sdp", enabled)
    _sdp_enabled["cudnn"] = enabled


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Allows or forbids fp16/bf16 reductions in the math backend of scaled_dot_product_attention."""
    global _sdp_math_reduction
    _require_bool("allow_fp16_bf16_reduction_math_sdp", enabled)
    _sdp_math_reduction = enabled


def fp16_bf16_reduction_math_sdp_allowed():
    """Whether the math backend of scaled_dot_product_attention may reduce in fp16/bf16 (False by default)."""
    return _sdp_math_reduction


def is_flash_attention_available():
    """False: ember has no FlashAttention kernel."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated: enables exactly the given backends of scaled_dot_product_attention inside the block, as
    :func:`ember.nn.attention.sdpa_kernel`, and restores the previous ones after it."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    previous = dict(_sdp_enabled)
    _sdp_enabled.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                        cudnn=bool(enable_cudnn))
    try:
        yield {}
    finally:
        _sdp_enabled.update(previous)
