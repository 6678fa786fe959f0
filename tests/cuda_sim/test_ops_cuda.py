"""The op table on ``device='cuda'`` through the CuPy stand-in: forward values (every dtype) and float32 gradients
against the same op on the CPU, sample for sample."""
import zlib

import numpy as np
import pytest

import ember
from tests.ops.op_db import OPS
from tests.ops.opinfo import assert_close, to_ember

def _rng(*key):
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


def _params(kind):
    return [pytest.param(op, d, id=f"{op.name}-{d}") for op in OPS if kind not in op.skips
            and (kind == "forward" or op.grad) for d in op.dtypes if kind == "forward" or d == "float32"]


class _OnCuda:
    """``ember`` for the table's lambdas, whose factory calls (``m.eye``, ``m.tensor``...) make tensors on cuda."""
    FACTORIES = {"tensor", "as_tensor", "eye", "zeros", "ones", "full", "arange", "linspace", "empty", "rand",
                 "randn", "randint"}

    def __getattr__(self, name):
        f = getattr(ember, name)
        if name not in self.FACTORIES:
            return f
        return lambda *a, **k: f(*a, **{"device": "cuda", **k})


CUDA_LIB = _OnCuda()


def _args(sample, device, requires_grad=False):
    def convert(a):
        t = to_ember(a)
        if isinstance(t, ember.Tensor):
            return t.to(device).requires_grad_(requires_grad and t.dtype.is_floating_point)
        if isinstance(t, (list, tuple)) and t and isinstance(t[0], ember.Tensor):
            return type(t)(x.to(device) for x in t)
        return t
    return [convert(a) for a in sample.args]


def _on_cpu(out):
    if isinstance(out, ember.Tensor):
        assert out.device.type == "cuda", f"a result on {out.device}"
        return out.cpu()
    if isinstance(out, (tuple, list)):
        return [_on_cpu(o) for o in out]
    return out


def _expected(out):
    """The CPU result in the form ``assert_close`` compares against (torch-like tensors through NumPy)."""
    import torch
    if isinstance(out, ember.Tensor):
        a = out.detach().numpy()
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16) if out.dtype is ember.bfloat16 \
            else torch.from_numpy(a.copy())
    if isinstance(out, (tuple, list)):
        return [_expected(o) for o in out]
    return out


@pytest.mark.parametrize("op,dtype", _params("forward"))
def test_forward_on_cuda(op, dtype):
    for sample in op.samples(dtype, _rng(op.name, dtype)):
        ember.manual_seed(0)
        try:
            expected = op.fn(ember, *_args(sample, "cpu"), **sample.kwargs)
        except Exception as e:
            with pytest.raises(type(e)):
                op.fn(CUDA_LIB, *_args(sample, "cuda"), **sample.kwargs)
            continue
        ember.manual_seed(0)
        actual = _on_cpu(op.fn(CUDA_LIB, *_args(sample, "cuda"), **sample.kwargs))
        rtol, atol = op.tolerance(dtype)
        assert_close(actual, _expected(expected), rtol, atol, f"{op.name} {dtype} {sample.name}")


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, ember.Tensor) and o.dtype.is_floating_point and o.requires_grad]


@pytest.mark.parametrize("op,dtype", _params("backward"))
def test_backward_on_cuda(op, dtype):
    for sample in op.samples(dtype, _rng(op.name, dtype, "bw")):
        grads = {}
        for device in ("cpu", "cuda"):
            args = _args(sample, device, requires_grad=True)
            outs = _float_outputs(op.fn(ember if device == "cpu" else CUDA_LIB, *args, **sample.kwargs))
            inputs = [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]
            if not outs or not inputs:
                break
            rng = _rng(op.name, sample.name, "grad")
            gos = [ember.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=device) for o in outs]
            grads[device] = ember.autograd.grad(outs, inputs, gos, allow_unused=True)
        if not grads:
            continue
        for i, (c, g) in enumerate(zip(grads["cpu"], grads["cuda"])):
            assert (c is None) == (g is None), f"{op.name} grad[{i}]: {c} on the CPU, {g} on cuda"
            if c is not None:
                rtol, atol = op.tolerance(dtype, for_grad=True)
                assert_close(_on_cpu(g), _expected(c), rtol, atol, f"{op.name} grad[{i}] {sample.name}")
