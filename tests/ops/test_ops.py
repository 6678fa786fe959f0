"""Runs every op in the table against torch: values, dtypes, gradients, and float64 gradcheck."""
import zlib

import numpy as np
import pytest
import torch

import ember
from .op_db import OPS
from .opinfo import assert_close, noncontiguous, to_ember, to_torch

FLOAT = ("float16", "bfloat16", "float32", "float64")


def _rng(*key):
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


def _params(kind):
    out = []
    for op in OPS:
        if kind in op.skips:
            continue
        if kind == "forward":
            out += [pytest.param(op, d, id=f"{op.name}-{d}") for d in op.dtypes]
        elif kind in ("backward",) and op.grad:
            out += [pytest.param(op, d, id=f"{op.name}-{d}") for d in op.dtypes if d in ("float32", "float64")]
        elif kind == "gradcheck" and op.grad and op.gradcheck and "float64" in op.dtypes:
            out.append(pytest.param(op, id=op.name))
        elif kind == "noncontig" and op.noncontig:
            d = next((d for d in op.dtypes if d == "float32"), op.dtypes[0])
            out.append(pytest.param(op, d, id=f"{op.name}-{d}"))
    return out


def _call(fn, lib, sample, convert, requires_grad=False):
    args = [convert(a, requires_grad) if isinstance(a, np.ndarray) and (not requires_grad or a.dtype.kind == "f")
            else convert(a, False) for a in sample.args]
    return args, fn(lib, *args, **sample.kwargs)


def _compare(op, dtype, sample, transform=lambda a: a):
    s = type(sample)(tuple(transform(a) if isinstance(a, np.ndarray) else a for a in sample.args),
                     sample.kwargs, sample.name)
    try:
        _, expected = _call(op.fn, torch, s, to_torch)
    except Exception as e:  # torch rejects it: ember must reject it the same way
        with pytest.raises(type(e)):
            _call(op.fn, ember, s, to_ember)
        return
    _, actual = _call(op.fn, ember, s, to_ember)
    rtol, atol = op.tolerance(dtype)
    assert_close(actual, expected, rtol, atol, f"{op.name} {dtype} {sample.name}", op.compare_dtype)


@pytest.mark.parametrize("op,dtype", _params("forward"))
def test_forward(op, dtype):
    samples = op.samples(dtype, _rng(op.name, dtype))
    assert samples, f"{op.name} has no samples for {dtype}"
    for sample in samples:
        _compare(op, dtype, sample)


@pytest.mark.parametrize("op,dtype", _params("noncontig"))
def test_noncontiguous(op, dtype):
    for sample in op.samples(dtype, _rng(op.name, dtype, "nc")):
        _compare(op, dtype, sample, noncontiguous)


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if hasattr(o, "dtype") and o.dtype.is_floating_point and o.requires_grad]


@pytest.mark.parametrize("op,dtype", _params("backward"))
def test_backward(op, dtype):
    checked = 0
    for sample in op.samples(dtype, _rng(op.name, dtype, "bw")):
        t_args, t_out = _call(op.fn, torch, sample, to_torch, requires_grad=True)
        t_outs = _float_outputs(t_out)
        t_inputs = [a for a in t_args if isinstance(a, torch.Tensor) and a.requires_grad]
        if not t_outs or not t_inputs:
            continue
        rng = _rng(op.name, sample.name, "grad")
        gos = [rng.standard_normal(tuple(o.shape)).astype(np.float64) for o in t_outs]
        t_grads = torch.autograd.grad(t_outs, t_inputs, [torch.from_numpy(g).to(o.dtype) for g, o in zip(gos, t_outs)],
                                      allow_unused=True)
        e_args, e_out = _call(op.fn, ember, sample, to_ember, requires_grad=True)
        e_outs = _float_outputs(e_out)
        e_inputs = [a for a in e_args if isinstance(a, ember.Tensor) and a.requires_grad]
        assert len(e_outs) == len(t_outs), f"{op.name}: {len(e_outs)} differentiable outputs, torch has {len(t_outs)}"
        e_grads = ember.autograd.grad(e_outs, e_inputs, [ember.tensor(g, dtype=o.dtype) for g, o in zip(gos, e_outs)],
                                      allow_unused=True)
        rtol, atol = op.tolerance(dtype, for_grad=True)
        for i, (eg, tg) in enumerate(zip(e_grads, t_grads)):
            if tg is None:
                assert eg is None or not np.any(eg.numpy()), f"{op.name}: grad of input {i} should be zero/None"
                continue
            assert eg is not None, f"{op.name} {sample.name}: no gradient for input {i}"
            assert_close(eg, tg, rtol, atol, f"{op.name} grad[{i}] {dtype} {sample.name}")
        checked += 1
    assert checked, f"{op.name}: no sample had a differentiable output"


@pytest.mark.parametrize("op", _params("gradcheck"))
def test_gradcheck(op):
    checked = 0
    for sample in op.samples("float64", _rng(op.name, "gc")):
        arrays = [a for a in sample.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        if not arrays or sum(a.size for a in arrays) > op.gradcheck_max:
            continue
        args = [ember.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                else to_ember(a) for a in sample.args]
        assert ember.autograd.gradcheck(lambda *xs: op.fn(ember, *xs, **sample.kwargs), tuple(args),
                                        eps=1e-6, atol=1e-5, rtol=1e-4)
        checked += 1
    assert checked, f"{op.name}: no sample small enough for gradcheck"
