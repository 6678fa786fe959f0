"""Checkpointer: training checkpoints that resume a run exactly, written so that a crash costs at most the one being
written.

A checkpoint is one :func:`ember.save` file, ``checkpoint_<step>.safetensors``, holding the registered objects'
``state_dict()`` (model, optimizer, LR scheduler, DataLoader, ...), the step, epoch, metrics and extra data, and the
state of every random generator a training loop draws from: ember's CPU generator (and CUDA's), NumPy's global
generator and Python's ``random``. ``ember.save`` writes a temporary file in the same folder, flushes it to disk and
renames it into place, so a checkpoint name only ever holds a complete file. There is no index file to keep
consistent: the checkpoints are the folder's files with that name, and their metrics are read back from the files'
headers. Older checkpoints are deleted only after the new one is on disk.
"""
import json
import math
import os
import random
import re
import warnings

import numpy as np
import safetensors

from .. import cuda, serialization
from .._creation import from_numpy
from .._random import get_rng_state, set_rng_state

__all__ = ["Checkpointer"]

_NAME = re.compile(r"checkpoint_(\d+)\.safetensors")
# What a killed save leaves behind: ember.save's temporary (".<name>.<pid>.<hex>.tmp") and the safetensors
# writer's own (".tmpXXXXXX"), which it fills and then renames over ember.save's.
_SAVE_TMP = re.compile(r"\.checkpoint_\d+\.safetensors\.(\d+)\.[0-9a-f]+\.tmp")
_WRITER_TMP = re.compile(r"\.tmp[0-9A-Za-z]{6}")
_KEYS = ("step", "epoch", "metrics", "extra", "state", "rng")


