"""RMSprop."""
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _grad_array, _lerp_, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-2
        alpha (float): smoothing constant of the squared-gradient average. Default: 0.99
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): L2 penalty. Default: 0
        momentum (float): momentum factor. Default: 0
        centered (bool): normalize by the estimated gradient variance instead of the second moment. Default: False
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(1))
        >>> opt = ember.optim.RMSprop([w], lr=0.01, alpha=0.0)
        >>> w.grad = ember.tensor([3.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([-0.0100], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = {"step": _scalar_tensor(0.0), "square_avg": zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)
        return state

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        square_avg = _real(state["square_avg"]._data)
        alpha, momentum = group["alpha"], group["momentum"]
        state["step"]._data += 1
        if group["weight_decay"] != 0:
            g = param * group["weight_decay"] + g
        avg = xp.multiply(g, 1 - alpha)
        avg *= g
        square_avg *= alpha
        square_avg += avg
        if group["centered"]:
            grad_avg = _real(state["grad_avg"]._data)
            _lerp_(xp, grad_avg, g, 1 - alpha, avg)
            xp.multiply(grad_avg, -1.0, out=avg)
            avg *= grad_avg
            avg += square_avg
            xp.sqrt(avg, out=avg)
        else:
            xp.sqrt(square_avg, out=avg)
        avg += group["eps"]
        lr = _lr(group)
        if momentum > 0:
            buf = _real(state["momentum_buffer"]._data)
            buf *= momentum
            buf += xp.divide(g, avg, out=avg)
            param -= xp.multiply(buf, lr, out=avg)
        else:
            param += xp.divide(g * -lr, avg, out=avg)
