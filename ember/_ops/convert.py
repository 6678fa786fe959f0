"""Moving a tensor to another dtype or device."""
import numpy as np

from .. import _dtype
from .._device import CPU, META, array_module, meta_array, normalize
from .._settings import warn_once
from ..autograd.function import Function
from ._strided import elem_strides
from .memory_format import laid_out, like_strides, preserve_format


class To(Function):
    def name(self):
        return "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype, device, copy):
        ctx.src = (ctx._device, x.dtype)
        if device is META or ctx._device is META:
            if device is not META:
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            ctx._device = META
            return meta_array(x.shape, dtype.np)
        if device is not ctx._device:
            if device is CPU:
                x = x.get()
            elif ctx._device is CPU:
                x = array_module(device).asarray(x)
            else:
                with array_module(device).cuda.Device(device.index):
                    x = array_module(device).asarray(x)
            ctx._device, ctx.xp = device, array_module(device)  # outputs (and their gradients) live on the new device
        if x.dtype == dtype.np:
            y = x.copy(order="K") if copy else x
        else:
            y = _cast(ctx.xp, x, dtype.np)
        if y is not x and not x.flags.c_contiguous:  # torch's preserve_format: a dense input keeps its strides,
            strides = like_strides(x, preserve_format)  # another gets the dense strides of its dimension order
            if strides is not None and elem_strides(y) != strides:
                y = laid_out(ctx.xp, y, strides)
        return y

    @staticmethod
    def backward(ctx, grad):
        dev, np_dtype = ctx.src
        if grad.dtype.is_complex and np_dtype.kind != "c":
            grad = grad.real  # a real input of a complex result: the real part, as torch (no cast warning)
        return to_device_dtype(grad, _dtype.from_numpy_dtype(np_dtype), dev, False)


def _cast(xp, x, np_dtype):
    """``x.astype(np_dtype)`` with torch's results where C leaves them undefined (NaN/inf/out-of-range floats to
    small integers go through int32, as torch's CPU kernels do) and without NumPy's warnings. float8 converts
    through float32, by torch's rules."""
    if x.dtype in _dtype.FLOAT8_NP:
        x = _dtype.float8_to_float32(xp, x, np_dtype)
        if x.dtype == np_dtype:
            return x
    if x.dtype.kind == "c" and np_dtype.kind not in "cb":  # to bool: nonzero, without a warning
        warn_once("Casting complex values to real discards the imaginary part", 3)
        x = x.real
    if np_dtype in _dtype.FLOAT8_NP:
        return _dtype.float32_to_float8(xp, x, np_dtype)
    if x.dtype.kind not in "iub" and np_dtype.kind in "iu" and np_dtype.itemsize < 4:
        with np.errstate(invalid="ignore", over="ignore"):  # CuPy has no errstate: it never warns
            x = x.astype(xp.int32)
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(np_dtype)




def to_device_dtype(x, dtype, device, copy):
    dtype = x.dtype if dtype is None else _dtype.to_dtype(dtype)
    device = x.device if device is None else normalize(device)
    if dtype is x.dtype and device is x.device and not copy:
        return x
    _dtype.check_device(dtype, device)
    return To.apply(x, dtype=dtype, device=device, copy=copy)
