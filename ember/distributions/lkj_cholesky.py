"""The LKJ distribution over lower Cholesky factors of correlation matrices."""
import math

from .._creation import arange
from .._dtype import finfo
from .._ops.shape import cat
from .._random import randn
from .._tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of lower Cholesky factors ``L`` of ``dim x dim`` correlation matrices ``M = L @ L.mT``,
    with density proportional to ``det(M) ** (concentration - 1)`` (uniform at ``concentration = 1``). Samples are
    drawn by the onion method (Lewandowski, Kurowicka and Joe, 2009).

    Example::

        >>> L = LKJCholesky(3, 0.5).sample()
        >>> bool(ember.allclose((L @ L.mT).diagonal(), ember.ones(3)))
        True

    Args:
        dim (int): the dimension of the matrices (at least 2).
        concentration (float or Tensor): the shape parameter (eta).
    """
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        marginal_conc = c + 0.5 * (dim - 2)
        offset = arange(dim - 1, dtype=c.dtype, device=c.device)
        offset = cat([offset.new_zeros((1,)), offset])
        # row i's squared off-diagonal norm is Beta(i / 2, marginal_conc - (i - 1) / 2); row 0 has none
        self._beta = Beta(0.5 * offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(c.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._expanded(new, batch_shape, self.event_shape)

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u = u / u.norm(dim=-1, keepdim=True)
        u[..., 0, :] = 0.0  # the first row is 0 / 0
        w = y.sqrt() * u
        diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1) - alpha.lgamma() * dm1
        return unnormalized - normalizer
