"""``ember.overrides``: the ``__torch_function__`` protocol's helpers for libraries whose functions accept
tensor-like objects. ember's own ops do not dispatch on ``__torch_function__``; a library's function that calls
:func:`handle_torch_function` does, as documented below."""
__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "is_tensor_like"]


def _overloaded_types(relevant_args):
    """The types among ``relevant_args`` that define ``__torch_function__``, subclasses before their bases."""
    types = []
    for arg in relevant_args:
        t = type(arg)
        if t in types or getattr(t, "__torch_function__", None) is None:
            continue
        index = next((i for i, u in enumerate(types) if issubclass(t, u)), len(types))
        types.insert(index, t)
    return types


def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` is of a type that defines ``__torch_function__``."""
    return any(getattr(type(a), "__torch_function__", None) is not None for a in relevant_args)


def has_torch_function_unary(arg):
    """:func:`has_torch_function` for one argument."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    """:func:`has_torch_function` for the given arguments."""
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls ``__torch_function__(public_api, types, args, kwargs)`` of the overloaded types among
    ``relevant_args`` (subclasses first) and returns the first result that is not ``NotImplemented``.

    Raises:
        TypeError: when every implementation returns ``NotImplemented``.
    """
    types = _overloaded_types(relevant_args)
    for t in types:
        result = t.__torch_function__(public_api, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__module__", "") + "." + getattr(public_api, "__name__", str(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in relevant_args if type(a) in types]}")


def is_tensor_like(inp):
    """Whether ``inp`` is a tensor or an object whose type defines ``__torch_function__``.

    Example::

        >>> is_tensor_like(ember.ones(2)), is_tensor_like(2.0)
        (True, False)
    """
    from ._tensor import Tensor
    return isinstance(inp, Tensor) or getattr(type(inp), "__torch_function__", None) is not None
