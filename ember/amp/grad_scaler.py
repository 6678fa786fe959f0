"""GradScaler: dynamic loss scaling for mixed-precision training, as ``torch.amp.GradScaler``.

The scale is kept as a Python float holding a float32 value (torch keeps a float32 tensor), so every update rounds
as torch's does. Gradients are checked and unscaled with ember ops, on whatever device they live.
"""
import math
import warnings
from collections import abc, defaultdict
from enum import Enum

import numpy as np

from .. import _dtype, cuda
from .._ops.compare import isfinite
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["OptState", "GradScaler"]


class OptState(Enum):
    """Where an optimizer is in the current iteration: nothing done yet, gradients unscaled, or stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _fp32(x):
    """``x`` rounded to the nearest float32 (what filling torch's float32 scale tensor stores)."""
    with np.errstate(over="ignore"):
        return np.float32(x).item()


class GradScaler:
    """Scales losses up so that small gradients do not underflow in low precision, and unscales them before the step.

    * ``scaler.scale(loss)`` multiplies the loss by the current scale factor.
    * ``scaler.step(optimizer)`` unscales the gradients and calls ``optimizer.step()``, unless one is inf/NaN.
    * ``scaler.update()`` backs the scale off after a skipped step, or grows it after ``growth_interval`` clean ones.

    Args:
        device (str): the device type of the scaled outputs, ``'cuda'`` or ``'cpu'``. Default: ``'cuda'``
        init_scale (float): initial scale factor. Default: 2.**16
        growth_factor (float): factor the scale is multiplied by after ``growth_interval`` consecutive steps without
            inf/NaN gradients. Default: 2.0
        backoff_factor (float): factor the scale is multiplied by after a step with inf/NaN gradients. Default: 0.5
        growth_interval (int): number of consecutive clean steps before the scale grows. Default: 2000
        enabled (bool): if False, :meth:`step` just calls ``optimizer.step()`` and the other methods do nothing.
            Default: True

    Example::

        >>> scaler = ember.amp.GradScaler("cpu")  # doctest: +SKIP
        >>> for input, target in data:  # doctest: +SKIP
        ...     optimizer.zero_grad()
        ...     scaler.scale(loss_fn(model(input), target)).backward()
        ...     scaler.step(optimizer)
        ...     scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # set by the first scale(), as torch's scale tensor
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._growth_tracker = 0
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")

    def scale(self, outputs):
        """Multiplies a tensor, or an iterable (nested lists/tuples) of tensors, by the scale factor.

        Returns the scaled outputs, with the same structure; ``outputs`` itself when disabled.
        """
        if not self._enabled:
            return outputs

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._scale = _fp32(self._init_scale)
                return val * self._scale
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def unscale_(self, optimizer):
        """Divides the gradients of ``optimizer``'s parameters by the scale factor, in place.

        Optional: call it between ``backward()`` and :meth:`step` to inspect or modify (e.g. clip) the unscaled
        gradients; otherwise :meth:`step` does it. At most once per optimizer between :meth:`update` calls.
        """
        if not self._enabled:
            return
        self._check_scale("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if any(g.dtype is _dtype.float16 for g in grads):
            raise ValueError("Attempting to unscale FP16 gradients.")
        inv_scale = _fp32(1.0 / self._scale)
        found_inf = optimizer_state["found_inf_per_device"]  # device -> 0-d bool tensor: an inf/NaN was seen
        with no_grad():
            for g in grads:
                bad = ~isfinite(g).all()
                found_inf[g.device] = found_inf[g.device] | bad if g.device in found_inf else bad
                g.mul_(inv_scale)
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales the gradients (unless :meth:`unscale_` already did) and calls ``optimizer.step(*args, **kwargs)``
        if none of them is inf/NaN.

        Returns what ``optimizer.step`` returns, or None when the step is skipped. Closures are not supported.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not optimizer_state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not any(found.item() for found in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Updates the scale factor, at the end of an iteration (after :meth:`step` for every optimizer).

        The scale is multiplied by ``backoff_factor`` if any optimizer found inf/NaN gradients, and by
        ``growth_factor`` after ``growth_interval`` consecutive iterations without any.

        Args:
            new_scale (float or Tensor, optional): sets the scale to this value instead (a one-element tensor with
                ``requires_grad=False`` on the scaler's device type).
        """
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if not isinstance(new_scale, float):
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                         "torch.FloatTensor with requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = _fp32(new_scale)
        else:
            found_infs = [found for state in self._per_optimizer_states.values()
                          for found in state["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found.item() for found in found_infs):
                self._scale = _fp32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                grown = _fp32(self._scale * self._growth_factor)
                if math.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def get_scale(self):
        """Returns the current scale as a Python float, or 1.0 if scaling is disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        """Returns the scale growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Sets the scale growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """Returns the scale backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Sets the scale backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """Returns the growth interval."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Sets the growth interval."""
        self._growth_interval = new_interval

    def is_enabled(self):
        """Whether this scaler is enabled."""
        return self._enabled

    def state_dict(self):
        """Returns the scaler's state: ``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (the number of recent consecutive unskipped steps); an empty dict if disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        """Loads a state returned by :meth:`state_dict`; does nothing if this scaler is disabled."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _fp32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, or "
                                     "at the end after scaler.update().")
            state["_init_scale"], state["_scale"] = self.get_scale(), None
        return state
