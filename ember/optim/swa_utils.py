"""Stochastic Weight Averaging and EMA of weights, as ``torch.optim.swa_utils``: AveragedModel, SWALR, update_bn and
the averaging functions."""
import itertools
import math
from copy import deepcopy

from .. import _dtype
from .._creation import tensor
from .._foreach import _foreach_add_, _foreach_addcdiv_, _foreach_lerp_, _foreach_sub
from .._tensor import Tensor, is_complex, is_floating_point
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place averaging function over lists of tensors for :class:`AveragedModel`: the exponential moving
    average ``W_ema = decay * W_ema + (1 - decay) * W_model``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if is_floating_point(ema_param_list[0]) or is_complex(ema_param_list[0]):
            _foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place averaging function over lists of tensors for :class:`AveragedModel`: the running equal-weight
    average ``W_swa += (W_model - W_swa) / (n_averaged + 1)``."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if is_floating_point(averaged_param_list[0]) or is_complex(averaged_param_list[0]):
            _foreach_lerp_(averaged_param_list, current_param_list, float(1 / (num_averaged + 1)))
        else:
            diffs = _foreach_sub(current_param_list, averaged_param_list)
            if isinstance(num_averaged, Tensor):
                _foreach_addcdiv_(averaged_param_list, diffs, [num_averaged + 1] * len(averaged_param_list))
            else:
                _foreach_add_(averaged_param_list, diffs, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An averaging function of one tensor for :class:`AveragedModel`'s ``avg_fn``: the exponential moving average
    ``decay * W_ema + (1 - decay) * W_model``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """An averaging function of one tensor for :class:`AveragedModel`'s ``avg_fn``: the running equal-weight average
    ``W_swa + (W_model - W_swa) / (n_averaged + 1)``."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters hold a running average (SWA, or EMA with
    :func:`get_ema_multi_avg_fn`) of ``model``'s, updated by :meth:`update_parameters`.

    Args:
        model (Module): the model to average.
        device (device, optional): where the averaged copy lives. Default: the model's
        avg_fn (callable, optional): ``avg_fn(averaged, current, n_averaged)`` returning the new average of one
            tensor. Default: None
        multi_avg_fn (callable, optional): ``multi_avg_fn(averaged_list, current_list, n_averaged)`` updating lists
            of tensors in place. Default: None (equal-weight average)
        use_buffers (bool): average the buffers too (else they are copied from ``model``). Default: False

    Example::

        >>> ema = ember.optim.swa_utils.AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
        >>> ema.update_parameters(model)  # after each optimizer step
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Calls the averaged module."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Folds ``model``'s current parameters (and buffers with ``use_buffers``) into the average; the first call
        copies them."""
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params, model_params = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(self_params, model_params):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)
        if not first:
            groups = {}  # by device and dtype, as torch's multi-tensor path
            for a, c in zip(averaged, current):
                group = groups.setdefault((str(a.device), a.dtype), ([], []))
                group[0].append(a)
                group[1].append(c)
            for a, c in groups.values():
                n = self.n_averaged.to(a[0].device)
                if self.multi_avg_fn is not None or (self.avg_fn is None and a[0].device.type == "cuda"):
                    (self.multi_avg_fn or get_swa_multi_avg_fn())(a, c, n)
                else:  # torch averages one tensor at a time off its foreach devices (CPU), with avg_fn or SWA's
                    avg_fn = self.avg_fn or get_swa_avg_fn()
                    for p_avg, p_model in zip(a, c):
                        p_avg.copy_(avg_fn(p_avg, p_model, n))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of ``model``'s BatchNorm layers with one pass over ``loader`` (batches are
    tensors, or lists/tuples whose first element is the input), as a cumulative average.

    Example::

        >>> ember.optim.swa_utils.update_bn(loader, swa_model)
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each param group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs (by a cosine or a
    line), then holds it there; used with :class:`AveragedModel`.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        swa_lr (float or list): the final learning rate, for all groups or per group.
        anneal_epochs (int): epochs of annealing. Default: 10
        anneal_strategy (str): 'cos' or 'linear'. Default: 'cos'
        last_epoch (int): the index of the last epoch. Default: -1
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        """The learning rates of the current step: the previous ones moved along the annealing curve."""
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def state_dict(self):
        """The scheduler's state: every attribute except the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restores a state from :meth:`state_dict`."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
