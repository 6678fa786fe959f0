"""Evaluation-metric idioms (torchmetrics / sklearn style: accuracy, confusion matrices, PR/ROC curves, IoU, histograms,
calibration, retrieval, streaming state) against torch."""
import math

import numpy as np
import pytest
import torch

import ember

R = np.random.default_rng
LOGITS = R(0).standard_normal((32, 5)).astype(np.float32)
TARGET = R(1).integers(0, 5, 32)
SCORES = R(2).random(40).astype(np.float32)
SCORES[5] = SCORES[6]
SCORES[10] = SCORES[11] = SCORES[12]
LABELS = R(3).integers(0, 2, 40)


def _np(x):
    return x.detach().float().numpy() if x.dtype in (ember.bfloat16, torch.bfloat16) else x.detach().numpy()


def _same(e, t, rtol=1e-6, atol=1e-7):
    """Nested outputs: tensors by shape, dtype and value; other leaves by equality."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype).replace("torch", "ember"), \
            (e.shape, e.dtype, t.shape, t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol, equal_nan=True)
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, rtol, atol)
    elif isinstance(t, float):
        assert math.isclose(e, t, rel_tol=rtol, abs_tol=atol) or (math.isnan(e) and math.isnan(t))
    else:
        assert e == t, (e, t)


def _both(fn, rtol=1e-6, atol=1e-7):
    _same(fn(ember), fn(torch), rtol, atol)


def _raises(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)):
        fn(ember)


# -- classification ----------------------------------------------------------------------------------------------------
def test_topk_accuracy():
    """The ImageNet reference ``accuracy(output, target, topk=(1, 3))``."""
    def run(L):
        output, target = L.tensor(LOGITS), L.tensor(TARGET)
        _, pred = output.topk(3, 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        res = [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in (1, 3)]
        top1 = output.argmax(dim=1)
        return res, correct.any(dim=0), (top1 == target).sum(), (top1 == target).float().mean(), \
            top1.eq(target.view_as(top1)).sum().item() / len(target), (top1 == target).sum() / len(target)
    _both(run)


@pytest.mark.parametrize("how", ["bincount", "index_put", "scatter_add", "index_add", "weights"])
def test_confusion_matrix(how):
    """Confusion matrices keep int64 counts (float64 with ``bincount`` weights)."""
    def run(L):
        t, p, n = L.tensor(TARGET), L.tensor(LOGITS).argmax(1), 5
        if how == "bincount":
            return L.bincount(t * n + p, minlength=n * n).reshape(n, n)
        if how == "index_put":
            return L.zeros(n, n, dtype=L.long).index_put_((t, p), L.tensor(1), accumulate=True)
        if how == "scatter_add":
            return L.zeros(n * n, dtype=L.long).scatter_add_(0, t * n + p, L.ones_like(p)).view(n, n)
        if how == "index_add":
            return L.zeros(n, n, dtype=L.int32).index_add_(0, t, L.nn.functional.one_hot(p, n).int())
        w = L.tensor(SCORES[:32])
        return L.bincount(t * n + p, weights=w, minlength=n * n).reshape(n, n), L.bincount(t, w.double())
    _both(run)


def test_precision_recall_f1_kappa_mcc():
    def run(L):
        t, p, n = L.tensor(TARGET), L.tensor(LOGITS).argmax(1), 5
        cm = L.bincount(t * n + p, minlength=n * n).reshape(n, n)
        tp = cm.diag()
        fp, fn = cm.sum(0) - tp, cm.sum(1) - tp
        prec = tp / (tp + fp).clamp(min=1)
        rec = L.where(tp + fn == 0, L.tensor(0.0), tp / (tp + fn))
        f1 = L.nan_to_num(2 * tp / (2 * tp + fp + fn), nan=0.0)
        cmd = cm.double()
        tk, pk, c, s = cmd.sum(1), cmd.sum(0), cmd.trace(), cmd.sum()
        mcc = (c * s - tk @ pk) / L.sqrt((s ** 2 - pk @ pk) * (s ** 2 - tk @ tk))
        pe = (tk * pk).sum() / s ** 2
        w = (L.arange(n)[:, None] - L.arange(n)[None, :]).abs().pow(2).to(cmd.dtype)
        qwk = 1 - (w * cmd).sum() / (w * L.outer(tk, pk) / s).sum()
        return prec, rec, f1, f1.mean(), (f1 * (tp + fn)).sum() / (tp + fn).sum(), tp.sum() / cm.sum(), mcc, \
            (c / s - pe) / (1 - pe), qwk, cm / cm.sum(dim=1, keepdim=True), cm / cm.sum(axis=0, keepdims=True)
    _both(run, rtol=1e-6, atol=1e-12)


def test_multilabel_stat_scores():
    def run(L):
        F = L.nn.functional
        preds = L.tensor(R(4).standard_normal((6, 3, 4, 4)).astype(np.float32)).argmax(1)
        target = L.tensor(R(5).integers(0, 3, (6, 4, 4)))
        p1, t1 = F.one_hot(preds, num_classes=3).movedim(-1, 1), F.one_hot(target, 3).movedim(-1, 1)
        tp = ((p1 == t1) & (t1 == 1)).sum([0, 2, 3])
        fp = ((p1 != t1) & (t1 == 0)).sum([0, 2, 3])
        fn = ((p1 != t1) & (t1 == 1)).sum(dim=[0, 2, 3])
        exact = (p1 == t1).all(dim=1).float().mean()
        return tp, fp, fn, 2 * tp / (2 * tp + fp + fn), tp / (tp + fp + fn), exact, (p1 != t1).float().mean()
    _both(run)


# -- curves --------------------------------------------------------------------------------------------------------------
def test_binary_clf_curve_roc_auc_average_precision():
    """torchmetrics' ``_binary_clf_curve`` with ties, then ROC AUC (trapz) and average precision."""
    def run(L):
        F = L.nn.functional
        desc = L.argsort(L.tensor(SCORES), descending=True)
        preds, target = L.tensor(SCORES)[desc], L.tensor(LABELS)[desc]
        distinct = L.where(preds[1:] - preds[:-1])[0]
        thr_idx = F.pad(distinct, [0, 1], value=target.size(0) - 1)
        tps = L.cumsum(target * 1.0, dim=0)[thr_idx]
        fps = 1 + thr_idx - tps
        precision, recall = tps / (tps + fps), tps / tps[-1]
        last = L.where(tps == tps[-1])[0][0].item()
        precision = L.cat([reversed(precision[:last + 1]), L.ones(1, dtype=precision.dtype)])
        recall = L.cat([reversed(recall[:last + 1]), L.zeros(1, dtype=recall.dtype)])
        ap = -L.sum((recall[1:] - recall[:-1]) * precision[:-1])
        fpr = L.cat([L.zeros(1), fps / fps[-1]])
        tpr = L.cat([L.zeros(1), tps / tps[-1]])
        return thr_idx, tps, precision, recall, ap, L.trapz(tpr, fpr), L.trapezoid(tpr, fpr), \
            L.cumulative_trapezoid(tpr, fpr)
    _both(run, rtol=1e-6, atol=1e-6)


