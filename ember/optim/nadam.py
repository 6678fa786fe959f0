"""NAdam: Adam with Nesterov momentum."""
from .._creation import zeros_like
from .._tensor import Tensor
from .adam import _check_betas, _moments
from .optimizer import Optimizer, _grad_array, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Adam with Nesterov momentum), as ``torch.optim.NAdam``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 2e-3
        betas (Tuple[float, float]): running average decay rates. Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): weight decay. Default: 0
        momentum_decay (float): momentum decay. Default: 4e-3
        decoupled_weight_decay (bool): decay the weights directly, as AdamW. Default: False
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(2))
        >>> opt = ember.optim.NAdam([w], lr=0.1)
        >>> w.grad = ember.ones(2)
        >>> opt.step()
        >>> w.shape
        ember.Size([2])
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check_betas(_to_scalar(lr), eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": _scalar_tensor(0.0), "mu_product": _scalar_tensor(1.0), "exp_avg": zeros_like(p),
                "exp_avg_sq": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        exp_avg, exp_avg_sq = _real(state["exp_avg"]._data), _real(state["exp_avg_sq"]._data)
        beta1, beta2 = group["betas"]
        lr, wd, momentum_decay = _lr(group), group["weight_decay"], group["momentum_decay"]
        step_t = state["step"]._data
        step_t += 1
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * wd
            else:
                g = param * wd + g
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product = state["mu_product"]._data
        mu_product *= mu  # kept in the scalar dtype (float32), as torch keeps it
        mu_product = float(mu_product)
        tmp = xp.empty_like(param)
        _moments(xp, g, exp_avg, exp_avg_sq, beta1, beta2, tmp)
        denom = exp_avg_sq / bias_correction2
        xp.sqrt(denom, out=denom)
        denom += group["eps"]
        xp.divide(g * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom, out=tmp)
        param += tmp
        xp.divide(exp_avg * ((-lr * mu_next) / (1.0 - mu_product * mu_next)), denom, out=tmp)
        param += tmp
