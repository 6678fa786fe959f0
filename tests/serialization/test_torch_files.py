"""Reading files written by torch.save (zip and legacy formats) with ember's restricted reader, torch as the oracle."""
import collections
import io
import mmap
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.nn as enn
from ember._torch_format import load_torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64, torch.complex64, torch.complex128]
FORMATS = ["zip", "legacy"]


def saved(obj, fmt="zip", **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=fmt == "zip", **kw)
    return buf.getvalue()


def on_cpu(t, location):
    return t


def load(data, place=on_cpu, name="f.pt"):
    return load_torch(data, name, place)


def bits(t):
    """A tensor's values as NumPy, bfloat16 as its raw bits so comparisons are exact."""
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()
        return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()
    a = t._data
    return a.view(np.int16) if t.dtype is ember.bfloat16 else a


def assert_same(e, t):
    assert isinstance(e, ember.Tensor)
    assert e.dtype.name == str(t.dtype).removeprefix("torch.")
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(bits(e), bits(t))


def sample(dtype, shape=(3, 4)):
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=dtype) * 100
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)


# -- tensors ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_round_trips_bit_exact(dtype, fmt):
    t = sample(dtype)
    if dtype.is_floating_point:
        t[0, :3] = torch.tensor([float("nan"), float("inf"), -0.0], dtype=dtype)
    assert_same(load(saved(t, fmt)), t)


@pytest.mark.parametrize("fmt", FORMATS)
def test_shapes_and_views(fmt):
    base = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    views = {"scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3), "empty_mid": torch.ones(2, 0, 4),
             "transposed": base.transpose(0, 2), "permuted": base.permute(1, 2, 0), "stepped": base[::2, 1:, ::3],
             "offset": base[1, 2:], "narrowed": base.narrow(2, 1, 3),
             "expanded": torch.arange(3.0)[:, None].expand(3, 4),
             "element": base[2, 3, 4], "column": base[:, :, 1:2]}
    out = load(saved(views, fmt))
    for key, t in views.items():
        assert_same(out[key], t)
        if t.numel() > 1:
            assert out[key].stride() == t.stride(), key


@pytest.mark.parametrize("fmt", FORMATS)
def test_tensors_sharing_a_storage_share_memory(fmt):
    w = torch.randn(6, 4)
    state = {"embed": w, "lm_head": w, "first": w[:2], "t": w.t(), "other": torch.randn(3)}
    out = load(saved(state, fmt))
    assert out["embed"] is out["lm_head"]  # one object in the file, one object loaded, as torch
    for key in ("first", "t"):
        assert np.shares_memory(out["embed"]._data, out[key]._data)
    assert not np.shares_memory(out["embed"]._data, out["other"]._data)
    out["embed"].mul_(2)  # a write through one is seen by the others, as with torch's loaded tensors
    np.testing.assert_array_equal(out["first"].numpy(), 2 * w[:2].numpy())
    np.testing.assert_array_equal(out["t"].numpy(), 2 * w.t().numpy())


@pytest.mark.parametrize("fmt", FORMATS)
def test_parameters_and_requires_grad(fmt):
    obj = {"p": torch.nn.Parameter(torch.randn(3)), "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
           "leaf": torch.randn(2, requires_grad=True), "int_param": torch.nn.Parameter(torch.arange(3), False)}
    out = load(saved(obj, fmt))
    for key, t in obj.items():
        assert_same(out[key], t)
        assert out[key].requires_grad == t.requires_grad
        assert isinstance(out[key], enn.Parameter) == isinstance(t, torch.nn.Parameter)
        assert out[key].is_leaf


def test_conj_and_neg_views_are_resolved():
    z = torch.tensor([1 + 2j, -3 - 0.5j])
    obj = {"conj": z.conj(), "neg": z.clone().conj().imag}
    out = load(saved(obj))
    for key, t in obj.items():
        assert_same(out[key], t)


def test_tensor_attributes_are_restored():
    t = torch.arange(3.0)
    t.note = "kept"
    out = load(saved(t))
    assert_same(out, t)
    assert out.note == "kept"


