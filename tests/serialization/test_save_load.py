"""ember.save / ember.load: round trips of state_dicts and checkpoints, dtypes, structures, atomicity, bad files."""
import io
import json
import os
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.numpy
import torch

import ember
import ember.nn as nn


def bits(t):
    """The raw bytes of a tensor, to compare bit for bit (nan payloads, -0.0, bfloat16 included)."""
    return np.ascontiguousarray(t.detach().numpy()).tobytes()


def assert_same_tensor(a, b):
    assert isinstance(b, ember.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    assert bits(a) == bits(b)


def modules():
    ember.manual_seed(0)
    return [nn.Linear(5, 3), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.LayerNorm(8), nn.Linear(8, 2)),
            nn.BatchNorm1d(6), nn.Embedding(10, 4), nn.LSTM(3, 5, num_layers=2),
            nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)]


@pytest.mark.parametrize("i", range(6))
def test_module_state_dict_round_trip(tmp_path, i):
    m = modules()[i]
    if isinstance(m, nn.BatchNorm1d):  # running stats and num_batches_tracked (int64) become non-trivial
        m(ember.randn(4, 6))
    sd = m.state_dict()
    ember.save(sd, tmp_path / "m.safetensors")
    back = ember.load(tmp_path / "m.safetensors")
    assert type(back) is OrderedDict and list(back) == list(sd)
    assert back._metadata == sd._metadata
    for k in sd:
        assert_same_tensor(sd[k], back[k])
    fresh = modules()[i]
    fresh.load_state_dict(back)
    for k, v in fresh.state_dict().items():
        assert bits(v) == bits(sd[k])


@pytest.mark.parametrize("opt", [lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
                                 lambda p: ember.optim.Adam(p, lr=1e-2), lambda p: ember.optim.AdamW(p, lr=1e-2)])
def test_training_checkpoint_resumes_exactly(tmp_path, opt):
    ember.manual_seed(1)
    x, y = ember.randn(16, 4), ember.randint(0, 3, (16,))
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = opt(model.parameters())

    def step(m, o):
        o.zero_grad()
        nn.functional.cross_entropy(m(x), y).backward()
        o.step()

    for _ in range(3):
        step(model, optimizer)
    ember.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3},
               tmp_path / "ckpt.safetensors")
    ck = ember.load(tmp_path / "ckpt.safetensors")
    assert ck["epoch"] == 3
    sd = optimizer.state_dict()
    assert ck["optimizer"]["param_groups"] == sd["param_groups"]
    assert set(ck["optimizer"]["state"]) == set(sd["state"]) == {0, 1, 2, 3}  # int keys stay ints
    for i, st in sd["state"].items():
        for k, v in st.items():
            assert_same_tensor(v, ck["optimizer"]["state"][i][k])

    ember.manual_seed(2)
    resumed = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    resumed.load_state_dict(ck["model"])
    resumed_opt = opt(resumed.parameters())
    resumed_opt.load_state_dict(ck["optimizer"])
    for _ in range(2):
        step(model, optimizer)
        step(resumed, resumed_opt)
    for a, b in zip(model.parameters(), resumed.parameters()):
        assert bits(a) == bits(b)


def test_torch_state_dict_loads_into_ember_model_after_round_trip(tmp_path):
    tm = torch.nn.Linear(3, 2)
    m = nn.Linear(3, 2)
    m.load_state_dict(tm.state_dict())
    ember.save(m.state_dict(), tmp_path / "w.safetensors")
    import safetensors.torch
    read_by_torch = safetensors.torch.load_file(str(tmp_path / "w.safetensors"))
    assert set(read_by_torch) == {"weight", "bias"}
    torch.testing.assert_close(read_by_torch["weight"], tm.weight.detach(), rtol=0, atol=0)


SPECIAL = [0.0, -0.0, 1.0, -1.5, float("inf"), float("-inf"), float("nan"), 1e-40, 3.0e38, 65504.0, 6e-8]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "bool",
                                   "uint8", "int8", "int16", "int32", "int64"])
def test_dtypes_round_trip_bit_exactly(tmp_path, dtype):
    d = getattr(ember, dtype)
    if d.is_floating_point:
        t = ember.tensor(SPECIAL, dtype=ember.float64).to(d)
    elif d.is_complex:
        t = ember.tensor([complex(a, b) for a, b in zip(SPECIAL, SPECIAL[::-1])], dtype=d)
    else:
        t = ember.arange(-3, 8).to(d)
    cases = {"t": t, "scalar": t[1], "empty": t[:0].reshape(0, 1), "matrix": ember.stack([t, t])}
    cases["transposed"] = cases["matrix"].t()  # non-contiguous: written densely
    ember.save(cases, tmp_path / "d.safetensors")
    back = ember.load(tmp_path / "d.safetensors")
    for k, v in cases.items():
        assert_same_tensor(v, back[k])
        assert back[k].is_contiguous()