def test_auc_by_ranks_and_thresholds():
    def run(L):
        s, y = L.tensor(SCORES), L.tensor(LABELS)
        yb = y.bool()
        ranks = s.argsort().argsort().float() + 1
        npos, nneg = yb.sum(), (~yb).sum()
        auc = (ranks[yb].sum() - npos * (npos + 1) / 2) / (npos * nneg)
        thr = L.linspace(0, 1, 11)
        hit = s.unsqueeze(0) >= thr.unsqueeze(1)
        tpr, fpr = (hit & (y == 1)).sum(1) / y.sum(), (hit & (y == 0)).sum(1) / (1 - y).sum()
        return auc, npos, L.trapezoid(tpr.flip(0), fpr.flip(0)), L.trapezoid(L.stack([tpr, fpr]), thr, dim=1)
    _both(run, rtol=1e-6, atol=1e-6)


def test_voc_average_precision():
    def run(L):
        scores, hits = L.tensor(R(6).random(20).astype(np.float32)), L.tensor(R(7).integers(0, 2, 20)).bool()
        order = scores.sort(descending=True, stable=True).indices
        tp = hits[order].float().cumsum(0)
        fp = L.cumsum((~hits[order]).float(), dim=0)
        rec, prec = tp / 8, tp / (tp + fp).clamp(min=L.finfo(L.float32).eps)
        mrec = L.cat((L.tensor([0.0]), rec, L.tensor([1.0])))
        mpre = L.cat((L.tensor([1.0]), prec, L.tensor([0.0]))).flip(0).cummax(0)[0].flip(0)
        i = L.where(mrec[1:] != mrec[:-1])[0]
        x = L.linspace(0, 1, 101)
        return L.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]), L.searchsorted(rec, x, side="left"), \
            sum(prec[rec >= t].max() if (rec >= t).any() else 0 for t in L.arange(0., 1.1, 0.1)) / 11
    _both(run, rtol=1e-6, atol=1e-7)


