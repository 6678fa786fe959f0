"""Self-supervised, contrastive, metric-learning and distillation idioms (SimCLR, MoCo, BYOL/SimSiam, DINO, Barlow
Twins, VICReg, CLIP, SupCon, triplet, ArcFace/CosFace, KD, LARS/LAMB) run side by side with torch."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)


def _np(x):
    if isinstance(x, (float, int, np.ndarray)):
        return np.asarray(x)
    x = x.detach()
    return x.numpy() if x.dtype in (ember.int64, torch.int64, ember.bool, torch.bool) else x.float().numpy()


def _compare(fn, rtol=1e-5, atol=1e-6):
    """Runs ``fn(lib)`` (a dict of results) under both libraries and compares every entry, dtypes included."""
    e, t = fn(ember), fn(torch)
    assert e.keys() == t.keys()
    for k in t:
        if hasattr(t[k], "dtype"):
            assert str(e[k].dtype).split(".")[-1] == str(t[k].dtype).split(".")[-1], k
        np.testing.assert_allclose(_np(e[k]), _np(t[k]), rtol=rtol, atol=atol, err_msg=k)


_R = np.random.default_rng(0)
Z1, Z2 = _R.standard_normal((2, 8, 16)).astype(np.float32)
W1 = (_R.standard_normal((32, 16)) * 0.2).astype(np.float32)
W2 = (_R.standard_normal((16, 32)) * 0.2).astype(np.float32)
LABELS = np.array([0, 1, 0, 2, 1, 1, 3, 0])


def _mlp(lib, seed=0, out=4):
    """A projection head (Linear without bias before BatchNorm, as SSL heads are) with fixed weights."""
    nn = lib.nn
    net = nn.Sequential(nn.Linear(16, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(inplace=True), nn.Linear(32, out))
    r = np.random.default_rng(seed)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor((r.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32)))
    return net


def test_nt_xent_fill_diagonal_and_masked_fill_forms():
    """SimCLR's NT-Xent: ``fill_diagonal_(-inf)`` with ``arange`` labels, and the ``masked_fill(eye, -9e15)`` /
    ``logsumexp`` and positives/negatives-by-mask forms."""
    def run(lib):
        F = lib.nn.functional
        z1, z2 = lib.tensor(Z1, requires_grad=True), lib.tensor(Z2, requires_grad=True)
        n = z1.shape[0]
        z = F.normalize(lib.cat([z1, z2]), dim=1)
        sim = z @ z.T / 0.5
        sim.fill_diagonal_(float("-inf"))
        loss = F.cross_entropy(sim, lib.cat([lib.arange(n, 2 * n), lib.arange(0, n)]))
        s2 = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2)
        s2 = s2.masked_fill(lib.eye(2 * n, dtype=lib.bool), -9e15) / 0.1
        pos = lib.cat([lib.diag(s2, n), lib.diag(s2, -n)])
        loss2 = (-pos + lib.logsumexp(s2, dim=-1)).mean()
        labels = lib.cat([lib.arange(n)] * 2)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        keep = ~lib.eye(2 * n, dtype=lib.bool)
        labels, s3 = labels[keep].view(2 * n, -1), (z @ z.T)[keep].view(2 * n, -1)
        logits = lib.cat([s3[labels.bool()].view(2 * n, -1), s3[~labels.bool()].view(2 * n, -1)], dim=1) / 0.07
        loss3 = lib.nn.CrossEntropyLoss()(logits, lib.zeros(2 * n, dtype=lib.long))
        (loss + loss2 + loss3).backward()
        return dict(loss=loss, loss2=loss2, loss3=loss3, g1=z1.grad, g2=z2.grad, top5=logits.topk(5, 1)[1])
    _compare(run, rtol=1e-5, atol=1e-6)


def test_moco_momentum_encoder_and_queue():
    """MoCo v2: key encoder updated by ``mul_(m).add_(q, alpha=1 - m)`` under no_grad, a normalized queue buffer
    written by slices, einsum logits with zero labels; three SGD steps."""
    qinit = _R.standard_normal((4, 16)).astype(np.float32)
    xq, xk = _R.standard_normal((2, 3, 4, 16)).astype(np.float32)

    def run(lib):
        nn, F = lib.nn, lib.nn.functional

        class MoCo(nn.Module):
            def __init__(self, K=16, m=0.9, T=0.07):
                super().__init__()
                self.K, self.m, self.T = K, m, T
                self.encoder_q, self.encoder_k = _mlp(lib), _mlp(lib)
                for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                    pk.data.copy_(pq.data)
                    pk.requires_grad = False
                self.register_buffer("queue", F.normalize(lib.tensor(qinit), dim=0))
                self.register_buffer("queue_ptr", lib.zeros(1, dtype=lib.long))

            @lib.no_grad()
            def _momentum_update_key_encoder(self):
                for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                    param_k.data.mul_(self.m).add_(param_q.data, alpha=1 - self.m)

            @lib.no_grad()
            def _dequeue_and_enqueue(self, keys):
                b, ptr = keys.shape[0], int(self.queue_ptr)
                self.queue[:, ptr:ptr + b] = keys.T
                self.queue_ptr[0] = (ptr + b) % self.K

            def forward(self, im_q, im_k):
                q = F.normalize(self.encoder_q(im_q), dim=1)
                with lib.no_grad():
                    self._momentum_update_key_encoder()
                    k = F.normalize(self.encoder_k(im_k), dim=1)
                l_pos = lib.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
                l_neg = lib.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
                logits = lib.cat([l_pos, l_neg], dim=1)
                logits /= self.T
                self._dequeue_and_enqueue(k)
                return logits, lib.zeros(logits.shape[0], dtype=lib.long)

        model = MoCo()
        opt = lib.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)
        out = {}
        for i in range(3):
            logits, labels = model(lib.tensor(xq[i]), lib.tensor(xk[i]))
            loss = nn.CrossEntropyLoss()(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            out[f"loss{i}"] = loss
        out.update(model.state_dict())
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_byol_simsiam_ema_target():
    """BYOL's ``2 - 2 * cos`` loss against a stop-gradient EMA target (parameters by ``mul_().add_(alpha=)``,
    BatchNorm statistics by ``lerp_``), then SimSiam's ``-cosine_similarity(p, z.detach()).mean()``."""
    def run(lib):
        F = lib.nn.functional
        online, pred, target = _mlp(lib, 0, 16), _mlp(lib, 1, 16), _mlp(lib, 0, 16)
        target.requires_grad_(False)
        opt = lib.optim.SGD(list(online.parameters()) + list(pred.parameters()), lr=0.05, momentum=0.9,
                            weight_decay=1e-4)

        def loss_fn(x, y):
            return 2 - 2 * (F.normalize(x, dim=-1, p=2) * F.normalize(y, dim=-1, p=2)).sum(dim=-1)
        out = {}
        a, b = lib.tensor(Z1), lib.tensor(Z2)
        for it in range(3):
            p1, p2 = pred(online(a)), pred(online(b))
            with lib.no_grad():
                t1, t2 = target(a), target(b)
            loss = (loss_fn(p1, t2.detach()) + loss_fn(p2, t1.detach())).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with lib.no_grad():
                for po, pt in zip(online.parameters(), target.parameters()):
                    pt.data.mul_(0.99).add_(po.data, alpha=1 - 0.99)
                for bo, bt in zip(online.buffers(), target.buffers()):
                    bt.copy_(bo) if bt.dtype == lib.long else bt.lerp_(bo, 0.01)
            out[f"loss{it}"] = loss
        ss = -F.cosine_similarity(pred(online(a)), online(b).detach(), dim=-1).mean()
        ss.backward()
        out.update(ss=ss, g=pred[0].weight.grad, **{"t" + k: v for k, v in target.state_dict().items()})
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_dino_loss_centering_and_teacher_temperature_schedule():
    """DINO's loss: a teacher temperature taken from a NumPy schedule (a float64 scalar divides a float32 tensor),
    a center buffer reassigned as an EMA, multi-crop ``chunk``, the unique_consecutive crop grouping."""
    crops = np.concatenate([Z1, Z2, Z1 * 0.5, Z2 - 1])

    def run(lib):
        nn, F = lib.nn, lib.nn.functional

        class DINOLoss(nn.Module):
            def __init__(self, out_dim, ncrops, student_temp=0.1, center_momentum=0.9):
                super().__init__()
                self.student_temp, self.center_momentum, self.ncrops = student_temp, center_momentum, ncrops
                self.register_buffer("center", lib.zeros(1, out_dim))
                self.schedule = np.concatenate((np.linspace(0.04, 0.07, 3), np.ones(7) * 0.07))

            def forward(self, student_output, teacher_output, epoch):
                student_out = (student_output / self.student_temp).chunk(self.ncrops)
                teacher_out = F.softmax((teacher_output - self.center) / self.schedule[epoch], dim=-1)
                teacher_out = teacher_out.detach().chunk(2)
                total, n = 0, 0
                for iq, q in enumerate(teacher_out):
                    for v in range(len(student_out)):
                        if v != iq:
                            total += lib.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1).mean()
                            n += 1
                self.update_center(teacher_output)
                return total / n

            @lib.no_grad()
            def update_center(self, teacher_output):
                batch_center = lib.sum(teacher_output, dim=0, keepdim=True) / len(teacher_output)
                self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)

        crit = DINOLoss(16, 4)
        s = lib.tensor(crops, requires_grad=True)
        t = lib.tensor(np.concatenate([Z2, Z1]))
        out = {f"loss{ep}": crit(s, t, ep) for ep in range(3)}
        out["loss2"].backward()
        sizes = lib.tensor([224, 224, 96, 96, 96])
        idx_crops = lib.cumsum(lib.unique_consecutive(sizes, return_counts=True)[1], 0)
        out.update(g=s.grad, center=crit.state_dict()["center"], idx_crops=idx_crops)
        return out
    _compare(run, rtol=1e-5, atol=1e-6)


