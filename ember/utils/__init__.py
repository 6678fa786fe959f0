"""Utilities: data loading (``ember.utils.data``), training checkpoints (``Checkpointer``), safetensors files
(``ember.utils.safetensors``)."""
from . import data
from .checkpointer import Checkpointer
