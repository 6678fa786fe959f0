"""einops backend for ember tensors: `einops.rearrange/reduce/repeat/pack/unpack/einsum` accept ember tensors.

einops finds a backend among the subclasses of its `AbstractBackend` whose `framework_name` is an imported module;
this module defines ember's, and is imported as soon as einops is (see `_after_import`). It is einops' torch backend
run on ember: that backend calls torch's functions through `self.torch`, and ember's have the same names.
"""
from einops._backends import TorchBackend

import ember


class EmberBackend(TorchBackend):
    framework_name = "ember"

    def __init__(self):  # not TorchBackend's, which imports torch
        self.torch = ember

    def layers(self):
        from .nn import einops
        return einops