# -- segmentation --------------------------------------------------------------------------------------------------------
def test_iou_dice_and_histc_areas():
    a, b = R(8).integers(0, 4, (3, 6, 6)), R(9).integers(0, 4, (3, 6, 6))
    a[0, 0, :3] = 255  # ignore label

    def run(L):
        x, y = L.tensor(a), L.tensor(b)
        k = (x >= 0) & (x < 4)
        hist = L.bincount(4 * x[k].int() + y[k], minlength=16).reshape(4, 4)
        iu = L.diag(hist) / (hist.sum(1) + hist.sum(0) - L.diag(hist))
        inter = L.histc((x * (x == y)).float(), bins=4, min=0, max=3)
        area_p, area_l = L.histc(y.float(), bins=4, min=0, max=3), L.histc(x[k].float(), bins=4, min=0, max=3)
        xc = x.clamp(max=3)
        oh, ohb = (L.nn.functional.one_hot(v, 4).permute(0, 3, 1, 2).float() for v in (xc, y))
        inter2 = (oh * ohb).sum(dim=(2, 3))
        dice = (2 * inter2 + 1) / (oh.sum((2, 3)) + ohb.sum((2, 3)) + 1)
        per_img = L.bincount((xc * 4 + y + L.arange(3).view(3, 1, 1) * 16).flatten(), minlength=48).view(3, 4, 4)
        return hist, iu, L.nanmean(iu), inter, inter / (area_p + area_l - inter), (x == y)[k].sum() / k.sum(), \
            dice.mean(0), per_img
    _both(run)


# -- histograms, unique, calibration -------------------------------------------------------------------------------------
def test_histc_histogram_histogramdd():
    x = (SCORES * 4 - 1).astype(np.float64)
    pts = R(10).random((30, 3)).astype(np.float32)

    def run(L):
        v = L.tensor(x)
        return (L.histc(v, bins=5, min=-1, max=1), v.float().histc(7), L.histc(L.tensor([2., 2.]), bins=3),
                L.histc(L.tensor([0., 0.25, 0.5, 1.0, 1.0]), bins=4, min=0, max=1),
                tuple(L.histogram(v, bins=5)), tuple(L.histogram(v.float(), bins=L.tensor([-1., 0., 0.5, 3.]),
                                                                 density=True)),
                tuple(L.histogram(v, 4, range=(0., 2.), weight=L.tensor(SCORES).double())),
                L.histogramdd(L.tensor(pts), bins=[L.tensor([0., .5, 1.]), L.tensor([0., .3, 1.]), L.tensor([0., 1.])],
                              weight=L.ones(30)).hist,
                tuple(L.histogramdd(L.tensor(pts[:, :2]), bins=(2, 3), range=(0., 1., 0., 1.), density=True)))
    _both(run, rtol=1e-6, atol=1e-7)


