"""Detection, segmentation and keypoint code written without torchvision (box utilities, NMS, anchors, matching,
focal / Dice / segmentation losses, ROI align with grid_sample, resizing, heatmap decoding, mIoU metrics) against
torch."""
import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=rtol, atol=atol)


def _both(fn, **tol):
    """Runs ``fn(lib)`` (a list of tensors) under ember and torch and compares them pairwise."""
    res = [fn(lib) for lib in (ember, torch)]
    assert len(res[0]) == len(res[1])
    for e, t in zip(*res):
        _close(e, t, **tol)


def _boxes(n, seed):
    r = np.random.default_rng(seed)
    xy, wh = r.uniform(0, 50, (n, 2)), r.uniform(1, 30, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def _giou(lib, b1, b2):
    area1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    area2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    wh = (lib.min(b1[:, None, 2:], b2[:, 2:]) - lib.max(b1[:, None, :2], b2[:, :2])).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    hull = (lib.max(b1[:, None, 2:], b2[:, 2:]) - lib.min(b1[:, None, :2], b2[:, :2])).clamp(min=0)
    area = hull[:, :, 0] * hull[:, :, 1]
    return inter / union, inter / union - (area - union) / area


def test_box_iou_giou_and_hungarian_cost():
    """DETR's box utilities and matching cost: unbind/stack conversions, broadcast IoU/GIoU, cdist(p=1), gradients."""
    g = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)

    def run(lib):
        logits = lib.tensor(np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32), requires_grad=True)
        boxes = lib.tensor(np.random.default_rng(2).uniform(0.2, 0.6, (6, 4)).astype(np.float32), requires_grad=True)
        tgt = lib.tensor(_boxes(4, 5) / 80)
        x0, y0, x1, y1 = tgt.unbind(-1)
        tgt_cxcywh = lib.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)
        cx, cy, w, h = boxes.unbind(-1)
        pred = lib.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)
        iou, giou = _giou(lib, pred, tgt)
        cost = 5 * lib.cdist(boxes, tgt_cxcywh, p=1) - logits.softmax(-1)[:, lib.tensor([1, 3, 3, 0])] - 2 * giou
        (cost * lib.tensor(g)).sum().backward()
        vals, idx = iou.max(dim=1)
        return [cost, iou, vals, idx, logits.grad, boxes.grad]

    _both(run)


def test_nms_loop_and_batched_offsets():
    """A pure-torch NMS: argsort(descending), boolean suppression, nonzero(as_tuple=False).squeeze(1), int64 keep."""
    bx = np.concatenate([_boxes(7, 1), _boxes(7, 1) + 1.5, _boxes(10, 5)])
    sc = np.random.default_rng(4).uniform(0, 1, len(bx)).astype(np.float32)
    cls = np.random.default_rng(5).integers(0, 3, len(bx))

    def nms(lib, boxes, scores, thr):
        order, keep = scores.argsort(descending=True), []
        areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            rest = order[1:]
            wh = (lib.min(boxes[i, 2:], boxes[rest, 2:]) - lib.max(boxes[i, :2], boxes[rest, :2])).clamp(min=0)
            inter = wh[:, 0] * wh[:, 1]
            iou = inter / (areas[i] + areas[rest] - inter)
            order = rest[(iou <= thr).nonzero(as_tuple=False).squeeze(1)]
        return lib.stack(keep) if keep else lib.empty(0, dtype=lib.long)

    def run(lib):
        b, s, c = lib.tensor(bx), lib.tensor(sc), lib.tensor(cls)
        offsets = c.to(b) * (b.max() + 1)
        return [nms(lib, b, s, 0.5), nms(lib, b + offsets[:, None], s, 0.5), nms(lib, b[:0], s[:0], 0.5)]

    _both(run)


