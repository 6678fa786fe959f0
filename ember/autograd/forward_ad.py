"""Forward-mode AD, as ``torch.autograd.forward_ad``: dual tensors and their tangents, emulated on reverse mode.

A dual tensor is an alias of its primal that the autograd graph records: the output of a :class:`_Dual` node over an
anchor (a view of the primal when it requires grad, else a detached leaf that requires grad), so that in-place ops on
the dual move it along the graph; the open level keeps the anchor's tangent. ``unpack_dual(y)`` finds the level's dual
tensors
that ``y``'s graph reaches and computes ``sum_i J_i v_i`` by the double-vjp construction of :func:`_linearize`. The
result is exact, and differentiable (it builds a graph) where something else in ``y``'s graph requires grad or a
tangent does, so tangents mix with ordinary autograd. Unlike torch, the ops must record a graph: duals require grad,
and :func:`make_dual` refuses to run under ``no_grad``.
"""
from collections import namedtuple

from . import function as _fn
from .engine import grad as _grad
from .grad_mode import _DecoratorContextManager, enable_grad, is_grad_enabled

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "Namedtuple returned by :func:`unpack_dual`: the primal and the tangent of a dual tensor."

# The open level (torch allows one): {anchor's grad_fn, or id(anchor) for a leaf: (anchor, tangent)}.
_LEVELS = []