class Checkpointer:
    """Saves and restores everything a training run needs to continue exactly where it stopped.

    Args:
        folder (str or PathLike): where the checkpoints go (created if missing). On start, temporaries left there by
            a killed save are removed.
        keep_last (int or None): how many of the most recent checkpoints to keep; None keeps all. Default: 3
        keep_best (int): how many of the best checkpoints by ``metric`` to keep as well. Default: 0
        metric (str, optional): the key of ``save(metrics=...)`` that ranks checkpoints
        mode (str): ``'min'`` or ``'max'``, whether a lower or a higher ``metric`` is better. Default: ``'min'``
        **objects: the stateful objects to save, by name: anything with ``state_dict()`` and
            ``load_state_dict()`` (a model, an optimizer, an LR scheduler, a DataLoader, a grad scaler)

    Loading restores the objects and every random generator, and a DataLoader continues its interrupted epoch with
    the batches it had not yielded yet, so the resumed run computes what the uninterrupted one would have, bit for
    bit. :meth:`load_latest` skips a latest checkpoint that cannot be read (damaged after it was written: truncated,
    or its header overwritten; damage inside the tensor data is not detected), with a warning, renaming it to
    ``<name>.corrupt``, and loads the one before.

    Example::

        >>> ckpt = Checkpointer("run", model=model, optimizer=opt, scheduler=sched, loader=loader,
        ...                     keep_last=3, keep_best=1, metric="val_loss")  # doctest: +SKIP
        >>> state = ckpt.load_latest()  # None on a fresh start  # doctest: +SKIP
        >>> ckpt.save(step, epoch=epoch, metrics={"val_loss": val_loss})  # doctest: +SKIP
    """

    def __init__(self, folder, *, keep_last=3, keep_best=0, metric=None, mode="min", **objects):
        if keep_last is not None and (not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 1):
            raise ValueError(f"Checkpointer: keep_last should be a positive integer or None, but got {keep_last!r}")
        if not isinstance(keep_best, int) or isinstance(keep_best, bool) or keep_best < 0:
            raise ValueError(f"Checkpointer: keep_best should be a non-negative integer, but got {keep_best!r}")
        if keep_best and metric is None:
            raise ValueError("Checkpointer: keep_best needs the metric that ranks checkpoints (metric=...)")
        if mode not in ("min", "max"):
            raise ValueError(f"Checkpointer: mode should be 'min' or 'max', but got {mode!r}")
        for name, obj in objects.items():
            if not (callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None))):
                raise TypeError(f"Checkpointer: {name}={type(obj).__name__} has no state_dict()/load_state_dict()")
        self.folder = os.fspath(folder)
        self.keep_last, self.keep_best, self.metric, self.mode = keep_last, keep_best, metric, mode
        self.objects = objects
        self._metrics = {}  # file name -> its saved metrics, read once
        os.makedirs(self.folder, exist_ok=True)
        self._remove_stale_temporaries()

    # -- the folder ------------------------------------------------------------------------------------------------
    def list(self):
        """The paths of the checkpoints in the folder, oldest (lowest step) first."""
        paths = [os.path.join(self.folder, name) for name in os.listdir(self.folder) if _NAME.fullmatch(name)]
        return sorted(paths, key=_step)

    @property
    def latest_path(self):
        """The path of the checkpoint with the highest step (None if there is none)."""
        paths = self.list()
        return paths[-1] if paths else None

    @property
    def best_path(self):
        """The path of the checkpoint with the best ``metric`` (None without a metric or a checkpoint that has it);
        of equal values, the earliest."""
        ranked = self._ranked(self.list())
        return ranked[0] if ranked else None

    def _ranked(self, paths):
        """``paths`` that have a finite ``metric``, best first."""
        if self.metric is None:
            return []
        sign = 1.0 if self.mode == "min" else -1.0
        scored = []
        for i, path in enumerate(paths):
            value = self._saved_metrics(path).get(self.metric)
            if isinstance(value, (int, float)) and math.isfinite(value):
                scored.append((sign * value, i, path))
        return [path for _, _, path in sorted(scored)]

    def _saved_metrics(self, path):
        name = os.path.basename(path)
        if name not in self._metrics:
            self._metrics[name] = _read_metrics(path)
        return self._metrics[name]

    def _remove_stale_temporaries(self):
        names = os.listdir(self.folder)
        saving = False
        for name in names:
            m = _SAVE_TMP.fullmatch(name)
            if m is None:
                continue
            if _alive(int(m.group(1))):
                saving = True
            else:
                _remove(os.path.join(self.folder, name))
        if not saving:  # the writer's temporaries cannot be told apart by process: only while no save runs
            for name in names:
                if _WRITER_TMP.fullmatch(name):
                    _remove(os.path.join(self.folder, name))

    # -- saving ----------------------------------------------------------------------------------------------------
    def save(self, step, *, epoch=None, metrics=None, extra=None):
        """Writes the checkpoint of ``step``, then deletes those no longer kept; returns its path.

        Args:
            step (int): the training step (non-negative, not below the latest saved one); names the file
            epoch (int, optional): the epoch, given back by the loads as saved
            metrics (dict, optional): numbers by name; ``metric`` among them ranks the checkpoint for ``keep_best``
            extra (optional): anything else :func:`ember.save` stores (numbers, strings, tensors, containers of them)
        """
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"Checkpointer.save: step should be a non-negative integer, but got {step!r}")
        paths = self.list()
        if paths and step < _step(paths[-1]):
            raise ValueError(f"Checkpointer.save: step {step} is below that of the latest checkpoint, {paths[-1]}; "
                             "steps must not go back (delete the later checkpoints to branch off an earlier one)")
        values = {}
        for key, value in (metrics or {}).items():
            try:
                values[str(key)] = float(value)
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(f"Checkpointer.save: metrics[{key!r}] should be a number, but got "
                                f"{type(value).__name__}") from None
        checkpoint = {"step": step, "epoch": epoch, "metrics": values, "extra": extra,
                      "state": {name: obj.state_dict() for name, obj in self.objects.items()},
                      "rng": _rng_states()}
        path = os.path.join(self.folder, f"checkpoint_{step:08d}.safetensors")
        serialization.save(checkpoint, path)  # durable once this returns: only now may older ones go
        self._metrics[os.path.basename(path)] = values
        self._prune(path)
        return path

    def _prune(self, new):
        paths = self.list()
        keep = {new}
        keep.update(paths if self.keep_last is None else paths[-self.keep_last:])
        keep.update(self._ranked(paths)[:self.keep_best])
        for path in paths:
            if path not in keep:
                _remove(path)
                self._metrics.pop(os.path.basename(path), None)

    # -- loading ---------------------------------------------------------------------------------------------------
    def load(self, path, map_location=None):
        """Restores the registered objects and every random generator from the checkpoint at ``path``.

        Returns:
            dict: ``step``, ``epoch``, ``metrics``, ``extra`` as saved, and ``path``

        Raises:
            ValueError: the file is not a readable checkpoint
            RuntimeError: it holds no state for one of the registered objects
        """
        return self._restore(serialization.load(path, map_location=map_location), os.fspath(path))

    def load_latest(self, map_location=None):
        """Restores the latest readable checkpoint as :meth:`load` does, and returns what that returns; None when the
        folder has no checkpoint. Later ones that cannot be read are renamed to ``<name>.corrupt``, with a warning.

        Raises:
            ValueError: there are checkpoints, but none can be read (they are left as they are)
        """
        damaged = []
        for path in reversed(self.list()):
            try:
                checkpoint = serialization.load(path, map_location=map_location)
            except ValueError as e:
                damaged.append((path, e))
                continue
            for bad, e in damaged:
                _remove(bad + ".corrupt")
                os.replace(bad, bad + ".corrupt")
                self._metrics.pop(os.path.basename(bad), None)
                warnings.warn(f"Checkpointer: skipping {bad}, which cannot be read ({e}); renamed it to "
                              f"{os.path.basename(bad)}.corrupt and loading {os.path.basename(path)}", stacklevel=2)
            return self._restore(checkpoint, path)
        if damaged:
            raise ValueError(f"Checkpointer.load_latest: no readable checkpoint in {self.folder}: "
                             + "; ".join(str(e) for _, e in damaged))
        return None

    def _restore(self, checkpoint, path):
        if not isinstance(checkpoint, dict) or set(checkpoint) != set(_KEYS):
            raise ValueError(f"Checkpointer.load: {path} is not a Checkpointer checkpoint (expected the keys "
                             f"{list(_KEYS)})")
        state = checkpoint["state"]
        missing = [name for name in self.objects if name not in state]
        if missing:
            raise RuntimeError(f"Checkpointer.load: {path} holds no state for {missing} (it holds {list(state)})")
        for name, obj in self.objects.items():
            obj.load_state_dict(state[name])
        _set_rng_states(checkpoint["rng"], path)
        return {"step": checkpoint["step"], "epoch": checkpoint["epoch"], "metrics": checkpoint["metrics"],
                "extra": checkpoint["extra"], "path": path}