def test_anchor_grid_and_target_assignment():
    """Anchors from meshgrid (both indexings), a Faster R-CNN style matcher (max over dims, low-quality matches),
    one-hot targets by scatter_ / index_put_(accumulate=True) / scatter_reduce."""

    def run(lib):
        ratios, scales = lib.tensor([0.5, 1.0, 2.0]), lib.tensor([8., 16.])
        hr = lib.sqrt(ratios)
        ws, hs = (scales[None] / hr[:, None]).view(-1), (scales[None] * hr[:, None]).view(-1)
        base = (lib.stack([-ws, -hs, ws, hs], dim=1) / 2).round()
        out = []
        for indexing in ("ij", "xy"):
            sy, sx = lib.meshgrid(lib.arange(0, 3.) * 16, lib.arange(0, 4.) * 16, indexing=indexing)
            shifts = lib.stack((sx.reshape(-1), sy.reshape(-1), sx.reshape(-1), sy.reshape(-1)), dim=1)
            out.append((shifts.view(-1, 1, 4) + base.view(1, -1, 4)).reshape(-1, 4))
        anchors = out[0][::5].clamp(min=0) + 3
        gt = lib.tensor(_boxes(4, 8) / 2)
        q = _giou(lib, gt, anchors)[0]  # (G, A)
        vals, matches = q.max(dim=0)
        all_matches = matches.clone()
        matches[vals < 0.3] = -1
        matches[(vals >= 0.3) & (vals < 0.5)] = -2
        pairs = lib.where(q == q.max(dim=1)[0][:, None])
        matches[pairs[1]] = all_matches[pairs[1]]
        labels = lib.tensor([1, 2, 3, 4])[matches.clamp(min=0)]
        labels[matches < 0] = 0
        n = labels.numel()
        onehot = lib.zeros(n, 5).scatter_(1, labels.unsqueeze(1), 1.0)
        counts = lib.zeros(5).index_put_((labels,), lib.ones(n), accumulate=True)
        best = lib.zeros(4).scatter_reduce(0, all_matches, vals, reduce="amax", include_self=False)
        return out + [vals, matches, labels, onehot, counts, best, pairs[0], pairs[1]]

    _both(run)


def test_focal_dice_and_segmentation_cross_entropy():
    """RetinaNet's sigmoid focal loss, a multi-class Dice loss with ignored pixels, and cross_entropy on (N, C, H, W)
    with ignore_index=255, class weights and label_smoothing: values and input gradients."""
    r = np.random.default_rng(12)
    xs = r.standard_normal((2, 4, 5, 6)).astype(np.float32)
    tg = r.integers(0, 4, (2, 5, 6))
    tg[0, 1:3] = 255
    bt = (r.uniform(0, 1, (2, 4, 5, 6)) > 0.7).astype(np.float32)

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor(xs, requires_grad=True)
        t = lib.tensor(bt)
        p = lib.sigmoid(x)
        ce = F.binary_cross_entropy_with_logits(x, t, reduction="none")
        p_t = p * t + (1 - p) * (1 - t)
        focal = ((0.25 * t + 0.75 * (1 - t)) * ce * (1 - p_t).pow(2.0)).sum() / t.sum()
        target = lib.tensor(tg)
        valid = target != 255
        onehot = F.one_hot(target.masked_fill(~valid, 0), 4).permute(0, 3, 1, 2).float() * valid.unsqueeze(1)
        probs = F.softmax(x, dim=1) * valid.unsqueeze(1)
        dice = 1 - ((2 * (probs * onehot).sum((0, 2, 3)) + 1) / ((probs + onehot).sum((0, 2, 3)) + 1)).mean()
        seg = F.cross_entropy(x, target, weight=lib.tensor([0.5, 1., 2., 1.5]), ignore_index=255,
                              label_smoothing=0.1)
        (focal + dice + seg).backward()
        return [focal, dice, seg, x.grad]

    _both(run)


def test_uint8_spatial_targets_are_rejected():
    """nll_loss2d takes Long targets only: a uint8 mask needs .long() (a (N, C) input accepts Byte)."""
    for lib in (ember, torch):
        F = lib.nn.functional
        with pytest.raises(RuntimeError, match="Long"):
            F.cross_entropy(lib.zeros(2, 3, 4, 4), lib.zeros(2, 4, 4, dtype=lib.uint8))
        with pytest.raises(RuntimeError, match="Long"):
            F.nll_loss(lib.zeros(2, 3, 4), lib.zeros(2, 4, dtype=lib.uint8))
        assert F.cross_entropy(lib.zeros(2, 3), lib.zeros(2, dtype=lib.uint8)).item() == pytest.approx(np.log(3))


