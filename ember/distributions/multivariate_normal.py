"""The multivariate normal distribution."""
import math

from .._creation import eye
from .._ops.view import broadcast_shapes
from .._tensor import Size
from ..linalg import cholesky, solve_triangular
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products with broadcast batch dimensions."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance ``x^T M^-1 x`` for ``M = L L^T``; the batch dimensions of ``bL`` broadcast
    against those of ``bx``."""
    return solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _inverse_tril(L):
    """``L^-1`` of lower-triangular matrices."""
    Id = eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return solve_triangular(L, Id, upper=False)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1``, from the Cholesky factor of ``P`` with rows and columns reversed."""
    Lf = cholesky(P.flip((-2, -1)))
    return _inverse_tril(Lf.flip((-2, -1)).mT)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean vector ``loc`` and one of a positive-definite
    ``covariance_matrix``, a positive-definite ``precision_matrix`` or the lower-triangular ``scale_tril`` (with a
    positive diagonal) of ``covariance = scale_tril @ scale_tril.mT``. Computations use ``scale_tril``: the others
    are Cholesky-factored once.

    Example::

        >>> m = MultivariateNormal(ember.zeros(2), ember.eye(2))
        >>> m.sample().shape
        ember.Size([2])

    Args:
        loc (Tensor): the mean.
        covariance_matrix (Tensor): the covariance matrix.
        precision_matrix (Tensor): the precision (inverse covariance) matrix.
        scale_tril (Tensor): the lower-triangular Cholesky factor of the covariance.
    """
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix}
        name, matrix = next((k, v) for k, v in given.items() if v is not None)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = Size(broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        return self._expanded(new, batch_shape, self.event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L_inv = _inverse_tril(self._unbroadcasted_scale_tril)
        return (L_inv.mT @ L_inv).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
