"""Products, contractions and einsum as models write them (attention scores, bilinear forms, batched BLAS calls,
distances, cross products) against torch: values, gradients, double backward, dtypes, strides and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

INF = float("inf")


def _arrs(*shapes, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s) for s in shapes]
    if complex_:
        out = [a + 1j * rng.standard_normal(a.shape) for a in out]
    return out


def _np(t):
    return t.detach().resolve_conj().numpy() if t.dtype.is_complex else t.detach().double().numpy()


def _close(e, t, rtol=1e-10, atol=1e-12):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _run(lib, fn, arrays, dtype=None, grad=True, create_graph=False):
    ts = [lib.tensor(a) for a in arrays]
    if dtype is not None:
        ts = [t.to(getattr(lib, dtype)) for t in ts]
    if grad:
        ts = [t.requires_grad_() for t in ts]
    y = fn(lib, *ts)
    if not grad:
        return y, None, ts
    g = lib.tensor(np.random.default_rng(9).standard_normal(tuple(y.shape))).to(y.dtype)
    return y, lib.autograd.grad(y, ts, g, create_graph=create_graph), ts


def _check(fn, arrays, dtype=None, grad=True, rtol=1e-10, atol=1e-12):
    (ye, ge, _), (yt, gt, _) = (_run(lib, fn, arrays, dtype, grad) for lib in (ember, torch))
    _close(ye, yt, rtol, atol)
    for a, b in zip(ge or (), gt or ()):
        _close(a, b, rtol, atol)


def _same_error(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(ember)
    return str(got.value), str(want.value)


def _E(eq):
    return lambda lib, *ts: lib.einsum(eq, *ts)


# -- einsum ------------------------------------------------------------------------------------------------------
EINSUMS = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),  # attention-weighted values
    ("bi,oij,bj->bo", [(4, 3), (5, 3, 2), (4, 2)]),  # bilinear
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 6)]),  # size-1 batch dims broadcast under the ellipsis
    ("...ij,...jk", [(2, 1, 4, 5), (1, 3, 5, 6)]),
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("...ij->ij", [(2, 3, 4, 5)]),  # ellipsis dims not in the output are summed
    ("b...,b...->b...", [(2, 1, 4), (2, 3, 1)]),
    ("ii->i", [(4, 4)]),
    ("iij->ij", [(3, 3, 4)]),
    ("iii->i", [(3, 3, 3)]),
    ("ii", [(4, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij->", [(4, 3)]),
    ("ijk->j", [(4, 3, 2)]),
    ("ij,jk", [(4, 3), (3, 2)]),  # implicit output: labels seen once, in alphabetical order
    ("ba,ca", [(4, 3), (2, 3)]),
    ("ab,bA", [(2, 3), (3, 4)]),  # upper case sorts first
    ("Ba,aC,Bd", [(2, 3), (3, 4), (2, 5)]),
    ("i,j->ij", [(4,), (3,)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("bi,bj->bij", [(5, 2), (5, 3)]),
    ("i,j->", [(2,), (3,)]),
    ("ij,ji->", [(3, 4), (4, 3)]),
    ("i...j->j...i", [(2, 3, 4, 5)]),
    ("bij,bjk->bik", [(1, 3, 4), (5, 4, 2)]),
    (",ij->ij", [(), (2, 3)]),
    ("ab,bc,cd,de,ef->af", [(2, 3), (3, 4), (4, 5), (5, 6), (6, 2)]),
    ("bchw,oc->bohw", [(2, 3, 4, 4), (5, 3)]),  # 1x1 convolution
    ("bte,ehd->bthd", [(2, 3, 4), (4, 2, 5)]),
    ("bhnd,bhne->bhde", [(2, 2, 3, 4), (2, 2, 3, 5)]),  # linear attention
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_equations_values_and_gradients(eq, shapes):
    _check(_E(eq), _arrs(*shapes))


def test_einsum_complex_and_float32():
    _check(_E("ij,kj->ik"), _arrs((2, 3), (4, 3), complex_=True))
    _check(lambda lib, a, b: lib.einsum("ij,kj->ik", a, b.conj()), _arrs((2, 3), (4, 3), complex_=True))
    _check(_E("bhqd,bhkd->bhqk"), _arrs((2, 3, 4, 5), (2, 3, 6, 5)), dtype="float32", rtol=1e-5, atol=1e-6)


def test_einsum_of_two_operands_is_contiguous():
    """``einsum('bhqd,bhkd->bhqk', q, k).view(b, h, -1)`` works: the product comes out contiguous."""
    for eq, shapes in [("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("bik,bkj->bij", [(2, 3, 4), (2, 4, 5)]),
                       ("nqhd,nkhd->nhqk", [(2, 3, 4, 5), (2, 6, 4, 5)])]:
        e, t = (lib.einsum(eq, *[lib.tensor(a) for a in _arrs(*shapes)]) for lib in (ember, torch))
        assert e.is_contiguous() and tuple(e.stride()) == tuple(t.stride())
        _close(e.view(e.shape[0], e.shape[1], -1), t.view(t.shape[0], t.shape[1], -1))


@pytest.mark.parametrize("form", ["sublist", "implicit", "ellipsis", "big", "tuple", "list", "list_of_ops"])
def test_einsum_sublist_and_list_forms(form):
    calls = {
        "sublist": lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        "implicit": lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2]),
        "ellipsis": lambda lib, a, b: lib.einsum(a[None], [..., 0, 1], b, [..., 1, 2], [..., 0, 2]),
        "big": lambda lib, a, b: lib.einsum(a, [30, 51], b, [51, 0]),  # implicit output ordered by number
        "tuple": lambda lib, a, b: lib.einsum(a, (0, 1), b, (1, 2), (0, 2)),
        "list": lambda lib, a, b: lib.einsum("ij,jk->ik", [a, b]),
        "list_of_ops": lambda lib, a, b: lib.einsum("ij,jk->ik", (a, b)),
    }
    _check(calls[form], _arrs((2, 3), (3, 4)))


def test_einsum_integer_and_bool_dtypes():
    """Labels summed out of one operand make an int64 (counting) sum; a bool contraction is refused."""
    a = np.full((2, 3), 100)
    for dt in ("int8", "uint8", "int16", "int32", "bool"):
        for eq in ("ij->", "ij->i", "ii->", "ij->ji", "i,j->"):
            ops = [a[:, :2]] if eq == "ii->" else [a[0], a[1]] if eq == "i,j->" else [a]
            _check(_E(eq), ops, dtype=dt, grad=False)
        if dt != "bool":
            _check(_E("ij,jk->ik"), [a, a.T], dtype=dt, grad=False)
    for eq, shapes in [("ij,jk->ik", [(2, 3), (3, 4)]), ("i,i->", [(3,), (3,)]), ("ij,ij->i", [(2, 3), (2, 3)])]:
        e, t = _same_error(lambda lib: lib.einsum(eq, *[lib.ones(s, dtype=lib.bool) for s in shapes]))
        assert e == t
    _check(_E("ij,ij->ij"), [a > 50, a > 0], grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(4, 5)),
    lambda lib: lib.einsum("i1,jk->ik", lib.ones(2, 3), lib.ones(4, 5)),
    lambda lib: lib.einsum("ij->ik", lib.ones(2, 3)),
    lambda lib: lib.einsum("ijk->i", lib.ones(2, 3)),
    lambda lib: lib.einsum("ij,jk,kl->il", lib.ones(2, 3), lib.ones(3, 4)),
    lambda lib: lib.einsum("ij->i", lib.ones(2, 3), lib.ones(2, 3)),
    lambda lib: lib.einsum("ij->ii", lib.ones(2, 3)),
    lambda lib: lib.einsum("ij->j->i", lib.ones(2, 3)),
    lambda lib: lib.einsum("ij->i"),
    lambda lib: lib.einsum("ij->i", np.ones((2, 3))),
    lambda lib: lib.einsum("ij,jk", lib.ones(2, 3), "x"),
    lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64)),
    lambda lib: lib.einsum(lib.ones(2, 3), [0, 60]),
    lambda lib: lib.einsum(lib.ones(2, 3), [0, -1]),
    lambda lib: lib.einsum(lib.ones(2, 3), [0, "a"]),
    lambda lib: lib.einsum("...i...->i", lib.ones(2, 3)),
    lambda lib: lib.einsum("ii->i", lib.ones(2, 3)),
    lambda lib: lib.einsum("...i,...i->...", lib.ones(2, 3), lib.ones(4, 3)),
    lambda lib: lib.einsum("..ij", lib.ones(2, 3)),
    lambda lib: lib.einsum("ij->iJ", lib.ones(2, 3)),
])
def test_einsum_errors(call):
    _same_error(call)


# -- matmul and the BLAS-shaped products --------------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((3,), (2, 3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3,)),
                 ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((3,), (5, 1, 3, 2)), ((2, 2, 3), (3, 2, 3, 2)), ((0, 2, 3), (3, 4)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_rank_combinations(sa, sb):
    _check(lambda lib, a, b: lib.matmul(a, b), _arrs(sa, sb))
    _check(lambda lib, a, b: a @ b, _arrs(sa, sb))
    _check(lambda lib, a, b: lib.linalg.matmul(a, b), _arrs(sa, sb))


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((3,), (4, 5)), ((2, 3), (4,)), ((2, 3), (4, 5)),
                                   ((5, 2, 3), (4, 3, 4)), ((5, 2, 3), (4, 4)), ((2, 3), (5, 4, 4)), ((), (3,)),
                                   ((2, 2, 3), (3, 3, 3, 2))])
def test_matmul_errors_match(sa, sb):
    e, t = _same_error(lambda lib: lib.matmul(lib.ones(sa), lib.ones(sb)))
    assert e == t


@pytest.mark.parametrize("name,fn,shapes", [
    ("mm", lambda lib, a, b: lib.mm(a, b), [(2, 3), (3, 4)]),
    ("mm_t", lambda lib, a, b: a.T.mm(b.T), [(3, 2), (4, 3)]),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), [(5, 2, 3), (5, 3, 4)]),
    ("bmm_expanded", lambda lib, a, b: lib.bmm(a.expand(4, 2, 3), b), [(1, 2, 3), (4, 3, 5)]),
    ("mv", lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)]),
    ("dot", lambda lib, a, b: lib.dot(a, b), [(3,), (3,)]),
    ("inner", lambda lib, a, b: lib.inner(a, b), [(2, 4, 3), (5, 3)]),
    ("inner_0d", lambda lib, a, b: lib.inner(a, b), [(), (5, 3)]),
    ("outer", lambda lib, a, b: lib.outer(a, b), [(2,), (5,)]),
    ("ger", lambda lib, a, b: lib.ger(a, b), [(2,), (5,)]),
    ("addmm", lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    ("addmm_method", lambda lib, c, a, b: c.addmm(a, b, beta=2), [(2, 4), (2, 3), (3, 4)]),
    ("addmm_k0", lambda lib, c, a, b: lib.addmm(c, a, b, beta=2), [(2, 4), (2, 0), (0, 4)]),
    ("addmv", lambda lib, c, a, b: lib.addmv(c, a, b, beta=0.5, alpha=2), [(2,), (2, 3), (3,)]),
    ("addmv_0d", lambda lib, c, a, b: lib.addmv(c, a, b), [(), (2, 3), (3,)]),
    ("addr", lambda lib, c, a, b: lib.addr(c, a, b, beta=0.5, alpha=2), [(2, 3), (2,), (3,)]),
    ("addr_broadcast", lambda lib, c, a, b: lib.addr(c, a, b), [(3,), (2,), (3,)]),
    ("addbmm", lambda lib, c, a, b: lib.addbmm(c, a, b, beta=0.5, alpha=2), [(2, 4), (5, 2, 3), (5, 3, 4)]),
    ("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5, alpha=2), [(5, 2, 4), (5, 2, 3), (5, 3, 4)]),
    ("baddbmm_broadcast", lambda lib, c, a, b: c.baddbmm(a, b, alpha=0.125), [(1, 4), (5, 2, 3), (5, 3, 4)]),
    ("addmm_", lambda lib, c, a, b: (c * 1).addmm_(a, b, beta=2), [(2, 4), (2, 3), (3, 4)]),
    ("addmv_", lambda lib, c, a, b: (c * 1).addmv_(a, b, beta=2), [(2,), (2, 3), (3,)]),
    ("addr_", lambda lib, c, a, b: (c * 1).addr_(a, b, beta=2), [(2, 3), (2,), (3,)]),
    ("addbmm_", lambda lib, c, a, b: (c * 1).addbmm_(a, b, beta=2), [(2, 4), (5, 2, 3), (5, 3, 4)]),
    ("baddbmm_", lambda lib, c, a, b: (c * 1).baddbmm_(a, b, beta=2), [(5, 2, 4), (5, 2, 3), (5, 3, 4)]),
])
def test_blas_products_values_and_gradients(name, fn, shapes):
    _check(fn, _arrs(*shapes))


@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0), [(2, 4), (2, 3), (3, 4)]),
    (lambda lib, c, a, b: lib.addmv(c, a, b, beta=0), [(2,), (2, 3), (3,)]),
    (lambda lib, c, a, b: lib.addr(c, a, b, beta=0), [(2, 3), (2,), (3,)]),
    (lambda lib, c, a, b: lib.addbmm(c, a, b, beta=0), [(2, 4), (5, 2, 3), (5, 3, 4)]),
    (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0, alpha=0.125), [(5, 2, 4), (5, 2, 3), (5, 3, 4)]),
])
def test_beta_zero_ignores_nan_in_input(fn, shapes):
    _check(lambda lib, c, a, b: fn(lib, c * float("nan"), a, b), _arrs(*shapes))


def test_complex_products():
    for fn, shapes in [(lambda lib, a, b: a.mH @ b, [(3, 2), (3, 4)]), (lambda lib, a, b: lib.vdot(a, b), [(3,), (3,)]),
                       (lambda lib, a, b: lib.dot(a, b), [(3,), (3,)]), (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)]),
                       (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5j, alpha=2 - 1j), [(2, 4), (2, 3), (3, 4)]),
                       (lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=1j), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
                       (lambda lib, a, b: lib.tensordot(a, b, ([0], [1])), [(3, 2), (4, 3)])]:
        _check(fn, _arrs(*shapes, complex_=True))


INT_PRODUCTS = [
    lambda lib, a, b, c: lib.mm(a, b), lambda lib, a, b, c: lib.matmul(a[None].expand(2, 2, 3), b[:, 0]),
    lambda lib, a, b, c: lib.bmm(a[None], b[None]), lambda lib, a, b, c: lib.mv(a, b[:, 0]),
    lambda lib, a, b, c: lib.dot(a[0], b[:, 0]), lambda lib, a, b, c: lib.addmm(c, a, b, beta=2, alpha=3),
    lambda lib, a, b, c: lib.addmv(c[:, 0], a, b[:, 0], beta=2, alpha=3),
    lambda lib, a, b, c: lib.addr(c, a[:, 0], b[0], beta=2, alpha=3),
    lambda lib, a, b, c: lib.baddbmm(c[None], a[None], b[None], beta=2, alpha=3),
    lambda lib, a, b, c: lib.addbmm(c, a[None].expand(3, 2, 3), b[None].expand(3, 3, 4), beta=2, alpha=3),
    lambda lib, a, b, c: lib.tensordot(a, b, 1), lambda lib, a, b, c: lib.inner(a, b.T),
    lambda lib, a, b, c: lib.kron(a, b), lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c.T]),
]


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("i", range(len(INT_PRODUCTS)))
def test_integer_products_keep_their_dtype_and_wrap(dt, i):
    a, b, c = np.arange(6).reshape(2, 3) * 37, np.arange(12).reshape(3, 4) * 11, np.arange(8).reshape(2, 4) * 5
    _check(INT_PRODUCTS[i], [a, b, c], dtype=dt, grad=False)


@pytest.mark.parametrize("call", [
    lambda lib, B: lib.mm(B(2, 2), B(2, 2)), lambda lib, B: lib.bmm(B(1, 2, 2), B(1, 2, 2)),
    lambda lib, B: lib.addmm(B(2, 2), B(2, 2), B(2, 2)), lambda lib, B: lib.baddbmm(B(1, 2, 2), B(1, 2, 2), B(1, 2, 2)),
    lambda lib, B: lib.addbmm(B(2, 2), B(1, 2, 2), B(1, 2, 2)), lambda lib, B: lib.addmv(B(2), B(2, 2), B(2)),
    lambda lib, B: lib.mv(B(2, 2), B(2)), lambda lib, B: lib.dot(B(2), B(2)), lambda lib, B: lib.vdot(B(2), B(2)),
    lambda lib, B: lib.inner(B(2, 3), B(4, 3)), lambda lib, B: lib.tensordot(B(2, 2), B(2, 2)),
    lambda lib, B: lib.matmul(B(3, 2, 2), B(2, 2)),
])
def test_bool_products_are_not_implemented(call):
    e, t = _same_error(lambda lib: call(lib, lambda *s: lib.ones(*s, dtype=lib.bool)))
    assert e == t


def test_bool_products_torch_supports():
    for fn in (lambda lib, a, b: lib.outer(a[0], b[0]), lambda lib, a, b: lib.kron(a, b),
               lambda lib, a, b: lib.addr(a, a[0], b[0])):
        _check(fn, [np.eye(2) > 0, np.ones((2, 2)) > 0], grad=False)


@pytest.mark.parametrize("name,args", [
    ("mm", [(2, 2), (2, 2)]), ("bmm", [(1, 2, 2), (1, 2, 2)]), ("matmul", [(2, 2), (2, 2)]),
    ("matmul", [(2,), (2, 2)]), ("mv", [(2, 2), (2,)]), ("dot", [(2,), (2,)]), ("vdot", [(2,), (2,)]),
    ("addmm", [(2, 2), (2, 2), (2, 2)]), ("addmv", [(2,), (2, 2), (2,)]), ("baddbmm", [(1, 2, 2)] * 3),
    ("addbmm", [(2, 2), (1, 2, 2), (1, 2, 2)]), ("inner", [(2, 2), (2, 2)]), ("linalg.multi_dot", [(2, 2), (2, 2)]),
    ("linalg.matmul", [(2, 2), (2, 2)]), ("linalg.vecdot", [(2, 2), (2, 2)]), ("linalg.cross", [(3,), (3,)]),
])
@pytest.mark.parametrize("out_dtype", ["float64", "int64"])
def test_out_of_another_dtype_is_refused(name, args, out_dtype):
    def call(lib):
        f = getattr(lib.linalg, name[7:]) if name.startswith("linalg.") else getattr(lib, name)
        ts = [lib.ones(s) for s in args]
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        return f(ts, out=out) if name == "linalg.multi_dot" else f(*ts, out=out)
    e, t = _same_error(call)
    assert e == t


@pytest.mark.parametrize("name,shapes", [("mm", [(2, 3), (3, 4)]), ("bmm", [(5, 2, 3), (5, 3, 4)]),
                                         ("mv", [(2, 3), (3,)]), ("dot", [(3,), (3,)]), ("inner", [(2, 3), (4, 3)]),
                                         ("outer", [(2,), (3,)]), ("matmul", [(5, 2, 3), (3,)]),
                                         ("kron", [(2, 3), (2, 2)]), ("tensordot", [(2, 3), (2, 3)])])
def test_out_is_resized_and_returned(name, shapes):
    def fn(lib, a, b):
        out = lib.empty(0, dtype=a.dtype)
        r = getattr(lib, name)(a, b, out=out)
        assert r is out
        return out
    _check(fn, _arrs(*shapes), grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.mm(lib.ones(2, 2, 2), lib.ones(2, 2)), lambda lib: lib.bmm(lib.ones(2, 2), lib.ones(2, 2)),
    lambda lib: lib.bmm(lib.ones(2, 2, 3), lib.ones(3, 3, 2)), lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.dot(lib.ones(3), lib.ones(2)), lambda lib: lib.dot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.outer(lib.ones(2, 2), lib.ones(2)), lambda lib: lib.inner(lib.ones(2, 3), lib.ones(2, 4)),
    lambda lib: lib.addmm(lib.ones(3, 4), lib.ones(2, 3), lib.ones(3, 4)),
    lambda lib: lib.baddbmm(lib.ones(3, 2, 4), lib.ones(2, 2, 3), lib.ones(2, 3, 4)),
    lambda lib: lib.addbmm(lib.ones(2, 4), lib.ones(2, 2, 3), lib.ones(3, 3, 4)),
    lambda lib: lib.addmv(lib.ones(3), lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.addr(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, dtype=lib.int64), lib.ones(3, dtype=lib.int64),
                         alpha=1.5),
    lambda lib: lib.mm(lib.ones(2, 2, requires_grad=True), lib.ones(2, 2), out=lib.empty(2, 2)),
])
def test_blas_errors(call):
    _same_error(call)


# -- tensordot, multi_dot, kron, cross ----------------------------------------------------------------------------
@pytest.mark.parametrize("dims,shapes", [
    (0, [(2, 3), (4,)]), (1, [(2, 3), (3, 4)]), (2, [(2, 3, 4), (3, 4, 5)]), (([1, 0], [0, 1]), [(3, 2, 4), (2, 3, 5)]),
    (([-1], [0]), [(3, 2, 4), (4, 3, 5)]), (((0,), (1,)), [(3, 2), (5, 3)]), (([], []), [(3, 2), (5,)]),
])
def test_tensordot_forms(dims, shapes):
    _check(lambda lib, a, b: lib.tensordot(a, b, dims), _arrs(*shapes))
    _check(lambda lib, a, b: lib.tensordot(a, b, dims=dims), _arrs(*shapes, complex_=True))


def test_tensordot_tensor_dims():
    _check(lambda lib, a, b: lib.tensordot(a, b, lib.tensor([[1], [0]])), _arrs((3, 2), (2, 5)))
    _check(lambda lib, a, b: lib.tensordot(a, b, lib.tensor(1)), _arrs((3, 2), (2, 5)))


@pytest.mark.parametrize("a,b,dims", [
    ((2, 3), (4, 5), 1), ((2, 3), (3, 5), -1), ((2, 3), (3, 5), 3), ((2, 3), (3, 5), ([0, 1], [0])),
    ((3, 3), (3, 3), ([0, 0], [0, 1])), ((2, 3), (3, 5), ([2], [0])), ((3, 2), (2, 3), (1, 0)),
    ((3, 2), (2, 3), ([1], 0)), ((2, 3), (3, 5), 1.0), ((2, 3), (3, 5), None),
])
def test_tensordot_errors(a, b, dims):
    e, t = _same_error(lambda lib: lib.tensordot(lib.ones(a), lib.ones(b), dims))
    assert e == t


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4), (4, 5), (5, 2)], [(3,), (3, 4), (4, 5)], [(2, 3), (3, 4), (4,)],
                                    [(3,), (3, 4), (4,)], [(3,), (3,)]])
def test_multi_dot_and_chain_matmul(shapes):
    _check(lambda lib, *m: lib.linalg.multi_dot(m), _arrs(*shapes))
    if all(len(s) == 2 for s in shapes):
        _check(lambda lib, *m: lib.chain_matmul(*m), _arrs(*shapes))


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.multi_dot([lib.ones(2, 2)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(2, 2, 2), lib.ones(2, 2)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(2, 2), lib.ones(2), lib.ones(2, 2)]),
    lambda lib: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(2, 2)]),
    lambda lib: lib.chain_matmul(lib.ones(2), lib.ones(2, 2)),
])
def test_multi_dot_errors(call):
    _same_error(call)


@pytest.mark.parametrize("shapes", [[(2, 3), (4, 5)], [(2,), (4, 5)], [(2, 1, 3), (2, 2)], [(), (2, 2)]])
def test_kron(shapes):
    _check(lambda lib, a, b: lib.kron(a, b), _arrs(*shapes))


@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, a, b: lib.cross(a, b, dim=1), [(4, 3, 2), (4, 3, 2)]),
    (lambda lib, a, b: lib.cross(a, b, dim=-1), [(4, 3), (1, 3)]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [(5, 1, 3), (1, 4, 3)]),
    (lambda lib, a, b: lib.linalg.cross(a, b, dim=0), [(3, 4), (3, 1)]),
    (lambda lib, a, b: a.cross(b, dim=-1), [(2, 3), (2, 3)]),
])
def test_cross_dims_and_broadcasting(fn, shapes):
    _check(fn, _arrs(*shapes))
    _check(fn, _arrs(*shapes, complex_=True))


def test_cross_without_dim_picks_the_first_dim_of_size_3():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(lambda lib, a, b: lib.cross(a, b), _arrs((4, 3, 3), (4, 3, 3)))


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_cross_rounds_each_product_in_half_precision(dt):
    _check(lambda lib, a, b: lib.linalg.cross(a, b), _arrs((64, 3), (64, 3)), dtype=dt, grad=False, rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib: lib.linalg.cross(lib.ones(2, 4), lib.ones(2, 4)),
    lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(4, 3)),
    lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.cross(lib.ones(2, 3), lib.ones(2, 3), dim=0),
])
def test_cross_errors(call):
    _same_error(call)


# -- distances and similarities -----------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, INF])
def test_cdist_and_pdist_norms(p):
    _check(lambda lib, a, b: lib.cdist(a, b, p=p), _arrs((5, 4), (6, 4)))
    _check(lambda lib, a, b: lib.cdist(a, b, p=p), _arrs((3, 1, 5, 4), (2, 6, 4)))
    _check(lambda lib, a: lib.pdist(a, p=p), _arrs((5, 4)))
    _check(lambda lib, a: lib.cdist(a, a, p=p), _arrs((5, 4)), rtol=1e-6, atol=1e-6)  # zero distances


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist",
                                  "use_mm_for_euclid_dist_if_necessary"])
def test_cdist_compute_modes(mode):
    _check(lambda lib, a, b: lib.cdist(a, b, compute_mode=mode), _arrs((30, 4), (40, 4)), rtol=1e-6, atol=1e-7)
    _check(lambda lib, a, b: lib.cdist(a, b, compute_mode=mode), _arrs((30, 4), (40, 4)), dtype="float32",
           rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cdist(lib.ones(5, 4), lib.ones(6, 3)), lambda lib: lib.cdist(lib.ones(5), lib.ones(6)),
    lambda lib: lib.cdist(lib.ones(5, 4), lib.ones(6, 4), p=-1),
    lambda lib: lib.cdist(lib.ones(5, 4), lib.ones(6, 4), compute_mode="x"),
    lambda lib: lib.cdist(lib.ones(5, 4, dtype=lib.int64), lib.ones(6, 4, dtype=lib.int64)),
    lambda lib: lib.cdist(lib.ones(5, 4), lib.ones(6, 4, dtype=lib.float64)),
    lambda lib: lib.cdist(lib.ones(5, 4, dtype=lib.float64), lib.ones(6, 4)),
    lambda lib: lib.cdist(lib.ones(5, 4, dtype=lib.float16), lib.ones(6, 4, dtype=lib.float16)),
    lambda lib: lib.cdist(lib.ones(5, 4), lib.ones(6, 4, dtype=lib.bfloat16)),
    lambda lib: lib.pdist(lib.ones(2, 5, 4)), lambda lib: lib.pdist(lib.ones(5, 4), p=-1),
])
def test_cdist_pdist_errors(call):
    e, t = _same_error(call)
    assert e == t or "compute_mode" in t or "supports" in t


@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, dim=0), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.cosine_similarity(a, b, dim=-1), [(5, 1, 4), (3, 4)]),
    (lambda lib, a, b: lib.cosine_similarity(a, b, dim=0), [(4,), (4,)]),
    (lambda lib, a, b: lib.nn.CosineSimilarity(dim=0, eps=1e-3)(a, b), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.pairwise_distance(a, b, keepdim=True), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.pairwise_distance(a, b, p=1, eps=0.1), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.pairwise_distance(a, b, p=INF), [(5, 4), (5, 4)]),
    (lambda lib, a, b: lib.pairwise_distance(a, b), [(5, 4), (4,)]),
    (lambda lib, a, b: lib.pairwise_distance(a, b, keepdim=True), [(4,), (4,)]),
    (lambda lib, a, b: lib.nn.PairwiseDistance(p=1.5, keepdim=True)(a, b), [(2, 5, 4), (2, 5, 4)]),
])
def test_similarities_and_pairwise_distances(fn, shapes):
    _check(fn, _arrs(*shapes))


def test_cosine_similarity_eps_and_zero_vectors():
    _check(lambda lib, a, b: lib.cosine_similarity(a, b, eps=1e-2), [np.full((2, 4), 1e-3), np.ones((2, 4))])
    _check(lambda lib, a, b: lib.cosine_similarity(a, b), [np.zeros((2, 4)), np.ones((2, 4))])
    _check(lambda lib, a, b: lib.pairwise_distance(a, b), [np.ones((2, 4)), np.ones((2, 4))])


# -- matrix_exp, vecdot, block_diag, cartesian_prod, trapezoid -----------------------------------------------------
@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, a: lib.matrix_exp(a), [(4, 4)]), (lambda lib, a: lib.linalg.matrix_exp(a * 5), [(2, 3, 3)]),
    (lambda lib, a: lib.linalg.matrix_exp(a - a.mT), [(3, 3)]), (lambda lib, a: a.matrix_exp(), [(1, 1)]),
    (lambda lib, a: lib.linalg.matrix_exp(a), [(0, 0)]),
    (lambda lib, a, b: lib.linalg.vecdot(a, b), [(4, 3), (4, 3)]),
    (lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0), [(4, 3), (4, 1)]),
    (lambda lib, a, b: lib.linalg.vecdot(a, b), [(2, 1, 3), (4, 3)]),
    (lambda lib, a, b, c: lib.block_diag(a, b, c), [(2, 3), (1,), (2, 2)]),
    (lambda lib, a, b: lib.block_diag(a, b), [(), (2, 2)]), (lambda lib, a, b: lib.block_diag(a, b), [(0, 2), (2, 0)]),
    (lambda lib, a, b: lib.cartesian_prod(a, b), [(3,), (2,)]),
    (lambda lib, a, b, c: lib.cartesian_prod(a, b, c), [(3,), (2,), (2,)]),
    (lambda lib, a: lib.cartesian_prod(a), [(3,)]),
    (lambda lib, y: lib.trapezoid(y), [(5,)]), (lambda lib, y: lib.trapezoid(y, dx=0.5), [(3, 5)]),
    (lambda lib, y, x: lib.trapezoid(y, x), [(3, 5), (5,)]),
    (lambda lib, y, x: lib.trapezoid(y, x, dim=0), [(3, 5), (3, 1)]),
    (lambda lib, y, x: lib.trapz(y, x), [(3, 5), (5,)]),
    (lambda lib, y: lib.cumulative_trapezoid(y, dx=0.3, dim=0), [(3, 5)]),
    (lambda lib, y, x: lib.cumulative_trapezoid(y, x), [(3, 5), (3, 5)]),
])
def test_other_products_values_and_gradients(fn, shapes):
    _check(fn, _arrs(*shapes))
    if "vecdot" in fn.__code__.co_names or "matrix_exp" in fn.__code__.co_names:
        _check(fn, _arrs(*shapes, complex_=True))


def test_integer_block_diag_cartesian_and_trapezoid():
    for fn in (lambda lib: lib.block_diag(lib.ones(2, 2, dtype=lib.int32), lib.ones(1)),
               lambda lib: lib.block_diag(lib.ones(2, 2), lib.ones(1, dtype=lib.complex64)),
               lambda lib: lib.cartesian_prod(lib.arange(3), lib.arange(2)),
               lambda lib: lib.trapezoid(lib.arange(5)), lambda lib: lib.trapezoid(lib.arange(5), dx=2),
               lambda lib: lib.trapezoid(lib.arange(5), lib.arange(5)), lambda lib: lib.cumulative_trapezoid(lib.arange(5)),
               lambda lib: lib.trapezoid(lib.ones(0)), lambda lib: lib.cumulative_trapezoid(lib.ones(0))):
        _check(lambda lib: fn(lib), [], grad=False)


# -- low precision, double backward, gradcheck --------------------------------------------------------------------
HALF = [
    (lambda lib, a, b: lib.mm(a, b), [(8, 256), (256, 8)]), (lambda lib, a, b: a @ b, [(3, 8, 256), (256, 8)]),
    (lambda lib, a, b: lib.bmm(a, b), [(3, 8, 256), (3, 256, 8)]), (lambda lib, a, b: lib.mv(a, b), [(8, 256), (256,)]),
    (lambda lib, a, b: lib.dot(a, b), [(256,), (256,)]), (lambda lib, a, b: a @ b, [(256,), (256, 8)]),
    (lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), [(3, 8, 256), (3, 256, 8)]),
    (lambda lib, a, b: lib.addmm(a[:, :8], a, b, beta=0.5, alpha=2), [(8, 256), (256, 8)]),
    (lambda lib, a, b: lib.baddbmm(a[:, :, :8], a, b, alpha=0.1), [(3, 8, 256), (3, 256, 8)]),
    (lambda lib, a, b: lib.tensordot(a, b, 1), [(8, 256), (256, 8)]),
    (lambda lib, a, b: lib.linalg.vecdot(a, b), [(8, 256), (8, 256)]),
]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("i", range(len(HALF)))
def test_half_products_accumulate_in_float32(dt, i):
    """Long half-precision dot products accumulate in float32 and round once: within one unit in the last place."""
    fn, shapes = HALF[i]
    ulp = 2 ** -10 if dt == "float16" else 2 ** -7
    (ye, ge, _), (yt, gt, _) = (_run(lib, fn, _arrs(*shapes), dt) for lib in (ember, torch))
    assert ye.dtype == getattr(ember, dt) and ge[0].dtype == getattr(ember, dt)
    _close(ye, yt, rtol=ulp, atol=1e-3)
    for a, b in zip(ge, gt):
        _close(a, b, rtol=ulp, atol=1e-3)


SECOND_ORDER = [
    (lambda lib, a, b: lib.einsum("bhqd,bhkd->bhqk", a, b), [(2, 1, 3, 2), (2, 1, 2, 2)]),
    (lambda lib, a, w, b: lib.einsum("bi,oij,bj->bo", a, w, b), [(2, 2), (3, 2, 3), (2, 3)]),
    (lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b), [(2, 1, 2, 3), (2, 3, 2)]),
    (lambda lib, a: lib.einsum("ij,ij->i", a, a), [(3, 4)]),
    (lambda lib, a, b: a @ b, [(3,), (2, 3, 4)]), (lambda lib, a, b: a @ b, [(2, 1, 4, 3), (5, 3, 2)]),
    (lambda lib, a: a @ a, [(3, 3)]),
    (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.3, alpha=1.7), [(4,), (2, 3), (3, 4)]),
    (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.3, alpha=1.7), [(2, 1, 4), (2, 2, 3), (2, 3, 4)]),
    (lambda lib, c, a, b: lib.addbmm(c, a, b, beta=0.3, alpha=1.7), [(2, 4), (3, 2, 3), (3, 3, 4)]),
    (lambda lib, c, a, b: lib.addr(c, a, b, beta=0.3, alpha=1.7), [(2, 3), (2,), (3,)]),
    (lambda lib, a, b: lib.tensordot(a, b, ([1, 0], [0, 2])), [(3, 2, 4), (2, 5, 3)]),
    (lambda lib, a, b: lib.kron(a, b), [(2, 3), (3, 2)]),
    (lambda lib, a, b: lib.linalg.cross(a, b), [(4, 3), (1, 3)]),
    (lambda lib, a, b: lib.cosine_similarity(a, b), [(4, 3), (4, 3)]),
    (lambda lib, a: lib.linalg.matrix_exp(a), [(2, 2)]),
    (lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
]


@pytest.mark.parametrize("i", range(len(SECOND_ORDER)))
def test_double_backward_matches_torch(i):
    fn, shapes = SECOND_ORDER[i]
    res = []
    for lib in (ember, torch):
        y, gs, ts = _run(lib, fn, _arrs(*shapes), create_graph=True)
        w = [lib.tensor(np.random.default_rng(20 + k).standard_normal(tuple(g.shape))) for k, g in enumerate(gs)]
        s = sum((g * v).sum() for g, v in zip(gs, w))
        res.append(lib.autograd.grad(s, ts, allow_unused=True))
    for a, b in zip(*res):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b)


@pytest.mark.parametrize("i", range(len(SECOND_ORDER)))
def test_gradcheck_float64(i):
    fn, shapes = SECOND_ORDER[i]
    ts = [ember.tensor(a, requires_grad=True) for a in _arrs(*shapes, seed=3)]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), ts)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), ts)


@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    (lambda lib, a, b: a.mH @ b, [(3, 2), (3, 4)]), (lambda lib, a, b: lib.linalg.vecdot(a, b), [(4, 3), (4, 3)]),
    (lambda lib, a, b: lib.vdot(a, b), [(3,), (3,)]),
])
def test_complex_gradcheck(fn, shapes):
    ts = [ember.tensor(a, requires_grad=True) for a in _arrs(*shapes, seed=4, complex_=True)]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), ts)
