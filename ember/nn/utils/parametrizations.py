"""Parametrizations built on :mod:`ember.nn.utils.parametrize`, as ``torch.nn.utils.parametrizations``:
orthogonal matrices, weight normalization and spectral normalization."""
from enum import Enum, auto

from ... import linalg
from ..._creation import eye, zeros_like
from ..._dtype import finfo
from ..._ops.compare import allclose
from ..._ops.index import where
from ..._ops.shape import cat
from ..._random import randn
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _default_dim
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    return allclose(Q.mH @ Q, Id, atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of the QR decomposition of ``A``, its columns signed so that R has a positive diagonal."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _geqrf(A):
    """LAPACK's ``geqrf`` of real tall matrices ``(*, n, k)``: R on and above the diagonal, the Householder vectors
    below it (their unit first entries implied), and their scalars ``tau``."""
    A = A.clone()
    k = A.shape[-1]
    tau = A.new_zeros(*A.shape[:-2], k)
    for j in range(k):
        alpha, x = A[..., j, j].clone(), A[..., j + 1:, j]
        xnorm = x.norm(dim=-1)
        reflect = xnorm != 0  # else H = I: tau = 0
        beta = where(reflect, where(alpha >= 0, -1.0, 1.0) * (alpha ** 2 + xnorm ** 2).sqrt(), alpha)
        tau[..., j] = where(reflect, (beta - alpha) / beta, 0.0)
        x.div_(where(reflect, alpha - beta, 1.0).unsqueeze(-1))
        A[..., j, j] = beta
        w = cat([x.new_ones(*x.shape[:-1], 1), x], -1).unsqueeze(-1)
        C = A[..., j:, j + 1:]
        C.sub_(tau[..., j, None, None] * w @ (w.mT @ C))
    return A, tau


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # X is tall: n >= k
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embed into a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = A.matrix_exp()
            else:  # the Cayley map (I + A/2)(I - A/2)^{-1}
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            # the signs on X's diagonal (1 or -1) are neither differentiated nor updated
            Q = linalg.householder_product(A, tau) * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        with no_grad():
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # the reflectors of Q's QR decomposition, with diag(R) > 0
                A, tau = _geqrf(Q)
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q into an n x n orthogonal matrix
                N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            # -Id: householder(zeros) is then Id
            neg_Id = zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Applies an orthogonal (or unitary) parametrization to a matrix or batch of matrices.

    ``orthogonal_map`` is "matrix_exp" (default for square or complex matrices), "cayley" or "householder" (default
    for real rectangular matrices), applied to the lower triangle of ``parametrizations[name].original``. With
    ``use_trivialization`` (the default) the result is multiplied by the buffer ``base``, set on assignment to
    ``module.name``; the initial weight becomes the orthogonal Q of its QR decomposition.

    Example::

        >>> m = orthogonal(ember.nn.Linear(20, 40))
        >>> Q = m.weight
        >>> ember.allclose(Q.T @ Q, ember.eye(20), atol=1e-5)
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    r"""Applies weight normalization to a parameter with the parametrization API: ``w = g * v / ||v||``.

    The magnitude ``g`` and direction ``v`` are ``parametrizations[name].original0`` and ``original1``; the norm is
    taken per slice along ``dim`` (over the whole tensor with ``dim=None``). The weight is recomputed on every access
    (once per :func:`~ember.nn.utils.parametrize.cached` block). State dicts of the hook-based
    :func:`ember.nn.utils.weight_norm` (``name_g``, ``name_v``) load too.

    Example::

        >>> m = weight_norm(ember.nn.Linear(20, 40))
        >>> m.parametrizations.weight.original0.size()
        ember.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:  # a vector is normalized exactly
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from reasonable u and v

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (they are buffers); forward clones them before use.
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Applies spectral normalization to a parameter with the parametrization API: ``W / sigma(W)``.

    ``sigma`` is estimated with ``n_power_iterations`` steps of power iteration per access in training mode, on the
    weight reshaped to a matrix with ``dim`` (default 1 for ConvTranspose, else 0) first; the singular vector
    estimates are the buffers ``parametrizations[name][0]._u`` and ``_v``.

    Example::

        >>> m = spectral_norm(ember.nn.Linear(20, 40))
        >>> m.parametrizations.weight.original.size()
        ember.Size([40, 20])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
