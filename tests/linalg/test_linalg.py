"""Linear algebra beyond the op table: torch's errors, named tuples, LAPACK status codes, singular inputs and
higher-order gradients."""
import warnings

import numpy as np
import pytest
import torch

import ember


def pair(a):
    """The same values as an ember and a torch tensor."""
    a = np.asarray(a)
    return ember.tensor(a), torch.tensor(a)


def same_error(fn, *arrays):
    """ember raises what torch raises, with the same message."""
    with pytest.raises(Exception) as t:
        fn(torch, *[torch.tensor(a) for a in arrays])
    expected = ember.linalg.LinAlgError if isinstance(t.value, torch.linalg.LinAlgError) else type(t.value)
    with pytest.raises(expected) as e:
        fn(ember, *[ember.tensor(a) for a in arrays])
    assert str(e.value) == str(t.value)


F32, F64 = np.float32, np.float64
R = np.random.default_rng(0)


def rand(*shape, dtype=F64):
    return R.standard_normal(shape).astype(dtype)


# -- errors ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,shapes", [
    (lambda m, a, b: m.mm(a, b), [(2, 3), (4, 5)]),
    (lambda m, a, b: a @ b, [(2, 3), (4, 5)]),
    (lambda m, a, b: m.matmul(a, b), [(3,), (4,)]),
    (lambda m, a, b: m.matmul(a, b), [(2, 3), (4,)]),
    (lambda m, a, b: m.matmul(a, b), [(3,), (4, 2)]),
    (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (2, 4, 2)]),
    (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (3, 3, 2)]),
    (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (4, 2)]),
    (lambda m, a, b: m.matmul(a, b), [(), (3,)]),
    (lambda m, a, b: m.mm(a, b), [(3,), (3, 3)]),
    (lambda m, a, b: m.bmm(a, b), [(2, 3, 3), (3, 3, 3)]),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (4,)]),
    (lambda m, a, b: m.dot(a, b), [(3, 1), (3,)]),
    (lambda m, a, b: m.outer(a, b), [(3, 2), (3,)]),
    (lambda m, a, b: m.inner(a, b), [(3, 4), (2, 5)]),
    (lambda m, a, b: m.tensordot(a, b, dims=1), [(3, 4), (5, 2)]),
    (lambda m, a, b: m.tensordot(a, b, dims=3), [(3, 4), (4, 2)]),
    (lambda m, i, a, b: m.addmm(i, a, b), [(3, 5), (2, 3), (3, 5)]),
    (lambda m, i, a, b: m.addbmm(i, a, b), [(2, 2), (2, 2, 3), (3, 3, 2)]),
    (lambda m, a, b: m.linalg.multi_dot([a, b]), [(3,), (2, 4)]),
    (lambda m, a: m.linalg.multi_dot([a]), [(3,)]),
    (lambda m, a: m.trace(a), [(3,)]),
    (lambda m, a: m.linalg.inv(a), [(2, 3)]),
    (lambda m, a: m.linalg.inv(a), [(3,)]),
    (lambda m, a: m.linalg.det(a), [(2, 3)]),
    (lambda m, a: m.linalg.eigh(a), [(2, 3)]),
    (lambda m, a: m.linalg.eigh(a, UPLO="X"), [(3, 3)]),
    (lambda m, a: m.linalg.cholesky(a), [(3, 4)]),
    (lambda m, a: m.linalg.qr(a, mode="x"), [(2, 3)]),
    (lambda m, a: m.linalg.matrix_power(a, 2), [(2, 3)]),
    (lambda m, a: m.linalg.matrix_exp(a), [(2, 3)]),
    (lambda m, a, b: m.linalg.solve(a, b), [(3, 3), (4,)]),
    (lambda m, a, b: m.linalg.solve(a, b, left=False), [(3, 3), (2, 4)]),
    (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), [(3, 3), (3,)]),
    (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), [(3, 3), (4, 2)]),
    (lambda m, a, b: m.linalg.lstsq(a, b), [(5, 3), (4, 2)]),
    (lambda m, a, b: m.linalg.lstsq(a, b, driver="foo"), [(5, 3), (5, 2)]),
    (lambda m, a: m.linalg.matrix_norm(a), [(3,)]),
    (lambda m, a: m.linalg.matrix_norm(a, ord=3), [(3, 3)]),
    (lambda m, a: m.linalg.matrix_norm(a, dim=(0, 0)), [(3, 3)]),
    (lambda m, a: m.linalg.norm(a, ord=2), [(3, 3, 3)]),
    (lambda m, a: m.linalg.norm(a, dim=(0, 1, 1)), [(3, 3, 3)]),
    (lambda m, a, b: m.linalg.cross(a, b), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.linalg.cross(a, b), [(2, 1, 3), (4, 3)]),
    (lambda m, a, b: m.linalg.vecdot(a, b), [(3,), (4,)]),
])
def test_shape_errors(fn, shapes):
    same_error(fn, *[rand(*s) for s in shapes])


