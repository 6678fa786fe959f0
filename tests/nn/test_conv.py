"""Convolutions (conv1d/2d/3d, transposed, unfold/fold) and their modules against torch: outputs and gradients of
inputs, weights and biases, float64 gradchecks of the three convolution ops, errors, init and repr."""
import math

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck, gradgradcheck

from .torch_ref import check_fn, check_module, same_error

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")  # torch's note on its own kernels
rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape)


CONV = [  # (n, input shape, weight shape, bias, kwargs)
    (1, (2, 4, 9), (6, 2, 3), True, dict(stride=2, padding=1, groups=2)),
    (1, (3, 9), (4, 3, 4), False, dict(padding="same", dilation=2)),
    (2, (2, 3, 7, 8), (4, 3, 3, 3), True, {}),
    (2, (2, 4, 7, 6), (6, 2, 3, 2), True, dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    (2, (2, 4, 6, 7), (4, 4, 2, 3), True, dict(padding="same")),
    (2, (2, 4, 6, 7), (4, 4, 1, 1), False, dict(padding="valid")),
    (2, (3, 6, 5), (2, 3, 3, 3), True, dict(padding=1)),  # unbatched
    (2, (2, 4, 5, 5), (4, 1, 3, 3), True, dict(padding=1, groups=4)),  # depthwise
    (2, (0, 3, 5, 5), (2, 3, 3, 3), True, {}),  # empty batch
    (3, (1, 2, 5, 4, 6), (4, 1, 3, 2, 2), True, dict(stride=(1, 2, 1), padding=1, groups=2)),
    (3, (2, 4, 6, 5), (2, 2, 2, 3, 2), False, dict(dilation=(1, 2, 1))),  # unbatched
]


@pytest.mark.parametrize("n,xs,ws,bias,kw", CONV)
def test_conv_matches_torch(n, xs, ws, bias, kw):
    fn = f"conv{n}d"
    arrays = [rand(*xs), rand(*ws)] + ([rand(ws[0])] if bias else [])
    check_fn(lambda F, *a: getattr(F, fn)(*a, **kw), *arrays)
    check_fn(lambda F, *a: getattr(F, fn)(*a, **kw), *arrays, dtype="float64")


CONV_T = [  # (n, input shape, weight shape, bias, kwargs)
    (1, (2, 4, 5), (4, 3, 3), True, dict(stride=2, padding=2, output_padding=1)),
    (1, (4, 5), (4, 2, 2), False, {}),  # unbatched
    (2, (2, 4, 5, 4), (4, 3, 3, 2), True, dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2)),
    (2, (2, 4, 5, 4), (4, 3, 3, 2), False, dict(output_padding=1, dilation=2)),  # output_padding < dilation
    (2, (2, 4, 5, 4), (4, 3, 3, 2), True, dict(padding=(1, 0), groups=2, dilation=(2, 1))),
    (3, (1, 2, 3, 2, 3), (2, 2, 2, 3, 2), True, dict(stride=2, padding=(0, 1, 0))),
]


@pytest.mark.parametrize("n,xs,ws,bias,kw", CONV_T)
def test_conv_transpose_matches_torch(n, xs, ws, bias, kw):
    fn = f"conv_transpose{n}d"
    groups = kw.get("groups", 1)
    arrays = [rand(*xs), rand(*ws)] + ([rand(ws[1] * groups)] if bias else [])
    check_fn(lambda F, *a: getattr(F, fn)(*a, **kw), *arrays)
    check_fn(lambda F, *a: getattr(F, fn)(*a, **kw), *arrays, dtype="float64")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_conv_half(dtype):
    check_fn(lambda F, x, w, b: F.conv2d(x, w, b, padding=1), rand(2, 3, 5, 5), rand(4, 3, 3, 3), rand(4),
             dtype=dtype, tol=(2e-2, 5e-2) if dtype == "float16" else (5e-2, 2e-1))


