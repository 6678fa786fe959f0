"""``python -m ember.demo``: a few steps of the real run, its checkpoint and its plot."""
import gzip
import os

import numpy as np

import ember
from ember import demo


def check_outputs(result, out, side):
    assert result["checkpoint"] == os.path.join(out, "checkpoint.safetensors")
    ck = ember.load(result["checkpoint"])
    assert set(ck) >= {"model", "optimizer", "epoch", "test_accuracy"} and ck["image_size"] == side
    model = demo.make_model(side, len(ck["classes"]))
    model.load_state_dict(ck["model"])  # strict: every key and shape matches
    opt = ember.optim.Adam(model.parameters())
    opt.load_state_dict(ck["optimizer"])
    with open(result["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(result["plot"]) > 10_000


def test_demo_on_digits(tmp_path, capsys):
    out = str(tmp_path / "run")
    result = demo.main(["--epochs", "2", "--steps", "4", "--out", out])
    check_outputs(result, out, side=8)
    assert len(result["history"]["step_loss"]) == 8 and len(result["history"]["test_acc"]) == 2
    text = capsys.readouterr().out
    assert "held-out test set: accuracy" in text and "identical" in text and result["plot"] in text


def write_idx(path, array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_demo_on_an_idx_folder(tmp_path):
    folder = tmp_path / "fashion-mnist"  # the folder's name picks Fashion-MNIST's class names
    folder.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", 96), ("t10k", 40)):
        write_idx(folder / f"{split}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28)))
        write_idx(folder / f"{split}-labels-idx1-ubyte.gz", rng.integers(0, 10, n))
    out = str(tmp_path / "run")
    result = demo.main(["--data-dir", str(folder), "--steps", "2", "--batch-size", "16", "--out", out])
    check_outputs(result, out, side=28)
    assert ember.load(result["checkpoint"])["classes"][0] == "T-shirt/top"
