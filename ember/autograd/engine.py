"""The backward pass: walks the recorded graph from the outputs in dependency order, freeing it as it goes."""
import contextlib
import itertools
import warnings

from .. import _autocast
from . import function as _fn
from .function import ANOMALY
from .grad_mode import STATE, grad_enabled, no_grad


def _as_tuple(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, _fn.Tensor) else tuple(x)  # any iterable, as torch: module.parameters()


def _seed_grads(outputs, grad_outputs, create_graph):
    Tensor = _fn.Tensor
    grads = list(grad_outputs) if grad_outputs else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward expects Tensors, got {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{out.dtype}")
            one = _fn.array_module(out.device).array(1, out._data.dtype)  # cheaper than ones_like
            g = Tensor._make(one.reshape(out._data.shape) if out._data.ndim else one, out.dtype, out.device)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
        else:
            if g.shape != out.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                                   f"has a shape of {out.shape}.")
            if g.dtype is not out.dtype:
                if g.dtype.is_complex or out.dtype.is_complex:
                    raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the "
                                       f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} "
                                       f"and output[{i}] has a dtype of {out.dtype}.")
                g = g.to(out.dtype)
            if not create_graph:
                g = g.detach()
        grads[i] = g
    return grads


def _expandable(shape, to):
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _validate(node, i, g, shape, dtype):
    """What torch's engine does to each gradient a node returns: sum it back over broadcast dimensions to the
    input's shape and cast it to the input's dtype."""
    gshape = g._data.shape
    if gshape != shape:
        if not _expandable(shape, gshape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                               f"{list(gshape)} but expected shape compatible with {list(shape)}")
        from .._ops.view import sum_to_size
        g = sum_to_size(g, shape)
    if g.dtype is not dtype:
        g = (g.real if g.dtype.is_complex and not dtype.is_complex else g).to(dtype)  # torch: real part, no warning
    return g


def _run_tensor_hooks(hooks, g):
    for hook in hooks:
        new = hook(g)
        if new is not None:
            name = getattr(hook, "__name__", type(hook).__name__)
            if new.dtype is not g.dtype:
                raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.type()} got {new.type()})")
            if new.shape != g.shape:
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            g = new
    return g


def _tensor_pre_hooks(node, gs):
    """Hooks registered on the node's output Tensors, then their retain_grad, as torch orders them."""
    gs = list(gs)
    for nr, hook in list(node._tensor_pre_hooks or ()):
        if gs[nr] is not None:
            gs[nr] = _run_tensor_hooks((hook,), gs[nr])
    for nr, ref in list((node._retain or {}).items()):
        t = ref()
        if t is not None and gs[nr] is not None and t.grad_fn is node:
            t.grad = gs[nr].clone() if t.grad is None else t.grad + gs[nr]
    return gs


def _needed_nodes(roots, node_targets, leaf_targets):
    """{node: whether it must run}: a node runs when a target lies below it (a leaf target on one of its edges, or
    a node target at or below one of its next nodes). A target node itself only has its gradient captured."""
    Tensor = _fn.Tensor
    needed = {}
    for root in roots:
        if root in needed:
            continue
        stack = [(root, iter(root._edges))]
        flags = [False]
        while stack:
            node, it = stack[-1]
            for e in it:
                if e is None:
                    continue
                n = e[0]
                if isinstance(n, Tensor):
                    if id(n) in leaf_targets:
                        flags[-1] = True
                elif n in needed:
                    if needed[n] or n in node_targets:
                        flags[-1] = True
                else:
                    stack.append((n, iter(n._edges)))
                    flags.append(False)
                    break
            else:
                stack.pop()
                f = flags.pop()
                needed[node] = f
                if flags and (f or node in node_targets):
                    flags[-1] = True
    return needed


_TASK_IDS = itertools.count()


def _will_execute(task, node):
    """Whether the backward ``task`` runs ``node`` (a Function, or a leaf's AccumulateGrad) or captures its
    gradient."""
    _, outputs, node_targets, leaf_targets, needed, reached = task
    if reached[0] is None:
        reached[0] = _reachable(outputs)
    if isinstance(node, _fn.AccumulateGrad):
        leaf = id(node.variable)
        return leaf in reached[0] and (leaf_targets is None or leaf in leaf_targets)
    return node in reached[0] and (needed is None or needed[node] or node in node_targets)


def _reachable(outputs):
    """The nodes reachable from ``outputs`` and the ids of the leaves they lead to (or are)."""
    Tensor = _fn.Tensor
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    seen = set(stack) | {id(o) for o in outputs if o.grad_fn is None}
    while stack:
        for e in stack.pop()._edges:
            if e is not None:
                n = e[0]
                key = id(n) if isinstance(n, Tensor) else n
                if key not in seen:
                    seen.add(key)
                    if not isinstance(n, Tensor):
                        stack.append(n)
    return seen


