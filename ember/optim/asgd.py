"""ASGD: averaged stochastic gradient descent."""
from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _get_scalar_dtype, _grad_array, _real, _lr, _scalar_tensor, _to_scalar

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, as ``torch.optim.ASGD``; the running average of the parameters is ``state['ax']``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-2
        lambd (float): decay term. Default: 1e-4
        alpha (float): power for the eta update. Default: 0.75
        t0 (float): the step at which averaging starts. Default: 1e6
        weight_decay (float): L2 penalty. Default: 0
        maximize (bool): maximize the objective. Default: False

    Example::

        >>> w = ember.nn.Parameter(ember.zeros(1))
        >>> opt = ember.optim.ASGD([w], lr=0.1, lambd=0.0)
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([-0.1000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        return {"step": _scalar_tensor(0.0), "eta": _scalar_tensor(_lr(group)),
                "mu": _scalar_tensor(1.0), "ax": zeros_like(p)}

    def _update(self, p, grad, state, group):
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        ax = _real(state["ax"]._data)
        eta, mu = state["eta"]._data, state["mu"]._data
        lr, lambd = _lr(group), group["lambd"]
        step_t = state["step"]._data
        step_t += 1
        if group["weight_decay"] != 0:
            g = param * group["weight_decay"] + g
        eta_value = float(eta)
        param *= 1 - lambd * eta_value
        param -= g * eta_value
        if float(mu) != 1:
            tmp = param - ax
            tmp *= float(mu)  # the step scalars stay on the CPU, as torch's
            ax += tmp
        else:
            ax[...] = param
        step = step_t.item()
        # rounded to the scalar dtype, even into a float64 ``eta`` (loaded from a state dict)
        rounded = _get_scalar_dtype().np.type
        eta[()] = rounded(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        mu[()] = rounded(1 / max(1, step - group["t0"]))
