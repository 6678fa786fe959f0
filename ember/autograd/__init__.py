"""Automatic differentiation: Function, backward/grad, grad modes, forward AD, gradcheck and anomaly detection."""
from . import anomaly, forward_ad, function, functional, grad_mode, graph, profiler
from .custom_function import Function
from .function import FunctionCtx, once_differentiable
from .engine import backward, grad
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled,
                        set_multithreading_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .anomaly import detect_anomaly, set_detect_anomaly
from .variable import Variable
