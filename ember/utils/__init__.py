"""Utilities: data loading (``ember.utils.data``), training checkpoints (``Checkpointer``), activation checkpointing
(``ember.utils.checkpoint``), safetensors files (``ember.utils.safetensors``), nested containers (``_pytree``),
``model_zoo.load_url`` and DLPack capsules (``dlpack``)."""
from . import data
from .checkpointer import Checkpointer
from . import checkpoint
from . import hooks
from . import _pytree
from . import dlpack


def __getattr__(name):
    # ember.utils.model_zoo imports ember.hub (urllib), on first use; the others are rarely used
    if name in ("model_zoo", "benchmark", "collect_env", "flop_counter", "weak"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
