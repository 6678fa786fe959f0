"""Top-level functions torch exposes besides the op table's: the functional in-place forms (``torch.exp_(x)``),
``torch.detach``, and the NN functions with their ATen signatures (``torch.conv2d``, ``torch.dropout(x, p, train)``,
``torch.embedding(weight, indices)``...), compared with torch."""
import numpy as np
import pytest
import torch

import ember
from ember._ops.method_functions import _NAMES
from .opinfo import assert_close

TOL = (1e-5, 1e-5)


def test_inplace_names_match_torch():
    for name in _NAMES:
        assert hasattr(torch, name), name
        assert getattr(ember, name).__name__ == name


@pytest.mark.parametrize("call", [
    lambda m, x: m.exp_(x), lambda m, x: m.sigmoid_(x), lambda m, x: m.tanh_(x), lambda m, x: m.relu_(x),
    lambda m, x: m.clamp_(x, -0.5, 0.5), lambda m, x: m.clamp_(x, min=0.1), lambda m, x: m.fill_(x, 2.5),
    lambda m, x: m.zero_(x), lambda m, x: m.abs_(x), lambda m, x: m.neg_(x), lambda m, x: m.sqrt_(m.abs_(x)),
    lambda m, x: m.floor_(x), lambda m, x: m.ceil_(x), lambda m, x: m.round_(x), lambda m, x: m.trunc_(x),
    lambda m, x: m.frac_(x), lambda m, x: m.sin_(x), lambda m, x: m.cos_(x), lambda m, x: m.reciprocal_(x),
    lambda m, x: m.square_(x), lambda m, x: m.rsqrt_(m.abs_(x)), lambda m, x: m.log_(m.abs_(x)),
    lambda m, x: m.nan_to_num_(m.log_(x), nan=0.0), lambda m, x: m.index_put_(x, (m.tensor([0, 2]),), m.tensor(9.)),
    lambda m, x: m.xlogy_(x, 2.0), lambda m, x: m.detach_(x),
])
def test_inplace_functions(call):
    x = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    t, e = torch.tensor(x), ember.tensor(x)
    rt, re = call(torch, t), call(ember, e)
    assert re is e
    assert_close(e, t, *TOL, "in-place result")
    assert_close(re, rt, *TOL, "returned")


def test_gcd_lcm_inplace_functions():
    a, b = [12, -18, 0], [8, 27, 5]
    for name in ("gcd_", "lcm_"):
        t, e = torch.tensor(a), ember.tensor(a)
        getattr(torch, name)(t, torch.tensor(b))
        assert getattr(ember, name)(e, ember.tensor(b)) is e
        assert e.tolist() == t.tolist()


def test_detach_function():
    x = ember.ones(2, requires_grad=True)
    y = ember.detach(x * 2)
    assert not y.requires_grad and y.tolist() == [2.0, 2.0]


def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


X1, X2, W1 = _arr(2, 4, 9), _arr(2, 4, 6, 6, seed=1), _arr(3, 4, 3, seed=2)
W2, X3, W3 = _arr(3, 4, 3, 3, seed=3), _arr(1, 2, 4, 4, 4, seed=4), _arr(2, 2, 2, 2, 2, seed=5)
EMB, B1 = _arr(5, 3, seed=6), _arr(3, seed=7)


def _t(m, a):
    return m.tensor(a)


