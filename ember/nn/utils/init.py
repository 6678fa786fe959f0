"""``skip_init``: building a module without initializing its parameters, as ``torch.nn.utils.skip_init``."""
import inspect

from ..._random import fork_rng
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Builds ``module_cls(*args, **kwargs)`` with unspecified parameter and buffer values, drawing no random numbers.

    torch builds the module on the ``meta`` device and then allocates it empty; ember has no meta device, so it
    runs the usual initialization and restores the random generators' states afterwards.

    Args:
        module_cls: a Module class whose constructor takes a ``device`` argument.
        *args, **kwargs: the constructor's arguments.

    Example::

        >>> m = skip_init(ember.nn.Linear, 5, 1)
        >>> m.weight.shape
        ember.Size([1, 5])
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    with fork_rng():
        return module_cls(*args, **kwargs)