def _roi_align(lib, feat, rois, size, scale, ratio=2):
    """ROI align with grid_sample: ``ratio``**2 bilinear samples per bin, averaged by avg_pool2d."""
    _, _, H, W = feat.shape
    x1, y1, x2, y2 = (rois[:, 1:] * scale - 0.5).unbind(1)
    iy = (lib.arange(size[0] * ratio, dtype=feat.dtype) + 0.5) / (size[0] * ratio)
    ix = (lib.arange(size[1] * ratio, dtype=feat.dtype) + 0.5) / (size[1] * ratio)
    gy = ((y1[:, None] + (y2 - y1)[:, None] * iy) + 0.5) / H * 2 - 1
    gx = ((x1[:, None] + (x2 - x1)[:, None] * ix) + 0.5) / W * 2 - 1
    grid = lib.stack(lib.broadcast_tensors(gx[:, None, :], gy[:, :, None]), dim=-1)
    sampled = lib.nn.functional.grid_sample(feat[rois[:, 0].long()], grid, align_corners=False)
    return lib.nn.functional.avg_pool2d(sampled, ratio)


def test_roi_align_by_grid_sample():
    feat_np = np.random.default_rng(7).standard_normal((2, 3, 12, 12)).astype(np.float32)
    rois_np = np.array([[0, 1.3, 2.2, 20.7, 17.1], [1, 0, 0, 23, 23], [1, -4, -4, 8, 30]], np.float32)
    g = np.random.default_rng(2).standard_normal((3, 3, 2, 3)).astype(np.float32)

    def run(lib):
        feat = lib.tensor(feat_np, requires_grad=True)
        y = _roi_align(lib, feat, lib.tensor(rois_np), (2, 3), 0.5)
        (y * lib.tensor(g)).sum().backward()
        return [y, feat.grad]

    _both(run, rtol=1e-4, atol=1e-5)


# samples on the borders and the reflection lines of a 3 x 5 input, in and out of range
_EDGE = np.array([-3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, -0.6, 0.6], np.float64)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_border_gradients(mode, padding_mode, align_corners):
    """A location clipped onto the border (border / reflection padding) gets the zero grid gradient torch gives
    it: the borders count as outside."""
    gx, gy = np.meshgrid(_EDGE, _EDGE)
    grid_np = np.stack([gx, gy], -1)[None]
    x_np = np.random.default_rng(0).standard_normal((1, 2, 3, 5))
    go = np.random.default_rng(1).standard_normal((1, 2) + gx.shape)

    def run(lib):
        x = lib.tensor(x_np, requires_grad=True)
        grid = lib.tensor(grid_np, requires_grad=True)
        y = lib.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        (y * lib.tensor(go)).sum().backward()
        return [y, x.grad, grid.grad]

    _both(run, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_grid_sample_half_precision(dtype):
    """Half-precision sampling rounds as torch's: bicubic interpolates each row along x, then the rows along y."""
    r = np.random.default_rng(20)
    x_np, grid_np = r.standard_normal((2, 3, 5, 6)), r.uniform(-1.1, 1.1, (2, 4, 7, 2))

    def run(lib):
        x, grid = lib.tensor(x_np).to(getattr(lib, dtype)), lib.tensor(grid_np).to(getattr(lib, dtype))
        return [lib.nn.functional.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=False)
                for m in ("bilinear", "bicubic") for p in ("zeros", "border", "reflection")]

    _both(run, rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 4, 4, dtype=lib.long), lib.zeros(1, 2, 2, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 3, 3, 3, dtype=lib.bool),
                                              lib.zeros(1, 2, 2, 2, 3, dtype=lib.bool), align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 0, 4), lib.zeros(1, 2, 2, 2), align_corners=False),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, dtype=lib.long), scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, dtype=lib.bool), size=3, mode="nearest-exact"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4, dtype=lib.int32), size=3, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 1, 4, 4).half(), size=2, mode="bilinear",
                                              antialias=True),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 1, 3, 3), (-1, 2)),
    lambda lib: lib.histc(lib.tensor([1., float("inf")]), bins=3),
])
def test_resampling_argument_errors(call):
    """torch's exception types for unsupported dtypes, empty inputs and invalid sizes or ranges."""
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)):
        call(ember)