NN_CASES = {
    "conv1d": lambda m: m.conv1d(_t(m, X1), _t(m, W1), _t(m, B1), 2, 1),
    "conv1d_same": lambda m: m.conv1d(_t(m, X1), _t(m, W1), None, 1, "same"),
    "conv2d": lambda m: m.conv2d(_t(m, X2), _t(m, W2), None, 1, 1, 1, 1),
    "conv3d": lambda m: m.conv3d(_t(m, X3), _t(m, W3), padding=1),
    "conv_transpose1d": lambda m: m.conv_transpose1d(_t(m, X1), _t(m, W1.transpose(1, 0, 2)), None, 2, 1, 1),
    "conv_transpose2d": lambda m: m.conv_transpose2d(_t(m, X2), _t(m, W2.transpose(1, 0, 2, 3)), stride=2),
    "conv_transpose3d": lambda m: m.conv_transpose3d(_t(m, X3), _t(m, W3)),
    "max_pool1d": lambda m: m.max_pool1d(_t(m, X1), 2),
    "max_pool1d_stride": lambda m: m.max_pool1d(_t(m, X1), 3, 2, 1, 1, True),
    "max_pool2d": lambda m: m.max_pool2d(_t(m, X2), 2),
    "max_pool3d": lambda m: m.max_pool3d(_t(m, X3), 2, 1),
    "max_pool1d_with_indices": lambda m: m.max_pool1d_with_indices(_t(m, X1), 2),
    "avg_pool1d": lambda m: m.avg_pool1d(_t(m, X1), 3, 2, 1, False, False),
    "adaptive_avg_pool1d": lambda m: m.adaptive_avg_pool1d(_t(m, X1), 4),
    "adaptive_max_pool1d": lambda m: m.adaptive_max_pool1d(_t(m, X1), 4),
    "dropout_eval": lambda m: m.dropout(_t(m, X1), 0.5, False),
    "dropout_p0": lambda m: m.dropout(_t(m, X1), 0.0, True),
    "alpha_dropout_eval": lambda m: m.alpha_dropout(_t(m, X1), 0.5, False),
    "feature_dropout_eval": lambda m: m.feature_dropout(_t(m, X1), 0.3, False),
    "feature_alpha_dropout_eval": lambda m: m.feature_alpha_dropout(_t(m, X1), 0.3, False),
    "dropout_": lambda m: m.dropout_(_t(m, X1), 0.5, False),
    "pixel_shuffle": lambda m: m.pixel_shuffle(_t(m, X2), 2),
    "pixel_unshuffle": lambda m: m.pixel_unshuffle(_t(m, X2), 3),
    "channel_shuffle": lambda m: m.channel_shuffle(_t(m, X2), 2),
    "batch_norm_train": lambda m: m.batch_norm(_t(m, X2), _t(m, B1[:1].repeat(4)), None, m.zeros(4), m.ones(4), True,
                                               0.1, 1e-5, False),
    "batch_norm_eval": lambda m: m.batch_norm(_t(m, X1), None, _t(m, EMB[:4, 0]), _t(m, EMB[:4, 1]),
                                              m.ones(4) * 2, False, 0.1, 1e-5, True),
    "instance_norm": lambda m: m.instance_norm(_t(m, X2), None, None, None, None, True, 0.1, 1e-5, False),
    "group_norm": lambda m: m.group_norm(_t(m, X2), 2, m.ones(4) * 2, None, 1e-3),
    "layer_norm": lambda m: m.layer_norm(_t(m, X1), [9], None, None, 1e-5, False),
    "bilinear": lambda m: m.bilinear(_t(m, X1[0, :, :3]), _t(m, X1[1, :, :2]), _t(m, W2[:, 0, :, :2]), _t(m, B1)),
    "prelu": lambda m: m.prelu(_t(m, X1), m.tensor([0.25])),
    "prelu_method": lambda m: _t(m, X1).prelu(m.tensor([0.25])),
    "hardshrink": lambda m: m.hardshrink(_t(m, X1), 0.3),
    "embedding": lambda m: m.embedding(_t(m, EMB), m.tensor([[0, 4], [2, 2]])),
    "embedding_padding": lambda m: m.embedding(_t(m, EMB), m.tensor([1, 3]), 1),
    "embedding_renorm_": lambda m: m.embedding_renorm_(_t(m, EMB), m.tensor([0, 2, 2]), 1.0, 2.0),
    "affine_grid_generator": lambda m: m.affine_grid_generator(_t(m, X1[:1, :2, :3]), [1, 1, 3, 4], False),
    "celu_": lambda m: m.celu_(_t(m, X1), 0.5),
    "selu_": lambda m: m.selu_(_t(m, X1)),
    "rrelu_eval": lambda m: m.rrelu_(_t(m, X1)),
    "threshold_": lambda m: m.threshold_(_t(m, X1), 0.1, -1.0),
    "kl_div_default_none": lambda m: m.kl_div(_t(m, X1), _t(m, X1 * 0.5)),
    "kl_div": lambda m: m.kl_div(_t(m, X1), _t(m, X1 * 0.5), 2, log_target=True),
    "bce_with_logits": lambda m: m.binary_cross_entropy_with_logits(_t(m, X1), _t(m, np.abs(X1) / 4), None,
                                                                    m.ones(9), 0),
    "poisson_nll_loss": lambda m: m.poisson_nll_loss(_t(m, X1), _t(m, np.abs(X1)), True, True, 1e-8, 1),
    "hinge_embedding_loss": lambda m: m.hinge_embedding_loss(_t(m, X1), _t(m, np.sign(X1)), 0.5, 2),
    "margin_ranking_loss": lambda m: m.margin_ranking_loss(_t(m, X1[0]), _t(m, X1[1]), _t(m, np.sign(X1[0]))),
    "cosine_embedding_loss": lambda m: m.cosine_embedding_loss(_t(m, X1[0]), _t(m, X1[1]), m.tensor([1, -1, 1, -1]),
                                                               0.1, 0),
    "triplet_margin_loss": lambda m: m.triplet_margin_loss(_t(m, X1[0]), _t(m, X1[1]), _t(m, X1[1] * 2), 1.0, 2.0,
                                                           1e-6, True, 1),
    "ctc_loss": lambda m: m.ctc_loss(_t(m, X2[:, :, 0, :].transpose(1, 0, 2)).log_softmax(2), m.tensor([[1, 2], [3, 3]]),
                                     [4, 4], [2, 2], 0, 1, False),
}


@pytest.mark.parametrize("name", sorted(NN_CASES))
def test_nn_toplevel(name):
    t, e = NN_CASES[name](torch), NN_CASES[name](ember)
    assert_close(e, t, 1e-4, 1e-5, name)


def test_dropout_signatures():
    x = ember.ones(100, 10)
    y = ember.dropout(x, 0.5, True)
    assert set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}
    with pytest.raises(TypeError):
        ember.dropout(x, 0.5)  # train is required, as in torch
    z = ember.feature_dropout(ember.ones(4, 50, 3), 0.5, True).numpy()
    assert (z == z[:, :, :1]).all()  # whole channels
