"""Handing a dataset to workers that do not fork (spawn, forkserver) without a private copy of its arrays per worker.

The dataset is pickled once; every NumPy array (or CPU tensor) of at least ``MIN_BYTES`` inside it is copied into one
POSIX shared-memory segment and pickled as the segment's name. A worker maps the segment copy-on-write, as a fork
would: all workers read the same physical pages, and a worker that writes to its array changes only its own copy.
The segments live as long as the workers (``SharedPayload.release``).
"""
import io
import mmap
import os
import pickle
from multiprocessing import reduction, shared_memory

import numpy as np

MIN_BYTES = 1 << 16


def _attach(name, shape, dtype):
    count = int(np.prod(shape, dtype=np.int64))
    path = os.path.join("/dev/shm", name)
    if os.path.exists(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            buf = mmap.mmap(fd, count * dtype.itemsize, access=mmap.ACCESS_COPY)
        finally:
            os.close(fd)
    else:  # a platform without /dev/shm: map it shared (writes are then seen by every worker)
        buf = shared_memory.SharedMemory(name).buf
    return np.frombuffer(buf, dtype, count).reshape(shape)


def _attach_tensor(array, dtype_name, requires_grad):
    from ... import _dtype
    from ..._tensor import Tensor
    from ..._device import CPU
    return Tensor._make(array, getattr(_dtype, dtype_name), CPU, requires_grad)


class _Pickler(reduction.ForkingPickler):
    def __init__(self, file, segments):
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.segments = segments

    def reducer_override(self, obj):
        from ..._tensor import Tensor
        if isinstance(obj, Tensor) and obj.device.type == "cpu" and obj.grad_fn is None and obj.grad is None \
                and obj._data.nbytes >= MIN_BYTES:
            return _attach_tensor, (obj._data, obj.dtype.name, obj._requires_grad)
        if type(obj) is np.ndarray and obj.nbytes >= MIN_BYTES and not obj.dtype.hasobject:
            shm = shared_memory.SharedMemory(create=True, size=obj.nbytes)
            self.segments.append(shm)
            view = np.ndarray(obj.shape, obj.dtype, buffer=shm.buf)
            view[...] = obj
            del view  # the segment cannot be closed while an array still exports its buffer
            return _attach, (shm.name, obj.shape, obj.dtype)
        return NotImplemented


def _load(data):
    return pickle.loads(data)


class SharedPayload:
    """Pickles as ``obj``, with its large arrays in shared memory; pickled once however many workers take it."""

    def __init__(self, obj):
        self.obj = obj
        self.segments = []
        self._data = None

    def __reduce__(self):
        if self._data is None:
            buf = io.BytesIO()
            _Pickler(buf, self.segments).dump(self.obj)
            self._data = buf.getvalue()
        return _load, (self._data,)

    def release(self):
        """Frees the segments (workers that mapped them keep their mappings)."""
        for shm in self.segments:
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                pass
        self.segments = []
