"""swap_in_optimizer_params_and_state: step an optimizer on other parameters and state, then restore its own."""
import contextlib
from collections import defaultdict

from .._tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _swapin_groups(optimizer, parameters, optim_state):
    """The checked packed ``state`` and, per live group, ``(group, saved group, parameters)``."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state, groups = optim_state.get("state"), optim_state.get("param_groups")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    flat, offset, seen, infos = list(parameters.values()), 0, set(), []
    for idx, (group, saved) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(saved, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
        ids = saved.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
                               "keyed by packed parameter ids.")
        if len(group["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the "
                               "live optimizer param group.")
        saved_only, live_only = [k for k in saved if k not in group], [k for k in group if k not in saved]
        if saved_only or live_only:
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                               f"live optimizer group keys for group {idx}. Keys only in swap-in: {saved_only}. Keys "
                               f"only in live: {live_only}.")
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        seen.update(ids)
        infos.append((group, saved, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Temporarily replaces an optimizer's parameters and state with the given ones, restoring them on exit.

    Args:
        optimizer (Optimizer): the live optimizer; its state must already be initialized.
        swapin_parameters (dict): tensors to optimize within the context, in the order of the optimizer's
            parameters (most commonly ``model.named_parameters()`` order).
        swapin_optim_state (dict): a :meth:`Optimizer.state_dict`-shaped dict holding the state (and the group
            options) to install; in-place updates of its tensors are kept.

    Example::

        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ember.ones(2)
        >>> opt.step()
        >>> other = {"w": ember.zeros(2)}
        >>> other["w"].grad = ember.ones(2)
        >>> with ember.optim.swap_in_optimizer_params_and_state(opt, other, opt.state_dict()):
        ...     opt.step()
        >>> other["w"]
        tensor([-0.1900, -0.1900])
    """
    state, infos = _swapin_groups(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for group, saved, params in infos:
            group.update((k, v) for k, v in saved.items() if k != "params")
            group["params"] = params
            for p, i in zip(params, saved["params"]):
                swapped[p] = dict(state.get(i, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