def test_dino_head_weight_norm_gradient_clipping():
    """DINO head: ``weight_norm`` last layer with a frozen ``weight_g``, per-parameter gradient clipping through
    ``p.grad.data``, the last layer's gradient cancelled, AdamW with a no-decay group, teacher EMA."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional

        class DINOHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8))
                self.last_layer = nn.utils.weight_norm(nn.Linear(8, 10, bias=False))
                self.last_layer.weight_g.data.fill_(1)
                self.last_layer.weight_g.requires_grad = False

            def forward(self, x):
                return self.last_layer(F.normalize(self.mlp(x), dim=-1, p=2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            student, teacher = DINOHead(), DINOHead()
        r = np.random.default_rng(0)
        sd = {k: lib.tensor((r.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
              for k, v in student.state_dict().items()}
        sd["last_layer.weight_g"] = lib.ones(10, 1)
        student.load_state_dict(sd)
        teacher.load_state_dict(student.state_dict())
        teacher.requires_grad_(False)
        decay = [p for n, p in student.named_parameters() if p.requires_grad and not n.endswith(".bias")]
        no_decay = [p for n, p in student.named_parameters() if p.requires_grad and n.endswith(".bias")]
        opt = lib.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
        x, out = lib.tensor(Z1), {}
        for it in range(3):
            with lib.no_grad():
                t = teacher(x)
            loss = lib.sum(-F.softmax(t / 0.04, -1) * F.log_softmax(student(x) / 0.1, -1), -1).mean()
            opt.zero_grad()
            loss.backward()
            norms = []
            for p in student.parameters():
                if p.grad is not None:
                    norm = p.grad.data.norm(2)
                    norms.append(norm.item())
                    clip_coef = 0.5 / (norm + 1e-6)
                    if clip_coef < 1:
                        p.grad.data.mul_(clip_coef)
            if it == 0:
                for n, p in student.named_parameters():
                    if "last_layer" in n:
                        p.grad = None
            opt.step()
            with lib.no_grad():
                for pq, pk in zip(student.parameters(), teacher.parameters()):
                    pk.data.mul_(0.9).add_((1 - 0.9) * pq.detach().data)
            out[f"loss{it}"], out[f"norms{it}"] = loss, lib.tensor(norms)
        out.update(teacher.state_dict())
        out["w"] = student.last_layer.weight
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_barlow_twins_and_vicreg():
    """Barlow Twins' cross-correlation of ``BatchNorm1d(affine=False)`` outputs with the in-place diagonal and the
    ``flatten()[:-1].view(n - 1, n + 1)[:, 1:]`` off-diagonal; VICReg's variance/covariance terms."""
    def off_diagonal(x):
        n, m = x.shape
        return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    def run(lib):
        F = lib.nn.functional
        bn = lib.nn.BatchNorm1d(16, affine=False)
        z1, z2 = lib.tensor(Z1, requires_grad=True), lib.tensor(Z2, requires_grad=True)
        c = bn(z1).T @ bn(z2)
        c.div_(8)
        on_diag = lib.diagonal(c).add_(-1).pow_(2).sum()
        loss = on_diag + 0.0051 * off_diagonal(c).pow_(2).sum()
        x, y = z1 * 1.5, z2 - 0.5
        xc, yc = x - x.mean(dim=0), y - y.mean(dim=0)
        std_x, std_y = lib.sqrt(xc.var(dim=0) + 0.0001), lib.sqrt(yc.var(dim=0) + 0.0001)
        std_loss = lib.mean(F.relu(1 - std_x)) / 2 + lib.mean(F.relu(1 - std_y)) / 2
        cov_x, cov_y = (xc.T @ xc) / 7, (yc.T @ yc) / 7
        cov_loss = off_diagonal(cov_x).pow_(2).sum().div(16) + off_diagonal(cov_y).pow_(2).sum().div(16)
        vicreg = 25 * F.mse_loss(x, y) + 25 * std_loss + cov_loss
        (loss + vicreg).backward()
        return dict(loss=loss, vicreg=vicreg, g1=z1.grad, g2=z2.grad, rm=bn.running_mean, rv=bn.running_var,
                    nb=bn.num_batches_tracked, cov=lib.cov(x.T))
    _compare(run, rtol=1e-4, atol=1e-5)


