"""Weights moving between ember and torch through files, sharded Hugging Face checkpoints, and the
``ember.utils.safetensors`` helpers."""
import json

import numpy as np
import pytest
import safetensors.torch
import torch

import ember
import ember.nn as enn
from ember.utils import safetensors as est


def build(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))


def train(lib, model, steps=5):
    lib.manual_seed(0)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        x, y = lib.randn(8, 1, 8, 8), lib.randint(0, 3, (8,))
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def test_trained_in_ember_runs_identically_in_torch(tmp_path):
    model = train(ember, build(enn))
    ember.save(model.state_dict(), tmp_path / "m.safetensors")
    twin = build(torch.nn).eval()
    twin.load_state_dict(safetensors.torch.load_file(tmp_path / "m.safetensors"))
    x = np.random.default_rng(1).standard_normal((5, 1, 8, 8)).astype(np.float32)
    for k, v in model.state_dict().items():  # the weights bit for bit; the outputs to float32 rounding
        assert np.array_equal(twin.state_dict()[k].numpy(), v.numpy())
    with torch.no_grad():
        expected = twin(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(ember.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("writer", ["safetensors", "torch.save"])
def test_trained_in_torch_runs_identically_in_ember(tmp_path, writer):
    model = train(torch, build(torch.nn))
    path = tmp_path / "m.bin"
    if writer == "safetensors":
        safetensors.torch.save_file(model.state_dict(), path)
    else:
        torch.save(model.state_dict(), path)
    twin = build(enn).eval()
    twin.load_state_dict(ember.load(path))
    for k, v in model.state_dict().items():
        assert np.array_equal(twin.state_dict()[k].numpy(), v.numpy())
    x = np.random.default_rng(1).standard_normal((5, 1, 8, 8)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(twin(ember.from_numpy(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def write_shards(folder, state, per_shard=3, fmt="safetensors"):
    """A Hugging Face style sharded checkpoint: shard files and their index."""
    names = list(state)
    weight_map = {}
    shards = [names[i:i + per_shard] for i in range(0, len(names), per_shard)]
    for i, chunk in enumerate(shards):
        if fmt == "safetensors":
            file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
            safetensors.torch.save_file({k: state[k].contiguous() for k in chunk}, folder / file)
        else:
            file = f"pytorch_model-{i + 1:05d}-of-{len(shards):05d}.bin"
            torch.save({k: state[k] for k in chunk}, folder / file)
        weight_map.update({k: file for k in chunk})
    index = folder / ("model.safetensors.index.json" if fmt == "safetensors" else "pytorch_model.bin.index.json")
    index.write_text(json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))
    return index


@pytest.mark.parametrize("fmt", ["safetensors", "bin"])
def test_sharded_checkpoint_loads(tmp_path, fmt):
    model = build(torch.nn)
    state = model.state_dict()
    index = write_shards(tmp_path, state, fmt=fmt)
    loaded = ember.load(index)
    assert list(loaded) == list(state)
    for k, v in state.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())
    build(enn).load_state_dict(loaded)


def test_sharded_checkpoint_errors(tmp_path):
    state = {"a": torch.ones(2), "b": torch.zeros(3)}
    index = write_shards(tmp_path, state, per_shard=1)
    good = json.loads(index.read_text())
    cases = {
        "traversal": {"weight_map": {"a": "../../etc/passwd"}},
        "missing shard": {"weight_map": {"a": "absent.safetensors"}},
        "not in shard": {"weight_map": {"zzz": good["weight_map"]["a"]}},
        "no weight_map": {"metadata": {}},
        "weight_map list": {"weight_map": ["a"]},
    }
    messages = {"traversal": "not a file name", "missing shard": "missing", "not in shard": "does not hold",
                "no weight_map": "weight_map", "weight_map list": "weight_map"}
    for case, content in cases.items():
        bad = tmp_path / "bad.index.json"
        bad.write_text(json.dumps(content))
        with pytest.raises(ValueError, match=messages[case]):
            ember.load(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.index.json"):
        ember.load(bad)


def test_safetensors_helpers_round_trip_with_torch(tmp_path):
    ember.manual_seed(0)
    tensors = {"w": ember.randn(3, 4), "h": ember.randn(5).half(), "b": ember.randn(2, 2).bfloat16(),
               "i": ember.arange(6).reshape(2, 3), "m": ember.tensor([True, False]), "e": ember.zeros(0, 3),
               "t": ember.randn(4, 3).t()}
    est.save_file(tensors, tmp_path / "x.safetensors", metadata={"format": "pt"})
    from_torch = safetensors.torch.load_file(tmp_path / "x.safetensors")
    for k, v in tensors.items():
        assert str(from_torch[k].dtype) == str(v.dtype).replace("ember", "torch")
        assert np.array_equal(from_torch[k].float().numpy(), v.float().numpy())
    back = est.load_file(tmp_path / "x.safetensors")
    same = est.load(est.save(tensors))
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and same[k].dtype == v.dtype
        assert np.array_equal(back[k].float().numpy(), v.float().numpy())
        assert np.array_equal(same[k].float().numpy(), v.float().numpy())
    with est.safe_open(tmp_path / "x.safetensors", framework="pt") as f:
        assert sorted(f.keys()) == sorted(tensors) and f.metadata() == {"format": "pt"}
        assert f.get_slice("w").get_shape() == [3, 4] and f.get_slice("w").get_dtype() == "F32"
        assert np.array_equal(f.get_slice("w")[1:, ::2].numpy(), tensors["w"][1:, ::2].numpy())
        assert f.get_tensor("b").dtype == ember.bfloat16
        with pytest.raises(KeyError, match="nope"):
            f.get_tensor("nope")
    with est.safe_open(tmp_path / "x.safetensors", framework="numpy") as f:
        assert isinstance(f.get_tensor("i"), np.ndarray)
    with pytest.raises(TypeError, match="'x'"):
        est.save_file({"x": np.ones(2)}, tmp_path / "y.safetensors")


def test_load_maps_the_file_copy_on_write(tmp_path):
    path = tmp_path / "w.safetensors"
    ember.save({"w": ember.arange(4.0)}, path)
    w = ember.load(path)["w"]
    w.mul_(2)  # writable; the change stays in this process
    assert w.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert ember.load(path)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ember.load(path, mmap=False)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
