"""Module: the base class of all neural network modules, registering parameters, buffers and submodules."""
import inspect
import warnings
from collections import OrderedDict

from ... import _dtype
from ..._device import device as Device
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Buffer, Parameter
from . import _hooks, _state_dict
from ._hooks import (RemovableHandle, register_module_buffer_registration_hook,  # noqa: F401 (public here, as torch)
                     register_module_forward_hook, register_module_forward_pre_hook,
                     register_module_full_backward_hook, register_module_full_backward_pre_hook,
                     register_module_module_registration_hook, register_module_parameter_registration_hook)
from ._hooks import (_global_backward_hooks, _global_backward_pre_hooks, _global_forward_hooks,  # noqa: F401
                     _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
                     _global_forward_pre_hooks)
from ._state_dict import _EXTRA_STATE_KEY_SUFFIX, _IncompatibleKeys  # noqa: F401 (importable from here)

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n")


def _is_dtype(a):
    return isinstance(a, _dtype.dtype) or any(a is t for t in (float, int, bool, complex)) or \
        type(a).__name__ == "dtype"


def _is_device(a):
    return isinstance(a, (str, Device)) or (isinstance(a, int) and not isinstance(a, bool)) or \
        type(a).__name__ == "device"


def _arg_name(a):
    if isinstance(a, Tensor):
        return "Tensor"
    return "torch." + type(a).__name__ if isinstance(a, (_dtype.dtype, Device)) else type(a).__name__


def _parse_to(*args, **kwargs):
    """``(device, dtype, non_blocking, memory_format)`` from the argument forms of ``Module.to``: ``(device=None,
    dtype=None, non_blocking=False)``, ``(dtype, non_blocking=False)`` or ``(tensor, non_blocking=False)``."""
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")
    rest, kw = list(args), kwargs
    if rest and isinstance(rest[0], Tensor):
        t = rest.pop(0)
        form, device, dtype = "tensor", t.device, t.dtype
    elif rest and rest[0] is not None and _is_dtype(rest[0]):
        form, device, dtype = "dtype", None, rest.pop(0)
    else:
        form = "device"
        device = rest.pop(0) if rest and not isinstance(rest[0], bool) else None
        dtype = rest.pop(0) if rest and not isinstance(rest[0], bool) else None
    flags = dict(zip(("non_blocking", "copy"), rest))
    given = {k for k, v in (("device", device), ("dtype", dtype)) if v is not None or form != "device"}
    valid = (len(rest) <= 2 and all(isinstance(f, bool) for f in rest)
             and (device is None or _is_device(device)) and (dtype is None or _is_dtype(dtype))
             and set(kw) <= {"device", "dtype", "non_blocking", "copy", "memory_format"}
             and not set(kw) & (given | set(flags))
             and (kw.get("dtype") is None or _is_dtype(kw["dtype"]))
             and (kw.get("device") is None or _is_device(kw["device"]))
             and all(isinstance(kw.get(k, False), bool) for k in ("non_blocking", "copy")))
    if not valid:
        got = ", ".join([_arg_name(a) for a in args] + [f"{k}={_arg_name(v)}" for k, v in kwargs.items()])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}"
                        f"{', ' if kwargs and not args else ''}), but expected one of:\n{_TO_SIGNATURES}")
    if kw.get("copy", flags.get("copy", False)):
        raise RuntimeError(".to() does not accept copy argument")
    device, dtype = kw.get("device", device), kw.get("dtype", dtype)
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
    return device, dtype, kw.get("non_blocking", flags.get("non_blocking", False)), kw.get("memory_format")


