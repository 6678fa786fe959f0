"""The beta distribution."""
from .._device import special_module
from .._dtype import finfo
from .._ops.index import where
from .._tensor import Size
from ..autograd.function import Function
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _sample_standard_gamma
from .utils import broadcast_all

__all__ = ["Beta"]


def _sample_beta(a, b):
    """Beta(``a``, ``b``) draws as ``X / (X + Y)`` of gamma draws, in ``[tiny, 1 - eps]``; no gradient."""
    x, y = _sample_standard_gamma(a), _sample_standard_gamma(b)
    info = finfo(a.dtype)
    return (x / (x + y)).clamp(min=info.tiny, max=1 - info.eps)


class _BetaSampleGrad(Function):
    """``d sample / d a`` and ``d sample / d b`` of Beta samples ``x``: ``-(dI/da, dI/db) / density`` with ``I``
    the regularized incomplete beta function (implicit reparameterization), by central differences in float64 of
    ``I_x(a, b)`` below the mean and of ``1 - I_x(a, b) = I_{1-x}(b, a)`` above it."""

    @staticmethod
    def forward(ctx, a, b, x):
        xp = ctx.xp
        sp = special_module(xp)
        dt = x.dtype
        a, b, x = a.astype(xp.float64), b.astype(xp.float64), x.astype(xp.float64)
        lower = x < a / (a + b)
        y = 1 - x
        ha, hb = a * 1e-4, b * 1e-4
        da = xp.where(lower, sp.betainc(a + ha, b, x) - sp.betainc(a - ha, b, x),
                      sp.betainc(b, a - ha, y) - sp.betainc(b, a + ha, y)) / (2 * ha)
        db = xp.where(lower, sp.betainc(a, b + hb, x) - sp.betainc(a, b - hb, x),
                      sp.betainc(b - hb, a, y) - sp.betainc(b + hb, a, y)) / (2 * hb)
        density = xp.exp((a - 1) * xp.log(x) + (b - 1) * xp.log(y) - sp.betaln(a, b))
        return (-da / density).astype(dt), (-db / density).astype(dt)


class _BetaSample(Function):
    """Attaches Beta draws ``x`` to their parameters with the implicit reparameterization gradients."""

    @staticmethod
    def forward(ctx, a, b, x):
        ctx.save_for_backward(a, b, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, b, x = ctx.saved_tensors
        da, db = _BetaSampleGrad.apply(a, b, x)
        return grad * da, grad * db, None


class Beta(ExponentialFamily):
    """The beta distribution on ``[0, 1]`` with concentrations ``concentration1`` (alpha) and ``concentration0``
    (beta).

    Example::

        >>> m = Beta(ember.tensor([0.5]), ember.tensor([0.5]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        concentration1 (float or Tensor): the first concentration (alpha).
        concentration0 (float or Tensor): the second concentration (beta).
    """
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self._concentration1, self._concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self._concentration1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._concentration1 = self._concentration1.expand(batch_shape)
        new._concentration0 = self._concentration0.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        am1, bm1 = (a - 1).clamp(min=0), (b - 1).clamp(min=0)
        return where((a < 1) & (b < 1), 1.0, am1 / (am1 + bm1))

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        a, b = self.concentration1.expand(shape), self.concentration0.expand(shape)
        return _BetaSample.apply(a, b, _sample_beta(a, b))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return ((a - 1).xlogy(value) + (b - 1).xlogy(1.0 - value) + (a + b).lgamma() - a.lgamma() - b.lgamma())

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (a.lgamma() + b.lgamma() - total.lgamma() - (2 - total) * total.digamma()
                - (a - 1) * a.digamma() - (b - 1) * b.digamma())

    @property
    def _natural_params(self):
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
