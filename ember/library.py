"""``ember.library``: Python custom operators (``custom_op``) with their autograd formula, fake (meta) and
per-device implementations, reachable as ``ember.ops.<namespace>.<name>``; ``ember.ops.aten.<name>`` are ember's
own functions."""
import inspect

from ._tensor import Tensor
from .autograd.custom_function import Function

__all__ = ["custom_op", "CustomOpDef", "register_fake", "register_autograd", "register_kernel", "ops"]

_registry = {}  # "namespace::name" -> CustomOpDef


def _split_qualname(qualname):
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name or "::" in name or not (namespace + name).replace("_", "a").isalnum():
        raise ValueError(f"Expected `qualname` to be of the form 'namespace::name', but got {qualname}. The qualname "
                         "passed to the ember.library APIs must consist of a namespace and a name, e.g. aten::sin")
    return namespace, name


def _check_schema(fn, mutates_args):
    """torch's ``infer_schema`` checks: annotated parameters and return, ``mutates_args`` naming parameters."""
    sig = inspect.signature(fn)
    where = f"Got func with signature {sig})"
    for p in sig.parameters.values():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {p.name} must have a type annotation. {where}")
    if sig.return_annotation is inspect.Signature.empty:
        raise ValueError(f"infer_schema(func): No return type annotation was provided. Please add one. {where}")
    if mutates_args != "unknown":
        if isinstance(mutates_args, str):
            raise ValueError("mutates_args must be an iterable of parameter names or the string 'unknown'")
        missing = set(mutates_args) - set(sig.parameters)
        if missing:
            raise ValueError(f"infer_schema(func): {missing} in mutates_args were not found in the custom op's "
                             "signature. mutates_args should contain the names of all args that the custom op "
                             "mutates, or just the string 'unknown' if you don't know. " + where)
    return sig


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


