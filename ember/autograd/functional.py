"""Higher-level derivatives of functions, as ``torch.autograd.functional``: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on ``autograd.grad`` (Jacobian-vector products by the double-backward trick); a function's inputs
are detached copies that require grad, so the caller's graph is left alone unless ``create_graph=True``.
"""
from . import function as _fn
from .engine import grad as _grad
from .forward_ad import _jacobian, _linearize
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
    from .._creation import zeros_like
    result = []
    for i, (x, g) in enumerate(zip(inputs, gs)):
        if g is None:
            if strict:
                raise RuntimeError(f"{what} of the user-provided function is independent of input {i}. This is not "
                                   "allowed in strict mode.")
            g = zeros_like(x)
        result.append(g)
    return tuple(result)


def _check_requires_grad(xs, strict, message):
    """With ``strict``, each of ``xs`` must depend on the inputs; ``message`` takes the index."""
    for i, x in enumerate(xs if strict else ()):
        if not x.requires_grad:
            raise RuntimeError(message.format(i))


_OUTPUT_NO_GRAD = ("Output {} of the user-provided function does not require gradients. The outputs must be computed "
                   "in a differentiable manner from the input when running in strict mode.")
_JACOBIAN_NO_GRAD = ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                     "to input {} is independent of the input. This is not allowed in strict mode. You should ensure "
                     "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                     "would be violated by a linear function for example).")


def _check_v(v, other, is_other_tuple, fn):
    """``v`` as a tuple, one tensor per entry of ``other`` with its shape."""
    vs = _as_tuple(v, "v", fn)[1]
    if len(vs) != len(other):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(vs)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(vs, other)):
        if a.shape != b.shape:
            entry = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {b.shape} but got {a.shape}.")
    return vs


def _v_for_single_input(inputs):
    from .._creation import ones_like
    if len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    return (ones_like(inputs[0]),)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs`` with ``v``."""
    from .._creation import ones_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, strict, _OUTPUT_NO_GRAD)
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = (ones_like(outputs[0]),)
        else:
            vs = _check_v(v, outputs, out_tuple, "vjp")
        grads = _grads(outputs, inputs, vs, create_graph, strict)
    return _finish(outputs, create_graph, out_tuple), _finish(grads, create_graph, in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by differentiating a vector-Jacobian product with
    respect to its vector (the double-backward trick).

    Example::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.autograd.functional.jvp(lambda x: x ** 2, x, ember.ones(2))[1]
        tensor([2., 4.])
    """
    from .._creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        vs = _v_for_single_input(inputs) if v is None else _check_v(v, inputs, in_tuple, "jvp")
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, strict, _OUTPUT_NO_GRAD)
        # J^T u is linear in u, so the value of u does not matter; zeros keep inf and nan out
        us = tuple(zeros_like(o).requires_grad_() for o in outputs)
        vjps = _grads(outputs, inputs, us, True, strict)
        _check_requires_grad(vjps, strict, "The gradient with respect to input {} is independent of the inputs of "
                                           "the user-provided function. This is not allowed in strict mode.")
        grads = _grads(vjps, us, vs, create_graph, strict, what="The jvp")
    return _finish(outputs, create_graph, out_tuple), _finish(grads, create_graph, out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (tuples only where ``inputs`` / the outputs are tuples).

    ``strategy="reverse-mode"`` takes one backward pass per output element; ``"forward-mode"`` (which needs
    ``vectorize=True``, as in torch) one Jacobian-vector product per input element. ``vectorize`` only selects what
    torch allows: ember loops in both cases.
    """
    from .. import stack, zeros
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("ember.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, strict, _OUTPUT_NO_GRAD)
        if vectorize and strict:
            raise RuntimeError("ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outputs):
            flat = out.reshape(-1)
            rows = [_grads((flat[k],), inputs, (None,), create_graph, strict, what=f"Output {i}")
                    for k in range(flat.numel())]
            per_input = [stack([r[j] for r in rows]).reshape(out.shape + x.shape) if rows
                         else zeros(out.shape + x.shape, dtype=x.dtype, device=x.device) for j, x in enumerate(inputs)]
            jac.append(_finish(per_input, create_graph, in_tuple))
    return tuple(jac) if out_tuple else jac[0]


def _jacfwd(func, inputs, strict, vectorize):
    if strict:
        raise RuntimeError('ember.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                  "implemented for `vectorize=True`.")
    with enable_grad():
        inputs = tuple(x.view_as(x) if x.requires_grad else x.detach().requires_grad_() for x in inputs)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs", "jacobian")
    jac = [[j.detach() for j in row] for row in _jacobian(_linearize(outputs, inputs), outputs, inputs)]
    jac = [j if in_tuple else j[0] for j in jac]
    return jac if out_tuple else jac[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar ``func`` at ``inputs``: shape ``inputs[i].shape + inputs[j].shape`` for each pair.
    ``outer_jacobian_strategy`` is the strategy of the Jacobian of the gradient (see :func:`jacobian`)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*xs):
        out_tuple, out = _as_tuple(func(*xs), "outputs of the user-provided function", "hessian")
        _check_requires_grad(out, strict, _OUTPUT_NO_GRAD)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out[0].squeeze()

    def gradient(*xs):
        jac = jacobian(scalar, xs, create_graph=True)
        _check_requires_grad(jac, strict, _JACOBIAN_NO_GRAD)
        return jac

    hess = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                    strategy=outer_jacobian_strategy)
    return hess if in_tuple else hess[0][0]


def _scalar_output(func, inputs, strict, fn):
    """``func(*inputs)``, checked to be one tensor with one element."""
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
    _check_requires_grad(outputs, strict, _OUTPUT_NO_GRAD)
    if out_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")
    return outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for scalar ``func`` with Hessian ``H``."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        vs = _v_for_single_input(inputs) if v is None else _check_v(v, inputs, in_tuple, "vhp")
        outputs = _scalar_output(func, inputs, strict, "vhp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, strict, _JACOBIAN_NO_GRAD)
        grads = _grads(jac, inputs, vs, create_graph, strict, what="The jacobian")
    return _finish(outputs, create_graph, False), _finish(grads, create_graph, in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for scalar ``func`` with Hessian ``H``, by the double-backward trick on the
    gradient.

    Example::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.autograd.functional.hvp(lambda x: (x ** 3).sum(), x, ember.ones(2))[1]
        tensor([ 6., 12.])
    """
    from .._creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        vs = _v_for_single_input(inputs) if v is None else _check_v(v, inputs, in_tuple, "hvp")
        outputs = _scalar_output(func, inputs, strict, "hvp")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, strict, _JACOBIAN_NO_GRAD)
        us = tuple(zeros_like(x).requires_grad_() for x in inputs)
        double_back = _grads(jac, inputs, us, True, False)
        grads = _grads(double_back, us, vs, create_graph, strict, what="The hessian")
    return _finish(outputs, create_graph, False), _finish(grads, create_graph, in_tuple)