class _Dual(_fn.Function):
    """The identity, sharing memory: a dual tensor's own node over its anchor."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def _linearize(outputs, inputs):
    """The linear map from tangents of ``inputs`` (None for a zero tangent) to the tangents of ``outputs`` (None for
    an output that does not depend on them), by the double-vjp construction: with a dummy cotangent ``u`` per output,
    ``g(u) = J^T u`` is built with a graph, is linear in ``u``, and ``J v = d<g(u), v>/du``. The map can be called
    repeatedly; ``create_graph`` makes its results differentiable. ``u`` is ones, not zeros: backward formulas that
    take ``log|grad|`` (logcumsumexp) are not differentiable at a zero gradient."""
    from .._creation import ones_like
    diff = [o.requires_grad and o.dtype.is_floating_point for o in outputs]
    outs = [o for o, d in zip(outputs, diff) if d]
    with enable_grad():
        us = [ones_like(o).requires_grad_() for o in outs]
        gs = _grad(outs, inputs, us, create_graph=True, allow_unused=True) if outs else [None] * len(inputs)

    def jvp(tangents, create_graph=False):
        live = [(g, v) for g, v in zip(gs, tangents) if g is not None and g.requires_grad and v is not None]
        got = iter(_grad([g for g, _ in live], us, [v for _, v in live], retain_graph=True,
                         create_graph=create_graph, allow_unused=True) if live else [None] * len(us))
        return [next(got) if d else None for d in diff]
    return jvp


def _jacobian(lin, outputs, inputs, create_graph=False):
    """``[[d outputs[i] / d inputs[j]]]`` (shapes ``outputs[i].shape + inputs[j].shape``) from the linear map
    ``lin`` of :func:`_linearize`, one Jacobian-vector product per input element."""
    from .._creation import zeros, zeros_like
    from .._ops.shape import stack
    cols = [[[] for _ in inputs] for _ in outputs]  # cols[i][j]: d outputs[i] / d inputs[j][k], one per element k
    for j, x in enumerate(inputs):
        for k in range(x.numel()):
            basis = zeros(x.numel(), dtype=x.dtype, device=x.device)
            basis[k] = 1
            tangents = [None] * len(inputs)
            tangents[j] = basis.view(x.shape)
            for i, (o, t) in enumerate(zip(outputs, lin(tangents, create_graph))):
                cols[i][j].append(zeros_like(o) if t is None else t)
    return [[stack(c, -1).reshape(o.shape + x.shape) if c else zeros(o.shape + x.shape, dtype=o.dtype,
                                                                      device=o.device)
             for c, x in zip(cols_i, inputs)] for o, cols_i in zip(outputs, cols)]


def _current(level):
    """The duals of level ``level`` (None: the open one), or None where that level is not open."""
    return _LEVELS[-1] if _LEVELS and level in (None, 0) else None


def _reach(tensor, duals):
    """The entries of ``duals`` that ``tensor``'s graph reaches, and whether it also reaches a leaf requiring grad
    that is not a dual."""
    if tensor.grad_fn is None:
        entry = duals.get(id(tensor))
        return ([entry] if entry else []), tensor.requires_grad and not entry
    found, other, seen, stack = [], False, set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node in duals:
            found.append(duals[node])
        for e in node._edges:
            if e is None:
                continue
            nxt = e[0]
            key = id(nxt) if isinstance(nxt, _fn.Tensor) else nxt  # a leaf, or a node
            if key in seen:
                continue
            seen.add(key)
            if key is nxt:
                stack.append(nxt)
            elif key in duals:
                found.append(duals[key])
            else:
                other = True
    return found, other


def _check_tangent(primal, tangent):
    """torch's checks of a (primal, tangent) pair; complex ones are refused (the construction assumes real)."""
    if not (primal.is_floating_point() or primal.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {primal.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if primal.is_complex() or tangent.is_complex():
        raise NotImplementedError("ember's forward AD supports real floating point tensors only")
    if tangent.shape != primal.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(primal.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")


def enter_dual_level():
    """Opens a forward-AD level and returns its index (0: levels do not nest, as in torch)."""
    if _LEVELS:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVELS.append({})
    return 0


def exit_dual_level(*, level=None):
    """Closes the forward-AD level; its dual tensors lose their tangents."""
    if not _LEVELS:
        raise RuntimeError("Dual level must be a positive number.")
    if level is not None and level != 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _LEVELS.pop()


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: an alias of ``tensor`` carrying ``tangent`` until the level exits.

    Example::

        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))
        ...     fwAD.unpack_dual((x ** 2).sum()).tangent
        tensor(2.)
    """
    duals = _current(level)
    if duals is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_tangent(tensor, tangent)
    if not is_grad_enabled():
        raise RuntimeError("make_dual: ember computes forward gradients with the autograd graph, which is not "
                           "recorded under no_grad")
    if tensor.requires_grad and _reach(tensor, duals)[0]:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           "level 0 is not supported.")
    if tangent.stride() != tensor.stride():  # the tangent takes the primal's layout (a copy), as in torch
        from .._creation import empty_strided
        tangent = empty_strided(tensor.shape, tensor.stride(), dtype=tangent.dtype,
                                device=tangent.device).copy_(tangent)
    anchor = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_()
    duals[anchor.grad_fn if anchor.grad_fn is not None else id(anchor)] = (anchor, tangent)
    dual = _Dual.apply(anchor)
    dual._vc = anchor._vc  # the primal's version counter, as a view's
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: its value and its forward gradient at the level (None when it depends on
    no dual tensor of the level)."""
    duals = _current(level)
    if not duals or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    found, other = _reach(tensor, duals)
    if not found:
        return UnpackedDualTensor(tensor, None)
    primal = tensor if other else tensor.detach()
    if type(tensor.grad_fn) is _Dual and len(found) == 1:  # a dual tensor not written in place since make_dual
        return UnpackedDualTensor(primal, found[0][1])
    graph = is_grad_enabled() and (other or any(v.requires_grad for _, v in found))
    (tangent,) = _linearize([tensor], [d for d, _ in found])([v for _, v in found], graph)
    if tangent is None:
        from .._creation import zeros_like
        tangent = zeros_like(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) for forward AD: dual tensors made inside keep their tangents until it exits.

    Example::

        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(ember.tensor(3.0), ember.tensor(1.0)).exp()
        ...     fwAD.unpack_dual(y).tangent
        tensor(20.0855)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
