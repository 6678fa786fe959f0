"""save/load: tensors and nested containers of them (state_dicts, optimizer states, checkpoints) as safetensors files.

The tensors are the file's tensors, named by their path in the saved object (``fc1.weight``,
``optimizer.state.0.exp_avg``), so any safetensors reader sees them; the nesting (dicts with their key types,
lists, tuples, plain values, which tensors are Parameters, their devices) is JSON in the file's metadata. Nothing is
ever pickled, so loading a file cannot run code.
"""
import collections
import json
import math
import mmap
import os

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy

from . import _dtype
from ._device import cuda_available, device as _device_cls, normalize
from ._tensor import Size, Tensor

__all__ = ["save", "load"]

_FORMAT_KEY, _STRUCTURE_KEY, _FORMAT = "ember.format", "ember.structure", "1"
_MAX_INDEX_BYTES = 64 << 20

# safetensors' dtype names. safetensors.numpy.load has no entry for BF16, so tensors are decoded here from
# safetensors.deserialize (the function it is built on) with the complete table.
_ST_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
              "F16": np.float16, "BF16": ml_dtypes.bfloat16, "F32": np.float32, "F64": np.float64,
              "C64": np.complex64, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
              "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
              "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz}


def _encode(obj, path, tensors, names):
    """``obj`` as JSON-able data; tensors are appended to ``tensors`` under a name made from ``path``."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"float": repr(obj)}  # strict JSON has no nan/inf
    if isinstance(obj, Tensor):
        return _encode_tensor(obj, path, tensors, names)
    if isinstance(obj, Size):
        return {"size": list(obj)}
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, path + (str(i),), tensors, names) for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, path + (str(i),), tensors, names) for i, v in enumerate(obj)]
    if isinstance(obj, (set, frozenset)):
        kind = "set" if isinstance(obj, set) else "frozenset"
        return {kind: [_encode(v, path + (str(i),), tensors, names) for i, v in enumerate(obj)]}
    if isinstance(obj, (bytes, bytearray)):  # one JSON character per byte
        return {"bytes" if isinstance(obj, bytes) else "bytearray": obj.decode("latin-1")}
    if isinstance(obj, dict):
        out = {"dict": [[_encode(k, path + ("key",), tensors, names), _encode(v, path + (str(k),), tensors, names)]
                        for k, v in obj.items()]}
        if isinstance(obj, collections.Counter):  # MultiStepLR's milestones
            out["counter"] = True
        elif isinstance(obj, collections.OrderedDict):
            out["ordered"] = True
            if hasattr(obj, "_metadata"):  # a state_dict's per-module versions, kept as torch's pickling does
                out["_metadata"] = _encode(obj._metadata, path + ("_metadata",), tensors, names)
        return out
    if isinstance(obj, complex):
        return {"complex": [_encode(obj.real, path, tensors, names), _encode(obj.imag, path, tensors, names)]}
    if isinstance(obj, _dtype.dtype):
        return {"dtype": obj.name}
    if isinstance(obj, _device_cls):
        return {"device": str(obj)}
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
        return _encode(obj.item(), path, tensors, names)
    where = ".".join(path) or "the top level"
    raise TypeError(f"ember.save: cannot save an object of type {type(obj).__name__} (at {where}): ember saves "
                    "tensors, numbers, strings, bytes, None, dtypes, devices and lists, tuples, sets and dicts of "
                    "them; it never pickles arbitrary objects")


def _encode_tensor(t, path, tensors, names):
    name = names.get(id(t))
    if name is None:  # the same tensor object twice is stored once and loads as one object
        base = ".".join(path) or "tensor"
        name, n = base, 1
        while name in tensors:
            name, n = f"{base}#{n}", n + 1
        names[id(t)] = name
        a = t._data if t.device.type == "cpu" else t._data.get()
        if t.dtype is _dtype.complex128:  # safetensors has no complex128: its (re, im) pairs as float64
            a = a.reshape(-1).view(np.float64).reshape(t.shape + (2,))
        # safetensors writes the raw buffer: it must be dense (np.ascontiguousarray would make 0-d arrays 1-d)
        tensors[name] = a if a.flags.c_contiguous else a.copy(order="C")
    out = {"tensor": name, "dtype": t.dtype.name, "device": str(t.device)}
    if t.requires_grad:
        out["requires_grad"] = True
    from .nn.parameter import Parameter
    if isinstance(t, Parameter):
        out["parameter"] = True
    return out


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves ``obj`` (a tensor, or dicts/lists/tuples of tensors and plain values, such as a ``state_dict`` or a
    training checkpoint) to ``f``, a path or a binary file object, as a safetensors file. ``pickle_module``,
    ``pickle_protocol`` and the ``_``-prefixed arguments are accepted for torch compatibility and unused: nothing is
    pickled.

    A path is written atomically: to a temporary file in the same folder, flushed to disk, then renamed over ``f``,
    so a save that fails leaves any previous file intact.

    Example::

        >>> ember.save({"model": model.state_dict(), "step": 100}, "checkpoint.safetensors")  # doctest: +SKIP
    """
    tensors, names = {}, {}
    structure = _encode(obj, (), tensors, names)
    metadata = {_FORMAT_KEY: _FORMAT, _STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"))}
    if not isinstance(f, (str, bytes, os.PathLike)):
        f.write(safetensors.numpy.save(tensors, metadata=metadata))
        return
    folder = os.path.dirname(os.fsdecode(f))
    if folder and not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    write_atomic(f, lambda tmp: safetensors.numpy.save_file(tensors, tmp, metadata=metadata))


def write_atomic(path, write):
    """Calls ``write(tmp)`` to write a temporary file in ``path``'s folder, flushes it to disk and renames it over
    ``path``: a crash or an error at any moment leaves the previous file intact (and any map of it valid)."""
    path = os.fsdecode(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    # created here so that the file gets the permissions a plain open() gives (the umask's), which a writer,
    # replacing the file through a private temporary of its own, does not keep
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        mode = os.stat(tmp).st_mode
        write(tmp)
        os.chmod(tmp, mode)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read(f, use_mmap):
    """(the file's bytes, its name): a copy-on-write map of a path (tensors then share the page cache instead of
    being read into a second buffer, and stay writable), the contents of a file object."""
    if isinstance(f, (str, bytes, os.PathLike)):
        name = os.fsdecode(f)
        with open(name, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if not use_mmap or size == 0:  # an empty file cannot be mapped
                return fh.read(), name
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY), name
    data = f.read()
    if isinstance(data, str):
        raise TypeError("ember.load: the file object must be opened in binary mode ('rb')")
    return data, getattr(f, "name", f"<{type(f).__name__}>")


def _unique_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"the header names tensor {dup!r} twice")
    return dict(pairs)


def _header(data, name):
    """The JSON header of safetensors bytes, checked for what the format forbids and the library lets through."""
    if len(data) < 8:
        raise ValueError(f"{name}: not a valid safetensors file (it is {len(data)} bytes long, shorter than the "
                         "8-byte header length)")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ValueError(f"{name}: not a valid safetensors file (the header length {n} exceeds the file size of "
                         f"{len(data)} bytes)")
    try:
        header = json.loads(bytes(data[8:8 + n]), object_pairs_hook=_unique_keys)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{name}: not a valid safetensors file (header: {e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{name}: not a valid safetensors file (the header is not a JSON object)")
    return header, 8 + n


def _arrays(data, name):
    """(arrays by name, metadata) of safetensors bytes or a map of a file; ValueError naming the file if they are
    not that. The safetensors library validates the layout; from a map the arrays are views of it, not copies."""
    header, start = _header(data, name)
    try:
        if isinstance(data, mmap.mmap):
            with safetensors.safe_open(name, framework="numpy"):  # reads and checks the header of the same file
                pass
            view = memoryview(data)
            entries = [(k, v["dtype"], v["shape"], view[start + v["data_offsets"][0]:start + v["data_offsets"][1]])
                       for k, v in header.items() if k != "__metadata__"]
        else:
            entries = [(k, v["dtype"], v["shape"], v["data"]) for k, v in safetensors.deserialize(data)]
    except (safetensors.SafetensorError, TypeError, KeyError, IndexError) as e:
        raise ValueError(f"{name}: not a valid safetensors file ({e})") from None
    arrays = {}
    for key, dtype, shape, buffer in entries:
        dt = _ST_DTYPES.get(dtype)
        if dt is None:
            raise ValueError(f"{name}: tensor {key!r} has dtype {dtype}, which ember cannot hold")
        a = np.frombuffer(buffer, dtype=dt).reshape(shape)
        arrays[key] = a if a.flags.aligned else a.copy()
    return arrays, header.get("__metadata__") or {}

def _placer(map_location):
    """``place(tensor, saved_location)``: the tensor moved where ``map_location`` says."""
    if callable(map_location):
        def place(t, loc):
            hit = map_location(t, loc)
            return _move(t, loc) if hit is None else hit if isinstance(hit, Tensor) else t.to(hit)
        return place
    if map_location is None:
        return _move
    if isinstance(map_location, dict):
        return lambda t, loc: _move(t, map_location.get(loc, loc))
    if isinstance(map_location, (str, _device_cls)) or type(map_location).__name__ == "device":
        return lambda t, loc: _move(t, map_location)
    raise TypeError(f"ember.load: map_location should be None, a str, an ember.device, a dict or a callable, not "
                    f"{type(map_location).__name__}")


def _move(t, location):
    target = _device_cls(location)
    if target.type == "cuda" and not cuda_available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use ember.load with "
                           "map_location=ember.device('cpu') to map your storages to the CPU.")
    return t.to(target)


def _tensor(arr, spec, location, place):
    d = getattr(_dtype, spec["dtype"], None)
    if not isinstance(d, _dtype.dtype):
        raise ValueError(f"unknown dtype {spec['dtype']!r}")
    if d is _dtype.complex128:
        arr = arr.view(np.complex128)[..., 0]
    elif arr.dtype != d.np:
        raise ValueError(f"tensor {spec['tensor']!r} is stored as {arr.dtype} but recorded as {d.name}")
    if not arr.flags.writeable:
        arr = arr.copy()
    t = place(Tensor._make(arr, d, normalize("cpu")), _location(location))
    if spec.get("parameter"):
        from .nn.parameter import Parameter
        return Parameter(t, requires_grad=bool(spec.get("requires_grad")))
    if spec.get("requires_grad"):
        t.requires_grad_(True)
    return t


def _decode(node, arrays, place, memo):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, arrays, place, memo) for v in node]
    if not isinstance(node, dict) or len(node) == 0:
        raise ValueError(f"unexpected node {node!r}")
    if "tensor" in node:
        name = node["tensor"]
        if name not in memo:
            if name not in arrays:
                raise ValueError(f"the structure names a tensor {name!r} that the file does not hold")
            memo[name] = _tensor(arrays[name], node, node.get("device", "cpu"), place)
        return memo[name]
    if "dict" in node:
        items = [(_decode(k, arrays, place, memo), _decode(v, arrays, place, memo))
                 for k, v in node["dict"]]
        if node.get("counter"):
            return collections.Counter(dict(items))
        if not node.get("ordered"):
            return dict(items)
        out = collections.OrderedDict(items)
        if "_metadata" in node:
            out._metadata = _decode(node["_metadata"], arrays, place, memo)
        return out
    if "tuple" in node:
        return tuple(_decode(v, arrays, place, memo) for v in node["tuple"])
    if "set" in node or "frozenset" in node:
        kind = set if "set" in node else frozenset
        return kind(_decode(v, arrays, place, memo) for v in node.get("set", node.get("frozenset")))
    if "bytes" in node:
        return node["bytes"].encode("latin-1")
    if "bytearray" in node:
        return bytearray(node["bytearray"].encode("latin-1"))
    if "float" in node:
        return float(node["float"])
    if "size" in node:
        return Size(node["size"])
    if "complex" in node:
        return complex(*node["complex"])
    if "dtype" in node:
        return _dtype.to_dtype(node["dtype"])
    if "device" in node:
        return _device_cls(_location(node["device"]))
    raise ValueError(f"unknown node {node!r}")


