"""3-D data idioms (point clouds, volumetric segmentation, video, NeRF, 5-D grid sampling) against torch."""
import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-7, atol=1e-9):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(make, dtype="float64"):
    """The same module built in ember and in torch, torch's weights copied into ember's."""
    torch.manual_seed(0)
    tm, em = make(torch), make(ember)
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return em.to(getattr(ember, dtype)), tm.to(getattr(torch, dtype))


def _train(make, x, y, loss_fn, steps=3, opt="Adam", lr=1e-3, dtype="float64", rtol=1e-7, atol=1e-9):
    """Runs ``steps`` optimizer steps of the same model in both libraries; compares losses and final parameters."""
    res = []
    for lib, m in zip((ember, torch), _pair(make, dtype)):
        o = getattr(lib.optim, opt)(m.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            o.zero_grad()
            xt = lib.tensor(x).to(getattr(lib, dtype)) if x.dtype.kind == "f" else lib.tensor(x)
            yt = lib.tensor(y).to(getattr(lib, dtype)) if y.dtype.kind == "f" else lib.tensor(y)
            loss = loss_fn(lib, m, xt, yt)
            loss.backward()
            o.step()
            losses.append(loss.item())
        res.append((losses, m.state_dict()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=rtol, atol=atol)
    assert res[0][1].keys() == res[1][1].keys()
    for k in res[1][1]:
        _close(res[0][1][k], res[1][1][k], rtol=rtol * 10, atol=atol * 10)


# -- point clouds ------------------------------------------------------------------------------------------------------
def _pointnet(lib, k=4, width=32):
    nn, F = lib.nn, lib.nn.functional

    class STNkd(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k
            self.conv1, self.conv2 = nn.Conv1d(k, width, 1), nn.Conv1d(width, 2 * width, 1)
            self.bn1, self.bn2, self.bn3 = nn.BatchNorm1d(width), nn.BatchNorm1d(2 * width), nn.BatchNorm1d(width)
            self.fc1, self.fc2 = nn.Linear(2 * width, width), nn.Linear(width, k * k)

        def forward(self, x):
            B = x.size()[0]
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.relu(self.bn2(self.conv2(x)))
            x = lib.max(x, 2, keepdim=True)[0].view(-1, 2 * width)
            x = self.fc2(F.relu(self.bn3(self.fc1(x))))
            iden = lib.eye(self.k, dtype=x.dtype).flatten().view(1, self.k * self.k).repeat(B, 1)
            return (x + iden).view(-1, self.k, self.k)

    class PointNetCls(nn.Module):
        def __init__(self):
            super().__init__()
            self.stn, self.fstn = STNkd(3), STNkd(width)
            self.conv1, self.conv2 = nn.Conv1d(3, width, 1), nn.Conv1d(width, 2 * width, 1)
            self.bn1, self.bn2 = nn.BatchNorm1d(width), nn.BatchNorm1d(2 * width)
            self.fc = nn.Linear(2 * width, k)

        def forward(self, x):
            trans = self.stn(x)
            x = lib.bmm(x.transpose(2, 1), trans).transpose(2, 1)
            x = F.relu(self.bn1(self.conv1(x)))
            trans_feat = self.fstn(x)
            x = lib.bmm(x.transpose(2, 1), trans_feat).transpose(2, 1)
            x = self.bn2(self.conv2(x))
            x = lib.max(x, 2, keepdim=True)[0].view(-1, 2 * width)
            return F.log_softmax(self.fc(x), dim=1), trans_feat

    return PointNetCls()


def _orthogonality(lib, A):
    I = lib.eye(A.shape[1], dtype=A.dtype).repeat(A.shape[0], 1, 1)
    return lib.norm(I - A @ A.transpose(2, 1), dim=(1, 2)).mean()


@pytest.mark.parametrize("opt", ["Adam", "SGD"])
def test_pointnet_training_steps(opt):
    """PointNet with T-Nets (Conv1d k=1, BatchNorm1d on (B, C, N), max over points, bmm) and the feature transform
    regularizer: losses and parameters after a few steps (float64: argmax ties of float32 noise would diverge)."""
    x, y = _rand(6, 3, 48), np.array([0, 1, 2, 3, 1, 2])

    def loss_fn(lib, m, x, y):
        pred, tf = m(x)
        return lib.nn.functional.nll_loss(pred, y) + 0.001 * _orthogonality(lib, tf)
    _train(_pointnet, x, y, loss_fn, opt=opt, lr=1e-2)


def _square_distance(lib, src, dst):
    B, N, _ = src.shape
    dist = -2 * lib.matmul(src, dst.permute(0, 2, 1))
    dist += lib.sum(src ** 2, -1).view(B, N, 1)
    dist += lib.sum(dst ** 2, -1).view(B, 1, dst.shape[1])
    return dist


def _index_points(lib, points, idx):
    view_shape = [idx.shape[0]] + [1] * (idx.ndim - 1)
    repeat_shape = [1] + list(idx.shape[1:])
    batch_indices = lib.arange(points.shape[0], dtype=lib.long).view(view_shape).repeat(repeat_shape)
    return points[batch_indices, idx, :]


def _farthest_point_sample(lib, xyz, npoint, seed):
    B, N, C = xyz.shape
    centroids = lib.zeros(B, npoint, dtype=lib.long)
    distance = lib.ones(B, N, dtype=xyz.dtype) * 1e10
    farthest = lib.tensor(seed)
    batch_indices = lib.arange(B, dtype=lib.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = lib.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = lib.max(distance, -1)[1]
    return centroids


def _query_ball_point(lib, radius, nsample, xyz, new_xyz):
    B, N, _ = xyz.shape
    S = new_xyz.shape[1]
    group_idx = lib.arange(N, dtype=lib.long).view(1, 1, N).repeat([B, S, 1])
    group_idx[_square_distance(lib, new_xyz, xyz) > radius ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    group_first = group_idx[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
    mask = group_idx == N
    group_idx[mask] = group_first[mask]
    return group_idx


def test_pointnet2_sample_and_group():
    """Farthest point sampling, ball query and grouping: int64 indices, grouped features and their gradients."""
    xyz, feats, g = _rand(3, 40, 3), _rand(3, 40, 5, seed=1), _rand(3, 12, 6, 8, seed=2)
    seed = np.random.default_rng(3).integers(0, 40, 3)
    res = []
    for lib in (ember, torch):
        x, p = lib.tensor(xyz, requires_grad=True), lib.tensor(feats, requires_grad=True)
        fps = _farthest_point_sample(lib, x.detach(), 12, seed)
        new_xyz = _index_points(lib, x, fps)
        idx = _query_ball_point(lib, 0.9, 6, x.detach(), new_xyz.detach())
        grouped = _index_points(lib, x, idx) - new_xyz.view(3, 12, 1, 3)
        out = lib.cat([grouped, _index_points(lib, p, idx)], dim=-1).permute(0, 3, 2, 1)  # (B, C, nsample, S)
        out = lib.max(out, 2)[0]
        out.backward(lib.tensor(g[:, :, 0].transpose(0, 2, 1).copy()))
        res.append((fps, idx, out, x.grad, p.grad))
    for e, t in zip(*res):
        _close(e, t)
    assert res[0][0].dtype == ember.int64 and res[0][1].dtype == ember.int64


def _knn(lib, x, k):
    inner = -2 * lib.matmul(x.transpose(2, 1), x)
    xx = lib.sum(x ** 2, dim=1, keepdim=True)
    return (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]


def test_dgcnn_edge_features():
    """DGCNN's kNN graph: topk indices, flat batch offsets, ``x.view(B * N, -1)[idx, :]`` and the edge features'
    gradient through an EdgeConv."""
    pts, g = _rand(2, 3, 30), _rand(2, 8, 30, seed=1)
    em, tm = _pair(lambda lib: lib.nn.Sequential(lib.nn.Conv2d(6, 8, kernel_size=1, bias=False),
                                                 lib.nn.BatchNorm2d(8), lib.nn.LeakyReLU(negative_slope=0.2)))
    res = []
    for lib, conv in ((ember, em), (torch, tm)):
        x = lib.tensor(pts, requires_grad=True)
        B, C, N = x.shape
        idx = _knn(lib, x, k=20)
        flat = (idx + lib.arange(0, B).view(-1, 1, 1) * N).view(-1)
        xt = x.transpose(2, 1).contiguous()
        feature = xt.view(B * N, -1)[flat, :].view(B, N, 20, C)
        xt = xt.view(B, N, 1, C).repeat(1, 1, 20, 1)
        feature = lib.cat((feature - xt, xt), dim=3).permute(0, 3, 1, 2).contiguous()
        out = conv(feature).max(dim=-1, keepdim=False)[0]
        out.backward(lib.tensor(g))
        res.append((idx, feature, out, x.grad, conv[0].weight.grad))
    for e, t in zip(*res):
        _close(e, t)
    assert res[0][0].dtype == ember.int64


def test_chamfer_distance():
    """Chamfer loss with ``cdist`` and ``min(dim)`` in both directions, squared and not: values and gradients."""
    a_np, b_np = _rand(2, 25, 3), _rand(2, 17, 3, seed=1) * 1.3
    res = []
    for lib in (ember, torch):
        a, b = lib.tensor(a_np, requires_grad=True), lib.tensor(b_np, requires_grad=True)
        d = lib.cdist(a, b)
        loss = d.min(dim=2)[0].mean() + d.min(dim=1)[0].mean()
        d2 = lib.cdist(a, b, p=2.0) ** 2
        loss2 = (d2.min(2).values.mean(1) + d2.min(1).values.mean(1)).sum()
        (loss + loss2).backward()
        res.append((loss, loss2, d.min(dim=2)[1], a.grad, b.grad))
    for e, t in zip(*res):
        _close(e, t)


# -- volumetric segmentation -------------------------------------------------------------------------------------------
def _unet3d(lib, norm, up):
    nn, F = lib.nn, lib.nn.functional

    def block(i, o):
        n = (lambda c: nn.BatchNorm3d(c)) if norm == "bn" else (lambda c: nn.InstanceNorm3d(c, affine=True))
        return nn.Sequential(nn.Conv3d(i, o, 3, padding=1, bias=False), n(o), nn.ReLU(inplace=True),
                             nn.Conv3d(o, o, kernel_size=3, padding=1, bias=False), n(o), nn.LeakyReLU(0.01))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inc = block(1, 4)
            self.down = nn.Sequential(nn.MaxPool3d(2), block(4, 8))
            self.up = nn.ConvTranspose3d(8, 4, kernel_size=2, stride=2) if up == "transpose" else \
                nn.Upsample(scale_factor=2, mode="trilinear", align_corners=True)
            self.dec = block(8 if up == "transpose" else 12, 4)
            self.outc = nn.Conv3d(4, 3, kernel_size=1)

        def forward(self, x):
            x1 = self.inc(x)
            x2 = self.up(self.down(x1))
            dz, dy, dx = (x1.size()[i] - x2.size()[i] for i in (2, 3, 4))
            x2 = F.pad(x2, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2, dz // 2, dz - dz // 2])
            return self.outc(self.dec(lib.cat([x1, x2], dim=1)))
    return UNet()


def _soft_dice(lib, logits, target, eps=1e-5):
    F = lib.nn.functional
    probs = F.softmax(logits, dim=1)
    onehot = F.one_hot(target, num_classes=logits.shape[1]).permute(0, 4, 1, 2, 3).type_as(probs)
    dims = (0, 2, 3, 4)
    dice = (2. * lib.sum(probs * onehot, dims) + eps) / (lib.sum(probs + onehot, dims) + eps)
    return 1 - dice.mean()


@pytest.mark.parametrize("norm,up", [("bn", "transpose"), ("in", "trilinear")])
def test_unet3d_dice_training(norm, up):
    """A 3-D U-Net on odd-sized volumes (the F.pad skip alignment) trained with soft Dice + cross-entropy."""
    x, y = _rand(2, 1, 7, 6, 5), np.random.default_rng(1).integers(0, 3, (2, 7, 6, 5))

    def loss_fn(lib, m, x, y):
        out = m(x)
        return _soft_dice(lib, out, y) + lib.nn.functional.cross_entropy(out, y)
    _train(lambda lib: _unet3d(lib, norm, up), x, y, loss_fn, lr=1e-2)


def _sliding_window(lib, model, vol, roi, overlap, gaussian):
    B, _, D, H, W = vol.shape
    out = lib.zeros((B, 3, D, H, W), dtype=vol.dtype)
    count = lib.zeros((B, 1, D, H, W), dtype=vol.dtype)
    imp = lib.ones(roi, dtype=vol.dtype)
    if gaussian:
        g = [lib.exp(-0.5 * ((lib.arange(r, dtype=vol.dtype) - (r - 1) / 2) / (r / 8)) ** 2) for r in roi]
        imp = g[0][:, None, None] * g[1][None, :, None] * g[2][None, None, :]
        imp = imp / imp.max()

    def starts(size, r):
        st = list(range(0, size - r + 1, max(int(r * (1 - overlap)), 1)))
        return st + [size - r] if st[-1] + r < size else st
    for z in starts(D, roi[0]):
        for y in starts(H, roi[1]):
            for x in starts(W, roi[2]):
                sl = (slice(None), slice(None), slice(z, z + roi[0]), slice(y, y + roi[1]), slice(x, x + roi[2]))
                out[sl] += model(vol[sl]) * imp
                count[sl] += imp
    return out / count


@pytest.mark.parametrize("gaussian", [False, True])
def test_sliding_window_inference(gaussian):
    """Overlapping patches accumulated with slicing ``+=`` and a count map, with and without Gaussian importance,
    under no_grad and with gradients through the accumulation."""
    vol = _rand(1, 1, 11, 9, 7)
    em, tm = _pair(lambda lib: lib.nn.Sequential(lib.nn.Conv3d(1, 4, 3, padding=1),
                                                 lib.nn.InstanceNorm3d(4, affine=True), lib.nn.ReLU(),
                                                 lib.nn.Conv3d(4, 3, 1)))
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        with lib.no_grad():
            pred = _sliding_window(lib, m, lib.tensor(vol), (6, 5, 4), 0.5, gaussian)
        v = lib.tensor(vol, requires_grad=True)
        out = _sliding_window(lib, m, v, (8, 6, 6), 0.25, gaussian)
        out.backward(lib.tensor(_rand(*out.shape, seed=4)))
        res.append((pred, pred.argmax(1), out, v.grad, m[0].weight.grad))
    for e, t in zip(*res):
        _close(e, t)


_GRID_CASES = [(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
               for a in (False, True)]


@pytest.mark.parametrize("mode,padding_mode,align_corners", _GRID_CASES)
def test_grid_sample_5d(mode, padding_mode, align_corners):
    """Trilinear / nearest sampling of a volume at points inside, on and outside its borders: values, input and grid
    gradients."""
    grid = np.random.default_rng(1).uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
    grid[0, 0, 0, :3] = [[1, 1, 1], [-1, -1, -1], [0, 0, 0]]
    res = []
    for lib in (ember, torch):
        x, g = lib.tensor(_rand(2, 3, 4, 5, 6), requires_grad=True), lib.tensor(grid, requires_grad=True)
        y = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        y.backward(lib.tensor(_rand(*y.shape, seed=2)))
        res.append((y, x.grad, g.grad))
    for e, t in zip(*res):
        _close(e, t)


@pytest.mark.parametrize("mode,padding_mode", [(m, p) for m in ("bilinear", "nearest")
                                               for p in ("zeros", "border", "reflection")])
def test_grid_sample_5d_nonfinite_grid(mode, padding_mode):
    """NaN and infinite grid coordinates (a point projected from behind the camera) sample what torch's volumetric
    kernel samples, instead of indexing out of the volume; their own gradient is zero."""
    bad = (float("nan"), float("inf"), -float("inf"))
    res = []
    for lib in (ember, torch):
        g = lib.tensor(np.random.default_rng(1).uniform(-1, 1, (1, 1, 3, 3, 3)))
        for i, v in enumerate(bad):
            g[0, 0, i, 0, 0] = v
            g[0, 0, i, 1, :] = v
        g.requires_grad_()
        y = lib.nn.functional.grid_sample(lib.tensor(_rand(1, 2, 3, 4, 5)), g, mode=mode,
                                          padding_mode=padding_mode, align_corners=False)
        y.sum().backward()
        res.append((y, g.grad))
    _close(res[0][0], res[1][0])
    finite = np.isfinite(np.random.default_rng(1).uniform(-1, 1, (1, 1, 3, 3, 3)))
    finite[0, 0, :, 0, 0] = finite[0, 0, :, 1, :] = False
    assert (res[0][1].numpy()[~finite] == 0).all()


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_3d_spatial_transformer(align_corners):
    """A 3-D spatial transformer: ``affine_grid`` of (N, 3, 4) thetas then ``grid_sample``, gradient to theta."""
    theta = _rand(2, 3, 4, seed=4) * 0.3 + np.eye(3, 4)
    res = []
    for lib in (ember, torch):
        th = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(th, (2, 3, 4, 5, 6), align_corners=align_corners)
        y = lib.nn.functional.grid_sample(lib.tensor(_rand(2, 3, 5, 6, 7)), grid, align_corners=align_corners)
        y.backward(lib.tensor(_rand(*y.shape, seed=2)))
        res.append((grid, y, th.grad))
    for e, t in zip(*res):
        _close(e, t)


_VOLUME_OPS = {
    "trilinear_x2": lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=False),
    "trilinear_size_ac": lambda F, x: F.interpolate(x, size=(9, 4, 11), mode="trilinear", align_corners=True),
    "trilinear_scales": lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7, 2.3), mode="trilinear"),
    "trilinear_recompute": lambda F, x: F.interpolate(x, scale_factor=1.7, mode="trilinear",
                                                      recompute_scale_factor=True),
    "nearest": lambda F, x: F.interpolate(x, size=(9, 4, 11), mode="nearest"),
    "nearest_exact": lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7, 2.3), mode="nearest-exact"),
    "area": lambda F, x: F.interpolate(x, size=(4, 5, 3), mode="area"),
    "avg_pool3d": lambda F, x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "avg_pool3d_video": lambda F, x: F.avg_pool3d(x, (1, 3, 3), (1, 2, 2), (0, 1, 1)),
    "max_pool3d": lambda F, x: F.max_pool3d(x, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), ceil_mode=True),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x, (None, 4, 3)),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x, (3, 5, 4)),
    "pad_replicate": lambda F, x: F.pad(x, (1, 2, 0, 1, 2, 3), mode="replicate"),
    "pad_reflect_neg": lambda F, x: F.pad(x, (1, -2, 0, 1, 2, 0), mode="constant", value=0.5),
}