def test_bfloat16_file_is_bf16_for_other_readers(tmp_path):
    t = ember.randn(4, 3).bfloat16()
    ember.save({"w": t}, tmp_path / "b.safetensors")
    import safetensors.torch
    w = safetensors.torch.load_file(str(tmp_path / "b.safetensors"))["w"]
    assert w.dtype == torch.bfloat16
    assert w.view(torch.int16).numpy().tobytes() == t.numpy().view(np.int16).tobytes()


def test_nested_structures(tmp_path):
    shared = ember.randn(3)
    obj = {
        "list": [1, 2.5, None, True, "s", [shared, {"deep": (shared, 7)}]],
        "tuple": (1, (2, 3), []),
        "keys": {0: "int", 1.5: "float", None: "none", (1, "a"): "tuple", True: "bool"},
        "floats": [float("nan"), float("inf"), -float("inf"), -0.0, 1e300],
        "complex": 1 - 2j,
        "dtype": ember.bfloat16, "device": ember.device("cpu"), "size": ember.Size([2, 3]),
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
        "empty": {}, "np": np.float32(0.5), "big": 2 ** 70,
        "param": nn.Parameter(ember.ones(2)), "frozen": nn.Parameter(ember.ones(1), requires_grad=False),
        "grad": ember.zeros(2, requires_grad=True),
    }
    ember.save(obj, tmp_path / "n.safetensors")
    back = ember.load(tmp_path / "n.safetensors")
    assert back["list"][:5] == [1, 2.5, None, True, "s"] and type(back["list"][0]) is int
    assert back["list"][5][0] is back["list"][5][1]["deep"][0]  # one tensor object stays one object
    assert_same_tensor(shared, back["list"][5][0])
    assert back["tuple"] == (1, (2, 3), []) and isinstance(back["tuple"][1], tuple)
    assert back["keys"] == obj["keys"] and list(back["keys"]) == list(obj["keys"])
    f = back["floats"]
    assert np.isnan(f[0]) and f[1:3] == [float("inf"), -float("inf")] and str(f[3]) == "-0.0" and f[4] == 1e300
    assert back["complex"] == 1 - 2j and back["dtype"] is ember.bfloat16 and back["device"] == ember.device("cpu")
    assert isinstance(back["size"], ember.Size) and back["size"] == (2, 3)
    assert type(back["ordered"]) is OrderedDict and list(back["ordered"]) == ["b", "a"]
    assert back["empty"] == {} and back["np"] == 0.5 and back["big"] == 2 ** 70
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    assert back["grad"].requires_grad and back["grad"].is_leaf
    # a bare tensor, and a bare value, as torch.save allows
    ember.save(shared, tmp_path / "t.safetensors")
    assert_same_tensor(shared, ember.load(tmp_path / "t.safetensors"))
    ember.save([], tmp_path / "e.safetensors")
    assert ember.load(tmp_path / "e.safetensors") == []


def test_file_objects_and_path_types(tmp_path):
    buf = io.BytesIO()
    ember.save({"a": ember.arange(3)}, buf)
    buf.seek(0)
    assert ember.load(buf)["a"].tolist() == [0, 1, 2]
    ember.save({"a": 1}, str(tmp_path / "s.safetensors"))
    with open(tmp_path / "s.safetensors", "rb") as fh:
        assert ember.load(fh) == {"a": 1}
    with pytest.raises(TypeError, match="binary mode"):
        with open(tmp_path / "s.safetensors", encoding="latin-1") as fh:
            ember.load(fh)


def test_unsupported_objects_raise_type_error(tmp_path):
    with pytest.raises(TypeError, match=r"cannot save an object of type object \(at model\.w\)"):
        ember.save({"model": {"w": object()}}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="never pickles"):
        ember.save(nn.Linear(2, 2), tmp_path / "x.safetensors")  # torch pickles whole modules; ember does not
    assert not os.listdir(tmp_path)


def write_with_metadata(path, arrays, structure):
    with open(path, "wb") as fh:
        meta = {"ember.format": "1", "ember.structure": json.dumps(structure)}
        fh.write(safetensors.numpy.save(arrays, metadata=meta))


