"""reshape, integer and slice indexing, and sum of float32/64 NumPy tensors skip the general dispatch (``apply``):
their direct path must build the Tensor and the node that ``apply`` builds."""
import warnings

import numpy as np
import pytest

import ember

CASES = {
    "reshape": lambda x: x.reshape(12),
    "index": lambda x: x[1],
    "slice": lambda x: x[1:],
    "chain": lambda x: x.reshape(2, 6)[1][2:],
    "sum": lambda x: x.sum(),
    "sum dim": lambda x: x.sum(1, keepdim=True),
}


def _through_apply(make, x):
    """``make(x)`` by the general dispatch (anomaly detection turns the direct paths off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            return make(x)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_direct_path_records_what_apply_records(make, dtype):
    leaf = ember.arange(12.0, dtype=dtype).reshape(3, 4).requires_grad_()
    y, ref = make(leaf * 2), _through_apply(make, leaf * 2)
    assert type(y.grad_fn) is type(ref.grad_fn) and y.dtype is ref.dtype and y.requires_grad
    fields = {k: v for k, v in vars(ref.grad_fn).items() if k not in ("_trace", "_edges")}
    assert {k: vars(y.grad_fn)[k] for k in fields} == fields
    assert [(type(e[0]),) + e[1:] for e in y.grad_fn._edges] == [(type(e[0]),) + e[1:] for e in ref.grad_fn._edges]
    assert (y._base is None) == (ref._base is None)
    assert [link[0] for link in y._view_chain or ()] == [link[0] for link in ref._view_chain or ()]
    np.testing.assert_array_equal(y.detach().numpy(), ref.detach().numpy())
    (g,) = ember.autograd.grad((y * y).sum(), leaf, create_graph=True)
    (g_ref,) = ember.autograd.grad((ref * ref).sum(), leaf, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), g_ref.detach().numpy())
    (gg,) = ember.autograd.grad(g.sum(), leaf)  # second order through the direct path's node
    (gg_ref,) = ember.autograd.grad(g_ref.sum(), leaf)
    np.testing.assert_array_equal(gg.numpy(), gg_ref.numpy())


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_direct_path_without_graph(make):
    x = ember.arange(12.0).reshape(3, 4).requires_grad_()
    with ember.no_grad():
        y = make(x)
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_array_equal(y.numpy(), _through_apply(make, x).detach().numpy())


def test_view_of_a_base_changed_in_place_takes_its_new_place():
    """A view whose base was modified in place after the view was made is re-derived (by apply) before reuse."""
    x = ember.ones(3, 4, requires_grad=True)
    base = x * 1
    v = base[1]
    base.mul_(3)
    w = v.reshape(2, 2)
    w.sum().backward()
    expected = np.zeros((3, 4), np.float32)
    expected[1] = 3
    np.testing.assert_array_equal(x.grad.numpy(), expected)
