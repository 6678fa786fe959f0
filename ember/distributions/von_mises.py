"""The von Mises distribution on the circle."""
import math

from .._creation import zeros
from .._dtype import bool as _bool, float64
from .._ops.index import where
from .._random import rand
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# polynomial approximations of I0 and I1 (Abramowitz and Stegun 9.8.1-9.8.4), as torch's
_COEF_SMALL = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]]
_COEF_LARGE = [[0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                0.1787654e-1, -0.420059e-2]]


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """``log(I_order(x))`` for ``x > 0`` and ``order`` 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small = _eval_poly((x / 3.75) ** 2, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best and Fisher's (1979) rejection sampler, vectorized as torch's: every round draws for all entries and
    keeps the first accepted draw of each."""
    x = zeros(shape, dtype=loc.dtype, device=loc.device)
    done = zeros(shape, dtype=_bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = rand((3,) + tuple(shape), dtype=loc.dtype, device=loc.device).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular von Mises distribution with density ``exp(concentration * cos(x - loc)) / (2 pi
    I0(concentration))``; ``loc`` and values are angles, read modulo ``2 pi``. Samples (in ``[-pi, pi)``) are drawn
    in float64 by Best and Fisher's rejection method; there is no ``rsample``.

    Example::

        >>> m = VonMises(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> bool((m.sample().abs() <= math.pi).all())
        True

    Args:
        loc (Tensor): the location angle in radians.
        concentration (Tensor): the concentration (kappa).
    """
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        return self._expanded(new, batch_shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach().to(float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = _rejection_sample(self.loc.to(float64), self.concentration.to(float64), self._proposal_r, shape)
            return x.to(self.loc.dtype)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance ``1 - I1(concentration) / I0(concentration)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