def test_adaptive_pools_to_an_empty_size():
    def run(lib):
        x = lib.ones(1, 2, 3, 3, requires_grad=True)
        y, idx = lib.nn.functional.adaptive_max_pool2d(x, (0, 2), return_indices=True)
        return [lib.nn.functional.adaptive_avg_pool2d(x, (0, 2)), lib.nn.functional.adaptive_avg_pool1d(x[0], 0), y,
                idx]

    _both(run)


_U8 = np.random.default_rng(0).integers(0, 256, (2, 3, 13, 17)).astype(np.uint8)
_U8[0, 0, :4] = 255  # overshoot of the cubic filter next to saturated pixels
_U8[0, 0, 4:6] = 0


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("kwargs", [dict(size=(7, 9)), dict(size=(29, 40)), dict(size=(13, 5), align_corners=True),
                                    dict(size=(31, 8), align_corners=True), dict(scale_factor=(0.45, 2.3)),
                                    dict(scale_factor=(1.1, 0.6))])
def test_uint8_image_resize(mode, antialias, kwargs):
    """Resizing uint8 images (data pipelines): torch's fixed-point separable filters, exact to the byte."""
    e = ember.nn.functional.interpolate(ember.tensor(_U8), mode=mode, antialias=antialias, **kwargs)
    t = torch.nn.functional.interpolate(torch.tensor(_U8), mode=mode, antialias=antialias, **kwargs)
    _close(e, t, rtol=0, atol=0)


@pytest.mark.parametrize("kwargs", [dict(mode="bilinear"), dict(mode="bilinear", antialias=True),
                                    dict(mode="bicubic", antialias=True), dict(mode="bicubic"),
                                    dict(mode="bilinear", align_corners=True)])
