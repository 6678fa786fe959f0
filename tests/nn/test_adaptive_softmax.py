"""nn.AdaptiveLogSoftmaxWithLoss against torch: state_dict layout, forward (output, loss), gradients, log_prob and
predict, after copying torch's parameters."""
import doctest

import numpy as np
import pytest
import torch

import ember
from ember.nn.modules import adaptive

from .torch_ref import close, same_error

CONFIGS = [  # in_features, n_classes, cutoffs, div_value, head_bias
    (16, 20, [5, 12], 4.0, False),
    (8, 10, [3], 2.0, True),
    (12, 30, [2, 10, 20], 1.5, False),
]


def _pair(in_features, n_classes, cutoffs, div_value, head_bias):
    torch.manual_seed(0)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value, head_bias)
    e = ember.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value, head_bias)
    e.load_state_dict(t.state_dict())
    return e, t


@pytest.mark.parametrize("config", CONFIGS)
def test_state_dict_layout(config):
    e, t = _pair(*config)
    assert {k: tuple(v.shape) for k, v in e.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert list(e.state_dict()) == list(t.state_dict())
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value", "head_bias"):
        assert getattr(e, attr) == getattr(t, attr)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("batch", [1, 7, 40])
def test_forward_and_gradients(config, batch):
    e, t = _pair(*config)
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, config[0])).astype(np.float32)
    y = rng.integers(0, config[1], batch)
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ot, oe = t(xt, torch.tensor(y)), e(xe, ember.tensor(y))
    assert type(oe).__name__ == "_ASMoutput" and oe._fields == ("output", "loss")
    close(oe.output, ot.output, what="output")
    close(oe.loss, ot.loss, what="loss")
    g = rng.standard_normal(batch).astype(np.float32)
    (ot.output * torch.tensor(g)).sum().add(ot.loss).backward()
    (oe.output * ember.tensor(g)).sum().add(oe.loss).backward()
    close(xe.grad, xt.grad, what="grad of input")
    for (name, p), (_, q) in zip(t.named_parameters(), e.named_parameters()):
        assert (q.grad is None) == (p.grad is None), name  # clusters no target falls in get no gradient
        if p.grad is not None:
            close(q.grad, p.grad, what=f"grad of {name}")


def test_unbatched():
    e, t = _pair(*CONFIGS[0])
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    for target in (2, 7, 15):
        ot, oe = t(torch.tensor(x), torch.tensor(target)), e(ember.tensor(x), ember.tensor(target))
        assert oe.output.shape == () and oe.loss.shape == ()
        close(oe.output, ot.output)
        close(oe.loss, ot.loss)


@pytest.mark.parametrize("config", CONFIGS)
def test_log_prob_and_predict(config):
    e, t = _pair(*config)
    x = np.random.default_rng(1).standard_normal((50, config[0])).astype(np.float32) * 3
    lt, le = t.log_prob(torch.tensor(x)), e.log_prob(ember.tensor(x))
    close(le, lt, what="log_prob")
    np.testing.assert_allclose(np.exp(le.detach().numpy()).sum(1), 1, rtol=1e-5)
    pt, pe = t.predict(torch.tensor(x)), e.predict(ember.tensor(x))
    assert pe.dtype is ember.int64
    np.testing.assert_array_equal(pe.numpy(), pt.numpy())
    np.testing.assert_array_equal(pe.numpy(), le.detach().numpy().argmax(1))


def test_predict_paths():
    """All rows in the shortlist, none in it, and a mix."""
    e, t = _pair(8, 10, [3], 4.0, True)
    x = np.random.default_rng(2).standard_normal((6, 8)).astype(np.float32)
    for bias in ([5., 5., 5., -5.], [-5., -5., -5., 5.], [0., 0., 0., 0.]):
        t.head.bias.data = torch.tensor(bias)
        e.head.bias.data = ember.tensor(bias)
        np.testing.assert_array_equal(e.predict(ember.tensor(x)).numpy(), t.predict(torch.tensor(x)).numpy())


def test_errors():
    for args in [(8, 10, []), (8, 10, [5, 3]), (8, 10, [0, 4]), (8, 10, [4, 10]), (8, 10, [4, 4]), (8, 10, [2.5])]:
        same_error(lambda: ember.nn.AdaptiveLogSoftmaxWithLoss(*args),
                   lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(*args))
    e, t = _pair(8, 10, [3], 4.0, False)
    cases = [((4, 8), [1, 2, 3]), ((4, 8), [1, 2, 3, 10]), ((4, 8), [[1, 2, 3, 4]]), ((8,), [1]), ((4, 8, 1), [0] * 4)]
    for shape, target in cases:
        same_error(lambda: e(ember.zeros(*shape), ember.tensor(target)),
                   lambda: t(torch.zeros(*shape), torch.tensor(target)))


def test_docstring_examples():
    globs = {"ember": ember}
    result = doctest.testmod(adaptive, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
