"""``DataParallel``: torch's single-process multi-GPU wrapper."""
from ..._device import cuda_available, device as _device
from ..modules.module import Module

__all__ = ["DataParallel"]


def _to(obj, dev):
    if hasattr(obj, "_data"):  # a tensor
        return obj.to(dev)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """Wraps ``module`` (registered as ``self.module``: its state-dict keys get the prefix ``'module.'``).

    Without CUDA, as torch on a CPU-only machine, ``device_ids`` is ``[]`` and calling the wrapper calls ``module``.
    With CUDA, the module moves to ``device_ids[0]``, inputs are moved there and outputs to ``output_device``; the
    whole batch runs on that one device (ember does not split it over several GPUs), so results are the same as
    torch's and only the speed-up of several devices is missing.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        if not cuda_available():
            self.device_ids = []
            return
        from ...cuda import device_count
        if device_ids is None:
            device_ids = list(range(device_count()))
        self.device_ids = [d if isinstance(d, int) else _device(d).index or 0 for d in device_ids]
        self.output_device = self.device_ids[0] if output_device is None else (
            output_device if isinstance(output_device, int) else _device(output_device).index or 0)
        self.dim = dim
        self.src_device_obj = _device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in (*self.module.parameters(), *self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        out = self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
        return _to(out, _device("cuda", self.output_device))
