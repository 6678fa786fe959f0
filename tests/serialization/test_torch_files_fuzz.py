"""Malicious and malformed PyTorch files: each must raise ember's UnpicklingError (a ValueError) naming the file,
without running code, allocating what the file merely declares, hanging or crashing."""
import io
import os
import pickle
import random
import struct
import zipfile

import numpy as np
import pytest
import torch

from ember._torch_format import UnpicklingError, load_torch

NAME = "bad.pt"


def load(data):
    return load_torch(data, NAME, lambda t, location: t)


# -- a small pickle assembler ----------------------------------------------------------------------------------------
def G(module, name):
    return b"c" + f"{module}\n{name}\n".encode()


def S(text):
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def I(n):
    return b"\x8a" + bytes([8]) + n.to_bytes(8, "little", signed=True)


def T(*items):
    return b"(" + b"".join(items) + b"t"


MARK, REDUCE, STOP, NONE, FALSE, TRUE = b"(", b"R", b".", b"N", b"\x89", b"\x88"
P2 = b"\x80\x02"


def pid(numel=4, storage="FloatStorage", key="0", location="cpu", module="torch", extra=b""):
    return T(S("storage"), G(module, storage), S(key), S(location), I(numel), extra) + b"Q"


def tensor(storage=None, offset=0, size=(2, 2), stride=(2, 1), grad=FALSE, metadata=b""):
    storage = pid() if storage is None else storage
    return (G("torch._utils", "_rebuild_tensor_v2") + T(storage, I(offset), T(*map(I, size)), T(*map(I, stride)),
            grad, G("collections", "OrderedDict") + b")" + REDUCE, metadata) + REDUCE)


def archive(pkl, members=None, extra=None, compression=zipfile.ZIP_STORED, byteorder="little", version="3\n",
            pickle_name="data.pkl"):
    """A torch.save-like zip: data.pkl, storages data/<key> (default: key '0' with 16 bytes), other records."""
    members = {"0": bytes(16)} if members is None else members
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        z.writestr(f"archive/{pickle_name}", pkl)
        z.writestr("archive/byteorder", byteorder)
        for key, body in members.items():
            z.writestr(f"archive/data/{key}", body)
        for name, body in (extra or {}).items():
            z.writestr(f"archive/{name}", body)
        z.writestr("archive/version", version)
    return out.getvalue()


LEGACY_HEAD = b"".join(pickle.dumps(x, protocol=2) for x in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}))


def legacy(obj_pkl, keys=("0",), data=None):
    """A legacy-format file: header pickles, the object, the storage keys, then storage '0' of 4 floats."""
    data = struct.pack("<q", 4) + bytes(16) if data is None else data
    return LEGACY_HEAD + obj_pkl + pickle.dumps(list(keys), protocol=2) + data


def patch_central(data, name, field, fmt, value):
    """``data`` with one field of ``name``'s central directory record overwritten (offsets per the zip spec)."""
    at = data.index(b"PK\x01\x02")
    while True:
        n = struct.unpack("<H", data[at + 28:at + 30])[0]
        if data[at + 46:at + 46 + n].decode() == name:
            break
        at = data.index(b"PK\x01\x02", at + 4)
    return data[:at + field] + struct.pack(fmt, value) + data[at + field + struct.calcsize(fmt):]


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"echo pwned > {self.path}",)


def valid_zip():
    return archive(P2 + tensor() + STOP)


def good_file(fmt="zip"):
    buf = io.BytesIO()
    state = {"w": torch.randn(4, 3), "b": torch.arange(5), "h": torch.randn(2, dtype=torch.bfloat16),
             "t": torch.randn(3, 3).t(), "meta": [1, "x", (2.5, None)]}
    torch.save(state, buf, _use_new_zipfile_serialization=fmt == "zip")
    return buf.getvalue()


def legacy_obj():
    return P2 + tensor(pid(extra=NONE)) + STOP


def tensor_with_size(size_pickle):
    return (G("torch._utils", "_rebuild_tensor_v2") + T(pid(), I(0), size_pickle, T(I(1)), FALSE,
                                                        G("collections", "OrderedDict") + b")" + REDUCE) + REDUCE)


