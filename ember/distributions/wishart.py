"""The Wishart distribution over positive-definite matrices."""
import math
import warnings

from .._creation import arange, eye
from .._dtype import finfo
from .._ops.index import where
from .._ops.view import broadcast_shapes
from .._random import randn
from .._tensor import Size
from ..linalg import cholesky, slogdet
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _Number, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function of dimension ``p``: ``sum(digamma(x - i / 2) for i < p)``."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype, device=x.device) / 2).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom (more than ``p - 1`` for ``p x p`` matrices) and one
    of a positive-definite ``covariance_matrix``, a positive-definite ``precision_matrix`` or the lower Cholesky
    factor ``scale_tril`` of the covariance. Samples are drawn by the Bartlett decomposition.

    Example::

        >>> m = Wishart(ember.tensor([4.0]), covariance_matrix=ember.eye(2))
        >>> m.sample().shape
        ember.Size([1, 2, 2])

    Args:
        df (float or Tensor): the degrees of freedom.
        covariance_matrix (Tensor): the scale matrix.
        precision_matrix (Tensor): the inverse of the scale matrix.
        scale_tril (Tensor): the lower Cholesky factor of the scale matrix.
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _Number):
            batch_shape = Size(param.shape[:-2])
            self.df = param.new_tensor(df)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        if self.df.lt(p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._set_chi2()

    def _set_chi2(self):
        """The chi-squared distributions of the squared diagonal of the Bartlett factor: ``df - i`` for ``i < p``."""
        L = self._unbroadcasted_scale_tril
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - arange(self._event_shape[-1], dtype=L.dtype, device=L.device))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        self._expanded(new, batch_shape, self.event_shape)
        new._set_chi2()
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Id.cholesky_solve(L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor > 0, factor, math.nan)  # no mode for df <= p + 1
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=finfo(self.df.dtype).eps)
        below = randn(diag.shape + (p,), dtype=diag.dtype, device=diag.device).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (diag.diag_embed() + below)
        return chol @ chol.mT

    def rsample(self, sample_shape=Size(), max_try_correction=10):
        """Draws by the Bartlett decomposition; draws that come out singular (possible for ``df`` near ``p - 1``)
        are drawn again up to ``max_try_correction`` times, after a warning."""
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        batch_dims = tuple(range(-len(self._batch_shape), 0))
        for i in range(max_try_correction + 1):
            singular = ~self.support.check(sample)
            if batch_dims:
                singular = singular.amax(batch_dims)  # a draw is redone across its whole batch
            if not singular.any() or i == max_try_correction:
                break
            if i == 0:
                warnings.warn("Singular sample detected.", stacklevel=2)
            mask = singular.view(singular.shape + (1,) * (len(self._batch_shape) + 2))
            sample = where(mask, self._bartlett_sampling(sample_shape), sample)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - value.cholesky_solve(L).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1)) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p))