def _rng_states():
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    version, words, gauss_next = random.getstate()
    return {"ember": get_rng_state(), "cuda": cuda.get_rng_state_all() if cuda.is_available() else [],
            "numpy": {"keys": from_numpy(keys.astype(np.int64)), "pos": int(pos), "has_gauss": int(has_gauss),
                      "cached_gaussian": float(gauss)},
            "python": {"version": version, "state": from_numpy(np.array(words, dtype=np.int64)),
                       "gauss_next": gauss_next}}


def _set_rng_states(rng, path):
    set_rng_state(rng["ember"])
    if rng["cuda"]:
        if cuda.is_available():
            for i, state in enumerate(rng["cuda"][:cuda.device_count()]):
                cuda.set_rng_state(state, i)
        else:
            warnings.warn(f"Checkpointer.load: {path} holds CUDA generator states, which are not restored without "
                          "CUDA", stacklevel=3)
    npy = rng["numpy"]
    np.random.set_state(("MT19937", npy["keys"].cpu().numpy().astype(np.uint32), npy["pos"], npy["has_gauss"],
                         npy["cached_gaussian"]))
    py = rng["python"]
    random.setstate((py["version"], tuple(py["state"].cpu().tolist()), py["gauss_next"]))


def _step(path):
    return int(_NAME.fullmatch(os.path.basename(path)).group(1))


def _read_metrics(path):
    """The metrics saved in checkpoint ``path``, read from its header alone ({} if it cannot be read)."""
    try:
        with safetensors.safe_open(path, framework="numpy") as f:
            structure = json.loads((f.metadata() or {})[serialization._STRUCTURE_KEY])
        node = dict((k, v) for k, v in structure["dict"] if isinstance(k, str))["metrics"]
        metrics = serialization._decode(node, {}, None, {})
    except (OSError, ValueError, KeyError, TypeError, safetensors.SafetensorError):
        return {}
    return metrics if isinstance(metrics, dict) else {}


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