def test_unique_counts_inverse_dim():
    def run(L):
        x = L.tensor(R(11).integers(0, 6, 30))
        m = L.tensor(R(12).integers(0, 2, (3, 9)))
        return (L.unique(x, return_inverse=True, return_counts=True), L.unique(x.view(5, 6), return_inverse=True),
                L.unique(m, dim=1, return_inverse=True, return_counts=True),
                L.unique_consecutive(m, dim=1, return_inverse=True, return_counts=True),
                L.unique(L.tensor([1.5, float("nan"), 0.5, 1.5]), return_counts=True),
                L.unique(L.tensor([True, False, True]), return_inverse=True, return_counts=True))
    _both(run)


def test_calibration_bins_and_quantiles():
    """Expected calibration error with ``bucketize`` bins, quantile bins."""
    def run(L):
        conf, acc = L.tensor(SCORES), L.tensor(LABELS).float()
        bins = L.linspace(0, 1, 11)
        idx = L.bucketize(conf, bins[1:-1])
        s_conf = L.zeros(10).scatter_add(0, idx, conf)
        s_acc = L.zeros(10).index_add(0, idx, acc)
        q = L.quantile(conf, L.tensor([0.25, 0.5, 0.75]))
        return (idx, L.bucketize(conf, bins, right=True, out_int32=True) - 1, L.bincount(idx, minlength=10),
                (s_conf - s_acc).abs().sum() / conf.numel(), q, L.bucketize(conf, q),
                L.searchsorted(bins, conf, side="right"), L.bucketize(0.4, L.tensor([0.3, 0.6])),
                L.zeros(10).scatter_reduce(0, idx, conf, reduce="amax", include_self=False),
                L.zeros(10).scatter_reduce(0, idx, conf, reduce="mean", include_self=False))
    _both(run, rtol=1e-6, atol=1e-7)


# -- language ------------------------------------------------------------------------------------------------------------
def test_perplexity_with_ignore_index():
    logits, tgt = R(13).standard_normal((2, 6, 11)).astype(np.float32), R(14).integers(0, 11, (2, 6))
    tgt[0, -2:] = -100

    def run(L):
        preds, target = L.tensor(logits), L.tensor(tgt).reshape(-1)
        loss = L.nn.functional.cross_entropy(preds.view(-1, 11), target, ignore_index=-100, reduction="sum")
        mask = target.ne(-100)
        target = target.where(target != -100, L.tensor(0))
        probs = L.nn.functional.softmax(preds.reshape(-1, 11), dim=1)[:, target].diagonal()[mask]
        return L.exp(loss / mask.sum()), L.exp(-probs.log().sum() / mask.sum()), mask.sum(), target
    _both(run, rtol=1e-5, atol=1e-6)


def test_bleu_ngram_counting():
    def run(L):
        cand, ref = L.tensor([1, 2, 3, 4, 2, 3, 4, 5]), L.tensor([1, 2, 3, 4, 5, 2, 3])
        precisions, counts = [], []
        for n in (1, 2, 3):
            cg, rg = cand.unfold(0, n, 1), ref.unfold(0, n, 1)
            uc, cc = L.unique(cg, dim=0, return_counts=True)
            ur, rc = L.unique(rg, dim=0, return_counts=True)
            match = (uc.unsqueeze(1) == ur.unsqueeze(0)).all(-1)
            clipped = (L.minimum(cc.unsqueeze(1), rc.unsqueeze(0)) * match).sum()
            precisions.append(clipped.float() / cg.size(0))
            key = (cg * 10 ** L.arange(n - 1, -1, -1)).sum(-1)
            counts += [L.unique(key, return_counts=True)[1], L.isin(key, (rg * 10 ** L.arange(n - 1, -1, -1)).sum(-1))]
        bleu = min(1.0, math.exp(1 - ref.numel() / cand.numel())) * L.exp(L.log(L.stack(precisions)).mean())
        toks = L.tensor(R(15).integers(0, 5, (3, 10)))
        key = toks.unfold(1, 2, 1)[..., 0] * 5 + toks.unfold(1, 2, 1)[..., 1]
        per_row = L.zeros(3, 25, dtype=L.long).scatter_add_(1, key, L.ones_like(key))
        return precisions, counts, bleu, per_row, L.stack([L.bincount(k, minlength=25) for k in key])
    _both(run)