def test_dtype_errors():
    a32, a64 = rand(3, 3, dtype=F32), rand(3, 3)
    same_error(lambda m, a, b: m.mm(a, b), a32, a64)
    same_error(lambda m, a, b: a @ b, a32, a64)
    same_error(lambda m, a, b: m.dot(a, b), a32[0], a64[0])
    same_error(lambda m, a, b: m.bmm(a, b), a32[None], a64[None])
    same_error(lambda m, a, b: m.einsum("ij,jk", a, b), a32, a64)
    same_error(lambda m, a, b: m.linalg.solve(a, b), a32, a64)
    same_error(lambda m, a, b: m.linalg.vecdot(a, b), a32, a64)
    same_error(lambda m, a, b: m.linalg.lstsq(a, b), a32, a64)
    same_error(lambda m, a, b: m.linalg.multi_dot([a, b]), a32, a64)
    same_error(lambda m, i, a, b: m.addmm(i, a, b), a32, a32, a64)
    ints = np.ones((3, 3), np.int64)
    for f in (lambda m, a: m.linalg.inv(a), lambda m, a: m.linalg.det(a), lambda m, a: m.linalg.matrix_exp(a),
              lambda m, a: m.linalg.vector_norm(a), lambda m, a: m.linalg.matrix_power(a, -1)):
        same_error(f, ints)
    same_error(lambda m, i, a, b: m.addr(i, a, b, beta=0.5), ints, ints[0], ints[0])
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        ember.trace(ember.ones(2, 2, dtype=ember.bool))


@pytest.mark.parametrize("name", ["linalg.inv", "linalg.slogdet", "linalg.det", "linalg.svd", "linalg.eigh",
                                  "linalg.qr", "linalg.cholesky", "linalg.pinv", "linalg.svdvals"])
def test_half_precision_decompositions_are_refused(name):
    a = np.eye(3) + 0.1 * rand(3, 3)
    fn = lambda m, x: eval(f"m.{name}")(x.to(m.bfloat16))  # noqa: E731
    same_error(fn, a)


def test_einsum_errors():
    a = rand(2, 3)
    for eq, ops in [("ij,jk", [a]), ("ij", [a, a]), ("i.j", [a]), ("i1", [a]), ("ij...k", [a]),
                    ("ij,jk", [a, rand(4, 4)]), ("ij->iij", [a]), ("ij", [rand(2, 3, 3)]), ("ii->i", [a]),
                    ("i->j", [rand(2)])]:
        same_error(lambda m, *xs: m.einsum(eq, *xs), *ops)
    with pytest.raises(ValueError):
        ember.einsum("ij")


# -- singular and indefinite inputs ------------------------------------------------------------------------------
SINGULAR = [[1., 2, 3], [2, 4, 6], [1, 1, 1]]


def test_singular_errors_are_linalg_errors():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    same_error(lambda m, a: m.linalg.inv(a), np.array(SINGULAR))
    same_error(lambda m, a: m.linalg.inv(a), np.stack([np.eye(3), np.zeros((3, 3))]))
    same_error(lambda m, a: m.linalg.cholesky(a), np.array([[1., 2], [2, 1]]))
    same_error(lambda m, a: m.linalg.cholesky(a), np.stack([np.eye(2), [[1., 2], [2, 1]]]))
    same_error(lambda m, a, b: m.linalg.solve(a, b), np.zeros((3, 3)), np.ones(3))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


