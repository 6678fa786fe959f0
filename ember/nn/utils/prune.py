"""Pruning as a forward pre-hook, as ``torch.nn.utils.prune``: ``name`` becomes the parameter ``name_orig`` and the
buffer ``name_mask``, and ``name = name_mask * name_orig`` is recomputed before every forward.

Ties between equal magnitudes go to the lowest flat index (ember's ``topk`` is stable); torch's ``topk`` breaks
them in an unspecified, size-dependent order, so masks agree with torch whenever the pruned magnitudes are distinct.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import _creation
from ..._ops.sort import kthvalue, topk
from ..._random import rand, rand_like
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured",
           "random_structured", "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """Base class of pruning methods: ``compute_mask(t, default_mask)`` gives the new mask; ``apply`` installs the
    method on a module as a forward pre-hook (combining it with earlier ones through a :class:`PruningContainer`)."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t``, pruning further what ``default_mask`` keeps."""

    def apply_mask(self, module):
        """``name_mask * name_orig`` of ``module``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``module.name`` with ``cls(*args, **kwargs)`` on the fly; returns the installed method."""
        old_method, old_keys = None, []
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                old_keys.append(k)
        if len(old_keys) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 "Use a PruningContainer.")
        for k in old_keys:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        elif old_method is not None:
            method = PruningContainer(old_method, method)

        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):  # undo the reparametrization
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (computed from ``importance_scores``, ``t`` by default)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, got "
                                     f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else _creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: ``name`` becomes a plain parameter holding the pruned values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods of one tensor, for iterative pruning: the last one prunes what the earlier ones
    kept (the unpruned entries, or the unpruned slices for a structured method)."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) >= 1 and args[0] is not None:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends ``method``, which must act on the same tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` pruned further by the last method, applied only to what ``default_mask`` keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                     "defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count if an int) of the entries, chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        nparams_toprune = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(nparams_toprune, t.nelement())
        mask = default_mask.clone()
        if nparams_toprune != 0:
            mask.view(-1)[topk(rand_like(t).view(-1), k=nparams_toprune).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count if an int) of the entries: those of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        nparams_toprune = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(nparams_toprune, t.nelement())
        mask = default_mask.clone()
        if nparams_toprune != 0:
            mask.view(-1)[topk(t.abs().view(-1), k=nparams_toprune, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count if an int) of the slices along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams_toprune, nchannels)
        if nparams_toprune == 0:
            return default_mask
        prob = rand(nchannels, device=t.device)
        keep = prob > kthvalue(prob, k=nparams_toprune).values
        return _slice_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes ``amount`` (a fraction, or a count if an int) of the slices along ``dim``: those of smallest
    ``n``-norm (``n`` as ``ember.norm``'s ``p``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams_toprune, nchannels)
        if nparams_toprune == 0:
            return default_mask
        dim = self.dim % t.dim()
        norm = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = topk(norm, k=nchannels - nparams_toprune, largest=True).indices
        return _slice_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Reparametrizes ``module.name`` as ``name_orig * name_mask`` with a mask of ones, pruning nothing.

    Example::

        >>> m = identity(ember.nn.Linear(2, 3), 'weight')
        >>> print(m.weight_mask)
        tensor([[1., 1.],
                [1., 1.],
                [1., 1.]])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes ``amount`` (a fraction in [0, 1], or a count if an int) of the entries of ``module.name`` at random.

    Example::

        >>> m = random_unstructured(ember.nn.Linear(2, 3), 'weight', amount=1)
        >>> int((m.weight_mask == 0).sum())
        1
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes ``amount`` (a fraction in [0, 1], or a count if an int) of the entries of ``module.name``: those of
    smallest absolute value (of ``importance_scores`` when given).

    Example::

        >>> m = ember.nn.Linear(2, 2, bias=False)
        >>> _ = m.weight.data.copy_(ember.tensor([[1., -4.], [3., -2.]]))
        >>> print(l1_unstructured(m, 'weight', amount=0.5).weight_mask)
        tensor([[0., 1.],
                [1., 0.]])
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` (a fraction in [0, 1], or a count if an int) of the slices of ``module.name`` along
    ``dim``, chosen at random.

    Example::

        >>> m = random_structured(ember.nn.Linear(5, 3), 'weight', amount=2, dim=0)
        >>> print(m.weight_mask.sum(1).tolist().count(0.0))
        2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes ``amount`` (a fraction in [0, 1], or a count if an int) of the slices of ``module.name`` along
    ``dim``: those of smallest ``n``-norm (of ``importance_scores`` when given).

    Example::

        >>> m = ember.nn.Linear(2, 3, bias=False)
        >>> _ = m.weight.data.copy_(ember.tensor([[1., 1.], [3., 0.], [0., 2.]]))
        >>> print(ln_structured(m, 'weight', amount=1, n=2, dim=0).weight_mask)
        tensor([[0., 0.],
                [1., 1.],
                [1., 1.]])
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the ``(module, name)`` pairs of ``parameters`` together with the unstructured ``pruning_method``
    class (built with ``kwargs``), as if they were one flat tensor; ``importance_scores`` maps pairs to scores.

    Example::

        >>> a, b = ember.nn.Linear(2, 2), ember.nn.Linear(2, 2)
        >>> global_unstructured([(a, 'weight'), (b, 'weight')], L1Unstructured, amount=3)
        >>> int((a.weight_mask == 0).sum() + (b.weight_mask == 0).sum())
        3
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name)) for m, name in parameters])
    default_mask = parameters_to_vector([getattr(m, name + "_mask", _creation.ones_like(getattr(m, name)))
                                         for m, name in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    final_mask = PruningContainer(method).compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + param.numel()].view_as(param))
        pointer += param.numel()


def custom_from_mask(module, name, mask):
    """Prunes ``module.name`` where ``mask`` is 0.

    Example::

        >>> m = custom_from_mask(ember.nn.Linear(3, 2), 'bias', mask=ember.tensor([0., 1.]))
        >>> print(m.bias_mask)
        tensor([0., 1.])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.name`` permanent: drops ``name_orig``, ``name_mask`` and the hook, leaving the
    pruned values as the parameter ``name``.

    Example::

        >>> m = remove(l1_unstructured(ember.nn.Linear(5, 3), 'weight', amount=0.2), 'weight')
        >>> sorted(dict(m.named_parameters()))
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or one of its submodules has a pruning hook.

    Example::

        >>> m = ember.nn.Sequential(ember.nn.Linear(2, 2))
        >>> is_pruned(m), is_pruned(identity(m[0], 'bias'))
        (False, True)
    """
    return any(isinstance(hook, BasePruningMethod) for _, m in module.named_modules()
               for hook in m._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t):
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {t.dim()} dims")


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_nparams_toprune(amount, tensor_size):
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _slice_mask(t, dim, keep):
    """Ones in the slices of ``t`` along ``dim`` that ``keep`` (a bool mask or indices) selects, zeros elsewhere."""
    mask = _creation.zeros_like(t)
    mask[tuple(keep if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask
