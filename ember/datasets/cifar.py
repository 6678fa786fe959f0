"""CIFAR-10 and CIFAR-100, as torchvision's: 32x32 colour images from the "python version" pickled batches.

The batches are pickles; they are read with an unpickler that only rebuilds plain containers and NumPy arrays, so a
tampered file cannot run code.
"""
import os
import pickle

import numpy as np

from .._torch_pickle import UnpicklingError
from ..utils.data import Dataset
from . import _download

# The only globals a CIFAR batch needs: NumPy's array and dtype reconstruction, and the bytes constructor that
# protocol-2 pickles written by Python 3 use (``_codecs.encode(str, 'latin1')``: codecs only transform data).
_ALLOWED = {(core, name) for core in ("numpy.core.multiarray", "numpy._core.multiarray")
            for name in ("_reconstruct", "scalar")}
_ALLOWED |= {("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"), ("numpy", "ndarray"),
             ("numpy", "dtype"), ("_codecs", "encode")}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise UnpicklingError(f"{getattr(self, 'path', 'pickle')}: refusing to load global '{module}.{name}' "
                                     "(only NumPy arrays and plain containers are allowed in a dataset batch)")


def load_batch(path):
    """Unpickles one CIFAR batch file with the restricted unpickler (latin1 strings, as the files were written by
    Python 2). Raises :class:`UnpicklingError` (a ``pickle.UnpicklingError`` and a ValueError) for a file that
    references anything else, ValueError for a file that is not a CIFAR batch."""
    with open(path, "rb") as f:
        u = _RestrictedUnpickler(f, encoding="latin1")
        u.path = path
        try:
            entry = u.load()
        except UnpicklingError:
            raise
        except Exception as e:  # truncated or garbage data
            raise ValueError(f"{path}: not a readable CIFAR batch ({type(e).__name__}: {e})") from e
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: expected a pickled dict, found {type(entry).__name__}")
    return entry


class CIFAR10(Dataset):
    """CIFAR-10: 50,000 training and 10,000 test 32x32 RGB images in 10 classes.

    Files are looked up in ``root/cifar-10-batches-py/`` (torchvision's layout) and in ``root`` itself.

    Args:
        root (str): the folder described above
        train (bool): the training set, else the test set. Default: True
        transform (callable, optional): applied to the image (a ``(32, 32, 3)`` HWC uint8 NumPy array, as
            torchvision's PIL image; ``transforms.ToTensor`` makes it a CHW float tensor)
        target_transform (callable, optional): applied to the label (an int)
        download (bool): download and extract the archive into ``root`` if the files are not found. Default: False

    Attributes:
        data (ndarray): uint8 images, ``(N, 32, 32, 3)``
        targets (list): int labels
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [["data_batch_1", "c99cafc152244af753f735de768cd75f"],
                  ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
                  ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
                  ["data_batch_4", "634d18415352ddfa80567beed471001a"],
                  ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"]]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}
    label_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(str(root))
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download and self._folder() is None:
            self.download()
        folder = self._folder()
        if folder is None:
            raise RuntimeError(f"Dataset not found or corrupted. You can use download=True to download it, or put "
                               f"the files of {self.filename} ({', '.join(self._needed())}) in "
                               f"{os.path.join(self.root, self.base_folder)}")
        images, self.targets = [], []
        for name, _ in (self.train_list if train else self.test_list):
            path = os.path.join(folder, name)
            entry = load_batch(path)
            data, labels = entry.get("data"), entry.get(self.label_key)
            if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2 \
                    or data.shape[1] != 3072:
                raise ValueError(f"{path}: 'data' should be a uint8 array of shape (N, 3072), found "
                                 f"{getattr(data, 'dtype', type(data).__name__)} {getattr(data, 'shape', '')}")
            if not isinstance(labels, list) or len(labels) != len(data) \
                    or not all(type(v) is int for v in labels):
                raise ValueError(f"{path}: '{self.label_key}' should be a list of {len(data)} ints")
            images.append(data)
            self.targets.extend(labels)
        self.data = np.vstack(images).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()  # HWC, as torchvision
        self._load_meta(folder)

    def _needed(self):
        return [n for n, _ in self.train_list + self.test_list] + [self.meta["filename"]]

    def _folder(self):
        for folder in (os.path.join(self.root, self.base_folder), self.root):
            if all(os.path.isfile(os.path.join(folder, n)) for n in self._needed()):
                return folder
        return None

    def _load_meta(self, folder):
        path = os.path.join(folder, self.meta["filename"])
        classes = load_batch(path).get(self.meta["key"])
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise ValueError(f"{path}: '{self.meta['key']}' should be a list of class names")
        self.classes = classes
        self.class_to_idx = {c: i for i, c in enumerate(classes)}

    def download(self):
        """Downloads the archive (md5-checked) into ``root`` and extracts it."""
        try:
            path = _download.download_url(self.url, self.root, self.filename, self.tgz_md5)
        except RuntimeError as e:
            raise _download.missing_files_error(type(self).__name__, os.path.join(self.root, self.base_folder),
                                                self._needed(), [self.url]) from e
        _download.extract_tar(path, self.root)

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n    Root location: "
                f"{self.root}\n    Split: {'Train' if self.train else 'Test'}")


class CIFAR100(CIFAR10):
    """CIFAR-100: as :class:`CIFAR10` with 100 fine-grained classes (``root/cifar-100-python/``)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffe22ba7ce5a0b"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
    label_key = "fine_labels"
