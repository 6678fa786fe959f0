"""Reading PyTorch's own checkpoint files (``torch.save`` output) without torch, and without running code from them.

Two layouts: the zip archive of torch >= 1.6 (``<top>/data.pkl``, one ``<top>/data/<key>`` member per storage, a
``byteorder`` record), and the legacy stream (``_use_new_zipfile_serialization=False``): pickles of the magic number,
the protocol version and system info, then of the object, then of the storage keys, then each storage as an int64
element count and its bytes, little-endian. The object pickle is interpreted by :mod:`._torch_pickle` under the
policy below, which admits what ``torch.load(weights_only=True)`` admits and ember can hold: tensors, Parameters,
storages, dtypes, ``Size``, ``device`` and plain containers. Storages of an uncompressed archive are views of ``data``.
"""
import re
import struct
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from . import _dtype
from ._device import CPU, array_module, device as _device
from ._tensor import Size, Tensor
from ._torch_pickle import DataOnly, Unpickler, UnpicklingError

__all__ = ["load_torch", "UnpicklingError"]

_MAGIC, _LEGACY_PROTOCOL = 0x1950A86A20F9469CFC6C, 1001
_ADVICE = ("ember loads only tensors, Parameters, dtypes, sizes, devices and plain containers from PyTorch files "
           "(as torch.load(weights_only=True) does) and never runs code from them; save a state_dict "
           "(torch.save(model.state_dict(), path)) rather than a whole model or other objects")
_STORAGE_DTYPES = {_dtype.scalar_name(d): d for d in _dtype.ALL}  # torch.FloatStorage, torch.UInt16Storage, ...
_DTYPES = {d.name: d for d in _dtype.ALL}
# dtypes and storages torch has and ember has not: int1..7, float8_e8m0fnu, float4, complex32, quantized
_OTHER_DTYPE = re.compile(r"u?int\d+|float[48]_\w+|complex32|chalf|bits\w+|q(u?int|int)\w*|Q\w+Storage|"
                          r"ComplexHalfStorage")
# what torch's weights_only loader admits and ember cannot hold
_UNSUPPORTED = {f"torch._utils.{fn}": what for fn, what in (
    ("_rebuild_sparse_tensor", "sparse tensors"), ("_rebuild_qtensor", "quantized tensors"),
    ("_rebuild_meta_tensor_no_storage", "meta tensors"), ("_rebuild_nested_tensor", "nested tensors"),
    ("_rebuild_wrapper_subclass", "tensor subclasses"),
    ("_rebuild_device_tensor_from_numpy", "tensors of devices without storages"),
    ("_rebuild_device_tensor_from_cpu_tensor", "tensors of devices without storages"))}
_UNSUPPORTED["torch.serialization._get_layout"] = "layout values (torch.strided, torch.sparse_coo, ...)"
_LOCATION = re.compile(r"[a-z_]{1,32}(:\d{1,6})?")
_TENSOR_REBUILDS = ("torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
                    "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
                    "torch._utils._rebuild_parameter_with_state")
_DEFLATE_MAX_RATIO = 1032  # no deflate stream expands further; a member declaring more is corrupt or a bomb


class _Global:
    """A global the file may name; ``fn`` is what REDUCE calls (None: usable only as an argument)."""

    __slots__ = ("name", "fn")

    def __init__(self, name, fn):
        self.name, self.fn = name, fn


