"""Contrastive, metric-learning, distillation and detection idioms (SimCLR, triplet mining, torchvision-style box
coders) against torch."""
import numpy as np
import pytest
import torch

import ember

INF = float("inf")


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


# rows with tied largest coordinate differences, and a repeated row (distance 0)
_A = np.array([[0., 1., 2., 2.], [3., 3., 0., -1.], [0., 1., 2., 2.]], np.float32)
_B = np.array([[0., 2., 2., 1.], [3., 0., 0., -1.]], np.float32)


@pytest.mark.parametrize("p", [1.0, 2.0, INF])
def test_cdist_pdist_tied_coordinates(p):
    """Chebyshev distances for batch-hard mining: every coordinate attaining the max gets the whole gradient."""
    rng = np.random.default_rng(0)
    g, gp = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    res = []
    for lib in (ember, torch):
        a, b, c = lib.tensor(_A, requires_grad=True), lib.tensor(_B, requires_grad=True), lib.tensor(_A, requires_grad=True)
        d, pd = lib.cdist(a, b, p=p), lib.nn.functional.pdist(c, p=p)
        (d * lib.tensor(g)).sum().add((pd * lib.tensor(gp)).sum()).backward()
        res.append((d, pd, a.grad, b.grad, c.grad))
    for e, t in zip(*res):
        _close(e, t)


def test_cdist_inf_of_empty_rows():
    _close(ember.cdist(ember.zeros(3, 0), ember.zeros(2, 0), p=INF), torch.cdist(torch.zeros(3, 0), torch.zeros(2, 0),
                                                                                 p=INF))


def test_xlogy_zero_gradient_where_log_is_infinite():
    """``where(q > 0, xlogy(p, q), 0)``: the masked -inf entries get a zero gradient, not ``0 * -inf``."""
    res = []
    for lib in (ember, torch):
        x = lib.tensor([3., 0., 2., 0.5], requires_grad=True)
        y = lib.tensor([0., 0., 1., 2.])
        lib.where(y > 0, lib.xlogy(x, y), 0.).sum().backward()
        g1 = x.grad
        x = lib.tensor([3., 0., 2., 0.5], requires_grad=True)
        lib.special.xlog1py(x, y - 1).nan_to_num().backward(lib.tensor([5., 1., 2., 1.]))
        res.append((g1, x.grad))
    for e, t in zip(*res):
        _close(e, t)
        assert not np.isnan(e.numpy()).any()


def _encode_boxes(lib, reference_boxes, proposals, weights):
    wx, wy, ww, wh = weights[0], weights[1], weights[2], weights[3]
    ex_widths = proposals[:, 2:3] - proposals[:, 0:1]
    ex_heights = proposals[:, 3:4] - proposals[:, 1:2]
    ex_ctr_x = proposals[:, 0:1] + 0.5 * ex_widths
    ex_ctr_y = proposals[:, 1:2] + 0.5 * ex_heights
    gt_widths = reference_boxes[:, 2:3] - reference_boxes[:, 0:1]
    gt_heights = reference_boxes[:, 3:4] - reference_boxes[:, 1:2]
    gt_ctr_x = reference_boxes[:, 0:1] + 0.5 * gt_widths
    gt_ctr_y = reference_boxes[:, 1:2] + 0.5 * gt_heights
    return lib.cat((wx * (gt_ctr_x - ex_ctr_x) / ex_widths, wy * (gt_ctr_y - ex_ctr_y) / ex_heights,
                    ww * lib.log(gt_widths / ex_widths), wh * lib.log(gt_heights / ex_heights)), dim=1)


def test_torchvision_box_coder_decorators():
    """Detection code copied from torchvision: ``@torch.jit._script_if_tracing`` box coders, ``torch._assert``
    shape checks and ``torch.fx.wrap`` leaf functions."""
    gt = np.array([[1., 2., 5., 8.], [3., 0., 11., 6.]], np.float32)
    props = np.array([[0., 1., 6., 7.], [2., 1., 10., 7.]], np.float32)
    res = []
    for lib in (ember, torch):
        encode = lib.jit._script_if_tracing(lambda r, p, w: _encode_boxes(lib, r, p, w))
        lib._assert(lib.tensor(gt).shape[-1] == 4, "boxes are (N, 4)")
        with pytest.raises(AssertionError, match="boxes are"):
            lib._assert(lib.tensor(gt).shape[-1] == 5, "boxes are (N, 5)")
        module = {"lib": lib, "encode": encode}
        registry = torch.fx._symbolic_trace._wrapped_fns_to_patch
        before = dict(registry)
        try:  # torch.fx.wrap registers the name for every later trace in this process: undone below
            exec("name, fn = lib.fx.wrap('_encode_boxes'), lib.fx.wrap(encode)", module)  # at a module's top level
            assert module["name"] == "_encode_boxes" and module["fn"] is encode
            with pytest.raises(NotImplementedError, match="top level"):
                lib.fx.wrap("_encode_boxes")
            with pytest.raises(RuntimeError, match="Unsupported type"):
                exec("lib.fx.wrap(3)", module)
        finally:
            registry.clear()
            registry.update(before)
        res.append(encode(lib.tensor(gt), lib.tensor(props), lib.tensor([10., 10., 5., 5.])))
    _close(*res)
