"""Function transforms, as ``torch.func``: functional_call, grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, vmap, functionalize.

They are built on ``ember.autograd`` rather than on functorch's levels: a transform differentiates a function at fresh
copies of its inputs (detached leaves, or views of inputs that already require grad) and builds a graph of the
gradients only where something outside the transform needs it (an input that requires grad, or an enclosing
transform), so transforms nest (``hessian``, ``grad(grad(f))``, ``vmap(grad(f))``). Forward mode (``jvp``,
``linearize``, ``jacfwd``) computes exact Jacobian-vector products with reverse mode, by the double-vjp construction of
``ember.autograd.forward_ad``. ``vmap`` runs the function once per slice and stacks the results rather than batching
the ops, so its cost is a Python loop over the batch.

Inputs and outputs may be tensors or nests (pytrees) of tuples, lists and dicts of them.
"""
import functools

from ._creation import zeros, zeros_like
from ._ops.memory_format import contiguous_format
from ._ops.shape import stack
from ._random import get_rng_state, set_rng_state
from ._tensor import Tensor
from .autograd.engine import grad as _autograd_grad
from .autograd.forward_ad import _check_tangent, _jacobian, _linearize
from .autograd.grad_mode import enable_grad, is_grad_enabled
from .nn.modules.batchnorm import _BatchNorm
from .nn.modules.module import Module
from .nn.utils.stateless import _functional_call

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev",
           "jacfwd", "hessian", "vmap", "functionalize", "replace_all_batch_norm_modules_", "debug_unwrap"]


# -- pytrees: (leaves, spec) with spec None for a leaf, else (type, dict keys or None, child specs) -------------------
def _is_node(tree):
    return type(tree) in (tuple, list, dict) or (isinstance(tree, tuple) and hasattr(tree, "_fields"))


def _children(tree):
    return list(tree.values()) if isinstance(tree, dict) else list(tree)


def _flatten(tree):
    if not _is_node(tree):
        return [tree], None
    leaves, specs = [], []
    for child in _children(tree):
        lv, sp = _flatten(child)
        leaves += lv
        specs.append(sp)
    return leaves, (type(tree), list(tree) if isinstance(tree, dict) else None, specs)


def _unflatten(spec, leaves):
    """The nest of ``spec`` with the values of the iterator ``leaves``."""
    if spec is None:
        return next(leaves)
    kind, keys, specs = spec
    values = [_unflatten(s, leaves) for s in specs]
    if keys is not None:
        return kind(zip(keys, values))
    return kind(*values) if hasattr(kind, "_fields") else kind(values)


def _broadcast(prefix, tree):
    """One entry of ``prefix`` per leaf of ``tree``; an int or None in ``prefix`` stands for a whole subtree."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(_flatten(tree)[0])
    if type(prefix) is not type(tree) or not _is_node(tree) or len(prefix) != len(tree) or (
            isinstance(tree, dict) and set(prefix) != set(tree)):
        raise ValueError
    pairs = [(prefix[k], v) for k, v in tree.items()] if isinstance(tree, dict) else zip(prefix, tree)
    return [d for p, t in pairs for d in _broadcast(p, t)]


# -- functional_call -------------------------------------------------------------------------------------------------
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Calls ``module(*args, **kwargs)`` with the given tensors (by dotted name) in place of its parameters and
    buffers; the module's own tensors are put back afterwards, even on error. Gradients flow to the given tensors.

    Args:
        module (Module): the module to call.
        parameter_and_buffer_dicts (dict or sequence of dicts): ``{name: tensor}``; several dicts are merged (a name
            in two of them raises).
        args (Any or tuple): positional arguments (one that is not a tuple is the single argument).
        kwargs (dict): keyword arguments.
        tie_weights (bool): tied parameters and buffers stay tied (different values for them raise). Default: True
        strict (bool): the names must be exactly the module's parameters and buffers. Default: False

    Example::

        >>> params = {k: v.detach() for k, v in model.named_parameters()}
        >>> out = ember.func.functional_call(model, params, (x,))
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = list(dict.fromkeys(k for k in keys if keys.count(k) > 1))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, tensors, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """The parameters and buffers of ``models`` (same class and mode) stacked along a new first dimension, as two
    dicts for :func:`functional_call` under :func:`vmap` (model ensembling). Stacked parameters are new leaves."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        tables = [dict(t) for t in named]
        out = {}
        for k in tables[0]:
            ts = [t[k] for t in tables]
            if len({t.requires_grad for t in ts}) != 1:
                raise RuntimeError(f"Expected {k} from each model to have the same .requires_grad")
            out[k] = stack(ts).detach().requires_grad_() if ts[0].requires_grad else stack(ts)
        return out
    return (stacked([m.named_parameters() for m in models]), stacked([m.named_buffers() for m in models]))