class _StorageType:
    """``torch.FloatStorage`` and its kin: the dtype of a storage in a persistent id (None: untyped bytes)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


class _Storage:
    """One storage of the file: its bytes (a uint8 array) and the arrays of each dtype viewing them."""

    __slots__ = ("key", "dtype", "numel", "location", "raw", "arrays")

    def __init__(self, key, dtype, numel, location, raw):
        self.key, self.dtype, self.numel, self.location, self.raw = key, dtype, numel, location, raw
        self.arrays = {}


# -- the allowed callables that need no loader state ---------------------------------------------------------------
def _ordered_dict(*items):
    if items and (len(items) > 1 or type(items[0]) not in (list, dict, OrderedDict)):
        raise TypeError("expected no arguments or one list or dict")
    return OrderedDict(*items)


def _counter(*items):
    if items and (len(items) > 1 or type(items[0]) not in (dict, OrderedDict)):
        raise TypeError("expected no arguments or one dict")
    return Counter(*items)


def _set(*items):
    if items and (len(items) > 1 or type(items[0]) not in (list, tuple, set)):
        raise TypeError("expected no arguments or one list")
    return set(*items)


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise TypeError("expected two numbers")
    return complex(real, imag)


def _bytearray(*data):  # never bytearray(n): a count in the file would allocate n bytes
    if data and (len(data) > 1 or type(data[0]) is not bytes):
        raise TypeError("expected no arguments or one bytes")
    return bytearray(*data)


def _encode(text, encoding):  # how protocol 2 writes bytes: _codecs.encode(str, 'latin1')
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise TypeError("expected a str and 'latin1'")
    return text.encode("latin-1")


def _size(sizes):
    if type(sizes) not in (tuple, list):
        raise TypeError("expected a tuple of ints")
    return Size(sizes)


def _device_of(kind, index=None):
    if type(kind) is not str or not (index is None or type(index) is int):
        raise TypeError("expected a device string and an optional index")
    return _device(kind, index)


_PLAIN_GLOBALS = {"collections.OrderedDict": _ordered_dict, "collections.Counter": _counter, "builtins.set": _set,
                  "builtins.complex": _complex, "builtins.bytearray": _bytearray, "_codecs.encode": _encode,
                  "torch.Size": _size, "torch.device": _device_of, "torch.Tensor": None}
# the allowed callables that build tensors, by the _Loader method that implements each
_LOADER_GLOBALS = {name: name.rpartition(".")[2] for name in _TENSOR_REBUILDS}
_LOADER_GLOBALS.update({"torch._tensor._rebuild_from_type_v2": "_rebuild_from_type_v2",
                        "torch.nn.parameter.Parameter": "_parameter"})


def _ints(values, what):
    if type(values) not in (tuple, list) or any(type(v) is not int for v in values):
        raise TypeError(f"{what} must be a tuple of ints, got {_describe(values)}")
    return tuple(values)


def _describe(obj):
    if isinstance(obj, (_Global, _StorageType)):
        return obj.name
    if type(obj) in (int, float, bool, str) or obj is None:
        return repr(obj)[:80]
    return type(obj).__name__


def _text(value, what):
    """A str, or ASCII bytes as Python 2 pickles wrote keys and locations."""
    if type(value) is bytes:
        value = value.decode("ascii")
    if type(value) is not str:
        raise TypeError(f"{what} must be a string, got {_describe(value)}")
    return value


def _view(xp, flat, offset, size, stride, conj=False, neg=False):
    """The elements of ``flat`` at ``offset`` + sum(index * stride): bounds checked by the caller."""
    if 0 in size:
        out = flat[:0].reshape(size)
    else:
        # a size-1 dimension may carry any stride; clamp it so the byte stride cannot overflow
        strides = tuple((st if n > 1 else min(st, flat.size)) * flat.itemsize for n, st in zip(size, stride))
        if flat.dtype in _dtype.ML_NP:  # as_strided cannot read their array interface (float8_e5m2: '<f1')
            out = xp.lib.stride_tricks.as_strided(flat[offset:].view(f"u{flat.itemsize}"), size, strides)
            out = out.view(flat.dtype)
        else:
            out = xp.lib.stride_tricks.as_strided(flat[offset:], size, strides)
    if conj:
        out = xp.conj(out)
    if neg:
        out = xp.negative(out)
    return out


class _Loader(DataOnly):
    """The unpickling policy for one file: resolves globals, runs the allowed rebuild functions, loads storages."""

    def __init__(self, name, read_storage, pid_len, big_endian=False, encoding="utf-8"):
        super().__init__(name, encoding)
        self.read_storage, self.pid_len, self.big_endian = read_storage, pid_len, big_endian
        self.storages = {}
        self.built = []  # (tensor, storage, dtype, offset, size, stride, conj, neg) for each tensor made
        self.specs = {}  # id(tensor) -> its entry in built, for Parameters made from it

    # -- the policy -------------------------------------------------------------------------------------------------
    def find_global(self, module, qualname):
        full = f"{module}.{qualname}"
        if full in _PLAIN_GLOBALS:
            return _Global(full, _PLAIN_GLOBALS[full])
        if full in _LOADER_GLOBALS:
            return _Global(full, getattr(self, _LOADER_GLOBALS[full]))
        if module in ("torch", "torch.cuda") and qualname.endswith("Storage") and \
                qualname[:-len("Storage")] in _STORAGE_DTYPES:
            return _StorageType(full, _STORAGE_DTYPES[qualname[:-len("Storage")]])
        if full in ("torch.storage.UntypedStorage", "torch.UntypedStorage"):
            return _StorageType(full, None)
        if module == "torch" and qualname in _DTYPES:
            return _DTYPES[qualname]
        if module in ("torch", "torch.cuda") and _OTHER_DTYPE.fullmatch(qualname):
            raise self.error(f"{full}: ember has no such dtype, so this file cannot be loaded; convert its tensors "
                             "to a dtype ember supports (float32, bfloat16, int64, ...) before saving")
        if full in _UNSUPPORTED:
            raise self.error(f"{full}: ember does not support {_UNSUPPORTED[full]}")
        raise self.error(f"refusing to load the global {full}: {_ADVICE}")

    def reduce(self, func, args):
        if type(func) is not _Global or func.fn is None:
            raise self.error(f"REDUCE on {_describe(func)} is not allowed: only the allowed rebuild functions and "
                             f"containers may be called; {_ADVICE}")
        if type(args) is not tuple:
            raise self.error(f"REDUCE of {func.name} with arguments of type {type(args).__name__}, not a tuple")
        try:
            return func.fn(*args)
        except UnpicklingError:
            raise
        except (TypeError, ValueError, RuntimeError, OverflowError, IndexError, MemoryError) as e:
            raise self.error(f"invalid call of {func.name}: {e}") from None

    def build(self, inst, state):
        # the one BUILD torch writes for weights: a state_dict's ``_metadata`` attribute
        if type(inst) is OrderedDict and type(state) is dict and \
                all(type(k) is str and not k.startswith("__") for k in state):
            inst.__dict__.update(state)
            return inst
        raise self.error(f"BUILD (setting an object's state) is not allowed on {type(inst).__name__}; {_ADVICE}")

    def persistent_load(self, pid):
        if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
            what = _describe(pid[0]) if type(pid) is tuple and pid else _describe(pid)
            raise self.error(f"persistent id {what} is not allowed: only storages ('storage', ...) may be loaded; "
                             f"{_ADVICE}")
        if len(pid) != self.pid_len:
            raise self.error(f"malformed storage persistent id of {len(pid)} items (expected {self.pid_len})")
        stype, key, location, numel = pid[1:5]
        if type(stype) is not _StorageType:
            raise self.error(f"storage persistent id with type {_describe(stype)}, not a storage type")
        key, location = _text(key, "a storage key"), _text(location, "a storage location")
        if not _LOCATION.fullmatch(location):
            raise self.error(f"storage {key!r} has an invalid location {location[:40]!r}")
        if type(numel) is not int or numel < 0:
            raise self.error(f"storage {key!r} has an invalid size {_describe(numel)}")
        if self.pid_len == 6 and pid[5] is not None:
            raise self.error(f"storage {key!r} is a view of another storage, which only old PyTorch versions "
                             "wrote and ember does not support")
        storage = self.storages.get(key)
        if storage is None:
            item = stype.dtype.itemsize if stype.dtype is not None else 1
            storage = _Storage(key, stype.dtype, numel, location, self.read_storage(key, numel * item))
            self.storages[key] = storage
        elif storage.dtype is not stype.dtype or storage.numel != numel:
            raise self.error(f"storage {key!r} is declared twice with different types or sizes")
        return storage

    # -- the allowed rebuild functions ------------------------------------------------------------------------------
    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._tensor(storage, storage_offset, size, stride, None, None)

    def _rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad, backward_hooks,
                           metadata=None):
        return self._requires_grad(self._tensor(storage, storage_offset, size, stride, None, metadata),
                                   requires_grad)

    def _rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                           metadata=None):
        if not isinstance(dtype, _dtype.dtype):
            raise TypeError(f"expected a dtype, got {_describe(dtype)}")
        return self._requires_grad(self._tensor(storage, storage_offset, size, stride, dtype, metadata),
                                   requires_grad)

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        return self._parameter(data, requires_grad)

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        return self._set_state(self._parameter(data, requires_grad), state)

    def _rebuild_from_type_v2(self, func, new_type, args, state):
        # how torch pickles a tensor carrying Python attributes: a rebuild call, the class, the attributes
        if type(func) is not _Global or func.name not in _TENSOR_REBUILDS:
            raise TypeError(f"expected a tensor rebuild function, got {_describe(func)}")
        if type(new_type) is not _Global or new_type.name not in ("torch.Tensor", "torch.nn.parameter.Parameter"):
            raise TypeError(f"expected torch.Tensor or torch.nn.Parameter, got {_describe(new_type)}")
        t = self.reduce(func, args)
        if new_type.name != "torch.Tensor":
            t = self._parameter(t, t.requires_grad)
        return self._set_state(t, state)

    def _parameter(self, data, requires_grad=True):
        from .nn.parameter import Parameter
        if not isinstance(data, Tensor) or type(requires_grad) is not bool:
            raise TypeError(f"expected a tensor and a bool, got {_describe(data)} and {_describe(requires_grad)}")
        p = Parameter(data, requires_grad)
        entry = self.specs.get(id(data))
        if entry is not None:
            self._record((p,) + entry[1:])
        return p

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _tensor(self, storage, offset, size, stride, dtype, metadata):
        if type(storage) is not _Storage:
            raise TypeError(f"expected a storage, got {_describe(storage)}")
        size, stride = _ints(size, "size"), _ints(stride, "stride")
        if type(offset) is not int:
            raise TypeError(f"storage_offset must be an int, got {_describe(offset)}")
        if len(size) != len(stride):
            raise ValueError(f"size {list(size)} and stride {list(stride)} differ in length")
        if offset < 0 or min(size + stride, default=0) < 0:
            raise ValueError(f"negative size, stride or storage offset: size {list(size)}, stride {list(stride)}, "
                             f"storage offset {offset}")
        conj, neg = self._metadata(metadata)
        dtype = dtype or storage.dtype or _dtype.uint8
        flat = self._array(storage, dtype)
        if 0 not in size:
            need = offset + 1 + sum((n - 1) * st for n, st in zip(size, stride))
            if need > flat.size:
                raise ValueError(f"a tensor of size {list(size)}, stride {list(stride)} and storage offset {offset} "
                                 f"needs {need} elements of {dtype.name}, but its storage {storage.key!r} holds "
                                 f"{flat.size}")
        t = Tensor._make(_view(np, flat, offset, size, stride, conj, neg), dtype, CPU)
        self._record((t, storage, dtype, offset, size, stride, conj, neg))
        return t

    def _record(self, entry):
        self.built.append(entry)
        self.specs[id(entry[0])] = entry

    def _array(self, storage, dtype):
        """The storage's bytes as a writable, aligned, native-order 1-D array of ``dtype``."""
        flat = storage.arrays.get(dtype)
        if flat is None:
            raw, item = storage.raw, dtype.itemsize
            flat = raw[:raw.size - raw.size % item].view(dtype.np)
            if self.big_endian:
                flat = flat.byteswap()
            elif not (flat.flags.writeable and flat.flags.aligned):
                flat = flat.copy()
            storage.arrays[dtype] = flat
        return flat

    def _metadata(self, metadata):
        if not metadata:
            return False, False
        if type(metadata) not in (dict, OrderedDict):
            raise TypeError(f"tensor metadata must be a dict, got {_describe(metadata)}")
        unknown = [_describe(k) for k in metadata if k not in ("conj", "neg")]
        if unknown:
            raise ValueError(f"unsupported tensor metadata {', '.join(unknown[:5])} (ember knows 'conj' and 'neg')")
        return bool(metadata.get("conj")), bool(metadata.get("neg"))

    @staticmethod
    def _requires_grad(t, requires_grad):
        if type(requires_grad) is not bool:
            raise TypeError(f"requires_grad must be a bool, got {_describe(requires_grad)}")
        if requires_grad:
            t.requires_grad_(True)
        return t

    def _set_state(self, t, state):
        """Python attributes saved with a tensor (torch's _set_obj_state), never replacing ember's own."""
        parts = state if type(state) is tuple else (state,)
        if type(state) is tuple and len(state) != 2:
            raise ValueError(f"invalid tensor state of {len(state)} items")
        for part in parts:
            if not part:
                continue
            if type(part) not in (dict, OrderedDict):
                raise TypeError(f"tensor state must be a dict, got {_describe(part)}")
            for k, v in part.items():
                if type(k) is not str or k.startswith("__") or hasattr(type(t), k) or k in t.__dict__:
                    raise ValueError(f"tensor attribute {_describe(k)} cannot be restored")
                setattr(t, k, v)
        return t

    def check_plain(self, obj):
        """Raises if the loaded object still holds a storage or a bare global (ember has no such values)."""
        todo, seen = [obj], set()
        while todo:
            x = todo.pop()
            if id(x) in seen:
                continue
            seen.add(id(x))
            if type(x) is _Storage:
                raise self.error(f"the file holds storage {x.key!r} outside any tensor; ember has no storage "
                                 "objects: save tensors instead")
            if type(x) in (_Global, _StorageType):
                raise self.error(f"the file holds {x.name} itself rather than a value built by it; {_ADVICE}")
            if type(x) in (list, tuple, set):
                todo.extend(x)
            elif isinstance(x, dict):
                todo.extend(x.keys())
                todo.extend(x.values())
                todo.extend(vars(x).values() if type(x) is not dict else ())
            elif isinstance(x, Tensor):
                todo.extend(x.__dict__.values())


