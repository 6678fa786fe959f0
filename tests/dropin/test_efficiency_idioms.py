"""Training-efficiency and quantization-aware idioms (QAT fake quantization, pruning, AMP, EMA, gradient tricks)
against torch."""
import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-6, atol=1e-7):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=rtol, atol=atol)


def _x(shape, seed=0, scale=3.0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale
    x.flat[:6] = [0.05, 0.15, 0.25, 0.35, -0.25, 1e4]  # ties of round-half-even and one far outside the range
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("tensor_qparams", [False, True])
def test_fake_quantize_per_tensor_affine(dtype, tensor_qparams):
    """QAT activations: values and the straight-through gradient, masked outside ``[quant_min, quant_max]``."""
    x, g = _x((4, 5)), np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        scale, zp = (lib.tensor(0.1), lib.tensor(3, dtype=lib.int32)) if tensor_qparams else (0.1, 3)
        y = lib.fake_quantize_per_tensor_affine(xt, scale, zp, -128, 127)
        y.backward(lib.tensor(g).to(y.dtype))
        res.append((y, xt.grad))
    assert res[0][0].dtype == ember.float64 if dtype == "float64" else str(res[0][0].dtype).endswith(dtype)
    _close(res[0][0], res[1][0], rtol=0, atol=0)
    _close(res[0][1], res[1][1], rtol=0, atol=0)


@pytest.mark.parametrize("zp_dtype", ["int32", "float32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_fake_quantize_per_channel_affine(zp_dtype, axis):
    """Per-channel weight fake quantization; a float zero point is added before rounding, an integer one after."""
    x, g = _x((3, 4, 2)), np.random.default_rng(2).standard_normal((3, 4, 2)).astype(np.float32)
    n = x.shape[axis]
    scale = np.array([0.1, 0.3, 0.05, 0.2][:n], np.float32)
    zp = np.array([0, 1.5, -2, 3][:n]) if zp_dtype == "float32" else np.array([0, 1, -2, 3][:n])
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.fake_quantize_per_channel_affine(xt, lib.tensor(scale), lib.tensor(zp, dtype=getattr(lib, zp_dtype)),
                                                 axis, -8, 7)
        y.backward(lib.tensor(g))
        res.append((y, xt.grad))
    _close(res[0][0], res[1][0], rtol=0, atol=0)
    _close(res[0][1], res[1][1], rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fake_quantize_per_tensor_affine(x, 0.1, 0, 10, 5),
    lambda lib, x: lib.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255),
    lambda lib, x: lib.fake_quantize_per_tensor_affine(x.long(), 0.1, 0, 0, 255),
    lambda lib, x: lib.fake_quantize_per_tensor_affine(x, lib.tensor(0.1, requires_grad=True), lib.tensor(0), 0, 9),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4), lib.zeros(4, dtype=lib.int32), 2, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4), lib.zeros(4, dtype=lib.int32), -1, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4), lib.zeros(3, dtype=lib.int32), 1, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(3), lib.zeros(3, dtype=lib.int32), 1, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4), lib.zeros(4, dtype=lib.int64), 1, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4).double(), lib.zeros(4), 1, 0, 255),
    lambda lib, x: lib.fake_quantize_per_channel_affine(x, lib.ones(4), lib.full((4,), 300, dtype=lib.int32), 1, 0,
                                                        255),
])
def test_fake_quantize_argument_checks(call):
    """torch's checks, with its exception types."""
    with pytest.raises(Exception) as want:
        call(torch, torch.ones(3, 4))
    with pytest.raises(type(want.value)):
        call(ember, ember.ones(3, 4))


def test_first_grad_obeys_the_leaf_layout():
    """A Conv2d weight's ``.grad`` is contiguous (``torch.cat([p.grad.view(-1) ...])`` flattens gradients), a
    channels_last weight's is channels_last, as torch's AccumulateGrad lays them out."""
    t = torch.nn.Conv2d(3, 4, 3)
    e = ember.nn.Conv2d(3, 4, 3)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    for fmt in ("contiguous_format", "channels_last"):
        for m, lib in ((e, ember), (t, torch)):
            m.to(memory_format=getattr(lib, fmt)).zero_grad()
            m(lib.tensor(x)).square().sum().backward()
        assert e.weight.grad.stride() == t.weight.grad.stride()
        flat = "view" if fmt == "contiguous_format" else "reshape"
        _close(ember.cat([getattr(p.grad, flat)(-1) for p in e.parameters()]),
               torch.cat([getattr(p.grad, flat)(-1) for p in t.parameters()]), rtol=1e-5, atol=1e-5)
    seen = []  # what a hook on a (contiguous) weight receives: a contiguous gradient, as torch's
    for m, lib in ((e, ember), (t, torch)):
        m.to(memory_format=lib.contiguous_format)
        handle = m.weight.register_hook(lambda g: seen.append(tuple(g.stride())))
        m(lib.tensor(x)).sum().backward()
        handle.remove()
    assert seen[0] == seen[1] == tuple(t.weight.stride())


def test_convert_conv2d_weight_memory_format():
    """Only convolution weights go channels_last; the network's outputs are unchanged."""
    res = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.ConvTranspose2d(4, 2, 3), lib.nn.Flatten(),
                              lib.nn.Linear(72, 2))
        lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
        res.append([p.stride() for p in m.parameters()])
    assert res[0] == res[1]


def test_checkpoint_context_fn_and_selective_policy():
    """Selective activation checkpointing: ``context_fn`` gives the contexts of the forward run and of the
    recomputation; ``create_selective_checkpoint_contexts`` with a ``CheckpointPolicy`` function is accepted."""
    import contextlib
    import functools
    import ember.utils.checkpoint
    import torch.utils.checkpoint
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for lib in (ember, torch):
        cp = lib.utils.checkpoint
        seen = []

        @contextlib.contextmanager
        def entered(name):
            seen.append(name)
            yield

        xt = lib.tensor(x, requires_grad=True)
        y = cp.checkpoint(lib.sin, xt, use_reentrant=False,
                          context_fn=lambda: (entered("forward"), entered("recompute")))
        assert seen == ["forward"]
        y.sum().backward()
        assert seen == ["forward", "recompute"]
        policy = functools.partial(cp.create_selective_checkpoint_contexts,
                                   lambda ctx, op, *a, **k: cp.CheckpointPolicy.PREFER_RECOMPUTE)
        xt.grad = None
        cp.checkpoint(lib.sin, xt, use_reentrant=False, context_fn=policy).sum().backward()
        _close(xt.grad, torch.tensor(np.cos(x)), rtol=1e-6, atol=1e-6)
