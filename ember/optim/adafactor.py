"""Adafactor: second moments factored into row and column averages for parameters of 2 or more dims."""
from .._creation import zeros, zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _grad_array, _lerp_, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["Adafactor"]


def _rms(xp, a):
    return float(xp.linalg.norm(a.ravel())) / a.size ** 0.5


class Adafactor(Optimizer):
    """Adafactor, as ``torch.optim.Adafactor``: the step is ``max(eps2, RMS(param)) * min(lr, 1 / sqrt(t))`` times
    the gradient over the root of its second moment, clipped to RMS ``d``; the second moment of a parameter of 2 or
    more dims is the outer product of its row and column means (over the last two dims) divided by their mean.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): the largest relative step size, and the weight decay's factor. Default: 1e-2
        beta2_decay (float): the second moment's running average takes ``t ** beta2_decay`` of the new value at
            step ``t``. Default: -0.8
        eps (Tuple[Optional[float], float]): floor of the second moment estimate (``None``: the dtype's machine
            epsilon), and floor of the parameter RMS scaling the step. Default: (None, 1e-3)
        d (float): clipping threshold of the update's RMS. Default: 1.0
        weight_decay (float): decoupled weight decay (``param *= 1 - lr * weight_decay``). Default: 0.0
        maximize (bool): maximize the objective. Default: False

    ``foreach`` is accepted for compatibility.

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
        >>> opt = ember.optim.Adafactor([w])
        >>> w.grad = ember.tensor([1.0, -1.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9842, 2.0158], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = {"step": _scalar_tensor(0.0)}
        if p.ndim > 1:
            shape = tuple(p.shape)
            state["row_var"] = zeros(shape[:-1] + (1,), dtype=p.dtype, device=p.device)
            state["col_var"] = zeros(shape[:-2] + (1, shape[-1]), dtype=p.dtype, device=p.device)
        else:
            state["variance"] = zeros_like(p)
        return state

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = p._data
        g = _grad_array(p, grad, group["maximize"])
        lr, wd = _lr(group), group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(xp.finfo(param.dtype).eps)
        step_t = state["step"]._data
        step_t += 1
        step = step_t.item()
        weight = step ** group["beta2_decay"]  # 1 - beta2 at this step
        alpha = max(eps2, _rms(xp, param)) * min(lr, 1 / step ** 0.5)
        if wd != 0:
            param *= 1 - lr * wd
        if g.ndim > 1:
            row_var, col_var = state["row_var"]._data, state["col_var"]._data
            _lerp_(xp, row_var, (g * g).mean(-1, keepdims=True), weight, xp.empty_like(row_var))
            _lerp_(xp, col_var, (g * g).mean(-2, keepdims=True), weight, xp.empty_like(col_var))
            update = row_var * col_var  # (..., m, 1) * (..., 1, n): the factored second moment, up to a scale
            update /= xp.maximum(row_var.mean(-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._data
            _lerp_(xp, variance, g * g, weight, xp.empty_like(variance))
            update = variance.copy()
        xp.maximum(update, eps1 * eps1, out=update)
        xp.sqrt(update, out=update)
        xp.divide(g, update, out=update)
        update *= -alpha / max(1.0, _rms(xp, update) / group["d"])
        param += update
