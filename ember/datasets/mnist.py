"""MNIST and Fashion-MNIST, as torchvision's: 28x28 grayscale digits / clothes and their labels, read from IDX files."""
import gzip
import os
import zlib

import numpy as np

from ..utils.data import Dataset
from . import _download

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"),
              0x0E: np.dtype(">f8")}
_CHUNK = 1 << 20


def _read_at_most(f, limit):
    """Reads until EOF or until more than ``limit`` bytes are read (a malformed header cannot make this allocate
    more than the data that is really there)."""
    parts, n = [], 0
    while n <= limit:
        chunk = f.read(min(_CHUNK, limit + 1 - n))
        if not chunk:
            break
        parts.append(chunk)
        n += len(chunk)
    return bytearray().join(parts)  # writable, so tensors can wrap it


def read_idx(path, expected_ndim=None):
    """Reads an IDX file (optionally gzip-compressed) into a NumPy array; raises ValueError naming the file and what
    is wrong for a bad magic number, type code, dimension count, or a size that disagrees with the header."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            head = f.read(4)
            if len(head) < 4 or head[0] != 0 or head[1] != 0:
                raise ValueError(f"{path}: not an IDX file (bad magic number {head.hex() or 'empty'}; expected "
                                 "00 00 <type> <ndim>)")
            code, ndim = head[2], head[3]
            if code not in _IDX_TYPES:
                raise ValueError(f"{path}: unknown IDX data type code 0x{code:02x}")
            if expected_ndim is not None and ndim != expected_ndim:
                raise ValueError(f"{path}: IDX file has {ndim} dimensions, expected {expected_ndim}")
            dims_raw = f.read(4 * ndim)
            if len(dims_raw) < 4 * ndim:
                raise ValueError(f"{path}: truncated IDX header ({ndim} dimensions announced)")
            dims = tuple(int(d) for d in np.frombuffer(dims_raw, ">u4"))
            dtype = np.dtype(_IDX_TYPES[code])
            expected = int(np.prod(dims, dtype=object)) * dtype.itemsize
            body = _read_at_most(f, expected)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"{path}: cannot read the file ({e})") from e
    if len(body) < expected:
        raise ValueError(f"{path}: header announces shape {dims} ({expected} data bytes) but the file holds only "
                         f"{len(body)} data bytes (truncated?)")
    if len(body) > expected:
        raise ValueError(f"{path}: header announces shape {dims} ({expected} data bytes) but the file holds more "
                         "data than that")
    return np.frombuffer(body, dtype).reshape(dims).astype(dtype.newbyteorder("="), copy=False)


class MNIST(Dataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images of 28x28, with labels 0-9.

    Files are looked up in ``root/MNIST/raw/`` (torchvision's layout) and in ``root`` itself, each either plain or
    gzip-compressed: ``MNIST('data/mnist')`` works for a folder holding the four official files.

    Args:
        root (str): the folder described above
        train (bool): the training set, else the test set. Default: True
        transform (callable, optional): applied to the image (a ``(28, 28)`` uint8 tensor)
        target_transform (callable, optional): applied to the label (an int)
        download (bool): download the files into ``root/MNIST/raw/`` if they are not found. Default: False

    Attributes:
        data (Tensor): uint8 images, ``(N, 28, 28)``
        targets (Tensor): int64 labels, ``(N,)``
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        from .. import from_numpy
        self.root = os.path.expanduser(str(root))
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download and self._find() is None:
            self.download()
        files = self._find()
        if files is None:
            names = [name for name, _ in self.resources]
            raise RuntimeError(f"Dataset not found. You can use download=True to download it, or put "
                               f"{', '.join(names)} (optionally without .gz) in {self.raw_folder} or in {self.root}")
        images, labels = read_idx(files[0], 3), read_idx(files[1], 1)
        for path, arr in zip(files, (images, labels)):
            if arr.dtype != np.uint8:
                raise ValueError(f"{path}: expected uint8 data, found {arr.dtype}")
        if len(images) != len(labels):
            raise ValueError(f"{files[0]} holds {len(images)} images but {files[1]} holds {len(labels)} labels")
        self.data = from_numpy(images)
        self.targets = from_numpy(labels.astype(np.int64))

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _split_files(self):
        prefix = "train" if self.train else "t10k"
        return [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]

    def _find(self):
        """The (images, labels) paths of this split, from the first folder that has both; None if none has."""
        for folder in (self.raw_folder, self.root):
            found = []
            for base in self._split_files():
                for name in (base, base + ".gz"):
                    if os.path.isfile(os.path.join(folder, name)):
                        found.append(os.path.join(folder, name))
                        break
            if len(found) == 2:
                return found
        return None

    def download(self):
        """Downloads the four ``.gz`` files into ``raw_folder``, checking their md5."""
        for filename, md5 in self.resources:
            try:
                _download.download_from_mirrors(self.mirrors, filename, self.raw_folder, md5)
            except RuntimeError as e:
                raise _download.missing_files_error(type(self).__name__, self.raw_folder,
                                                    [n for n, _ in self.resources], self.mirrors) from e

    def __getitem__(self, index):
        from .. import from_numpy
        img, target = from_numpy(self.data.numpy()[index]), int(self.targets.numpy()[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    {self.extra_repr()}"]
        if self.transform is not None:
            lines.append("    Transform: " + repr(self.transform).replace("\n", "\n    "))
        return "\n".join(lines)


class FashionMNIST(MNIST):
    """Fashion-MNIST: Zalando's 28x28 grayscale clothing images in 10 classes, in MNIST's format and layout
    (``root/FashionMNIST/raw/`` or ``root`` itself). Arguments as :class:`MNIST`."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
