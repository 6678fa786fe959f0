"""Parameter and Buffer: tensors that a Module registers when they are assigned as attributes."""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    Shares memory with ``data``; ``requires_grad`` defaults to True, even under ``no_grad``.

    Args:
        data (Tensor): parameter tensor (an empty tensor when None).
        requires_grad (bool, optional): whether the parameter requires gradient. Default: ``True``

    Example::

        >>> p = ember.nn.Parameter(ember.zeros(2))
        >>> p
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        p = Tensor._make.__func__(cls, data._data, data.dtype, data.device)
        p._vc = data._vc  # the same memory: in-place writes through either are seen by autograd on both
        if requires_grad:
            if not (data.dtype.is_floating_point or data.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = Tensor._make(self._data.copy(order="K") if not self.is_meta else self._data, self.dtype, self.device)
        result = type(self)(t, self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return _rebuild_parameter, (self.detach(), self._requires_grad)


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # A Buffer is a plain Tensor flagged ``_is_buffer``; isinstance sees the flag.
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """A Tensor that is module state but not a parameter: assigning it to a Module attribute registers a buffer.

    Args:
        data (Tensor): buffer tensor (an empty tensor when None).
        persistent (bool, optional): whether the buffer is part of the module's ``state_dict``. Default: ``True``

    Example::

        >>> m = ember.nn.Module()
        >>> m.running_mean = ember.nn.Buffer(ember.zeros(3))
        >>> list(m.state_dict())
        ['running_mean']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """Whether ``param`` is an uninitialized (lazy) parameter or buffer."""
    from .modules.lazy import UninitializedBuffer, UninitializedParameter
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