def test_conv_keeps_float32_and_integer_inputs():
    x, w = ember.randn(2, 3, 5, 5, requires_grad=True), ember.randn(4, 3, 3, 3, requires_grad=True)
    y = ember.nn.functional.conv2d(x, w)
    y.backward(ember.ones_like(y))
    assert y.dtype is x.grad.dtype is w.grad.dtype is ember.float32
    xi, wi = np.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4), np.arange(2 * 3 * 2 * 2).reshape(2, 3, 2, 2) % 5
    check_fn(lambda F, x, w: F.conv2d(x, w, stride=2), xi, wi, grad=False)


def test_conv_noncontiguous_input():
    x = rand(2, 6, 5, 3).transpose(0, 3, 2, 1)  # (2, 3, 5, 6), strided
    check_fn(lambda F, x, w: F.conv2d(x.transpose(2, 3), w, padding=1), x, rand(4, 3, 3, 2))


def test_conv_gradcheck():
    x = ember.tensor(rand(1, 2, 5, 5), requires_grad=True)
    w = ember.tensor(rand(4, 1, 2, 3), requires_grad=True)
    b = ember.tensor(rand(4), requires_grad=True)
    F = ember.nn.functional
    for fn in (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
               lambda x, w, b: F.conv2d(x, w, b, padding=(1, 0), dilation=(2, 1), groups=2)):
        assert gradcheck(fn, (x, w, b))
        assert gradgradcheck(fn, (x, w, b))
    wt = ember.tensor(rand(2, 3, 2, 2), requires_grad=True)
    for fn in (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
               lambda x, w: F.conv_transpose2d(x, w, padding=1)):
        assert gradcheck(fn, (x, wt))
        assert gradgradcheck(fn, (x, wt))
    x1 = ember.tensor(rand(2, 4, 6), requires_grad=True)
    w1 = ember.tensor(rand(4, 2, 3), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1, groups=2), (x1, w1))
    x3 = ember.tensor(rand(1, 1, 3, 3, 4), requires_grad=True)
    w3 = ember.tensor(rand(2, 1, 2, 2, 2), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv3d(x, w, padding=(1, 0, 1)), (x3, w3))


@pytest.mark.parametrize("call", [
    lambda F, t: F.conv2d(t.randn(2, 3, 4), t.randn(1, 3, 2, 2)),
    lambda F, t: F.conv2d(t.randn(3, 4), t.randn(1, 3, 2, 2)),
    lambda F, t: F.conv2d(t.randn(1, 2, 3, 4, 5), t.randn(1, 3, 2, 2)),
    lambda F, t: F.conv1d(t.randn(3), t.randn(1, 3, 2)),
    lambda F, t: F.conv3d(t.randn(3, 4, 4), t.randn(1, 3, 2, 2, 2)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 5, 5)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), t.randn(2)),
    lambda F, t: F.conv2d(t.randn(1, 4, 4, 4), t.randn(2, 2, 2, 2), groups=3),
    lambda F, t: F.conv2d(t.randn(1, 4, 4, 4), t.randn(3, 2, 2, 2), groups=2),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), groups=0),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), stride=0),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), padding=-1),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), dilation=(1, 0)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), padding="same", stride=2),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), padding="foo"),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), stride=(1, 1, 1)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4).double(), t.randn(1, 3, 2, 2)),
    lambda F, t: F.conv2d(t.randn(1, 3, 4, 4), t.randn(1, 3, 2, 2), t.randn(1).double()),
    lambda F, t: F.conv_transpose2d(t.randn(1, 3, 4, 4), t.randn(2, 3, 2, 2)),
    lambda F, t: F.conv_transpose2d(t.randn(3, 4), t.randn(3, 1, 2, 2)),
    lambda F, t: F.conv_transpose2d(t.randn(1, 3, 4, 4), t.randn(3, 1, 2, 2), output_padding=2, stride=2),
    lambda F, t: F.conv_transpose1d(t.randn(1, 3, 4), t.randn(3, 1, 2), output_padding=2, stride=2),
    lambda F, t: F.conv_transpose2d(t.randn(1, 3, 1, 1), t.randn(3, 1, 2, 2), padding=3),
    lambda F, t: F.conv_transpose2d(t.randn(1, 3, 4, 4), t.randn(3, 1, 2, 2), bias=t.randn(3)),
])
def test_conv_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