@pytest.mark.parametrize("name", list(_VOLUME_OPS))
def test_volume_resampling_ops(name):
    """Resizing, pooling and padding of (N, C, D, H, W) volumes: values and gradients."""
    res = []
    for lib in (ember, torch):
        x = lib.tensor(_rand(2, 3, 6, 7, 5), requires_grad=True)
        y = _VOLUME_OPS[name](lib.nn.functional, x)
        y.backward(lib.tensor(_rand(*y.shape, seed=7)))
        res.append((y, x.grad))
    for e, t in zip(*res):
        _close(e, t)


# -- video -------------------------------------------------------------------------------------------------------------
def _slowfast(lib, alpha=4):
    nn = lib.nn

    class SlowFast(nn.Module):
        def __init__(self):
            super().__init__()
            self.slow = nn.Sequential(nn.Conv3d(3, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), bias=False),
                                      nn.BatchNorm3d(8), nn.ReLU(inplace=True))
            self.fast = nn.Sequential(nn.Conv3d(3, 4, (5, 3, 3), stride=(1, 2, 2), padding=(2, 1, 1), bias=False),
                                      nn.BatchNorm3d(4), nn.ReLU(inplace=True))
            self.lateral = nn.Conv3d(4, 8, kernel_size=(5, 1, 1), stride=(alpha, 1, 1), padding=(2, 0, 0))
            self.temporal = nn.Conv3d(16, 16, (3, 1, 1), padding=(1, 0, 0))
            self.head = nn.Linear(16 + 4, 5)

        def forward(self, x):
            idx = lib.linspace(0, x.shape[2] - 1, x.shape[2] // alpha).long()
            fast = self.fast(x)
            slow = lib.cat([self.slow(lib.index_select(x, 2, idx)), self.lateral(fast)], dim=1)
            slow = nn.AdaptiveAvgPool3d((1, 1, 1))(self.temporal(slow)).view(slow.size(0), -1)
            fast = nn.functional.adaptive_avg_pool3d(fast, 1).flatten(1)
            return self.head(lib.cat([slow, fast], 1))
    return SlowFast()


def test_slowfast_training_and_frame_sampling():
    """A SlowFast-lite (index_select frame sampling with linspace().long(), (1, 3, 3) / (3, 1, 1) kernels,
    a strided lateral connection) trained a few steps."""
    x, y = _rand(2, 3, 8, 12, 12), np.array([1, 3])
    _train(_slowfast, x, y, lambda lib, m, x, y: lib.nn.functional.cross_entropy(m(x), y, label_smoothing=0.1),
           opt="AdamW", lr=1e-2)
    e, t = (lib.linspace(0, 7, 5).long() for lib in (ember, torch))
    _close(e, t)


# -- NeRF --------------------------------------------------------------------------------------------------------------
def _posenc(lib, x, L):
    xb = (x[..., None, :] * (2. ** lib.arange(L, dtype=x.dtype))[:, None]).reshape(*x.shape[:-1], -1)
    return lib.cat([x, lib.sin(xb), lib.cos(xb)], -1)


def _raw2outputs(lib, raw, z_vals, rays_d):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = lib.cat([dists, lib.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * lib.norm(rays_d[..., None, :], dim=-1)
    rgb = lib.sigmoid(raw[..., :3])
    alpha = 1. - lib.exp(-lib.nn.functional.relu(raw[..., 3]) * dists)
    weights = alpha * lib.cumprod(lib.cat([lib.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    return lib.sum(weights[..., None] * rgb, -2), weights


def _sample_pdf(lib, bins, weights, u):
    weights = weights + 1e-5
    cdf = lib.cumsum(weights / lib.sum(weights, -1, keepdim=True), -1)
    cdf = lib.cat([lib.zeros_like(cdf[..., :1]), cdf], -1)
    inds = lib.searchsorted(cdf, u.contiguous(), right=True)
    below = lib.max(lib.zeros_like(inds - 1), inds - 1)
    above = lib.min((cdf.shape[-1] - 1) * lib.ones_like(inds), inds)
    inds_g = lib.stack([below, above], -1)
    shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = lib.gather(cdf.unsqueeze(1).expand(shape), 2, inds_g)
    bins_g = lib.gather(bins.unsqueeze(1).expand(shape), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = lib.where(denom < 1e-5, lib.ones_like(denom), denom)
    return bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0]), inds


def _nerf_mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3 + 3 * 2 * 4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


def test_nerf_render_and_train():
    """Rays from a camera (meshgrid), stratified samples (linspace + rand jitter), positional encoding, volume
    rendering (cumprod transmittance) and importance sampling (searchsorted(right=True) + gather), trained in
    float32."""
    rng = np.random.default_rng(0)
    c2w = np.concatenate([np.linalg.qr(rng.standard_normal((3, 3)))[0], rng.standard_normal((3, 1))], 1)
    jitter, u, target = rng.random((24, 12)), rng.random((24, 6)), rng.random((24, 3))
    sel = rng.choice(6 * 8, 24, replace=False)

    def render(lib, m):
        c2w_t = lib.tensor(c2w, dtype=lib.float32)
        i, j = lib.meshgrid(lib.linspace(0, 7, 8), lib.linspace(0, 5, 6), indexing="ij")
        i, j = i.t(), j.t()
        dirs = lib.stack([(i - 4) / 5., -(j - 3) / 5., -lib.ones_like(i)], -1)
        rays_d = lib.sum(dirs[..., None, :] * c2w_t[:3, :3], -1).reshape(-1, 3)[lib.tensor(sel)]
        rays_o = c2w_t[:3, -1].expand(rays_d.shape)
        t_vals = lib.linspace(0., 1., steps=12)
        z_vals = (2. * (1. - t_vals) + 6. * t_vals).expand([24, 12])
        mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
        upper, lower = lib.cat([mids, z_vals[..., -1:]], -1), lib.cat([z_vals[..., :1], mids], -1)
        z_vals = lower + (upper - lower) * lib.tensor(jitter, dtype=lib.float32)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        rgb, weights = _raw2outputs(lib, m(_posenc(lib, pts, 4)), z_vals, rays_d)
        z_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_samples, inds = _sample_pdf(lib, z_mid, weights[..., 1:-1], lib.tensor(u, dtype=lib.float32))
        z_all, _ = lib.sort(lib.cat([z_vals, z_samples.detach()], -1), -1)
        pts2 = rays_o[..., None, :] + rays_d[..., None, :] * z_all[..., :, None]
        rgb2, _ = _raw2outputs(lib, m(_posenc(lib, pts2, 4)), z_all, rays_d)
        return rgb, rgb2, inds

    def loss_fn(lib, m, x, y):
        rgb, rgb2, _ = render(lib, m)
        return lib.mean((rgb - y) ** 2) + lib.mean((rgb2 - y) ** 2)
    _train(_nerf_mlp, target, target, loss_fn, steps=3, lr=5e-3, dtype="float32", rtol=1e-4, atol=1e-6)
    em, tm = _pair(_nerf_mlp, "float32")
    (e_rgb, e_rgb2, e_inds), (t_rgb, t_rgb2, t_inds) = render(ember, em), render(torch, tm)
    _close(e_rgb, t_rgb, rtol=1e-5, atol=1e-6)
    _close(e_rgb2, t_rgb2, rtol=1e-5, atol=1e-6)
    _close(e_inds, t_inds, rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib: lib.searchsorted(lib.tensor([0., .2, .2, .5, 1.]), 0.2, right=True),
    lambda lib: lib.searchsorted(lib.tensor([0., .2, .2, .5, 1.]), 0.2, side="left"),
    lambda lib: lib.searchsorted(lib.tensor([0.1, .2], dtype=lib.float16), 0.2),
    lambda lib: lib.searchsorted(lib.tensor([1, 2, 3]), 1.5),
    lambda lib: lib.bucketize(0.2, lib.tensor([0.1, .2]), right=True),
    lambda lib: lib.bucketize(0.2, lib.tensor([0.1, .2]), out_int32=True),
])
def test_searchsorted_python_number(call):
    """A Python number is compared in the sequence's dtype (0.2 equals float32's 0.2), not as a double."""
    _close(call(ember), call(torch), rtol=0, atol=0)


# -- dtypes, autocast and errors ---------------------------------------------------------------------------------------
_AUTOCAST_OPS = {
    "max_pool3d": lambda F, x: F.max_pool3d(x, 2),
    "max_pool3d_indices": lambda F, x: F.max_pool3d(x, 2, return_indices=True)[0],
    "avg_pool3d": lambda F, x: F.avg_pool3d(x, 2),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x, 3),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x, 3),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x[:, :, 0], 3),
    "area": lambda F, x: F.interpolate(x, size=3, mode="area"),
    "max_unpool3d": lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2),
    "trilinear": lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
    "grid_sample": lambda F, x: F.grid_sample(x, x.new_zeros(1, 2, 2, 2, 3), align_corners=False),
    "conv3d": lambda F, x: F.conv3d(x, x.new_ones(1, 2, 1, 1, 1)),
}


