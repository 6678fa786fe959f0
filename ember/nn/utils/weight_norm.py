"""Weight normalization (https://arxiv.org/abs/1602.07868) as a forward pre-hook, as ``torch.nn.utils.weight_norm``."""
import warnings

from ..modules.lazy import UninitializedParameter
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, dim, pow=2):
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dims (over all of ``v`` for dim
    -1)."""
    if dim == -1:
        return v.norm(pow)
    dim = v._wrap_dim(dim)
    return v.norm(pow, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)``, the norm taken over every dimension but ``dim`` (over all of ``v`` for dim -1)."""
    return v * (g / _norm_except_dim(v, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. "
                             "Make sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    r"""Applies weight normalization to a parameter: ``w = g * v / ||v||``, recomputed before every forward.

    Replaces ``name`` with the parameters ``name_g`` (magnitude) and ``name_v`` (direction). The norm is taken per
    slice along ``dim`` (over the whole tensor with ``dim=None``). Deprecated in favour of
    :func:`ember.nn.utils.parametrizations.weight_norm`.

    Example::

        >>> m = weight_norm(ember.nn.Linear(20, 40), name='weight')
        >>> m.weight_g.size()
        ember.Size([40, 1])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Removes the weight normalization of ``name``, leaving a plain parameter with its current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
