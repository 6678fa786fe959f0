"""Idioms of PyTorch's official tutorials (What is torch.nn really?, Extending PyTorch, Forward-mode AD) against
torch."""
import numpy as np
import pytest
import torch

import ember
import ember.autograd.forward_ad as fwAD


def _pair(shape, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


def test_range_index_picks_log_probs():
    """What is torch.nn really?: ``-input[range(target.shape[0]), target].mean()`` as the NLL loss."""
    (pe, pt), y = _pair((6, 4)), np.array([0, 3, 1, 1, 2, 0])
    pe.requires_grad_(), pt.requires_grad_()
    le = -pe[range(y.shape[0]), ember.tensor(y)].mean()
    lt = -pt[range(y.shape[0]), torch.tensor(y)].mean()
    le.backward(), lt.backward()
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-6)
    np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy())


def test_range_index_reads_and_writes_rows():
    e, t = ember.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(e[range(1, 3)].numpy(), t[range(1, 3)].numpy())
    assert tuple(e[range(0)].shape) == tuple(t[range(0)].shape) == (0, 4)
    e[range(0, 3, 2)] = 0
    t[range(0, 3, 2)] = 0
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_numpy_of_requires_grad_tensor_under_no_grad():
    """torch refuses ``.numpy()`` of a tensor requiring grad only while grad mode is on."""
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            x.numpy()
        with lib.no_grad():
            assert x.numpy().tolist() == [1.0, 1.0]
            assert np.asarray(x).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("lib", [ember, torch])
def test_mark_dirty_through_numpy_invalidates_saved_input(lib):
    """Extending PyTorch: a forward that edits its input through ``x.numpy()`` and marks it dirty."""

    class Inplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.numpy()[...] += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    a = lib.tensor(1., requires_grad=True, dtype=lib.double).clone()
    b = a * a
    assert Inplace.apply(a).item() == 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.backward()


def _exp_jvp_only(lib):
    """The Forward-mode AD tutorial's Function: ``forward`` and ``jvp``, no ``backward``."""

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    return Fn


def test_custom_function_jvp_only_forward_ad():
    (pe, pt), (te, tt) = _pair((3, 4)), _pair((3, 4), seed=1)
    fe, ft = _exp_jvp_only(ember), _exp_jvp_only(torch)
    with fwAD.dual_level():
        out_e = fwAD.unpack_dual(fe.apply(fwAD.make_dual(pe, te) * 2)).tangent
    with torch.autograd.forward_ad.dual_level():
        out_t = torch.autograd.forward_ad.unpack_dual(ft.apply(torch.autograd.forward_ad.make_dual(pt, tt) * 2)).tangent
    np.testing.assert_allclose(out_e.numpy(), out_t.numpy(), rtol=1e-5, atol=1e-6)


def _scale(lib):
    """A ``setup_context``-style Function whose ``jvp`` reads ``save_for_forward`` tensors; ``s`` has no tangent."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(x, s):
            return x * s.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(*inputs)

        @staticmethod
        def jvp(ctx, xt, st):
            x, s = ctx.saved_tensors
            return xt * s.sin() + st * x * s.cos()

    return Scale


def test_custom_function_save_for_forward_func_jvp():
    (xe, xt), (se, st), (ve, vt) = _pair(5), _pair(5, seed=1), _pair(5, seed=2)
    se_fn, st_fn = _scale(ember), _scale(torch)
    _, je = ember.func.jvp(lambda x: se_fn.apply(x, se), (xe,), (ve,))
    _, jt = torch.func.jvp(lambda x: st_fn.apply(x, st), (xt,), (vt,))
    np.testing.assert_allclose(je.numpy(), jt.numpy(), rtol=1e-5, atol=1e-6)


def test_custom_function_jvp_only_gets_backward_by_transposition():
    """torch refuses backward without ``backward``; ember transposes the linear ``jvp``: check against calculus."""
    (x, _), (s, _), (g, _) = _pair(5, dtype=np.float64), _pair(5, seed=1, dtype=np.float64), _pair(5, seed=2)
    x.requires_grad_(), s.requires_grad_()
    out = _scale(ember).apply(x, s)
    gx, gs = ember.autograd.grad(out, (x, s), g.double())
    np.testing.assert_allclose(gx.numpy(), (g.double() * s.sin()).detach().numpy())
    np.testing.assert_allclose(gs.numpy(), (g.double() * x * s.cos()).detach().numpy())
    assert ember.autograd.gradcheck(_scale(ember).apply, (x, s))
