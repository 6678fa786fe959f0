"""Stochastic gradient descent (optionally with momentum and Nesterov momentum)."""
from .._tensor import Tensor
from .optimizer import Optimizer, _grad_array, _real, _to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        momentum (float): momentum factor. Default: 0
        dampening (float): dampening of the momentum. Default: 0
        weight_decay (float): L2 penalty. Default: 0
        nesterov (bool): Nesterov momentum. Default: False
        maximize (bool): maximize the objective instead of minimizing. Default: False

    ``foreach``, ``differentiable`` and ``fused`` are accepted for compatibility; there is one implementation.

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ember.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {} if group["momentum"] != 0 else None

    def _update(self, p, grad, state, group):
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        wd, momentum = group["weight_decay"], group["momentum"]
        if wd != 0:
            g = param * wd + g
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g.astype(param.dtype)  # a copy, in the parameter's dtype
                state["momentum_buffer"] = Tensor._make(buf.view(p._data.dtype), p.dtype, p.device)
            else:
                buf = _real(buf._data)
                buf *= momentum
                dampening = group["dampening"]
                buf += g if dampening == 0 else g * (1 - dampening)
            g = buf * momentum + g if group["nesterov"] else buf
        param -= g * _to_scalar(group["lr"])
