"""Comparing ember results and errors with torch's."""
import numpy as np
import torch

import ember


def torch_dtype(d):
    return getattr(torch, d.name)


def assert_same(e, t, exact=True, rtol=1e-6, atol=1e-7):
    """An ember tensor equals a torch tensor: shape, dtype, values (NaNs equal)."""
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert torch_dtype(e.dtype) == t.dtype, (e.dtype, t.dtype)
    got = np.asarray(e.detach().cpu().float() if e.dtype is ember.bfloat16 else e.detach().cpu())
    want = (t.detach().float() if t.dtype is torch.bfloat16 else t.detach()).numpy()
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def same_error(fe, ft, match_message=True):
    """Both callables raise the same exception type (and, by default, message)."""
    try:
        ft()
    except Exception as err:  # noqa: BLE001
        want = err
    else:
        raise AssertionError("torch did not raise")
    try:
        fe()
    except Exception as err:  # noqa: BLE001
        got = err
    else:
        raise AssertionError(f"ember did not raise; torch raised {type(want).__name__}: {want}")
    assert type(got) is type(want), (type(got), got, type(want), want)
    if match_message:  # ember's message is torch's, or the part of it before torch's boilerplate
        msg = str(got).replace("ember.", "torch.").strip()
        assert msg and msg in str(want), (str(got), str(want))
    return got
