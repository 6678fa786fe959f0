"""Higher-level derivatives of functions, as ``torch.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on ``autograd.grad``; a function's inputs are detached copies that require grad, so the caller's
graph is left alone unless ``create_graph=True``.
"""
from . import function as _fn
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, arg, fn):
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, _fn.Tensor):
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the value at "
                            f"index {i} has type {type(t)}.")
    return is_tuple, xs


def _prepare(inputs, create_graph):
    """Inputs the function is differentiated at: views that keep the caller's graph with create_graph, detached
    leaves otherwise."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_() for x in inputs)


def _finish(xs, create_graph, is_tuple):
    xs = tuple(x if x is None or create_graph else x.detach() for x in xs)
    return xs if is_tuple else xs[0]


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what="The output"):
    """``grad`` with unused inputs as zeros (or an error with ``strict``)."""
    needed = [o for o in outputs if o.requires_grad]
    if needed:
        gos = [g for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        gs = _grad(needed, inputs, gos, retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    result = []
    for i, (x, g) in enumerate(zip(inputs, gs)):
        if g is None:
            if strict:
                raise RuntimeError(f"{what} of the user-provided function is independent of input {i}. This is not "
                                   "allowed in strict mode.")
            from .._creation import zeros_like
            g = zeros_like(x)
        result.append(g)
    return tuple(result)


def _check_v(v, outputs, fn):
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        from .._creation import ones_like
        return (ones_like(outputs[0]),)
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(outputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, outputs)):
        if a.shape != b.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}.")
    return vs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs`` with ``v``."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        vs = _check_v(v, outputs, "vjp")
        grads = _grads(outputs, inputs, vs, create_graph, strict)
    return _finish(outputs, create_graph, out_tuple), _finish(grads, create_graph, in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by differentiating a vector-Jacobian product with
    respect to its vector (the double-backward trick)."""
    from .._creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            from .._creation import ones_like
            vs = (ones_like(inputs[0]),)
        else:
            vs = _as_tuple(v, "v", "jvp")[1]
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        us = tuple(zeros_like(o).requires_grad_() for o in outputs)
        vjps = _grads(outputs, inputs, us, True, strict)
        grads = _grads(vjps, us, vs, create_graph, strict, what="The jvp")
    return _finish(outputs, create_graph, out_tuple), _finish(grads, create_graph, out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (tuples only where ``inputs`` / the outputs are tuples)."""
    from .. import stack
    if strategy != "reverse-mode":
        raise NotImplementedError("ember computes Jacobians in reverse mode only")
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        jac = []
        for i, out in enumerate(outputs):
            flat = out.reshape(-1)
            rows = [_grads((flat[k],), inputs, (None,), create_graph, strict, what=f"Output {i}")
                    for k in range(flat.numel())]
            per_input = []
            for j, x in enumerate(inputs):
                if rows:
                    block = stack([r[j] for r in rows]).reshape(tuple(out.shape) + tuple(x.shape))
                else:
                    from .._creation import zeros
                    block = zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
                per_input.append(block)
            jac.append(_finish(per_input, create_graph, in_tuple))
    return tuple(jac) if out_tuple else jac[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar ``func`` at ``inputs``: shape ``inputs[i].shape + inputs[j].shape`` for each pair."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar(*xs):
        out = func(*xs)
        if isinstance(out, tuple) or not isinstance(out, _fn.Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return out.reshape(())

    def gradient(*xs):
        return jacobian(scalar, xs, create_graph=True, strict=strict)

    hess = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return hess if in_tuple else hess[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for scalar ``func`` with Hessian ``H``."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vhp")
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor with a single element.")
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            from .._creation import ones_like
            vs = (ones_like(inputs[0]),)
        else:
            vs = _as_tuple(v, "v", "vhp")[1]
        jac = _grads(outputs, inputs, (None,), True, strict)
        grads = _grads(jac, inputs, vs, create_graph, strict, what="The jacobian")
    return _finish(outputs, create_graph, out_tuple), _finish(grads, create_graph, in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for scalar ``func``; the Hessian is symmetric, so this is ``vhp``."""
    return vhp(func, inputs, v, create_graph, strict)
