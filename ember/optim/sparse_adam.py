"""SparseAdam: Adam that updates only the rows a gradient touches."""
import math

from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _to_scalar, _xp

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: the moments and the parameter change only in the rows (along
    dim 0) where the gradient is nonzero, as for the sparse gradients of ``nn.Embedding(sparse=True)``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        betas (Tuple[float, float]): decay rates of the gradient's running average and of its square.
            Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.ones(3, 2))
        >>> opt = ember.optim.SparseAdam([w], lr=0.1)
        >>> w.grad = ember.tensor([[0., 0.], [1., -1.], [0., 0.]])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([[1.0000, 1.0000],
                [0.9000, 1.1000],
                [1.0000, 1.0000]], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def __setstate__(self, state):
        super().__setstate__(state)
        for st in self.state.values():  # torch keeps SparseAdam's step a Python int
            if isinstance(st.get("step"), Tensor):
                st["step"] = int(st["step"].item())

    def _init_state(self, p, group):
        return {"step": 0, "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        state["step"] += 1
        param, g = xp.atleast_1d(p._data), xp.atleast_1d(grad._data)
        rows = xp.flatnonzero(g.reshape(g.shape[0], -1).any(axis=1))
        if rows.size == 0:
            return
        g = -g[rows] if group["maximize"] else g[rows]
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq = xp.atleast_1d(state["exp_avg"]._data), xp.atleast_1d(state["exp_avg_sq"]._data)
        old, old_sq = exp_avg[rows], exp_avg_sq[rows]
        numer = (g - old) * (1 - beta1)
        exp_avg[rows] += numer
        numer += old
        denom = (g * g - old_sq) * (1 - beta2)
        exp_avg_sq[rows] += denom
        denom += old_sq
        denom = xp.sqrt(denom) + group["eps"]
        step = state["step"]
        step_size = _to_scalar(group["lr"]) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param[rows] += -step_size * (numer / denom)