# -- modules -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_module_padding_modes(mode):
    for padding in (1, (2, 1), "same"):
        tm = torch.nn.Conv2d(4, 6, (3, 2), padding=padding, padding_mode=mode, groups=2)
        check_module(tm, ember.nn.Conv2d(4, 6, (3, 2), padding=padding, padding_mode=mode, groups=2),
                     rand(2, 4, 6, 5))


def test_conv_modules_match_torch():
    check_module(torch.nn.Conv1d(3, 4, 3, stride=2, bias=False), ember.nn.Conv1d(3, 4, 3, stride=2, bias=False),
                 rand(2, 3, 9))
    check_module(torch.nn.Conv1d(3, 4, 3, padding=1, padding_mode="circular"),
                 ember.nn.Conv1d(3, 4, 3, padding=1, padding_mode="circular"), rand(3, 7))
    check_module(torch.nn.Conv3d(2, 4, 2, padding=(1, 0, 1)), ember.nn.Conv3d(2, 4, 2, padding=(1, 0, 1)),
                 rand(1, 2, 3, 4, 3))
    check_module(torch.nn.Conv3d(2, 4, 3, padding=1, padding_mode="replicate"),
                 ember.nn.Conv3d(2, 4, 3, padding=1, padding_mode="replicate"), rand(1, 2, 3, 4, 3))
    check_module(torch.nn.ConvTranspose1d(3, 4, 3, stride=2), ember.nn.ConvTranspose1d(3, 4, 3, stride=2),
                 rand(2, 3, 5))
    check_module(torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
                 ember.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), rand(2, 4, 3, 4))
    check_module(torch.nn.ConvTranspose3d(2, 2, 2, stride=2), ember.nn.ConvTranspose3d(2, 2, 2, stride=2),
                 rand(1, 2, 2, 3, 2))


def test_conv_transpose_output_size():
    tm, em = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1), ember.nn.ConvTranspose2d(4, 2, 3, stride=2,
                                                                                               padding=1)
    em.load_state_dict(tm.state_dict())
    x = rand(1, 4, 5, 5).astype(np.float32)
    for size in ([10, 10], [1, 2, 9, 10], (9, 9)):
        yt, ye = tm(torch.tensor(x), output_size=size), em(ember.tensor(x), output_size=size)
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    for size in ([20, 20], [1, 9, 9]):
        same_error(lambda: em(ember.tensor(x), output_size=size), lambda: tm(torch.tensor(x), output_size=size))


def test_conv_init_and_repr():
    ember.manual_seed(0)
    m = ember.nn.Conv2d(8, 16, 3, groups=2)
    bound = 1 / math.sqrt(4 * 9)  # kaiming_uniform(a=sqrt(5)) and the bias both give 1/sqrt(fan_in)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert w.shape == (16, 4, 3, 3) and b.shape == (16,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound and w.std() > bound / 2
    configs = [("Conv1d", (16, 33, 3), dict(stride=2)),
               ("Conv2d", (3, 4, (3, 2)), dict(stride=2, padding=1, dilation=2, bias=False, padding_mode="reflect")),
               ("Conv2d", (3, 6, 3), dict(padding="same", groups=3)),
               ("Conv3d", (2, 4, 3), dict(padding="valid")),
               ("ConvTranspose2d", (3, 4, 3), dict(stride=2, output_padding=1, dilation=2)),
               ("ConvTranspose1d", (4, 4, 2), dict(groups=2, bias=False))]
    for name, args, kw in configs:
        tm, em = getattr(torch.nn, name)(*args, **kw), getattr(ember.nn, name)(*args, **kw)
        assert repr(em) == repr(tm)
        assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
        assert em._reversed_padding_repeated_twice == list(tm._reversed_padding_repeated_twice)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv2d(4, 4, 3, groups=3),
    lambda nn: nn.Conv2d(4, 3, 3, groups=2),
    lambda nn: nn.Conv2d(4, 4, 3, groups=0),
    lambda nn: nn.Conv2d(4, 4, 3, padding="same", stride=2),
    lambda nn: nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect"),
])
def test_conv_module_errors(make):
    same_error(lambda: make(ember.nn), lambda: make(torch.nn))


