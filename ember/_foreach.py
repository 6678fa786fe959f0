"""``torch._foreach_*``: list-at-a-time pointwise ops, as optimizers and EMA code call them.

Each applies the single-tensor op to every tensor of the list in a Python loop (no fused multi-tensor kernels).
Out-of-place forms return a tuple of new tensors and are differentiable; in-place forms (trailing ``_``) modify the
tensors of ``self`` and return ``self``, as torch's do. The functions are generated from the tables below.
"""
import ember

from ._tensor import Tensor

__all__ = []


def _check_self(name, tensors):
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{name}(): argument 'self' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _per_tensor(tensors, other):
    """``other`` (a scalar, a list of scalars or tensors, or a 0-d tensor) as one value per tensor of ``tensors``."""
    if isinstance(other, Tensor):
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                               f"{other.numel()} elements.")
        return [other] * len(tensors)
    if isinstance(other, (list, tuple)):
        if len(other) != len(tensors):
            if other and not isinstance(other[0], Tensor):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} and "
                               f"{len(other)}")
        return list(other)
    return [other] * len(tensors)


def _scalars(tensors, value):
    """addcmul/addcdiv's ``value``: a scalar, a list of scalars, or a 1-d tensor of them."""
    if isinstance(value, Tensor):
        if value.dim() != 1 or value.numel() != len(tensors):
            raise RuntimeError(f"Expected scalars to be a 1-D tensor of size {len(tensors)}, got shape "
                               f"{list(value.shape)}")
        value = value.tolist()
    return _per_tensor(tensors, value)


def _export(name, fn, signature, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}{signature}\n\n{doc}"
    globals()[name] = fn
    __all__.append(name)


# -- unary: op(x) ----------------------------------------------------------------------------------------------------
_UNARY = ("abs", "neg", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sign", "reciprocal",
          "sigmoid", "tanh", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf", "erfc", "floor",
          "ceil", "round", "trunc", "frac", "lgamma")


def _unary(op):
    def out_of_place(self):
        _check_self(f"_foreach_{op}", self)
        return tuple(getattr(ember, op)(x) for x in self)

    def in_place(self):
        _check_self(f"_foreach_{op}_", self)
        for x in self:
            getattr(x, op + "_")()
        return self

    _export(f"_foreach_{op}", out_of_place, "(self) -> tuple of Tensors",
            f"Applies :func:`ember.{op}` to each tensor of ``self``.")
    _export(f"_foreach_{op}_", in_place, "(self) -> self", f"Applies ``Tensor.{op}_`` to each tensor of ``self``.")


for _op in _UNARY:
    _unary(_op)


# -- binary: op(x, other) with other a scalar, a list of scalars, a list of tensors or a 0-d tensor -------------------
# name: (ember op with a tensor other, ember op with a scalar other, in-place Tensor method)
_BINARY = {
    "add": ("add", "add", "add_"),
    "sub": ("sub", "sub", "sub_"),
    "mul": ("mul", "mul", "mul_"),
    "div": ("div", "div", "div_"),
    "pow": ("pow", "pow", "pow_"),
    "maximum": ("maximum", "clamp_min", "clamp_min_"),
    "minimum": ("minimum", "clamp_max", "clamp_max_"),
    "clamp_min": ("clamp_min", "clamp_min", "clamp_min_"),
    "clamp_max": ("clamp_max", "clamp_max", "clamp_max_"),
}
_OTHER_DOC = "``other`` is a scalar, a list of scalars, a list of tensors, or a 0-d tensor"


