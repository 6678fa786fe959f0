"""Bit-exact resume: a run stopped after a checkpoint and continued in a fresh process (built under another seed)
computes the same losses, ==, as the run that was never stopped."""
import json
import subprocess
import sys
import textwrap

import pytest

TRAIN = """
import json
import os
import random
import sys

import numpy as np

import ember
import ember.nn.functional as F
from ember import nn
from ember.utils import Checkpointer
from ember.utils.data import DataLoader, Dataset, TensorDataset

EPOCHS = 3


class Jittered(Dataset):
    # random augmentation in __getitem__, from ember's and NumPy's generators
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.1 * ember.randn(4) + float(np.random.normal(0, 0.1)), self.y[i]


def main(folder, workers, seed, stop, save_after_epoch):
    ember.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    data = np.random.default_rng(0).standard_normal((22, 5)).astype(np.float32)  # the same in every run
    x, y = ember.from_numpy(data[:, :4]), ember.from_numpy(data[:, 4:])
    dataset = Jittered(x, y) if workers else TensorDataset(x, y)
    loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))
    opt = ember.optim.AdamW(model.parameters(), lr=0.01)
    sched = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=EPOCHS * len(loader))
    ckpt = Checkpointer(folder, model=model, optimizer=opt, scheduler=sched, loader=loader, keep_last=2)
    step, epoch, losses = 0, 0, []
    state = ckpt.load_latest()
    if state is not None:
        step, epoch = state["step"], state["epoch"]
    while epoch < EPOCHS:
        for xb, yb in loader:
            # augmentation in the loop, from every generator
            xb = xb * (1 + 0.1 * ember.rand(xb.shape[0], 1)) + float(np.random.uniform(-0.1, 0.1))
            xb = xb + random.gauss(0.0, 0.1)
            loss = F.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            losses.append(loss.item())
            if step == stop:
                ckpt.save(step, epoch=epoch)
                print(json.dumps(losses), flush=True)
                os._exit(0)  # as abruptly as a crash: no cleanup of any kind
        epoch += 1
        if epoch == save_after_epoch:
            ckpt.save(step, epoch=epoch)
            print(json.dumps(losses), flush=True)
            os._exit(0)
    print(json.dumps(losses), flush=True)


main(sys.argv[1], *map(int, sys.argv[2:]))
"""


def _run(script, folder, workers, seed, stop=-1, save_after_epoch=-1):
    out = subprocess.run([sys.executable, str(script), str(folder), str(workers), str(seed), str(stop),
                          str(save_after_epoch)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("resume") / "train.py"
    path.write_text(textwrap.dedent(TRAIN))
    return path


@pytest.fixture(scope="module")
def uninterrupted(script, tmp_path_factory):
    """The losses of whole runs, by num_workers; 6 batches an epoch."""
    runs = {w: _run(script, tmp_path_factory.mktemp("full"), w, seed=0) for w in (0, 2)}
    assert len(runs[0]) == len(runs[2]) == 18
    return runs


@pytest.mark.parametrize("workers, stop, save_after_epoch", [
    (0, 8, -1),  # in the middle of the second epoch
    (0, 6, -1),  # after the first epoch's last batch, inside its loop
    (0, -1, 1),  # after the first epoch's loop
    (2, 9, -1),  # worker processes with random augmentation in __getitem__
])
def test_resume_is_bit_exact(script, uninterrupted, tmp_path, workers, stop, save_after_epoch):
    first = _run(script, tmp_path, workers, seed=0, stop=stop, save_after_epoch=save_after_epoch)
    rest = _run(script, tmp_path, workers, seed=12345)
    assert len(first) in (6, 8, 9) and first + rest == uninterrupted[workers]


def test_the_runs_differ(script, uninterrupted, tmp_path):
    """The check above could not pass by chance: another seed gives other losses."""
    assert _run(script, tmp_path, 0, seed=1) != uninterrupted[0]