# -- reverse-mode transforms -----------------------------------------------------------------------------------------
def _diff_args(args, argnums):
    """``args[argnums]`` (a tuple of them for a tuple ``argnums``), checked as torch.func checks it."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(n, int) for n in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for n in nums:
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
    normalized = tuple(n % len(args) for n in nums)
    if len(set(normalized)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {normalized}")
    return args[argnums] if isinstance(argnums, int) else tuple(args[n] for n in nums)


def _with_diff_args(args, argnums, new):
    args = list(args)
    for n, v in zip((argnums,) if isinstance(argnums, int) else argnums, (new,) if isinstance(argnums, int) else new):
        args[n] = v
    return tuple(args)


def _fresh(x):
    """The input a transform differentiates at: a view of ``x`` if it requires grad (so an enclosing graph sees
    through), else a detached leaf."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x.view_as(x) if x.requires_grad else x.detach().requires_grad_()


def _create_graph(outputs, fresh):
    """Whether the gradients need a graph: grad mode is on and the outputs reach a leaf requiring grad other than
    the transform's own fresh leaves (a user's tensor, or an enclosing transform's input)."""
    if not is_grad_enabled():
        return False
    ours = {id(t) for t in fresh}
    nodes = []
    for o in outputs:
        if o.requires_grad:
            if o.grad_fn is None and id(o) not in ours:
                return True
            nodes.append(o.grad_fn)
    seen = set()  # the nodes themselves: a leaf's AccumulateGrad is made on demand, so its id may be reused
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        leaf = getattr(node, "variable", None)
        if leaf is not None and id(leaf) not in ours:
            return True
        nodes.extend(f for f, _ in node.next_functions)
    return False


def _grads(outputs, inputs, grad_outputs, create_graph):
    """d(outputs)/d(inputs) against ``grad_outputs``, zeros where an input is unused."""
    used = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    gs = (_autograd_grad([o for o, _ in used], inputs, [g for _, g in used], retain_graph=True,
                         create_graph=create_graph, allow_unused=True) if used else [None] * len(inputs))
    return [zeros_like(x) if g is None else g for x, g in zip(inputs, gs)]


def _unwrap(tree, create_graph):
    """A transform's value or aux as returned: detached unless a graph is being built."""
    leaves, spec = _flatten(tree)
    return _unflatten(spec, iter(t.detach() if isinstance(t, Tensor) and not create_graph else t for t in leaves))


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def _tensor_leaves(out, api):
    leaves, spec = _flatten(out)
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected f to return a Tensor or a (nested) tuple/list/dict of Tensors, "
                               f"got {type(t)}")
    return leaves, spec


def _call(func, args, kwargs, argnums):
    """Runs ``func`` at fresh copies of its differentiated arguments: (output, fresh leaves, their spec)."""
    leaves, spec = _flatten(_diff_args(args, argnums))
    fresh = [_fresh(x) for x in leaves]
    with enable_grad():
        out = func(*_with_diff_args(args, argnums, _unflatten(spec, iter(fresh))), **kwargs)
    return out, fresh, spec


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, but the returned function gives ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``)."""
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        out, fresh, spec = _call(func, args, kwargs, argnums)
        out, aux = _split_aux(out, has_aux, api)
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with {out.dim()} "
                               "dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        cg = _create_graph([out], fresh)
        g = _unflatten(spec, iter(_grads([out], fresh, [None], cg)))
        value = _unwrap(out, cg)
        return (g, (value, _unwrap(aux, cg))) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of ``func`` (which returns a scalar tensor) with respect to its argument(s) ``argnums``, as a
    function of the same arguments.

    Args:
        func (callable): the function; with ``has_aux`` it returns ``(output, aux)``.
        argnums (int or tuple of ints): which positional arguments to differentiate (each a tensor or a nest of
            them; the gradient has the same structure). Default: 0
        has_aux (bool): ``func`` also returns an auxiliary object, passed through. Default: False

    Example::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.grad(lambda x: (x ** 2).sum())(x)
        tensor([2., 4.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``func(*primals)`` and a function mapping cotangents (the output's structure) to the vector-Jacobian
    products, one per primal: ``(output, vjp_fn)``, or ``(output, vjp_fn, aux)`` with ``has_aux``."""
    api = "vjp(f, *primals)"
    out, fresh, spec = _call(lambda *a: func(*a), primals, {}, tuple(range(len(primals))))
    out, aux = _split_aux(out, has_aux, api)
    outs, out_spec = _tensor_leaves(out, api)
    cg = _create_graph(outs, fresh)

    def vjp_fn(cotangents):
        cts, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               "to the function.")
        return _unflatten(spec, iter(_grads(outs, fresh, cts, cg)))
    result = (_unwrap(out, cg), vjp_fn)
    return result + (_unwrap(aux, cg),) if has_aux else result


