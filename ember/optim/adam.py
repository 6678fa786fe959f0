"""Adam, with optional AMSGrad and decoupled (AdamW) weight decay."""
import numpy as np

from .._creation import zeros_like
from .._kernels import cuda_fused
from .._tensor import Tensor
from .optimizer import (Optimizer, _alpha, _check_fused, _grad_array, _hyper, _lerp_, _lr, _opmath, _real,
                        _scalar_tensor, _to_scalar, _xp)

__all__ = ["Adam"]

_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _check_betas(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _moments(xp, g, exp_avg, exp_avg_sq, beta1, beta2, tmp):
    """The first and second moment updates shared by the Adam family."""
    _lerp_(xp, exp_avg, g, 1 - beta1, tmp)
    xp.multiply(exp_avg_sq, beta2, out=exp_avg_sq, dtype=_opmath(tmp))
    xp.multiply(g, 1 - beta2, out=tmp, dtype=_opmath(tmp))
    tmp *= g
    exp_avg_sq += tmp


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        betas (Tuple[float, float]): decay rates of the gradient's running average and of its square.
            Default: (0.9, 0.999)
        eps (float): term added to the denominator. Default: 1e-8
        weight_decay (float): weight decay (L2 penalty, or decoupled with ``decoupled_weight_decay``). Default: 0
        amsgrad (bool): use the AMSGrad variant. Default: False
        maximize (bool): maximize the objective. Default: False
        decoupled_weight_decay (bool): decay the weights directly, as AdamW. Default: False

    ``foreach``, ``capturable``, ``differentiable`` and ``fused`` are accepted for compatibility.

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
        >>> opt = ember.optim.Adam([w], lr=0.1)
        >>> w.grad = ember.tensor([1.0, -1.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9000, 2.1000], requires_grad=True)
    """

    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        _check_betas(_to_scalar(lr), eps, betas, weight_decay)
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)
                or isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if foreach and not capturable:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _init_state(self, p, group):
        state = {"step": _scalar_tensor(0.0), "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p)
        return state

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param = _real(p._data)
        g = _grad_array(p, grad, group["maximize"])
        exp_avg, exp_avg_sq = _real(state["exp_avg"]._data), _real(state["exp_avg_sq"]._data)
        beta1, beta2 = map(_hyper, group["betas"])
        # the fused step takes a tensor ``lr`` as a Python float
        lr = _to_scalar(group["lr"]) if group["fused"] else _lr(group)
        wd, eps = group["weight_decay"], group["eps"]
        step_t = state["step"]._data
        step_t += 1
        step = step_t.item()
        fused = None if group["amsgrad"] or xp is np else cuda_fused.kernel("adam", xp)
        if fused is not None and param.dtype in _FUSED_DTYPES and g.dtype == param.dtype and \
                all(isinstance(v, (int, float)) for v in (lr, beta1, beta2)):
            cuda_fused.adam(fused, param, g, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, wd,
                            group["decoupled_weight_decay"], step)
            return
        tmp = xp.empty_like(param, dtype=_opmath(param))  # float32 for halves: each in-place op rounds once
        if wd != 0:
            if group["decoupled_weight_decay"]:
                xp.multiply(param, 1 - lr * wd, out=param, dtype=tmp.dtype)
            else:
                g = (xp.multiply(param, _alpha(param, wd), dtype=tmp.dtype) + g).astype(param.dtype, copy=False)
        _moments(xp, g, exp_avg, exp_avg_sq, beta1, beta2, tmp)
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if group["amsgrad"]:
            max_sq = _real(state["max_exp_avg_sq"]._data)
            xp.maximum(max_sq, exp_avg_sq, out=max_sq)
            exp_avg_sq = max_sq
        # the denominator, in the parameter's dtype (tmp itself unless that is a half)
        den = xp.sqrt(exp_avg_sq, out=tmp if tmp.dtype == param.dtype else None)
        xp.divide(den, bias_correction2_sqrt, out=den, dtype=tmp.dtype)
        xp.add(den, eps, out=den, dtype=tmp.dtype)
        xp.divide(exp_avg, den, out=tmp, dtype=tmp.dtype)
        tmp *= -step_size
        param += tmp
