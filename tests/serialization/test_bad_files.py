"""Malformed and hostile files for the safetensors, IDX and CIFAR readers: each raises a ValueError/RuntimeError-family
error naming the file and what is wrong; nothing crashes, hangs, allocates what the file only declares, or runs code."""
import gzip
import json
import os
import pickle
import random
import struct

import numpy as np
import pytest
import safetensors.numpy

import ember
from ember.datasets.cifar import load_batch
from ember.datasets.mnist import read_idx
from ember.utils import safetensors as est

ERRORS = (ValueError, RuntimeError)


def st_bytes(header, data=b""):
    """A safetensors file from a header (dict or raw bytes) and a data section, without the library's checks."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


def tensor(dtype="F32", shape=(2,), offsets=(0, 8)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


GOOD = safetensors.numpy.save({"a": np.arange(4, dtype=np.float32), "b": np.arange(3, dtype=np.int16)},
                              metadata={"note": "x"})
HEADER_LEN = int.from_bytes(GOOD[:8], "little")

SAFETENSORS = {
    "empty": b"",
    "shorter_than_length": b"\x01\x02\x03",
    "length_only": (0).to_bytes(8, "little"),
    "length_past_end": (1000).to_bytes(8, "little") + b"{}",
    "length_2_64": b"\xff" * 8 + b"{}",
    "length_into_data": (HEADER_LEN + 10).to_bytes(8, "little") + GOOD[8:],
    "not_json": st_bytes(b"{this is not json"),
    "not_utf8": st_bytes(b'{"a\xff\xfe": 1}'),
    "json_list": st_bytes([1, 2, 3]),
    "json_string": st_bytes("header"),
    "duplicate_key": st_bytes(b'{"a":' + json.dumps(tensor()).encode() + b',"a":'
                              + json.dumps(tensor(offsets=(8, 16))).encode() + b"}", b"\0" * 16),
    "offset_past_end": st_bytes({"a": tensor(offsets=(0, 8000))}, b"\0" * 8),
    "offsets_reversed": st_bytes({"a": tensor(offsets=(8, 0))}, b"\0" * 8),
    "offsets_overlap": st_bytes({"a": tensor(offsets=(0, 8)), "b": tensor(offsets=(4, 12))}, b"\0" * 12),
    "offsets_gap": st_bytes({"a": tensor(offsets=(0, 8)), "b": tensor(offsets=(12, 20))}, b"\0" * 20),
    "offsets_negative": st_bytes({"a": tensor(offsets=(-8, 0))}, b"\0" * 8),
    "offsets_missing": st_bytes({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8),
    "offsets_not_ints": st_bytes({"a": tensor(offsets=("0", "8"))}, b"\0" * 8),
    "shape_disagrees": st_bytes({"a": tensor(shape=(3,))}, b"\0" * 8),
    "shape_negative": st_bytes({"a": tensor(shape=(-2,))}, b"\0" * 8),
    "shape_not_list": st_bytes({"a": {"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}}, b"\0" * 8),
    "shape_huge": st_bytes({"a": tensor(shape=(2**40, 2**40))}, b"\0" * 8),
    "shape_overflows": st_bytes({"a": tensor(shape=(2**63, 2**63, 4))}, b"\0" * 8),
    "dtype_unknown": st_bytes({"a": tensor(dtype="F99")}, b"\0" * 8),
    "dtype_ember_lacks": st_bytes({"a": tensor(dtype="F8_E8M0", offsets=(0, 2))}, b"\0" * 2),
    "dtype_missing": st_bytes({"a": {"shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8),
    "data_truncated": GOOD[:-3],
    "data_missing": GOOD[:8 + HEADER_LEN],
    "trailing_bytes": GOOD + b"extra",
    "metadata_not_strings": st_bytes({"__metadata__": {"a": 1}, "a": tensor()}, b"\0" * 8),
    "metadata_list": st_bytes({"__metadata__": [1], "a": tensor()}, b"\0" * 8),
    "entry_not_object": st_bytes({"a": 5}, b"\0" * 8),
    "structure_not_json": safetensors.numpy.save({}, metadata={"ember.format": "1", "ember.structure": "{nope"}),
    "structure_missing_tensor": safetensors.numpy.save(
        {}, metadata={"ember.format": "1", "ember.structure": '{"tensor": "w", "dtype": "float32"}'}),
    "structure_deep": safetensors.numpy.save(
        {}, metadata={"ember.format": "1", "ember.structure": "[" * 100000 + "]" * 100000}),
    "structure_wrong_dtype": safetensors.numpy.save(
        {"w": np.ones(2, np.float32)}, metadata={"ember.format": "1",
                                                  "ember.structure": '{"tensor": "w", "dtype": "int64"}'}),
    "structure_unknown_node": safetensors.numpy.save({}, metadata={"ember.format": "1",
                                                                   "ember.structure": '{"eval": "os.system"}'}),
    "structure_unhashable_key": safetensors.numpy.save({}, metadata={"ember.format": "1",
                                                                     "ember.structure": '{"dict": [[[1], 2]]}'}),
    "format_newer": safetensors.numpy.save({}, metadata={"ember.format": "99", "ember.structure": "[]"}),
}


def read_all(result):
    """Touches every loaded value, so a reader that deferred a bad read would fail here, inside the test."""
    values = result.values() if isinstance(result, dict) else [result]
    for v in values:
        if isinstance(v, ember.Tensor):
            v.sum()


STRUCTURE = {k for k in SAFETENSORS if k.startswith(("structure", "format"))}  # valid for plain safetensors readers
WAYS = ["path", "path_no_mmap", "file_object", "load_file", "safe_open", "bytes"]


@pytest.mark.parametrize("case, how", [(c, w) for c in sorted(SAFETENSORS) for w in WAYS
                                       if c not in STRUCTURE or w.startswith(("path", "file"))])
def test_bad_safetensors(tmp_path, case, how):
    path = tmp_path / f"{case}.safetensors"
    path.write_bytes(SAFETENSORS[case])
    name = "<bytes>" if how == "bytes" else case
    with pytest.raises(ERRORS, match=name):
        if how == "path":
            read_all(ember.load(path))
        elif how == "path_no_mmap":
            read_all(ember.load(path, mmap=False))
        elif how == "file_object":
            with open(path, "rb") as f:
                read_all(ember.load(f))
        elif how == "load_file":
            read_all(est.load_file(path))
        elif how == "safe_open":
            with est.safe_open(path) as f:
                for k in f.keys():
                    f.get_tensor(k)
        else:
            read_all(est.load(SAFETENSORS[case]))


def test_misaligned_offsets_still_load(tmp_path):
    """The format does not require aligned offsets: such a file is valid and loads correctly."""
    data = b"\0" + np.arange(3, dtype=np.float32).tobytes()
    path = tmp_path / "odd.safetensors"
    path.write_bytes(st_bytes({"p": tensor(dtype="U8", shape=(1,), offsets=(0, 1)),
                               "x": tensor(shape=(3,), offsets=(1, 13))}, data))
    out = ember.load(path)
    assert out["x"].tolist() == [0.0, 1.0, 2.0]
    out["x"].add_(1)  # writable, and the file is untouched
    assert ember.load(path)["x"].tolist() == [0.0, 1.0, 2.0]


def test_random_mutations_of_a_valid_file(tmp_path):
    """Seeded byte flips and truncations of a real file: each load succeeds or raises an allowed error."""
    state = {"w": ember.randn(4, 3), "b": ember.arange(5).to(ember.bfloat16), "step": 3}
    good = tmp_path / "good.safetensors"
    ember.save(state, good)
    data = good.read_bytes()
    rng = random.Random(0)
    path = tmp_path / "mutant.safetensors"
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        b = bytearray(data)
        if rng.random() < 0.3:
            b = b[:rng.randrange(len(b))]
        for _ in range(rng.randint(1, 4)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        path.write_bytes(bytes(b))
        try:
            read_all(ember.load(path))
            outcomes["ok"] += 1
        except ERRORS as e:
            assert "mutant.safetensors" in str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 50 and outcomes["ok"] > 10  # both paths were really exercised


def test_saving_over_a_mapped_file_keeps_the_loaded_tensors(tmp_path):
    path = tmp_path / "w.safetensors"
    ember.save({"w": ember.arange(6.0)}, path)
    loaded = ember.load(path)
    ember.save({"w": ember.zeros(6)}, path)  # replaces the file while `loaded` still maps the old one
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert ember.load(path)["w"].tolist() == [0.0] * 6


# IDX (MNIST / Fashion-MNIST)

def idx(code=0x08, dims=(2, 3), data=None, magic=b"\0\0"):
    body = bytes(i % 256 for i in range(int(np.prod(dims)))) if data is None else data
    return magic + bytes([code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + body


def gz(raw):
    return gzip.compress(raw)


IDX = {
    "empty": b"",
    "short_magic": b"\0\0",
    "bad_magic": idx(magic=b"\x1f\x00"),
    "unknown_type": idx(code=0x07),
    "truncated_dims": idx()[:6],
    "data_short": idx()[:-1],
    "data_long": idx() + b"\0",
    "huge_dims": idx(dims=(2**32 - 1, 2**32 - 1, 2**32 - 1), data=b"\0" * 16),
    "wrong_ndim": idx(dims=(6,)),
    "float_bytes_mismatch": idx(code=0x0D, dims=(3,), data=b"\0" * 10),
}
IDX_GZ = {
    "gz_corrupt": gz(idx())[:10] + b"garbage" * 3,
    "gz_truncated": gz(idx(dims=(100, 100)))[:-12],
    "gz_not_gzip": idx(),
    "gz_bomb_header_lies": gz(idx(dims=(2**31, 2**31), data=b"\0" * (4 << 20))),
    "gz_data_short": gz(idx()[:-2]),
}


@pytest.mark.parametrize("case", sorted(IDX) + sorted(IDX_GZ))
def test_bad_idx(tmp_path, case):
    raw, suffix = (IDX[case], "") if case in IDX else (IDX_GZ[case], ".gz")
    path = tmp_path / f"{case}-ubyte{suffix}"
    path.write_bytes(raw)
    with pytest.raises(ERRORS, match=case):
        read_idx(str(path), expected_ndim=2)


def test_good_idx_reads(tmp_path):
    path = tmp_path / "ok-ubyte.gz"
    path.write_bytes(gz(idx(code=0x0B, dims=(2, 2), data=struct.pack(">4h", 1, -2, 300, -400))))
    assert read_idx(str(path), 2).tolist() == [[1, -2], [300, -400]]


# CIFAR batches (pickles read by a restricted unpickler)

class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _pickle_with_global(module, name):
    """A protocol-0 pickle calling ``module.name('x')``."""
    return f"c{module}\n{name}\n(S'x'\ntR.".encode()


def cifar_cases(marker):
    good = {b"data": np.zeros((2, 3072), np.uint8), b"labels": [0, 1]}
    return {
        "empty": b"",
        "garbage": b"\x00\x01definitely not a pickle",
        "truncated": pickle.dumps(good, protocol=2)[:-20],
        "os_system": pickle.dumps({"x": _RunsCode(marker)}, protocol=2),
        "os_system_proto0": _pickle_with_global("os", "system"),
        "builtins_eval": _pickle_with_global("builtins", "eval"),
        "posix_system": _pickle_with_global("posix", "system"),
        "subprocess": _pickle_with_global("subprocess", "Popen"),
        "numpy_load": _pickle_with_global("numpy", "load"),
        "stack_global": b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94.",
        "not_a_dict": pickle.dumps([1, 2, 3], protocol=2),
        "array_bytes_short": pickle.dumps(good, protocol=2).replace(b"\x00" * 64, b"", 1),
    }


@pytest.mark.parametrize("case", sorted(cifar_cases("x")))
def test_bad_cifar_batch(tmp_path, case):
    marker = tmp_path / "pwned"
    path = tmp_path / f"{case}_batch"
    path.write_bytes(cifar_cases(marker)[case])
    with pytest.raises(ERRORS, match=case):
        load_batch(str(path))
    assert not marker.exists()


def test_bad_cifar_contents(tmp_path):
    """A readable pickle whose arrays are not CIFAR-shaped is rejected by the dataset with the file named."""
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [str(i) for i in range(10)]}, f, protocol=2)
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]}, f, protocol=2)
    with pytest.raises(ERRORS, match="test_batch"):
        ember.datasets.CIFAR10(str(tmp_path), train=False)
