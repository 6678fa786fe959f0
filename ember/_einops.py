"""einops backend for ember tensors: `einops.rearrange/reduce/repeat/pack/unpack/einsum` accept ember tensors.

einops finds a backend among the subclasses of its `AbstractBackend` whose `framework_name` is an imported module;
this module defines ember's, and is imported as soon as einops is (see `_after_import`).
"""
from einops._backends import AbstractBackend

import ember


class EmberBackend(AbstractBackend):
    framework_name = "ember"

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, ember.Tensor)

    def from_numpy(self, x):
        variable = ember.from_numpy(x)
        if self.is_float_type(variable):
            variable.requires_grad = True
        return variable

    def to_numpy(self, x):
        return x.detach().cpu().numpy()

    def arange(self, start, stop):
        return ember.arange(start, stop, dtype=ember.int64)

    def reduce(self, x, operation, reduced_axes):
        if operation in ("min", "max", "sum", "mean"):
            return getattr(x, {"min": "amin", "max": "amax"}.get(operation, operation))(dim=reduced_axes)
        if operation in ("any", "all", "prod"):
            for i in sorted(reduced_axes)[::-1]:
                x = getattr(x, operation)(dim=i)
            return x
        raise NotImplementedError("Unknown reduction ", operation)

    def transpose(self, x, axes):
        return x.permute(axes)

    def stack_on_zeroth_dimension(self, tensors):
        return ember.stack(tensors)

    def add_axes(self, x, n_axes, pos2len):
        # a broadcast view, as `expand`: repeated axes share memory until written
        repeats = [-1] * n_axes
        for axis_position, axis_length in pos2len.items():
            x = ember.unsqueeze(x, axis_position)
            repeats[axis_position] = axis_length
        return x.expand(repeats)

    def tile(self, x, repeats):
        return x.repeat(repeats)

    def concat(self, tensors, axis):
        return ember.cat(tensors, dim=axis)

    def add_axis(self, x, new_position):
        return ember.unsqueeze(x, new_position)

    def is_float_type(self, x):
        return x.dtype in (ember.float16, ember.float32, ember.float64, ember.bfloat16)

    def layers(self):
        from .nn import einops
        return einops

    def einsum(self, pattern, *x):
        return ember.einsum(pattern, *x)
