"""gradcheck / gradgradcheck (slow and fast mode) and anomaly detection."""
import warnings

import pytest
import torch

import ember
from ember.autograd import GradcheckError, gradcheck, gradgradcheck
from .common import data, same_error


def t64(arr, requires_grad=True):
    return ember.tensor(arr, dtype=ember.float64, requires_grad=requires_grad)


def wrong_backward(m, factor=3.0):
    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * factor
    return Twice


def test_gradcheck_passes_on_composites():
    x, w = t64(data(3, 4, seed=1)), t64(data(4, 2, seed=2))
    assert gradcheck(lambda x, w, k: ((x @ w).tanh() * k + x.sum(1, keepdim=True).exp()), (x, w, 1.5))
    assert gradcheck(lambda x: (x.sin(), x * x), (x,))  # several outputs


def test_gradcheck_reports_mismatch_like_torch():
    e, t = wrong_backward(ember), wrong_backward(torch)
    with pytest.raises(GradcheckError) as err:
        gradcheck(e.apply, (t64(data(3)),))
    with pytest.raises(RuntimeError) as terr:
        torch.autograd.gradcheck(t.apply, (torch.tensor(data(3), requires_grad=True),))
    first = "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    assert str(err.value).startswith(first) and str(terr.value).startswith(first)
    assert gradcheck(e.apply, (t64(data(3)),), raise_exception=False) is False


def test_fast_mode_on_larger_inputs():
    x, w = t64(data(40, 30, seed=3)), t64(data(30, 20, seed=4))
    assert gradcheck(lambda x, w: (x @ w).sigmoid() * 2, (x, w), fast_mode=True)
    with pytest.raises(GradcheckError, match="computed \nin fast mode"):
        gradcheck(wrong_backward(ember, 2.1).apply, (t64(data(30, seed=5)),), fast_mode=True)


def test_nondeterministic_backward_detected():
    calls = []

    class Drift(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * 2 + len(calls) * 1e-9

    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Drift.apply, (t64(data(3)),))
    calls.clear()
    assert gradcheck(Drift.apply, (t64(data(3)),), nondet_tol=1e-6)


def test_gradcheck_input_validation():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (t64(data(3), requires_grad=False),))
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(lambda x: x * 2, (ember.tensor(data(3), dtype=ember.float32, requires_grad=True),), atol=1e-2,
                  rtol=1e-2, eps=1e-3)


def test_gradgradcheck():
    x = t64(data(4, seed=6))
    assert gradgradcheck(lambda x: (x ** 3).sin(), (x,))
    assert gradgradcheck(lambda x, y: (x * y).exp(), (x, t64(data(4, seed=7))))

    class FirstOrderOnly(ember.autograd.Function):  # a backward that is not differentiable w.r.t. x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()

    assert gradcheck(FirstOrderOnly.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(FirstOrderOnly.apply, (x,))


# -- anomaly detection -------------------------------------------------------------------------------------------
def _quiet(m):
    warnings.simplefilter("ignore")
    return m.autograd.detect_anomaly()


def test_anomaly_names_op_that_produced_nan():
    def run(m):
        with warnings.catch_warnings(), _quiet(m):
            x = m.zeros(3, requires_grad=True)
            (x.sqrt() * 0).sum().backward()
    same_error(run)


def test_anomaly_custom_function_nan():
    def run(m, check_nan=True):
        class MakesNan(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly(check_nan=check_nan):
                x = m.ones(2, requires_grad=True)
                MakesNan.apply(x).sum().backward()
                return x.grad.isnan().all().item()
    same_error(run)
    assert run(ember, check_nan=False) and run(torch, check_nan=False)


def test_anomaly_checks_nan_only_and_is_off_by_default():
    for m in (ember, torch):
        x = m.zeros(2, requires_grad=True)
        (x.sqrt() * 0).sum().backward()  # nan gradient, no anomaly mode: no error
        with warnings.catch_warnings(), _quiet(m):
            y = m.zeros(2, requires_grad=True)
            y.sqrt().sum().backward()  # inf is not an anomaly
        assert y.grad.isinf().all()


def test_anomaly_warns_with_forward_traceback():
    class Fails(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = Fails.apply(ember.ones(2, requires_grad=True))
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("Anomaly Detection has been enabled") for m in messages)
    trace = next(m for m in messages if m.startswith("Error detected in FailsBackward"))
    assert "test_anomaly_warns_with_forward_traceback" in trace


def test_set_detect_anomaly_and_queries():
    for m, q in ((ember, ember.autograd.anomaly), (torch, torch)):
        assert not q.is_anomaly_enabled()
        m.autograd.set_detect_anomaly(True)
        assert q.is_anomaly_enabled() and q.is_anomaly_check_nan_enabled()
        m.autograd.set_detect_anomaly(False)
        with m.autograd.set_detect_anomaly(True, check_nan=False):
            assert q.is_anomaly_enabled() and not q.is_anomaly_check_nan_enabled()
        assert not q.is_anomaly_enabled() and q.is_anomaly_check_nan_enabled()
