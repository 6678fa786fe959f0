"""Complex tensors against torch: real/imag views, view_as_real/view_as_complex, complex, polar, angle, abs,
conjugation, and the rotary-embedding (RoPE) pattern of LLaMA, forward and backward.

The op table draws real samples only, so complex inputs are tested here: values, dtypes, gradients for a random
complex output gradient (torch's conjugate-Wirtinger convention), float64 gradcheck through real views, and
non-contiguous inputs.
"""
import numpy as np
import pytest
import torch

import ember

CDTYPES = ("complex64", "complex128")
TOL = {"complex64": dict(rtol=1.3e-5, atol=1e-5), "complex128": dict(rtol=1e-7, atol=1e-7),
       "float32": dict(rtol=1.3e-5, atol=1e-5), "float64": dict(rtol=1e-7, atol=1e-7)}


def _complex(shape, dtype, seed=0, noncontig=False):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if noncontig and a.ndim:
        wide = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), dtype)
        wide[..., ::2] = a
        return wide
    return a


def _pair(a, noncontig=False):
    """The same leaf in torch and ember (``a`` widened: the leaf is the strided view ``[..., ::2]``)."""
    t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    if noncontig:
        return (t, e), (t[..., ::2], e[..., ::2])
    return (t, e), (t, e)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(e, t, dtype):
    assert e.shape == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(_np(e), _np(t), **TOL[dtype])


def _check(fn, dtype, *arrays, noncontig=False):
    """``fn(lib, *tensors)`` in both libraries: values, then gradients for a random output gradient."""
    leaves, ins = zip(*[_pair(a, noncontig) for a in arrays])
    t_out, e_out = fn(torch, *[p[0] for p in ins]), fn(ember, *[p[1] for p in ins])
    _close(e_out, t_out, str(t_out.dtype).split(".")[1])
    out_dtype = str(t_out.dtype).split(".")[1]
    g = _complex(tuple(t_out.shape), np.complex128, 9)
    g = g.astype(out_dtype) if t_out.dtype.is_complex else g.real.astype(out_dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(ember.tensor(g))
    for t_leaf, e_leaf in leaves:
        if t_leaf.grad is None:
            assert e_leaf.grad is None
        else:
            _close(e_leaf.grad, t_leaf.grad, dtype)


# -- real / imag ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("noncontig", [False, True], ids=["contig", "noncontig"])
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", ["real", "imag", "prop_real", "prop_imag", "view_as_real", "angle", "abs",
                                  "conj", "conj_physical", "real_imag_mix"])
def test_unary(name, dtype, noncontig):
    fn = {"real": lambda L, x: L.real(x), "imag": lambda L, x: L.imag(x), "prop_real": lambda L, x: x.real * 3,
          "prop_imag": lambda L, x: x.imag.exp(), "view_as_real": lambda L, x: L.view_as_real(x) if not noncontig
          else L.view_as_real(x)[:, 1:],  # a strided complex tensor's real view
          "angle": lambda L, x: x.angle(), "abs": lambda L, x: L.abs(x), "conj": lambda L, x: L.view_as_real(
              x.conj().resolve_conj()), "conj_physical": lambda L, x: L.view_as_real(L.conj_physical(x)),
          "real_imag_mix": lambda L, x: x.real * x.imag + x.imag.sin()}[name]
    _check(fn, dtype, _complex((3, 4), dtype, noncontig=noncontig), noncontig=noncontig)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["view_as_complex", "complex", "polar", "angle_real", "real_of_real"])
def test_from_real(name, dtype):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4, 2)).astype(dtype), rng.standard_normal((3, 4, 2)).astype(dtype)
    a[0, 0] = 0.0
    fn = {"view_as_complex": lambda L, x, y: L.view_as_complex(x),
          "complex": lambda L, x, y: L.complex(x, y[:1]),  # broadcasting
          "polar": lambda L, x, y: L.polar(x, y), "angle_real": lambda L, x, y: L.angle(x) * y,
          "real_of_real": lambda L, x, y: L.real(x) * y}[name]
    _check(fn, dtype, a, b)


def test_views_share_memory():
    x = ember.tensor([1 + 2j, 3 - 1j, -2 + 0.5j])
    x.real[0] = 10.0
    x.imag[1] = 7.0
    ember.view_as_real(x)[2, 1] = -4.0
    assert x.tolist() == [10 + 2j, 3 + 7j, -2 - 4j]
    x.real = ember.zeros(3)
    x.imag = ember.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [1j, 2j, 3j]
    assert x.real.stride() == (2,) and x.real._base is x
    r = ember.arange(8.0).reshape(2, 2, 2)
    c = ember.view_as_complex(r)
    c[1, 0] = 9 + 9j
    assert r[1, 0].tolist() == [9.0, 9.0] and c.stride() == (2, 1)
    assert ember.view_as_real(x[::2]).stride() == torch.view_as_real(torch.zeros(3, dtype=torch.cfloat)[::2]).stride()


def test_real_dtypes():
    x = ember.tensor([-1.0, 0.0, 2.0, float("nan")])
    assert x.real is x and ember.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    np.testing.assert_array_equal(ember.angle(x).numpy(), torch.angle(torch.tensor(x.numpy())).numpy())
    for t in (ember.tensor([-2, 0, 3]), ember.tensor([True, False])):
        ref = torch.angle(torch.tensor(t.numpy()))
        _close(ember.angle(t), ref, "float32")


