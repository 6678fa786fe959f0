"""Neural network modules, one family per file."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .flatten import Identity, Flatten, Unflatten
