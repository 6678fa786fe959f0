"""Text datasets for language modelling: fixed-length windows of token ids and their next-token targets."""
import os

import numpy as np

from ..utils.data import Dataset
from . import _download


class TokenDataset(Dataset):
    """Windows over a sequence of token ids: sample ``i`` is ``(x, y)`` with ``x = tokens[i:i + block_size]`` and
    ``y = tokens[i + 1:i + block_size + 1]``, both int64 tensors of length ``block_size``.

    Args:
        tokens (sequence of int or ndarray): the token ids
        block_size (int): the window length

    Example::

        >>> ds = TokenDataset([5, 6, 7, 8], block_size=2)
        >>> len(ds), ds[1]
        (2, (tensor([6, 7]), tensor([7, 8])))
    """

    def __init__(self, tokens, block_size):
        if not isinstance(block_size, int) or block_size <= 0:
            raise ValueError(f"block_size should be a positive integer, but got block_size={block_size}")
        self.data = np.ascontiguousarray(tokens, dtype=np.int64)
        if not self.data.flags.writeable:  # tensors wrap writable memory only
            self.data = self.data.copy()
        if self.data.ndim != 1:
            raise ValueError(f"tokens should be a 1-d sequence, but got shape {self.data.shape}")
        if len(self.data) <= block_size:
            raise ValueError(f"need more than block_size={block_size} tokens to make one (x, y) pair, got "
                             f"{len(self.data)}")
        self.block_size = block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        from .. import from_numpy
        n = len(self)
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"index {idx} is out of range for a dataset of {n} windows")
        chunk = self.data[idx:idx + self.block_size + 1]
        return from_numpy(chunk[:-1]), from_numpy(chunk[1:])


class CharDataset(TokenDataset):
    """Character-level windows of ``text``: the vocabulary is its sorted set of characters (or ``vocab``, to share
    one between splits); ``stoi``/``itos`` map characters to ids and back.

    Args:
        text (str): the corpus
        block_size (int): the window length
        vocab (iterable of str, optional): the characters, in id order (default: ``sorted(set(text))``)

    Example::

        >>> ds = CharDataset("hello", block_size=3)
        >>> ds.vocab_size, ds.decode(ds[0][1].tolist())
        (4, 'ell')
    """

    def __init__(self, text, block_size, vocab=None):
        chars = sorted(set(text)) if vocab is None else list(vocab)
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.itos = dict(enumerate(chars))
        unknown = set(text) - self.stoi.keys()
        if unknown:
            raise ValueError(f"text has characters outside the vocabulary: {''.join(sorted(unknown))!r}")
        super().__init__(self.encode(text), block_size)

    @property
    def vocab_size(self):
        return len(self.stoi)

    def encode(self, s):
        """The ids of the characters of ``s``."""
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        """The string of the ids ``ids`` (ints or an integer tensor)."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        return "".join(self.itos[int(i)] for i in ids)


class TinyShakespeare(CharDataset):
    """Tiny Shakespeare (1.1M characters, 65 distinct) as a :class:`CharDataset`: the first 90% of the text for
    training, the rest for validation, with the vocabulary of the whole text.

    ``input.txt`` is looked up in ``root/tinyshakespeare/`` and in ``root`` itself.

    Args:
        root (str): the folder described above
        block_size (int): the window length
        train (bool): the training split, else the validation split. Default: True
        split (float): the training fraction. Default: 0.9
        download (bool): download ``input.txt`` into ``root/tinyshakespeare/`` if it is not found. Default: False
    """

    url = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
    md5 = "6fb458f1232090904fb40fe944165e91"

    def __init__(self, root, block_size, train=True, split=0.9, download=False):
        root = os.path.expanduser(str(root))
        folder = os.path.join(root, "tinyshakespeare")
        path = next((p for p in (os.path.join(folder, "input.txt"), os.path.join(root, "input.txt"))
                     if os.path.isfile(p)), None)
        if path is None and download:
            try:
                path = _download.download_url(self.url, folder, "input.txt", self.md5)
            except RuntimeError as e:
                raise _download.missing_files_error("TinyShakespeare", folder, ["input.txt"], [self.url]) from e
        if path is None:
            raise RuntimeError(f"Dataset not found. You can use download=True to download it, or put input.txt in "
                               f"{folder} or in {root}")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        cut = int(len(text) * split)
        self.root, self.train = root, train
        super().__init__(text[:cut] if train else text[cut:], block_size, vocab=sorted(set(text)))
