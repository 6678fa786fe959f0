"""Instance normalization modules: InstanceNorm1d/2d/3d (each channel of each sample over its spatial dims)."""

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
import warnings

from .. import functional as F
from .batchnorm import _NormBase


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0  # the input dimensionality of an unbatched input

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        n = self._no_batch_dim
        if input.ndim not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    f"state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not track running stats by default since 0.4.0. "
                    "Please remove these keys from state_dict. If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the documentation of {klass} for "
                    "details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.ndim == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over a ``(N, C, L)`` or ``(C, L)`` input.

    Args:
        num_features: ``C``.
        eps: added to the variance. Default: 1e-5
        momentum: weight of the new statistics in the running ones. Default: 0.1
        affine: learn a per-channel ``weight`` and ``bias``. Default: False
        track_running_stats: keep running statistics and use them in evaluation. Default: False
    """
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over a ``(N, C, H, W)`` or ``(C, H, W)`` input; see :class:`InstanceNorm1d`."""
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input; see :class:`InstanceNorm1d`."""
    _no_batch_dim = 4
