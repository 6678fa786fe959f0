"""Lazy modules: parameters whose shape is inferred from the first input. The machinery (uninitialized tensors,
``LazyModuleMixin``) and the lazy norms live here; ``LazyLinear`` and ``LazyConv*`` live with their families."""
from ... import _creation, _dtype
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _UninitializedTensorMixin:
    def materialize(self, shape, device=None, dtype=None):
        """Allocates the tensor (uninitialised values) with ``shape`` and becomes ``cls_to_become``."""
        d, t = self._factory
        data = _creation.empty(shape, device=device or d or self.device, dtype=dtype or t or self.dtype)
        self._data, self.dtype, self.device = data._data, data.dtype, data.device
        del self._factory
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return f"<{type(self).__name__}>"

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before accessing their attributes.")

    def _uninitialized(self, *args, **kwargs):
        raise ValueError("Attempted to use an uninitialized parameter: call `forward` with a dummy batch to "
                         "initialize the LazyModule's parameters first")

    numel = nelement = dim = ndimension = __len__ = _uninitialized


class UninitializedParameter(_UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet; ``materialize(shape)`` turns it into a regular Parameter.

    Example::

        >>> p = ember.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', ember.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        p = Parameter.__new__(cls, _creation.empty(0, device=device, dtype=dtype), requires_grad)
        p._factory = (device, dtype)
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        result = type(self)(self._requires_grad, *self._factory)
        memo[id(self)] = result
        return result


class UninitializedBuffer(_UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; ``materialize(shape)`` turns it into a regular Tensor.

    Example::

        >>> b = ember.nn.UninitializedBuffer()
        >>> b.materialize((3,))
        >>> type(b).__name__, b.shape
        ('Tensor', ember.Size([3]))
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _creation.empty(0, device=device, dtype=dtype)
        b = Tensor._make.__func__(cls, data._data, data.dtype, data.device, requires_grad)
        b._factory = (device, dtype)
        b.persistent = persistent
        b._is_buffer = True
        return b


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input: ``initialize_parameters(input)``
    runs before the first forward (or a ``load_state_dict`` materializes them); the module then becomes
    ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for name, t in list(self._parameters.items()) + list(self._buffers.items()):
            if is_lazy(t) and prefix + name in destination:  # kept as is: a detached copy would lose the laziness
                destination[prefix + name] = t

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(tuple(state_dict[key].shape))

    def initialize_parameters(self, *args, **kwargs):
        """Materializes the parameters from the first input's shape (each lazy module defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether some parameter or buffer is still uninitialized."""
        return any(is_lazy(p) for p in list(self._parameters.values()) + list(self._buffers.values()))

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """``num_features`` from the first input; the module then becomes ``cls_to_become``."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        # affine and track_running_stats False here: no tensors to allocate before the shape is known
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=_dtype.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def _feature_dim(self, input):
        return 1

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[self._feature_dim(input)]
            with no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    def _feature_dim(self, input):
        # torch reads dim 1, which holds the features only in a batched input
        return input.ndim - self._no_batch_dim


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm1d` whose ``num_features`` is inferred from the first input; it then becomes one.

    Example::

        >>> m = ember.nn.LazyBatchNorm1d()
        >>> _ = m(ember.randn(4, 3))
        >>> m
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm2d` whose ``num_features`` is inferred from the first input; it then becomes one."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`BatchNorm3d` whose ``num_features`` is inferred from the first input; it then becomes one."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """An :class:`InstanceNorm1d` whose ``num_features`` is inferred from the first input; it then becomes one.
    Unlike InstanceNorm1d, ``affine`` and ``track_running_stats`` default to True, as torch's."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = InstanceNorm1d._no_batch_dim


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """An :class:`InstanceNorm2d` whose ``num_features`` is inferred from the first input; it then becomes one."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """An :class:`InstanceNorm3d` whose ``num_features`` is inferred from the first input; it then becomes one."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = InstanceNorm3d._no_batch_dim
