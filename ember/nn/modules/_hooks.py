"""Module hooks: removable handles, the hooks shared by all modules, ``Module.__call__`` when hooks exist, and the
identity nodes that give full backward hooks the gradients with respect to a module's inputs and outputs."""
import itertools
import warnings
import weakref
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import grad_enabled


class RemovableHandle:
    """A handle that removes a hook from its dict (and from the ``extra_dict`` flags dicts) on ``remove()``."""

    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extra = extra_dict if isinstance(extra_dict, (list, tuple)) else [extra_dict] if extra_dict is not None else []
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state):
        hooks, self.id, extra = state
        self.hooks_dict_ref = weakref.ref(hooks) if hooks is not None else (lambda: None)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra if d is not None)
        RemovableHandle._ids = itertools.count(max(self.id + 1, next(RemovableHandle._ids)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class WrappedHook:
    """A hook that receives its module as first argument, holding the module weakly (no reference cycle) and
    picklable with it."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args):
        if self.module is None:
            return self.hook(*args)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args)

    def __getstate__(self):
        return {"hook": self.hook, "module": None if self.module is None else self.module()}

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.module = None if state["module"] is None else weakref.ref(state["module"])


# Hooks shared by every module (``torch.nn.modules.module.register_module_*``).
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_hooks = [False]  # whether any of the four call-time dicts above is non-empty (checked on every call)


def _refresh_global():
    _global_hooks[0] = bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_pre_hooks
                            or _global_backward_hooks)


class _GlobalHandle(RemovableHandle):
    def remove(self):
        super().remove()
        _refresh_global()


def _register_global(d, hook):
    handle = _GlobalHandle(d)
    d[handle.id] = hook
    _refresh_global()
    return handle


def register_module_buffer_registration_hook(hook):
    """Registers ``hook(module, name, buffer) -> None or buffer`` for every buffer registration."""
    return _register_global(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """Registers ``hook(module, name, submodule) -> None or submodule`` for every submodule registration."""
    return _register_global(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Registers ``hook(module, name, param) -> None or param`` for every parameter registration."""
    return _register_global(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """Registers ``hook(module, args) -> None or new args`` to run before every module's forward."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Registers ``hook(module, args, output) -> None or new output`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) to run after every module's forward."""
    handle = _GlobalHandle(_global_forward_hooks, extra_dict=[_global_forward_hooks_with_kwargs,
                                                              _global_forward_hooks_always_called])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    _refresh_global()
    return handle


def register_module_full_backward_pre_hook(hook):
    """Registers ``hook(module, grad_output) -> None or new grad_output`` for every module."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Registers ``hook(module, grad_input, grad_output) -> None or new grad_input`` for every module."""
    return _register_global(_global_backward_hooks, hook)


class _HookIdentity(Function):
    """The identity on several tensors: a node whose pre-hook sees the gradients flowing through them."""

    @staticmethod
    def forward(ctx, *xs):
        return xs

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _wrap(values, hook):
    """Passes the grad-requiring tensors of ``values`` through one identity node with ``hook`` as its pre-hook;
    returns the new values and the positions of those tensors."""
    idx = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not idx or not grad_enabled():
        return values, None
    outs = _HookIdentity.apply(*(values[i] for i in idx))
    outs[0].grad_fn.register_prehook(hook)
    values = list(values)
    for i, o in zip(idx, outs):
        values[i] = o
    return values, idx


class BackwardHook:
    """Runs a module's full backward (pre-)hooks with the gradients w.r.t. its positional inputs and outputs."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_idx = None
        self.input_zeros = ()
        self.output_idx = None
        self.n_outputs = 0

    def _run_hooks(self, grads):
        grad_inputs = [None] * self.n_inputs
        for i, g in zip(self.input_idx or (), grads):
            grad_inputs[i] = g
        if self.input_zeros:
            from ..._creation import zeros
            for i, shape, dtype, device in self.input_zeros:  # tensor inputs that need no gradient get zeros
                grad_inputs[i] = zeros(shape, dtype=dtype, device=device)
        grad_inputs = tuple(grad_inputs)
        for hook in self.user_hooks:
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is None:
                continue
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(res)}, but "
                                   f"expected {len(grad_inputs)}")
            grad_inputs = res
        return grad_inputs

    def setup_input_hook(self, args):
        self.n_inputs = len(args)

        def hook(grads):
            # No grad_outputs: the gradient reached the inputs without passing through the outputs (outputs that
            # are not tensors or tuples of them, or a double backward).
            if not self.user_hooks or self.grad_outputs is None:
                return None
            new = self._run_hooks(grads)
            self.grad_outputs = None
            return tuple(new[i] for i in self.input_idx)
        values, self.input_idx = _wrap(args, hook)
        if self.input_idx is not None and self.user_hooks:
            self.input_zeros = [(i, v.shape, v.dtype, v.device) for i, v in enumerate(args)
                                if isinstance(v, Tensor) and not v.requires_grad]
        return tuple(values)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        if not single and not isinstance(result, tuple):
            return result
        values = (result,) if single else result
        self.n_outputs = len(values)

        def hook(grads):
            grad_outputs = [None] * self.n_outputs
            for i, g in zip(self.output_idx, grads):
                grad_outputs[i] = g
            grad_outputs = tuple(grad_outputs)
            for pre in self.user_pre_hooks:
                res = pre(self.module, grad_outputs)
                if res is not None:
                    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                    if len(res) != len(grad_outputs):
                        raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                           f"{len(res)}, but expected {len(grad_outputs)}")
                    grad_outputs = res
            self.grad_outputs = grad_outputs
            if self.input_idx is None and self.user_hooks:  # no input needs a gradient: fire now
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=5)
                self._run_hooks(())
            return tuple(grad_outputs[i] for i in self.output_idx)
        values, self.output_idx = _wrap(values, hook)
        return values[0] if single else tuple(values)


def call_with_hooks(self, args, kwargs):
    """``Module.__call__`` when hooks exist: forward pre-hooks, forward, forward hooks and backward hook setup, in
    torch's order (global hooks first)."""
    result = None
    called_always = set()
    try:
        full_bw, non_full_bw, bw_pre = [], [], []
        if self._backward_pre_hooks or _global_backward_pre_hooks:
            bw_pre = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if self._backward_hooks or _global_backward_hooks:
            full_bw = list(_global_backward_hooks.values())
            if self._is_full_backward_hook:
                full_bw += self._backward_hooks.values()
            else:
                non_full_bw += self._backward_hooks.values()

        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)

        bw_hook = None
        if full_bw or bw_pre:
            bw_hook = BackwardHook(self, full_bw, bw_pre)
            args = bw_hook.setup_input_hook(args)

        result = self.forward(*args, **kwargs)

        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                called_always.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res

        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=2)
            result = bw_hook.setup_output_hook(result)

        if non_full_bw:
            var = result
            while not isinstance(var, Tensor):
                var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
            if var.grad_fn is not None:
                for hook in non_full_bw:
                    var.grad_fn.register_hook(lambda gi, go, hook=hook: hook(self, gi, go))
        return result
    except Exception:
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            always = hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called
            if not always or hook_id in called_always:
                continue
            try:
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
            except Exception as e:
                warnings.warn("module forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {e}", stacklevel=2)
        raise
