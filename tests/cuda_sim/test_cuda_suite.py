"""``tests/tensor/test_cuda.py``, the real-GPU tests, run on the stand-in."""
import pytest

from tests.tensor import test_cuda

NAMES = sorted(n for n in dir(test_cuda) if n.startswith("test_"))


@pytest.mark.parametrize("name", NAMES)
def test_real_gpu_suite(name):
    getattr(test_cuda, name)()
