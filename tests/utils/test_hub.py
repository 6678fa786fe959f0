"""ember.hub and ember.utils.model_zoo against torch.hub, over file:// URLs and a local HTTP server (no network)."""
import functools
import hashlib
import http.server
import os
import threading
import zipfile

import numpy as np
import pytest
import torch

import ember
import ember.hub as hub


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    return tmp_path


@pytest.fixture
def server(tmp_path):
    """A local HTTP server over ``tmp_path/served``, yielding (its base URL, the list of paths requested)."""
    root = tmp_path / "served"
    root.mkdir()
    requested = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, requested
    httpd.shutdown()
    httpd.server_close()


def torch_checkpoint(path):
    state = {"weight": torch.arange(6.0).reshape(2, 3), "bias": torch.tensor([1, 2], dtype=torch.int64)}
    torch.save(state, path)
    return state


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_get_dir_set_dir_and_environment(hub_dir, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(hub_dir / "home"))
    assert hub.get_dir() == torch.hub.get_dir() == str(hub_dir / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(hub_dir / "xdg"))
    assert hub.get_dir() == torch.hub.get_dir() == str(hub_dir / "xdg" / "torch" / "hub")
    monkeypatch.setenv("HOME", str(hub_dir))
    for m in (hub, torch.hub):
        m.set_dir("~/elsewhere")
    assert hub.get_dir() == torch.hub.get_dir() == str(hub_dir / "elsewhere")


def test_load_state_dict_from_file_url_as_torch(hub_dir, capsys):
    src = hub_dir / "net.pth"
    state = torch_checkpoint(src)
    hub.set_dir(hub_dir / "ember")
    torch.hub.set_dir(str(hub_dir / "torch"))
    got = hub.load_state_dict_from_url(src.as_uri(), progress=False)
    want = torch.hub.load_state_dict_from_url(src.as_uri(), progress=False, weights_only=True)
    assert got.keys() == want.keys() == state.keys()
    for k in state:
        assert got[k].dtype.name == str(want[k].dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got[k].numpy(), want[k].numpy())
    cached = hub_dir / "ember" / "checkpoints" / "net.pth"
    assert cached.read_bytes() == src.read_bytes()
    assert f'Downloading: "{src.as_uri()}" to {cached}' in capsys.readouterr().out


def test_cached_file_is_reused_without_downloading(hub_dir, server):
    url, root, requested = server
    torch_checkpoint(root / "model.pth")
    first = hub.load_state_dict_from_url(f"{url}/model.pth", model_dir=str(hub_dir / "cache"), progress=False)
    assert requested == ["/model.pth"]
    (root / "model.pth").unlink()  # a second download would fail
    again = hub.load_state_dict_from_url(f"{url}/model.pth", model_dir=str(hub_dir / "cache"), progress=False)
    assert requested == ["/model.pth"]
    assert ember.equal(first["weight"], again["weight"])


def test_file_name_map_location_and_ember_checkpoints(hub_dir, server):
    url, root, _ = server
    ember.save({"w": ember.ones(2, 2), "step": 3}, str(root / "ck.safetensors"))
    out = hub.load_state_dict_from_url(f"{url}/ck.safetensors", model_dir=str(hub_dir), file_name="renamed.st",
                                       map_location="cpu", progress=False)
    assert out["step"] == 3 and ember.equal(out["w"], ember.ones(2, 2)) and out["w"].device.type == "cpu"
    assert (hub_dir / "renamed.st").exists() and not (hub_dir / "ck.safetensors").exists()


def test_check_hash(hub_dir, server):
    url, root, _ = server
    blob = root / "blob.pth"
    torch_checkpoint(blob)
    digest = sha256(blob)
    good, bad = f"net-{digest[:10]}.pth", f"net-{'0' * 10}.pth"
    (root / good).write_bytes(blob.read_bytes())
    (root / bad).write_bytes(blob.read_bytes())
    out = hub.load_state_dict_from_url(f"{url}/{good}", model_dir=str(hub_dir / "e"), check_hash=True,
                                       progress=False)
    assert set(out) == {"weight", "bias"}
    for m, d in ((hub, "e"), (torch.hub, "t")):
        with pytest.raises(RuntimeError, match="invalid hash value"):
            m.load_state_dict_from_url(f"{url}/{bad}", model_dir=str(hub_dir / d), check_hash=True, progress=False)
    assert os.listdir(hub_dir / "e") == [good]  # nothing left of the failed download
    # without check_hash the name is not checked
    hub.load_state_dict_from_url(f"{url}/{bad}", model_dir=str(hub_dir / "e"), progress=False)


def test_download_url_to_file_is_atomic(hub_dir, server):
    url, root, _ = server
    (root / "data.bin").write_bytes(os.urandom(300_000))  # several chunks
    (hub_dir / "out").mkdir()
    dst = hub_dir / "out" / "data.bin"
    hub.download_url_to_file(f"{url}/data.bin", str(dst), hash_prefix=sha256(root / "data.bin")[:8], progress=False)
    assert dst.read_bytes() == (root / "data.bin").read_bytes()
    dst.write_bytes(b"previous")
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(f"{url}/data.bin", str(dst), hash_prefix="ffffffff", progress=False)
    with pytest.raises(OSError):  # a 404
        hub.download_url_to_file(f"{url}/missing.bin", str(dst), progress=False)
    assert dst.read_bytes() == b"previous" and os.listdir(hub_dir / "out") == ["data.bin"]  # no partial file


def test_download_progress_bar(hub_dir, server, capsys):
    pytest.importorskip("tqdm")
    url, root, _ = server
    (root / "data.bin").write_bytes(b"x" * 1000)
    hub.download_url_to_file(f"{url}/data.bin", str(hub_dir / "quiet"), progress=False)
    assert capsys.readouterr().err == ""
    hub.download_url_to_file(f"{url}/data.bin", str(hub_dir / "loud"), progress=True)
    assert "100%" in capsys.readouterr().err


def test_legacy_zip_checkpoint(hub_dir):
    inner = hub_dir / "inner.pth"
    torch_checkpoint(inner)
    src = hub_dir / "legacy.zip"
    with zipfile.ZipFile(src, "w") as zf:
        zf.write(inner, "weights.pth")
    out = hub.load_state_dict_from_url(src.as_uri(), model_dir=str(hub_dir / "c"), progress=False)
    want = torch.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(hub_dir / "t"), progress=False)
    np.testing.assert_array_equal(out["weight"].numpy(), want["weight"].numpy())
    assert (hub_dir / "c" / "weights.pth").exists()


def test_model_zoo_load_url_is_the_hub_function():
    assert ember.utils.model_zoo.load_url is hub.load_state_dict_from_url
    import ember.utils.model_zoo as model_zoo
    assert model_zoo.load_url is ember.hub.load_state_dict_from_url


@pytest.mark.parametrize("name", ["load", "list", "help"])
def test_github_entry_points_are_refused_clearly(name):
    with pytest.raises(NotImplementedError, match=f"ember.hub.{name} is not supported"):
        getattr(hub, name)("pytorch/vision", "resnet18")
