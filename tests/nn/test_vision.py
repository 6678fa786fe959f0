"""pad, interpolate/Upsample, grid_sample/affine_grid, pixel and channel shuffles and the padding modules against
torch: outputs, gradients, float64 gradchecks, errors and repr."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck

from .torch_ref import check_fn, check_module, same_error

rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape)


# -- pad ---------------------------------------------------------------------------------------------------------------
PADS = [((2, 3, 5), (1, 2), "constant"), ((2, 3, 5, 4), (1, 2, -1, 3), "constant"),
        ((2, 3), (-1, -1, 1, 0), "constant"), ((2, 3, 5), (2, 3), "reflect"), ((3, 5), (2, 3), "reflect"),
        ((2, 3, 5, 4), (1, 2, 3, 1), "reflect"),
        ((2, 3, 5, 4, 6), (1, 2, 3, 1, 0, 2), "reflect"), ((2, 3, 5), (2, 3), "replicate"),
        ((2, 3, 5, 4), (1, 2, 3, 1), "replicate"), ((2, 2, 3, 5, 4), (1, 2, 3, 1, 2, 2), "replicate"),
        ((2, 3, 5), (2, 3), "circular"), ((2, 3, 5, 4), (1, 2, 3, 4), "circular"),
        ((2, 3, 5, 4), (-1, 2, 3, -2), "circular"), ((2, 3, 4, 3, 2), (1, 2, 1, 1, 2, 0), "circular")]


@pytest.mark.parametrize("shape,pad,mode", PADS)
def test_pad_matches_torch(shape, pad, mode):
    check_fn(lambda F, x: F.pad(x, pad, mode), rand(*shape))


def test_pad_value_dtypes_and_gradcheck():
    check_fn(lambda F, x: F.pad(x, (1, 1), value=2.5), rand(2, 3))
    check_fn(lambda F, x: F.pad(x, (1, 2), value=2.5), rng.integers(0, 9, (2, 3)), grad=False)
    check_fn(lambda F, x: F.pad(x, (1, 2, 0, 1), mode="reflect"), rand(2, 3, 4), dtype="bfloat16")
    x = ember.tensor(rand(1, 2, 3, 4), requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda x: ember.nn.functional.pad(x, (2, 1, 1, 2), mode), (x,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (1,)),
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (1,) * 10),
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (1, 2), mode="reflect"),
    lambda F, t: F.pad(t.randn(4), (1, 2), mode="reflect"),
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (1, 2, 1, 1), mode="foo"),
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (1, 2, 1, 1), mode="reflect", value=2.0),
    lambda F, t: F.pad(t.randn(1, 2, 3, 4), (4, 2, 1, 1), mode="reflect"),
    lambda F, t: F.pad(t.randn(1, 0, 3), (1, 2), mode="reflect"),
    lambda F, t: F.pad(t.randn(1, 2, 3), (-5, 2)),
])
def test_pad_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


PAD_MODULES = [("ZeroPad1d", (1,)), ("ZeroPad2d", ((1, 0, 2, 1),)), ("ZeroPad3d", (1,)),
               ("ConstantPad1d", ((1, 2), 3.5)), ("ConstantPad2d", (1, -1.0)),
               ("ConstantPad3d", ((1, 0, 0, 1, 1, 1), 2.0)), ("ReflectionPad1d", (2,)),
               ("ReflectionPad2d", ((1, 2, 2, 1),)), ("ReflectionPad3d", (1,)), ("ReplicationPad1d", ((0, 3),)),
               ("ReplicationPad2d", (2,)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)), ("CircularPad1d", (2,)),
               ("CircularPad2d", ((1, 2, 3, 0),)), ("CircularPad3d", (1,))]


@pytest.mark.parametrize("name,args", PAD_MODULES)
def test_padding_modules(name, args):
    tm, em = getattr(torch.nn, name)(*args), getattr(ember.nn, name)(*args)
    assert repr(em) == repr(tm)
    n = int(name[-2])
    check_module(tm, em, rand(*(2, 3, 4, 5, 4)[:n + 2]))
    check_module(tm, em, rand(*(3, 4, 5, 4)[:n + 1]))  # unbatched


# -- interpolate -------------------------------------------------------------------------------------------------------
MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2), ("area", 2), ("linear", 1),
         ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)]
SIZES = [dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=7), dict(size=3),
         dict(size=1), dict(scale_factor=2.5, recompute_scale_factor=True)]


@pytest.mark.parametrize("mode,n", MODES)
def test_interpolate_matches_torch(mode, n):
    x = rand(*(2, 3, 5, 4, 3)[:n + 2])
    for kw in SIZES:
        for align in ((None,) if mode in ("nearest", "nearest-exact", "area") else (False, True)):
            kk = dict(kw, mode=mode) if align is None else dict(kw, mode=mode, align_corners=align)
            check_fn(lambda F, x: F.interpolate(x, **kk), x)
    check_fn(lambda F, x: F.interpolate(x, size=tuple(range(3, 3 + n)), mode=mode), x)
    check_fn(lambda F, x: F.interpolate(x, scale_factor=tuple(1.5 + i for i in range(n)), mode=mode), x,
             dtype="float64")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias(mode):
    x = rand(2, 3, 13, 17)
    for kw in (dict(size=(5, 7)), dict(scale_factor=0.3), dict(size=(20, 30)), dict(size=(13, 4))):
        for align in (False, True):
            for dtype in ("float32", "float64"):
                check_fn(lambda F, x: F.interpolate(x, mode=mode, antialias=True, align_corners=align, **kw), x,
                         dtype=dtype)
    same_error(lambda: ember.nn.functional.interpolate(ember.ones(1, 1, 4), size=2, mode="linear", antialias=True),
               lambda: torch.nn.functional.interpolate(torch.ones(1, 1, 4), size=2, mode="linear", antialias=True))


def test_interpolate_dtypes_and_gradcheck():
    check_fn(lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), rand(1, 2, 3, 4), dtype="float16")
    check_fn(lambda F, x: F.interpolate(x, scale_factor=2), rng.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8),
             grad=False)
    F = ember.nn.functional
    x = ember.tensor(rand(1, 2, 3, 4), requires_grad=True)
    for kw in (dict(mode="bilinear"), dict(mode="bilinear", align_corners=True), dict(mode="bicubic"),
               dict(mode="nearest"), dict(mode="area"), dict(mode="bilinear", antialias=True)):
        assert gradcheck(lambda x: F.interpolate(x, size=(5, 3), **kw), (x,))
    x3 = ember.tensor(rand(1, 1, 2, 3, 2), requires_grad=True)
    assert gradcheck(lambda x: F.interpolate(x, scale_factor=1.5, mode="trilinear"), (x3,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.interpolate(t.randn(1, 1, 4), scale_factor=2, mode="bilinear"),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), scale_factor=2, mode="linear"),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), scale_factor=2, mode="trilinear"),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), scale_factor=2, mode="nearest", align_corners=True),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), scale_factor=2, size=3),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4)),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), size=(2, 3, 4)),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), scale_factor=(2, 3, 4)),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), size=(2, 3), mode="foo"),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), size=(0, 3), mode="bilinear"),
    lambda F, t: F.interpolate(t.randn(1, 1, 4, 4), size=(2, 3), mode="bilinear", recompute_scale_factor=True),
])
def test_interpolate_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


def test_upsample_modules():
    for args, kw in (((), dict(scale_factor=2)), (((3, 5),), dict(mode="bilinear", align_corners=True)),
                     ((), dict(scale_factor=(2, 1.5), mode="bicubic")), ((4,), dict(mode="nearest-exact"))):
        tm, em = torch.nn.Upsample(*args, **kw), ember.nn.Upsample(*args, **kw)
        assert repr(em) == repr(tm)
        check_module(tm, em, rand(2, 3, 4, 5))
    for name, kw in (("UpsamplingNearest2d", dict(scale_factor=2)), ("UpsamplingBilinear2d", dict(size=(5, 7)))):
        tm, em = getattr(torch.nn, name)(**kw), getattr(ember.nn, name)(**kw)
        assert repr(em) == repr(tm)
        check_module(tm, em, rand(2, 3, 4, 5))


# -- grid_sample / affine_grid -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_matches_torch(mode, padding_mode, align):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
    check_fn(lambda F, x, g: F.grid_sample(x, g, **kw), rand(2, 3, 5, 6), rand(2, 4, 3, 2) * 0.8)
    if mode != "bicubic":  # 4-D only
        check_fn(lambda F, x, g: F.grid_sample(x, g, **kw), rand(1, 2, 3, 4, 5), rand(1, 2, 3, 2, 3) * 0.8)


def test_grid_sample_gradcheck_and_warning():
    F = ember.nn.functional
    x = ember.tensor(rand(1, 2, 3, 4), requires_grad=True)
    g = ember.tensor(rng.uniform(-0.9, 0.9, (1, 2, 3, 2)), requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        assert gradcheck(lambda x, g: F.grid_sample(x, g, padding_mode=pm, align_corners=False), (x, g))
    assert gradcheck(lambda x, g: F.grid_sample(x, g, mode="bicubic", align_corners=True), (x, g))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)


@pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid")
def test_affine_grid_matches_torch():
    for size in ((2, 3, 4, 5), (2, 3, 4, 5, 3), (1, 1, 1, 3)):
        n = len(size) - 2
        for align in (False, True):
            check_fn(lambda F, t: F.affine_grid(t, size, align_corners=align), rand(size[0], n, n + 1))
    t = ember.tensor(rand(2, 2, 3), requires_grad=True)
    assert gradcheck(lambda t: ember.nn.functional.affine_grid(t, (2, 1, 3, 2), align_corners=False), (t,))


@pytest.mark.parametrize("call", [
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4), t.randn(1, 3, 3, 3), align_corners=False),
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4), t.randn(2, 3, 3, 2), align_corners=False),
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4), t.randn(1, 3, 3, 2), mode="foo", align_corners=False),
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4), t.randn(1, 3, 3, 2), padding_mode="foo", align_corners=False),
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4, 4), t.randn(1, 3, 3, 3, 3), mode="bicubic", align_corners=False),
    lambda F, t: F.grid_sample(t.randn(1, 1, 4, 4), t.randn(1, 3, 3, 2).double(), align_corners=False),
    lambda F, t: F.affine_grid(t.randn(1, 3, 3), (1, 1, 4, 4), align_corners=False),
    lambda F, t: F.affine_grid(t.randn(1, 2, 3), (1, 4, 4), align_corners=False),
    lambda F, t: F.affine_grid(t.randn(1, 2, 3), (1, 1, 0, 4), align_corners=False),
])
def test_grid_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


# -- shuffles ----------------------------------------------------------------------------------------------------------
def test_shuffles_match_torch():
    check_fn(lambda F, x: F.pixel_shuffle(x, 2), rand(2, 3, 8, 3, 2))
    check_fn(lambda F, x: F.pixel_shuffle(x, 3), rand(9, 2, 2))
    check_fn(lambda F, x: F.pixel_unshuffle(x, 2), rand(2, 3, 2, 4, 6))
    check_fn(lambda F, x: F.channel_shuffle(x, 3), rand(2, 6, 2, 3))
    check_fn(lambda F, x: F.native_channel_shuffle(x, 2), rand(2, 4, 3), grad=False)
    for name, arg, shape in (("PixelShuffle", 2, (1, 8, 2, 3)), ("PixelUnshuffle", 2, (1, 2, 4, 6)),
                             ("ChannelShuffle", 2, (2, 4, 3, 3))):
        tm, em = getattr(torch.nn, name)(arg), getattr(ember.nn, name)(arg)
        assert repr(em) == repr(tm)
        check_module(tm, em, rand(*shape))


@pytest.mark.parametrize("call", [
    lambda F, t: F.pixel_shuffle(t.randn(4, 3), 2),
    lambda F, t: F.pixel_shuffle(t.randn(5, 3, 3), 2),
    lambda F, t: F.pixel_unshuffle(t.randn(4, 5, 4), 2),
    lambda F, t: F.pixel_unshuffle(t.randn(4, 4, 5), 2),
    lambda F, t: F.channel_shuffle(t.randn(1, 5, 3, 3), 2),
    lambda F, t: F.channel_shuffle(t.randn(1, 4), 2),
])
def test_shuffle_errors(call):
    same_error(lambda: call(ember.nn.functional, ember), lambda: call(torch.nn.functional, torch))


DOC_MODULES = ["ember.nn.functional.linear", "ember.nn.functional.conv", "ember.nn.functional.pooling",
               "ember.nn.functional.vision", "ember.nn.functional.upsampling", "ember.nn.modules.linear",
               "ember.nn.modules.lazy", "ember.nn.modules.conv", "ember.nn.modules.pooling", "ember.nn.modules.padding",
               "ember.nn.modules.pixelshuffle", "ember.nn.modules.upsampling", "ember.nn.modules.fold",
               "ember.nn.modules.channelshuffle"]


@pytest.mark.parametrize("name", DOC_MODULES)
def test_docstring_examples(name):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name), globs={"ember": ember, "F": ember.nn.functional},
                             optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0


def test_empty_batch():
    check_fn(lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), rand(0, 2, 3, 4))
    check_fn(lambda F, x, g: F.grid_sample(x, g, align_corners=False), rand(0, 2, 3, 4), rand(0, 2, 2, 2))
    check_fn(lambda F, x: F.pad(x, (1, 2), mode="reflect"), rand(0, 2, 3))
