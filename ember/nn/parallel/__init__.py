"""Parallel wrappers of modules."""
from .data_parallel import DataParallel

__all__ = ["DataParallel"]
