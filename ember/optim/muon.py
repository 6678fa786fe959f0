"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration, for 2-D parameters."""
import math

from .._creation import zeros_like
from .._tensor import Tensor
from .optimizer import Optimizer, _lr, _to_scalar, _xp

__all__ = ["Muon"]

# Keller Jordan's constants (https://kellerjordan.github.io/posts/muon/), as torch
EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(xp, x):
    """float32 ``x`` rounded to the nearest bfloat16 (ties to even), kept in float32."""
    u = x.view(xp.uint32)
    u = u + (xp.uint32(0x7FFF) + ((u >> 16) & xp.uint32(1)))
    return (u & xp.uint32(0xFFFF0000)).view(xp.float32)


def _lerp(xp, start, end, weight):
    """``start + weight * (end - start)`` as torch's CPU kernel: one of its two formulas, the weight in the dtype of
    ``start``, and one rounding after the difference (a fused multiply-add; through float64 for float32)."""
    w = start.dtype.type(weight)
    diff = (end - start).astype(xp.float64)
    out = start + float(w) * diff if abs(w) < 0.5 else end - float(1 - w) * diff
    return out.astype(start.dtype)


def _addmm(xp, c, a, b, beta, alpha=1.0):
    """bfloat16 ``beta * c + alpha * (a @ b)`` rounded as torch's CPU kernel: the product accumulated and scaled in
    float32, then ``beta * c`` added with one rounding (a fused multiply-add)."""
    acc = a @ b
    if alpha != 1:
        acc *= xp.float32(alpha)
    return _bf16(xp, (c.astype(xp.float64) * float(xp.float32(beta)) + acc).astype(xp.float32))


def _zeropower_via_newtonschulz(xp, grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton-Schulz iteration towards ``U V^T`` of ``grad = U S V^T``, in bfloat16 as torch computes
    it: every op computes in float32 and rounds its result to bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(xp, grad.astype(xp.float32))  # float64 reaches bfloat16 through float32, as in torch
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp, xp.sqrt(xp.sum(x * x, dtype=xp.float32)))
    x = _bf16(xp, x / xp.maximum(norm, _bf16(xp, xp.float32(eps))))  # spectral norm at most 1
    for _ in range(ns_steps):
        gram = _bf16(xp, x @ x.T)
        x = _addmm(xp, x, _addmm(xp, gram, gram, gram, b, c), x, a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, A / B))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(A, B))
    return lr


class Muon(Optimizer):
    """Muon, as ``torch.optim.Muon``: SGD momentum (Nesterov by default) whose update is orthogonalized by
    ``ns_steps`` Newton-Schulz iterations in bfloat16, with decoupled weight decay. Only for 2-D parameters; use
    e.g. AdamW for biases, embeddings and other parameters.

    Args:
        params (iterable): 2-D parameters or param groups to optimize.
        lr (float): learning rate. Default: 1e-3
        weight_decay (float): decoupled weight decay (``param *= 1 - lr * weight_decay``). Default: 0.1
        momentum (float): momentum factor. Default: 0.95
        nesterov (bool): Nesterov momentum. Default: True
        ns_coefficients (Tuple[float, float, float]): coefficients ``(a, b, c)`` of the quintic Newton-Schulz
            polynomial. Default: (3.4445, -4.7750, 2.0315)
        eps (float): floor of the norm the update is first divided by. Default: 1e-7
        ns_steps (int): Newton-Schulz iterations. Default: 5
        adjust_lr_fn (str, optional): scaling of ``lr`` by the shape ``(A, B)``: ``'original'``
            (``sqrt(max(1, A / B))``, the default) or ``'match_rms_adamw'`` (``0.2 * sqrt(max(A, B))``).

    Example::

        >>> w = ember.nn.Parameter(ember.eye(2))
        >>> opt = ember.optim.Muon([w], lr=0.1, weight_decay=0.0)
        >>> w.grad = ember.tensor([[1.0, 0.0], [0.0, 0.0]])
        >>> opt.step()
        >>> w.detach()
        tensor([[0.9312, 0.0000],
                [0.0000, 1.0000]])
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        return {"momentum_buffer": zeros_like(p)}

    def _update(self, p, grad, state, group):
        xp = _xp(p)
        param, g = p._data, grad._data
        if g.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        momentum, lr = group["momentum"], _lr(group)
        buf = state["momentum_buffer"]._data
        buf[...] = _lerp(xp, buf, g, 1 - momentum)
        update = _lerp(xp, g, buf, momentum) if group["nesterov"] else buf
        update = _zeropower_via_newtonschulz(xp, update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        param *= 1 - lr * group["weight_decay"]
        update = update.astype(param.dtype, copy=False)  # a float64 parameter adds bfloat16 values exactly
        update *= -_adjust_lr(lr, group["adjust_lr_fn"], param.shape)
        param += update
