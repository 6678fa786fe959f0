"""Helpers that run an ember nn function or module and its torch counterpart on the same data and compare
outputs and gradients (of inputs and parameters, under a random output gradient)."""
import re

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

TOL = {"float64": (1e-9, 1e-10), "float32": (2e-5, 2e-5), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


class Const:
    """Marks an array argument that is passed without requires_grad (targets, class weights, indices)."""

    def __init__(self, a):
        self.a = a


def _np_dtype(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def to_lib(a, lib, dtype=None, grad=False):
    """A NumPy array (or Const) as a tensor of ``lib``; float arrays in ``dtype``."""
    if isinstance(a, Const):
        return to_lib(a.a, lib, dtype, False)
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype.kind == "f" and dtype is not None:
        t = lib.tensor(a.astype(np.float64), dtype=getattr(lib, dtype))
    else:
        t = lib.tensor(a)
    if grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def as_np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        t = t.to_dense() if t.is_sparse else t
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().astype(np.float64)
    t = t.detach()
    t = t.to_dense() if t.is_sparse else t
    return (t.float() if t.dtype is ember.bfloat16 else t).numpy().astype(np.float64)


def close(actual, expected, dtype="float32", what="", tol=None):
    rtol, atol = tol or TOL[dtype]
    a, e = as_np(actual), as_np(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != torch's {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def check_fn(fn, *arrays, dtype="float32", tol=None, grad=True, seed=0, **kwargs):
    """Runs ``fn(F, *tensors, **kwargs)`` with ``F`` ember's and torch's ``nn.functional``: compares the outputs
    (values and dtype) and, with ``grad``, the gradients of the float inputs under a random output gradient."""
    te = [to_lib(a, ember, dtype, grad) for a in arrays]
    tt = [to_lib(a, torch, dtype, grad) for a in arrays]
    yt = fn(torch.nn.functional, *tt, **kwargs)
    ye = fn(ember.nn.functional, *te, **kwargs)
    close(ye, yt, dtype, "output", tol)
    assert ye.dtype.name == str(yt.dtype)[6:], (ye.dtype, yt.dtype)
    if not grad or not yt.requires_grad:
        return ye, yt
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    dt = [t for t in tt if isinstance(t, torch.Tensor) and t.requires_grad]
    de = [t for t in te if isinstance(t, ember.Tensor) and t.requires_grad]
    gt = torch.autograd.grad(yt, dt, to_lib(g, torch, str(yt.dtype)[6:]), allow_unused=True)
    ge = ember.autograd.grad(ye, de, to_lib(g, ember, ye.dtype.name), allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or not as_np(a).any(), f"grad {i}: torch has none"
            continue
        if a is None:
            a = ember.zeros(tuple(b.shape))
        close(a, b, dtype, f"grad of input {i}", tol and (tol[0] * 10, tol[1] * 10))
    return ye, yt


def check_module(tm, em, *arrays, dtype="float32", tol=None, steps=1, seed=0, train=True):
    """Copies torch module ``tm``'s state into ember module ``em``, runs both ``steps`` times (fresh inputs
    scaled from ``arrays``) and compares outputs, input and parameter gradients, and buffers after each step."""
    rng = np.random.default_rng(seed)
    tm.to(getattr(torch, dtype))
    em.to(getattr(ember, dtype))
    em.load_state_dict(tm.state_dict())
    tm.train(train)
    em.train(train)
    for step in range(steps):
        data = [a if step == 0 or not isinstance(a, np.ndarray) or a.dtype.kind != "f" else
                a * rng.uniform(0.5, 2) + rng.standard_normal() for a in arrays]
        te = [to_lib(a, ember, dtype, True) for a in data]
        tt = [to_lib(a, torch, dtype, True) for a in data]
        yt, ye = tm(*tt), em(*te)
        close(ye, yt, dtype, f"step {step} output", tol)
        if yt.requires_grad:
            g = rng.standard_normal(tuple(yt.shape))
            yt.backward(to_lib(g, torch, dtype))
            ye.backward(to_lib(g, ember, dtype))
            for i, (a, b) in enumerate(zip(te, tt)):
                if isinstance(b, torch.Tensor) and b.grad is not None:
                    close(a.grad, b.grad, dtype, f"step {step} grad of input {i}", tol)
            for (name, p), (_, q) in zip(tm.named_parameters(), em.named_parameters()):
                if p.grad is not None:
                    assert q.grad.is_sparse == p.grad.is_sparse, f"step {step} grad of {name}: layout"
                    close(q.grad, p.grad, dtype, f"step {step} grad of {name}", tol)
        for (name, b), (name2, c) in zip(tm.named_buffers(), em.named_buffers()):
            assert name == name2
            close(c, b, dtype, f"step {step} buffer {name}", tol)
        tm.zero_grad()
        em.zero_grad()
    return em


def same_error(fe, ft, match_message=True):
    """ember raises what torch raises: the same exception type and (with ``match_message``) message."""
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    if match_message:
        norm = lambda s: re.sub(r"\b(torch|ember)\.", "", str(s).split("\n")[0])  # torch may append a type dump
        assert norm(ee.value) == norm(te.value), (str(ee.value), str(te.value))
