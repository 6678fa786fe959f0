"""The backward pass: walks the recorded graph from the outputs, freeing it as it goes."""
from . import function as _fn
from .grad_mode import STATE, no_grad, set_grad_enabled

ANOMALY = [False]


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _seed_grads(outputs, grad_outputs, create_graph):
    from .._creation import ones_like
    Tensor = _fn.Tensor
    grads = list(_as_tuple(grad_outputs)) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got {len(grads)} gradients "
                           f"for {len(outputs)} outputs")
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward expects Tensors, got {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(out)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                               f"has a shape of {tuple(out.shape)}.")
        grads[i] = g if create_graph else g.detach()
    return grads


def _reduce_to(g, meta):
    shape, dtype = meta
    if g.shape != shape:
        from .._ops.view import sum_to_size
        g = sum_to_size(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _needed_nodes(roots, targets):
    """Nodes from which some target (a leaf Tensor or a (node, nr) pair's node) is reachable."""
    Tensor = _fn.Tensor
    target_nodes = {t[0] for t in targets if not isinstance(t[0], Tensor)}
    target_leaves = {id(t[0]) for t in targets if isinstance(t[0], Tensor)}
    needed, done = set(), set()
    stack = [(n, False) for n in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            for e in node._edges:
                if e is not None and (id(e[0]) in target_leaves if isinstance(e[0], Tensor)
                                      else e[0] in needed or e[0] in target_nodes):
                    needed.add(node)
                    break
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        for e in node._edges:
            if e is not None and not isinstance(e[0], Tensor) and e[0] not in done:
                stack.append((e[0], False))
    return needed


def run_backward(outputs, grad_outputs, retain_graph, create_graph, targets=None, accumulate=True):
    """Backpropagates ``grad_outputs`` from ``outputs``. With ``targets`` (a list of edges), returns the gradient
    reaching each target; with ``accumulate``, adds leaf gradients into ``.grad``."""
    Tensor = _fn.Tensor
    outputs = _as_tuple(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _seed_grads(outputs, grad_outputs, create_graph)

    buffers = {}
    captured = {} if targets is not None else None
    target_set = set(targets) if targets is not None else None
    leaf_grads = {}  # id(leaf) -> [leaf, grad] accumulated in this pass
    roots = []

    def send(edge, g):
        node, nr = edge
        if isinstance(node, Tensor):
            if target_set is not None and (node, 0) in target_set:
                prev = captured.get((node, 0))
                captured[(node, 0)] = g if prev is None else prev + g
            if accumulate and (target_set is None or (node, 0) in target_set):
                slot = leaf_grads.get(id(node))
                if slot is None:
                    leaf_grads[id(node)] = [node, g]
                else:
                    slot[1] = slot[1] + g
            return
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * len(node._out_meta)
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    for out, g in zip(outputs, grads):
        edge = (out, 0) if out.grad_fn is None else (out.grad_fn, out._output_nr)
        if edge[0] is not out:
            roots.append(edge[0])
        send(edge, g)

    # Dependency counts over the reachable graph.
    deps = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for e in node._edges:
            if e is not None and not isinstance(e[0], Tensor):
                deps[e[0]] = deps.get(e[0], 0) + 1
                if e[0] not in seen:
                    seen.add(e[0])
                    stack.append(e[0])
    needed = _needed_nodes(seen, targets) if targets is not None else None
    ready = [n for n in set(roots) if deps.get(n, 0) == 0]

    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            gs = buffers.pop(node, None) or [None] * len(node._out_meta)
            if node._pre_hooks:
                gs = _run_pre_hooks(node, gs)
            if target_set is not None:
                for nr in range(len(gs)):
                    if (node, nr) in target_set and gs[nr] is not None:
                        captured[(node, nr)] = gs[nr]
                if node not in needed:
                    continue
            result = _call_backward(node, gs)
            if not retain_graph:
                if node._saved is not None:
                    node._freed = True
                node._saved = None
            for e, g, meta in zip(node._edges, result, node._in_meta):
                if e is None:
                    continue
                if g is not None:
                    send(e, _reduce_to(g, meta))
                n = e[0]
                if not isinstance(n, Tensor):
                    left = deps[n] - 1
                    deps[n] = left
                    if left == 0:
                        ready.append(n)

    if accumulate:
        taken = list(grads)  # gradients .grad must not alias: the caller's, or one already given to another leaf
        for leaf, g in leaf_grads.values():
            _accumulate_leaf(leaf, g, create_graph, taken)
    return captured


def _run_pre_hooks(node, gs):
    gs = list(gs)
    for nr, hook in list(node._pre_hooks):
        if nr < 0:
            new = hook(tuple(gs))
            if new is not None:
                gs = list(new)
        elif gs[nr] is not None:
            new = hook(gs[nr])
            if new is not None:
                gs[nr] = new
    return gs


def _call_backward(node, gs):
    if node.materialize_grads:
        from .._creation import zeros
        for i, g in enumerate(gs):
            if g is None:
                shape, dtype = node._out_meta[i]
                if dtype.is_floating_point or dtype.is_complex:
                    gs[i] = zeros(shape, dtype=dtype, device=node._device)
    result = type(node).backward(node, *gs)
    result = result if isinstance(result, tuple) else (result,)
    n = len(node._edges)
    if len(result) != n:
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        else:
            raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
    if node._hooks:
        for hook in node._hooks:
            new = hook(result, tuple(gs))
            if new is not None:
                result = tuple(new)
    if ANOMALY[0]:
        for i, g in enumerate(result):
            if g is not None and not bool(g.isfinite().all()):
                what = "nan" if bool(g.isnan().any()) else "inf"
                raise RuntimeError(f"Function '{node.name()}' returned {what} values in its {i}th output.")
    return result


def _accumulate_leaf(leaf, g, create_graph, taken):
    for hook in leaf._hooks or ():
        new = hook(g)
        if new is not None:
            g = new
    if leaf.grad is None:
        if any(g is u for u in taken) or g._base is not None:
            g = g.clone()
        taken.append(g)
        leaf.grad = g if create_graph else g.detach()
    elif create_graph or leaf.grad._requires_grad:
        leaf.grad = leaf.grad + g
    else:
        with no_grad():
            leaf.grad.add_(g)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of ``tensors`` into the ``.grad`` of the graph's leaves (or of ``inputs``)."""
    targets = None
    if inputs is not None:
        targets = [_target(t) for t in _as_tuple(inputs)]
    if targets is not None and any(not isinstance(t[0], _fn.Tensor) for t in targets):
        raise RuntimeError("backward(inputs=...) supports leaf tensors only")
    run_backward(tensors, grad_tensors, retain_graph, create_graph, targets=targets)


def _target(t):
    if not isinstance(t, _fn.Tensor):
        raise TypeError(f"expected Tensors as inputs, got {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return (t, 0) if t.grad_fn is None else (t.grad_fn, t._output_nr)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Computes and returns the gradients of ``outputs`` with respect to ``inputs`` (without touching ``.grad``).

    Example::

        >>> x = ember.tensor(3.0, requires_grad=True)
        >>> (g,) = ember.autograd.grad(x ** 3, x, create_graph=True)
        >>> ember.autograd.grad(g, x)[0]
        tensor(18.)
    """
    single = isinstance(inputs, _fn.Tensor)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    targets = [_target(t) for t in inputs]
    captured = run_backward(outputs, grad_outputs, retain_graph, create_graph, targets=targets, accumulate=False)
    result = []
    for i, (t, tgt) in enumerate(zip(inputs, targets)):
        g = captured.get(tgt)
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors appears to not have been used in the graph. "
                                   f"Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
        elif g.shape != t.shape:
            g = _reduce_to(g, (t.shape, t.dtype))
        result.append(g if g is None or create_graph else g.detach())
    return tuple(result)
