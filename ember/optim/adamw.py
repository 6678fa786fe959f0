"""AdamW: Adam with decoupled weight decay."""
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (``param *= 1 - lr * weight_decay`` each step), as ``torch.optim.AdamW``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        betas (Tuple[float, float]): running average decay rates. Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): decoupled weight decay. Default: 1e-2
        amsgrad (bool): use the AMSGrad variant. Default: False
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = ember.zeros(2)
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9500, 0.9500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
