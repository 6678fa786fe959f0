"""ember.utils.checkpoint against a plain run and against torch.utils.checkpoint: values and gradients (dropout
included, through the saved random state), the reentrant and non-reentrant variants, what forward keeps."""
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint

import ember
from ember.utils.checkpoint import checkpoint, checkpoint_sequential

RNG = np.random.default_rng(0)


def _models(dropout=0.0):
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Dropout(dropout), torch.nn.Linear(8, 2))
    e = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.GELU(), ember.nn.Dropout(dropout), ember.nn.Linear(8, 2))
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + ([x.grad.numpy().copy()] if x.grad is not None else [])


@pytest.mark.parametrize("reentrant", [True, False])
def test_same_values_and_gradients_as_a_plain_run_with_dropout(reentrant):
    model, _ = _models(dropout=0.3)
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    runs = []
    for use_checkpoint in (True, False):
        model.zero_grad()
        xe = ember.tensor(x, requires_grad=True)
        ember.manual_seed(7)
        y = checkpoint(model, xe, use_reentrant=reentrant) if use_checkpoint else model(xe)
        (y * ember.arange(2.0)).sum().backward()
        runs.append((y.detach().numpy(), _grads(model, xe)))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-6, atol=1e-7)  # the same dropout masks
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
def test_gradients_match_torch_checkpoint(reentrant):
    e_model, t_model = _models()
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye = checkpoint(e_model, xe, use_reentrant=reentrant)
    yt = torch_checkpoint.checkpoint(t_model, xt, use_reentrant=reentrant)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    ye.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    for a, b in zip(_grads(e_model, xe), [p.grad.numpy() for p in t_model.parameters()] + [xt.grad.numpy()]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_inputs_without_grad_as_torch():
    """Non-reentrant: the parameters still get gradients; reentrant: torch's warning and no graph."""
    for m, ckpt in ((ember, checkpoint), (torch, torch_checkpoint.checkpoint)):
        lin = m.nn.Linear(3, 2)
        x = m.ones(4, 3)
        ckpt(lin, x, use_reentrant=False).sum().backward()
        assert lin.weight.grad is not None and lin.weight.grad.abs().sum().item() > 0
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            assert not ckpt(lin, x, use_reentrant=True).requires_grad


def test_forward_keeps_only_the_inputs():
    lin = ember.nn.Linear(3, 3)
    y = checkpoint(lambda t: lin(t).relu().exp(), ember.randn(2, 3, requires_grad=True), use_reentrant=False)
    assert y.grad_fn.name() == "ExpBackward0"  # the region's graph is recorded, as torch's
    node = y.grad_fn
    while node is not None:  # but each tensor it saved is only a number until backward recomputes it
        assert all(kind == 3 and isinstance(obj[0], int) for kind, obj, *_ in node._saved or () if obj is not None)
        node = next((f for f, _ in node.next_functions if f is not None and hasattr(f, "_saved")), None)


def test_tuples_keywords_and_non_tensor_arguments():
    def fn(a, scale, b=None):
        return a * scale, (a + b).sum()
    a, b = ember.randn(3, requires_grad=True), ember.randn(3, requires_grad=True)
    p, s = checkpoint(fn, a, 2.0, use_reentrant=False, b=b)
    (p.sum() + s).backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 3.0))
    np.testing.assert_allclose(b.grad.numpy(), np.ones(3))
    for m, ckpt in ((ember, checkpoint), (torch, torch_checkpoint.checkpoint)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            ckpt(fn, m.ones(3, requires_grad=True), 2.0, use_reentrant=True, b=m.ones(3))


def test_without_grad_mode_it_just_runs():
    lin = ember.nn.Linear(3, 3)
    with ember.no_grad():
        y = checkpoint(lin, ember.randn(2, 3), use_reentrant=False)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches_a_plain_run(segments):
    model = ember.nn.Sequential(*[ember.nn.Linear(4, 4) if i % 2 == 0 else ember.nn.Tanh() for i in range(6)])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    runs = []
    for use_checkpoint in (True, False):
        model.zero_grad()
        xe = ember.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = checkpoint_sequential(model, segments, xe, use_reentrant=False) if use_checkpoint else model(xe)
        y.sum().backward()
        runs.append((y.detach().numpy(), _grads(model, xe)))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-6)
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
