"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits, lazy properties."""
import functools

from .._creation import arange, tensor
from .._dtype import finfo, get_default_dtype
from .._ops.softmax import softmax
from .._ops.view import broadcast_tensors
from .._random import randn
from .._tensor import Tensor, Size
from ..autograd.grad_mode import enable_grad

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant
_Number = (int, float, bool)


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers become tensors of the first tensor's dtype and device (the
    default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    ref = next((v for v in values if isinstance(v, Tensor)), None)
    options = {"dtype": get_default_dtype()} if ref is None else {"dtype": ref.dtype, "device": ref.device}
    return broadcast_tensors(*(v if isinstance(v, Tensor) else tensor(v, **options) for v in values))


def _standard_normal(shape, dtype, device):
    return randn(shape, dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sums out the ``dim`` rightmost dimensions of ``value``."""
    return value if dim == 0 else value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def _size(shape):
    return shape if isinstance(shape, Size) else Size(shape)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: ``sigmoid`` for binary log-odds, else ``softmax`` over the last dimension."""
    return logits.sigmoid() if is_binary else softmax(logits, -1)


def clamp_probs(probs):
    """Clamps probabilities to ``[eps, 1 - eps]`` with ``eps`` the dtype's machine epsilon."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from (clamped) probabilities: log-odds for binary ones, else their logarithm."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


class lazy_property:
    """A property computed (with grad enabled) on first access, then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag, device):
    idx = arange(n, device=device)
    return idx < idx.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of (a batch of) ``D x D`` matrices on and below diagonal ``diag``, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """(A batch of) ``D x D`` lower-triangular matrices filled row by row on and below diagonal ``diag`` from
    ``vec``; the inverse of ``tril_matrix_to_vec``."""
    # the positive root of D**2 + (1 + 2 * diag) * D - |diag| * (diag + 1) - 2 * vec.shape[-1] = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
