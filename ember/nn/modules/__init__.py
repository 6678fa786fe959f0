"""Neural network modules, one family per file."""
from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .flatten import Identity, Flatten, Unflatten

from .rnn import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from . import utils  # noqa: F401

__all__ = [_name for _name, _obj in list(globals().items()) if isinstance(_obj, type) and not _name.startswith("_")]
