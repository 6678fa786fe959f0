"""Gradient clipping, as ``torch.nn.utils.clip_grad``: by total norm or by value, gradients modified in place.

One implementation serves every ``foreach`` setting (torch's foreach kernels exist for CPU and CUDA, ember's only
devices): each gradient's norm is one vectorised reduction, and the per-tensor loop is short next to the arithmetic.
"""
import functools
import types
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _tensors(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors``, as if they were concatenated into one vector.

    Args:
        tensors (Iterable[Tensor] or Tensor): the tensors (typically gradients)
        norm_type (float): the p of the p-norm; ``inf`` for the infinity norm. Default: 2.0
        error_if_nonfinite (bool): raise if the total norm is nan or inf. Default: False
        foreach (bool): accepted for torch compatibility.

    Example::

        >>> ember.nn.utils.get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
        tensor(5.)
    """
    from ... import linalg, stack, tensor
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first = tensors[0].device
    norms = [linalg.vector_norm(t, norm_type).to(first) for t in tensors]
    total = linalg.vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of ``parameters`` in place by ``min(max_norm / (total_norm + 1e-6), 1)``.

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose ``.grad`` is scaled
        max_norm (float): the largest norm allowed
        total_norm (Tensor): the norm to clip by (from ``get_total_norm``)
        foreach (bool): accepted for torch compatibility.
    """
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_(): total_norm must be a Tensor, not {type(total_norm).__name__}")
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradient norm of ``parameters`` (as one concatenated vector) to ``max_norm``, in place.

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose ``.grad`` is clipped
        max_norm (float): the largest norm allowed
        norm_type (float): the p of the p-norm; ``inf`` for the infinity norm. Default: 2.0
        error_if_nonfinite (bool): raise if the total norm is nan or inf. Default: False
        foreach (bool): accepted for torch compatibility.

    Returns:
        The total norm of the gradients before clipping (a 0-d tensor).

    Example::

        >>> p = ember.nn.Parameter(ember.zeros(2))
        >>> p.grad = ember.tensor([3.0, 4.0])
        >>> ember.nn.utils.clip_grad_norm_([p], max_norm=1.0)
        tensor(5.)
        >>> p.grad
        tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps the gradients of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    Args:
        parameters (Iterable[Tensor] or Tensor): tensors whose ``.grad`` is clipped
        clip_value (float): the largest absolute gradient value allowed
        foreach (bool): accepted for torch compatibility.
    """
    clip_value = float(clip_value)
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    for g in grads:
        g.clamp_(min=-clip_value, max=clip_value)
