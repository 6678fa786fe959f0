"""Checkpoints between torch and ember: torch.save files read by ember.load, ember's own round trips of what
torch.save keeps (bytes, sets), the torch.save/torch.load arguments old code passes, load_state_dict's errors,
resuming training from a torch checkpoint, and safetensors' save_model/load_model with tied weights."""
import io
import zipfile

import numpy as np
import pytest
import safetensors.torch
import torch

import ember
from ember.utils import safetensors as est


def _bits(t):
    t = t.detach()
    return t.view(torch.int16).numpy() if isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16 else \
        t.view(ember.int16).numpy() if t.dtype is ember.bfloat16 else t.numpy()


def _same(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1] and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_bits(e), _bits(t))


def _roundtrip(lib, obj, **kw):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf, **kw)


def test_training_checkpoint_from_torch_bit_exact(tmp_path):
    """A whole training checkpoint: weights of every dtype, views sharing storage, 0-d and empty, plain values."""
    g = torch.Generator().manual_seed(0)
    base = torch.randn(4, 6, generator=g)
    ck = {"model": torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).state_dict(),
          "half": torch.randn(3, generator=g).half(), "bf16": torch.randn(2, 3, generator=g).bfloat16().t(),
          "int8": torch.tensor([-128, 0, 127], dtype=torch.int8), "mask": torch.tensor([True, False]),
          "base": base, "row": base[1, 2:], "col": base[:, ::2], "scalar": torch.tensor(2.5),
          "empty": torch.zeros(0, 3), "epoch": 7, "lr": 1e-3, "arch": "mlp", "betas": (0.9, 0.999),
          "blob": b"\x00\xff", "tags": {1, 2}}
    torch.save(ck, tmp_path / "ck.pt")
    out = ember.load(tmp_path / "ck.pt", map_location="cpu", weights_only=True)
    for k in ("half", "bf16", "int8", "mask", "base", "row", "col", "scalar", "empty"):
        _same(out[k], ck[k])
    for k, v in ck["model"].items():
        _same(out["model"][k], v)
    assert out["model"]._metadata == ck["model"]._metadata
    assert {k: out[k] for k in ("epoch", "lr", "arch", "betas", "blob", "tags")} == \
        {k: ck[k] for k in ("epoch", "lr", "arch", "betas", "blob", "tags")}
    out["base"][1, 3] = 100.0  # the views still share the saved storage
    assert out["row"][1].item() == 100.0 and out["bf16"].stride() == ck["bf16"].stride()


@pytest.mark.parametrize("obj", [b"\x00abc\xff", bytearray(b"xy"), {3, 1, 2}, {"k": {("a", 1), ("b", 2)}},
                                 [b"", set(), frozenset({1.5})]], ids=["bytes", "bytearray", "set", "nested", "empty"])
def test_save_keeps_bytes_and_sets(obj):
    """What torch.save round-trips (and torch.load admits with weights_only=True) ember.save keeps too."""
    got, want = _roundtrip(ember, obj), _roundtrip(torch, obj, weights_only=False)
    assert got == want == obj and type(got) is type(want)


def test_save_accepts_torch_keyword_arguments(tmp_path):
    t = ember.arange(4.0)
    ember.save({"t": t}, tmp_path / "a.pt", _use_new_zipfile_serialization=False)
    ember.save({"t": t}, tmp_path / "b.pt", _use_new_zipfile_serialization=True, _disable_byteorder_record=True)
    for name in ("a.pt", "b.pt"):
        assert ember.equal(ember.load(tmp_path / name)["t"], t)


def test_save_into_a_missing_folder_raises_runtime_error(tmp_path):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Parent directory .*nope does not exist"):
            lib.save({"a": lib.ones(1)}, tmp_path / "nope" / "x.pt")


def test_load_mmap_needs_a_path():
    buf = io.BytesIO()
    torch.save({"a": torch.ones(2)}, buf)
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
            lib.load(io.BytesIO(buf.getvalue()), mmap=True)
    assert ember.load(io.BytesIO(buf.getvalue()), mmap=False)["a"].tolist() == [1.0, 1.0]


def _py2_file():
    """A torch.save archive whose pickle holds a Python 2 str key (SHORT_BINSTRING 'caf\\xe9')."""
    buf = io.BytesIO()
    torch.save({"k": 1}, buf)
    src, out = zipfile.ZipFile(io.BytesIO(buf.getvalue())), io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            z.writestr(name, b"\x80\x02}q\x00U\x04caf\xe9K\x01s." if name.endswith("data.pkl") else src.read(name))
    return out.getvalue()


@pytest.mark.filterwarnings("ignore:pickle_load_args")
def test_load_encoding_of_python2_strings():
    data = _py2_file()
    for enc, want in (("latin1", {"café": 1}), ("bytes", {b"caf\xe9": 1})):
        assert ember.load(io.BytesIO(data), encoding=enc) == torch.load(io.BytesIO(data), encoding=enc) == want
    for lib in (torch, ember):
        with pytest.raises(ValueError):  # not UTF-8
            lib.load(io.BytesIO(data))
        with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
            lib.load(io.BytesIO(data), foo=1)


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


