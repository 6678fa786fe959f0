"""Module state dicts: saving parameters and persistent buffers under dotted names, and loading them back with
every mismatch reported at once. ``Module``'s methods of the same names delegate here."""
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, is_lazy

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _as_tensor(value):
    """An ember Tensor for a state-dict value that is tensor-like (ember, NumPy, or another library's tensor)."""
    if isinstance(value, Tensor):
        return value
    from ..._creation import from_numpy
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a tensor from another framework, by duck-typing
        value = value.detach().cpu()
        if str(value.dtype).endswith("bfloat16"):
            from ..._creation import tensor
            return tensor(value.float().numpy(), dtype=_dtype.bfloat16)
        return from_numpy(np.array(value.numpy()))
    return None


def _copy_(dst, src):
    """Copies ``src`` into ``dst``'s memory, converting dtype and device (``dst.copy_(src)``); a meta ``dst`` has
    none (nothing is copied)."""
    src = src.to(device=dst.device, dtype=dst.dtype)
    if not dst.is_meta:
        if dst._data.ndim == 0:
            dst._data[()] = src._data
        else:
            dst._data[...] = src._data
    dst._bump()


def _overrides(module, name):
    """Whether ``module``'s class defines its own ``name`` (get_extra_state / set_extra_state)."""
    from .module import Module
    return getattr(type(module), name) is not getattr(Module, name)


def save_to_state_dict(module, destination, prefix, keep_vars):
    """Writes this module's own parameters and persistent buffers (not its children's) into ``destination``."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if _overrides(module, "get_extra_state"):
        destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def state_dict(module, *args, destination=None, prefix="", keep_vars=False):
    """An ordered dict of all parameters and persistent buffers, keyed by dotted name (``'0.weight'``).

    Tensors are detached (and share memory with the module) unless ``keep_vars``.
    """
    if args:
        warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=3)
        if destination is None:
            destination = args[0]
        if len(args) > 1 and prefix == "":
            prefix = args[1]
        if len(args) > 2 and keep_vars is False:
            keep_vars = args[2]
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = dict(version=module._version)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        result = hook(module, destination, prefix, local_metadata)
        if not getattr(hook, "_from_public_api", False):
            if result is not None:
                destination = result
        elif result is not None:
            raise RuntimeError("state_dict post-hook must return None")
    return destination


def load_from_state_dict(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                          error_msgs):
    """Copies this module's own parameters and persistent buffers from ``state_dict``, recording problems in
    the given lists (reported together by :meth:`load_state_dict`)."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set}
    local_state = {k: v for k, v in itertools.chain(module._parameters.items(), persistent.items())
                   if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = _as_tensor(state_dict[key])
        if input_param is None:
            error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(state_dict[key])}")
            continue
        if is_lazy(param):  # still uninitialized: its load hook materializes it only from an initialized tensor
            continue
        if param.ndim == 0 and input_param.shape == (1,):
            input_param = input_param.reshape(())
        if input_param.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                              f"checkpoint, the shape in current model is {param.shape}.")
            continue
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        if not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        else:
                            input_param.requires_grad_(param.requires_grad)
                    setattr(module, name, input_param)
                else:
                    if param.is_meta and not input_param.is_meta:
                        warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                                      "parameter in the current model, which is a no-op. (Did you mean to pass "
                                      "`assign=True` to assign items in the state dictionary to their corresponding "
                                      "key in the module instead of copying them in place?)", stacklevel=2)
                    _copy_(param, input_param)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                              f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                              f"an exception occurred : {ex.args}.")
    extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
    if _overrides(module, "set_extra_state"):
        if extra_key in state_dict:
            module.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected_keys.append(extra_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(module, state_dict, strict=True, assign=False):
    """Copies parameters and buffers from ``state_dict`` into this module and its descendants.

    With ``strict``, keys must match :meth:`state_dict` exactly; every mismatch (missing, unexpected, size) is
    reported in one ``RuntimeError``. With ``assign``, the state dict's tensors replace the module's (keeping
    each parameter's ``requires_grad``) instead of being copied into them.

    Returns:
        ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys`` lists.
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    def load(module, local_state_dict, prefix=""):
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                     unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                     child_prefix)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in module._load_state_dict_post_hooks.values():
            if hook(module, incompatible) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                     "expected to return new values, if incompatible_keys need to be modified, "
                                     "it should be done inplace.")

    load(module, state_dict)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            module.__class__.__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)