# -- the two file layouts ---------------------------------------------------------------------------------------
class _Buffer:
    """A read-only seekable file over a memoryview, so that zipfile reads the data without copying it."""

    def __init__(self, mv):
        self.mv, self.pos = mv, 0

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=0):
        pos = (0, self.pos, len(self.mv))[whence] + offset
        if pos < 0:
            raise OSError("negative seek position")
        self.pos = pos
        return pos

    def read(self, n=-1):
        end = len(self.mv) if n is None or n < 0 else min(len(self.mv), self.pos + n)
        out = bytes(self.mv[self.pos:end])
        self.pos = max(self.pos, end)
        return out


class _Archive:
    """The records of a torch.save zip archive, read without copying stored (uncompressed) members."""

    def __init__(self, mv, name):
        self.mv, self.name = mv, name
        self.zip = zipfile.ZipFile(_Buffer(mv))
        infos = self.zip.infolist()
        if not infos or "/" not in infos[0].filename:
            raise UnpicklingError(f"{name}: a zip archive, but not one written by torch.save (its records are "
                                  "not in a top folder)")
        self.prefix = infos[0].filename.partition("/")[0] + "/"  # 'archive/', or the stem of the saved file name
        self.records = {i.filename: i for i in infos}

    def info(self, record):
        return self.records.get(self.prefix + record)

    def offset(self, info):
        """Where a stored member's data starts in the file."""
        p = info.header_offset
        head = bytes(self.mv[p:p + 30])
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} has no valid local header")
        start = p + 30 + sum(struct.unpack("<HH", head[26:30]))
        if info.compress_size != info.file_size or start + info.file_size > len(self.mv):
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} ({info.file_size} bytes at byte "
                                  f"{start}) extends past the end of the {len(self.mv)}-byte file")
        return start

    def read(self, info, nbytes):
        """The first ``nbytes`` of a member: a view of the file when stored, else decompressed."""
        if nbytes > info.file_size:
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} holds {info.file_size} bytes, but "
                                  f"{nbytes} are needed")
        if info.flag_bits & 1:
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} is encrypted")
        if info.compress_type == zipfile.ZIP_STORED:
            start = self.offset(info)
            return self.mv[start:start + nbytes]
        if info.compress_type != zipfile.ZIP_DEFLATED:
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} uses unsupported compression "
                                  f"method {info.compress_type}")
        if info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 1024:
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} declares {info.file_size} bytes "
                                  f"from {info.compress_size} compressed, more than deflate can produce")
        with self.zip.open(info) as f:
            data = f.read(nbytes)
        if len(data) != nbytes:
            raise UnpicklingError(f"{self.name}: zip member {info.filename!r} decompressed to {len(data)} bytes, "
                                  f"{nbytes} expected")
        return bytearray(data)

    def text(self, record, limit=64):
        info = self.info(record)
        if info is None:
            return None
        if info.file_size > limit:
            raise UnpicklingError(f"{self.name}: record {record!r} is {info.file_size} bytes long")
        return bytes(self.read(info, info.file_size)).decode("ascii").strip()