def test_interpolate_scale_factor_keeping_a_size(kwargs):
    """scale_factor=(1.2, 2) on a height of 3 keeps 3 rows: linear and antialiased modes copy that dim, plain
    bicubic resamples it by the scale. The gradient is the adjoint of that forward (torch's antialiased backward
    resamples the kept dim: compared with the size=(3, 10) call there, which the forward equals)."""
    x_np = np.random.default_rng(1).standard_normal((1, 2, 3, 5)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((1, 2, 3, 10)).astype(np.float32)

    def run(lib, resize):
        x = lib.tensor(x_np, requires_grad=True)
        y = lib.nn.functional.interpolate(x, **resize, **kwargs)
        (y * lib.tensor(g)).sum().backward()
        return y, x.grad

    y, grad = run(ember, dict(scale_factor=(1.2, 2.0)))
    want = run(torch, dict(scale_factor=(1.2, 2.0)))
    _close(y, want[0])
    _close(grad, run(torch, dict(size=(3, 10)))[1] if kwargs.get("antialias") else want[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_interpolate_half_rounds_once(dtype):
    """Bilinear resizing in half precision computes in float32 and rounds once (not once per dim), forward and
    backward (where float32 sums, or source indices from a scale factor, may differ in their last bits: within
    one unit in the last place)."""
    x_np = np.random.default_rng(20).standard_normal((2, 3, 5, 6)).astype(np.float32)
    g = np.random.default_rng(21).standard_normal((2, 3, 7, 11)).astype(np.float32)

    def run(lib):
        x = lib.tensor(x_np).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.interpolate(x, size=(7, 11), mode="bilinear", align_corners=False)
        y.backward(lib.tensor(g).to(y.dtype))
        return y, x.grad, lib.nn.functional.interpolate(x.detach(), scale_factor=(1.3, 1.7), mode="bilinear")

    (y, grad, z), want = run(ember), run(torch)
    _close(y, want[0], rtol=0, atol=0)
    _close(z, want[2], rtol=2 ** -7, atol=2 ** -10)
    _close(grad, want[1], rtol=2 ** -7, atol=2 ** -10)


def test_heatmap_keypoint_decoding():
    """Soft-argmax over flattened H*W with linspace coordinates, CenterNet top-k with // % and floor division on
    int64 indices, argmax-based keypoints."""
    hm_np = np.random.default_rng(40).standard_normal((2, 3, 6, 7)).astype(np.float32)
    g = np.random.default_rng(1).standard_normal((2, 3, 2)).astype(np.float32)

    def run(lib):
        F = lib.nn.functional
        hm = lib.tensor(hm_np, requires_grad=True)
        N, K, H, W = hm.shape
        p = F.softmax(hm.reshape(N, K, -1) * 5.0, dim=-1).view(N, K, H, W)
        xy = lib.stack([(p.sum(2) * lib.linspace(0, W - 1, W)).sum(-1), (p.sum(3) * lib.linspace(0, H - 1, H)).sum(-1)],
                       -1)
        (xy * lib.tensor(g)).sum().backward()
        scores, inds = lib.topk(hm.detach().sigmoid().view(N, -1), 5)
        pos = hm.detach().reshape(N, K, -1).argmax(dim=2)
        return [xy, hm.grad, scores, inds // (H * W), inds % W, lib.div(inds % (H * W), W, rounding_mode="floor"),
                (inds / W).int(), pos % W, (pos - pos % W) // W]

    _both(run, rtol=1e-4, atol=1e-5)


def test_confusion_matrix_miou_and_histc():
    """mIoU by bincount(minlength=n*n) and by mmseg-style histc on integer-valued floats; bincount weights in
    float32 sum as torch sums them, any other weight dtype gives float64."""
    r = np.random.default_rng(50)
    pred_np, tgt_np = r.integers(0, 5, (2, 7, 9)), r.integers(0, 5, (2, 7, 9))
    tgt_np[0, :2] = 255
    w_np = r.uniform(0, 1, 20000).astype(np.float32)
    i_np = r.integers(0, 3, 20000)

    def run(lib):
        pred, target = lib.tensor(pred_np), lib.tensor(tgt_np)
        k = (target >= 0) & (target < 5)
        cm = lib.bincount(5 * target[k] + pred[k], minlength=25).reshape(5, 5)
        iou = lib.diag(cm) / (cm.sum(1) + cm.sum(0) - lib.diag(cm))
        p, t = pred[target != 255].float(), target[target != 255].float()
        hist = [lib.histc(v, bins=5, min=0, max=4) for v in (p[p == t], p, t)]
        idx = lib.tensor(i_np)
        u, inv, counts = lib.unique(target, return_inverse=True, return_counts=True)
        return [cm, iou] + hist + [lib.bincount(idx, weights=lib.tensor(w_np)),
                                   lib.bincount(idx, weights=lib.tensor(w_np).half()), u, inv, counts, lib.nanmean(iou)]

    res = run(ember), run(torch)
    for e, t in zip(res[0][:-1], res[1][:-1]):
        _close(e, t, rtol=0, atol=0)
    _close(res[0][-1], res[1][-1])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_histc_values_on_bin_edges(dtype):
    """Elements on (or a rounding away from) bin edges land in torch's bins: bin = (x - min) * bins / (max - min)
    in the input's dtype, the last bin closed."""
    r = np.random.default_rng(0)
    edges = np.linspace(-4.0, 2.0, 36)
    x = np.concatenate([r.choice(edges, 60), np.round(r.uniform(0, 0.8, 60), 1), [np.nan, -5, 3]])
    for lo, hi, bins in [(-4.0, 2.0, 35), (0.1, 0.7, 27), (-5.0, 3.0, 15), (0, 0, 7)]:
        if lo == hi:  # the data's range, which a NaN would make non-finite
            x = x[~np.isnan(x)]
        e = ember.histc(ember.tensor(x).to(getattr(ember, dtype)), bins=bins, min=lo, max=hi)
        t = torch.histc(torch.tensor(x).to(getattr(torch, dtype)), bins=bins, min=lo, max=hi)
        _close(e, t, rtol=0, atol=0)
