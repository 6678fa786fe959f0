"""Image augmentation and preprocessing written with tensor ops (torchvision-style functional code: resizing, warps,
colour jitter, histogram ops, mixing, patches) against torch."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

_RNG = np.random.default_rng(0)
_F32 = _RNG.random((2, 3, 16, 20)).astype(np.float32)
_U8 = _RNG.integers(0, 256, (2, 3, 16, 20), dtype=np.uint8)
_LOW = _RNG.integers(40, 120, (2, 3, 16, 20), dtype=np.uint8)  # a low-contrast image
_LOW[1, 2] = 9  # one constant channel


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _both(fn, *arrays, grad=False, rtol=1e-5, atol=1e-6):
    """``fn(lib, *tensors)`` in ember and torch: values, dtypes and, with ``grad``, the inputs' gradients for a random
    output gradient."""
    res = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        y = fn(lib, *xs)
        if grad:
            g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)
            y.backward(lib.tensor(g).to(y.dtype))
        res.append((y, [x.grad for x in xs if x.requires_grad]))
    (ye, ge), (yt, gt) = res
    _close(ye, yt, rtol, atol)
    for a, b in zip(ge, gt):
        _close(a, b, rtol, atol)


# -- resize: the Lanczos-3 filter ------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(7, 9), (1, 20), (5, 50), (40, 45), (16, 20)])
def test_lanczos_resize_float_and_uint8(size):
    """``mode='lanczos'`` (antialiased only) matches in float (values and gradients) and exactly in uint8."""
    def fn(lib, x):
        return lib.nn.functional.interpolate(x, size=size, mode="lanczos", antialias=True)
    _both(fn, _F32, grad=True, atol=2e-5)  # float32 sums of up to 18 taps, in another order
    _both(lambda lib, x: fn(lib, x.double()), _F32, rtol=1e-12, atol=1e-12)
    _both(fn, _U8, rtol=0, atol=0)


@pytest.mark.parametrize("kw", [dict(scale_factor=0.37), dict(scale_factor=(0.5, 1.7)),
                                dict(scale_factor=0.6, recompute_scale_factor=True)])
def test_lanczos_scale_factors_and_layout(kw):
    def fn(lib, x):
        return lib.nn.functional.interpolate(x, mode="lanczos", antialias=True, **kw)
    _both(fn, _F32, grad=True)
    _both(fn, _U8, rtol=0, atol=0)
    e = fn(ember, ember.tensor(_U8).contiguous(memory_format=ember.channels_last))
    t = fn(torch, torch.tensor(_U8).contiguous(memory_format=torch.channels_last))
    assert e.stride() == t.stride()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("call, err", [
    (lambda lib, x: lib.nn.functional.interpolate(x, (4, 4), mode="lanczos", antialias=True, align_corners=True),
     ValueError),
    (lambda lib, x: lib.nn.functional.interpolate(x, (4, 4), mode="lanczos"), ValueError),
    (lambda lib, x: lib.nn.functional.interpolate(x.half(), (4, 4), mode="lanczos", antialias=True),
     NotImplementedError),
    (lambda lib, x: lib.nn.functional.interpolate(x.int(), (4, 4), mode="lanczos", antialias=True),
     NotImplementedError),
    (lambda lib, x: lib.nn.functional.interpolate(x[0], 4, mode="lanczos"), NotImplementedError),
    (lambda lib, x: lib.nn.functional.interpolate(x[0], 4, mode="lanczos", antialias=True), ValueError),
])
def test_lanczos_errors(call, err):
    for lib in (ember, torch):
        with pytest.raises(err):
            call(lib, lib.tensor(_F32))


@pytest.mark.parametrize("mode, kw", [("bilinear", dict(antialias=True)), ("bicubic", dict(antialias=True)),
                                      ("bicubic", dict(align_corners=True)), ("nearest-exact", {})])
def test_uint8_resize_round_trip(mode, kw):
    """Down then up again, as multi-scale training does; uint8 stays uint8 and matches exactly."""
    def fn(lib, x):
        y = lib.nn.functional.interpolate(x, size=(9, 11), mode=mode, **kw)
        return lib.nn.functional.interpolate(y, size=(16, 20), mode=mode, **kw)
    _both(fn, _U8, rtol=0, atol=0)


@pytest.mark.parametrize("size", [(3, 3), (5, 7)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_area_resize_of_half_images_rounds_once(size, dtype):
    """Overlapping adaptive windows are averaged in float32 and rounded once."""
    def fn(lib, x):
        return lib.nn.functional.interpolate(x.to(getattr(lib, dtype)), size=size, mode="area")
    _both(fn, _F32 * 255, rtol=0, atol=0)


# -- warps ------------------------------------------------------------------------------------------------------------
def _affine_with_fill(lib, img, theta):
    """torchvision's grid transform: a ones channel sampled along marks the pixels to fill."""
    n, c, h, w = img.shape
    grid = lib.nn.functional.affine_grid(theta, [n, c, h, w], align_corners=False)
    img = lib.cat((img, lib.ones((n, 1, h, w), dtype=img.dtype)), dim=1)
    out = lib.nn.functional.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    out, mask = out[:, :-1], out[:, -1:].expand(-1, c, -1, -1)
    fill = lib.tensor([0.5, 0.2, 0.1], dtype=img.dtype).view(1, -1, 1, 1)
    return out * mask + (1.0 - mask) * fill


_THETA = np.array([[[0.9, 0.2, 0.1], [-0.15, 1.1, -0.05]], [[1.2, 0, 0.3], [0.1, 0.8, 0]]], np.float32)


def test_affine_with_fill_values_and_grads():
    _both(_affine_with_fill, _F32, _THETA, grad=True, atol=1e-5)
    # the grid matches exactly; bilinear sums may differ in their last bit, which moves a rare x.5 across rounding
    _both(lambda lib, x, t: lib.nn.functional.affine_grid(t, [2, 3, 16, 20], align_corners=False), _U8, _THETA,
          rtol=0, atol=0)
    _both(lambda lib, x, t: _affine_with_fill(lib, x.float(), t).round_().to(lib.uint8), _U8, _THETA, rtol=0,
          atol=1)


def _perspective(lib, img, c):
    """torchvision's perspective grid: two products with a homogeneous base grid, divided."""
    oh, ow = img.shape[-2:]
    theta1 = lib.tensor([[[c[0], c[1], c[2]], [c[3], c[4], c[5]]]], dtype=img.dtype)
    theta2 = lib.tensor([[[c[6], c[7], 1.0], [c[6], c[7], 1.0]]], dtype=img.dtype)
    base = lib.empty(1, oh, ow, 3, dtype=img.dtype)
    base[..., 0].copy_(lib.linspace(0.5, ow - 0.5, steps=ow))
    base[..., 1].copy_(lib.linspace(0.5, oh - 0.5, steps=oh).unsqueeze_(-1))
    base[..., 2].fill_(1)
    g1 = base.view(1, oh * ow, 3).bmm(theta1.transpose(1, 2) / lib.tensor([0.5 * ow, 0.5 * oh], dtype=img.dtype))
    g2 = base.view(1, oh * ow, 3).bmm(theta2.transpose(1, 2))
    grid = (g1 / g2 - 1.0).view(1, oh, ow, 2).expand(img.shape[0], oh, ow, 2)
    return lib.nn.functional.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def test_perspective_warp():
    _both(lambda lib, x: _perspective(lib, x, [1.05, 0.1, -1.0, 0.05, 0.95, 0.5, 0.001, -0.002]), _F32, grad=True,
          atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_elastic_displacement(mode, padding_mode):
    """Elastic transform: an identity grid plus a displacement field, every mode and padding mode."""
    disp = (np.random.default_rng(3).standard_normal((1, 16, 20, 2)) * 0.2).astype(np.float32)

    def fn(lib, x, d):
        h, w = x.shape[-2:]
        grid = lib.empty(1, h, w, 2)
        grid[..., 0].copy_(lib.linspace((-w + 1) / w, (w - 1) / w, w))
        grid[..., 1].copy_(lib.linspace((-h + 1) / h, (h - 1) / h, h).unsqueeze_(-1))
        grid = grid.add_(d).expand(x.shape[0], -1, -1, -1)
        return lib.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=False)
    _both(fn, _F32, disp, grad=True, rtol=1e-4, atol=1e-4)


def test_grid_sample_default_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.nn.functional.grid_sample(ember.rand(1, 1, 4, 4), ember.zeros(1, 2, 2, 2))
    assert len(w) == 1 and "align_corners=False" in str(w[0].message)
    assert w[0].filename == __file__


