"""safetensors files of ember tensors, as ``safetensors.torch`` is for torch: thin over the safetensors package's
NumPy API, which does the format's work. Paths are written atomically and read through a copy-on-write map; bfloat16
is read too (``safetensors.numpy.load`` cannot), and headers naming a tensor twice are rejected.

    >>> from ember.utils.safetensors import save_file, load_file, safe_open  # doctest: +SKIP
"""
import os

import numpy as np
import safetensors
import safetensors.numpy

from .. import _dtype
from .._device import device as _device
from .._tensor import Tensor
from ..serialization import _arrays, _header, _read, _ST_DTYPES, write_atomic

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "save_model", "load_model"]


def _numpy(tensors):
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors: expected a dict of tensors by name, got {type(tensors).__name__}")
    out = {}
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise TypeError(f"safetensors: {name!r} should map a str to a Tensor, not to {type(t).__name__}")
        if t.dtype is _dtype.complex128:
            raise TypeError(f"safetensors: tensor {name!r} is complex128, which the format has no dtype for")
        a = t.detach().cpu().numpy()
        out[name] = a if a.flags.c_contiguous else a.copy(order="C")
    return out


def _tensor(a, device):
    """An array read from a file as a tensor on ``device`` (a copy if the array is read-only, as from bytes)."""
    a = np.asarray(a)
    return Tensor._make(a if a.flags.writeable else a.copy(), _dtype.from_numpy_dtype(a.dtype),
                        _device("cpu")).to(device)


def _tensors(arrays, device):
    d = _device(device)
    return {k: _tensor(a, d) for k, a in arrays.items()}


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding ``tensors`` (a dict of tensors by name) and ``metadata`` (str to
    str)."""
    return safetensors.numpy.save(_numpy(tensors), metadata=metadata)


def save_file(tensors, filename, metadata=None):
    """Writes ``tensors`` (a dict of tensors by name) to ``filename`` as a safetensors file, atomically."""
    arrays = _numpy(tensors)
    write_atomic(filename, lambda tmp: safetensors.numpy.save_file(arrays, tmp, metadata=metadata))


def _shared_names(state_dict, preferred=()):
    """{kept name: [names of the same memory to drop]}: the kept one covers its whole storage and is the first by
    name, among ``preferred`` ones if any."""
    groups = {}
    for name, t in state_dict.items():
        groups.setdefault((t.device, t.untyped_storage().data_ptr()), []).append(name)
    out = {}
    for names in groups.values():
        if len(names) < 2:
            continue
        complete = sorted(n for n in names if state_dict[n].data_ptr() == state_dict[n].untyped_storage().data_ptr()
                          and state_dict[n].untyped_storage().nbytes() ==
                          state_dict[n].numel() * state_dict[n].element_size())
        if not complete:
            raise RuntimeError(f"Error while trying to find names to remove to save state dict, but found no "
                               f"suitable name to keep for saving amongst: {set(names)}. None is covering the "
                               "entire storage.")
        keep = ([n for n in complete if n in preferred] or complete)[0]
        out[keep] = sorted(n for n in names if n != keep)
    return out


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Saves ``model``'s ``state_dict`` to ``filename``, storing tensors that share memory (tied weights) once;
    each dropped name is recorded in ``metadata`` as the name of the tensor kept. Tensors are always written
    densely, whatever ``force_contiguous``."""
    state_dict = model.state_dict()
    for keep, names in _shared_names(state_dict).items():
        for name in names:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, keep)
            del state_dict[name]
    save_file(state_dict, filename, metadata=metadata)


def load_model(model, filename, strict=True, device="cpu"):
    """Loads the safetensors file ``filename`` into ``model`` (as written by :func:`save_model`: tied weights stored
    once). Returns ``(missing, unexpected)`` names; with ``strict``, raises RuntimeError if either is not empty."""
    state_dict = load_file(filename, device=device)
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for names in _shared_names(model.state_dict(), preferred=state_dict.keys()).values():
        for name in names:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


def load(data):
    """The tensors of safetensors ``data`` (bytes), by name."""
    return _tensors(_arrays(bytes(data), "<bytes>")[0], "cpu")


def load_file(filename, device="cpu"):
    """The tensors of the safetensors file ``filename``, by name, on ``device``."""
    data, name = _read(filename, True)
    return _tensors(_arrays(data, name)[0], device)


class safe_open:
    """A safetensors file opened for reading tensors one at a time (only the header is read up front).

    Args:
        filename: the path
        framework (str): ``"pt"`` (or ``"ember"``) for ember tensors, ``"numpy"``/``"np"`` for NumPy arrays
        device: where ember tensors are put

    Example::

        >>> with safe_open("model.safetensors", framework="pt") as f:  # doctest: +SKIP
        ...     w = f.get_tensor("fc.weight")
        ...     rows = f.get_slice("embed.weight")[:100]
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "ember", "numpy", "np"):
            raise ValueError(f"safe_open: framework should be 'pt', 'ember', 'numpy' or 'np', not {framework!r}")
        self._name = os.fsdecode(filename)
        self._numpy = framework in ("numpy", "np")
        self._device = _device(device)
        with open(self._name, "rb") as fh:  # checks what the library lets through (a tensor named twice)
            head = fh.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else 0
            _header(head + fh.read(min(n, os.fstat(fh.fileno()).st_size)), self._name)
        try:
            self._file = safetensors.safe_open(self._name, framework="numpy")
        except safetensors.SafetensorError as e:
            raise ValueError(f"{self._name}: not a valid safetensors file ({e})") from None
        self._keys = self._file.keys()
        for key in self._keys:
            dtype = self._file.get_slice(key).get_dtype()
            if dtype not in _ST_DTYPES:
                raise ValueError(f"{self._name}: tensor {key!r} has dtype {dtype}, which ember cannot hold")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.__exit__(*exc)

    def keys(self):
        """The tensors' names."""
        return list(self._keys)

    def metadata(self):
        """The file's metadata (str to str), or None."""
        return self._file.metadata()

    def _wrap(self, a):
        return a if self._numpy else _tensor(a, self._device)

    def _check(self, name):
        if name not in self._keys:
            raise KeyError(f"{self._name}: no tensor named {name!r}")

    def get_tensor(self, name):
        """The tensor ``name``, read now."""
        self._check(name)
        return self._wrap(self._file.get_tensor(name))

    def get_slice(self, name):
        """A handle on tensor ``name`` that reads only the part it is indexed with."""
        self._check(name)
        return _Slice(self, self._file.get_slice(name))


class _Slice:
    def __init__(self, owner, handle):
        self._owner, self._handle = owner, handle

    def get_shape(self):
        return self._handle.get_shape()

    def get_dtype(self):
        return self._handle.get_dtype()

    def __getitem__(self, index):
        return self._owner._wrap(self._handle[index])
