"""Every test here runs with the CuPy stand-in installed as ``cupy``/``cupyx`` and ember's cached CuPy reset; both are
undone after each test, so no other test ever sees it. With ``EMBER_REAL_CUPY=1`` (on a machine with a GPU) the same
tests run on the real CuPy instead."""
import os
import sys

import pytest

import ember
from ember import _device, _random

from . import fake_cupy

@pytest.fixture(autouse=True)
def cupy_stand_in(monkeypatch):
    if os.environ.get("EMBER_REAL_CUPY") == "1":
        import cupy
        assert ember.cuda.is_available()
        yield cupy
        ember.set_default_device(None)
        return
    for name in [n for n in sys.modules if n.split(".")[0] in ("cupy", "cupyx")]:
        monkeypatch.delitem(sys.modules, name)
    for name, module in fake_cupy.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(_device, "_cupy", None)
    monkeypatch.setattr(_random, "_cuda_generators", {})
    assert ember.cuda.is_available()
    yield sys.modules["cupy"]
    ember.set_default_device(None)
