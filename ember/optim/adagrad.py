"""Adagrad."""
from .._creation import full_like
from .._tensor import Tensor
from .optimizer import (Optimizer, _alpha, _check_fused, _grad_array, _lr, _real, _scalar_tensor, _sparse_grad,
                        _to_scalar, _xp)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-2
        lr_decay (float): learning rate decay. Default: 0
        weight_decay (float): L2 penalty. Default: 0
        initial_accumulator_value (float): initial value of the sum of squared gradients. Default: 0
        eps (float): term added to the denominator. Default: 1e-10
        maximize (bool): maximize the objective. Default: False

    Sparse gradients (``nn.Embedding(sparse=True)``) update the rows they hold (without ``weight_decay``).

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(1))
        >>> opt = ember.optim.Adagrad([w], lr=0.5)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([-0.5000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:  # torch creates Adagrad's state up front
            for p in group["params"]:
                self.state[p] = self._init_state(p, group)

    def _init_state(self, p, group):
        v = self.defaults["initial_accumulator_value"]
        return {"step": _scalar_tensor(0.0), "sum": full_like(p, complex(v, v) if p.is_complex() else v)}

    def share_memory(self):
        """Kept for API compatibility; ember state needs no shared-memory move."""

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        state_sum = _real(state["sum"]._data)
        step_t = state["step"]._data
        step_t += 1
        if group["weight_decay"] != 0:
            g = param * group["weight_decay"] + g
        lr = _to_scalar(group["lr"]) if group["fused"] else _lr(group)  # the fused step takes a float ``lr``
        clr = lr / (1 + (step_t.item() - 1) * group["lr_decay"])
        std = xp.multiply(g, g)
        state_sum += std
        xp.sqrt(state_sum, out=std)
        std += group["eps"]
        param += xp.divide(g * -clr, std, out=std)

    def _update_sparse(self, p, grad, state, group):
        step_t = state["step"]._data
        step_t += 1
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        clr = _lr(group) / (1 + (step_t.item() - 1) * group["lr_decay"])
        index, g = _sparse_grad(grad, group["maximize"])
        state_sum, param = state["sum"]._data, p._data
        state_sum[index] += g * g
        std = _xp(p).sqrt(state_sum[index])
        std += group["eps"]
        param[index] += (g / std) * _alpha(param, -clr)
