"""``ember.hub``: downloading and caching checkpoints by URL, as ``torch.hub``.

The cache is torch's (``$TORCH_HOME/hub``, by default ``~/.cache/torch/hub``), so checkpoints that torch downloaded
are found without downloading again; :func:`ember.load` reads torch's files. Loading models from GitHub repositories
(``hub.load``, ``hub.list``, ``hub.help``) is not supported: a repository's ``hubconf.py`` builds torch modules.
"""
import contextlib
import hashlib
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # the "bfd8deac" of "resnet18-bfd8deac.pth"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def get_dir():
    """The hub's cache directory: the one given to :func:`set_dir`, else ``$TORCH_HOME/hub`` (``TORCH_HOME`` defaults
    to ``$XDG_CACHE_HOME/torch``, ``XDG_CACHE_HOME`` to ``~/.cache``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Sets the hub's cache directory (a path; ``~`` is expanded)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` to the path ``dst``: into a temporary file beside it, renamed to ``dst`` once complete, so
    that a failed download never leaves a partial ``dst``.

    Args:
        url (str): the URL to download
        dst (str): the path of the file to write
        hash_prefix (str, optional): if given, the SHA256 of the download must start with it
        progress (bool): show a progress bar on stderr (when tqdm is installed)

    Example::

        >>> ember.hub.download_url_to_file("https://example.com/model.pth", "/tmp/model.pth")  # doctest: +SKIP
    """
    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with open(tmp, "xb") as f, urlopen(Request(url, headers={"User-Agent": "ember.hub"})) as u, \
                _progress_bar(u.info().get("Content-Length"), progress) as bar:
            while buffer := u.read(READ_DATA_CHUNK):
                f.write(buffer)
                if sha256 is not None:
                    sha256.update(buffer)
                if bar is not None:
                    bar.update(len(buffer))
        if sha256 is not None and not sha256.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{sha256.hexdigest()}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _progress_bar(length, progress):
    """A tqdm bar over ``length`` bytes (the Content-Length header, or None), or a context giving None without
    ``progress`` or tqdm."""
    if progress:
        try:
            from tqdm import tqdm
            return tqdm(total=int(length) if length else None, unit="B", unit_scale=True, unit_divisor=1024)
        except ImportError:
            pass
    return contextlib.nullcontext()


def _legacy_zip_member(filename, model_dir):
    """The extracted path of the one file of a zip made by hand around a checkpoint (torch's legacy hub format),
    or None for any other file (torch's own zip checkpoints hold several entries)."""
    if not zipfile.is_zipfile(filename):
        return None
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
        if len(members) != 1 or members[0].is_dir():
            return None
        root = os.path.realpath(model_dir)
        target = os.path.realpath(os.path.join(root, members[0].filename))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"Zip member {members[0].filename!r} would be extracted outside {model_dir}")
        return zf.extract(members[0], root)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """Loads the object saved at ``url`` (a checkpoint written by ``torch.save`` or :func:`ember.save`), downloading it
    into ``model_dir`` (default ``<hub dir>/checkpoints``, see :func:`get_dir`) unless it is already there.

    Args:
        url (str): the URL of the object
        model_dir (str, optional): the directory to save it in
        map_location (optional): where to put the tensors, as :func:`ember.load`
        progress (bool): show a progress bar while downloading
        check_hash (bool): the file name must be ``name-<sha256 prefix>.ext``, and the download's SHA256 must start
            with that prefix
        file_name (str, optional): the name of the saved file (by default the URL's)
        weights_only (bool): accepted for torch compatibility; :func:`ember.load` never unpickles arbitrary objects

    Example::

        >>> state_dict = ember.hub.load_state_dict_from_url(
        ...     "https://download.pytorch.org/models/resnet18-f37072fd.pth")  # doctest: +SKIP
    """
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress=progress)
    extracted = _legacy_zip_member(cached_file, model_dir)
    return _load(extracted or cached_file, map_location=map_location, weights_only=weights_only)


def _unsupported(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"ember.hub.{name} is not supported: it runs a GitHub repository's hubconf.py, "
                                  "which builds torch modules. Download the weights with "
                                  "ember.hub.load_state_dict_from_url and load them into an ember model.")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Not supported: ``torch.hub.{name}`` needs a GitHub repository's ``hubconf.py``."
    return fn


load, list, help = _unsupported("load"), _unsupported("list"), _unsupported("help")
