"""Idioms of interpretability and adversarial-robustness code (saliency, Grad-CAM hooks, guided backprop, PGD,
in-place writes through ``.data``) run with ember and with torch: attributions, adversarial examples and gradients
agree."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X = RNG.random((3, 3, 6, 6)).astype(np.float32)
Y = np.array([0, 2, 1])
U = RNG.uniform(-1, 1, X.shape).astype(np.float32)


def _net(m, src=None):
    nn = m.nn
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    if src is not None:
        net.load_state_dict({k: m.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})
    return net


def _pair():
    torch.manual_seed(0)
    t = _net(torch)
    return _net(ember, t), t


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_write_through_data_between_forward_and_backward():
    """``.data`` has its own version counter: backward uses the new values instead of refusing, as torch."""
    out = []
    for m in (ember, torch):
        w = m.tensor(U[0, 0], requires_grad=True)
        x = m.tensor(X[0, 0], requires_grad=True)
        loss = (w * x).sum()
        w.data.clamp_(-0.5, 0.5)
        assert w._version == 0
        loss.backward()
        out.append(x.grad)
    _close(*out)
    w = ember.ones(2, requires_grad=True)
    loss = (w * w).sum()
    w.detach().mul_(2)  # detach() shares the counter: still refused
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_saliency_gradcam_and_guided_backprop():
    out = []
    for m, net in zip((ember, torch), _pair()):
        store = {}
        net[2].register_forward_hook(lambda mod, i, o: store.__setitem__("a", o.detach()))
        net[2].register_full_backward_hook(lambda mod, gi, go: store.__setitem__("g", go[0]))
        for r in (net[1], net[3]):
            r.register_full_backward_hook(lambda mod, gi, go: (m.clamp(gi[0], min=0.0),))
        x = m.tensor(X).requires_grad_()
        net(x)[range(3), m.tensor(Y)].sum().backward()
        cam = m.nn.functional.relu((store["g"].mean((2, 3), keepdim=True) * store["a"]).sum(1, keepdim=True))
        cam = m.nn.functional.interpolate(cam, size=(6, 6), mode="bilinear", align_corners=False)
        out.append((x.grad.abs().amax(dim=1), cam))
    for e, t in zip(*out):
        _close(e, t)


def test_pgd_with_random_start_and_projection():
    eps, alpha = 8 / 255, 2 / 255
    out = []
    for m, net in zip((ember, torch), _pair()):
        F = m.nn.functional
        net.eval()
        x, y = m.tensor(X), m.tensor(Y)
        x_adv = (x + m.tensor(U) * eps).clamp(0, 1).detach()
        for _ in range(3):
            x_adv.requires_grad_(True)
            loss = F.kl_div(F.log_softmax(net(x_adv), 1), F.one_hot(y, 3).float(), reduction="batchmean")
            grad, = m.autograd.grad(loss, [x_adv])
            x_adv = x_adv.detach() + alpha * grad.sign()
            x_adv = m.max(m.min(x_adv, x + eps), x - eps).clamp(0.0, 1.0)
        out.append(x_adv)
    _close(*out)
