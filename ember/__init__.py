"""ember: a deep-learning framework with PyTorch's API on NumPy (CPU) and CuPy (CUDA)."""
from . import _dtype
from ._dtype import (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
                     complex128, half, float, double, short, int, long, cfloat, cdouble, dtype, get_default_dtype,
                     set_default_dtype, promote_types, result_type, can_cast)
from ._device import device
from ._tensor import Tensor, Size
from ._print import set_printoptions
from ._creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty, full, zeros_like, ones_like,
                        empty_like, full_like, arange, linspace, logspace, eye)
from ._ops.binary import *  # noqa: F401,F403
from ._ops.unary import *  # noqa: F401,F403
from ._ops.reduce import *  # noqa: F401,F403
from ._ops.view import *  # noqa: F401,F403
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled)
from . import autograd, cuda

__version__ = "0.1.0"
