"""Calling a module with other tensors in place of its parameters and buffers, as ``torch.nn.utils.stateless``."""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _swap(module, name, tensor):
    """Puts ``tensor`` at the dotted ``name`` of ``module`` (removing it for ``_MISSING``); returns what was there."""
    prefix, _, attr = name.rpartition(".")
    mod = module.get_submodule(prefix)
    for table in (mod._parameters, mod._buffers):
        if attr in table:
            orig = table[attr]
            if tensor is _MISSING:
                del table[attr]
            else:
                table[attr] = tensor
            return orig
    orig = getattr(mod, attr, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(mod, attr, tensor)
    elif orig is not _MISSING:
        delattr(mod, attr)
    return orig


def _untie(module, tensors):
    """``tensors`` plus, for each given name of a tied tensor, the same value under the names it is tied to."""
    names = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        names.setdefault(id(t), set()).add(name)
    tied = {n: group for group in names.values() if len(group) > 1 for n in group}
    given = [n for n in tensors if n in tied]
    for n in given:
        if len({id(tensors[m]) for m in tied[n] if m in tensors}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied[n])}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(tensors)
    for n in given:
        untied.update(dict.fromkeys(tied[n], tensors[n]))
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    """Within the block, ``module`` uses ``parameters_and_buffers`` (by dotted name); its own tensors are put back
    on exit, even on error."""
    tensors = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in [*module.named_parameters(remove_duplicate=False),
                                *module.named_buffers(remove_duplicate=False)]}
        msgs = []
        if set(tensors) - valid:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, sorted(set(tensors) - valid)))}.")
        if valid - set(tensors):
            msgs.append(f"Missing key(s): {', '.join(map(repr, sorted(valid - set(tensors))))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs))
    orig = {}
    try:
        for name, t in tensors.items():
            orig[name] = _swap(module, name, t)
        yield
    finally:
        new = {name: _swap(module, name, t) for name, t in orig.items()}
        # a module that reassigned one of the given tensors (say a buffer) hands the new value back, as torch
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **(kwargs or {}))


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Calls ``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (by dotted name) in place of
    its parameters and buffers. Deprecated: use :func:`ember.func.functional_call`, a drop-in replacement.

    Args:
        module (Module): the module to call.
        parameters_and_buffers (dict of str and Tensor): the tensors to use.
        args (Any or tuple): positional arguments (one that is not a tuple is the single argument).
        kwargs (dict): keyword arguments.
        tie_weights (bool): tied parameters and buffers stay tied (different values for them raise). Default: True
        strict (bool): the names must be exactly the module's parameters and buffers. Default: False
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