def _load_zip(mv, name, encoding):
    archive = _Archive(mv, name)
    pkl = archive.info("data.pkl")
    if pkl is None:
        kind = "a TorchScript archive (torch.jit.save)" if archive.info("constants.pkl") else \
            "not a torch.save archive"
        raise UnpicklingError(f"{name}: no {archive.prefix}data.pkl record: {kind}, which ember cannot load")
    version = archive.text("version") or archive.text(".data/version")
    if version is not None and not version.isdigit():
        raise UnpicklingError(f"{name}: invalid format version record {version[:20]!r}")
    order = archive.text("byteorder") or "little"
    if order not in ("little", "big"):
        raise UnpicklingError(f"{name}: unknown byte order {order[:20]!r} (expected 'little' or 'big')")

    def read_storage(key, nbytes):
        info = archive.info("data/" + key)
        if info is None:
            raise UnpicklingError(f"{name}: storage {key!r} has no record {archive.prefix}data/{key} in the archive")
        if nbytes == 0:
            return np.empty(0, np.uint8)
        return np.frombuffer(archive.read(info, nbytes), np.uint8)

    loader = _Loader(name, read_storage, 5, big_endian=order == "big", encoding=encoding)
    obj, _ = Unpickler(bytes(archive.read(pkl, pkl.file_size)), loader).load()
    return obj, loader