# -- retrieval -----------------------------------------------------------------------------------------------------------
def test_retrieval_recall_at_k_ndcg_mrr():
    def run(L):
        q = L.tensor(R(16).standard_normal((6, 4)).astype(np.float32))
        g = L.tensor(R(17).standard_normal((40, 4)).astype(np.float32))
        ql, gl = L.tensor(R(18).integers(0, 3, 6)), L.tensor(R(19).integers(0, 3, 40))
        d = L.cdist(q, g, compute_mode="donot_use_mm_for_euclid_dist")
        knn = d.topk(5, dim=1, largest=False).indices
        sim = L.nn.functional.normalize(q, dim=1) @ L.nn.functional.normalize(g, dim=1).T
        rel = (gl[sim.argsort(dim=1, descending=True)] == ql.unsqueeze(1)).float()
        ndcg = (rel[:, :5] / L.log2(L.arange(2, 7, dtype=L.float32))).sum(-1)
        first = rel.argmax(-1)
        ap = ((rel.cumsum(-1) / L.arange(1, 41)) * rel).sum(-1) / rel.sum(-1).clamp(min=1)
        return (d, L.cdist(q, g, p=1), L.cdist(q, g, p=float("inf")), knn, (gl[knn] == ql.unsqueeze(1)).any(1).float().mean(),
                L.nn.functional.cosine_similarity(q.unsqueeze(1), g.unsqueeze(0), dim=-1), ndcg,
                L.where(rel.any(-1), 1.0 / (first + 1), L.zeros_like(first, dtype=L.float)), ap,
                L.nn.functional.pdist(g[:6]), L.nn.functional.pairwise_distance(q, g[:6]))
    _both(run, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist"])
def test_cdist_through_matmul(mode):
    """Past 25 rows (or when asked), ``p = 2`` goes through a matmul: a (2000, 1500) distance matrix does not build
    (2000, 1500, 64) differences; batch dimensions broadcast; the gradient at a zero distance is zero."""
    a = R(20).standard_normal((2, 1, 30, 8))
    b = R(21).standard_normal((3, 28, 8))
    b[0, :4] = a[0, 0, :4]
    g = R(22).standard_normal((2, 3, 30, 28))
    res = []
    for L in (ember, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        d = L.cdist(x, y, compute_mode=mode)
        d.backward(L.tensor(g))
        res.append((d, x.grad, y.grad))
    _same(res[0], res[1], rtol=1e-6, atol=1e-6)
    big = R(23).standard_normal((2000, 64)).astype(np.float32)
    e, t = ember.cdist(ember.tensor(big), ember.tensor(big[:1500])), torch.cdist(torch.tensor(big), torch.tensor(big[:1500]))
    _same(e[:, :50], t[:, :50], rtol=1e-4, atol=1e-2)  # sqrt of the matmul's rounding near 0 on the diagonal


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cdist_through_matmul_in_half(dtype):
    """The matmul path takes half dtypes on the CPU (the direct one refuses them)."""
    a, b = R(26).standard_normal((30, 4)).astype(np.float32), R(27).standard_normal((5, 4)).astype(np.float32) + 3
    _both(lambda L: L.cdist(L.tensor(a).to(getattr(L, dtype)), L.tensor(b).to(getattr(L, dtype))), rtol=2e-2, atol=0)


def test_cdist_through_matmul_double_backward():
    x = ember.tensor(R(24).standard_normal((30, 3)), requires_grad=True)
    y = ember.tensor(R(25).standard_normal((5, 3)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a, b: ember.cdist(a, b), (x, y))


# -- streaming state -----------------------------------------------------------------------------------------------------
def test_streaming_metric_buffers_and_state_dict():
    class Accuracy:
        def __init__(self, L, n):
            self.L, self.n, self.m = L, n, L.nn.Module()
            self.m.register_buffer("correct", L.tensor(0))
            self.m.register_buffer("total", L.tensor(0))
            self.m.register_buffer("cm", L.zeros(n, n, dtype=L.long))
            self.m.register_buffer("sq", L.zeros((), dtype=L.float64))

        def update(self, p, t):
            self.m.correct += (p.argmax(-1) == t).sum()
            self.m.total += t.numel()
            self.m.cm += self.L.bincount(t * self.n + p.argmax(-1), minlength=self.n ** 2).view(self.n, self.n)
            self.m.sq.add_(((p.softmax(-1)[self.L.arange(len(t)), t] - 1) ** 2).sum())

        def compute(self):
            return self.m.correct.float() / self.m.total, self.m.cm, self.m.sq / self.m.total

    def run(L):
        a = Accuracy(L, 4)
        with L.no_grad():
            for s in range(3):
                a.update(L.tensor(R(s).standard_normal((8, 4)).astype(np.float32)), L.tensor(R(s + 10).integers(0, 4, 8)))
        b = Accuracy(L, 4)
        b.m.load_state_dict(a.m.state_dict())
        return a.compute(), b.compute(), sorted(a.m.state_dict()), a.m.total
    _both(run, rtol=1e-6, atol=1e-7)


# -- errors --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.bincount(L.tensor([0, -1])),
    lambda L: L.bincount(L.tensor([0., 1.])),
    lambda L: L.bincount(L.tensor([[0, 1]])),
    lambda L: L.bincount(L.tensor([0, 1]), weights=L.tensor([1.])),
    lambda L: L.bincount(L.tensor([0, 1]), minlength=-1),
    lambda L: L.histc(L.tensor([1, 2, 3]), bins=3),
    lambda L: L.histc(L.tensor([1., 2, 3]), bins=3, min=3, max=1),
    lambda L: L.histogram(L.tensor([1., 2, 3]), bins=3, range=(2., 1.)),
    lambda L: L.histogram(L.tensor([1., 2.]), bins=2, weight=L.ones(3)),
    lambda L: L.histogramdd(L.ones(4, 2), bins=[2, 2, 2]),
    lambda L: L.bucketize(L.tensor([1., 2]), L.tensor([[1., 2]])),
    lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([True])),
    lambda L: L.searchsorted(L.tensor([False, True]), True),
    lambda L: L.searchsorted(L.tensor([1., 2]), L.tensor([1.]), side="middle"),
    lambda L: L.unique(L.tensor([[1, 2]]), dim=2),
    lambda L: L.trapezoid(L.ones(3), L.ones(4)),
    lambda L: L.cdist(L.ones(30, 2), L.ones(4, 3)),
    lambda L: L.cdist(L.ones(3, 2, dtype=L.float16), L.ones(4, 2, dtype=L.float16)),
    lambda L: L.cdist(L.ones(30, 2, dtype=L.float16), L.ones(4, 2, dtype=L.float16), p=1),
    lambda L: L.cdist(L.ones(30, 2, dtype=L.float16), L.ones(4, 2)),
    lambda L: L.quantile(L.tensor([1., 2]), 1.5),
    lambda L: L.tensor([1., 2.]).topk(3),
    lambda L: L.nn.functional.one_hot(L.tensor([0, 3]), 3),
])
def test_metric_argument_errors(call):
    _raises(call)


def test_searchsorted_bool_boundaries_promote():
    """Bool boundaries are searched in the promoted dtype; only an all-bool search is refused."""
    _both(lambda L: (L.bucketize(L.tensor([0.5, 2.0]), L.tensor([False, True])),
                     L.searchsorted(L.tensor([1, 2]), L.tensor([True])), L.searchsorted(L.tensor([False, True]), 1)))
