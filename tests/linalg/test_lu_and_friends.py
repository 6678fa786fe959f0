"""Errors and edge cases of the LU family and the other linalg additions, against torch's."""
import numpy as np
import pytest
import torch

import ember

SINGULAR = [[1., 2.], [2., 4.]]


def both(fn, *arrays):
    """``fn`` called through ember and torch on the same float64 ``arrays``; the raised messages if any."""
    out = []
    for lib in (ember, torch):
        try:
            out.append(fn(lib, *(lib.tensor(np.asarray(a, np.float64)) for a in arrays)))
        except RuntimeError as e:
            out.append(str(e))
    return out


@pytest.mark.parametrize("fn", [
    lambda m, a: m.linalg.lu_factor(a),
    lambda m, a: m.linalg.lu_factor(a.unsqueeze(0).expand(2, 2, 2)),
    lambda m, a: m.linalg.lu_factor_ex(a, check_errors=True),
    lambda m, a: m.linalg.lu_factor(a, pivot=False),
    lambda m, a: m.linalg.lu(a, pivot=False),
    lambda m, a: m.linalg.lu_factor(a[0]),
    lambda m, a: m.linalg.lu_solve(*m.linalg.lu_factor(a + m.eye(2, dtype=a.dtype)), m.ones(3, 1, dtype=a.dtype)),
    lambda m, a: m.linalg.cond(m.ones(3, 4, dtype=a.dtype), 1),
    lambda m, a: m.linalg.cond(a, "x"),
    lambda m, a: m.linalg.vander(a[0], N=1),
    lambda m, a: m.linalg.tensorinv(a, ind=0),
    lambda m, a: m.linalg.tensorinv(m.ones(2, 3, dtype=a.dtype)),
    lambda m, a: m.linalg.householder_product(m.ones(2, 3, dtype=a.dtype), m.ones(2, dtype=a.dtype)),
    lambda m, a: m.linalg.householder_product(m.ones(3, 2, dtype=a.dtype), m.ones(3, dtype=a.dtype)),
    lambda m, a: m.linalg.householder_product(m.ones(3, 2, dtype=a.dtype), m.ones(2, 1, dtype=a.dtype)),
    lambda m, a: m.linalg.inv(a),
    lambda m, a: m.linalg.solve(a, a),
])
def test_errors_match_torch(fn):
    e, t = both(fn, SINGULAR)
    assert isinstance(t, str), "torch should raise"
    assert e == t


def test_lu_factor_ex_info():
    a = np.stack([np.eye(3), [[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], np.zeros((3, 3))])
    e, t = both(lambda m, x: m.linalg.lu_factor_ex(x), a)
    assert e.info.dtype == ember.int32 and e.pivots.dtype == ember.int32
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_allclose(e.LU.numpy(), t.LU.numpy())
    assert type(e).__name__ == "linalg_lu_factor_ex" and e._fields == ("LU", "pivots", "info")


def test_singular_lu_and_cond():
    e, t = both(lambda m, x: tuple(m.linalg.lu(x)), SINGULAR)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    for p in (1, "fro", np.inf):
        e, t = both(lambda m, x: m.linalg.cond(x, p), SINGULAR)
        assert float(e) == float(t) == np.inf


def test_return_types():
    a = ember.tensor([[4., 3.], [6., 3.]])
    assert ember.linalg.lu_factor(a)._fields == ("LU", "pivots")
    assert ember.linalg.lu(a)._fields == ("P", "L", "U")
    assert ember.linalg.inv_ex(a)._fields == ("inverse", "info")
    assert ember.linalg.cholesky_ex(a)._fields == ("L", "info")
    assert ember.linalg.solve_ex(a, a)._fields == ("result", "info")


def test_ex_info_without_raising():
    e, t = both(lambda m, x: (m.linalg.inv_ex(x).info, m.linalg.cholesky_ex(x).info, m.linalg.solve_ex(x, x).info),
                SINGULAR)
    for a, b in zip(e, t):
        assert int(a) == int(b)
