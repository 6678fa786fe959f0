"""Moving a tensor to another dtype or device."""
from .. import _dtype
from .._device import CPU, array_module, normalize
from ..autograd.function import Function


class To(Function):
    @staticmethod
    def forward(ctx, x, dtype, device, copy):
        ctx.src = (ctx._device, x.dtype)
        if device is not ctx._device:
            if device is CPU:
                x = x.get()
            elif ctx._device is CPU:
                x = array_module(device).asarray(x)
            else:
                with array_module(device).cuda.Device(device.index):
                    x = array_module(device).asarray(x)
            ctx._device = device  # outputs (and gradients flowing back into them) live on the new device
        return x.astype(dtype.np) if x.dtype != dtype.np else x.copy() if copy else x

    @staticmethod
    def backward(ctx, grad):
        dev, np_dtype = ctx.src
        return to_device_dtype(grad, _dtype.from_numpy_dtype(np_dtype), dev, False)


def to_device_dtype(x, dtype, device, copy):
    dtype = x.dtype if dtype is None else _dtype.to_dtype(dtype)
    device = x.device if device is None else normalize(device)
    if dtype is x.dtype and device is x.device and not copy:
        return x
    return To.apply(x, dtype=dtype, device=device, copy=copy)
