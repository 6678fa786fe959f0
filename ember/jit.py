"""``ember.jit``: TorchScript's entry points, accepted so that scripts written for ``torch.jit`` run. ember has no
graph compiler (see :func:`ember.compile`): ``script`` and ``trace`` return the function or module itself, which
computes exactly what it computed before; the decorators mark nothing."""
import warnings
from typing import Final  # torch.jit.Final, for module constants

__all__ = ["Final", "script", "trace", "ignore", "unused", "export", "annotate", "is_scripting", "is_tracing",
           "_script_if_tracing"]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function or module) itself."""
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    if isinstance(obj, type) and obj.__module__ == "builtins":
        raise TypeError(f"{obj} is a built-in class")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Returns ``func`` (a function or module) itself, without running it on ``example_inputs``."""
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    return func


def ignore(drop=False, **kwargs):
    """``@ignore`` or ``@ignore(drop=...)``: leaves the function as Python (it always is, in ember)."""
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    if drop or kwargs.get("drop_on_export"):
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on compilation. "
                      "Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """Marks a function or property that scripting would replace by a raise; it is kept as is."""
    return fn


def export(fn):
    """Marks a method to compile besides ``forward``; it is kept as is."""
    return fn


def annotate(the_type, the_value):
    """Returns ``the_value``: a type hint for TorchScript."""
    return the_value


def is_scripting():
    """False: ember code never runs as TorchScript."""
    return False


def is_tracing():
    """False: ember never traces."""
    return False


def _script_if_tracing(fn):
    """Returns ``fn``: it would be scripted only while tracing (torchvision's box coders are decorated so)."""
    return fn