def test_clip_learnable_logit_scale():
    """CLIP: ``logit_scale = Parameter(ones([]) * log(1 / 0.07))`` exponentiated, symmetric cross entropy, AdamW
    with CLIP's betas/eps, the scale clamped in place after each step."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional
        logit_scale = nn.Parameter(lib.ones([]) * np.log(1 / 0.07))
        vis, txt = nn.Linear(16, 8, bias=False), nn.Linear(16, 8, bias=False)
        with lib.no_grad():
            vis.weight.copy_(lib.tensor(W1[:8]))
            txt.weight.copy_(lib.tensor(W1[8:16]))
        opt = lib.optim.AdamW([logit_scale, *vis.parameters(), *txt.parameters()], lr=1e-2, betas=(0.9, 0.98),
                              eps=1e-6, weight_decay=0.2)
        out = {}
        for it in range(3):
            i, t = vis(lib.tensor(Z1)), txt(lib.tensor(Z2))
            i, t = i / i.norm(dim=1, keepdim=True), t / t.norm(dim=-1, keepdim=True)
            logits_per_image = logit_scale.exp().clamp(max=100) * i @ t.t()
            gt = lib.arange(len(logits_per_image), dtype=lib.long)
            loss = (F.cross_entropy(logits_per_image, gt) + F.cross_entropy(logits_per_image.t(), gt)) / 2
            opt.zero_grad()
            loss.backward()
            opt.step()
            with lib.no_grad():
                logit_scale.clamp_(0, math.log(100))
            out[f"loss{it}"] = loss
        n = 8
        labels = 2 * lib.eye(n) - lib.ones(n, n)
        siglip = -F.logsigmoid(labels * logits_per_image).sum() / n
        out.update(scale=logit_scale, w=vis.weight, probs=logits_per_image.softmax(dim=-1), siglip=siglip)
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_supcon_mask_building():
    """SupCon: ``torch.eq(labels, labels.T)`` mask, ``scatter`` of the self-contrast out of ``ones_like``,
    max-subtracted logits, the ``where`` guard on empty positive sets, and a ``logsumexp`` form."""
    feats = _R.standard_normal((8, 2, 16)).astype(np.float32)

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor(feats, requires_grad=True)
        features = F.normalize(x, dim=2)
        labels = lib.tensor(LABELS).contiguous().view(-1, 1)
        bsz, views = features.shape[:2]
        mask = lib.eq(labels, labels.T).float()
        contrast = lib.cat(lib.unbind(features, dim=1), dim=0)
        adc = lib.div(lib.matmul(contrast, contrast.T), 0.07)
        logits_max, _ = lib.max(adc, dim=1, keepdim=True)
        logits = adc - logits_max.detach()
        mask = mask.repeat(views, views)
        logits_mask = lib.scatter(lib.ones_like(mask), 1, lib.arange(bsz * views).view(-1, 1), 0)
        mask = mask * logits_mask
        log_prob = logits - lib.log((lib.exp(logits) * logits_mask).sum(1, keepdim=True))
        pairs = mask.sum(1)
        pairs = lib.where(pairs < 1e-6, 1, pairs)
        loss = (-(mask * log_prob).sum(1) / pairs).view(views, bsz).mean()
        lse = lib.logsumexp(logits.masked_fill(~logits_mask.bool(), float("-inf")), dim=1, keepdim=True)
        loss2 = -(mask * (logits - lse)).sum(1).div(mask.sum(1).clamp(min=1)).mean()
        (loss + loss2).backward()
        return dict(loss=loss, loss2=loss2, g=x.grad, mask=mask, pairs=pairs)
    _compare(run, rtol=1e-4, atol=1e-5)


def test_triplet_batch_hard_and_pair_losses():
    """Triplet losses (module, swap, custom distance), batch-hard mining with ``cdist`` and with ``addmm_``
    distances, MarginRanking/SoftMargin on the mined pairs, cosine-embedding, hinge-embedding, pairwise distances
    and a contrastive (Hadsell) loss."""
    def run(lib):
        nn, F = lib.nn, lib.nn.functional
        a = lib.tensor(Z1, requires_grad=True)
        p = lib.tensor(Z1[::-1].copy(), requires_grad=True)
        n = lib.tensor(Z2, requires_grad=True)
        labels = lib.tensor(LABELS)
        out = dict(tml=nn.TripletMarginLoss(margin=1.0, p=2)(a, p, n),
                   swap=nn.TripletMarginLoss(margin=0.3, p=1, swap=True, reduction="sum")(a, p, n),
                   cosd=F.triplet_margin_with_distance_loss(
                       a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.5),
                   pdist=nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(), swap=True,
                                                          reduction="none")(a, p, n))
        dist = lib.cdist(a, a, p=2)
        pos_mask = labels.unsqueeze(0) == labels.unsqueeze(1)
        hardest_pos = (dist * pos_mask.float()).max(dim=1)[0]
        hardest_neg = (dist + dist.max(dim=1, keepdim=True)[0] * pos_mask.float()).min(dim=1)[0]
        out["batch_hard"] = F.relu(hardest_pos - hardest_neg + 0.3).mean()
        d2 = lib.pow(a, 2).sum(dim=1, keepdim=True).expand(8, 8)
        d2 = d2 + d2.t()
        d2.addmm_(a, a.t(), beta=1, alpha=-2)
        d2 = d2.clamp(min=1e-12).sqrt()
        dap = lib.cat([d2[i][pos_mask[i]].max().unsqueeze(0) for i in range(8)])
        dan = lib.cat([d2[i][pos_mask[i] == 0].min().unsqueeze(0) for i in range(8)])
        y = lib.ones_like(dan)
        out["ranking"] = nn.MarginRankingLoss(margin=0.3)(dan, dap, y)
        out["soft"] = nn.SoftMarginLoss()(dan - dap, y)
        sign = lib.tensor([1, -1, 1, -1, 1, 1, -1, -1])
        out["cos_emb"] = nn.CosineEmbeddingLoss(margin=0.2)(a, n, sign)
        out["cos_emb_none"] = F.cosine_embedding_loss(a, n, sign.float(), reduction="none")
        d = F.pairwise_distance(a, n, p=2, eps=1e-6, keepdim=True)
        out["hinge"] = nn.HingeEmbeddingLoss(margin=2.0)(d.squeeze(), sign)
        out["pd1"], out["pdinf"] = F.pairwise_distance(a, n, p=1), F.pairwise_distance(a, n, p=float("inf"))
        yy = (sign > 0).float()
        dd = F.pairwise_distance(a, n)
        out["contrastive"] = (yy * dd.pow(2) + (1 - yy) * F.relu(1.0 - dd).pow(2)).mean() / 2
        sum(v.sum() for v in out.values()).backward()
        out.update(ga=a.grad, gp=p.grad, gn=n.grad, dist=dist)
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_arcface_cosface_margins():
    """ArcFace/CosFace/SphereFace heads: ``F.linear`` of normalized inputs, ``acos(clamp(cos, -1 + 1e-7,
    1 - 1e-7))``, ``where(one_hot.bool())``, ``scatter_`` margins, boolean-mask and index assignments, insightface's
    no-grad in-place ``arccos_``/``cos_`` trick with ignored labels, ``(-1.0) ** k`` and AdaCos's median."""
    w = _R.standard_normal((5, 16)).astype(np.float32)
    lab = np.array([0, 1, 2, 3, 4, 0, 1, 2])
    lab_ign = np.array([0, 1, -1, 2, 4, -1, 3, 0])

    def run(lib):
        F = lib.nn.functional
        x, weight = lib.tensor(Z1, requires_grad=True), lib.nn.Parameter(lib.tensor(w))
        label, s, m = lib.tensor(lab), 30.0, 0.5
        cosine = F.linear(F.normalize(x), F.normalize(weight))
        sine = lib.sqrt((1.0 - lib.pow(cosine, 2)).clamp(0, 1))
        phi = lib.where(cosine > math.cos(math.pi - m), cosine * math.cos(m) - sine * math.sin(m),
                        cosine - math.sin(math.pi - m) * m)
        one_hot = lib.zeros(cosine.size(), device=x.device)
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        out = dict(arc=F.cross_entropy(s * (one_hot * phi + (1.0 - one_hot) * cosine), label))
        theta = lib.acos(lib.clamp(cosine, -1 + 1e-7, 1 - 1e-7))
        out["arc2"] = F.cross_entropy(lib.where(one_hot.bool(), lib.cos(theta + m), cosine) * s, label,
                                      label_smoothing=0.1)
        margins = lib.zeros_like(cosine)
        margins.scatter_(1, label[:, None], 0.35)
        out["cos"] = lib.nn.CrossEntropyLoss()(s * (cosine - margins), label)
        out["cos_oh"] = F.cross_entropy(s * (cosine - 0.35 * F.one_hot(label, num_classes=5)), label)
        c2 = cosine.clone()
        cond = (cosine - math.cos(math.pi - m)) <= 0
        c2[cond] = (cosine - 0.1)[cond]
        idx = lib.arange(0, 8, dtype=lib.long)
        c2[idx, label] = c2[idx, label] - 0.2
        out["mask_assign"] = F.cross_entropy(c2 * s, label, reduction="sum")
        k = (4 * theta.detach() / 3.14159265).floor()
        phi4 = ((-1.0) ** k) * (8 * cosine ** 4 - 8 * cosine ** 2 + 1) - 2 * k
        out["sphere"] = F.cross_entropy((one_hot * (phi4 - cosine) / 6.0 + cosine) * lib.norm(x, 2, 1).view(-1, 1),
                                        label)
        labels = lib.tensor(lab_ign)
        logits = F.linear(F.normalize(x), F.normalize(weight)).clamp(-1, 1)
        pos = lib.where(labels != -1)[0]
        target_logit = logits[pos, labels[pos].view(-1)]
        with lib.no_grad():
            target_logit.arccos_()
            logits.arccos_()
            logits[pos, labels[pos].view(-1)] = target_logit + m
            logits.cos_()
        out["insightface"] = F.cross_entropy(logits * 64, labels, ignore_index=-1)
        sum(out.values()).backward()
        with lib.no_grad():
            b_avg = lib.where(one_hot < 1, lib.exp(s * cosine), lib.zeros_like(cosine)).sum() / 8
            out["theta_med"] = lib.median(theta[one_hot == 1])
            out["ada_s"] = lib.log(b_avg) / lib.cos(lib.min(math.pi / 4 * lib.ones_like(out["theta_med"]),
                                                              out["theta_med"]))
        out.update(gx=x.grad, gw=weight.grad, k=k)
        return out
    _compare(run, rtol=1e-4, atol=1e-4)