# The running backwards, innermost last, as hooks may ask about them:
# (id, outputs, node_targets, leaf_targets, needed, [nodes and leaf ids reached, computed on demand]).
_TASKS = []


def _current_graph_task_id():
    """The id of the innermost running backward, or -1 outside backward."""
    return _TASKS[-1][0] if _TASKS else -1


def _will_engine_execute_node(node):
    """Whether the running backward will execute ``node`` (from a hook inside it)."""
    if not _TASKS:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return _will_execute(_TASKS[-1], node)


def run_backward(outputs, grad_outputs, retain_graph, create_graph, targets=None, accumulate=True):
    """Backpropagates ``grad_outputs`` from ``outputs``.

    ``targets``: None (every leaf) or Tensors whose gradients are wanted; only the part of the graph leading to them
    runs. With ``accumulate``, gradients are added into the ``.grad`` of the leaves (or of the targets). Returns
    ``{id(target): gradient}``.
    """
    Tensor = _fn.Tensor
    outputs = _as_tuple(outputs)
    grads = _seed_grads(outputs, _as_tuple(grad_outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph

    node_targets, leaf_targets = {}, None
    if targets is not None:
        leaf_targets = {}
        for t in targets:
            if t.grad_fn is None:
                leaf_targets[id(t)] = t
            else:
                node_targets.setdefault(t.grad_fn, []).append(t)

    buffers = {}  # node -> gradient per output, summed as they arrive
    leaf_grads = {}  # id(leaf) -> [leaf, summed gradient]
    captured = {}
    roots = []
    for out, g in zip(outputs, grads):
        fn = out.grad_fn
        if fn is None:
            _add_leaf(leaf_grads, leaf_targets, out, g)
            continue
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * len(fn._out_meta)
            roots.append(fn)
        nr = out._output_nr
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    # How many edges lead into each node from the part of the graph reachable from the roots.
    deps = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        for e in stack.pop()._edges:
            if e is not None:
                n = e[0]
                if not isinstance(n, Tensor):
                    deps[n] = deps.get(n, 0) + 1
                    if n not in seen:
                        seen.add(n)
                        stack.append(n)
    needed = _needed_nodes(roots, node_targets, leaf_targets) if targets is not None else None
    ready = [n for n in roots if n not in deps] if len(roots) > 1 else roots  # a lone root has no dependency

    prev = grad_enabled()
    STATE.enabled = create_graph
    autocast = _autocast.ACTIVE.set(None)  # backward ops run in forward's dtypes
    _TASKS.append((next(_TASK_IDS), outputs, node_targets, leaf_targets, needed, [None]))
    try:
        while ready:
            node = ready.pop()
            gs = buffers.pop(node, None) or [None] * len(node._out_meta)
            if needed is not None:
                run = needed[node]
                if node in node_targets:
                    if not run and node._hooked and (node._tensor_pre_hooks or node._retain):
                        gs = _tensor_pre_hooks(node, gs)
                    for t in node_targets[node]:
                        captured[id(t)] = (t, gs[t._output_nr])
                if not run:
                    continue
            result = _call_node(node, gs, create_graph)
            if not retain_graph and (node._saved is not None or node._user):
                node._release()
            for e, g in zip(node._edges, result):
                if e is None:
                    continue
                n = e[0]
                if isinstance(n, Tensor):
                    if g is not None:
                        _add_leaf(leaf_grads, leaf_targets, n, g)
                    continue
                if g is not None:
                    buf = buffers.get(n)
                    if buf is None:
                        buf = buffers[n] = [None] * len(n._out_meta)
                    nr = e[1]
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                left = deps[n] - 1
                deps[n] = left
                if left == 0:
                    ready.append(n)

        taken = list(map(id, grads))  # .grad must not alias a caller's tensor or another .grad
        for leaf, g in leaf_grads.values():
            if leaf._hooks:
                g = _run_tensor_hooks(list(leaf._hooks), g)
            if leaf_targets is not None:
                captured[id(leaf)] = (leaf, g)
            elif accumulate:
                _accumulate(leaf, g, create_graph, taken)
                if leaf._post_accumulate_grad_hooks:
                    _post_accumulate(leaf)
        if accumulate and targets is not None:
            for t, g in captured.values():
                if g is not None:
                    _accumulate(t, g, create_graph, taken)
                    if t._post_accumulate_grad_hooks:
                        _post_accumulate(t)
    finally:
        STATE.enabled = prev
        _autocast.ACTIVE.reset(autocast)
        _TASKS.pop()
    return {k: g for k, (t, g) in captured.items()} if captured else captured


def _post_accumulate(leaf):
    for hook in list(leaf._post_accumulate_grad_hooks):
        r = hook(leaf)
        if r is not None and not isinstance(r, _fn.Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


def _add_leaf(leaf_grads, leaf_targets, leaf, g):
    if leaf_targets is not None and id(leaf) not in leaf_targets:
        return
    slot = leaf_grads.get(id(leaf))
    if slot is None:
        leaf_grads[id(leaf)] = [leaf, g]
    else:
        acc = slot[1]
        slot[1] = g + acc if acc.is_sparse else acc + g  # sparse + dense: dense + sparse, as torch sums them


def _conjugates(result):
    if type(result) is not tuple:
        return result.conj() if result is not None else None
    return tuple(None if g is None else g.conj() for g in result)


def _call_backward(node, gs):
    if not ANOMALY[0]:
        return type(node).backward(node, *gs)
    try:
        return type(node).backward(node, *gs)
    except Exception:
        _warn_forward_trace(node)
        raise


def _call_node(node, gs, create_graph):
    if node._hooked:
        gs = _pre_hooks(node, gs)
    if node.materialize_grads:
        for g in gs:
            if g is None:
                gs = _materialize(node, gs)
                break
    if len(gs) == 1 and node.holomorphic and gs[0] is not None and gs[0].dtype.is_complex:
        result = _conjugates(_call_backward(node, [gs[0].conj()]))
    elif ANOMALY[0]:
        result = _call_backward(node, gs)
    elif len(gs) == 1:  # a positional call: unpacking the list costs more than the call
        result = type(node).backward(node, gs[0])
    else:
        result = type(node).backward(node, *gs)
    if type(result) is not tuple:
        result = (result,)
    edges = node._edges
    if len(result) != len(edges):
        result = _extra_gradients(node, result)
    if node._user:
        node._check_grads(result)
    out = result
    try:
        for i, e in enumerate(edges):
            g = result[i]
            if g is not None and e is not None and (g._data.shape != e[2] or g.dtype is not e[3]):
                if out is result:
                    out = list(result)
                out[i] = _validate(node, i, g, e[2], e[3])
    except NotImplementedError:  # a sparse COO gradient (nn.Embedding(sparse=True)) has no dense array
        out = _validate_with_sparse(node, result)
    if node._hooked and node._hooks:
        for hook in list(node._hooks):
            new = hook(tuple(out), tuple(gs))
            if new is not None:
                out = list(new)
    if ANOMALY[0] and ANOMALY[1]:
        for i, g in enumerate(out):
            if g is not None and bool(node.xp.isnan((g._values() if g.is_sparse else g)._data).any()):
                _warn_forward_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return out


def _validate_with_sparse(node, result):
    """``_call_node``'s checks of the gradients ``result`` where some are sparse COO tensors: a sparse one must have
    its input's shape exactly, and is cast to its dtype."""
    out = list(result)
    for i, (e, g) in enumerate(zip(node._edges, result)):
        if g is None or e is None:
            continue
        if g.is_sparse:
            if tuple(g.shape) != tuple(e[2]):
                raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                                   f"{list(g.shape)} but expected shape compatible with {list(e[2])}")
            if g.dtype is not e[3]:
                out[i] = g.to(e[3])
        elif g._data.shape != e[2] or g.dtype is not e[3]:
            out[i] = _validate(node, i, g, e[2], e[3])
    return out


def _extra_gradients(node, result):
    """A backward may return trailing Nones beyond its inputs; any other count is an error."""
    n = len(node._edges)
    if len(result) > n and all(r is None for r in result[n:]):
        return result[:n]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
                       f"got {len(result)})")


def _pre_hooks(node, gs):
    if node._tensor_pre_hooks or node._retain:
        gs = _tensor_pre_hooks(node, gs)
    for hook in list(node._pre_hooks or ()):
        new = hook(tuple(gs))
        if new is not None:
            gs = list(new)
    return gs


def _materialize(node, gs):
    from .._creation import zeros
    gs = list(gs)
    for i, g in enumerate(gs):
        meta = node._out_meta[i]
        if g is None and meta is not None and (node._user or meta[1].is_floating_point or meta[1].is_complex):
            gs[i] = zeros(meta[0], dtype=meta[1], device=node._device)
    return gs


def _warn_forward_trace(node):
    trace = "".join(node._trace) if node._trace else ""
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}",
                  stacklevel=3)