def _binary(name, tensor_op, scalar_op, method):
    def op(x, o, **kw):
        return getattr(ember, tensor_op if isinstance(o, Tensor) else scalar_op)(x, o, **kw)

    if name in ("add", "sub"):
        def out_of_place(self, other, *, alpha=1):
            _check_self(f"_foreach_{name}", self)
            kw = {} if alpha == 1 else {"alpha": alpha}
            return tuple(op(x, o, **kw) for x, o in zip(self, _per_tensor(self, other)))

        def in_place(self, other, *, alpha=1):
            _check_self(f"_foreach_{name}_", self)
            kw = {} if alpha == 1 else {"alpha": alpha}
            for x, o in zip(self, _per_tensor(self, other)):
                getattr(x, method)(o, **kw)
            return self
        sig = "(self, other, *, alpha=1)"
    else:
        def out_of_place(self, other):
            if name == "pow" and not isinstance(self, (list, tuple)):  # _foreach_pow(scalar, exponents)
                _check_self("_foreach_pow", other)
                return tuple(ember.pow(self, e) for e in other)
            _check_self(f"_foreach_{name}", self)
            return tuple(op(x, o) for x, o in zip(self, _per_tensor(self, other)))

        def in_place(self, other):
            _check_self(f"_foreach_{name}_", self)
            for x, o in zip(self, _per_tensor(self, other)):
                getattr(x, method)(o)
            return self
        sig = "(self, other)"
    _export(f"_foreach_{name}", out_of_place, sig + " -> tuple of Tensors",
            f"Applies :func:`ember.{name}` to each tensor of ``self``; {_OTHER_DOC}."
            + (" ``self`` may also be a scalar base for a list of exponents." if name == "pow" else ""))
    _export(f"_foreach_{name}_", in_place, sig + " -> self",
            f"In-place :func:`_foreach_{name}`: updates each tensor of ``self`` with ``Tensor.{method}``.")


for _name, _ops in _BINARY.items():
    _binary(_name, *_ops)
del _op, _name, _ops


# -- lerp, addcmul, addcdiv ------------------------------------------------------------------------------------------
def _lerp():
    def out_of_place(self, tensors1, weight):
        _check_self("_foreach_lerp", self)
        return tuple(ember.lerp(x, e, w) for x, e, w in zip(self, _per_tensor(self, tensors1),
                                                             _per_tensor(self, weight)))

    def in_place(self, tensors1, weight):
        _check_self("_foreach_lerp_", self)
        for x, e, w in zip(self, _per_tensor(self, tensors1), _per_tensor(self, weight)):
            x.lerp_(e, w)
        return self

    doc = "``weight`` is a scalar, a list of scalars or a list of tensors"
    _export("_foreach_lerp", out_of_place, "(self, tensors1, weight) -> tuple of Tensors",
            f"Applies :func:`ember.lerp` to each ``(self[i], tensors1[i])``; {doc}.")
    _export("_foreach_lerp_", in_place, "(self, tensors1, weight) -> self",
            f"In-place :func:`_foreach_lerp`; {doc}.")


def _addc(name):
    def out_of_place(self, tensor1, tensor2, value=1):
        _check_self(f"_foreach_{name}", self)
        return tuple(getattr(ember, name)(x, a, b, value=v) for x, a, b, v in
                     zip(self, _per_tensor(self, tensor1), _per_tensor(self, tensor2), _scalars(self, value)))

    def in_place(self, tensor1, tensor2, value=1):
        _check_self(f"_foreach_{name}_", self)
        for x, a, b, v in zip(self, _per_tensor(self, tensor1), _per_tensor(self, tensor2), _scalars(self, value)):
            getattr(x, name + "_")(a, b, value=v)
        return self

    doc = "``value`` is a scalar, a list of scalars or a 1-d tensor of them"
    _export(f"_foreach_{name}", out_of_place, "(self, tensor1, tensor2, value=1) -> tuple of Tensors",
            f"Applies :func:`ember.{name}` to each ``(self[i], tensor1[i], tensor2[i])``; {doc}.")
    _export(f"_foreach_{name}_", in_place, "(self, tensor1, tensor2, value=1) -> self",
            f"In-place :func:`_foreach_{name}`; {doc}.")


_lerp()
_addc("addcmul")
_addc("addcdiv")


# -- the rest --------------------------------------------------------------------------------------------------------
def _foreach_norm(self, ord=2, dtype=None):
    """_foreach_norm(self, ord=2, dtype=None) -> tuple of Tensors

    The vector ``ord``-norm of each tensor of ``self`` (:func:`ember.linalg.vector_norm`)."""
    _check_self("_foreach_norm", self)
    return tuple(ember.linalg.vector_norm(x, ord, dtype=dtype) for x in self)


def _foreach_zero_(self):
    """_foreach_zero_(self) -> self

    Fills each tensor of ``self`` with zeros."""
    _check_self("_foreach_zero_", self)
    for x in self:
        x.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """_foreach_copy_(self, src, non_blocking=False) -> self

    Copies each tensor of ``src`` into the matching tensor of ``self``."""
    _check_self("_foreach_copy_", self)
    for x, s in zip(self, _per_tensor(self, src)):
        x.copy_(s, non_blocking=non_blocking)
    return self


__all__ += ["_foreach_norm", "_foreach_zero_", "_foreach_copy_"]