def test_map_location(tmp_path):
    p = tmp_path / "m.safetensors"
    ember.save({"w": ember.ones(2), "n": 3}, p)
    assert ember.load(p, map_location="cpu")["w"].device == ember.device("cpu")
    assert ember.load(p, map_location=ember.device("cpu"))["n"] == 3
    seen = []
    out = ember.load(p, map_location=lambda t, loc: seen.append(loc) or t * 2)
    assert seen == ["cpu"] and out["w"].tolist() == [2.0, 2.0]
    # a file saved from a GPU
    write_with_metadata(p, {"w": np.ones(2, np.float32)},
                        {"dict": [["w", {"tensor": "w", "dtype": "float32", "device": "cuda:0"}]]})
    for loc in ("cpu", {"cuda:0": "cpu"}, lambda t, loc: t):
        assert ember.load(p, map_location=loc)["w"].device == ember.device("cpu")
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="map_location"):
            ember.load(p)
    else:
        assert ember.load(p)["w"].device.type == "cuda"
    with pytest.raises(TypeError, match="map_location"):
        ember.load(p, map_location=3)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a CUDA GPU (CuPy)")
def test_cuda_round_trip(tmp_path):
    t = ember.randn(3, device="cuda").bfloat16()
    ember.save({"t": t}, tmp_path / "c.safetensors")
    back = ember.load(tmp_path / "c.safetensors")["t"]
    assert back.device == t.device and bits(back.cpu()) == bits(t.cpu())
    assert ember.load(tmp_path / "c.safetensors", map_location="cpu")["t"].device == ember.device("cpu")


def test_plain_safetensors_file_loads_as_dict(tmp_path):
    import safetensors.torch
    safetensors.torch.save_file({"a": torch.arange(4, dtype=torch.float32), "b": torch.ones(2, dtype=torch.bfloat16)},
                                str(tmp_path / "plain.safetensors"))
    d = ember.load(tmp_path / "plain.safetensors")
    assert set(d) == {"a", "b"} and d["a"].tolist() == [0, 1, 2, 3] and d["b"].dtype is ember.bfloat16


def test_failed_save_leaves_old_file_intact(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.safetensors"
    ember.save({"version": 1, "w": ember.ones(3)}, p)
    before = p.read_bytes()

    def dies_midway(tensors, filename, metadata=None):
        with open(filename, "wb") as fh:
            fh.write(b"\x00" * 100)  # a partial write ...
        raise OSError(28, "No space left on device")  # ... then the disk fills

    monkeypatch.setattr(safetensors.numpy, "save_file", dies_midway)
    with pytest.raises(OSError, match="No space left"):
        ember.save({"version": 2, "w": ember.zeros(1000)}, p)
    monkeypatch.undo()
    assert p.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temporary file left
    assert ember.load(p)["version"] == 1

    with pytest.raises(KeyboardInterrupt):  # an interrupt mid-save too
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(KeyboardInterrupt()))
        ember.save({"version": 3}, p)
    monkeypatch.undo()
    assert p.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.safetensors"]

    ember.save({"version": 4}, p)  # a successful save replaces it
    assert ember.load(p) == {"version": 4}
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask  # a normal file, not mkstemp's private 0600


def test_malformed_files_raise_value_error_naming_the_file(tmp_path):
    good = tmp_path / "good.safetensors"
    ember.save({"w": ember.ones(4)}, good)
    data = good.read_bytes()
    bad = {"empty": b"", "short": b"\x01\x02", "garbage": b"this is not a tensor file at all" * 4,
           "truncated": data[:-8], "huge_header": (10 ** 12).to_bytes(8, "little") + data[8:],
           "bad_json": len(b"{nope").to_bytes(8, "little") + b"{nope"}
    for name, content in bad.items():
        p = tmp_path / f"{name}.safetensors"
        p.write_bytes(content)
        with pytest.raises(ValueError, match=name):
            ember.load(p)
    for structure in ({"tensor": "missing", "dtype": "float32"}, {"what": 1}, {"tensor": "w", "dtype": "nope"},
                      {"tensor": "w", "dtype": "int64"}, {"dict": [[["unhashable"], 1]]}):
        p = tmp_path / "structure.safetensors"
        write_with_metadata(p, {"w": np.ones(2, np.float32)}, structure)
        with pytest.raises(ValueError, match="structure.safetensors"):
            ember.load(p)
    with open(p, "wb") as fh:
        fh.write(safetensors.numpy.save({}, metadata={"ember.format": "99", "ember.structure": "[]"}))
    with pytest.raises(ValueError, match="format '99'"):
        ember.load(p)
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "absent.safetensors")


def test_torch_signatures(tmp_path):
    """torch.save/torch.load's pickle arguments: accepted where they change nothing, refused where they would."""
    import pickle
    path = tmp_path / "m.safetensors"
    t = ember.arange(4.0)
    ember.save({"t": t}, path, pickle, 4)
    assert ember.equal(ember.load(path, "cpu", None)["t"], t)
    with pytest.raises(ValueError, match="pickle_module must be None"):
        ember.load(path, "cpu", pickle)
