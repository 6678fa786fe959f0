"""Adadelta."""
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _grad_array, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): coefficient scaling delta before it is applied. Default: 1.0
        rho (float): decay rate of the running averages. Default: 0.9
        eps (float): term added for numerical stability. Default: 1e-6
        weight_decay (float): L2 penalty. Default: 0
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(1))
        >>> opt = ember.optim.Adadelta([w])
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> round(w.item(), 5)
        -0.00316
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": _scalar_tensor(0.0), "square_avg": zeros_like(p), "acc_delta": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        square_avg, acc_delta = _real(state["square_avg"]._data), _real(state["acc_delta"]._data)
        rho, eps = group["rho"], group["eps"]
        state["step"]._data += 1
        if group["weight_decay"] != 0:
            g = param * group["weight_decay"] + g
        tmp = xp.multiply(g, 1 - rho)
        tmp *= g
        square_avg *= rho
        square_avg += tmp
        std = xp.add(square_avg, eps, out=tmp)
        xp.sqrt(std, out=std)
        delta = acc_delta + eps
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= g
        xp.multiply(delta, 1 - rho, out=tmp)
        tmp *= delta
        acc_delta *= rho
        acc_delta += tmp
        param -= xp.multiply(delta, _lr(group), out=delta)