def _load_legacy(mv, name, encoding):
    header = DataOnly(name)
    magic, pos = Unpickler(mv, header).load(0)
    if magic != _MAGIC or type(magic) is not int:
        raise UnpicklingError(f"{name}: a pickle, but not a PyTorch file (no torch.save magic number); "
                              "ember never unpickles arbitrary files")
    version, pos = Unpickler(mv, header).load(pos)
    if version != _LEGACY_PROTOCOL or type(version) is not int:
        raise UnpicklingError(f"{name}: unsupported legacy protocol version {_describe(version)} "
                              f"(expected {_LEGACY_PROTOCOL})")
    sys_info, pos = Unpickler(mv, header).load(pos)
    if type(sys_info) is not dict:
        raise UnpicklingError(f"{name}: malformed system info record")
    budget = [len(mv)]

    def read_storage(key, nbytes):  # filled from the data section once the keys are known, as torch does
        budget[0] -= nbytes
        if budget[0] < 0:
            raise UnpicklingError(f"{name}: storages declare more bytes than the {len(mv)}-byte file holds")
        return np.empty(nbytes, np.uint8)

    loader = _Loader(name, read_storage, 6, encoding=encoding)
    obj, pos = Unpickler(mv, loader).load(pos)
    keys, pos = Unpickler(mv, header).load(pos)
    if type(keys) is not list or any(type(k) is not str for k in keys):
        raise UnpicklingError(f"{name}: malformed storage key list")
    filled = set()
    for key in keys:
        storage = loader.storages.get(key)
        if storage is None:
            raise UnpicklingError(f"{name}: the data section holds storage {key[:40]!r}, which no tensor uses")
        if pos + 8 > len(mv):
            raise UnpicklingError(f"{name}: truncated in the data of storage {key!r} (at byte {pos})")
        numel = int.from_bytes(mv[pos:pos + 8], "little", signed=True)
        nbytes = storage.raw.size
        if numel != storage.numel:
            raise UnpicklingError(f"{name}: storage {key!r} holds {numel} elements in the data section but "
                                  f"{storage.numel} in the pickle")
        if pos + 8 + nbytes > len(mv):
            raise UnpicklingError(f"{name}: truncated in the data of storage {key!r} ({nbytes} bytes at byte "
                                  f"{pos + 8}, the file has {len(mv)})")
        storage.raw[:] = np.frombuffer(mv, np.uint8, nbytes, pos + 8)
        pos += 8 + nbytes
        filled.add(key)
    missing = set(loader.storages) - filled
    if missing:
        raise UnpicklingError(f"{name}: no data for storage {sorted(missing)[0]!r}")
    return obj, loader


