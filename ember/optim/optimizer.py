"""Optimizer: the base class owning ``param_groups``, per-parameter ``state`` and torch's ``state_dict`` layout.

A concrete optimizer supplies two pure pieces: ``_init_state(p, group)`` (the state of a parameter before its first
step) and ``_update(p, grad, state, group)`` (one in-place step on the raw arrays); one that takes sparse COO
gradients (``nn.Embedding(sparse=True)``) also supplies ``_update_sparse``. Bookkeeping is done here.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import numpy as np

from .. import _dtype
from .._device import CPU, array_module
from .._kernels import get_num_threads
from .._kernels.blas import spread
from .._ops.binary import shape_error
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..nn.modules._hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "required"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """Marks an option that every param group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook):
    """Registers ``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` to run before every optimizer step."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Registers ``hook(optimizer, args, kwargs)`` to run after every optimizer step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _get_scalar_dtype():
    return _dtype.float64 if _dtype.get_default_dtype() is _dtype.float64 else _dtype.float32


def _scalar_tensor(value):
    """A 0-d CPU tensor of the optimizer scalar dtype (torch's ``state['step']``)."""
    dt = _get_scalar_dtype()
    return Tensor._make(np.array(value, dtype=dt.np), dt, CPU)


def _to_scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def _hyper(x):
    """An option for the scalar arithmetic of a step; a tensor one as a NumPy scalar of its dtype, so that it rounds
    as arithmetic on a 0-d tensor does (a float32 ``lr`` of float64 parameters)."""
    return x.detach().cpu()._data.reshape(-1)[0] if isinstance(x, Tensor) else x


def _lr(group):
    """The group's learning rate, as :func:`_hyper` gives it."""
    return _hyper(group["lr"])


_CAPTURABLE_TENSORS = {"NAdam": "params, mu_products and state_steps", "ASGD": "params, mus, etas, and state_steps"}


def _check_flags(opt, p, group):
    """torch's errors for ``capturable=True`` with a parameter off an accelerator, and for ``differentiable=True``
    (whose step runs with gradients on) with a leaf that requires grad, updated in place."""
    if group.get("capturable") and p.device.type not in ("cuda", "xpu", "hpu", "privateuseone", "xla"):
        name = type(opt).__name__
        devices = ['cuda', 'xpu', 'hpu', 'privateuseone'] + ([] if name == "Adadelta" else ['xla'])
        raise AssertionError(f"If capturable=True, {_CAPTURABLE_TENSORS.get(name, 'params and state_steps')} must "
                             f"be on supported devices: {devices}.")
    if group.get("differentiable") and p.grad_fn is None and p.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _check_fused(fused, foreach, differentiable):
    """torch's constructor errors of the optimizers with a ``fused`` implementation."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _typename(obj):
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def _with_hooks(step):
    """Wraps a subclass's ``step`` so that step pre/post hooks run around it (only when some exist)."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if not (self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks or _global_optimizer_pre_hooks
                or _global_optimizer_post_hooks):
            return step(self, *args, **kwargs)
        args = (self, *args)  # the hooks see the optimizer as the first of ``args``
        for pre in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        out = step(*args, **kwargs)
        for post in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    Args:
        params (iterable): Tensors, ``(name, Tensor)`` pairs, or dicts defining parameter groups (each with a
            ``'params'`` entry and optional per-group options overriding ``defaults``).
        defaults (dict): default values of the optimization options.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        for group in self.param_groups:  # groups saved by older versions lack newer options
            for k, v in self.defaults.items():
                if k != "params" and v is not required:
                    group.setdefault(k, v)
            for p in group["params"]:
                st = self.state.get(p)
                if st and "step" in st and not isinstance(st["step"], Tensor):
                    st["step"] = _scalar_tensor(float(st["step"]))
        self.defaults.setdefault("differentiable", False)  # as torch: in the defaults, not the groups

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- param groups ----------------------------------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Adds a parameter group (a dict with ``'params'`` and optional options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- stepping --------------------------------------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized tensors (to None by default, else to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    if g.is_sparse:
                        g.zero_()
                    else:
                        g._data[...] = 0
                        g._bump()

    def step(self, closure=None):
        """Performs one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        work, sparse = [], []
        for group in self.param_groups:
            flags = group.get("capturable") or group.get("differentiable")
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if flags:
                    _check_flags(self, p, group)
                is_sparse = grad.is_sparse
                if is_sparse and type(self)._update_sparse is Optimizer._update_sparse:
                    raise RuntimeError(self._sparse_error or f"{_optimizer_name(self)} does not support sparse "
                                                             "gradients")
                state = self.state.get(p)
                if not state:
                    new = self._init_state(p, group)
                    if new is not None:  # optimizers without state (plain SGD) keep ``self.state`` empty
                        state = self.state[p] = new
                if not p.is_meta:  # a meta parameter has no values to update
                    (sparse if is_sparse else work).append((p, grad, state, group))
        try:
            _run_updates(self._update, work)
        except ValueError as err:  # NumPy's broadcast error: a loaded state that does not fit its parameter
            raise _state_shape_error(err, work) from None
        for item in sparse:
            self._update_sparse(*item)
        for p, *_ in chain(work, sparse):
            p._vc[0] += 1  # an in-place write, as autograd sees it
        return loss

    def _init_state(self, p, group):
        """The state of ``p`` before its first step (a dict), or None if the optimizer keeps none."""
        raise NotImplementedError

    def _update(self, p, grad, state, group):
        """One in-place step of ``p`` given its gradient, state and group options."""
        raise NotImplementedError

    _sparse_error = None  # the message for a sparse gradient, when not "<name> does not support sparse gradients"

    def _update_sparse(self, p, grad, state, group):
        """``_update`` for a sparse COO gradient, in optimizers that take them."""
        raise NotImplementedError

    # -- hooks -----------------------------------------------------------------------------------------------------
    def _register(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` to run before ``step``."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)`` to run after ``step``."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Registers ``hook(optimizer)`` to run before ``state_dict``."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Registers ``hook(optimizer, state_dict) -> None or state_dict`` to run after ``state_dict``."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Registers ``hook(optimizer, state_dict) -> None or state_dict`` to run before ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Registers ``hook(optimizer)`` to run after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict ------------------------------------------------------------------------------------------------
    def state_dict(self):
        """The optimizer state as ``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``;
        parameters are numbered in the order they appear in the groups."""
        for pre in self._optimizer_state_dict_pre_hooks.values():
            pre(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post in self._optimizer_state_dict_post_hooks.values():
            result = post(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Loads a state from :meth:`state_dict`; tensors are cast to each parameter's dtype and device (the
        ``step`` counters excepted)."""
        state_dict = state_dict.copy()
        for pre in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step":
                    return value
                if param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(device=param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post in self._optimizer_load_state_dict_post_hooks.values():
            post(self)


Optimizer.step = _with_hooks(Optimizer.step)


_PARALLEL_MIN = 1 << 20  # elements of all the parameters below which one thread updates them all


def _run_updates(update, work):
    """``update(*item)`` for each item ``(p, grad, state, group)``; CPU parameters are spread over the intra-op
    threads (each update touches its own parameter's arrays only, and NumPy releases the GIL in its loops)."""
    threads = get_num_threads()
    sizes = [item[0]._data.size for item in work]
    if threads == 1 or len(work) < 2 or sum(sizes) < _PARALLEL_MIN or any(item[0].device is not CPU
                                                                           for item in work):
        for item in work:
            update(*item)
        return
    buckets, loads = [[] for _ in range(threads)], [0] * threads
    for i in sorted(range(len(work)), key=sizes.__getitem__, reverse=True):  # largest first, to the least loaded
        k = loads.index(min(loads))
        buckets[k].append(work[i])
        loads[k] += sizes[i]
    spread(lambda bucket: [update(*item) for item in bucket], buckets)


def _state_shape_error(err, work):
    """torch's RuntimeError for the first state tensor whose shape does not broadcast with its parameter's."""
    for p, _, state, _ in work:
        for v in (state or {}).values():
            if isinstance(v, Tensor):
                found = shape_error(err, v, p)
                if found is not err:
                    return found
    return err


def _xp(p):
    return array_module(p.device)


def _optimizer_name(opt):
    """The name of the ember optimizer ``opt`` is (or derives from)."""
    return next(c.__name__ for c in type(opt).__mro__ if c.__module__.startswith("ember.optim."))


def _real(a):
    """A real view of a complex array (interleaved re/im), so updates treat both parts as torch does."""
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


def _opmath(a):
    """The dtype to compute updates of array ``a`` in: float32 for float16/bfloat16 (rounded once per in-place
    op), else its own."""
    return np.dtype(np.float32) if a.dtype in (_dtype.float16.np, _dtype.bfloat16.np) else a.dtype


def _alpha(a, value):
    """``value`` as the ``alpha`` of an ``add`` on array ``a``: rounded to ``a``'s dtype, as torch takes it."""
    return float(a.dtype.type(value))


def _sparse_grad(grad, maximize):
    """The sparse COO gradient ``grad`` coalesced (an update is not linear in it), as ``(index, values)``: a tuple
    of index arrays (one per sparse dimension) and the values array (negated with ``maximize``)."""
    c = grad.coalesce()
    v = c._values()._data
    return tuple(c._indices()._data), -v if maximize else v


def _grad_array(p, grad, maximize):
    g = _real(grad._data)
    return -g if maximize else g


def _lerp_(xp, start, end, weight, tmp):
    """``start += weight * (end - start)`` in place, with torch's two formulas (exact at weight 0 and 1), computed
    in float32 for halves (rounded once)."""
    xp.subtract(end, start, out=tmp, dtype=_opmath(tmp))
    if abs(weight) < 0.5:
        tmp *= weight
        start += tmp
    else:
        tmp *= 1 - weight
        xp.subtract(end, tmp, out=start)
