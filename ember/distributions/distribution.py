"""Distribution: the base class of the probability distributions."""
import warnings

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import _size, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base class of probability distributions, as ``torch.distributions.Distribution``.

    Args:
        batch_shape (Size): the shape over which parameters are batched.
        event_shape (Size): the shape of a single sample (without batching).
        validate_args (bool, optional): whether to validate arguments and values (default: the class default,
            see ``set_default_validate_args``).
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether validation is on by default (it is, unless Python runs with ``-O``)."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with `validate_args=False` to "
                              "turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # a parameterization that was not given (probs vs logits)
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the batch dimensions expanded to ``batch_shape`` (parameters are expanded
        views; arguments are not checked again)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint of each parameter, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint of the values the distribution takes."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterized sample of shape ``sample_shape + batch_shape + event_shape``: differentiable in the
        parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """``n`` samples (deprecated: use ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the probability density (or mass) function at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution along dimension 0: shape ``(cardinality,) + batch_shape +
        event_shape``, or with ``expand=False`` singleton batch dimensions."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy)``, of shape ``batch_shape``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Checks that ``value`` is a tensor broadcastable with ``batch_shape + event_shape`` in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, new, batch_shape, event_shape=Size()):
        """Finishes ``expand``: initializes ``new`` unchecked, keeping this distribution's validation flag."""
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        params = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {v if v.numel() == 1 else v.size()}" for p, v in
                         ((p, self.__dict__[p]) for p in params))
        return f"{self.__class__.__name__}({args})"
