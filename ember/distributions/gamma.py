"""The gamma distribution, and the standard gamma sampler with implicit reparameterization gradients that Gamma,
Beta and Binomial draw from."""
from .._creation import arange, as_tensor
from .._device import special_module
from .._dtype import finfo, float64
from .._ops.index import where
from .._random import rand, randn
from .._tensor import Size
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _Number, broadcast_all

__all__ = ["Gamma"]


def _sample_standard_gamma(alpha):
    """Gamma(``alpha``, 1) draws by Marsaglia and Tsang's rejection method (drawn in float64, returned in
    ``alpha``'s dtype and at least its smallest normal number); no gradient."""
    with no_grad():
        a = alpha.detach().to(float64)
        boost = a < 1  # Gamma(a) = Gamma(a + 1) * U ** (1 / a)
        d = (where(boost, a + 1, a) - 1 / 3).reshape(-1)
        c = (9 * d).rsqrt()
        out = d.new_zeros(d.shape)
        todo = arange(d.numel(), device=a.device)
        while todo.numel():
            dd, cc = d[todo], c[todo]
            z = randn(todo.numel(), dtype=float64, device=a.device)
            v = (1 + cc * z) ** 3
            u = rand(todo.numel(), dtype=float64, device=a.device)
            accept = (v > 0) & (u.log() < 0.5 * z * z + dd - dd * v + dd * v.clamp(min=1e-300).log())
            accept |= ~dd.isfinite()  # infinite or NaN shapes give infinite or NaN draws, not an endless loop
            out[todo[accept]] = (dd * v)[accept]
            todo = todo[~accept]
        out = out.reshape(a.shape)
        out = where(boost, out * rand(a.shape, dtype=float64, device=a.device) ** (1 / a), out)
        return out.to(alpha.dtype).clamp(min=finfo(alpha.dtype).tiny)


def _dgammainc_da(xp, a, x):
    """The derivative in ``a`` of the regularized lower incomplete gamma function ``P(a, x)``, by central
    differences in float64 (of ``P`` below the mean, of ``1 - P`` above it, where each keeps full precision)."""
    sp = special_module(xp)
    a, x = a.astype(xp.float64), x.astype(xp.float64)
    h = a * 1e-4
    return xp.where(x < a, sp.gammainc(a + h, x) - sp.gammainc(a - h, x),
                    sp.gammaincc(a - h, x) - sp.gammaincc(a + h, x)) / (2 * h)


def _log_density(xp, a, x):
    a, x = a.astype(xp.float64), x.astype(xp.float64)
    return (a - 1) * xp.log(x) - x - special_module(xp).gammaln(a)


class _StandardGammaGrad(Function):
    """``d sample / d alpha`` of standard gamma samples ``x``: ``-(dP/da) / density`` (implicit
    reparameterization)."""

    @staticmethod
    def forward(ctx, alpha, x):
        xp = ctx.xp
        return (-_dgammainc_da(xp, alpha, x) / xp.exp(_log_density(xp, alpha, x))).astype(x.dtype)


class _StandardGamma(Function):
    """Attaches standard gamma draws ``x`` to their ``alpha`` with the implicit reparameterization gradient."""

    @staticmethod
    def forward(ctx, alpha, x):
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _StandardGammaGrad.apply(alpha, x), None


def _standard_gamma(alpha):
    """Gamma(``alpha``, 1) samples of ``alpha``'s shape, differentiable in ``alpha``."""
    return _StandardGamma.apply(alpha, _sample_standard_gamma(alpha))


class _GammaInc(Function):
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    promote = True

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return special_module(ctx.xp).gammainc(a, x).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        ga = gx = None
        if ctx.needs_input_grad[0]:
            ga = grad * _DGammaIncDa.apply(a, x)
        if ctx.needs_input_grad[1]:
            gx = grad * (a.lgamma().neg() + (a - 1) * x.log() - x).exp()
        return ga, gx


class _DGammaIncDa(Function):
    @staticmethod
    def forward(ctx, a, x):
        return _dgammainc_da(ctx.xp, a, x).astype(x.dtype)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (``1 / scale``).

    Example::

        >>> m = Gamma(ember.tensor([1.0]), ember.tensor([1.0]))
        >>> m.sample().shape
        ember.Size([1])

    Args:
        concentration (float or Tensor): the shape parameter (alpha).
        rate (float or Tensor): the rate parameter (beta).
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if isinstance(concentration, _Number) and isinstance(rate, _Number) else \
            self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # in place, outside the graph: gradients pass as they are
        return value

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value) - self.rate * value
                - self.concentration.lgamma())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _GammaInc.apply(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