@pytest.mark.parametrize("case", ["missing", "unexpected", "shape", "all", "not_tensor"])
def test_load_state_dict_errors_match(case):
    msgs = []
    for lib in (torch, ember):
        sd = dict(_net(lib).state_dict())
        if case in ("missing", "all"):
            del sd["0.bias"]
        if case in ("unexpected", "all"):
            sd["head.w"] = lib.zeros(1)
        if case in ("shape", "all"):
            sd["2.weight"] = lib.zeros(3, 4)
        if case == "not_tensor":
            sd["0.weight"] = [[0.0] * 3] * 4
        with pytest.raises(RuntimeError) as info:
            _net(lib).load_state_dict(sd)
        msgs.append(str(info.value).replace("torch.", "ember."))
        if case in ("missing", "unexpected"):
            res = _net(lib).load_state_dict(sd, strict=False)
            msgs.append((res.missing_keys, res.unexpected_keys))
    assert msgs[: len(msgs) // 2] == msgs[len(msgs) // 2:]


def test_load_state_dict_assign_keeps_checkpoint_dtype():
    for lib in (torch, ember):
        m = _net(lib)
        sd = {**m.state_dict(), "0.weight": lib.ones(4, 3, dtype=lib.float64)}
        m.load_state_dict(sd, assign=True)
        assert m[0].weight.dtype == lib.float64 and m[0].weight.requires_grad
        m2 = _net(lib)
        m2.load_state_dict(sd)
        assert m2[0].weight.dtype == lib.float32


@pytest.mark.parametrize("opt_name,kw", [("Adam", {"lr": 1e-2, "amsgrad": True}),
                                         ("SGD", {"lr": 1e-2, "momentum": 0.9, "nesterov": True}),
                                         ("RMSprop", {"lr": 1e-2, "momentum": 0.5, "centered": True})])
def test_resume_from_torch_checkpoint(tmp_path, opt_name, kw):
    """Train in torch, save model/optimizer/scheduler, resume in ember: the same losses and learning rates."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 3)).astype(np.float32), rng.standard_normal((16, 2)).astype(np.float32)

    def run(lib, m, opt, sched, steps):
        out = []
        for _ in range(steps):
            loss = ((m(lib.from_numpy(x)) - lib.from_numpy(y)) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            out.append(loss.item())
        return out

    def parts(lib):
        m = _net(lib)
        opt = getattr(lib.optim, opt_name)(m.parameters(), **kw)
        return m, opt, lib.optim.lr_scheduler.StepLR(opt, 2, 0.5)

    tm, topt, tsched = parts(torch)
    run(torch, tm, topt, tsched, 3)
    torch.save({"model": tm.state_dict(), "opt": topt.state_dict(), "sched": tsched.state_dict()}, tmp_path / "c.pt")
    ck = ember.load(tmp_path / "c.pt")
    em, eopt, esched = parts(ember)
    em.load_state_dict(ck["model"])
    eopt.load_state_dict(ck["opt"])
    esched.load_state_dict(ck["sched"])
    state = eopt.state_dict()["state"][0]
    want = topt.state_dict()["state"][0]
    assert sorted(state) == sorted(want)
    if "step" in want:
        _same(state["step"], want["step"])
    np.testing.assert_allclose(run(ember, em, eopt, esched, 4), run(torch, tm, topt, tsched, 4), rtol=1e-5)
    assert eopt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]


def _tied(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Embedding(5, 4), lib.nn.Linear(4, 5, bias=False))
    m[1].weight = m[0].weight
    return m


def test_safetensors_save_model_load_model_with_tied_weights(tmp_path):
    tm, em = _tied(torch), _tied(ember)
    em.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in tm.state_dict().items()})
    safetensors.torch.save_model(tm, tmp_path / "t.safetensors")
    est.save_model(em, tmp_path / "e.safetensors")
    for name in ("t", "e"):
        with est.safe_open(tmp_path / f"{name}.safetensors") as f:
            assert f.keys() == ["0.weight"] and f.metadata() == {"1.weight": "0.weight"}
    m2 = _tied(ember)
    assert est.load_model(m2, tmp_path / "t.safetensors") == (set(), [])
    assert m2[1].weight is m2[0].weight
    _same(m2[0].weight, tm[0].weight)
    t2 = _tied(torch)
    assert safetensors.torch.load_model(t2, tmp_path / "e.safetensors") == (set(), [])
    _same(em[0].weight, t2[0].weight)
    msgs = []
    for lib, mod in ((safetensors.torch, torch.nn.Linear(4, 4)), (est, ember.nn.Linear(4, 4))):
        with pytest.raises(RuntimeError) as info:
            lib.load_model(mod, tmp_path / "e.safetensors")
        msgs.append((str(info.value), lib.load_model(mod, tmp_path / "e.safetensors", strict=False)))
    assert msgs[0] == msgs[1]
