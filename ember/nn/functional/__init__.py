"""Functional forms of the layers, activations and losses (``import ember.nn.functional as F``)."""
from .attention import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .. import grad  # noqa: F401,E402  F.grad.conv2d_input...
