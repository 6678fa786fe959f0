"""Dropout layers: identity in eval, training statistics, channel-wise masks, alpha dropout's moments, gradients,
reproducibility under ember.manual_seed, in-place forms, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from .torch_ref import same_error

E = ember.nn.modules
EF = ember.nn.functional
TF = torch.nn.functional


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_module_eval_is_identity_and_repr(name):
    em, tm = getattr(E, name)(0.3), getattr(torch.nn, name)(0.3)
    assert repr(em) == repr(tm) == f"{name}(p=0.3, inplace=False)"
    assert repr(getattr(E, name)(inplace=True)) == f"{name}(p=0.5, inplace=True)"
    x = ember.randn(*{"Dropout1d": (2, 3, 4), "Dropout2d": (2, 3, 4, 4)}.get(name, (2, 3, 4, 5, 2)))
    em.eval()
    assert em(x) is x
    same_error(lambda: getattr(E, name)(1.5), lambda: getattr(torch.nn, name)(1.5))


def test_dropout_statistics_and_gradient():
    ember.manual_seed(0)
    x = ember.ones(100000, requires_grad=True)
    for p in (0.1, 0.5, 0.8):
        y = EF.dropout(x, p)
        zeros = (y == 0).float().mean().item()
        assert abs(zeros - p) < 0.01
        assert abs(y.mean().item() - 1.0) < 0.03  # the kept values are scaled by 1 / (1 - p)
        kept = y.detach().numpy()[y.detach().numpy() != 0]
        np.testing.assert_allclose(kept, 1 / (1 - p), rtol=1e-6)
        g = ember.randn(100000)
        y.backward(g)
        np.testing.assert_allclose(x.grad.numpy(), g.numpy() * y.detach().numpy(), rtol=1e-5, atol=1e-6)
        x.grad = None


def test_dropout_edge_cases():
    x = ember.randn(3, 4, requires_grad=True)
    assert EF.dropout(x, 0.5, training=False) is x
    assert EF.dropout(x, 0.0) is x
    y = EF.dropout(x, 1.0)
    assert (y == 0).all() and y.requires_grad
    y.backward(ember.ones(3, 4))
    assert (x.grad == 0).all()
    assert EF.dropout(ember.zeros(0, 3), 0.5).shape == (0, 3)
    for p in (-0.1, 1.1):
        same_error(lambda: EF.dropout(x, p), lambda: TF.dropout(torch.ones(2), p))
        same_error(lambda: EF.alpha_dropout(x, p), lambda: TF.alpha_dropout(torch.ones(2), p))
        same_error(lambda: EF.dropout2d(x, p), lambda: TF.dropout2d(torch.ones(2), p))
    for dt in (ember.float16, ember.bfloat16, ember.float64):
        assert EF.dropout(ember.ones(10, dtype=dt), 0.5).dtype is dt


def test_reproducible_with_manual_seed():
    ember.manual_seed(123)
    a = EF.dropout(ember.ones(1000), 0.5)
    b = EF.dropout(ember.ones(1000), 0.5)
    ember.manual_seed(123)
    c = EF.dropout(ember.ones(1000), 0.5)
    assert np.array_equal(a.numpy(), c.numpy()) and not np.array_equal(a.numpy(), b.numpy())
    ember.manual_seed(5)
    m = E.Dropout2d(0.5)
    d1 = m(ember.ones(4, 8, 2, 2))
    ember.manual_seed(5)
    assert np.array_equal(d1.numpy(), m(ember.ones(4, 8, 2, 2)).numpy())


@pytest.mark.parametrize("fn,shape,channel_dims", [
    (EF.dropout1d, (50, 40, 3), 2), (EF.dropout1d, (40, 3), 1), (EF.dropout2d, (50, 40, 3, 2), 2),
    (EF.dropout3d, (20, 40, 2, 2, 2), 2), (EF.dropout3d, (40, 3, 2, 2), 1)])
def test_channel_dropout(fn, shape, channel_dims):
    ember.manual_seed(1)
    x = ember.ones(*shape, requires_grad=True)
    y = fn(x, 0.4)
    assert y.shape == x.shape
    a = y.detach().numpy().reshape(shape[:channel_dims] + (-1,))
    assert (a.max(-1) == a.min(-1)).all()  # whole channels are zeroed (or kept)
    assert abs((a[..., 0] == 0).mean() - 0.4) < 0.08
    np.testing.assert_allclose(a[a != 0], 1 / 0.6, rtol=1e-6)
    y.backward(ember.ones(*shape))
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())


def test_channel_dropout_shapes_and_warnings():
    x = ember.ones(2, 3, 4)
    same_error(lambda: EF.dropout1d(ember.ones(2, 3, 4, 5)), lambda: TF.dropout1d(torch.ones(2, 3, 4, 5)))
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        EF.dropout2d(x)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        EF.dropout2d(ember.ones(2, 3))
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        EF.dropout3d(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EF.dropout2d(ember.ones(2, 3, 4, 4))
        EF.dropout3d(ember.ones(3, 4, 4, 4))


def test_alpha_dropout_keeps_moments():
    ember.manual_seed(2)
    x = ember.randn(200000)
    for p in (0.2, 0.5):
        y = EF.alpha_dropout(x, p, training=True)
        assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1) < 0.02
        dropped = -1.7580993408473766 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p)) * (1 - p)
        assert abs((np.abs(y.numpy() - dropped) < 1e-6).mean() - p) < 0.01  # dropped units share one value
    assert EF.alpha_dropout(x, 0.5) is x  # training defaults to False
    xf = ember.randn(1000, 64, 8)
    yf = EF.feature_alpha_dropout(xf, 0.3, training=True)
    assert abs(yf.mean().item()) < 0.03 and abs(yf.std().item() - 1) < 0.03
    # dropped channels take one constant value
    constant = yf.numpy().std(-1) < 1e-6
    assert abs(constant.mean() - 0.3) < 0.03
    x = ember.randn(10, 10, requires_grad=True)
    y = EF.alpha_dropout(x, 0.3, training=True)
    y.backward(ember.ones(10, 10))
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.3 + 1) * 0.7)
    g = x.grad.numpy()
    assert np.all((g == 0) | (np.abs(g - a) < 1e-6))


def test_inplace():
    ember.manual_seed(3)
    x = ember.ones(100)
    y = EF.dropout(x, 0.5, inplace=True)
    assert y is x and ((x.numpy() == 0) | (x.numpy() == 2)).all()
    h = ember.ones(4, 6, requires_grad=True) * 1
    m = E.Dropout(0.5, inplace=True)
    out = m(h)
    assert out is h
    out.sum().backward()
    z = ember.ones(2, 3, 4)
    assert EF.dropout1d(z[0], 0.5, inplace=True).shape == (3, 4)
    a = ember.randn(50, 50)
    assert EF.alpha_dropout(a, 0.5, training=True, inplace=True) is a


def test_module_train_eval():
    m = E.Dropout(0.5)
    x = ember.ones(1000)
    assert (m(x) == 0).any()
    m.eval()
    assert m(x) is x
    m.train()
    seq = ember.nn.modules.Sequential(E.Dropout(0.2), E.AlphaDropout(0.2))
    seq.eval()
    assert seq(x) is x
