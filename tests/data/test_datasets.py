"""MNIST, Fashion-MNIST, CIFAR and text datasets: the real files read in place, downloads through file:// URLs,
and a corpus of malformed files."""
import gzip
import hashlib
import io
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest

import ember
from ember import transforms as T
from ember.datasets import CIFAR10, MNIST, CharDataset, FashionMNIST, TinyShakespeare, TokenDataset
from ember.datasets.mnist import read_idx
from ember.utils.data import DataLoader

SHARED = "/work/shared/data"
MNIST_DIR, FASHION_DIR = os.path.join(SHARED, "mnist"), os.path.join(SHARED, "fashion-mnist")
needs_mnist = pytest.mark.skipif(not os.path.isdir(MNIST_DIR), reason="shared MNIST files not present")
needs_fashion = pytest.mark.skipif(not os.path.isdir(FASHION_DIR), reason="shared Fashion-MNIST files not present")
needs_text = pytest.mark.skipif(not os.path.isfile(os.path.join(SHARED, "tinyshakespeare", "input.txt")),
                                reason="shared Tiny Shakespeare not present")


def _idx(arr, code=0x08):
    arr = np.asarray(arr)
    return bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(">u1").tobytes()


def _write_split(folder, prefix, images, labels, gz=False):
    os.makedirs(folder, exist_ok=True)
    for kind, data in (("images-idx3", _idx(images)), ("labels-idx1", _idx(labels))):
        name = os.path.join(folder, f"{prefix}-{kind}-ubyte")
        if gz:
            with gzip.open(name + ".gz", "wb") as f:
                f.write(data)
        else:
            with open(name, "wb") as f:
                f.write(data)


def _tiny(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


# -- the real files ----------------------------------------------------------------------------------------------
@needs_mnist
def test_mnist_test_split_in_place():
    ds = MNIST(MNIST_DIR, train=False)
    assert len(ds) == 10000 and ds.data.shape == (10000, 28, 28) and ds.data.dtype == ember.uint8
    assert ds.targets.dtype == ember.int64
    assert np.bincount(ds.targets.numpy()).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    img, label = ds[0]
    assert label == 7 and img.shape == (28, 28) and img.dtype == ember.uint8 and 0 < int(img.sum()) < 255 * 784


@needs_mnist
def test_mnist_train_split_with_transforms_and_loader():
    tf = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])
    ds = MNIST(MNIST_DIR, train=True, transform=tf, target_transform=lambda y: y + 100)
    assert len(ds) == 60000
    assert np.bincount(ds.targets.numpy()).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851,
                                                        5949]
    x, y = ds[0]
    assert x.shape == (1, 28, 28) and x.dtype == ember.float32 and y == 105
    xb, yb = next(iter(DataLoader(ds, batch_size=64, shuffle=True, generator=ember.Generator().manual_seed(0))))
    assert xb.shape == (64, 1, 28, 28) and yb.dtype == ember.int64 and bool((yb >= 100).all())
    assert "Number of datapoints: 60000" in repr(ds) and "Normalize" in repr(ds)


@needs_fashion
def test_fashion_mnist_in_place():
    ds = FashionMNIST(FASHION_DIR, train=False)
    assert len(ds) == 10000 and np.bincount(ds.targets.numpy()).tolist() == [1000] * 10
    assert ds.classes[9] == "Ankle boot" and ds.class_to_idx["Trouser"] == 1


# -- layouts and downloads ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("gz", [False, True])
def test_torchvision_layout_plain_and_gzip(tmp_path, gz):
    images, labels = _tiny()
    _write_split(tmp_path / "MNIST" / "raw", "t10k", images, labels, gz=gz)
    ds = MNIST(str(tmp_path), train=False)
    np.testing.assert_array_equal(ds.data.numpy(), images)
    assert ds.targets.tolist() == labels.tolist() and ds[2][1] == int(labels[2])


