"""Neural networks: Module and its containers, layers, parameter initialisation."""
from .parameter import Parameter, Buffer
from .modules import (Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Flatten,
                      Unflatten)
from .modules import *  # noqa: F401,F403
from . import functional, grad, init, modules, parameter
from . import parallel
from . import attention
from .parallel import DataParallel
