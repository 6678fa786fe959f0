"""Checkpointer: what it saves and restores, which checkpoints it keeps, damaged files, and saves killed mid-write."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.utils import Checkpointer
from ember.utils.data import DataLoader, TensorDataset


class Counter:
    """A minimal stateful object (as a grad scaler would be): its state is ``value``."""

    def __init__(self, value=0):
        self.value = value

    def state_dict(self):
        return {"value": self.value}

    def load_state_dict(self, state):
        self.value = state["value"]


def _steps(ckpt):
    return [int(os.path.basename(p)[len("checkpoint_"):-len(".safetensors")]) for p in ckpt.list()]


def _save_all(ckpt, values):
    for step, v in enumerate(values, 1):
        ckpt.save(step, metrics={"val_loss": v})


def test_empty_folder(tmp_path):
    ckpt = Checkpointer(tmp_path / "new", keep_best=1, metric="val_loss", counter=Counter())
    assert os.path.isdir(tmp_path / "new")
    assert ckpt.load_latest() is None and ckpt.list() == []
    assert ckpt.latest_path is None and ckpt.best_path is None


def test_keep_last(tmp_path):
    ckpt = Checkpointer(tmp_path, keep_last=2, counter=Counter())
    for step in (1, 2, 5, 9):
        ckpt.save(step)
    assert _steps(ckpt) == [5, 9] and ckpt.latest_path.endswith("checkpoint_00000009.safetensors")
    assert ckpt.best_path is None
    keep_all = Checkpointer(tmp_path, keep_last=None, counter=Counter())
    for step in (10, 11, 12):
        keep_all.save(step)
    assert _steps(keep_all) == [5, 9, 10, 11, 12]


@pytest.mark.parametrize("mode, best", [("min", [4, 7]), ("max", [6, 5])])
def test_keep_best(tmp_path, mode, best):
    ckpt = Checkpointer(tmp_path, keep_last=2, keep_best=2, metric="val_loss", mode=mode, counter=Counter())
    _save_all(ckpt, [5.0, 3.0, float("nan"), 1.0, 6.0, 7.0, 2.0, 2.5])
    # the last two (7, 8) and the best two, which may be among them
    assert _steps(ckpt) == sorted(set(best) | {7, 8})
    assert ckpt.best_path.endswith(f"checkpoint_{best[0]:08d}.safetensors")
    # a new Checkpointer reads the metrics back from the files and keeps pruning by them
    again = Checkpointer(tmp_path, keep_last=1, keep_best=1, metric="val_loss", mode=mode, counter=Counter())
    assert again.best_path == ckpt.best_path
    again.save(9, metrics={"val_loss": 4.0})
    assert _steps(again) == [best[0], 9]


def test_best_ignores_checkpoints_without_the_metric_and_nan(tmp_path):
    ckpt = Checkpointer(tmp_path, keep_last=1, keep_best=1, metric="acc", mode="max", counter=Counter())
    ckpt.save(1, metrics={"acc": float("nan")})
    ckpt.save(2, metrics={"loss": 0.5})
    assert ckpt.best_path is None and _steps(ckpt) == [2]
    ckpt.save(3, metrics={"acc": ember.tensor(0.25)})  # a 0-d tensor is a number
    ckpt.save(4, metrics={"acc": 0.125})
    assert _steps(ckpt) == [3, 4] and ckpt.best_path.endswith("checkpoint_00000003.safetensors")


def test_saves_and_restores_objects_and_every_generator(tmp_path):
    def build(seed):
        ember.manual_seed(seed)
        model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
        opt = ember.optim.AdamW(model.parameters(), lr=0.1)
        sched = ember.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        data = ember.from_numpy(np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32))
        loader = DataLoader(TensorDataset(data), batch_size=3, shuffle=True)
        return model, opt, sched, loader

    model, opt, sched, loader = build(0)
    it = iter(loader)
    for _ in range(3):
        (x,) = next(it)
        model(x).square().mean().backward()
        opt.step()
        sched.step()
    ckpt = Checkpointer(tmp_path, model=model, optimizer=opt, scheduler=sched, loader=loader, scaler=Counter(7))
    random.seed(11)
    np.random.seed(12)
    np.random.normal()  # NumPy's cached second gaussian is part of its state
    path = ckpt.save(3, epoch=1, metrics={"val_loss": 0.5}, extra={"note": "hi", "t": ember.arange(3)})
    draws = ember.rand(4).tolist(), np.random.normal(size=3).tolist(), random.random(), random.gauss(0, 1)
    rest = [b[0].tolist() for b in it]

    model2, opt2, sched2, loader2 = build(99)
    scaler = Counter()
    random.seed(0)
    np.random.seed(0)
    state = Checkpointer(tmp_path, model=model2, optimizer=opt2, scheduler=sched2, loader=loader2,
                         scaler=scaler).load_latest()
    assert state["step"] == 3 and state["epoch"] == 1 and state["metrics"] == {"val_loss": 0.5}
    assert state["extra"]["note"] == "hi" and state["extra"]["t"].tolist() == [0, 1, 2] and state["path"] == path
    assert (ember.rand(4).tolist(), np.random.normal(size=3).tolist(), random.random(), random.gauss(0, 1)) == draws
    assert [b[0].tolist() for b in loader2] == rest
    assert scaler.value == 7 and sched2.state_dict() == sched.state_dict()
    for a, b in zip(model.parameters(), model2.parameters()):
        assert a.tolist() == b.tolist()
    for a, b in zip(opt.state.values(), opt2.state.values()):
        assert a["exp_avg"].tolist() == b["exp_avg"].tolist() and a["exp_avg_sq"].tolist() == b["exp_avg_sq"].tolist()


def test_model_state_loads_into_torch(tmp_path):
    model = nn.Linear(3, 2)
    path = Checkpointer(tmp_path, model=model).save(0)
    theirs = torch.nn.Linear(3, 2)
    theirs.load_state_dict({k: torch.tensor(v.tolist()) for k, v in ember.load(path)["state"]["model"].items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(model(ember.from_numpy(x)).tolist(), theirs(torch.from_numpy(x)).tolist(), rtol=1e-6)


def test_damaged_latest_falls_back_to_the_previous_one(tmp_path):
    counter = Counter()
    ckpt = Checkpointer(tmp_path, keep_last=3, counter=counter)
    for step in (1, 2, 3):
        counter.value = step
        ckpt.save(step)
    latest = ckpt.latest_path
    with open(latest, "r+b") as f:  # truncated, as by a failing disk
        f.truncate(os.path.getsize(latest) // 2)
    with pytest.warns(UserWarning, match="checkpoint_00000003.safetensors, which cannot be read"):
        state = ckpt.load_latest()
    assert state["step"] == 2 and counter.value == 2
    assert os.path.exists(latest + ".corrupt") and _steps(ckpt) == [1, 2]
    ckpt.save(3)  # the run goes on from step 2
    assert _steps(ckpt) == [1, 2, 3]
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        ckpt.load(latest + ".corrupt")


def test_no_readable_checkpoint_is_an_error_and_renames_nothing(tmp_path):
    ckpt = Checkpointer(tmp_path, counter=Counter())
    for step in (1, 2):
        with open(ckpt.save(step), "r+b") as f:
            f.write(b"\xff" * 16)  # a damaged header
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"no readable checkpoint.*checkpoint_00000002.safetensors"):
            ckpt.load_latest()
    assert _steps(ckpt) == [1, 2]


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="keep_last should be a positive integer or None"):
        Checkpointer(tmp_path, keep_last=0)
    with pytest.raises(ValueError, match="keep_best needs the metric"):
        Checkpointer(tmp_path, keep_best=1)
    with pytest.raises(ValueError, match="mode should be 'min' or 'max'"):
        Checkpointer(tmp_path, mode="best")
    with pytest.raises(TypeError, match="data=list has no state_dict"):
        Checkpointer(tmp_path, data=[1, 2])
    ckpt = Checkpointer(tmp_path, counter=Counter())
    ckpt.save(5)
    with pytest.raises(ValueError, match="step 4 is below that of the latest checkpoint"):
        ckpt.save(4)
    with pytest.raises(ValueError, match="step should be a non-negative integer"):
        ckpt.save(-1)
    with pytest.raises(TypeError, match=r"metrics\['loss'\] should be a number, but got str"):
        ckpt.save(6, metrics={"loss": "low"})
    with pytest.raises(RuntimeError, match=r"holds no state for \['scaler'\] \(it holds \['counter'\]\)"):
        Checkpointer(tmp_path, counter=Counter(), scaler=Counter()).load_latest()
    other = tmp_path / "other.safetensors"
    ember.save({"weights": ember.ones(2)}, other)
    with pytest.raises(ValueError, match="is not a Checkpointer checkpoint"):
        ckpt.load(other)


def test_stale_temporaries_are_ignored_and_removed(tmp_path):
    ckpt = Checkpointer(tmp_path, counter=Counter())
    ckpt.save(1)
    dead = 2 ** 22 + 17  # above Linux's largest pid
    stale = [f".checkpoint_00000002.safetensors.{dead}.0badc0de.tmp", ".tmpAb12Cd"]
    for name in stale:
        (tmp_path / name).write_bytes(b"partial")
    assert _steps(ckpt) == [1]
    Checkpointer(tmp_path, counter=Counter())
    assert sorted(os.listdir(tmp_path)) == ["checkpoint_00000001.safetensors"]
    # a save in progress in a live process: neither its temporary nor the writer's is touched
    live = [f".checkpoint_00000002.safetensors.{os.getpid()}.0badc0de.tmp", ".tmpAb12Cd"]
    for name in live:
        (tmp_path / name).write_bytes(b"partial")
    Checkpointer(tmp_path, counter=Counter())
    assert sorted(os.listdir(tmp_path)) == sorted(live) + ["checkpoint_00000001.safetensors"]


WRITER = """
import sys
import ember
from ember.utils import Checkpointer

