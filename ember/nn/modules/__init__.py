"""Neural network modules, one family per file."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .flatten import Identity, Flatten, Unflatten

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Flatten",
           "Unflatten"]
from .rnn import *  # noqa: F401,F403
