"""Lazy modules: parameters whose shape is inferred from the first input (``LazyLinear``, ``LazyConv2d``...)."""
from ... import _creation
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["UninitializedParameter", "LazyModuleMixin"]


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet; ``materialize(shape)`` turns it into a regular Parameter.

    Example::

        >>> p = ember.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', ember.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        p = Parameter.__new__(cls, _creation.empty(0, device=device, dtype=dtype), requires_grad)
        p._factory = (device, dtype)
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        """Allocates the parameter (uninitialised values) with ``shape`` and becomes a Parameter."""
        d, t = self._factory
        data = _creation.empty(shape, device=device or d or self.device, dtype=dtype or t or self.dtype)
        self._data, self.dtype, self.device = data._data, data.dtype, data.device
        del self._factory
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        result = type(self)(self._requires_grad, *self._factory)
        memo[id(self)] = result
        return result


def is_lazy(t):
    return isinstance(t, UninitializedParameter)


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input: ``initialize_parameters(input)``
    runs before the first forward (or a ``load_state_dict`` materializes them); the module then becomes
    ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(tuple(state_dict[key].shape))

    def initialize_parameters(self, *args, **kwargs):
        """Materializes the parameters from the first input's shape (each lazy module defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether some parameter or buffer is still uninitialized."""
        return any(is_lazy(p) for p in list(self._parameters.values()) + list(self._buffers.values()))

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