class Module:
    """Base class for all neural network modules; subclasses register state by assigning attributes.

    Example::

        >>> class Net(ember.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = ember.nn.Parameter(ember.ones(2))
        ...     def forward(self, x):
        ...         return x * self.w
        >>> Net()(ember.tensor([1., 2.])).tolist()
        [1.0, 2.0]
    """

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were"
                            " given")
        # object.__setattr__ skips Module.__setattr__'s registration logic for these internals.
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())
        setattr_(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # -- registration ----------------------------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (module state that is not a parameter); non-persistent buffers stay out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _hooks._global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a ``Parameter`` or None), accessible as an attribute."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        for hook in _hooks._global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module, accessible as an attribute."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _hooks._global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` ('' is the module itself)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Sets the submodule at the dotted path ``target`` (its parent must exist)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The parameter at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buffer = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def get_extra_state(self):
        """Extra (picklable) state for ``state_dict``; define it with :meth:`set_extra_state` to use it."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Restores the state returned by :meth:`get_extra_state`."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # -- attribute protocol ----------------------------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                for hook in _hooks._global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                for hook in _hooks._global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    persistent = (value.persistent if isinstance(value, Buffer)
                                  else name not in self._non_persistent_buffers_set)
                    if getattr(self.register_buffer, "__func__", None) is Module.register_buffer or \
                            "persistent" in inspect.signature(self.register_buffer).parameters:
                        self.register_buffer(name, value, persistent)
                    else:
                        if not persistent:
                            raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                                               "implements register_buffer() without the persistent argument is "
                                               "not allowed.")
                        self.register_buffer(name, value)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_state_dict_hooks", "_state_dict_pre_hooks",
                     "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    # -- traversal -------------------------------------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """An iterator over the module's parameters (of submodules too with ``recurse``), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, parameter)``; tied parameters appear once unless ``remove_duplicate=False``."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over the module's buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, buffer)``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """An iterator over ``(name, child)`` for the immediate child modules, each once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """An iterator over all modules in the tree, this one first."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """An iterator over ``(dotted name, module)`` for all modules in the tree, depth first."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first) and then on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes, gradients, conversion ------------------------------------------------------------------------------
    def train(self, mode=True):
        """Sets training mode (``mode=False`` is evaluation mode) here and in all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode; the same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` of all parameters in place."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all parameters (to None by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    if g.is_sparse:
                        g.zero_()
                    else:
                        g._data[...] = 0
                        g._bump()

    def share_memory(self):
        """Kept for API compatibility; ember tensors need no shared-memory move."""
        return self

    def compile(self, *args, **kwargs):
        """Kept for API compatibility, as :func:`ember.compile`: ember runs eagerly, so the module is unchanged."""

    def _apply(self, fn, recurse=True):
        """Applies ``fn`` to every parameter, gradient and buffer. Parameters keep their identity: their data is
        replaced, so optimizers holding them stay valid; as in torch, a move onto or off the meta device makes new
        Parameters instead."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            out = param
            if applied is not param:
                if applied.is_meta == param.is_meta:
                    param.data = applied
                else:
                    out = self._parameters[key] = Parameter(applied, param.requires_grad)
            grad = param.grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if grad_applied.is_meta != grad.is_meta:
                    out.grad = grad_applied.requires_grad_(grad.requires_grad)
                elif grad_applied is not grad:
                    grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts parameters and buffers in place: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``, ``to(memory_format=ember.channels_last)``. Only floating point (and complex) tensors change
        dtype; only 4-D and 5-D ones change memory format."""
        device, dtype, non_blocking, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers.", stacklevel=2)

        def convert(t):
            dt = dtype if t.is_floating_point() or t.is_complex() else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device=device, dtype=dt, memory_format=memory_format)
            return t.to(device=device, dtype=dt)
        return self._apply(convert)

    def cuda(self, device=None):
        """Moves parameters and buffers to a CUDA device."""
        dev = "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device
        return self._apply(lambda t: t.to(dev))

    def cpu(self):
        """Moves parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Casts all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Casts floating point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts floating point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse=True):
        """Moves parameters and buffers to ``device`` without copying their values."""
        from ..._creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # -- hooks -----------------------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Registers ``hook(module, args) -> None or new args`` (``hook(module, args, kwargs) -> None or
        (args, kwargs)`` with ``with_kwargs``) to run before ``forward``."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Registers ``hook(module, args, output) -> None or new output`` (``hook(module, args, kwargs, output)``
        with ``with_kwargs``) to run after ``forward``; ``always_call`` runs it even if forward raises."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Registers ``hook(module, grad_output) -> None or new grad_output``, run before the module's gradients
        are computed."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Registers ``hook(module, grad_input, grad_output) -> None or new grad_input``, run when the gradients
        w.r.t. the module's positional inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated: registers ``hook(module, grad_input, grad_output)`` on the output's last node only.
        Use :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """Registers ``hook(module, prefix, keep_vars)`` to run before ``state_dict``."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Registers ``hook(module, state_dict, prefix, local_metadata) -> None`` to run after ``state_dict``."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Registers ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` to run before this module's ``_load_from_state_dict``."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _hooks.WrappedHook(hook, self if with_module else None)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """Registers ``hook(module, incompatible_keys) -> None`` to run after ``load_state_dict``."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # -- call ------------------------------------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or _hooks._global_hooks[0]):
            return self.forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, args, kwargs)

    __call__ = _call_impl

    # -- state dict ------------------------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Writes this module's own parameters and persistent buffers (not its children's) into ``destination``."""
        _state_dict.save_to_state_dict(self, destination, prefix, keep_vars)

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of all parameters and persistent buffers, keyed by dotted name (``'0.weight'``).

        Tensors are detached (and share memory with the module) unless ``keep_vars``.
        """
        return _state_dict.state_dict(self, *args, destination=destination, prefix=prefix, keep_vars=keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Copies this module's own parameters and persistent buffers from ``state_dict``, recording problems in
        the given lists (reported together by :meth:`load_state_dict`)."""
        _state_dict.load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                         unexpected_keys, error_msgs)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from ``state_dict`` into this module and its descendants.

        With ``strict``, keys must match :meth:`state_dict` exactly; every mismatch (missing, unexpected, size) is
        reported in one ``RuntimeError``. With ``assign``, the state dict's tensors replace the module's (keeping
        each parameter's ``requires_grad``) instead of being copied into them.

        Returns:
            ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys`` lists.
        """
        return _state_dict.load_state_dict(self, state_dict, strict, assign)

    # -- repr ------------------------------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module-specific part of the repr; override it (single- or multi-line)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
