"""``SummaryWriter`` logging idioms against torch: both write event files to separate directories, which are read
back (protos compared byte for byte, wall times aside)."""
import glob
import os

import numpy as np
import pytest
import torch

import ember

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from ember.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(logdir):
    """Events of every event file under ``logdir``, by sub-directory, without wall times and file headers."""
    out = {}
    for path in sorted(glob.glob(os.path.join(logdir, "**", "events.out.tfevents.*"), recursive=True)):
        evs = []
        for ev in LegacyEventFileLoader(path).Load():
            if ev.HasField("file_version") and not ev.step:
                continue
            ev.wall_time = 0
            evs.append(ev.SerializeToString())
        out.setdefault(os.path.relpath(os.path.dirname(path), logdir), []).extend(evs)
    return out


def _both(tmp_path, log, **kw):
    """Run ``log(writer, lib)`` with ember's and torch's writers; return both logdirs' events."""
    res = []
    for lib, cls in ((ember, SummaryWriter), (torch, TorchWriter)):
        d = str(tmp_path / lib.__name__)
        with cls(d, **kw) as w:
            log(w, lib)
        res.append(_events(d))
    assert sum(map(len, res[0].values())) and set(res[0]) == set(res[1])
    for k in res[0]:
        assert res[0][k] == res[1][k], k
    return res[0]


def _weights(seed=0):
    rng = np.random.default_rng(seed)  # multiples of 1/16: the forward pass is exact in float32, in any order
    return (np.round(rng.standard_normal((16, 8)) * 16).astype(np.float32) / 16,
            np.round(rng.standard_normal(16) * 16).astype(np.float32) / 16)


def test_scalars_training_loop(tmp_path):
    """``loss.item()``, tensors, numpy scalars, ints, new-style and double-precision scalars, per step."""
    w0, b0 = _weights()

    def log(w, lib):
        lin = lib.nn.Linear(8, 16)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w0))
            lin.bias.copy_(lib.tensor(b0))
        x = lib.tensor(np.arange(-16, 16, dtype=np.float32).reshape(4, 8) / 8)
        for step in range(3):
            loss = lin(x * (step + 1)).abs().mean()
            w.add_scalar("loss/train", loss.item(), step)
            w.add_scalar("loss/tensor", loss.detach(), step)
            w.add_scalar("loss/bf16", loss.detach().to(lib.bfloat16), step)
            w.add_scalar("lr", np.float64(0.1) / (step + 1), step, new_style=True)
            w.add_scalar("lr64", 1 / 3 + step, step, new_style=True, double_precision=True)
            w.add_scalar("epoch", step, global_step=step, walltime=123.0)
            w.add_scalar("one_elem", lib.tensor([[2.5]]), step)
    evs = _both(tmp_path, log)
    assert len(evs["."]) == 21


def test_scalars_event_accumulator(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(5):
            w.add_scalar("acc", ember.tensor(step / 4.0), step * 10)
    acc = EventAccumulator(str(tmp_path)).Reload()
    assert [(e.step, e.value) for e in acc.Scalars("acc")] == [(s * 10, s / 4.0) for s in range(5)]


def test_add_scalars_subruns(tmp_path):
    evs = _both(tmp_path, lambda w, lib: [w.add_scalars("run/loss", {"train": 1.0 / (s + 1), "val": lib.tensor(0.5)}, s)
                                          for s in range(2)])
    assert set(evs) == {".", "run_loss_train", "run_loss_val"} and evs["."] == [] and len(evs["run_loss_val"]) == 2


def test_scalar_errors():
    from ember.utils.tensorboard import summary
    from torch.utils.tensorboard import summary as tsummary
    for s, lib in ((summary, ember), (tsummary, torch)):
        with pytest.raises(AssertionError):
            s.scalar("x", lib.ones(2))
        with pytest.raises(NotImplementedError):
            s.scalar("x", [1.0])


def test_histograms(tmp_path):
    """Parameter and gradient histograms: tensorflow bins, numpy bin specs, max_bins, ints and numpy arrays."""
    w0, b0 = _weights(1)

    def log(w, lib):
        lin = lib.nn.Linear(8, 16)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w0))
            lin.bias.copy_(lib.tensor(b0))
        lin(lib.ones(3, 8)).sum().backward()
        for name, p in lin.named_parameters():
            w.add_histogram(name, p, 0)
            w.add_histogram(name + "/grad", p.grad, 0)
        w.add_histogram("auto", lin.weight, 1, bins="auto")
        w.add_histogram("fd", lin.weight.detach().numpy(), 1, bins="fd")
        w.add_histogram("ten", lin.weight, 1, bins=10)
        w.add_histogram("edges", lin.weight, 1, bins=[-3.0, -1.0, 0.0, 0.5, 3.0])
        w.add_histogram("maxbins", lin.weight, 1, bins=50, max_bins=7)
        w.add_histogram("ints", lib.arange(20) % 7, 2)
        w.add_histogram("const", lib.full((5,), 3.0), 2)
    _both(tmp_path, log)


