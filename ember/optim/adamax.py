"""Adamax: Adam with the infinity norm."""
from .._creation import zeros_like
from .._tensor import Tensor
from .adam import _check_betas
from .optimizer import Optimizer, _grad_array, _lerp_, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Adam based on the infinity norm), as ``torch.optim.Adamax``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 2e-3
        betas (Tuple[float, float]): decay rates of the running average and of the infinity norm. Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): L2 penalty. Default: 0
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([1.0]))
        >>> opt = ember.optim.Adamax([w], lr=0.1)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check_betas(_to_scalar(lr), eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": _scalar_tensor(0.0), "exp_avg": zeros_like(p), "exp_inf": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        exp_avg, exp_inf = _real(state["exp_avg"]._data), _real(state["exp_inf"]._data)
        beta1, beta2 = group["betas"]
        step_t = state["step"]._data
        step_t += 1
        if group["weight_decay"] != 0:
            g = param * group["weight_decay"] + g
        tmp = xp.empty_like(param)
        _lerp_(xp, exp_avg, g, 1 - beta1, tmp)
        exp_inf *= beta2
        xp.abs(g, out=tmp)
        tmp += group["eps"]
        xp.maximum(exp_inf, tmp, out=exp_inf)
        clr = _lr(group) / (1 - beta1 ** step_t.item())
        xp.divide(exp_avg * -clr, exp_inf, out=tmp)
        param += tmp