def test_knowledge_distillation_losses():
    """Hinton KD (``kl_div`` batchmean times ``T * T``, ``log_target``), KLDivLoss modules, soft cross entropy,
    probability targets, a zero target probability, attention transfer and RKD distance/angle losses with
    ``res[range(n), range(n)] = 0``."""
    s_np, t_np = _R.standard_normal((2, 8, 5)).astype(np.float32)

    def run(lib):
        nn, F = lib.nn, lib.nn.functional
        s, t, T = lib.tensor(s_np, requires_grad=True), lib.tensor(t_np), 4.0
        out = dict(kl=F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean") * T * T,
                   kl_log=F.kl_div(F.log_softmax(s / T, dim=1), F.log_softmax(t / T, dim=1), reduction="batchmean",
                                   log_target=True) * T ** 2,
                   kl_sum=nn.KLDivLoss(reduction="sum", log_target=True)(F.log_softmax(s, 1), F.log_softmax(t, 1)),
                   kl_none=F.kl_div(F.log_softmax(s, 1), F.softmax(t, 1), reduction="none"),
                   soft_ce=-(F.softmax(t / T, dim=-1) * F.log_softmax(s / T, dim=-1)).sum(-1).mean(),
                   ce_prob=F.cross_entropy(s, F.softmax(t, dim=1), label_smoothing=0.1),
                   hinton=nn.KLDivLoss(reduction="batchmean")(F.log_softmax(s / T, dim=1), F.softmax(t / T, dim=1))
                   * (0.9 * T * T) + F.cross_entropy(s, lib.tensor(LABELS)) * 0.1)
        sum(v.sum() for v in out.values()).backward()
        out["g"] = s.grad
        out["kl_zero"] = F.kl_div(lib.log(lib.tensor([[0.2, 0.5, 0.3]])), lib.tensor([[0.0, 1.0, 0.0]]),
                                  reduction="sum")

        def pdist(e, eps=1e-12):
            sq = e.pow(2).sum(dim=1)
            res = (sq.unsqueeze(1) + sq.unsqueeze(0) - 2 * e @ e.t()).clamp(min=eps).sqrt().clone()
            res[range(len(e)), range(len(e))] = 0
            return res
        fs = lib.tensor(Z1[:, :6], requires_grad=True)
        ft = lib.tensor(Z2[:, 4:10])
        with lib.no_grad():
            t_d = pdist(ft)
            t_d = t_d / t_d[t_d > 0].mean()
            td = F.normalize(ft.unsqueeze(0) - ft.unsqueeze(1), p=2, dim=2)
            t_angle = lib.bmm(td, td.transpose(1, 2)).view(-1)
        d = pdist(fs)
        d = d / d[d > 0].mean()
        sd = F.normalize(fs.unsqueeze(0) - fs.unsqueeze(1), p=2, dim=2)
        out["rkd"] = F.smooth_l1_loss(d, t_d) + 2 * F.smooth_l1_loss(lib.bmm(sd, sd.transpose(1, 2)).view(-1),
                                                                      t_angle)
        at = lambda f: F.normalize(f.pow(2).mean(1).view(f.size(0), -1))  # noqa: E731
        out["at"] = (at(fs.view(8, 2, 3)) - at(ft.view(8, 2, 3))).pow(2).mean()
        (out["rkd"] + out["at"]).backward()
        out["gfs"] = fs.grad
        return out
    _compare(run, rtol=1e-5, atol=1e-6)