def _accumulate(t, g, create_graph, taken):
    """Adds ``g`` into ``t.grad`` as torch's AccumulateGrad does: the first gradient becomes ``.grad`` (never
    aliasing another tensor), later ones are added in place, or out of place when building a graph."""
    if g.is_sparse or t.grad is not None and t.grad.is_sparse:
        return _accumulate_sparse(t, g, create_graph, taken)
    if t.grad is None:
        if g._data.strides != t._data.strides:
            g = _laid_out_as_leaf(g, t, create_graph)
        if id(g) in taken or g._base is not None or not getattr(g._data.flags, "writeable", True):  # CuPy: no flag
            g = g.clone()
        taken.append(id(g))
        t.grad = g if create_graph else g.detach()
    elif create_graph or t.grad._requires_grad:
        t.grad = t.grad + g
    else:
        grad = t.grad
        acc, new = grad._data, g._data
        same = grad.dtype is g.dtype and grad.device is g.device and acc.shape == new.shape
        if same and getattr(acc.flags, "writeable", True):
            acc += new  # the common case, in place and without dispatch
            grad._vc[0] += 1
        else:
            with no_grad():
                grad.add_(g)


def _accumulate_sparse(t, g, create_graph, taken):
    """``_accumulate`` where ``g`` or ``t.grad`` is a sparse COO tensor (``nn.Embedding(sparse=True)``): a first
    sparse gradient becomes ``.grad`` with values of its own; later sparse ones are appended to a sparse ``.grad``
    or added into a dense one, in place; a dense one makes a sparse ``.grad`` dense."""
    grad = t.grad
    if grad is None:
        from .._sparse import _make
        v = g._values()
        if id(v) in taken or v._base is not None or not getattr(v._data.flags, "writeable", True):
            v = v.clone()
        taken.append(id(v))
        t.grad = _make(g._indices(), v if create_graph else v.detach(), g.shape, g.is_coalesced())
    elif create_graph or grad._requires_grad or not g.is_sparse:
        t.grad = g + grad if grad.is_sparse and not g.is_sparse else grad + g
    elif grad.is_sparse:
        with no_grad():
            grad.add_(g)
    else:
        with no_grad():
            grad.index_put_(tuple(g._indices()), g._values(), accumulate=True)