# -- colour -----------------------------------------------------------------------------------------------------------
def _gray(lib, image):
    r, g, b = image.unbind(dim=-3)
    l_img = r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114)
    if not image.is_floating_point():
        l_img.round_()
    return l_img.to(image.dtype).unsqueeze(dim=-3).expand(image.shape)


def _blend(lib, image1, image2, ratio):
    bound = 1.0 if image1.is_floating_point() else 255.0
    out = image1.mul(ratio).add_(image2, alpha=1.0 - ratio).clamp_(0, bound)
    return out.to(image1.dtype)


@pytest.mark.parametrize("op", [
    lambda lib, x: _blend(lib, x, _gray(lib, x), 1.6),  # saturation
    lambda lib, x: _blend(lib, x, lib.mean(_gray(lib, x).float(), dim=(-3, -2, -1), keepdim=True), 0.4),  # contrast
    lambda lib, x: x.mul(1.4).clamp_(0, 1.0 if x.is_floating_point() else 255.0).to(x.dtype),  # brightness
])
def test_color_jitter_blends(op):
    """uint8 blends truncate ``a * r + b * (1 - r)``, a fused multiply-add in float32: every pixel matches."""
    _both(op, _F32, grad=True)
    _both(op, _U8, rtol=0, atol=0)


def _rgb_to_hsv(lib, image):
    r, g, _ = image.unbind(dim=-3)
    minc, maxc = lib.aminmax(image, dim=-3)
    eqc = maxc == minc
    channels_range = maxc - minc
    ones = lib.ones_like(maxc)
    s = channels_range / lib.where(eqc, ones, maxc)
    divisor = lib.where(eqc, ones, channels_range).unsqueeze_(dim=-3)
    rc, gc, bc = ((maxc.unsqueeze(dim=-3) - image) / divisor).unbind(dim=-3)
    neq_r, eq_g = maxc != r, maxc == g
    hg = rc.add(2.0).sub_(bc).mul_(eq_g & neq_r)
    hr = bc.sub_(gc).mul_(~neq_r)
    hb = gc.add_(4.0).sub_(rc).mul_(neq_r.logical_and_(eq_g.logical_not_()))
    h = hr.add_(hg).add_(hb).mul_(1.0 / 6.0).add_(1.0).fmod_(1.0)
    return lib.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(lib, img):
    h, s, v = img.unbind(dim=-3)
    h6 = h.mul(6)
    i = lib.floor(h6)
    f = h6.sub_(i)
    i = i.to(dtype=lib.int32)
    sxf = s * f
    one_minus_s = 1.0 - s
    q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0)
    t = sxf.add_(one_minus_s).mul_(v).clamp_(0.0, 1.0)
    p = one_minus_s.mul_(v).clamp_(0.0, 1.0)
    i.remainder_(6)
    vpqt = lib.stack((v, p, q, t), dim=-3)
    select = lib.tensor([[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]], dtype=lib.long)[:, i]
    if select.ndim > 3:
        select = select.moveaxis(0, -3)
    return vpqt.gather(-3, select)


def _adjust_hue(lib, image, factor):
    u8 = image.dtype == lib.uint8
    hsv = _rgb_to_hsv(lib, image.float() / 255 if u8 else image)
    h, s, v = hsv.unbind(dim=-3)
    rgb = _hsv_to_rgb(lib, lib.stack(((h + factor).remainder(1.0), s, v), dim=-3))
    return rgb.mul(255).round_().to(lib.uint8) if u8 else rgb


@pytest.mark.parametrize("factor", [0.17, -0.4])
def test_hue_through_hsv(factor):
    _both(lambda lib, x: _adjust_hue(lib, x, factor), _F32)  # in place on unbound views: no graph
    _both(lambda lib, x: _adjust_hue(lib, x, factor), _U8, rtol=0, atol=0)
    _both(lambda lib, x: _adjust_hue(lib, x[0], factor), np.repeat(_U8[:, :1], 3, 1), rtol=0, atol=0)  # gray


def test_hsv_round_trip():
    _both(lambda lib, x: _hsv_to_rgb(lib, _rgb_to_hsv(lib, x)), _F32, atol=1e-6)