def test_ex_variants_report_info():
    a = np.stack([np.eye(3), np.array(SINGULAR)])
    e, t = ember.linalg.inv_ex(ember.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    assert e.info.dtype is ember.int32 and e.info.tolist() == t.info.tolist()
    np.testing.assert_allclose(e.inverse.numpy()[0], np.eye(3))
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv_ex(ember.tensor(a), check_errors=True)
    c = np.stack([np.eye(3), [[1., 2, 0], [2, 1, 0], [0, 0, 1]]])
    e, t = ember.linalg.cholesky_ex(ember.tensor(c)), torch.linalg.cholesky_ex(torch.tensor(c))
    assert e.info.tolist() == t.info.tolist() == [0, 2]
    np.testing.assert_allclose(e.L.numpy()[0], t.L.numpy()[0])
    b = np.ones((2, 3))
    e, t = ember.linalg.solve_ex(ember.tensor(a), ember.tensor(b)), torch.linalg.solve_ex(torch.tensor(a),
                                                                                         torch.tensor(b))
    assert e.info.tolist() == t.info.tolist()
    np.testing.assert_allclose(e.result.numpy()[0], t.result.numpy()[0])


def test_singular_determinants():
    for a in (np.array([[1., 2], [2, 4]]), np.array(SINGULAR), np.zeros((3, 3))):
        e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        assert ember.linalg.det(e).item() == pytest.approx(torch.linalg.det(t).item(), abs=1e-12)
        (ge,) = ember.autograd.grad(ember.linalg.det(e), e)
        (gt,) = torch.autograd.grad(torch.linalg.det(t), t, create_graph=True)  # the cofactor matrix
        np.testing.assert_allclose(ge.numpy(), gt.detach().numpy(), atol=1e-10)
    e, t = pair(-np.eye(3))
    assert np.isnan(ember.logdet(e).item()) and np.isnan(torch.logdet(t).item())
    e, t = pair(np.zeros((3, 3)))
    assert ember.logdet(e).item() == torch.logdet(t).item() == -np.inf
    assert tuple(x.item() for x in ember.linalg.slogdet(e)) == tuple(x.item() for x in torch.linalg.slogdet(t))


def test_singular_triangular_solve_gives_inf_like_torch():
    a, b = np.triu(rand(3, 3)), rand(3, 2)
    a[1, 1] = 0
    e = ember.linalg.solve_triangular(ember.tensor(a), ember.tensor(b), upper=True).numpy()
    t = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=True).numpy()
    np.testing.assert_array_equal(np.isfinite(e), np.isfinite(t))


# -- named tuples and legacy forms -------------------------------------------------------------------------------
NAMED = [
    (lambda m, a, s: m.linalg.svd(a), ("U", "S", "Vh")), (lambda m, a, s: m.svd(a), ("U", "S", "V")),
    (lambda m, a, s: m.linalg.qr(a), ("Q", "R")), (lambda m, a, s: m.qr(a), ("Q", "R")),
    (lambda m, a, s: m.linalg.eigh(s), ("eigenvalues", "eigenvectors")),
    (lambda m, a, s: m.linalg.slogdet(s), ("sign", "logabsdet")), (lambda m, a, s: m.slogdet(s), ("sign", "logabsdet")),
    (lambda m, a, s: m.linalg.inv_ex(s), ("inverse", "info")), (lambda m, a, s: m.linalg.cholesky_ex(s), ("L", "info")),
    (lambda m, a, s: m.linalg.solve_ex(s, s), ("result", "info")),
    (lambda m, a, s: m.linalg.lstsq(a, a), ("solution", "residuals", "rank", "singular_values")),
]


@pytest.mark.parametrize("fn,fields", NAMED)
def test_named_tuples(fn, fields):
    a = rand(4, 3)
    s = a.T @ a + 3 * np.eye(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.qr's deprecation
        want = fn(torch, torch.tensor(a), torch.tensor(s))
    got = fn(ember, ember.tensor(a), ember.tensor(s))
    assert type(got).__name__ == type(want).__name__ and len(got) == len(want) == len(fields)
    for i, f in enumerate(fields):
        assert getattr(got, f) is got[i]
        assert tuple(got[i].shape) == tuple(getattr(want, f).shape) and got[i].dtype.name == str(want[i].dtype)[6:]


def test_legacy_svd_returns_v():
    a = rand(2, 5, 3)
    U, S, V = ember.svd(ember.tensor(a))
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ np.swapaxes(V.numpy(), -1, -2), a, atol=1e-10)
    _, _, Vh = ember.linalg.svd(ember.tensor(a), full_matrices=False)
    np.testing.assert_allclose(V.numpy(), np.swapaxes(Vh.numpy(), -1, -2))
    U, S, V = ember.svd(ember.tensor(a), some=False)
    assert tuple(U.shape) == (2, 5, 5) and tuple(V.shape) == (2, 3, 3)
    U, S, V = ember.svd(ember.tensor(a), compute_uv=False)
    assert not U.numpy().any() and not V.numpy().any() and tuple(U.shape) == (2, 5, 5)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (5,)), ((5, 3), (5,))])
