"""Rprop: resilient backpropagation."""
from .._creation import full_like, zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _grad_array, _real, _lr, _scalar_tensor, _to_scalar, _xp

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, as ``torch.optim.Rprop``: per-element step sizes grown by ``etas[1]`` while the gradient keeps its
    sign and shrunk by ``etas[0]`` when it flips, clamped to ``step_sizes``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): initial step size. Default: 1e-2
        etas (Tuple[float, float]): (etaminus, etaplus) factors. Default: (0.5, 1.2)
        step_sizes (Tuple[float, float]): minimal and maximal step sizes. Default: (1e-6, 50)
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(2))
        >>> opt = ember.optim.Rprop([w], lr=0.1)
        >>> w.grad = ember.tensor([1.0, -2.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([-0.1000,  0.1000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        lr = _lr(group)
        return {"step": _scalar_tensor(0.0), "prev": zeros_like(p),
                "step_size": full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        prev, step_size = _real(state["prev"]._data), _real(state["step_size"]._data)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state["step"]._data += 1
        prod = g * prev
        factor = xp.where(prod > 0, etaplus, xp.where(prod < 0, etaminus, 1)).astype(param.dtype)
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        prev[...] = g
        prev[prod < 0] = 0  # after a sign flip, skip this step and forget the gradient
        xp.sign(prev, out=prod)
        prod *= step_size
        param -= prod
