"""ExponentialFamily: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``."""
from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of exponential-family distributions: subclasses give the natural parameters ``theta``, the log
    normalizer ``F`` and the expected carrier measure ``E[k(x)]``; entropy and KL divergence then follow from the
    Bregman divergence of ``F``."""

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer ``F`` of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expected carrier measure ``E[k(x)]``."""
        raise NotImplementedError

    def entropy(self):
        """The entropy ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result

