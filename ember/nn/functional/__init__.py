"""Functional forms of the layers, activations and losses (``import ember.nn.functional as F``)."""
from .attention import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
