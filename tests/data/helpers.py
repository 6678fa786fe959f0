"""Datasets for the DataLoader tests, at module level so spawned workers can import them."""
import mmap
import os
import random
import time

import numpy as np

import ember
from ember import transforms as T
from ember.utils.data import Dataset, IterableDataset, get_worker_info
from ember.utils.data import _worker


class Range(Dataset):
    def __init__(self, n, delay=0.0):
        self.n, self.delay = n, delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        return i


class Jittery(Range):
    """Later items are faster, so workers finish out of order."""

    def __getitem__(self, i):
        time.sleep(0.002 * ((self.n - i) % 5))
        return i


class Failing(Range):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"cannot load sample {i}")
        return i


class KeyFailing(Range):
    def __getitem__(self, i):
        return {"a": 1}["missing"] if i == 3 else i


class Pid(Range):
    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        return os.getpid()


class Augmented(Dataset):
    """Random augmentations from every generator a dataset might use."""

    def __init__(self, n=12):
        self.n = n
        self.images = np.arange(n * 3 * 6 * 6, dtype=np.float32).reshape(n, 3, 6, 6)
        self.transform = T.Compose([T.RandomCrop(4, padding=1), T.RandomHorizontalFlip()])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = self.transform(ember.from_numpy(self.images[i]))
        return img, random.random(), np.random.rand(), ember.rand(2)


class Threads(Range):
    def __getitem__(self, i):
        counts = _worker.blas_threads()
        return max([ember.get_num_threads(), *counts.values()]), os.environ.get("OMP_NUM_THREADS")


class NoPickle(Dataset):
    """Holds an array; pickling it (a copy per worker) is an error."""

    def __init__(self):
        self.array = np.arange(1 << 16, dtype=np.float64)

    def __getstate__(self):
        raise RuntimeError("this dataset must not be pickled")

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.array.__array_interface__["data"][0], float(self.array[i])


def _mapped(a):
    while a is not None and not isinstance(a, mmap.mmap):
        a = getattr(a, "base", None) if not isinstance(a, memoryview) else a.obj
    return a is not None


class BigArray(Dataset):
    """A large array and a large tensor, to check that non-forking workers map them from shared memory."""

    def __init__(self):
        self.array = np.arange(1 << 15, dtype=np.float32).reshape(64, -1)
        self.tensor = ember.arange(1 << 15, dtype=ember.float64).reshape(64, -1)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (_mapped(self.array), _mapped(self.tensor.numpy()), float(self.array[i].sum()),
                float(self.tensor[i].sum()))


class Shards(IterableDataset):
    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Info(Range):
    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.num_workers, info.seed, type(info.dataset).__name__, os.environ.get("WORKER_INIT")


def init_fn(worker_id):
    os.environ["WORKER_INIT"] = f"init-{worker_id}"


def unpicklable_collate(batch):
    return lambda: batch
