"""NumPy values in tensor code, as torch takes them: NumPy scalars are weak (as Python numbers) in type promotion,
NumPy arrays are tensors, NumPy integers are dims; and writes into read-only NumPy memory raise clearly."""
import warnings

import numpy as np
import pytest
import torch

import ember

SCALARS = [np.float64(2.5), np.float32(2.5), np.float16(2.5), np.int64(3), np.int32(3), np.uint8(3), np.bool_(True)]
DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("scalar", SCALARS, ids=[type(s).__name__ for s in SCALARS])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "rsub"])
def test_numpy_scalars_are_weak(op, dtype, scalar):
    def run(m):
        x = m.ones(3, dtype=getattr(m, dtype))
        f = {"add": lambda: x + scalar, "mul": lambda: x * scalar, "sub": lambda: x - scalar,
             "rsub": lambda: scalar - x}[op]
        try:
            return f()
        except (RuntimeError, TypeError) as e:
            return type(e)
    e, t = run(ember), run(torch)
    if isinstance(t, type):
        assert e is t
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.double().numpy(), t.double().numpy())


def test_scaled_attention_with_a_numpy_square_root_stays_float32():
    for m in (ember, torch):
        s = m.ones(2, 3, 3) / np.sqrt(4)
        assert s.dtype == m.float32
        assert m.nn.Linear(3, 2)(m.softmax(s, -1)).dtype == m.float32
        assert m.clamp(m.ones(2), np.float64(0), np.float64(1)).dtype == m.float32
        assert m.ones(2).pow(np.float64(2)).dtype == m.float32


def test_numpy_arrays_as_operands():
    a = np.arange(3.0)
    for m in (ember, torch):
        y = m.ones(3) * a
        assert isinstance(y, m.Tensor) and y.dtype == m.float64
        np.testing.assert_array_equal(y.numpy(), a)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "std", "logsumexp"])
def test_numpy_integers_as_dims(name):
    x = np.arange(12.0).reshape(3, 4)
    e = getattr(ember.tensor(x), name)(np.int64(1))
    t = getattr(torch.tensor(x), name)(np.int64(1))
    np.testing.assert_allclose(e.numpy(), t.numpy())
    e = ember.tensor(x).sum((np.int64(0), np.int64(1)))
    assert e.item() == 66.0


def test_writing_into_read_only_numpy_memory_raises_clearly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.from_numpy(np.frombuffer(bytes(8), np.uint8))
    for write in (lambda: t.add_(1), lambda: t.fill_(0), lambda: t.__setitem__(t > 8, 255)):
        with pytest.raises(RuntimeError, match="read-only"):
            write()
    with pytest.raises(RuntimeError, match="refers to a single memory location"):
        ember.ones(1, 4).expand(3, 4).add_(1)  # a broadcast view: torch's error


@pytest.mark.parametrize("name", ["flip", "roll", "squeeze", "movedim", "tile", "transpose", "cumsum", "argmax"])
def test_numpy_integers_as_dims_of_shape_ops(name):
    one = np.int64(1)
    call = {"flip": lambda t: t.flip(one), "roll": lambda t: t.roll(1, one), "squeeze": lambda t: t[:, None].squeeze(one),
            "movedim": lambda t: t.movedim(np.int64(0), one), "tile": lambda t: t.tile(np.int64(2)),
            "transpose": lambda t: t.transpose(np.int64(0), one), "cumsum": lambda t: t.cumsum(one),
            "argmax": lambda t: t.argmax(one)}[name]
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(call(ember.tensor(x)).numpy(), call(torch.tensor(x)).numpy())
