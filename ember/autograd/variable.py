"""``Variable``: torch's pre-0.4 tensor wrapper, now a tensor itself."""
import warnings


class VariableMeta(type):
    def __instancecheck__(cls, obj):
        from .._tensor import Tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=VariableMeta):
    """Deprecated: ``Variable(x, requires_grad=False)`` is a new tensor sharing ``x``'s memory, outside the graph;
    every tensor is an instance of ``Variable``, as in torch where the two types merged."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from .._tensor import Tensor
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from .._creation import empty
            return empty(0, requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
