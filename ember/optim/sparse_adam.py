"""SparseAdam: Adam for sparse gradients, updating only the entries they hold."""
import math

from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _lr, _sparse_grad, _to_scalar, _xp

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: for the sparse COO gradients of ``nn.Embedding(sparse=True)``,
    the moments and the parameter change only at the entries the gradient holds.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        betas (Tuple[float, float]): decay rates of the gradient's running average and of its square.
            Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> emb = ember.nn.Embedding(3, 2, sparse=True, _weight=ember.ones(3, 2))
        >>> opt = ember.optim.SparseAdam(emb.parameters(), lr=0.1)
        >>> emb(ember.tensor([1])).mul(ember.tensor([1., -1.])).sum().backward()
        >>> opt.step()
        >>> emb.weight
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
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")

    def _update_sparse(self, p, grad, state, group):
        xp = _xp(p)
        state["step"] += 1
        index, g = _sparse_grad(grad, group["maximize"])
        if g.size == 0:
            return
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq, param = state["exp_avg"]._data, state["exp_avg_sq"]._data, p._data
        old, old_sq = exp_avg[index], exp_avg_sq[index]
        numer = (g - old) * (1 - beta1)
        exp_avg[index] += numer
        numer += old
        denom = (g * g - old_sq) * (1 - beta2)
        exp_avg_sq[index] += denom
        denom += old_sq
        denom = xp.sqrt(denom) + group["eps"]
        step = state["step"]
        step_size = _lr(group) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param[index] += -step_size * (numer / denom)