def _laid_out_as_leaf(g, t, create_graph):
    """``g``, or a copy of it with the strides torch's gradient layout contract gives a first ``.grad`` (those of
    a dense leaf: a Conv2d weight's gradient is contiguous, a channels_last weight's is channels_last)."""
    from .._creation import empty_strided
    from .._ops.memory_format import grad_strides
    strides = grad_strides(g, t)
    if strides is None:
        return g
    with contextlib.nullcontext() if create_graph else no_grad():
        return empty_strided(g.shape, strides, dtype=g.dtype, device=g.device).copy_(g)


def _check_inputs(inputs, api):
    Tensor = _fn.Tensor
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{api}()` cannot be empty.")
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the graph's leaves (or only of ``inputs``).

    Example::

        >>> x = ember.tensor([1., 2.], requires_grad=True)
        >>> ember.autograd.backward((x * x).sum())
        >>> x.grad
        tensor([2., 4.])
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _as_tuple(inputs)
        _check_inputs(inputs, "backward")
    if create_graph:
        warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter "
                      "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
                      "creating the graph to avoid this. If you have to use this function, make sure to reset the "
                      ".grad fields of your parameters to None after use to break the cycle and avoid the leak.",
                      stacklevel=2)
    run_backward(tensors, grad_tensors, retain_graph, create_graph, targets=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Computes and returns the gradients of ``outputs`` with respect to ``inputs`` (without touching ``.grad``).

    With ``create_graph=True`` the gradients are themselves differentiable (higher-order derivatives).

    Example::

        >>> x = ember.tensor(3.0, requires_grad=True)
        >>> (g,) = ember.autograd.grad(x ** 3, x, create_graph=True)
        >>> ember.autograd.grad(g, x)[0]
        tensor(18.)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    inputs = _as_tuple(inputs)
    _check_inputs(inputs, "grad")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    got = run_backward(outputs, grad_outputs, retain_graph, create_graph, targets=inputs, accumulate=False)
    result = []
    for i, t in enumerate(inputs):
        g = got.get(id(t))
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
        else:
            if not g.is_sparse and g._data.strides != t._data.strides:  # laid out as the input, as torch's give
                g = _laid_out_as_leaf(g, t, create_graph)
            if not create_graph:
                g = g.detach()
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``is_grads_batched``: one vector-Jacobian product per slice of the leading dimension of ``grad_outputs``."""
    from .. import stack
    grad_outputs = _as_tuple(grad_outputs)
    n = grad_outputs[0].shape[0]
    rows = [grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=True if b < n - 1 else retain_graph,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(n)]
    return tuple(None if col[0] is None else stack(col) for col in zip(*rows))
