"""``gradient``: derivatives of sampled values by central differences (one-sided at the edges), as NumPy's and
torch's ``gradient``. A composite of differentiable ops."""
import numbers

from .. import _dtype
from .._tensor import Tensor, register, wrap_dim
from .shape import cat

__all__ = ["gradient"]


def _spacings(input, spacing, dims, dim_given):
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim_given:
                raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                                   "dim arguments to have the same length, but got a spacing argument of length "
                                   f"{len(spacing)} and a dim argument of length {len(dims)}.")
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                               f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
                               f"length {len(spacing)}")
        return list(spacing)
    if isinstance(spacing, Tensor) and spacing.ndim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of scalars or "
                           "1-D tensors")
    return [spacing] * len(dims)


def _uniform(f, d, n, h, edge_order):
    def part(start, length=1):
        return f.narrow(d, start, length)
    inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first, last = (part(1) - part(0)) / h, (part(n - 1) - part(n - 2)) / h
    else:
        first = (part(0) * -1.5 + part(1) * 2 - part(2) * 0.5) / h
        last = (part(n - 3) * 0.5 - part(n - 2) * 2 + part(n - 1) * 1.5) / h
    return cat([first, inner, last], d)


def _coordinates(f, d, n, x, edge_order):
    shape = [1] * f.ndim
    shape[d] = n - 1
    dx = (x[1:] - x[:-1]).to(f.dtype).reshape(shape)

    def part(t, start, length=1):
        return t.narrow(d, start, length)
    h1, h2 = part(dx, 0, n - 2), part(dx, 1, n - 2)  # the steps left and right of each inner point
    inner = (part(f, 0, n - 2) * (-h2 / (h1 * (h1 + h2))) + part(f, 1, n - 2) * ((h2 - h1) / (h1 * h2))
             + part(f, 2, n - 2) * (h1 / (h2 * (h1 + h2))))
    if edge_order == 1:
        first = (part(f, 1) - part(f, 0)) / part(dx, 0)
        last = (part(f, n - 1) - part(f, n - 2)) / part(dx, n - 2)
    else:
        a, b = part(dx, 0), part(dx, 1)
        first = (part(f, 0) * (-(2 * a + b) / (a * (a + b))) + part(f, 1) * ((a + b) / (a * b))
                 + part(f, 2) * (-a / (b * (a + b))))
        a, b = part(dx, n - 3), part(dx, n - 2)
        last = (part(f, n - 3) * (b / (a * (a + b))) + part(f, n - 2) * (-(a + b) / (a * b))
                + part(f, n - 1) * ((2 * b + a) / (b * (a + b))))
    return cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of the values ``input`` samples along each dimension in ``dim`` (all by default), as a tuple
    of tensors of ``input``'s shape: central differences inside, one-sided differences of order ``edge_order``
    (1 or 2) at the edges.

    ``spacing`` is the distance between samples: one number for all dimensions, one number per dimension, or per
    dimension a 1-D tensor of the sample coordinates.

    Example::

        >>> ember.gradient(ember.tensor([1., 2., 4., 8.]))
        (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [wrap_dim(d, input.ndim) for d in ([dim] if isinstance(dim, numbers.Integral) else dim)]
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    spacings = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(_dtype.get_default_dtype())
    out = []
    for d, h in zip(dims, spacings):
        n = input.shape[d]
        if isinstance(h, Tensor) and h.ndim:
            if h.shape != (n,):
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have the "
                                   f"size {n} of dimension {d}, but got a tensor of shape {list(h.shape)}")
            out.append(_coordinates(f, d, n, h, edge_order))
        else:
            out.append(_uniform(f, d, n, h.item() if isinstance(h, Tensor) else h, edge_order))
    return tuple(out)


register(gradient)
