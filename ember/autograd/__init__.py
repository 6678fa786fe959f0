"""Automatic differentiation: Function, backward/grad, grad modes, gradcheck and anomaly detection."""
from .function import Function, once_differentiable
from .engine import backward, grad
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .anomaly import detect_anomaly, set_detect_anomaly