@pytest.mark.parametrize("make, message", [
    (lambda L: L.view_as_real(L.ones(2)), "view_as_real is only supported for complex tensors"),
    (lambda L: L.view_as_complex(L.ones(2, 3)), "last dimension of size 2"),
    (lambda L: L.view_as_complex(L.ones(2, 2, dtype=L.long)), "only supported for half, float and double"),
    (lambda L: L.view_as_complex(L.ones(2, 4)[:, ::2]), "last dimension with stride 1"),
    (lambda L: L.view_as_complex(L.ones(3, 3)[:, :2]), "stride divisible by 2"),
    (lambda L: L.view_as_complex(L.ones(5)[1:].view(2, 2)), "storage_offset divisible by 2"),
    (lambda L: L.view_as_complex(L.tensor(1.0)), "one or more dimensions"),
    (lambda L: L.complex(L.ones(2), L.ones(2, dtype=L.double)), "Expected object of scalar type Float"),
    (lambda L: L.complex(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)), "Half, Float or Double"),
    (lambda L: L.polar(L.ones(2), L.ones(2, dtype=L.double)), "Expected object of scalar type Float"),
])
def test_errors(make, message):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            make(lib)


def test_conj_flags_and_casts():
    x = ember.tensor([1 + 2j])
    assert not x.conj().is_conj() and not ember.is_conj(x) and not x.is_neg()
    assert x.resolve_conj() is x and ember.resolve_neg(x) is x
    y = ember.ones(2)
    assert y.conj() is y and ember.conj_physical(y) is y
    assert y.cfloat().dtype is ember.complex64 and y.cdouble().dtype is ember.complex128
    assert repr(ember.tensor([1 + 2j])) == repr(torch.tensor([1 + 2j]))
    assert repr(ember.tensor([[1.5 + 2j, 3 - 1j], [0, 1e5j]])) == repr(torch.tensor([[1.5 + 2j, 3 - 1j], [0, 1e5j]]))


@pytest.mark.parametrize("name", ["view_as_real", "view_as_complex", "real_imag", "complex", "polar", "angle",
                                  "abs"])
def test_gradcheck(name):
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    y = ember.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    c = ember.view_as_complex
    fn = {"view_as_real": lambda x, y: ember.view_as_real(c(x) * 2), "view_as_complex": lambda x, y: c(x).real,
          "real_imag": lambda x, y: c(x).imag * c(y).real,
          "complex": lambda x, y: ember.view_as_real(ember.complex(x, y)),
          "polar": lambda x, y: ember.view_as_real(ember.polar(x.abs() + 0.5, y)),  # abs < 0: torch's sgn formula
          "angle": lambda x, y: c(x).angle(), "abs": lambda x, y: c(x).abs()}[name]
    assert ember.autograd.gradcheck(fn, (x, y))


# -- arithmetic on complex tensors ------------------------------------------------------------------------------------
ARITH = {"add": lambda L, x, y: x + y * 2, "sub": lambda L, x, y: x - y, "mul": lambda L, x, y: x * y,
         "div": lambda L, x, y: x / y, "matmul": lambda L, x, y: x @ y.mT, "exp": lambda L, x, y: x.exp() + y,
         "scalar_mul": lambda L, x, y: (x + y) * (2 - 1j), "rdiv": lambda L, x, y: (2 - 1j) / x + y,
         "pow": lambda L, x, y: x ** y, "pow_scalar": lambda L, x, y: x ** (1.5 + 0.5j) * y,
         "prod": lambda L, x, y: (x * y).prod(1), "cumprod": lambda L, x, y: (x + y).cumprod(0),
         **{f: (lambda f: lambda L, x, y: getattr(x * 0.5, f)() * y)(f)
            for f in ("exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
                      "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh")}}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", list(ARITH))
def test_arithmetic(name, dtype):
    fn, x, y = ARITH[name], _complex((3, 4), dtype, 4), _complex((3, 4), dtype, 5)
    _check(fn, dtype, x, y)


# -- LLaMA's rotary embedding -----------------------------------------------------------------------------------------
def _rope(lib, xq, freqs_cis):
    xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return lib.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)


def _freqs_cis(lib, dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (lib.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = lib.outer(lib.arange(end).float(), freqs)
    return lib.polar(lib.ones_like(freqs), freqs)


@pytest.mark.parametrize("noncontig", [False, True], ids=["contig", "transposed"])
def test_rope(noncontig):
    bsz, seqlen, heads, dim = 2, 5, 3, 8
    a = np.random.default_rng(7).standard_normal((bsz, heads, seqlen, dim) if noncontig else
                                                 (bsz, seqlen, heads, dim)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        leaf = lib.tensor(a, requires_grad=True)
        xq = leaf.transpose(1, 2) if noncontig else leaf  # (B, T, nh, hs)
        fc = _freqs_cis(lib, dim, seqlen)[:, None, :]  # (T, 1, hs/2), broadcast over heads
        out = _rope(lib, xq, fc)
        out.backward(lib.tensor(np.random.default_rng(8).standard_normal(out.shape).astype(np.float32)))
        outs.append((fc, out, leaf.grad))
    (tf, to, tg), (ef, eo, eg) = outs
    _close(ef, tf, "complex64")
    _close(eo, to, "float32")
    _close(eg, tg, "float32")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_addmm_with_complex_scalars(dtype):
    """beta and alpha are factors too: torch's gradients multiply by their conjugates."""
    fn = lambda L, x, y: L.addmm(x[:, :2], x, y.mT[:, :2], beta=0.5 - 1j, alpha=2 + 1j)  # noqa: E731
    _check(fn, dtype, _complex((3, 4), dtype, 11), _complex((3, 4), dtype, 12))