def _lars(lib):
    class LARS(lib.optim.Optimizer):
        """LARS as in the Barlow Twins / MoCo v3 reference code, excluding biases and norms by ``p.ndim``."""
        def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001):
            super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, eta=eta))

        @lib.no_grad()
        def step(self):
            for g in self.param_groups:
                for p in g["params"]:
                    dp = p.grad
                    if dp is None:
                        continue
                    if p.ndim > 1:
                        dp = dp.add(p, alpha=g["weight_decay"])
                        param_norm, update_norm = lib.norm(p), lib.norm(dp)
                        one = lib.ones_like(param_norm)
                        q = lib.where(param_norm > 0.0,
                                      lib.where(update_norm > 0, (g["eta"] * param_norm / update_norm), one), one)
                        dp = dp.mul(q)
                    state = self.state[p]
                    if "mu" not in state:
                        state["mu"] = lib.zeros_like(p)
                    mu = state["mu"]
                    mu.mul_(g["momentum"]).add_(dp)
                    p.add_(mu, alpha=-g["lr"])
    return LARS


def _lamb(lib):
    class Lamb(lib.optim.Optimizer):
        """LAMB with a closure, the trust ratio kept in the state."""
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

        def step(self, closure=None):
            loss = closure() if closure is not None else None
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad, state = p.grad.data, self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"], state["exp_avg_sq"] = lib.zeros_like(p.data), lib.zeros_like(p.data)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    beta1, beta2 = group["betas"]
                    state["step"] += 1
                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    weight_norm = p.data.pow(2).sum().sqrt().clamp(0, 10)
                    adam_step = exp_avg / exp_avg_sq.sqrt().add(group["eps"])
                    if group["weight_decay"] != 0:
                        adam_step.add_(p.data, alpha=group["weight_decay"])
                    adam_norm = adam_step.pow(2).sum().sqrt()
                    trust_ratio = 1 if weight_norm == 0 or adam_norm == 0 else weight_norm / adam_norm
                    state["trust_ratio"] = trust_ratio
                    p.data.add_(adam_step, alpha=-group["lr"] * trust_ratio)
            return loss
    return Lamb