def test_histogram_values_and_errors(tmp_path):
    vals = np.random.default_rng(2).standard_normal(1000)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", ember.tensor(vals), 0, bins=20)
        with pytest.raises(ValueError):
            w.add_histogram("empty", ember.zeros(0), 0)
        with pytest.raises(ValueError):
            w.add_histogram_raw("raw", 0, 1, 2, 1, 1, [0.5, 1.0], [2])
    h = EventAccumulator(str(tmp_path)).Reload().Histograms("h")[0].histogram_value
    counts, edges = np.histogram(vals, bins=20)
    assert h.num == 1000 and h.min == vals.min() and h.max == vals.max()
    np.testing.assert_allclose(h.sum_squares, vals.dot(vals), rtol=1e-12)
    np.testing.assert_array_equal(h.bucket, np.concatenate([[0], counts]))
    np.testing.assert_array_equal(h.bucket_limit, edges)


def test_histogram_raw(tmp_path):
    _both(tmp_path, lambda w, lib: w.add_histogram_raw("raw", min=-1.0, max=2.0, num=6, sum=3.0, sum_squares=9.0,
                                                       bucket_limits=[0.0, 1.0, 2.0], bucket_counts=[1, 3, 2],
                                                       global_step=4))


def test_images(tmp_path):
    """CHW/HWC/HW floats in [0, 1] (clipped) and uint8, grids of NCHW/NHWC batches, one-channel images."""
    rng = np.random.default_rng(3)
    chw = rng.uniform(-0.2, 1.2, (3, 10, 12)).astype(np.float32)
    batch = rng.uniform(0, 1, (5, 1, 6, 7)).astype(np.float32)
    u8 = rng.integers(0, 256, (9, 11, 3), dtype=np.uint8)

    def log(w, lib):
        w.add_image("chw", lib.tensor(chw), 0)
        w.add_image("hwc_u8", lib.tensor(u8), 0, dataformats="HWC")
        w.add_image("hw", lib.tensor(chw[0]), 0, dataformats="HW")
        w.add_image("numpy", chw[:1], 0)
        w.add_images("nchw", lib.tensor(batch), 1)
        w.add_images("nhwc", lib.tensor(batch).permute(0, 2, 3, 1), 1, dataformats="NHWC")
        w.add_images("many", lib.tensor(np.tile(batch, (3, 3, 1, 1))), 1)
        w.add_image_with_boxes("boxes", lib.tensor(chw), lib.tensor([[1.0, 1.0, 8.0, 6.0], [0, 2, 5, 9]]), 2,
                               labels=["cat", "dog"])
    evs = _both(tmp_path, log)
    assert len(evs["."]) == 8
    img = EventAccumulator(str(tmp_path / "ember")).Reload().Images("many")[0]
    assert (img.height, img.width) == (12, 56)


def test_image_errors():
    from importlib import import_module
    for lib in (ember, torch):
        summary = import_module(f"{lib.__name__}.utils.tensorboard.summary")
        with pytest.raises(AssertionError):
            summary.image("x", lib.zeros(3, 4, 4), dataformats="HWC C")
        with pytest.raises(AssertionError):
            summary.image("x", lib.zeros(4, 4), dataformats="CHW")


def test_missing_tensorboard_names_the_extra(monkeypatch):
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.record_writer", None)
    for name in ("ember.utils.tensorboard", "ember.utils.tensorboard.writer", "ember.utils.tensorboard.summary"):
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"ember\[tensorboard\]"):
        importlib.import_module("ember.utils.tensorboard")


def test_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def log(w, lib):
        fig, ax = plt.subplots(figsize=(2, 1.5), dpi=40)
        ax.plot([0, 1, 2], [1, 0, 1])
        w.add_figure("fig", fig, 0)
        assert not plt.fignum_exists(fig.number)
        figs = [plt.figure(figsize=(1, 1), dpi=20) for _ in range(2)]
        w.add_figure("figs", figs, 1, close=False)
        assert plt.fignum_exists(figs[0].number)
        plt.close("all")
    _both(tmp_path, log)


def test_text_hparams(tmp_path):
    def log(w, lib):
        w.add_text("config", "lr: **0.1**\n\n| a | b |", 0)
        w.add_text("notes", "héllo ✓", 1)
        w.add_hparams({"lr": 0.01, "bsize": 32, "optim": "adam", "bn": True, "drop": lib.tensor([0.5]), "none": None},
                      {"hparam/accuracy": 0.9, "hparam/loss": lib.tensor(0.25)}, run_name="trial0")
        w.add_hparams({"lr": 0.1, "optim": "sgd"}, {"m": 1.0}, hparam_domain_discrete={"optim": ["adam", "sgd"]},
                      run_name="trial1", global_step=3)
    evs = _both(tmp_path, log)
    assert set(evs) == {".", "trial0", "trial1"} and len(evs["trial0"]) == 5