@pytest.mark.parametrize("name", list(_AUTOCAST_OPS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_cpu_autocast_volume_ops_dtype(name, dtype):
    """CPU autocast runs 3-D pooling, unpooling and grid sampling in float32, convolutions in bfloat16, and leaves
    trilinear upsampling in its input's dtype; adaptive average pooling is not turned into a bfloat16 product."""
    res = []
    for lib in (ember, torch):
        x = lib.tensor(_rand(1, 2, 4, 4, 4), dtype=getattr(lib, dtype))
        with lib.autocast("cpu", dtype=lib.bfloat16):
            res.append(_AUTOCAST_OPS[name](lib.nn.functional, x))
    _close(res[0], res[1], rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_select(lib.zeros(3, 4), 1, lib.tensor([5])),
    lambda lib: lib.index_select(lib.zeros(2, 3, 4), 1, lib.tensor([-1])),
    lambda lib: lib.index_select(lib.zeros(2, 3, 4), 2, lib.tensor([4])),
    lambda lib: lib.index_select(lib.zeros(3, 4), 0, lib.tensor([3])),
    lambda lib: lib.index_select(lib.zeros(3, 0), 1, lib.tensor([0])),
    lambda lib: lib.index_select(lib.zeros(2, 0, 3), 0, lib.tensor([2])),
    lambda lib: lib.index_select(lib.zeros(3, 4), 1, lib.tensor([0.0])),
    lambda lib: lib.nn.Conv3d(3, 2, 3)(lib.zeros(1, 4, 5, 5, 5)),
    lambda lib: lib.nn.Conv3d(3, 2, 3)(lib.zeros(1, 3, 2, 5, 5)),
    lambda lib: lib.nn.BatchNorm3d(3)(lib.zeros(2, 3, 5, 5)),
    lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 4), scale_factor=2, mode="trilinear"),
    lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 2),
                                              align_corners=False),
    lambda lib: lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3),
                                              mode="bicubic", align_corners=False),
    lambda lib: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 3, 4, 5, 6), align_corners=False),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([3, 2]), 3),
    lambda lib: lib.nn.functional.pad(lib.zeros(1, 1, 2, 2, 2), (3, 3, 3, 3, 3, 3), mode="reflect"),
])
def test_error_types(call):
    """torch's exception types for bad shapes, indices and arguments of the 3-D idioms."""
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(ember)
    if "INDICES" in str(want.value) or "axis dim" in str(want.value):
        assert str(got.value) == str(want.value)