class Blob:
    # 20 MB in ten tensors, every element equal to the step
    def __init__(self):
        self.tensors = {f"w{i}": ember.zeros(500, 1000) for i in range(10)}

    def state_dict(self):
        return self.tensors

    def load_state_dict(self, state):
        self.tensors = state

blob = Blob()
ckpt = Checkpointer(sys.argv[1], keep_last=2, blob=blob)
state = ckpt.load_latest()
step = 0 if state is None else state["step"]
print(step, flush=True)
while True:
    step += 1
    for t in blob.tensors.values():
        t.fill_(step)
    ckpt.save(step, extra={"step": step})
"""


class Holder:
    """Holds whatever state it is given."""

    state = None

    def state_dict(self):
        return self.state

    def load_state_dict(self, state):
        self.state = state


def _saving(folder):
    return any(name.endswith(".tmp") or name.startswith(".tmp") for name in os.listdir(folder))


def test_killed_mid_save_leaves_the_previous_checkpoint_loadable(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER))
    folder = tmp_path / "ckpt"
    rng = random.Random(0)
    last, mid_write = 0, 0
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, str(script), str(folder)], stdout=subprocess.PIPE)
        resumed_from = int(proc.stdout.readline())
        assert resumed_from == last  # each run resumes from the latest checkpoint its predecessor completed
        while not any(n.startswith("checkpoint_") for n in os.listdir(folder)) and proc.poll() is None:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.2))
        deadline = time.monotonic() + 10
        while not _saving(folder) and time.monotonic() < deadline:  # wait until a save is under way
            time.sleep(0.001)
        time.sleep(rng.uniform(0.0, 0.01))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        mid_write += _saving(folder)
        blob = Holder()
        ckpt = Checkpointer(folder, keep_last=2, blob=blob)
        assert not _saving(folder)  # the killed save's temporaries are gone, and were never listed
        steps = _steps(ckpt)
        assert steps and steps == list(range(steps[0], steps[-1] + 1)) and len(steps) <= 3 and steps[-1] >= last
        for path, step in zip(ckpt.list(), steps):  # every listed checkpoint is complete
            tensors = ember.load(path)["state"]["blob"]
            assert sorted(tensors) == [f"w{i}" for i in range(10)]
            assert all(t.shape == (500, 1000) and bool((t == step).all()) for t in tensors.values())
        state = ckpt.load_latest()
        assert state["step"] == steps[-1] == state["extra"]["step"]
        assert all(bool((t == steps[-1]).all()) for t in blob.state.values())
        last = steps[-1]
    assert mid_write >= 1


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CUDA")
def test_cuda_generator_is_restored(tmp_path):
    ckpt = Checkpointer(tmp_path, counter=Counter())
    ember.cuda.manual_seed(3)
    ckpt.save(1)
    draws = ember.rand(4, device="cuda").tolist()
    ember.cuda.manual_seed(4)
    ckpt.load_latest()
    assert ember.rand(4, device="cuda").tolist() == draws


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks loading without CUDA")
def test_cuda_generator_states_without_cuda_warn(tmp_path):
    ckpt = Checkpointer(tmp_path, counter=Counter())
    path = ckpt.save(1)
    saved = ember.load(path)
    saved["rng"]["cuda"] = [ember.zeros(16, dtype=ember.uint8)]
    ember.save(saved, path)
    with pytest.warns(UserWarning, match="holds CUDA generator states, which are not restored without CUDA"):
        assert ckpt.load_latest()["step"] == 1