def test_missing_files_error_says_where(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found") as info:
        FashionMNIST(str(tmp_path))
    assert "train-images-idx3-ubyte.gz" in str(info.value) and str(tmp_path / "FashionMNIST" / "raw") in str(info.value)


def _serve_from(tmp_path, monkeypatch, cls, files):
    """Points ``cls``'s download at a local folder (file:// URLs) holding ``files``, with their real md5s."""
    src = tmp_path / "mirror"
    src.mkdir()
    resources = []
    for name, data in files.items():
        (src / name).write_bytes(data)
        resources.append((name, hashlib.md5(data).hexdigest()))
    monkeypatch.setattr(cls, "mirrors", ["file:///nonexistent/", src.as_uri() + "/"])
    monkeypatch.setattr(cls, "resources", resources)


def test_download_fetches_checks_and_reads(tmp_path, monkeypatch):
    images, labels = _tiny(7)
    files = {}
    for prefix in ("train", "t10k"):
        files[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(_idx(images))
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(_idx(labels))
    _serve_from(tmp_path, monkeypatch, MNIST, files)
    root = tmp_path / "data"
    ds = MNIST(str(root), download=True)
    assert len(ds) == 7 and sorted(os.listdir(root / "MNIST" / "raw")) == sorted(files)
    np.testing.assert_array_equal(ds.data.numpy(), images)


def test_download_rejects_a_bad_checksum(tmp_path, monkeypatch):
    _serve_from(tmp_path, monkeypatch, MNIST, {"train-images-idx3-ubyte.gz": b"not the file"})
    monkeypatch.setattr(MNIST, "resources", [("train-images-idx3-ubyte.gz", "0" * 32)])
    with pytest.raises(RuntimeError, match="Put these files in") as info:
        MNIST(str(tmp_path / "data"), download=True)
    assert "md5 does not match" in str(info.value.__cause__)
    assert not os.listdir(tmp_path / "data" / "MNIST" / "raw")


def test_download_without_network_says_where_to_put_files(tmp_path, monkeypatch):
    monkeypatch.setattr(MNIST, "mirrors", ["file:///nonexistent/a/", "file:///nonexistent/b/"])
    with pytest.raises(RuntimeError) as info:
        MNIST(str(tmp_path), download=True)
    msg = str(info.value)
    assert "could not be downloaded" in msg and str(tmp_path / "MNIST" / "raw") in msg
    assert all(name in msg for name, _ in MNIST.resources)


# -- malformed IDX files -----------------------------------------------------------------------------------------
GOOD = _idx(np.zeros((2, 3, 3), np.uint8))
MALFORMED = {
    "empty": (b"", "bad magic number"),
    "bad_magic": (b"\x01\x02" + GOOD[2:], "bad magic number"),
    "unknown_type": (GOOD[:2] + b"\x07" + GOOD[3:], "unknown IDX data type code 0x07"),
    "wrong_ndim": (_idx(np.zeros((2, 9), np.uint8)), "IDX file has 2 dimensions, expected 3"),
    "truncated_header": (GOOD[:9], "truncated IDX header"),
    "truncated_data": (GOOD[:-1], "holds only 17 data bytes"),
    "trailing_data": (GOOD + b"\x00", "holds more data than that"),
    "huge_claim": (b"\x00\x00\x08\x03" + struct.pack(">3I", 2 ** 31, 2 ** 31, 2 ** 31) + b"\x00" * 8,
                   "holds only 8 data bytes"),
}


@pytest.mark.parametrize("case", MALFORMED)
@pytest.mark.parametrize("gz", [False, True])
def test_malformed_idx_files_raise_value_errors_naming_the_file(tmp_path, case, gz):
    data, expected = MALFORMED[case]
    path = str(tmp_path / ("bad.idx" + (".gz" if gz else "")))
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)
    with pytest.raises(ValueError, match=expected) as info:
        read_idx(path, 3)
    assert path in str(info.value)


def test_corrupt_gzip_and_mismatched_files(tmp_path):
    path = str(tmp_path / "x.gz")
    with open(path, "wb") as f:
        f.write(gzip.compress(GOOD)[:-6] + b"garbage!")
    with pytest.raises(ValueError, match="x.gz"):
        read_idx(path, 3)
    images, labels = _tiny(4)
    _write_split(tmp_path / "a", "t10k", images, labels[:3])
    with pytest.raises(ValueError, match="holds 4 images but .* holds 3 labels"):
        MNIST(str(tmp_path / "a"), train=False)
    folder = tmp_path / "b"
    _write_split(folder, "t10k", images, labels)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(bytes([0, 0, 0x0C, 1]) + struct.pack(">I", 4) + b"\x00" * 16)
    with pytest.raises(ValueError, match="expected uint8 data, found int32"):
        MNIST(str(folder), train=False)


def test_read_idx_other_dtypes(tmp_path):
    arr = np.arange(6, dtype=">i4").reshape(2, 3)
    path = tmp_path / "i.idx"
    path.write_bytes(bytes([0, 0, 0x0C, 2]) + struct.pack(">2I", 2, 3) + arr.tobytes())
    out = read_idx(str(path))
    assert out.dtype == np.int32 and out.dtype.isnative and out.tolist() == arr.tolist()


# -- CIFAR -------------------------------------------------------------------------------------------------------
def _cifar_folder(root, n=3, protocol=2):
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder)
    rng = np.random.default_rng(0)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        entry = {"batch_label": name, "labels": [int(v) for v in rng.integers(0, 10, n)],
                 "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), "filenames": [f"{name}_{i}.png"
                                                                                     for i in range(n)]}
        batches[name] = entry
        data = pickle.dumps(entry, protocol=2 if protocol == "numpy1" else protocol)
        if protocol == "numpy1":  # the module name NumPy 1 (and so the official files) wrote
            data = data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)], "num_cases_per_batch": n}, f, protocol=2)
    return folder, batches


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL, "numpy1"])
def test_cifar10_reads_pickled_batches(tmp_path, protocol):
    folder, batches = _cifar_folder(str(tmp_path), protocol=protocol)
    train = CIFAR10(str(tmp_path), train=True, transform=T.ToTensor())
    assert len(train) == 15 and train.data.shape == (15, 32, 32, 3) and train.classes[3] == "class3"
    first = batches["data_batch_1"]
    np.testing.assert_array_equal(train.data[0], first["data"][0].reshape(3, 32, 32).transpose(1, 2, 0))
    x, y = train[0]
    assert x.shape == (3, 32, 32) and y == first["labels"][0]
    np.testing.assert_allclose(x.numpy(), first["data"][0].reshape(3, 32, 32) / 255, rtol=1e-6)
    test = CIFAR10(folder, train=False)  # the batches folder itself also works
    assert test.targets == batches["test_batch"]["labels"]


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("payload", ["os.system", "builtins.eval"])
def test_cifar_unpickler_refuses_code(tmp_path, payload):
    folder, _ = _cifar_folder(str(tmp_path))
    marker = tmp_path / "pwned"
    evil = _Evil(marker) if payload == "os.system" else _EvalEvil(marker)
    with open(os.path.join(folder, "data_batch_1"), "wb") as f:
        pickle.dump({"data": evil, "labels": []}, f, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load global") as info:
        CIFAR10(str(tmp_path))
    assert "data_batch_1" in str(info.value)
    assert not marker.exists()


class _EvalEvil(_Evil):
    def __reduce__(self):
        return eval, (f"open({str(self.marker)!r}, 'w')",)


def test_cifar_rejects_malformed_batches(tmp_path):
    folder, _ = _cifar_folder(str(tmp_path))
    with open(os.path.join(folder, "data_batch_2"), "wb") as f:
        pickle.dump({"data": np.zeros((2, 3072), np.float32), "labels": [0, 1]}, f)
    with pytest.raises(ValueError, match="data_batch_2: 'data' should be a uint8 array"):
        CIFAR10(str(tmp_path))
    with open(os.path.join(folder, "data_batch_2"), "wb") as f:
        f.write(b"\x80\x02}q\x00")  # truncated
    with pytest.raises(ValueError, match="not a readable CIFAR batch"):
        CIFAR10(str(tmp_path))
    os.remove(os.path.join(folder, "batches.meta"))
    with pytest.raises(RuntimeError, match="Dataset not found"):
        CIFAR10(str(tmp_path))


def test_cifar_download_extracts_safely(tmp_path, monkeypatch):
    src = tmp_path / "src"
    _cifar_folder(str(src))
    archive = tmp_path / "cifar.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    monkeypatch.setattr(CIFAR10, "url", archive.as_uri())
    monkeypatch.setattr(CIFAR10, "tgz_md5", hashlib.md5(archive.read_bytes()).hexdigest())
    ds = CIFAR10(str(tmp_path / "data"), download=True)
    assert len(ds) == 15
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        info = tarfile.TarInfo("../escaped")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    monkeypatch.setattr(CIFAR10, "url", evil.as_uri())
    monkeypatch.setattr(CIFAR10, "tgz_md5", hashlib.md5(evil.read_bytes()).hexdigest())
    with pytest.raises(RuntimeError, match="refusing to extract"):
        CIFAR10(str(tmp_path / "other"), download=True)
    assert not (tmp_path / "escaped").exists()


# -- text --------------------------------------------------------------------------------------------------------
def test_char_dataset():
    ds = CharDataset("hello world", block_size=4)
    assert ds.vocab_size == 8 and ds.itos[0] == " " and ds.stoi["w"] == 7
    assert len(ds) == 7
    x, y = ds[1]
    assert x.dtype == y.dtype == ember.int64 and ds.decode(x) == "ello" and ds.decode(y) == "llo "
    assert ds.decode(ds[-1][1]) == "orld"
    with pytest.raises(IndexError):
        ds[7]
    shared = CharDataset("lol", 1, vocab=ds.itos.values())
    assert shared.stoi == ds.stoi
    with pytest.raises(ValueError, match="outside the vocabulary: 'z'"):
        CharDataset("zz", 1, vocab="ab")
    with pytest.raises(ValueError, match="block_size"):
        CharDataset("abc", 0)
    with pytest.raises(ValueError, match="need more than block_size=3 tokens"):
        CharDataset("abc", 3)


def test_token_dataset_batches():
    ds = TokenDataset(np.arange(20, dtype=np.uint16), block_size=5)
    xb, yb = next(iter(DataLoader(ds, batch_size=4)))
    assert xb.shape == yb.shape == (4, 5) and xb.dtype == ember.int64
    assert (yb[:, :-1] == xb[:, 1:]).all()


@needs_text
def test_tiny_shakespeare(tmp_path):
    train, val = TinyShakespeare(SHARED, block_size=32), TinyShakespeare(SHARED, block_size=32, train=False)
    assert train.vocab_size == val.vocab_size == 65 and train.stoi == val.stoi
    assert len(train) == int(1115394 * 0.9) - 32 and len(val) == 1115394 - int(1115394 * 0.9) - 32
    assert train.decode(train[0][0]).startswith("First Citizen")
    assert train.decode(train.encode("To be, or not")) == "To be, or not"
    with pytest.raises(RuntimeError, match="input.txt"):
        TinyShakespeare(str(tmp_path), 8)