def _location(text):
    """A saved device string, checked (the placing of a tensor on a valid device may fail with RuntimeError)."""
    try:
        _device_cls(text)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"unknown device {text!r}") from None
    return text


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads an object saved with :func:`save` from ``f`` (a path or a binary file object).

    Also reads, without executing anything: safetensors files written by other programs (a dict of their tensors
    by name), files written by ``torch.save`` (the zip format and the legacy one; only tensors and plain containers
    are rebuilt, any other object in the pickle is an error), and sharded Hugging Face checkpoints given by their
    index (``model.safetensors.index.json``, ``pytorch_model.bin.index.json``: one dict of all shards' tensors).

    Args:
        f: the path or file object
        map_location: where to put the tensors: None (the device each was saved from), a device or a string
            (all of them there), a dict mapping saved locations to new ones (``{'cuda:0': 'cpu'}``), or a callable
            ``fn(tensor, location)`` returning the tensor to use (or None for the default)
        pickle_module: must be None: ember reads torch's pickles with its own restricted reader, never ``pickle``
        weights_only (bool): accepted for torch compatibility; ember never unpickles arbitrary objects, so
            loading is always as safe as torch's ``weights_only=True``
        mmap (bool, optional): map a path's file copy-on-write (the default, ``None``, and ``True``) so CPU tensors
            share the page cache rather than being read into memory; ``False`` reads the file
        encoding (str, optional): how Python 2 strings in a ``torch.save`` file are decoded (default ``'utf-8'``;
            ``'latin1'``, or ``'bytes'`` to keep them as bytes)

    Raises:
        ValueError: ``f`` is not a valid file (the message names it and what is wrong)

    Example::

        >>> state = ember.load("checkpoint.safetensors", map_location="cpu")  # doctest: +SKIP
    """
    if pickle_module is not None:
        raise ValueError("ember.load reads only tensors and plain containers, with its own reader: pickle_module "
                         f"must be None, got {pickle_module!r}")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"ember.load() got an unexpected keyword argument {next(iter(pickle_load_args))!r}")
    if mmap and not isinstance(f, (str, bytes, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    place = _placer(map_location)
    if isinstance(f, (str, bytes, os.PathLike)) and os.fsdecode(f).endswith(".json"):
        return _load_sharded(os.fsdecode(f), map_location, mmap)
    data, name = _read(f, mmap is not False)
    # torch.save's zip or legacy pickle; a safetensors header length can start with the same bytes, but its JSON
    # header then starts with "{"
    if (data[:4] in (b"PK\x03\x04", b"PK\x05\x06") or data[:1] == b"\x80") and data[8:9] != b"{":
        from ._torch_format import load_torch
        return load_torch(data, name, place, encoding)
    arrays, metadata = _arrays(data, name)
    if _STRUCTURE_KEY not in metadata:
        return {key: _tensor(a, {"tensor": key, "dtype": _dtype.from_numpy_dtype(a.dtype).name}, "cpu",
                             place) for key, a in arrays.items()}
    if metadata.get(_FORMAT_KEY) != _FORMAT:
        raise ValueError(f"{name}: written by a newer ember (format {metadata.get(_FORMAT_KEY)!r}; this version "
                         f"reads format {_FORMAT})")
    try:
        return _decode(json.loads(metadata[_STRUCTURE_KEY]), arrays, place, {})
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        raise ValueError(f"{name}: malformed ember structure metadata ({e})") from None


def _load_sharded(path, map_location, use_mmap):
    """The tensors of a sharded checkpoint, by the ``weight_map`` of its index file, in the index's order."""
    with open(path, "rb") as fh:
        raw = fh.read(_MAX_INDEX_BYTES + 1)
    if len(raw) > _MAX_INDEX_BYTES:
        raise ValueError(f"{path}: a checkpoint index larger than {_MAX_INDEX_BYTES} bytes is not plausible")
    try:
        weight_map = json.loads(raw)["weight_map"]
    except (ValueError, UnicodeDecodeError, TypeError, KeyError) as e:
        raise ValueError(f"{path}: not a checkpoint index (a JSON object with a 'weight_map'): {e!r}") from None
    if not isinstance(weight_map, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in weight_map.items()):
        raise ValueError(f"{path}: the index's 'weight_map' should map tensor names to shard file names")
    folder = os.path.dirname(path)
    shards = {}
    for shard in dict.fromkeys(weight_map.values()):
        if os.path.basename(shard) != shard or shard in ("", ".", ".."):
            raise ValueError(f"{path}: shard {shard!r} is not a file name in the index's folder")
        shard_path = os.path.join(folder, shard)
        if not os.path.isfile(shard_path):
            raise ValueError(f"{path}: shard {shard!r} is missing (expected at {shard_path})")
        shards[shard] = load(shard_path, map_location, mmap=use_mmap)
        if not isinstance(shards[shard], dict):
            raise ValueError(f"{shard_path}: a shard should hold a dict of tensors, not {type(shards[shard]).__name__}")
    out = {}
    for key, shard in weight_map.items():
        if key not in shards[shard]:
            raise ValueError(f"{path}: tensor {key!r} is listed in shard {shard!r}, which does not hold it")
        out[key] = shards[shard][key]
    return out
