"""Constraints: the regions where distribution parameters and values live, as ``torch.distributions.constraints``.

``constraint.check(value)`` returns a bool tensor of ``value``'s shape less the ``event_dim`` rightmost dimensions.
"""
from .._creation import full
from .._dtype import bool as _bool, finfo
from .._ops.shape import cat as _cat, stack as _stack
from ..linalg import cholesky_ex, eigvalsh, vector_norm

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """Base of the constraints: ``is_discrete`` and ``event_dim`` (how many rightmost dimensions make one event)."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of ``sample_shape + batch_shape``: whether each event of ``value`` satisfies this."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for variables whose support depends on other variables: it cannot be checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A copy with ``is_discrete`` and ``event_dim`` set: ``constraints.dependent(event_dim=1)``."""
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent (uncheckable) constraint."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@property`` on instances and a dependent constraint on the class: the ``support`` of distributions whose
    support depends on their parameters."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """Wraps a constraint so that ``reinterpreted_batch_ndims`` more rightmost dimensions make one event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise AssertionError(f"reinterpreted_batch_ndims must be an int >= 0, got {reinterpreted_batch_ndims}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return result.reshape(result.shape[:result.dim() - n] + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The support of ``MixtureSameFamily``: ``base_constraint`` (the components') checked with the component
    dimension added back and reduced over it."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(result.shape[:keep] + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """The two values ``{0, 1}``."""
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _IntegerInterval(Constraint):
    """The integers in ``[lower_bound, upper_bound]``."""
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """The integers in ``[lower_bound, inf)``."""
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line ``[-inf, inf]`` (NaN is outside)."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    """The half line ``(lower_bound, inf]``."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """The half line ``[lower_bound, inf)``."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    """The half line ``[-inf, upper_bound)``."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """The interval ``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """The interval ``[lower_bound, upper_bound)``."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """The unit simplex in the last dimension: ``x >= 0`` and ``x.sum(-1) == 1``."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative integer vectors summing to at most ``upper_bound``."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _is_tril(value):
    return (value.tril() == value).reshape(value.shape[:-2] + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""
    event_dim = 2

    def check(self, value):
        return _is_tril(value)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        return _is_tril(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(_LowerCholesky):
    """Lower Cholesky factors of correlation matrices: rows of unit length."""

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10
        unit_rows = (vector_norm(value.detach(), dim=-1) - 1.0).abs().le(tol).all(-1)
        return super().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices."""
    event_dim = 2

    def check(self, value):
        return full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=_bool, device=value.device)


class _Symmetric(_Square):
    """Symmetric square matrices."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return value.isclose(value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Positive semi-definite matrices."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Positive definite matrices."""

    def check(self, value):
        sym = super().check(value)
        if not sym.all():
            return sym
        return cholesky_ex(value).info.eq(0)


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive slices of lengths ``lengths`` along ``dim`` (as ``cat``)."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for c, length in zip(self.cseq, self.lengths):
            checks.append(c.check(value.narrow(self.dim, start, length)))
            start += length
        return _cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices of ``value`` along ``dim`` (as ``stack``)."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        return _stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
