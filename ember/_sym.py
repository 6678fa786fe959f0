"""torch's ``sym_*`` helpers, which traced code uses in place of ``int()``, ``max()``, ``math.sqrt``... ember has no
symbolic sizes, so they act on Python numbers (and 0-d tensors) as those builtins do."""
import builtins
import math

import numpy as np

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "sym_ite", "SymInt",
           "SymFloat", "SymBool"]


class SymInt:
    """torch's symbolic int, for annotations and ``isinstance`` checks: ember's sizes are plain ints, none is one."""


class SymFloat:
    """torch's symbolic float, for annotations and ``isinstance`` checks: no ember value is one."""


class SymBool:
    """torch's symbolic bool, for annotations and ``isinstance`` checks: no ember value is one."""

_NUMBERS = (np.integer, np.floating, builtins.int, builtins.float)
_FLOATS = (np.floating, builtins.float)


def sym_int(a):
    """``int(a)``."""
    return builtins.int(a)


def sym_float(a):
    """``float(a)``."""
    return builtins.float(a)


def sym_not(a):
    """``not a``."""
    return not a


def sym_sqrt(a):
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def _check_numbers(a, b):
    for x in (a, b):
        if not isinstance(x, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(x)}")
    return isinstance(a, _FLOATS) or isinstance(b, _FLOATS)


def sym_max(a, b):
    """``max(a, b)`` of two numbers, a float if either is one."""
    return builtins.float(builtins.max(a, b)) if _check_numbers(a, b) else builtins.max(a, b)


def sym_min(a, b):
    """``min(a, b)`` of two numbers, a float if either is one."""
    return builtins.float(builtins.min(a, b)) if _check_numbers(a, b) else builtins.min(a, b)


def sym_sum(*args):
    """``sum(args)``: ``sym_sum([a, b, c])`` or ``sym_sum(a, b, c)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_ite(b, t, f):
    """``t if b else f``; ``b`` must be a bool and ``t``, ``f`` of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f