def test_lstsq_outputs_by_driver(driver, shapes):
    if shapes == ((2, 5, 3), (5,)):
        shapes = ((2, 5, 3), (2, 5))
    a, b = rand(*shapes[0]), rand(*shapes[1])
    e = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for f in ("solution", "residuals", "rank", "singular_values"):
        x, y = getattr(e, f), getattr(t, f)
        assert tuple(x.shape) == tuple(y.shape) and x.dtype.name == str(y.dtype)[6:], f
        if driver != "gels" or m_ge_n(a):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-8, err_msg=f)


def m_ge_n(a):
    return a.shape[-2] >= a.shape[-1]


def test_lstsq_rank_deficient_matches_gelsd():
    a = np.ones((5, 3))
    b = rand(5, 2)
    e = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver="gelsd")
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelsd")
    assert e.rank.item() == t.rank.item() == 1 and e.residuals.numel() == t.residuals.numel() == 0
    np.testing.assert_allclose(e.solution.numpy(), t.solution.numpy(), atol=1e-10)


def test_pinv_tolerances_and_rank():
    a = rand(2, 4, 3)
    for kw in ({"atol": 0.5}, {"rtol": 0.3}, {"atol": 0.1, "rtol": 0.2}, {"hermitian": False}):
        e = ember.linalg.pinv(ember.tensor(a), **kw).numpy()
        t = torch.linalg.pinv(torch.tensor(a), **kw).numpy()
        np.testing.assert_allclose(e, t, atol=1e-10)
    atol = np.array([0.0, 10.0])
    e = ember.linalg.pinv(ember.tensor(a), atol=ember.tensor(atol)).numpy()
    t = torch.linalg.pinv(torch.tensor(a), atol=torch.tensor(atol)).numpy()
    np.testing.assert_allclose(e, t, atol=1e-10)
    np.testing.assert_allclose(ember.pinverse(ember.tensor(a[0])).numpy(), torch.pinverse(torch.tensor(a[0])).numpy())
    r = ember.linalg.matrix_rank(ember.tensor(a), tol=1.0)
    assert r.tolist() == torch.linalg.matrix_rank(torch.tensor(a), tol=1.0).tolist() and r.dtype is ember.int64


# -- gradients ---------------------------------------------------------------------------------------------------
def spd(m, a):
    return a @ a.mT + a.shape[-1] * m.eye(a.shape[-1], dtype=a.dtype)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.linalg.inv(a),
    lambda m, a: m.linalg.det(a),
    lambda m, a: m.linalg.slogdet(a)[1],
    lambda m, a: m.linalg.cholesky(spd(m, a)),
    lambda m, a: m.linalg.eigvalsh(spd(m, a)),
    lambda m, a: m.linalg.svdvals(a),
    lambda m, a: m.linalg.pinv(a),
    lambda m, a: m.linalg.matrix_exp(a),
    lambda m, a: m.einsum("ij,jk->ik", a, a),
    lambda m, a: m.linalg.solve(a, a.sum(0)),
])
def test_second_order_gradients(fn):
    a = ember.tensor(np.eye(3) * 2 + 0.3 * rand(3, 3), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: fn(ember, x), (a,), atol=1e-5, rtol=1e-4)


def test_vector_norm_subgradient_at_zero():
    e, t = ember.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    ember.linalg.vector_norm(e).backward()
    torch.linalg.vector_norm(t).backward()
    assert e.grad.tolist() == t.grad.tolist() == [0.0, 0.0, 0.0]
    e = ember.zeros(2, 2, requires_grad=True)
    ember.linalg.matrix_norm(e).backward()
    assert not e.grad.numpy().any()


def test_matrix_power_gradients():
    a = np.eye(3) + 0.2 * rand(3, 3)
    for n in (0, 1, 4, -3):
        e, t = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ye, yt = ember.linalg.matrix_power(e, n), torch.linalg.matrix_power(t, n)
        assert ye.requires_grad and yt.requires_grad
        g = rand(3, 3)
        (ge,) = ember.autograd.grad(ye, e, ember.tensor(g))
        (gt,) = torch.autograd.grad(yt, t, torch.tensor(g))
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), atol=1e-10)


