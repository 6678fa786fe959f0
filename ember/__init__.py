"""ember: a deep-learning framework with PyTorch's API on NumPy (CPU) and CuPy (CUDA)."""
from math import pi, e, inf, nan

from . import _dtype
from ._dtype import (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
                     complex128, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
                     float8_e5m2fnuz, half, float, double, short, int, long, cfloat, cdouble, dtype, get_default_dtype,
                     set_default_dtype)
from ._dtype import public_result_type as result_type, public_promote_types as promote_types
from ._dtype import public_can_cast as can_cast
from ._dtype import finfo, iinfo
from ._device import device
from ._tensor import Tensor, Size
from ._tensor import is_tensor, is_floating_point, is_complex, is_nonzero, numel, is_storage
from ._print import set_printoptions
from ._kernels.parallel import get_num_threads, set_num_threads
from ._kernels import malloc as _malloc
from ._creation import *  # noqa: F401,F403
from . import _fill  # noqa: F401  (Tensor.fill_, zero_, copy_)
from ._fill import fill
from ._random import *  # noqa: F401,F403
from ._ops.binary import *  # noqa: F401,F403
from ._ops.unary import *  # noqa: F401,F403
from ._ops.special import *  # noqa: F401,F403
from ._ops.compare import *  # noqa: F401,F403
from ._ops.pointwise import *  # noqa: F401,F403
from ._ops.reduce import *  # noqa: F401,F403
from ._ops.order import *  # noqa: F401,F403
from ._ops.scan import *  # noqa: F401,F403
from ._ops.softmax import *  # noqa: F401,F403
from ._ops.view import *  # noqa: F401,F403
from ._ops.index import *  # noqa: F401,F403
from ._ops.split import *  # noqa: F401,F403
from ._ops.shape import *  # noqa: F401,F403
from ._ops.sort import *  # noqa: F401,F403
from ._ops.linalg import *  # noqa: F401,F403
from ._ops.view_copies import *  # noqa: F401,F403
from ._ops.stats import *  # noqa: F401,F403
from ._ops.norms import *  # noqa: F401,F403
from ._ops.integrate import *  # noqa: F401,F403
from ._ops.numerical_gradient import *  # noqa: F401,F403
from ._ops.combinatorics import *  # noqa: F401,F403
from ._ops.factor_solve import *  # noqa: F401,F403
from ._ops.method_functions import *  # noqa: F401,F403
from ._ops.complex import *  # noqa: F401,F403
from ._ops.lowrank import *  # noqa: F401,F403
from ._ops.lobpcg import *  # noqa: F401,F403
from ._ops.segment import *  # noqa: F401,F403
from ._ops.quantize import *  # noqa: F401,F403
from ._ops import resize  # noqa: F401  (Tensor.resize_, resize_as_)
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled)
from .autograd.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_anomaly_enabled
from . import autograd, cuda, return_types
from . import linalg, special
from . import fft  # noqa: F401  (ember.fft; Tensor.stft/istft)
from ._ops.fft import stft, istft  # noqa: F401
from ._ops.windows import *  # noqa: F401,F403
from . import quasirandom, random
from . import nn, optim
from .nn.functional import (relu, relu_, selu, celu, rrelu, prelu, hardshrink, threshold, pairwise_distance,  # noqa
                            cosine_similarity, pdist, cdist, layer_norm, rms_norm)
from .nn.functional._toplevel import *  # noqa: F401,F403
from . import utils, datasets, transforms
from .serialization import save, load
from . import amp, backends, testing
from .amp import autocast, get_autocast_dtype, is_autocast_enabled, GradScaler
from ._compile import compile
from ._foreach import *  # noqa: F401,F403
from . import func
from . import library
from .library import ops
from ._control_flow import cond, while_loop
from .cuda import OutOfMemoryError
from .nn.functional.vision import constant_pad_nd
from .func import vmap
from ._settings import (set_float32_matmul_precision, get_float32_matmul_precision,  # noqa: F401
                        use_deterministic_algorithms, are_deterministic_algorithms_enabled,
                        is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
                        get_deterministic_debug_mode)
# the legacy and environment API that torch scripts touch in their boilerplate
from ._legacy import *  # noqa: F401,F403
from ._layout import layout, strided, sparse_coo
from ._sparse import sparse_coo_tensor, spmm
from . import sparse
from ._sym import *  # noqa: F401,F403
from ._interop import get_num_interop_threads, set_num_interop_threads
from .amp.autocast_mode import get_autocast_cpu_dtype, get_autocast_gpu_dtype, is_autocast_cpu_enabled
from . import cpu, distributed, fx, jit, multiprocessing, profiler, version
from .version import __version__
from . import _after_import

newaxis = None
_malloc.keep_freed_memory()
# einops finds ember's backend among its subclasses: define it as soon as einops is imported
_after_import.after_import("einops", lambda: __import__("ember._einops"))


def __getattr__(name):
    # imported on first use, as `import ember` stays light: ember.onnx needs the onnx package (the `ember[onnx]`
    # extra); ember.distributions is large
    if name in ("onnx", "distributions", "accelerator", "compiler", "hub", "signal", "_dynamo", "_inductor", "types",
                "storage", "overrides"):
        import importlib
        return importlib.import_module("." + name, __name__)
    if name in ("UntypedStorage", "TypedStorage"):
        from . import _storage
        return getattr(_storage, name)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
