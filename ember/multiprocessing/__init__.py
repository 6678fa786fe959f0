"""Python's :mod:`multiprocessing`, as ``torch.multiprocessing`` wraps it, plus :func:`spawn`.

Tensors sent to other processes are pickled (copied); the sharing strategy is recorded for scripts that set it but
does not change how ember sends tensors.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn", "start_processes",
           "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

_all_strategies = {"file_system"} if sys.platform in ("darwin", "win32") else {"file_descriptor", "file_system"}
_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors: one of :func:`get_all_sharing_strategies`."""
    global _strategy
    if new_strategy not in _all_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_strategies}")
    _strategy = new_strategy


def get_sharing_strategy():
    return _strategy


def get_all_sharing_strategies():
    return _all_strategies