# -- containers and plain values ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_plain_values(fmt):
    obj = [1, -2 ** 70, 2.5, float("inf"), "text", None, True, (1, (2, "x")), b"\x00\xffbytes", bytearray(b"ab"),
           {1, 2}, 1 + 2j, {"k": [1, 2]}, collections.Counter("aab"), torch.Size([2, 3]), torch.float16,
           torch.bfloat16, torch.int64, torch.device("cpu"), torch.device("cuda", 1)]
    out = load(saved(obj, fmt))
    assert out[:14] == obj[:14]
    assert type(out[13]) is collections.Counter
    assert out[14] == (2, 3) and isinstance(out[14], ember.Size)
    assert out[15:18] == [ember.float16, ember.bfloat16, ember.int64]
    assert out[18] == ember.device("cpu") and out[19] == ember.device("cuda", 1)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_protocols(protocol):
    obj = {"w": torch.randn(2, 3), "meta": ("a", 1, [None])}
    out = load(saved(obj, pickle_protocol=protocol))
    assert_same(out["w"], obj["w"])
    assert out["meta"] == obj["meta"]


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(torch.flatten(torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2), 1))


def ember_net():
    return enn.Sequential(collections.OrderedDict([
        ("conv", enn.Conv2d(1, 4, 3, padding=1)), ("bn", enn.BatchNorm2d(4)), ("relu", enn.ReLU()),
        ("pool", enn.MaxPool2d(2)), ("flat", enn.Flatten()), ("fc", enn.Linear(4 * 4 * 4, 3))]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_dict_of_a_torch_model(fmt):
    torch.manual_seed(0)
    net = TorchNet()
    net(torch.randn(8, 1, 8, 8))  # running statistics move away from their initial values
    state = net.state_dict()
    out = load(saved(state, fmt))
    assert type(out) is collections.OrderedDict and list(out) == list(state)
    assert out._metadata == state._metadata
    for key, t in state.items():
        assert_same(out[key], t)


def test_a_torch_model_runs_identically_in_ember(tmp_path):
    torch.manual_seed(0)
    net = TorchNet()
    net(torch.randn(8, 1, 8, 8))
    net.eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    model = ember_net().eval()
    model.load_state_dict(load((tmp_path / "net.pt").read_bytes()))
    x = np.random.default_rng(0).standard_normal((5, 1, 8, 8)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_optimizer_state_dict_after_a_step():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, betas=(0.8, 0.9))
    net(torch.randn(4, 3)).pow(2).sum().backward()
    opt.step()
    state = opt.state_dict()
    out = load(saved(state))
    assert out["param_groups"] == state["param_groups"]  # betas stay a tuple, 'foreach' None, ...
    assert sorted(out["state"]) == sorted(state["state"]) == [0, 1]
    for i, s in state["state"].items():
        assert sorted(out["state"][i]) == sorted(s) == ["exp_avg", "exp_avg_sq", "step"]
        for key, t in s.items():
            assert_same(out["state"][i][key], t)


def test_hugging_face_style_checkpoint(tmp_path):
    torch.manual_seed(0)

    class TinyLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = torch.nn.Embedding(50, 16)
            layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
            self.layers = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.norm = torch.nn.LayerNorm(16)
            self.lm_head = torch.nn.Linear(16, 50, bias=False)
            self.lm_head.weight = self.embed_tokens.weight  # tied, as most Hugging Face language models
            self.register_buffer("position_ids", torch.arange(8)[None])

    lm = TinyLM().to(torch.bfloat16)
    path = tmp_path / "pytorch_model.bin"
    torch.save(lm.state_dict(), path)
    assert zipfile.ZipFile(path).namelist()[0].startswith("pytorch_model/")  # the archive's top folder varies
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    for data in (path.read_bytes(), mapped):
        out = load(data, name=str(path))
        state = lm.state_dict()
        assert list(out) == list(state)
        for key, t in state.items():
            assert_same(out[key], t)
        assert np.shares_memory(out["embed_tokens.weight"]._data, out["lm_head.weight"]._data)


# -- memory, placement, layout variants ----------------------------------------------------------------------------
def test_mapped_file_storages_are_views_of_the_map(tmp_path):
    path = tmp_path / "big.pt"
    torch.save({"w": torch.randn(256, 256), "b": torch.randn(256)}, path)
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    out = load(mapped)
    start = np.frombuffer(mapped, np.uint8).__array_interface__["data"][0]
    for t in out.values():
        assert start <= t.data_ptr() < start + len(mapped)  # no copy was made
    out["w"].add_(1)  # copy-on-write: writable, and the file is untouched
    with open(path, "rb") as f:
        np.testing.assert_array_equal(load(f.read())["w"].numpy() + 1, out["w"].numpy())


def test_bytes_input_gives_writable_tensors():
    out = load(saved({"w": torch.ones(3)}))
    out["w"].add_(1)
    np.testing.assert_array_equal(out["w"].numpy(), [2, 2, 2])


def test_place_is_called_once_per_storage_with_the_saved_location():
    w = torch.randn(4, 4)
    data = saved({"w": w, "wt": w.t(), "b": torch.randn(4)})
    # the location as a GPU machine would have written it: the pickle holds it as a length-prefixed string
    data = relocate(data, b"cpu", b"cuda:0")
    assert torch.load(io.BytesIO(data), map_location="cpu")["w"].equal(w)
    calls = []

    def place(t, location):
        calls.append(location)
        return ember.tensor(t.numpy().copy())  # a move that copies, as one to another device does

    out = load(data, place)
    assert calls == ["cuda:0", "cuda:0"]
    np.testing.assert_array_equal(out["wt"].numpy(), w.t().numpy())
    assert np.shares_memory(out["w"]._data, out["wt"]._data)  # still one storage after the move


def relocate(data, old, new):
    """The zip file ``data`` with the pickled location string ``old`` replaced by ``new``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith("data.pkl"):
                body = body.replace(b"X" + len(old).to_bytes(4, "little") + old,
                                    b"X" + len(new).to_bytes(4, "little") + new)
            dst.writestr(info.filename, body)
    return out.getvalue()


def test_big_endian_archive():
    tensors = [sample(d) for d in DTYPES]
    src = zipfile.ZipFile(io.BytesIO(saved(tensors)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:  # the file a big-endian machine writes: its byteorder, swapped data
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith("/byteorder"):
                body = b"big"
            elif "/data/" in info.filename:
                t = tensors[int(info.filename.rsplit("/", 1)[1])]
                body = t.numpy().byteswap().tobytes() if t.dtype != torch.bfloat16 else \
                    t.view(torch.int16).numpy().byteswap().tobytes()
            dst.writestr(info.filename, body)
    data = out.getvalue()
    for t, a, b in zip(tensors, torch.load(io.BytesIO(data)), load(data)):
        assert_same(b, t)
        assert torch.equal(a, t)  # torch reads the edited file the same way


def test_archive_without_byteorder_record_is_little_endian():  # as older torch versions wrote them
    t = torch.randn(5, dtype=torch.float64)
    src = zipfile.ZipFile(io.BytesIO(saved(t)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith("/byteorder"):
                dst.writestr(info.filename, src.read(info))
    assert_same(load(out.getvalue()), t)


def test_deflated_archive():
    state = {"w": torch.randn(10, 10), "i": torch.arange(7)}
    src = zipfile.ZipFile(io.BytesIO(saved(state)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    result = load(out.getvalue())
    for key, t in state.items():
        assert_same(result[key], t)


def test_errors_are_unpickling_and_value_errors():
    from ember._torch_format import UnpicklingError
    import pickle
    assert issubclass(UnpicklingError, pickle.UnpicklingError) and issubclass(UnpicklingError, ValueError)
    with pytest.raises(UnpicklingError, match=r"model\.pt: refusing to load the global torch\.nn\.modules\.linear"
                                              r"\.Linear.*state_dict"):
        load(saved(torch.nn.Linear(2, 2)), name="model.pt")