def test_qr_backward_errors():
    a = ember.tensor(rand(4, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        ember.linalg.qr(a, mode="r")[1].sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        ember.linalg.qr(a, mode="complete")[1].sum().backward()


# -- products: dtypes, speed path, in place ----------------------------------------------------------------------
def test_matmul_keeps_float32_and_strided_inputs():
    a, b = rand(6, 5, dtype=F32), rand(4, 5, dtype=F32)
    r = ember.tensor(a) @ ember.tensor(b).mT  # a transposed operand goes to BLAS as is
    assert r.dtype is ember.float32 and r.numpy().dtype == np.float32
    np.testing.assert_allclose(r.numpy(), a @ b.T, rtol=1e-5)
    x = ember.tensor(rand(3, 6, 5, dtype=F32), requires_grad=True)
    w = ember.tensor(b.T.copy(), requires_grad=True)
    (x @ w).sum().backward()
    assert w.grad.dtype is ember.float32 and x.grad.dtype is ember.float32
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy().sum((0, 1))[:, None].repeat(4, 1), rtol=1e-5)


def test_half_matmul_rounds_like_torch():
    a, b = rand(8, 16, dtype=F32), rand(16, 4, dtype=F32)
    for dt in ("bfloat16", "float16"):
        e = (ember.tensor(a).to(getattr(ember, dt)) @ ember.tensor(b).to(getattr(ember, dt))).float().numpy()
        t = (torch.tensor(a).to(getattr(torch, dt)) @ torch.tensor(b).to(getattr(torch, dt))).float().numpy()
        np.testing.assert_allclose(e, t, rtol=1e-2, atol=1e-2)


def test_integer_matmul():
    a, b = R.integers(-5, 5, (3, 4)), R.integers(-5, 5, (4, 2))
    for dt in (np.int64, np.int32, np.uint8):
        e = ember.tensor(a.astype(dt)) @ ember.tensor(b.astype(dt))
        t = torch.tensor(a.astype(dt)) @ torch.tensor(b.astype(dt))
        assert e.tolist() == t.tolist() and e.dtype.name == str(t.dtype)[6:]
    same_error(lambda m, x, y: x @ y, np.ones((2, 2), bool), np.ones((2, 2), bool))


def test_inplace_products_and_operators():
    i, a, b = rand(2, 4), rand(2, 3), rand(3, 4)
    e, t = ember.tensor(i), torch.tensor(i)
    e.addmm_(ember.tensor(a), ember.tensor(b), beta=0.5, alpha=2)
    t.addmm_(torch.tensor(a), torch.tensor(b), beta=0.5, alpha=2)
    np.testing.assert_allclose(e.numpy(), t.numpy())
    x = ember.tensor(a)
    y = x
    x @= ember.tensor(b)  # like torch: a new tensor, not an in-place product
    assert x is not y and tuple(x.shape) == (2, 4)
    np.testing.assert_allclose(ember.tensor(b).__rmatmul__(ember.tensor(a)).numpy(), a @ b)


def test_matmul_operator_with_non_tensors():
    for f in (lambda: ember.ones(2) @ [1.0, 2.0], lambda: [1.0, 2.0] @ ember.ones(2), lambda: ember.ones(2) @ 2):
        with pytest.raises(TypeError, match="unsupported operand"):
            f()


def test_addmm_beta_zero_ignores_nan():
    i = np.full((2, 2), np.nan)
    e = ember.addmm(ember.tensor(i), ember.ones(2, 3, dtype=ember.float64), ember.ones(3, 2, dtype=ember.float64),
                    beta=0)
    assert e.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_cross_without_dim_warns():
    a, b = rand(4, 3), rand(4, 3)
    with pytest.warns(UserWarning, match="without specifying the dim"):
        e = ember.cross(ember.tensor(a), ember.tensor(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(e.numpy(), t.numpy())
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        ember.cholesky(ember.eye(2))


def test_tensor_methods():
    a = np.eye(3) * 2 + 0.1 * rand(3, 3)
    e, t = pair(a)
    for name in ("det", "inverse", "logdet", "pinverse", "matrix_exp", "trace"):
        np.testing.assert_allclose(getattr(e, name)().numpy(), getattr(t, name)().numpy(), rtol=1e-10)
    np.testing.assert_allclose(e.matrix_power(3).numpy(), t.matrix_power(3).numpy())
    np.testing.assert_allclose(e.slogdet()[1].numpy(), t.slogdet()[1].numpy())
    np.testing.assert_allclose(e.cross(e.mT, dim=0).numpy(), t.cross(t.mT, dim=0).numpy())
    np.testing.assert_allclose(e.kron(e).numpy(), t.kron(t).numpy())
    np.testing.assert_allclose(e.norm().numpy(), t.norm().numpy())
