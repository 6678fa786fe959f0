"""einops layers for ember: ``from ember.nn.einops import Rearrange, Reduce, EinMix`` in place of
``from einops.layers.torch import ...`` (same patterns, parameters and ``state_dict`` keys). Needs the einops package.
"""
import ember
from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

from .modules import Module
from .parameter import Parameter

__all__ = ["Rearrange", "Reduce", "EinMix"]


class Rearrange(RearrangeMixin, Module):
    """Module form of ``einops.rearrange``.

    Example::

        >>> patchify = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)
        >>> patchify(ember.randn(2, 3, 32, 32)).shape
        ember.Size([2, 64, 48])
    """

    def forward(self, input):
        return self._apply_recipe(input)


class Reduce(ReduceMixin, Module):
    """Module form of ``einops.reduce``.

    Example::

        >>> pool = Reduce('b c h w -> b c', 'mean')
        >>> pool(ember.randn(2, 3, 8, 8)).shape
        ember.Size([2, 3])
    """

    def forward(self, input):
        return self._apply_recipe(input)


class EinMix(_EinmixMixin, Module):
    """Linear layer over named axes: ``einsum(pattern, input, weight) + bias``, as ``einops.layers.torch.EinMix``.

    Example::

        >>> mix = EinMix('b t c -> b t d', weight_shape='c d', bias_shape='d', c=8, d=16)
        >>> mix(ember.randn(2, 5, 8)).shape
        ember.Size([2, 5, 16])
    """

    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound):
        self.weight = Parameter(ember.zeros(weight_shape).uniform_(-weight_bound, weight_bound))
        self.bias = None
        if bias_shape is not None:
            self.bias = Parameter(ember.zeros(bias_shape).uniform_(-bias_bound, bias_bound))

    def _create_rearrange_layers(self, pre_reshape_pattern, pre_reshape_lengths, post_reshape_pattern,
                                 post_reshape_lengths):
        self.pre_rearrange = None
        if pre_reshape_pattern is not None:
            self.pre_rearrange = Rearrange(pre_reshape_pattern, **pre_reshape_lengths)
        self.post_rearrange = None
        if post_reshape_pattern is not None:
            self.post_rearrange = Rearrange(post_reshape_pattern, **post_reshape_lengths)

    def forward(self, input):
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = ember.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result += self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result