def test_conv_module_set_errors():  # the messages print a set, whose order varies between processes
    with pytest.raises(ValueError, match="Invalid padding string 'full', should be one of {'(same|valid)', '"):
        ember.nn.Conv2d(4, 4, 3, padding="full")
    with pytest.raises(ValueError, match="padding_mode must be one of {.*}, but got padding_mode='foo'"):
        ember.nn.Conv2d(4, 4, 3, padding_mode="foo")


def test_conv_module_input_errors():
    same_error(lambda: ember.nn.Conv2d(3, 1, 2)(ember.randn(3, 4)), lambda: torch.nn.Conv2d(3, 1, 2)(torch.randn(3, 4)))
    same_error(lambda: ember.nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")(ember.randn(1, 4, 1, 5)),
               lambda: torch.nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")(torch.randn(1, 4, 1, 5)),
               match_message=False)


def test_lazy_conv():
    m = ember.nn.LazyConv2d(6, 3, padding=1)
    assert isinstance(m.weight, ember.nn.UninitializedParameter)
    y = m(ember.randn(2, 4, 5, 5))
    assert type(m) is ember.nn.Conv2d and m.in_channels == 4 and y.shape == (2, 6, 5, 5)
    assert m.weight.shape == (6, 4, 3, 3) and type(m.weight) is ember.nn.Parameter
    t = ember.nn.LazyConvTranspose1d(3, 2, stride=2)
    assert t(ember.randn(5, 7)).shape == (3, 14) and type(t) is ember.nn.ConvTranspose1d
    assert t.weight.shape == (5, 3, 2)
    lazy = ember.nn.LazyConv1d(4, 3)
    lazy.load_state_dict(torch.nn.Conv1d(2, 4, 3).state_dict())
    assert lazy.weight.shape == (4, 2, 3)


# -- unfold / fold -----------------------------------------------------------------------------------------------------
def test_unfold_fold_match_torch():
    kw = dict(dilation=(1, 2), padding=1, stride=(2, 1))
    check_fn(lambda F, x: F.unfold(x, (2, 3), **kw), rand(2, 3, 6, 7))
    check_fn(lambda F, x: F.unfold(x, 2), rand(3, 4, 4))  # unbatched
    check_fn(lambda F, x: F.fold(x, (5, 6), (2, 3), padding=1, stride=(2, 1)), rand(2, 12, 18))
    check_fn(lambda F, x: F.fold(x, 4, 2), rand(8, 9))
    check_module(torch.nn.Unfold((2, 3), **kw), ember.nn.Unfold((2, 3), **kw), rand(2, 3, 6, 7))
    check_module(torch.nn.Fold((4, 5), 2), ember.nn.Fold((4, 5), 2), rand(1, 12, 12))
    assert repr(ember.nn.Fold((4, 4), 2, padding=1)) == repr(torch.nn.Fold((4, 4), 2, padding=1))
    assert repr(ember.nn.Unfold(2, stride=2)) == repr(torch.nn.Unfold(2, stride=2))
    x = ember.tensor(rand(1, 2, 4, 4), requires_grad=True)
    F = ember.nn.functional
    assert gradcheck(lambda x: F.unfold(x, 2, padding=1, stride=2), (x,))
    c = ember.tensor(rand(1, 8, 9), requires_grad=True)
    assert gradgradcheck(lambda c: F.fold(c, (4, 4), 2), (c,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.unfold(t.randn(1, 3, 4, 4), 5),
    lambda F, t: F.unfold(t.randn(1, 3, 4, 4), 2, stride=0),
    lambda F, t: F.unfold(t.randn(1, 3, 4, 4), 2, padding=-1),
    lambda F, t: F.unfold(t.randn(1, 3, 4, 4), 2, dilation=0),
    lambda F, t: F.unfold(t.randn(1, 3, 4, 4), (2, 2, 2)),
    lambda F, t: F.fold(t.randn(1, 12, 8), (4, 4), 2),
    lambda F, t: F.fold(t.randn(1, 13, 9), (4, 4), 2),
    lambda F, t: F.fold(t.randn(1, 1, 12, 9), (4, 4), 2),
])
def test_unfold_fold_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))
