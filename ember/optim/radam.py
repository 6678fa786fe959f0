"""RAdam: Adam with a rectified adaptive learning rate."""
from .._creation import zeros_like
from .._tensor import Tensor
from .adam import _check_betas, _moments
from .optimizer import Optimizer, _grad_array, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (rectified Adam), as ``torch.optim.RAdam``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        betas (Tuple[float, float]): running average decay rates. Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): weight decay. Default: 0
        decoupled_weight_decay (bool): decay the weights directly, as AdamW. Default: False
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(2))
        >>> opt = ember.optim.RAdam([w], lr=0.1)
        >>> w.grad = ember.ones(2)
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([-0.1000, -0.1000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check_betas(_to_scalar(lr), eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": _scalar_tensor(0.0), "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        exp_avg, exp_avg_sq = _real(state["exp_avg"]._data), _real(state["exp_avg_sq"]._data)
        beta1, beta2 = group["betas"]
        lr, wd = _lr(group), group["weight_decay"]
        step_t = state["step"]._data
        step_t += 1
        step = step_t.item()
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * wd
            else:
                g = param * wd + g
        tmp = xp.empty_like(param)
        _moments(xp, g, exp_avg, exp_avg_sq, beta1, beta2, tmp)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / bias_correction1
        update *= lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:  # the variance is tractable: rectify the adaptive learning rate
            xp.sqrt(exp_avg_sq, out=tmp)
            tmp += group["eps"]
            xp.divide(bias_correction2 ** 0.5, tmp, out=tmp)
            update *= tmp
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        param -= update
