"""``ember.cond`` and ``ember.while_loop``: torch's control-flow operators, which ember (running eagerly) runs as
Python's ``if`` and ``while``."""
from ._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, op):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if not isinstance(pred, (bool, int)):
        raise RuntimeError(f"{op}: expected pred to be bool or a tensor, but got {type(pred).__name__}")
    return bool(pred)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` (a bool or a one-element tensor) holds, else ``false_fn(*operands)``.

    Example::

        >>> ember.cond(ember.tensor(True), lambda x: x + 1, lambda x: x - 1, (ember.ones(1),))
        tensor([2.])
    """
    operands = tuple(operands) if isinstance(operands, (tuple, list)) else (operands,)
    return true_fn(*operands) if _truth(pred, "cond") else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Applies ``body_fn`` to the carried values while ``cond_fn`` of them holds; returns them as a tuple.

    Example::

        >>> ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (ember.tensor(0), ember.ones(1)))
        (tensor(3), tensor([8.]))
    """
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "while_loop"):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried
