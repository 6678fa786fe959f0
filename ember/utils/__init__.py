"""Utilities: data loading (``ember.utils.data``), training checkpoints (``Checkpointer``), activation checkpointing
(``ember.utils.checkpoint``), safetensors files (``ember.utils.safetensors``)."""
from . import data
from .checkpointer import Checkpointer
from . import checkpoint
from . import hooks