def _check_real(tensors, api, what):
    for i, t in enumerate(tensors):
        if isinstance(t, Tensor) and t.is_complex():
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex tensor at flattened input "
                               f"idx: {i}")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to its argument(s) ``argnums``, by reverse mode (one vector-Jacobian
    product per output element): for an output of shape ``S`` and an input of shape ``T``, a tensor of shape
    ``S + T``, nested as the outputs and then as the inputs. ``chunk_size`` is accepted for torch's signature."""
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    api = "jacrev(f, argnums)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_real(_flatten(_diff_args(args, argnums))[0], "jacrev", "inputs")
        out, fresh, spec = _call(func, args, kwargs, argnums)
        out, aux = _split_aux(out, has_aux, api)
        outs, out_spec = _tensor_leaves(out, api)
        _check_real(outs, "jacrev", "outputs")
        cg = _create_graph(outs, fresh)
        jacs = []
        for o in outs:
            rows = []
            for i in range(o.numel()):
                basis = zeros(o.numel(), dtype=o.dtype, device=o.device)
                basis[i] = 1
                rows.append(_grads([o], fresh, [basis.view(o.shape)], cg))
            cols = [stack([r[j] for r in rows]).reshape(o.shape + x.shape) if rows
                    else zeros(o.shape + x.shape, dtype=x.dtype, device=x.device) for j, x in enumerate(fresh)]
            jacs.append(_unflatten(spec, iter(cols)))
        jac = _unflatten(out_spec, iter(jacs))
        return (jac, _unwrap(aux, cg)) if has_aux else jac
    return wrapper


# -- forward-mode transforms ------------------------------------------------------------------------------------------
def _treespec(spec):
    """``spec`` written as torch writes its TreeSpec, for error messages."""
    if spec is None:
        return "*"
    kind, keys, specs = spec
    return f"TreeSpec({kind.__name__}, {keys}, [{', '.join(map(_treespec, specs))}])"


def _forward_outputs(out, api):
    leaves, spec = _flatten(out)
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(t)}")
    return leaves, spec