# -- histogram and bit ops ---------------------------------------------------------------------------------------------
def _equalize(lib, image):
    batch_shape = image.shape[:-2]
    flat = image.flatten(start_dim=-2).to(lib.long)
    hist = flat.new_zeros(batch_shape + (256,), dtype=lib.int32)
    hist.scatter_add_(dim=-1, index=flat, src=hist.new_ones(1).expand_as(flat))
    cum = hist.cumsum(dim=-1)
    index = cum.argmax(dim=-1)
    num_non_max = flat.shape[-1] - hist.gather(dim=-1, index=index.unsqueeze_(-1))
    step = num_non_max.div_(255, rounding_mode="floor")
    valid = step.ne(0).unsqueeze_(-1)
    cum = cum[..., :-1]
    cum.add_(step // 2).div_(step.clamp_(min=1), rounding_mode="floor").clamp_(0, 255)
    lut = lib.cat([cum.to(lib.uint8).new_zeros(1).expand(batch_shape + (1,)), cum.to(lib.uint8)], dim=-1)
    return lib.where(valid, lut.gather(dim=-1, index=flat).view_as(image), image)


def _equalize_by_bincount(lib, image):
    def channel(c):
        hist = lib.bincount(c.reshape(-1), minlength=256)
        step = lib.div(hist[hist != 0][:-1].sum(), 255, rounding_mode="floor")
        if step == 0:
            return c
        lut = lib.div(lib.cumsum(hist, 0) + lib.div(step, 2, rounding_mode="floor"), step, rounding_mode="floor")
        lut = lib.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
        return lut[c.to(lib.int64)].to(lib.uint8)
    return lib.stack([lib.stack([channel(c) for c in img]) for img in image])


@pytest.mark.parametrize("equalize", [_equalize, _equalize_by_bincount])
def test_equalize(equalize):
    _both(equalize, _U8, rtol=0, atol=0)
    _both(equalize, _LOW, rtol=0, atol=0)


def _autocontrast(lib, image):
    bound = 1.0 if image.is_floating_point() else 255.0
    x = image if image.is_floating_point() else image.to(lib.float32)
    minimum = x.amin(dim=(-2, -1), keepdim=True)
    maximum = x.amax(dim=(-2, -1), keepdim=True)
    eq = maximum == minimum
    inv_scale = maximum.sub_(minimum).mul_(1.0 / bound)
    minimum[eq] = 0.0
    inv_scale[eq] = 1.0
    return x.sub(minimum).div_(inv_scale).clamp_(0, bound).to(image.dtype)


def test_autocontrast_posterize_solarize():
    _both(_autocontrast, _F32)
    _both(_autocontrast, _LOW, rtol=0, atol=0)
    for bits in (1, 3, 8):
        _both(lambda lib, x: x & (((1 << bits) - 1) << (8 - bits)), _U8, rtol=0, atol=0)
        _both(lambda lib, x: x.mul(1 << bits).floor_().clamp_(0, (1 << bits) - 1).mul_(1.0 / (1 << bits)), _F32)
    _both(lambda lib, x: lib.where(x >= 128, x.bitwise_not(), x), _U8, rtol=0, atol=0)
    _both(lambda lib, x: (x >> 4) << 4, _U8, rtol=0, atol=0)
    _both(lambda lib, x: lib.histc(x.float(), bins=256, min=0, max=255), _U8, rtol=0, atol=0)


# -- blur, erasing, mixing -----------------------------------------------------------------------------------------------
def _gaussian_blur(lib, image, ks, sigma):
    def kernel1d(k, s):
        lim = (k - 1) / (2.0 * math.sqrt(2.0))
        return lib.softmax(lib.linspace(-lim, lim, steps=k).view(1, -1).div(s).pow(2).neg(), dim=1)
    dtype = image.dtype if image.is_floating_point() else lib.float32
    kernel = (kernel1d(ks[1], sigma[1]).T @ kernel1d(ks[0], sigma[0])).to(dtype)
    kernel = kernel.expand(image.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    x = lib.nn.functional.pad(image.to(dtype), [ks[0] // 2, ks[0] // 2, ks[1] // 2, ks[1] // 2], mode="reflect")
    x = lib.nn.functional.conv2d(x, kernel, groups=image.shape[-3])
    return x if image.is_floating_point() else x.round_().to(image.dtype)


def test_gaussian_blur_reflect_padded():
    _both(lambda lib, x: _gaussian_blur(lib, x, (5, 7), (1.1, 2.0)), _F32, grad=True)
    _both(lambda lib, x: _gaussian_blur(lib, x, (5, 7), (1.1, 2.0)), _U8, rtol=0, atol=0)


def test_random_erasing_and_cutmix():
    def erase(lib, x, v):
        x = x.clone()
        x[..., 2:7, 3:9] = v
        return x
    _both(lambda lib, x: erase(lib, x, lib.tensor([0.1, 0.2, 0.3]).view(3, 1, 1)), _F32, grad=True)
    _both(lambda lib, x: erase(lib, x, 127), _U8, rtol=0, atol=0)

    def cutmix(lib, x, lam=0.3172):
        h, w = x.shape[-2:]
        r = 0.5 * math.sqrt(1.0 - lam)
        rw, rh, cx, cy = int(r * w), int(r * h), lib.tensor(7), lib.tensor(9)
        x1, y1 = int(lib.clamp(cx - rw, min=0)), int(lib.clamp(cy - rh, min=0))
        x2, y2 = int(lib.clamp(cx + rw, max=w)), int(lib.clamp(cy + rh, max=h))
        out = x.clone()
        out[..., y1:y2, x1:x2] = x.roll(1, 0)[..., y1:y2, x1:x2]
        return out * float(1.0 - (x2 - x1) * (y2 - y1) / (w * h))
    _both(cutmix, _F32, grad=True)


def test_mixup_with_one_hot_targets():
    lam = 0.3172
    labels = np.array([1, 0])

    def fn(lib, x, y):
        y = lib.nn.functional.one_hot(y, num_classes=4).to(x.dtype)
        xm = x.roll(1, 0).mul_(1.0 - lam).add_(x.mul(lam))
        ym = y.roll(1, 0).mul_(1.0 - lam).add_(y.mul(lam))
        return lib.cat([xm.flatten(), ym.flatten()])
    _both(fn, _F32, labels, rtol=0, atol=0)
    e = ember.distributions.Beta(ember.tensor([0.4]), ember.tensor([0.4])).log_prob(ember.tensor([lam]))
    _close(e, torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4])).log_prob(torch.tensor([lam])))


# -- patches ---------------------------------------------------------------------------------------------------------------
def test_vit_patchify_and_back():
    p = 4
    _both(lambda lib, x: x.reshape(2, 3, 4, p, 5, p).permute(0, 2, 4, 3, 5, 1).reshape(2, 20, -1), _F32, grad=True)
    _both(lambda lib, x: lib.nn.functional.unfold(x, p, stride=p).transpose(1, 2), _F32, grad=True)
    _both(lambda lib, x: lib.nn.functional.fold(lib.nn.functional.unfold(x, 5, padding=2, stride=3), (16, 20), 5,
                                                padding=2, stride=3), _F32, grad=True)
    _both(lambda lib, x: x.unfold(2, p, p).unfold(3, p, p).contiguous(), _U8, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
def test_unfold_fold_reject_integer_images(dtype):
    for lib in (ember, torch):
        x = lib.tensor(_U8).to(getattr(lib, dtype))
        with pytest.raises(NotImplementedError):
            lib.nn.functional.unfold(x, 2, stride=2)
        with pytest.raises(NotImplementedError):
            lib.nn.functional.fold(x.reshape(2, 12, 80), (16, 20), 2, stride=2)
    _both(lambda lib, x: lib.nn.functional.unfold(x > 100, 2, stride=2), _U8, rtol=0, atol=0)  # bool is fine


# -- geometry ----------------------------------------------------------------------------------------------------------
def test_flips_rotations_crops_pads():
    for op in (lambda lib, x: lib.rot90(x, 1, [-2, -1]), lambda lib, x: x.rot90(-1, [2, 3]),
               lambda lib, x: x.flip(-1)[..., 2:10, 3:15], lambda lib, x: lib.fliplr(x[0, 0]),
               lambda lib, x: lib.nn.functional.pad(x, (1, 2, 3, 4), mode="constant", value=114),
               lambda lib, x: lib.nn.functional.pad(x, (3, 2, 1, 4), mode="reflect"),
               lambda lib, x: lib.nn.functional.pad(x, (-1, -2, 3, -4))):
        _both(op, _U8, rtol=0, atol=0)
        _both(op, _F32, grad=True)