def _place(loader, place):
    """Moves each storage where ``place`` says, once, and points the tensors made from it at the result."""
    groups = {}
    for entry in loader.built:
        groups.setdefault((id(entry[1]), entry[2]), []).append(entry)
    for entries in groups.values():
        storage, dtype = entries[0][1], entries[0][2]
        flat = storage.arrays[dtype]
        base = Tensor._make(flat, dtype, CPU)
        placed = place(base, storage.location)
        if placed is base:  # still the same memory: only conj/neg copies, made before legacy data was read, redo
            entries = [e for e in entries if e[6] or e[7]]
        elif not isinstance(placed, Tensor) or placed.numel() != flat.size:
            raise RuntimeError(f"{loader.name}: map_location gave {_describe(placed)} for storage {storage.key!r} "
                               f"of {flat.size} elements; expected a tensor of as many elements")
        data, xp = placed._data.reshape(-1), array_module(placed.device)
        for t, _, _, offset, size, stride, conj, neg in entries:
            t._data, t.dtype, t.device = _view(xp, data, offset, size, stride, conj, neg), placed.dtype, placed.device


def load_torch(data, name, place, encoding="utf-8"):
    """Loads a ``torch.save`` file from ``data`` (bytes-like, or an ``mmap`` of the whole file) without torch.

    Rebuilds tensors, Parameters, dtypes, ``Size``, devices and plain containers, and refuses anything else, as
    ``torch.load(weights_only=True)``. Tensors sharing a storage in the file share memory; storages of an
    uncompressed archive in writable memory (a copy-on-write ``mmap``) are views of it, not copies.

    Args:
        data: the file's bytes
        name (str): the file name, for messages
        place: ``place(tensor, location)`` returns the CPU tensor of one storage moved to where it should live,
            ``location`` being where it was saved from (``'cpu'``, ``'cuda:0'``)
        encoding (str): how Python 2 strings are decoded (``'bytes'`` keeps them as bytes)

    Raises:
        UnpicklingError: (a ``ValueError``) the file is malformed or holds objects other than the above
    """
    mv = memoryview(data)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    try:
        if mv[:2] == b"PK":
            obj, loader = _load_zip(mv, name, encoding)
        elif mv[:1] == b"\x80":
            obj, loader = _load_legacy(mv, name, encoding)
        else:
            raise UnpicklingError(f"{name}: not a PyTorch file (neither a zip archive nor a pickle)")
        loader.check_plain(obj)
    except UnpicklingError:
        raise
    except Exception as e:  # zipfile, struct, NumPy and decoding errors of a malformed file, with its name
        raise UnpicklingError(f"{name}: malformed PyTorch file ({type(e).__name__}: {e})") from None
    _place(loader, place)
    return obj
