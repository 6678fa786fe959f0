"""Flatten and Unflatten: modules that only reshape their input."""
from .linear import Identity  # noqa: F401 (its home was here)
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dimensions ``start_dim`` to ``end_dim`` into one.

    Shape:
        - Input: :math:`(*, S_{start}, ..., S_{end}, *)`
        - Output: :math:`(*, \\prod S_{start..end}, *)`

    Example::

        >>> ember.nn.Flatten()(ember.zeros(2, 3, 4)).shape
        ember.Size([2, 12])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension ``dim`` into the shape ``unflattened_size``.

    Example::

        >>> ember.nn.Unflatten(1, (2, 5))(ember.zeros(3, 10)).shape
        ember.Size([3, 2, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