def test_hparams_errors(tmp_path):
    for cls, lib in ((SummaryWriter, ember), (TorchWriter, torch)):
        with cls(str(tmp_path / lib.__name__)) as w:
            with pytest.raises(TypeError):
                w.add_hparams([("lr", 0.1)], {})
            with pytest.raises(TypeError):
                w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]})
            with pytest.raises(ValueError):
                w.add_hparams({"lr": [0.1]}, {})


def test_embedding(tmp_path):
    """Projector files: tensors, metadata (with a header), sprites and the config."""
    rng = np.random.default_rng(4)
    mat = rng.standard_normal((6, 4)).astype(np.float32)
    imgs = rng.uniform(0, 1, (6, 3, 5, 5)).astype(np.float32)
    files = []
    for lib, cls in ((ember, SummaryWriter), (torch, TorchWriter)):
        d = tmp_path / lib.__name__
        with cls(str(d)) as w:
            w.add_embedding(lib.tensor(mat), metadata=list("abcabc"), label_img=lib.tensor(imgs), global_step=2)
            w.add_embedding(mat, metadata=[[i, i % 2] for i in range(6)], metadata_header=["idx", "parity"],
                            tag="feat/x")
            with pytest.raises(AssertionError):
                w.add_embedding(lib.tensor(mat), metadata=["a"])
        files.append({os.path.relpath(p, d): open(p, "rb").read() for p in glob.glob(str(d / "**" / "*"), recursive=True)
                      if os.path.isfile(p) and "tfevents" not in p})
    assert files[0] == files[1] and "00002/default/sprite.png" in files[0] and "00000/feat%2fx/metadata.tsv" in files[0]


def test_pr_curve_custom_scalars_tensor_audio_mesh_video(tmp_path):
    rng = np.random.default_rng(5)
    labels, preds = rng.integers(0, 2, 50), rng.uniform(0, 1, 50).astype(np.float32)
    verts = rng.standard_normal((1, 4, 3)).astype(np.float32)

    def log(w, lib):
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(preds), 0)
        w.add_pr_curve("pr_w", labels, preds, 1, num_thresholds=300, weights=np.linspace(0, 1, 50))
        w.add_pr_curve_raw("pr_raw", [5, 3], [4, 1], [0, 3], [0, 2], [0.5, 0.75], [1.0, 0.6], 2, num_thresholds=2)
        w.add_custom_scalars({"Loss": {"all": ["Multiline", ["loss/train", "loss/val"]],
                                       "band": ["Margin", ["m", "lo", "hi"]]}})
        w.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
        w.add_custom_scalars_marginchart(["a", "b", "c"])
        for dt in ("float32", "float64", "int64", "int32", "bool", "uint8", "float16", "bfloat16", "complex64"):
            w.add_tensor("t_" + dt, lib.tensor(np.arange(6).reshape(2, 3)).to(getattr(lib, dt)), 3)
        w.add_audio("snd", lib.tensor(np.sin(np.linspace(0, 20, 400)) * 1.5), 4, sample_rate=8000)
        w.add_mesh("mesh", lib.tensor(verts), colors=lib.tensor(np.full((1, 4, 3), 200)),
                   faces=lib.tensor([[[0, 1, 2], [1, 2, 3]]]), config_dict={"camera": {"fov": 75}}, global_step=5)
        w.add_video("vid", lib.tensor(rng.uniform(0, 1, (3, 2, 3, 4, 4)).astype(np.float32)), 6)
    _both(tmp_path, log)


def test_purge_step_suffix_close_reopen(tmp_path):
    def log(w, lib):
        w.add_scalar("x", 1.0, 10)
        w.flush()
        w.close()
        w.close()
        w.add_scalar("x", 2.0, 11)
    evs = _both(tmp_path, log, purge_step=7, filename_suffix=".v2")
    assert len(evs["."]) == 4
    assert all(p.endswith(".v2") for p in glob.glob(str(tmp_path / "ember" / "events*")))


def test_default_logdir_and_add_graph(tmp_path, monkeypatch):
    import socket
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.add_scalar("x", 1, 0)
    logdir = w.get_logdir()
    assert os.path.dirname(logdir) == "runs" and logdir.endswith("_" + socket.gethostname() + "_lr0.1")
    assert os.path.isdir(logdir) and glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    with pytest.raises(NotImplementedError, match="add_graph"):
        w.add_graph(ember.nn.Linear(2, 2), ember.zeros(1, 2))
    w.close()
