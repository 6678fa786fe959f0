"""nn.utils gradient clipping and parameter/vector conversion against torch."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.nn import utils as U


def _pairs(shapes, seed=0, dtype=np.float32, scale=1.0):
    """Parameters with gradients, as (ember, torch) lists holding the same values."""
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for shape in shapes:
        w = np.asarray(rng.standard_normal(shape), dtype)
        g = np.asarray(scale * rng.standard_normal(shape), dtype)
        p, t = ember.nn.Parameter(ember.from_numpy(w.copy())), torch.nn.Parameter(torch.from_numpy(w.copy()))
        p.grad, t.grad = ember.from_numpy(g.copy()), torch.from_numpy(g.copy())
        ours.append(p)
        theirs.append(t)
    return ours, theirs


def _check_grads(ours, theirs, rtol=1e-5):
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-7)


SHAPES = [(3, 4), (5,), (), (0, 2), (2, 3, 2)]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.1, 1.0, 1e4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    inf = float(norm_type) == math.inf  # the infinity norm of an empty gradient is an error in torch
    ours, theirs = _pairs([s for s in SHAPES if not (inf and 0 in s)], dtype=dtype)
    a = U.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    b = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert a.shape == () and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-5)
    _check_grads(ours, theirs)


def test_infinity_norm_of_an_empty_gradient_is_an_error():
    ours, theirs = _pairs([(0, 2), (3,)])
    with pytest.raises(RuntimeError, match="cannot compute the inf"):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, math.inf)
    with pytest.raises(RuntimeError, match="cannot compute the inf"):
        U.clip_grad_norm_(ours, 1.0, math.inf)


def test_clip_grad_norm_accepts_a_single_tensor_generators_and_missing_grads():
    ours, theirs = _pairs([(4,), (2,)])
    ours[1].grad = theirs[1].grad = None
    a = U.clip_grad_norm_(ours[0], 0.5)
    b = torch.nn.utils.clip_grad_norm_(theirs[0], 0.5)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)
    a = U.clip_grad_norm_((p for p in ours), 0.1, foreach=True)
    b = torch.nn.utils.clip_grad_norm_((p for p in theirs), 0.1, foreach=True)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)
    _check_grads(ours[:1], theirs[:1])
    assert ours[1].grad is None
    assert U.clip_grad_norm_([ours[1]], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        U.clip_grad_norm_((p for p in []), 1.0)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy warns on inf * 0 inside mul_
@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_clip_grad_norm_nonfinite(bad):
    ours, theirs = _pairs([(3,)])
    ours[0].grad[1] = bad
    theirs[0].grad[1] = bad
    with pytest.raises(RuntimeError) as exp:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as got:
        U.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert str(got.value) == str(exp.value)
    a = U.clip_grad_norm_(ours, 1.0)
    b = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    assert (math.isnan(a.item()) and math.isnan(b.item())) or a.item() == b.item()
    np.testing.assert_array_equal(ours[0].grad.numpy(), theirs[0].grad.numpy())


def test_clip_grad_norm_does_not_record_a_graph():
    ours, _ = _pairs([(3,)])
    ours[0].grad.requires_grad_(True)
    total = U.clip_grad_norm_(ours, 0.01)
    assert not total.requires_grad and total.grad_fn is None


def test_clip_grad_norm_deprecated_alias():
    ours, theirs = _pairs([(3,)])
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        a = U.clip_grad_norm(ours, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = torch.nn.utils.clip_grad_norm(theirs, 0.1)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)
    _check_grads(ours, theirs)


def test_get_total_norm_and_clip_grads_with_norm_match_torch():
    ours, theirs = _pairs([(3, 3), (4,)], scale=5.0)
    a = U.get_total_norm([p.grad for p in ours], norm_type=3)
    b = torch.nn.utils.get_total_norm([t.grad for t in theirs], norm_type=3)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)
    U.clip_grads_with_norm_(ours, 2.0, a)
    torch.nn.utils.clip_grads_with_norm_(theirs, 2.0, b)
    _check_grads(ours, theirs)
    assert U.get_total_norm([]).item() == torch.nn.utils.get_total_norm([]).item() == 0.0


@pytest.mark.parametrize("clip", [0.5, 1, 10.0])
def test_clip_grad_value_matches_torch(clip):
    ours, theirs = _pairs(SHAPES, scale=2.0)
    assert U.clip_grad_value_(ours, clip) is None
    torch.nn.utils.clip_grad_value_(theirs, clip)
    _check_grads(ours, theirs)
    single, tsingle = _pairs([(4,)], scale=3.0)
    U.clip_grad_value_(single[0], 0.1, foreach=False)
    torch.nn.utils.clip_grad_value_(tsingle[0], 0.1, foreach=False)
    _check_grads(single, tsingle)


def test_parameters_to_vector_and_back_match_torch():
    ours, theirs = _pairs([(2, 3), (4,), ()])
    v, tv = U.parameters_to_vector(ours), torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(v.numpy(force=True), tv.detach().numpy())
    assert v.requires_grad and v.grad_fn is not None
    v.backward(ember.arange(11, dtype=ember.float32))
    assert ours[0].grad.shape == (2, 3)
    new = ember.arange(11, dtype=ember.float32) * 10
    U.vector_to_parameters(new, ours)
    torch.nn.utils.vector_to_parameters(torch.arange(11, dtype=torch.float32) * 10, theirs)
    for p, t in zip(ours, theirs):
        assert p.shape == tuple(t.shape)
        np.testing.assert_array_equal(p.detach().numpy(), t.detach().numpy())
    new[0] = -1  # the parameters view the vector, as in torch
    assert ours[0].detach().numpy()[0, 0] == -1
    with pytest.raises(TypeError) as exp:
        torch.nn.utils.vector_to_parameters([1.0], theirs)
    with pytest.raises(TypeError) as got:
        U.vector_to_parameters([1.0], ours)
    assert str(got.value) == str(exp.value)


def test_module_parameters_round_trip():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = ember.nn.Parameter(ember.randn(3, 4))
            self.bias = ember.nn.Parameter(ember.ones(4))

    model = ember.nn.Sequential(Net(), Net())
    vec = U.parameters_to_vector(model.parameters())
    assert vec.shape == (2 * (3 * 4 + 4),)
    U.vector_to_parameters(ember.zeros_like(vec), model.parameters())
    assert all(float(p.abs().sum()) == 0 for p in model.parameters())