class CustomOpDef:
    """A custom operator made by ``custom_op``: call it as the function it wraps; ``register_autograd``,
    ``register_fake`` and ``register_kernel`` complete it."""

    def __init__(self, namespace, name, fn, mutates_args):
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f"{namespace}::{name}"
        self._signature = _check_schema(fn, mutates_args)
        self._mutates_args = mutates_args
        self._kernels = {}  # device type -> implementation
        self._fake_fn = self._backward_fn = self._setup_context_fn = None
        self._setup_takes_keywords = False
        self._function = self._make_function()
        self.__name__, self.__doc__ = name, fn.__doc__

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def _make_function(self):
        op = self

        class Generated(Function):
            @staticmethod
            def forward(ctx, *args, **kwargs):
                out = op._run(args, kwargs)
                if op._setup_takes_keywords:
                    op._setup_context_fn(ctx=ctx, inputs=args, keyword_only_inputs=kwargs, output=out)
                elif op._setup_context_fn is not None:
                    op._setup_context_fn(ctx, args, out)
                return out

            @staticmethod
            def backward(ctx, *grads):
                if op._backward_fn is None:
                    raise RuntimeError(f"Trying to backward through {op._namespace}.{op._name}.default but no "
                                       "autograd formula was registered. Please use register_autograd to add one.")
                result = op._backward_fn(ctx, *grads)
                return result if isinstance(result, tuple) else (result,)
        Generated.__name__ = Generated.__qualname__ = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return Generated

    def _run(self, args, kwargs):
        """The implementation for the device of the first Tensor argument (the fake one on ``meta``)."""
        first = next((t for a in args for t in _tensors(a)), None)
        device_type = first.device.type if first is not None else "cpu"
        if device_type == "meta" and self._fake_fn is not None:
            fn = self._fake_fn
        else:
            fn = self._kernels.get(device_type, self._init_fn)
        out = fn(*args, **kwargs)
        inputs = {id(t) for a in args for t in _tensors(a)}
        if any(id(t) in inputs for t in _tensors(out)):
            raise RuntimeError(f"{self._name}: The output of this custom operator (1) must not also be an input to "
                               "this custom operator and (2) may not alias any inputs to this custom operator or "
                               "each other. Please try to return a clone of the tensor instead.")
        return out

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        out = self._function.apply(*bound.args, **bound.kwargs)
        if self._mutates_args != "unknown":
            for name in self._mutates_args:  # a write the op declares counts once more, as torch's
                for t in _tensors(bound.arguments.get(name)):
                    t._vc[0] += 1
        return out

    def register_autograd(self, backward, /, *, setup_context=None):
        """Sets the gradient formula: ``backward(ctx, *grads)`` returns one gradient per input (None for
        non-Tensor ones); ``setup_context(ctx, inputs, output)`` (or with ``keyword_only_inputs`` before
        ``output``) saves what it needs."""
        self._backward_fn, self._setup_context_fn = backward, setup_context
        self._setup_takes_keywords = setup_context is not None and \
            "keyword_only_inputs" in inspect.signature(setup_context).parameters
        return backward

    def register_fake(self, fn, /):
        """Sets the implementation for ``meta`` tensors (shapes and dtypes only); usable as a decorator."""
        self._fake_fn = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        """Sets the implementation for one device type (or several); usable as a decorator."""
        def register(fn):
            for d in ([device_types] if isinstance(device_types, str) else device_types):
                self._kernels[str(d).split(":")[0]] = fn
            return fn
        return register if fn is None else register(fn)

    @property
    def default(self):
        return self


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Wraps a Python function into a custom operator ``name`` ("namespace::name"), callable as the function and as
    ``ember.ops.namespace.name``. Every parameter and the return need type annotations; ``mutates_args`` names the
    arguments the function writes in place (or is ``"unknown"``); the output must not alias an input.

    Example::

        >>> @ember.library.custom_op("mylib::scale", mutates_args=())
        ... def scale(x: ember.Tensor, k: float) -> ember.Tensor:
        ...     return x * k
        >>> ember.ops.mylib.scale(ember.ones(2), 3.0)
        tensor([3., 3.])
    """
    def wrap(fn):
        namespace, opname = _split_qualname(name)
        op = CustomOpDef(namespace, opname, fn, mutates_args)
        if device_types is not None:
            op.register_kernel(device_types, fn)
        _registry[op._qualname] = op
        return op
    return wrap if fn is None else wrap(fn)


def _lookup(op):
    if isinstance(op, CustomOpDef):
        return op
    if op not in _registry:
        raise RuntimeError(f"Operator {op} does not exist: define it with ember.library.custom_op first")
    return _registry[op]


def register_fake(op, fn=None, /):
    """``register_fake`` of the custom operator ``op`` (a CustomOpDef or its "namespace::name")."""
    return _lookup(op).register_fake if fn is None else _lookup(op).register_fake(fn)


def register_autograd(op, backward, /, *, setup_context=None):
    """``register_autograd`` of the custom operator ``op`` (a CustomOpDef or its "namespace::name")."""
    return _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, fn=None, /):
    """``register_kernel`` of the custom operator ``op`` (a CustomOpDef or its "namespace::name")."""
    return _lookup(op).register_kernel(device_types, fn)


class _OpPacket:
    """``ember.ops.aten.<name>``: an ember function with torch's overload attributes (``.default``, ``.Tensor``)."""

    def __init__(self, qualname, fn):
        self._qualname, self._fn = qualname, fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        return self._fn

    def __repr__(self):
        return self._qualname.replace("::", ".")


class _OpNamespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        op = _registry.get(f"{self._name}::{name}")
        if op is not None:
            return op
        if self._name == "aten":
            import ember
            fn = getattr(ember, name, None) or getattr(ember.nn.functional, name, None)
            if fn is None and hasattr(Tensor, name):
                fn = getattr(Tensor, name)
            if callable(fn):
                return _OpPacket(f"aten::{name}", fn)
        raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{name}'")


class _Ops:
    """``ember.ops``: the custom operators by namespace (``ember.ops.mylib.op``)."""

    def __getattr__(self, namespace):
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return _OpNamespace(namespace)


ops = _Ops()
