"""Stochastic gradient descent (optionally with momentum and Nesterov momentum)."""
import numpy as np

from .._kernels import compiled
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _alpha, _check_fused, _opmath, _real, _sparse_grad, _to_scalar, _xp

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD``.

    Args:
        params (iterable): parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        momentum (float): momentum factor. Default: 0
        dampening (float): dampening of the momentum. Default: 0
        weight_decay (float): L2 penalty. Default: 0
        nesterov (bool): Nesterov momentum. Default: False
        maximize (bool): maximize the objective instead of minimizing. Default: False

    ``foreach``, ``differentiable`` and ``fused`` are accepted for compatibility; there is one implementation.
    Sparse gradients (``nn.Embedding(sparse=True)``) update the rows they hold (without ``weight_decay``); their
    momentum buffer is sparse.

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ember.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        Parameter containing:
        tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _init_state(self, p, group):
        return {} if group["momentum"] != 0 else None

    def _update(self, p, grad, state, group):
        param, g = _real(p._data), _real(grad._data)
        momentum = group["momentum"]
        buf, first = None, False
        if momentum != 0:
            kept = state.get("momentum_buffer")
            first = kept is None
            if first:  # set to the gradient by this step
                kept = state["momentum_buffer"] = Tensor._make(p._data.copy(), p.dtype, p.device)
            buf = _real(kept._data)
        options = (_to_scalar(group["lr"]), momentum, group["dampening"], group["weight_decay"])
        flags = (group["nesterov"], group["maximize"], first)
        fused = None
        if isinstance(param, np.ndarray) and param.dtype in _FUSED_DTYPES and g.dtype == param.dtype and \
                param.flags.c_contiguous and g.flags.c_contiguous and (buf is None or buf.flags.c_contiguous):
            fused = compiled.kernel("sgd", param.size)
        if fused is None:
            _step_numpy(_xp(p), param, g, buf, *options, *flags)
        else:
            flat = param.reshape(-1)
            fused(flat, g.reshape(-1), flat if buf is None else buf.reshape(-1), *map(param.dtype.type, options),
                  *flags)


    def _update_sparse(self, p, grad, state, group):
        if group["weight_decay"] != 0:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        momentum = group["momentum"]
        with no_grad():
            g = -grad if group["maximize"] else grad
            if momentum != 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.detach().clone()
                else:  # kept coalesced: one entry per row, however many steps it spans
                    buf = state["momentum_buffer"] = (buf * momentum).add(g, alpha=1 - group["dampening"]).coalesce()
                g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
        index, values = _sparse_grad(g, False)
        param = p._data
        param[index] += values * _alpha(param, -_to_scalar(group["lr"]))


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _step_numpy(xp, param, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """One SGD step of ``param`` in place (the reference of ``compiled.sgd``): ``buf`` is the momentum buffer, set
    to the gradient on the ``first`` step. Each op computes in float32 for halves, rounding once."""
    dt = _opmath(param)
    if maximize:
        g = -g
    if weight_decay != 0:
        g = xp.add(g, xp.multiply(param, _alpha(param, weight_decay), dtype=dt)).astype(param.dtype, copy=False)
    if momentum != 0:
        if first:
            buf[...] = g
        else:
            xp.multiply(buf, momentum, out=buf, dtype=dt)
            xp.add(buf, g if dampening == 0 else xp.multiply(g, _alpha(g, 1 - dampening), dtype=dt), out=buf,
                   dtype=dt)
        if nesterov:
            g = xp.add(g, xp.multiply(buf, _alpha(buf, momentum), dtype=dt)).astype(param.dtype, copy=False)
        else:
            g = buf
    xp.subtract(param, xp.multiply(g, _alpha(param, lr), dtype=dt), out=param, dtype=dt)
