"""CUDA: creation, transfers, ops and random streams on the GPU (skipped without one), and torch's device-mismatch
error, checked everywhere with a tensor that only claims to live on a GPU."""
import numpy as np
import pytest

import ember
from ember._device import device

cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CuPy and a CUDA GPU")


def _fake_cuda(t):
    """A CPU-backed tensor labelled cuda:0: enough to reach the dispatcher's device check, which runs first."""
    return ember.Tensor._make(t._data, t.dtype, device("cuda", 0))


def test_mixing_devices_raises_like_torch():
    a, b = ember.ones(2), _fake_cuda(ember.ones(2))
    for f in (lambda: a + b, lambda: b * a, lambda: ember.add(a, b), lambda: ember.mul(b, a)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                               "two devices, (cpu and cuda:0|cuda:0 and cpu)!"):
            f()


def test_generator_device_mismatch_raises():
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        ember._random._sampler(ember.Generator(), device("cuda", 0))


def test_cuda_queries_without_gpu():
    if ember.cuda.is_available():
        assert ember.cuda.device_count() >= 1
    else:
        assert ember.cuda.device_count() == 0
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):  # as torch's CPU builds
            ember.zeros(2, device="cuda")
        with pytest.raises(RuntimeError):
            ember.Generator("cuda")


@cuda
def test_creation_on_cuda():
    dev = ember.device("cuda:0")
    for t in (ember.zeros(2, 3, device="cuda"), ember.ones(2, device=dev, dtype=ember.int32),
              ember.full((2,), 3.5, device="cuda"), ember.arange(5, device="cuda"),
              ember.linspace(0, 1, 5, device="cuda"),
              ember.logspace(0, 1, 3, device="cuda"), ember.eye(3, device="cuda"), ember.tensor([1, 2], device="cuda"),
              ember.empty(3, device="cuda"), ember.zeros_like(ember.ones(2), device="cuda"),
              ember.empty_strided((2, 2), (1, 2), device="cuda"), ember.ones(2).new_zeros(3, device="cuda")):
        assert t.device == dev and t.is_cuda and t.get_device() == 0
    assert ember.full((2,), 3.5, device="cuda").tolist() == [3.5, 3.5]
    assert ember.arange(5, device="cuda").cpu().tolist() == list(range(5))
    z = ember.zeros_like(ember.ones(2, 2, device="cuda"))
    assert z.device == dev and z.tolist() == [[0., 0.], [0., 0.]]


@cuda
def test_transfers_and_ops_on_cuda():
    x = ember.arange(6.).reshape(2, 3)
    g = x.cuda()
    assert g.device == ember.device("cuda:0") and g.to("cpu").tolist() == x.tolist()
    assert (g * 2 + 1).cpu().tolist() == (x * 2 + 1).tolist()
    assert g.to(ember.float64).dtype is ember.float64 and g.to("cuda").device == g.device
    assert repr(ember.ones(2, device="cuda")) == "tensor([1., 1.], device='cuda:0')"
    assert np.asarray(g).tolist() == x.tolist()  # __array__ copies to the host
    with pytest.raises(TypeError):
        g.numpy()
    h = ember.zeros(2, 3, device="cuda").copy_(x)  # cross-device copy_
    assert h.device == g.device and h.tolist() == x.tolist()
    c = ember.zeros(2, 3).copy_(g)
    assert c.tolist() == x.tolist()
    w = ember.ones(3, requires_grad=True)
    y = w.cuda() * 3
    y.backward(ember.ones(3, device="cuda"))
    assert w.grad.device == ember.device("cpu") and w.grad.tolist() == [3., 3., 3.]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        g + x


@cuda
def test_random_on_cuda_is_reproducible():
    gen = ember.Generator("cuda")
    assert gen.device == ember.device("cuda:0")
    f = lambda: (ember.rand(100, device="cuda", generator=gen).tolist(),  # noqa: E731
                 ember.randint(0, 10, (20,), device="cuda", generator=gen).tolist(),
                 ember.randperm(10, device="cuda", generator=gen).tolist(),
                 ember.randn(10, device="cuda", generator=gen).tolist())
    gen.manual_seed(3)
    a = f()
    gen.manual_seed(3)
    assert f() == a
    state = gen.get_state()
    b = f()
    gen.set_state(state)
    assert f() == b
    u = ember.rand(20000, device="cuda").cpu().numpy()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    m = ember.multinomial(ember.tensor([0.2, 0.0, 0.8], device="cuda"), 2000, True)
    assert m.device.type == "cuda" and 1 not in m.cpu().tolist()
    assert sorted(ember.multinomial(ember.ones(5, device="cuda"), 5).cpu().tolist()) == list(range(5))
    assert ember.bernoulli(ember.full((10,), 0.5, device="cuda")).device.type == "cuda"
    assert ember.empty(10, device="cuda").normal_().device.type == "cuda"
    ember.manual_seed(1)
    x = ember.rand(5, device="cuda").tolist()
    ember.cuda.manual_seed(1)
    assert ember.rand(5, device="cuda").tolist() == x
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
        ember.rand(2, generator=gen)


@cuda
def test_dlpack_with_cupy():
    import cupy
    a = cupy.arange(4.)
    e = ember.from_dlpack(a)
    assert e.device.type == "cuda"
    e.fill_(2.0)
    assert a.tolist() == [2.0] * 4
    b = cupy.from_dlpack(ember.ones(3, device="cuda"))
    assert b.tolist() == [1.0] * 3
