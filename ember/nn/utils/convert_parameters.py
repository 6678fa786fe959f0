"""Conversion between a module's parameters and one flat vector, as ``torch.nn.utils.convert_parameters``."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    """The device index of the first parameter (-1 for CPU); raises if ``param`` lives elsewhere."""
    index = param.get_device()
    if old_device is not None and index != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return index


def parameters_to_vector(parameters):
    """Flattens ``parameters`` into one vector (differentiable, as ``torch.cat`` of views).

    Example::

        >>> ember.nn.utils.parameters_to_vector([ember.ones(2, 2), ember.zeros(1)])
        tensor([1., 1., 1., 1., 0.])
    """
    from ... import cat
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of ``vec`` into ``parameters`` (each parameter's ``.data`` becomes a view of
    ``vec``)."""
    if not isinstance(vec, Tensor):
        kind = type(vec)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
