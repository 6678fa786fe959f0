"""Fetching and checking dataset files: md5 checks, downloads through urllib, safe archive extraction."""
import hashlib
import os

_USER_AGENT = "ember-datasets"


def calculate_md5(path, chunk_size=1 << 20):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_integrity(path, md5=None):
    """Whether ``path`` exists and (when ``md5`` is given) has that checksum."""
    if not os.path.isfile(path):
        return False
    return md5 is None or calculate_md5(path) == md5


def download_url(url, root, filename=None, md5=None, timeout=30):
    """Downloads ``url`` into ``root/filename`` unless a file with the right checksum is already there; raises
    RuntimeError when the download fails or the checksum does not match."""
    import shutil
    import urllib.error
    import urllib.request
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    path = os.path.join(root, filename)
    if check_integrity(path, md5):
        return path
    os.makedirs(root, exist_ok=True)
    tmp = path + ".part"
    try:
        req = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with urllib.request.urlopen(req, timeout=timeout) as r, open(tmp, "wb") as f:
            shutil.copyfileobj(r, f)
    except (urllib.error.URLError, OSError) as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise RuntimeError(f"downloading {url} failed: {e}") from e
    if md5 is not None and calculate_md5(tmp) != md5:
        os.remove(tmp)
        raise RuntimeError(f"downloaded {url} but its md5 does not match {md5}: the file is corrupt or has changed")
    os.replace(tmp, path)
    return path


def download_from_mirrors(mirrors, filename, root, md5):
    """Downloads ``filename`` from the first mirror that serves it; the error lists every failure."""
    errors = []
    for mirror in mirrors:
        try:
            return download_url(mirror + filename, root, filename, md5)
        except RuntimeError as e:
            errors.append(str(e))
    raise RuntimeError("\n".join(errors))


def extract_tar(path, to):
    """Extracts a tar archive into ``to``, refusing members that would land outside it or are links/devices."""
    import tarfile
    to = os.path.realpath(to)
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            target = os.path.realpath(os.path.join(to, m.name))
            if not (m.isfile() or m.isdir()) or os.path.commonpath([to, target]) != to:
                raise RuntimeError(f"refusing to extract {m.name!r} from {path}: not a plain file inside {to}")
        tar.extractall(to, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(to)


def missing_files_error(name, folder, files, mirrors):
    """The RuntimeError for a dataset that is neither on disk nor downloadable."""
    listing = "\n".join(f"  {f}" for f in files)
    return RuntimeError(f"{name} not found and could not be downloaded (from {', '.join(mirrors)}). Put these files "
                        f"in {folder} (or pass a folder that contains them as root):\n{listing}")
