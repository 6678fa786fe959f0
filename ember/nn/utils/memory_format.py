"""Converting convolution weights to a memory format (``channels_last``) without touching other layers."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lays out the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself included) in
    ``memory_format``; values and shapes are unchanged. Returns ``module``.

    Example::

        >>> m = ember.nn.utils.convert_conv2d_weight_memory_format(ember.nn.Conv2d(3, 4, 3), ember.channels_last)
        >>> m.weight.is_contiguous(memory_format=ember.channels_last)
        True
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As :func:`convert_conv2d_weight_memory_format`, for ``Conv3d`` and ``ConvTranspose3d`` weights
    (``channels_last_3d``)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