def _filled(tangents, outputs):
    return [zeros_like(o) if t is None else t for t, o in zip(tangents, outputs)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``func(*primals)`` and its Jacobian-vector product with ``tangents`` (the primals' structure): ``(output,
    jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux``. ``strict`` is accepted for torch's signature.

    Example::

        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.jvp(lambda x: x ** 2, (x,), (ember.ones(2),))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    leaves, spec = _flatten(primals)
    vs, v_spec = _flatten(tangents)
    if v_spec != spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{_treespec(spec)} and tangents with structure {_treespec(v_spec)}")
    if not leaves:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for what, ts in (("primals", leaves), ("tangents", vs)):
        for t in ts:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{api}: Expected {what} to only contain Tensors, got {type(t)}")
    for p, v in zip(leaves, vs):
        _check_tangent(p, v)
    fresh = [_fresh(x) for x in leaves]
    with enable_grad():
        out = func(*_unflatten(spec, iter(fresh)))
    out, aux = _split_aux(out, has_aux, api)
    outs, out_spec = _forward_outputs(out, api)
    cg = _create_graph(outs, fresh) or is_grad_enabled() and any(v.requires_grad for v in vs)
    jv = _filled(_linearize(outs, fresh)(vs, cg), outs)
    result = (_unwrap(out, cg), _unflatten(out_spec, iter(jv)))
    return result + (_unwrap(aux, cg),) if has_aux else result


def linearize(func, *primals):
    """``func(*primals)`` and a function mapping tangents (the primals' structure, as positional arguments) to the
    Jacobian-vector products: ``(output, jvp_fn)``. ``func`` runs once; each ``jvp_fn`` call costs one backward pass.

    Example::

        >>> out, jvp_fn = ember.func.linearize(ember.sin, ember.zeros(2))
        >>> jvp_fn(ember.tensor([1.0, 2.0]))
        tensor([1., 2.])
    """
    leaves, spec = _flatten(primals)
    fresh = [_fresh(x) for x in leaves]
    with enable_grad():
        out = func(*_unflatten(spec, iter(fresh)))
    outs, out_spec = _forward_outputs(out, "linearize(f, *primals)")
    cg = _create_graph(outs, fresh)
    lin = _linearize(outs, fresh)

    def jvp_fn(*tangents):
        vs, v_spec = _flatten(tangents)
        if v_spec != spec:
            raise RuntimeError(f"Expected the tangents {_treespec(v_spec)} to have the same argspec as the primals "
                               f"{_treespec(spec)}")
        for i, (p, v) in enumerate(zip(leaves, vs)):
            if v.shape != p.shape:
                raise RuntimeError(f"tangent:{i} with shape {v.shape} in flattened pytree doesn't match the shape "
                                   f"{p.shape} of the corresponding primal.")
            if v.dtype is not p.dtype:
                raise RuntimeError(f"tangent:{i} with dtype {v.dtype} in flattened pytree doesn't match the dtype "
                                   f"{p.dtype} of the corresponding primal.")
        graph = cg or is_grad_enabled() and any(v.requires_grad for v in vs)
        return _unflatten(out_spec, iter(_filled(lin(vs, graph), outs)))
    return _unwrap(out, cg), jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to its argument(s) ``argnums``, by forward mode (one Jacobian-vector
    product per input element, after one backward pass that builds ``J^T u``): for an output of shape ``S`` and an
    input of shape ``T``, a tensor of shape ``S + T``, nested as the outputs and then as the inputs.

    Args:
        func (callable): the function; with ``has_aux`` it returns ``(output, aux)``.
        argnums (int or tuple of ints): which positional arguments to differentiate. Default: 0
        has_aux (bool): ``func`` also returns an auxiliary object, passed through. Default: False
        randomness (str): 'error' raises if ``func`` draws from the default CPU generator (as torch's batched
            forward passes do); 'same' and 'different' allow it. Default: 'error'

    Example::

        >>> ember.func.jacfwd(lambda x: x ** 2)(ember.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    api = "jacfwd(f, argnums)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        xs = _flatten(_diff_args(args, argnums))[0]
        _check_real(xs, "jacfwd", "inputs")
        for x in xs:
            if isinstance(x, Tensor):
                _check_tangent(x, x)
        state = get_rng_state() if randomness == "error" else None
        out, fresh, spec = _call(func, args, kwargs, argnums)
        if state is not None and get_rng_state().tolist() != state.tolist():
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                               "out of vmap")
        out, aux = _split_aux(out, has_aux, api)
        outs, out_spec = _forward_outputs(out, "jvp(f, primals, tangents)")
        _check_real(outs, "jacfwd", "outputs")
        cg = _create_graph(outs, fresh)
        jacs = [_unflatten(spec, iter(row)) for row in _jacobian(_linearize(outs, fresh), outs, fresh, cg)]
        jac = _unflatten(out_spec, iter(jacs))
        return (jac, _unwrap(aux, cg)) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of the scalar function ``func`` with respect to its argument(s) ``argnums``: ``jacfwd`` of
    ``jacrev``, as torch composes it."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- vmap ------------------------------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorizes ``func`` over a dimension of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    ember runs ``func`` once per slice and stacks the results along ``out_dims`` (a loop, not batched ops), so any
    function works, including ``.item()`` and data-dependent control flow; nesting and composing with :func:`grad`
    work the same way. An in-place write into an unbatched input (or a buffer of a vmapped module, such as
    BatchNorm's running statistics) raises, since it would happen once per slice.

    Args:
        func (callable): the function, taking and returning tensors (or nests of them).
        in_dims (int or tuple): the batch dimension of each positional argument: an int for all of them, or a tuple
            with one entry per argument, each an int, None (not batched) or a nest matching that argument.
            Keyword arguments are not batched. Default: 0
        out_dims (int or tuple): where the batch dimension goes in each output (None: an unbatched output, taken
            from the first slice). Default: 0
        randomness (str): 'error' raises if ``func`` draws from the default CPU generator, 'different' lets each
            slice draw its own numbers, 'same' replays the generator for every slice. Default: 'error'
        chunk_size (int or None): accepted for torch's signature (slices always run one at a time).

    Example::

        >>> x = ember.randn(5, 3)
        >>> ember.vmap(ember.dot)(x, x).shape
        ember.Size([5])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        leaves, spec = _flatten(args)
        try:
            dims = _broadcast(in_dims, args)
        except ValueError:
            raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`.") from None
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We cannot "
                                 "vmap over non-Tensor arguments, please use None as the respective in_dim")
            if not -x.dim() <= d < x.dim():
                raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {x.dim()} so expected in_dim to satisfy -{x.dim()} <= in_dim < "
                                 f"{x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        n = sizes[0]
        state = get_rng_state() if randomness != "different" else None
        watched = _unbatched_state(func, leaves, dims)
        outs = []
        for i in range(max(n, 1)):  # an empty batch runs func once on zeros, for the shapes of its outputs
            if randomness == "same":
                set_rng_state(state)
            sliced = [x if d is None else x.select(d, i) if n else _empty_slice(x, d) for x, d in zip(leaves, dims)]
            outs.append(func(*_unflatten(spec, iter(sliced)), **kwargs))
            if randomness == "error" and i == 0 and get_rng_state().tolist() != state.tolist():
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
            if i == 0 and any(t._version != v for t, v in watched):
                raise RuntimeError("vmap: an in-place operation wrote into a Tensor that is not vmapped over (an input "
                                   "with in_dim=None, or a buffer of the vmapped module), which would be updated once "
                                   "per slice. Please use out-of-place operations, or vmap over that Tensor too. For "
                                   "BatchNorm running statistics, set `track_running_stats` to False or use "
                                   "replace_all_batch_norm_modules_.")
        return _stack_outputs(outs, n, out_dims, name)
    return wrapped


def _unbatched_state(func, leaves, dims):
    """(tensor, version) of the tensors every slice shares: unbatched inputs and the buffers of a vmapped module,
    less those sharing memory (a version counter) with a batched input."""
    batched = {id(x._vc) for x, d in zip(leaves, dims) if d is not None}
    shared = [x for x, d in zip(leaves, dims) if d is None and isinstance(x, Tensor)]
    if isinstance(func, Module):
        shared += list(func.buffers())
    return [(t, t._version) for t in shared if id(t._vc) not in batched]


def _empty_slice(x, d):
    shape = list(x.shape)
    del shape[d]
    return zeros(shape, dtype=x.dtype, device=x.device)


def _stack_outputs(outs, n, out_dims, name):
    first, spec = _flatten(outs[0])
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(outs[0], tuple):
        out_dims = out_dims[0]
    try:
        dims = _broadcast(out_dims, outs[0])
    except ValueError:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         "structure of `outputs`.") from None
    per_slice = [_flatten(o)[0] for o in outs]
    result = []
    for j, (o, d) in enumerate(zip(first, dims)):
        if d is None:
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you mean "
                             "to set out_dims= to None for output?")
        result.append(stack([leaves[j] for leaves in per_slice], d) if n else
                      stack([o], d).narrow(d if d >= 0 else d + o.dim() + 1, 0, 0))
    return _unflatten(spec, iter(result))


# -- functionalize and module helpers --------------------------------------------------------------------------------
def functionalize(func, *, remove="mutations"):
    """A function with the semantics of ``func`` whose mutations (and, with ``remove='mutations_and_views'``, whose
    aliasing of the inputs) are removed. ember runs eagerly, so ``func`` runs as is; with
    ``'mutations_and_views'`` an output that is a view is returned as a contiguous copy.

    Args:
        func (callable): the function.
        remove (str): 'mutations' or 'mutations_and_views'. Default: 'mutations'

    Example::

        >>> ember.func.functionalize(lambda a: (a + 1).view(-1).add_(1))(ember.zeros(2, 1))
        tensor([2., 2.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        out = func(*args, **kwargs)
        if remove == "mutations":
            return out
        leaves, spec = _flatten(out)
        return _unflatten(spec, iter(t.clone(memory_format=contiguous_format)
                                     if isinstance(t, Tensor) and t._base is not None else t for t in leaves))
    return wrapped


def replace_all_batch_norm_modules_(root):
    """Makes every BatchNorm module in ``root`` (included) use batch statistics and keep no running statistics
    (``running_mean``, ``running_var`` and ``num_batches_tracked`` set to None), in place, so that it runs under
    :func:`vmap`. Returns ``root``."""
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper, for debugging; ember's transforms do not wrap tensors, so
    ``tensor`` itself."""
    return tensor