@pytest.mark.parametrize("opt", ["lars", "lamb"])
def test_hand_written_lars_lamb_with_warmup_cosine(opt):
    """Hand-written LARS/LAMB over ``param_groups`` (a no-decay group for biases and norms), the learning rate
    set each step by linear warmup then cosine decay; parameters, state and ``state_dict`` layout compared."""
    y = np.array([0, 1, 2, 3, 0, 1, 2, 3])

    def run(lib):
        net = _mlp(lib)
        decay = [p for n, p in net.named_parameters() if p.ndim > 1]
        no_decay = [p for n, p in net.named_parameters() if p.ndim == 1]
        groups = [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
        base = 0.5 if opt == "lars" else 0.01
        optim = _lars(lib)(groups, lr=base, weight_decay=1e-4) if opt == "lars" else \
            _lamb(lib)(groups, lr=base, weight_decay=0.01)
        out, steps, warm = {}, 5, 2
        for it in range(steps):
            lr = base * (it + 1) / warm if it < warm else \
                base * 0.5 * (1.0 + math.cos(math.pi * (it - warm) / (steps - warm)))
            for pg in optim.param_groups:
                pg["lr"] = lr

            def closure():
                optim.zero_grad()
                loss = lib.nn.functional.cross_entropy(net(lib.tensor(Z1)), lib.tensor(y))
                loss.backward()
                return loss
            if opt == "lars":
                out[f"loss{it}"] = closure()
                optim.step()
            else:
                out[f"loss{it}"] = optim.step(closure)
        out.update(net.state_dict())
        state = optim.state[net[0].weight]
        out["state"] = state["mu"] if opt == "lars" else state["trust_ratio"]
        sd = optim.state_dict()
        out["sd_keys"] = lib.tensor(sorted(sd["state"].keys()))
        out["sd_groups"] = lib.tensor([len(g["params"]) for g in sd["param_groups"]])
        return out
    _compare(run, rtol=1e-4, atol=1e-5)


def test_ssl_lr_schedulers_and_ema_model():
    """Warmup then cosine via SequentialLR and via LambdaLR; AveragedModel with an EMA multi-average function
    (buffers included) and the default SWA average."""
    def run(lib):
        sched = lib.optim.lr_scheduler
        net = _mlp(lib)
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
        s = sched.SequentialLR(opt, [sched.LinearLR(opt, start_factor=0.01, total_iters=3),
                                     sched.CosineAnnealingLR(opt, T_max=7, eta_min=1e-4)], milestones=[3])
        opt2 = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        s2 = sched.LambdaLR(opt2, lambda e: (e + 1) / 3 if e < 3 else 0.5 * (1 + math.cos(math.pi * (e - 3) / 7)))
        swa = lib.optim.swa_utils
        ema = swa.AveragedModel(net, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9), use_buffers=True)
        avg = swa.AveragedModel(net)
        lrs = []
        for it in range(6):
            loss = net(lib.tensor(Z1)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            opt2.step()
            s.step()
            s2.step()
            ema.update_parameters(net)
            avg.update_parameters(net)
            lrs += [s.get_last_lr()[0], opt2.param_groups[0]["lr"]]
        out = {"lrs": np.array(lrs), "ema_out": ema(lib.tensor(Z2))}
        out.update({"ema" + k: v for k, v in ema.state_dict().items()})
        out.update({"avg" + k: v for k, v in avg.state_dict().items()})
        return out
    _compare(run, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("expr", [
    "lib.cdist(h, h)", "lib.cdist(h[None], h[None], p=1)", "lib.prod(h, 1)", "h.prod()", "lib.quantile(h, 0.3)",
    "h.nanquantile(lib.tensor([0.25, 0.75]), dim=1)",
])
def test_autocast_runs_distance_and_products_in_float32(expr):
    """CPU autocast computes cdist, prod and quantile in float32 (bfloat16 inputs cast up), as torch does."""
    a = _R.standard_normal((4, 6)).astype(np.float32)
    res = []
    for lib in LIBS:
        x = lib.tensor(a, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            h = lib.nn.functional.linear(x, lib.eye(6))  # a bfloat16 product, as in a model
            y = eval(expr, {"lib": lib, "h": h})
        y.float().sum().backward()
        res.append((y, x.grad))
    assert res[0][0].dtype == ember.float32 and res[1][0].dtype == torch.float32
    np.testing.assert_allclose(_np(res[0][0]), _np(res[1][0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(res[0][1]), _np(res[1][1]), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("call", [
    lambda lib, x, m: x.half().masked_fill(m, -9e15),
    lambda lib, x, m: x.half().masked_fill_(m, -1e9),
    lambda lib, x, m: x.half().masked_fill(m, 65520.0),
    lambda lib, x, m: x.bfloat16().masked_fill(m, 3.4e38),
    lambda lib, x, m: x.masked_fill(m, 1e39),
    lambda lib, x, m: x.half().masked_fill(m, lib.tensor(-9e15)),
    lambda lib, x, m: x.long().masked_fill(m, float("nan")),
    lambda lib, x, m: x.to(lib.int8).masked_fill(m, 300),
    lambda lib, x, m: x.to(lib.uint8).masked_fill(m, -256),
    lambda lib, x, m: x.masked_fill(m, 2 ** 64),
    lambda lib, x, m: x.half().index_fill(1, lib.tensor([0]), -9e15),
    lambda lib, x, m: x.half().index_fill_(1, lib.tensor([0]), lib.tensor(1e5)),
    lambda lib, x, m: x.half().scatter(1, lib.tensor([[0]]), -9e15),
    lambda lib, x, m: x.half().scatter_(1, lib.tensor([[0]]), 1e5, reduce="add"),
])
def test_fill_value_overflow_raises(call):
    """A fill value the dtype cannot hold (``-9e15`` into float16 attention logits) is an error, not ``-inf``."""
    with pytest.raises((RuntimeError, OverflowError)) as want:
        call(torch, torch.zeros(2, 3), torch.eye(2, 3, dtype=torch.bool))
    with pytest.raises(want.type, match="without overflow|too big to convert"):
        call(ember, ember.zeros(2, 3), ember.eye(2, 3, dtype=ember.bool))


@pytest.mark.parametrize("call", [
    lambda lib, x, m: x.half().masked_fill(m, -65504.0),
    lambda lib, x, m: x.half().masked_fill(m, float("-inf")),
    lambda lib, x, m: x.half().masked_fill(m, lib.tensor(1e5).half()),
    lambda lib, x, m: x.half().masked_fill(m, lib.finfo(lib.float16).min),
    lambda lib, x, m: x.to(lib.uint8).masked_fill(m, -1),
    lambda lib, x, m: x.long().masked_fill(m, 2.7),
    lambda lib, x, m: x.bool().masked_fill(m, 5),
    lambda lib, x, m: x.half().index_fill(1, lib.tensor([2]), -6e4),
    lambda lib, x, m: x.half().scatter(1, lib.tensor([[1]]), -6e4),
])
def test_fill_values_in_range(call):
    """Values the dtype holds (its min, infinities, wrapped unsigned, truncated floats) are written as torch does."""
    e = call(ember, ember.zeros(2, 3), ember.eye(2, 3, dtype=ember.bool))
    t = call(torch, torch.zeros(2, 3), torch.eye(2, 3, dtype=torch.bool))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(_np(e), _np(t))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.kl_div(lib.zeros(2, 3), lib.full((2, 3), 0.5)),
    lambda lib: lib.nn.functional.mse_loss(lib.zeros(2, 3), lib.zeros(3)),
    lambda lib: lib.nn.functional.smooth_l1_loss(lib.zeros(2, 3), lib.zeros(3)),
])
def test_loss_warnings_point_at_the_caller(call):
    """The ``'mean'`` kl_div and the size-mismatch warnings are attributed to the line calling the loss."""
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(lib)
        assert [w.filename for w in caught if issubclass(w.category, UserWarning)] == [__file__], lib
