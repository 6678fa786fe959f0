"""Top-level names that modern scripts touch: fill, constant_pad_nd, get_device, is_signed, set_anomaly_enabled,
cond, while_loop, Sym* types and OutOfMemoryError, against torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("value", [3, 2.5, "tensor"])
def test_fill_copies_and_gives_the_value_its_gradient(value):
    res = []
    for lib in (ember, torch):
        x = lib.arange(4.0, requires_grad=True)
        v = lib.tensor(1.5, requires_grad=True) if value == "tensor" else value
        y = lib.fill(x * 2, v)
        (y * lib.arange(4.0)).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), v.grad.item() if value == "tensor" else None))
        assert x.detach().tolist() == [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="0-dimension value tensor"):
            lib.fill(lib.ones(2), lib.ones(2))


@pytest.mark.parametrize("pad,value", [((1, 1), 5.0), ((0, 2, 1, 0), 0), ((-1, 1), -2.0)])
def test_constant_pad_nd(pad, value):
    x = np.arange(12.0).reshape(3, 4)
    e = ember.constant_pad_nd(ember.tensor(x), list(pad), value)
    t = torch.constant_pad_nd(torch.tensor(x), list(pad), value)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int8", "bool", "float32", "bfloat16"])
def test_is_signed_and_get_device(dtype):
    e, t = ember.zeros(1, dtype=getattr(ember, dtype)), torch.zeros(1, dtype=getattr(torch, dtype))
    assert ember.is_signed(e) == torch.is_signed(t) == e.is_signed()
    assert ember.get_device(e) == torch.get_device(t) == -1


def test_set_anomaly_enabled():
    try:
        for lib in (ember, torch):
            lib.set_anomaly_enabled(True, check_nan=False)
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            lib.set_anomaly_enabled(False)
            assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    finally:
        ember.set_anomaly_enabled(False)
        torch.set_anomaly_enabled(False)


@pytest.mark.parametrize("pred", [True, False, "tensor_true", "tensor_false"])
def test_cond_runs_the_branch_and_records_it(pred):
    res = []
    for lib in (ember, torch):
        p = lib.tensor(pred == "tensor_true") if isinstance(pred, str) else pred
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.cond(p, lambda a: a * 3, lambda a: a.sin(), (x,))
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="single-element tensor"):
            lib.cond(lib.tensor([True, False]), lambda a: a, lambda a: a, (lib.ones(1),))


def test_while_loop():
    out = []
    for lib in (ember, torch):
        i, x = lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (lib.tensor(0), lib.ones(2)))
        out.append((i.item(), x.tolist()))
    assert out[0] == out[1]


def test_sym_types_and_out_of_memory_error():
    for lib in (ember, torch):
        assert not isinstance(3, lib.SymInt) and not isinstance(3.0, lib.SymFloat) and not isinstance(True,
                                                                                                       lib.SymBool)
        assert lib.OutOfMemoryError is lib.cuda.OutOfMemoryError
        assert issubclass(lib.OutOfMemoryError, RuntimeError)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_need_a_size(factory):
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            getattr(lib, factory)()
        assert tuple(getattr(lib, factory)(size=()).shape) == () == tuple(getattr(lib, factory)([]).shape)


def test_cosine_embedding_loss_target_size_error():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"size of tensor a \(4\) must match the size of tensor b \(3\)"):
            lib.nn.functional.cosine_embedding_loss(lib.ones(3, 2), lib.ones(3, 2), lib.ones(4))