CASES = {
    # containers
    "empty_file": (b"", "not a PyTorch file"),
    "pk_magic_not_zip": (b"PK\x03\x04" + bytes(100), "malformed"),
    "truncated_zip_half": (valid_zip()[:len(valid_zip()) // 2], "malformed"),
    "truncated_zip_head": (valid_zip()[:10], "malformed"),
    "zip_without_data_pkl": (archive(b"", pickle_name="other.pkl"), "no archive/data.pkl"),
    "torchscript_archive": (None, "TorchScript"),
    "zip_records_not_in_a_folder": (None, "top folder"),
    "storage_member_missing": (archive(P2 + tensor() + STOP, members={}), "no record archive/data/0"),
    "storage_larger_than_member": (archive(P2 + tensor(pid(numel=1000), size=(10, 10), stride=(10, 1)) + STOP),
                                   "holds 16 bytes, but 4000"),
    "zip_bomb_declared_size": (None, "more than deflate can produce"),
    "member_past_end_of_file": (None, "extends past the end"),
    "encrypted_member": (None, "encrypted"),
    "unsupported_compression": (None, "compression"),
    "bad_byteorder": (archive(P2 + tensor() + STOP, byteorder="middle"), "unknown byte order"),
    "bad_version": (archive(P2 + NONE + STOP, version="x\n"), "format version"),
    # pickle structure
    "empty_pickle": (archive(b""), "truncated"),
    "truncated_pickle": (archive((P2 + tensor() + STOP)[:40]), "truncated"),
    "bad_opcode": (archive(P2 + b"\xff" + STOP), "unsupported pickle opcode"),
    "stack_underflow": (archive(P2 + REDUCE + STOP), "too few items"),
    "memo_miss": (archive(P2 + b"h\x07" + STOP), "memo entry"),
    "huge_string_length": (archive(P2 + b"X\xff\xff\xff\xff" + b"abc" + STOP), "truncated"),
    "negative_long4_length": (archive(P2 + b"\x8b\xff\xff\xff\xff" + STOP), "truncated"),
    "future_protocol": (archive(b"\x80\x09" + NONE + STOP), "protocol 9"),
    "odd_setitems": (archive(P2 + b"}" + MARK + NONE + b"u" + STOP), "odd number"),
    "append_to_dict": (archive(P2 + b"}" + NONE + b"a" + STOP), "APPEND on a dict"),
    "setitem_on_list": (archive(P2 + b"]" + NONE + NONE + b"s" + STOP), "SETITEM on a list"),
    "unhashable_key": (archive(P2 + b"}" + b"]" + NONE + b"s" + STOP), "unhashable"),
    "global_without_newline": (archive(P2 + b"c" + b"a" * 5000), "no newline"),
    "deep_tuples": (archive(P2 + NONE + b"\x85" * 100_000 + STOP), "nested more than"),
    # code execution attempts and disallowed objects
    "os_system_global": (None, "posix.system"),
    "os_system_stack_global": (None, "posix.system"),
    "builtins_eval": (archive(P2 + G("builtins", "eval") + T(S("1")) + REDUCE + STOP), "builtins.eval"),
    "builtins_exec": (archive(P2 + G("__builtin__", "exec") + T(S("1")) + REDUCE + STOP), "builtins.exec"),
    "builtins_getattr": (archive(P2 + G("builtins", "getattr") + STOP), "builtins.getattr"),
    "builtins_import": (archive(P2 + G("builtins", "__import__") + STOP), "builtins.__import__"),
    "builtins_frozenset": (archive(P2 + G("builtins", "frozenset") + STOP), "builtins.frozenset"),
    "subprocess_popen": (archive(P2 + G("subprocess", "Popen") + T(S("ls")) + REDUCE + STOP), "subprocess.Popen"),
    "numpy_array": (None, "numpy"),
    "whole_torch_module": (None, "torch.nn.modules.linear.Linear"),
    "inst_opcode": (archive(P2 + MARK + b"iposix\nsystem\n" + STOP), "INST"),
    "obj_opcode": (archive(P2 + MARK + NONE + S("x") + b"o" + STOP), "OBJ"),
    "newobj_opcode": (archive(P2 + b"]" + b")" + b"\x81" + STOP), "NEWOBJ"),
    "ext1_opcode": (archive(P2 + b"\x82\x01" + STOP), "EXT1"),
    "text_persid": (archive(P2 + b"P0\n" + STOP), "PERSID"),
    "frozenset_opcode": (archive(P2 + MARK + b"\x91" + STOP), "FROZENSET"),
    "reduce_on_a_dtype": (archive(P2 + G("torch", "float32") + T() + REDUCE + STOP), "REDUCE on"),
    "reduce_on_torch_tensor": (archive(P2 + G("torch", "Tensor") + T() + REDUCE + STOP), "torch.Tensor"),
    "build_on_a_list": (archive(P2 + b"]" + b"}" + b"b" + STOP), "BUILD"),
    "build_dunder_state": (archive(P2 + G("collections", "OrderedDict") + b")" + REDUCE + b"}" + S("__class__") +
                                   NONE + b"s" + b"b" + STOP), "BUILD"),
    "bytearray_count_bomb": (archive(P2 + G("builtins", "bytearray") + T(I(10 ** 12)) + REDUCE + STOP),
                             "bytearray"),
    "codecs_other_encoding": (archive(P2 + G("_codecs", "encode") + T(S("x"), S("rot13")) + REDUCE + STOP),
                              "_codecs.encode"),
    "set_of_lists": (archive(P2 + G("builtins", "set") + T(b"]" + MARK + b"]" + b"e") + REDUCE + STOP),
                     "unhashable"),
    "sparse_tensor": (archive(P2 + G("torch._utils", "_rebuild_sparse_tensor") + STOP), "sparse"),
    "layout_value": (archive(P2 + G("torch.serialization", "_get_layout") + T(S("torch.strided")) + REDUCE + STOP),
                     "layout"),
    "bare_global_in_result": (archive(P2 + G("collections", "OrderedDict") + STOP), "itself"),
    "bare_storage_in_result": (archive(P2 + pid() + STOP), "outside any tensor"),
    # persistent ids
    "pid_int": (archive(P2 + I(0) + b"Q" + STOP), "persistent id 0"),
    "pid_module": (archive(P2 + T(S("module"), NONE) + b"Q" + STOP), "persistent id 'module'"),
    "pid_wrong_length": (archive(P2 + T(S("storage"), NONE) + b"Q" + STOP), "2 items"),
    "pid_type_not_storage": (archive(P2 + T(S("storage"), G("torch", "float32"), S("0"), S("cpu"), I(4)) + b"Q" +
                                     STOP), "not a storage type"),
    "pid_bad_location": (archive(P2 + tensor(pid(location="cpu; rm -rf /")) + STOP), "invalid location"),
    "pid_negative_numel": (archive(P2 + tensor(pid(numel=-4)) + STOP), "invalid size"),
    "storage_redeclared": (archive(P2 + T(tensor(), tensor(pid(storage="LongStorage"))) + STOP), "declared twice"),
    # tensor arguments
    "negative_size": (archive(P2 + tensor(size=(-2, 2)) + STOP), "negative size"),
    "negative_stride": (archive(P2 + tensor(stride=(-1, 1)) + STOP), "negative size"),
    "negative_offset": (archive(P2 + tensor(offset=-1) + STOP), "negative size"),
    "offset_out_of_range": (archive(P2 + tensor(offset=1) + STOP), "needs 5 elements"),
    "stride_out_of_range": (archive(P2 + tensor(stride=(3, 1)) + STOP), "needs 5 elements"),
    "size_product_overflows": (archive(P2 + tensor(size=(2 ** 40, 2 ** 40), stride=(2 ** 40, 1)) + STOP), "needs"),
    "terabyte_shape": (archive(P2 + tensor(size=(2 ** 20,) * 3, stride=(2 ** 40, 2 ** 20, 1)) + STOP), "needs"),
    "size_stride_lengths_differ": (archive(P2 + tensor(size=(4,), stride=(1, 1)) + STOP), "differ in length"),
    "size_not_a_tuple": (archive(P2 + tensor_with_size(S("ab")) + STOP), "size must be a tuple of ints"),
    "size_not_ints": (archive(P2 + tensor_with_size(T(b"G" + struct.pack(">d", 1.5))) + STOP),
                      "size must be a tuple of ints"),
    "unknown_storage_type": (archive(P2 + tensor(pid(storage="FooStorage")) + STOP), "torch.FooStorage"),
    "quantized_storage": (archive(P2 + tensor(pid(storage="QInt8Storage")) + STOP), "no such dtype"),
    "dtype_ember_lacks": (archive(P2 + G("torch", "float8_e8m0fnu") + STOP),
                          "torch.float8_e8m0fnu: ember has no such dtype"),
    "requires_grad_on_ints": (archive(P2 + tensor(pid(2, "LongStorage"), size=(2,), stride=(1,), grad=TRUE) + STOP),
                              "floating point"),
    "unknown_metadata": (archive(P2 + tensor(metadata=b"}" + S("evil") + TRUE + b"s") + STOP),
                         "unsupported tensor metadata"),
    # legacy format
    "legacy_bad_magic": (pickle.dumps(12345, protocol=2) + b"\x80\x02N.", "magic number"),
    "legacy_plain_pickle": (pickle.dumps({"a": 1}, protocol=2), "magic number"),
    "legacy_bad_protocol": (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(7, protocol=2),
                            "protocol version 7"),
    "legacy_truncated_storage": (legacy(legacy_obj())[:-5], "truncated in the data of storage"),
    "legacy_truncated_count": (legacy(legacy_obj(), data=b"\x04\x00"), "truncated in the data of storage"),
    "legacy_numel_mismatch": (legacy(legacy_obj(), data=struct.pack("<q", 9) + bytes(36)), "9 elements"),
    "legacy_missing_storage_data": (legacy(legacy_obj(), keys=()), "no data for storage"),
    "legacy_unknown_key": (legacy(legacy_obj(), keys=("0", "1")), "which no tensor uses"),
    "legacy_storage_bigger_than_file": (legacy(P2 + tensor(pid(numel=2 ** 40, extra=NONE)) + STOP),
                                        "more bytes than"),
    "legacy_storage_view": (legacy(P2 + tensor(pid(extra=T(S("1"), I(0), I(2)))) + STOP), "view of another"),
    "legacy_truncated_object": (legacy(legacy_obj())[:len(LEGACY_HEAD) + 30], "truncated"),
}


def built_case(case, tmp_path):
    """Cases whose file takes more than an expression to make."""
    if case == "torchscript_archive":
        return archive(b"", pickle_name="code.pkl", extra={"constants.pkl": b""})
    if case == "zip_records_not_in_a_folder":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("data.pkl", P2 + NONE + STOP)
        return out.getvalue()
    if case == "zip_bomb_declared_size":  # a 1 kB deflated member claiming 4 GB, read for a 1 GB storage
        data = archive(P2 + tensor(pid(numel=2 ** 28), size=(2 ** 28,), stride=(1,)) + STOP,
                       members={"0": bytes(1000)}, compression=zipfile.ZIP_DEFLATED)
        return patch_central(data, "archive/data/0", 24, "<I", 0xFFFFFFF0)
    if case == "member_past_end_of_file":
        data = valid_zip()
        return patch_central(patch_central(data, "archive/data/0", 24, "<I", 10 ** 8), "archive/data/0", 20,
                             "<I", 10 ** 8)
    if case == "encrypted_member":
        return patch_central(valid_zip(), "archive/data/0", 8, "<H", 1)
    if case == "unsupported_compression":
        return archive(P2 + tensor() + STOP, compression=zipfile.ZIP_BZIP2)
    if case in ("os_system_global", "os_system_stack_global"):
        target = tmp_path / "pwned"
        return archive(pickle.dumps(Evil(target), protocol=2 if case == "os_system_global" else 4))
    if case == "numpy_array":
        return archive(pickle.dumps(np.arange(3), protocol=2))
    if case == "whole_torch_module":
        buf = io.BytesIO()
        torch.save(torch.nn.Linear(2, 2), buf)
        return buf.getvalue()
    raise KeyError(case)


@pytest.fixture
def no_pickle(monkeypatch):
    """Fails the test if anything falls back to Python's unpickler."""
    def refuse(*args, **kwargs):
        raise AssertionError("the standard unpickler was used")
    for name in ("load", "loads", "Unpickler", "_Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_or_malicious_file(case, tmp_path, no_pickle):
    data, message = CASES[case]
    if data is None:
        data = built_case(case, tmp_path)
    with pytest.raises(UnpicklingError) as info:
        load(data)
    assert isinstance(info.value, ValueError) and isinstance(info.value, pickle.UnpicklingError)
    assert str(info.value).startswith(NAME + ":")
    assert message in str(info.value)
    assert not (tmp_path / "pwned").exists()


def test_refusals_advise_saving_a_state_dict():
    with pytest.raises(UnpicklingError, match="state_dict"):
        load(archive(P2 + G("posix", "system") + STOP))


@pytest.mark.parametrize("kind", ["lists", "dicts"])
def test_deep_nesting_loads_or_fails_cleanly(kind):
    n = 100_000
    if kind == "lists":  # [[[...]]]: n empty lists, each appended to the one below it
        body = b"]" * n + b"a" * (n - 1)
    else:  # {None: {None: ...}}
        body = (b"}" + NONE) * (n - 1) + b"}" + b"s" * (n - 1)
    try:
        out = load(archive(P2 + body + STOP))
    except UnpicklingError:
        return
    depth = 1
    while out:
        out = out[0] if kind == "lists" else out[None]
        depth += 1
    assert depth == n


def test_unclosed_marks_and_huge_memo_index_cost_nothing():
    assert load(archive(P2 + MARK * 100_000 + NONE + STOP)) is None
    assert load(archive(P2 + NONE + b"r\xff\xff\xff\xff" + b"j\xff\xff\xff\xff" + STOP)) is None


@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_random_corruptions(fmt):
    """Byte flips, truncations and insertions of a valid file: each loads or raises UnpicklingError."""
    good = good_file(fmt)
    rng = random.Random(0)
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(200):
        data = bytearray(good)
        kind = i % 4
        if kind == 0:
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 1:
            del data[rng.randrange(len(data)):]
        elif kind == 2:
            at = rng.randrange(len(data))
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:  # flips concentrated in the pickle, where lengths and opcodes live
            lo = good.find(b"\x80\x02", 0 if fmt == "legacy" else good.find(b"data.pkl"))
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(lo, min(lo + 400, len(data)))] = rng.randrange(256)
        try:
            load(bytes(data))
            outcomes["loaded"] += 1
        except UnpicklingError as e:
            assert str(e).startswith(NAME + ":")
            outcomes["refused"] += 1
    assert outcomes["refused"] > 50

