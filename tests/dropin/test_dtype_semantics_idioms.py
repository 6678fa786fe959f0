"""dtype and type-promotion semantics against torch: promote_types/can_cast/result_type, the result dtypes of the
binary op families with tensors, 0-d tensors and Python scalars, integer wraparound and division by zero, in-place
casting rules, default dtypes, ``.to``/``.type`` overloads, legacy constructors, finfo/iinfo, and the dtype errors
of lerp, matmul, losses and friends."""
import itertools

import numpy as np
import pytest
import torch

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
BARE = ["uint16", "uint32", "uint64"]


def _run(lib, fn):
    """``fn(lib)`` as ('ok', dtype name, values) or ('err', exception type)."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "err", type(e)
    if isinstance(r, lib.Tensor):
        vals = r.to(lib.complex128).numpy() if r.dtype not in (lib.bool,) else r.numpy()
        return "ok", str(r.dtype).split(".")[-1], vals
    return "ok", str(r).replace("ember.", "torch.") if hasattr(r, "is_floating_point") else r


def _same(fn, rtol=1e-6):
    e, t = _run(ember, fn), _run(torch, fn)
    assert e[0] == t[0], (e, t)
    if e[0] == "err":
        assert e[1] is t[1], (e, t)
        return
    assert e[1] == t[1], (e, t)
    if len(e) > 2:
        np.testing.assert_allclose(e[2], t[2], rtol=rtol, atol=0, equal_nan=True)


def _t(lib, dt, vals=(1, 2, 3)):
    return lib.tensor(list(vals), dtype=getattr(lib, dt))


# -- the promotion table -------------------------------------------------------------------------------------------
def test_promote_types_and_can_cast_all_pairs():
    for a, b in itertools.product(DTYPES + BARE, repeat=2):
        _same(lambda l: l.promote_types(getattr(l, a), getattr(l, b)))
        _same(lambda l: l.can_cast(getattr(l, a), getattr(l, b)))


@pytest.mark.parametrize("args", [("float32", float), (int, "int8"), ("float16", int), (complex, "float32"),
                                  (bool, "uint8")])
def test_promote_types_takes_python_types(args):
    conv = lambda l, a: getattr(l, a) if isinstance(a, str) else a  # noqa: E731
    _same(lambda l: l.promote_types(conv(l, args[0]), conv(l, args[1])))
    _same(lambda l: l.can_cast(conv(l, args[0]), conv(l, args[1])))


@pytest.mark.parametrize("call", [lambda l: l.promote_types(l.float32, "float64"),
                                  lambda l: l.promote_types(None, l.float32),
                                  lambda l: l.can_cast(l.float32, 3)])
def test_promote_types_refuses_non_dtypes(call):
    with pytest.raises(TypeError, match="must be torch.dtype"):
        call(ember)
    with pytest.raises(TypeError):
        call(torch)


def test_result_type_weak_scalars_and_zero_dim():
    for a in DTYPES:
        for s in (True, 3, -2.5, 1j):
            if a == "float16" and isinstance(s, complex):
                continue  # torch's complex32
            _same(lambda l: l.result_type(_t(l, a), s))
            _same(lambda l: l.result_type(s, _t(l, a)))
            _same(lambda l: l.result_type(l.tensor(1, dtype=getattr(l, a)), s))
        for b in DTYPES:
            if {a, b} & {"float16"} and {a, b} & {"complex64", "complex128"}:
                continue  # complex32 in torch
            _same(lambda l: l.result_type(_t(l, a), l.tensor(2, dtype=getattr(l, b))))


# -- binary op families --------------------------------------------------------------------------------------------
OPS = {
    "add": lambda l, x, y: x + y, "sub": lambda l, x, y: x - y, "mul": lambda l, x, y: x * y,
    "truediv": lambda l, x, y: x / y, "floordiv": lambda l, x, y: x // y, "rem": lambda l, x, y: x % y,
    "fmod": lambda l, x, y: l.fmod(x, y), "pow": lambda l, x, y: x ** y, "eq": lambda l, x, y: x == y,
    "and": lambda l, x, y: x & y, "lshift": lambda l, x, y: x << y, "atan2": lambda l, x, y: l.atan2(x, y),
    "where": lambda l, x, y: l.where(l.tensor([True, False, True]), x, y),
    "div_trunc": lambda l, x, y: l.div(x, y, rounding_mode="trunc"),
    "clamp_min_tensor": lambda l, x, y: l.clamp(x, min=y),
    "addcmul": lambda l, x, y: l.addcmul(x, y, y, value=2),
}
REAL = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("op", list(OPS))
def test_binary_op_dtypes_and_values(op):
    f = OPS[op]
    for a, b in itertools.product(REAL, repeat=2):
        _same(lambda l: f(l, _t(l, a), _t(l, b)), rtol=1e-2)
        _same(lambda l: f(l, _t(l, a), l.tensor(2, dtype=getattr(l, b))), rtol=1e-2)
    for a in REAL:
        for s in (True, 2, 2.5):
            _same(lambda l: f(l, _t(l, a), s), rtol=1e-2)


@pytest.mark.parametrize("call", [
    lambda l: _t(l, "int8", (127, -128)) + 1,
    lambda l: _t(l, "uint8", (0, 1)) - 2,
    lambda l: _t(l, "int64", (2 ** 62,)) * 4,
    lambda l: _t(l, "int8", (-128,)) // -1,
    lambda l: -_t(l, "int8", (-128,)),
    lambda l: _t(l, "int32", (-7, 7, -7)) // _t(l, "int32", (2, -2, -2)),
    lambda l: _t(l, "int32", (-7, 7, -7)) % _t(l, "int32", (2, -2, -2)),
    lambda l: l.fmod(_t(l, "int32", (-7, 7, -7)), _t(l, "int32", (2, -2, -2))),
    lambda l: _t(l, "int64", (1, 0, -1)) / 0,
    lambda l: _t(l, "float32", (1., -1.)) // 0.0,
    lambda l: _t(l, "int64", (1, 2)) // 0,
    lambda l: _t(l, "int64", (1, 2)) % _t(l, "int64", (0, 1)),
    lambda l: l.div(_t(l, "int64", (1, 2)), 0, rounding_mode="trunc"),
    lambda l: _t(l, "int64", (1, 1, 1, 1)) << _t(l, "int64", (0, 63, 64, -1)),
    lambda l: _t(l, "int64", (-5, -5, 5, 5)) >> _t(l, "int64", (0, 63, 64, -1)),
    lambda l: _t(l, "uint8", (1, 255)) << 7,
    lambda l: _t(l, "float32", (1.,)) << 1,
    lambda l: _t(l, "int64", (1, 2, 3)) ** -1,
    lambda l: _t(l, "int64", (1, -1, 2, 0)) ** _t(l, "int64", (-3, -3, -2, -1)),
    lambda l: 2 ** _t(l, "int64", (1, 2, 3)),
    lambda l: _t(l, "int8", (2, 3)) ** 7,
    lambda l: _t(l, "bool", (True,)) - _t(l, "bool", (True,)),
    lambda l: _t(l, "bool", (True, False)) / 2,
    lambda l: ~_t(l, "uint8", (0, 5)),
    lambda l: ~_t(l, "float32", (0.,)),
])
def test_integer_overflow_division_and_shifts(call):
    _same(call)


def test_zero_division_message():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        _t(ember, "int32") // 0


# -- in-place and out= casting ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda l: _t(l, "int64").add_(1.5),
    lambda l: _t(l, "int64").add_(l.tensor(1.5)),
    lambda l: _t(l, "float16").add_(_t(l, "int64")),
    lambda l: _t(l, "float32").add_(_t(l, "float64")),
    lambda l: _t(l, "bool").add_(1),
    lambda l: _t(l, "float32").add_(1j),
    lambda l: _t(l, "int64").div_(2),
    lambda l: _t(l, "int64").div_(2, rounding_mode="floor"),
    lambda l: _t(l, "uint8").sub_(3),
    lambda l: _t(l, "int64").pow_(0.5),
    lambda l: _t(l, "int64").sqrt_(),
    lambda l: _t(l, "int64").copy_(l.tensor([1.7, -2.7, 3.5])),
    lambda l: _t(l, "uint8").copy_(_t(l, "int64", (-1, 256, 3))),
    lambda l: l.add(_t(l, "float32"), 1, out=l.empty(3, dtype=l.int64)),
    lambda l: l.add(_t(l, "int64"), 1, out=l.empty(3, dtype=l.float16)),
    lambda l: l.eq(_t(l, "float64"), 2, out=l.empty(3, dtype=l.float32)),
    lambda l: l.mul(_t(l, "int64"), 2, out=l.empty(3, dtype=l.bool)),
    lambda l: l.sum(_t(l, "float32"), 0, out=l.empty((), dtype=l.int64)),
])
def test_inplace_and_out_casting(call):
    _same(call)


def test_inplace_cast_error_message():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        _t(ember, "int64").mul_(0.5)


# -- ops with their own dtype rules ------------------------------------------------------------------------------------
@pytest.mark.parametrize("end,weight", [("float64", None), ("float16", None), ("float32", "float64"),
                                        ("float32", "float16")])
def test_lerp_requires_matching_dtypes(end, weight):
    for lib in (ember, torch):
        a = lib.ones(3)
        w = 0.5 if weight is None else lib.full((3,), 0.5, dtype=getattr(lib, weight))
        with pytest.raises(RuntimeError, match="expected dtype float for `(end|weight)` but got dtype"):
            lib.lerp(a, a.to(getattr(lib, end)), w)


def test_lerp_zero_dim_weight_acts_as_number():
    _same(lambda l: l.lerp(l.tensor([1., 2.]), l.tensor([3., 5.]), l.tensor(0.25, dtype=l.float64)))
    _same(lambda l: l.tensor([1., 2.]).lerp_(l.tensor([3., 5.]), 0.75))


@pytest.mark.parametrize("a,b,alpha", [("A", "A", 1j), ("F", "F", 1j), ("F", "2j", 1j), ("C", "C", 0.5),
                                       ("C", "C", 1j), ("A", "A", True), ("F", "F", True), ("B", "B", True),
                                       ("B", "B", 2), ("A", "A", 0.5), ("A", "1.5", 2), ("B", "A", False)])
def test_add_sub_alpha_rules(a, b, alpha):
    mk = {"A": lambda l: l.tensor([1, 2]), "F": lambda l: l.tensor([1., 2.]),
          "B": lambda l: l.tensor([True, False]), "C": lambda l: l.tensor([1j, 2.])}
    arg = lambda l, x: mk[x](l) if x in mk else eval(x)  # noqa: E731
    for op in ("add", "sub"):
        if op == "sub" and "B" in (a, b):
            continue
        _same(lambda l: getattr(l, op)(arg(l, a), arg(l, b), alpha=alpha))


@pytest.mark.parametrize("dt,value", [("int8", 300), ("int32", 2 ** 40), ("uint8", -1), ("float16", 1e6),
                                      ("bool", 2)])
def test_where_number_must_fit_the_dtype(dt, value):
    _same(lambda l: l.where(l.tensor([True, False]), l.tensor([1, 2], dtype=getattr(l, dt)), value))
    _same(lambda l: l.where(l.tensor([True, False]), value, l.tensor([1, 2], dtype=getattr(l, dt))))


@pytest.mark.parametrize("call", [
    lambda l: l.heaviside(l.tensor([1., 0.]), l.tensor([1, 0])),
    lambda l: l.heaviside(l.tensor([1., 0.]), l.tensor(0.5, dtype=l.float64)),
    lambda l: l.heaviside(l.tensor([1, 0, -1]), l.tensor([5])),
    lambda l: l.heaviside(l.tensor([1., 0.]), 1),
    lambda l: l.logaddexp(l.tensor([1, 2]), l.tensor([1, 2])),
    lambda l: l.logaddexp2(l.tensor([True]), l.tensor([False])),
    lambda l: l.logaddexp(l.tensor([1, 2]), l.tensor([1., 2.])),
    lambda l: l.logaddexp(l.tensor([1.]), 2.0),
    lambda l: l.nextafter(l.tensor([1, 2]), l.tensor([3, 0])),
    lambda l: l.nextafter(l.tensor([1, 2]), l.tensor([3., 0.])),
])
def test_float_only_and_same_dtype_ops(call):
    _same(call)


@pytest.mark.parametrize("a,b", [("bool", "uint8"), ("uint8", "bool"), ("bool", "float32"), ("int64", "uint16"),
                                 ("uint32", "float32"), ("float32", "float64"), ("bool", "bool")])
@pytest.mark.parametrize("shapes", [((2,), (2,)), ((1, 2), (2, 1)), ((1, 2), (2,))])
def test_matmul_mixed_dtypes_raise(a, b, shapes):
    for lib in (ember, torch):
        x = lib.ones(shapes[0]).to(getattr(lib, a))
        y = lib.ones(shapes[1]).to(getattr(lib, b))
        with pytest.raises(RuntimeError):  # NotImplementedError for two bools, as torch
            x @ y


@pytest.mark.parametrize("default", ["float16", "bfloat16", "float64"])
def test_int_inputs_of_float_ops_follow_the_default_dtype(default):
    ops = ["sigmoid", "erf", "lgamma", "digamma", "exp", "sqrt", "log1p", "erfc"]
    for lib in (ember, torch):
        lib.set_default_dtype(getattr(lib, default))
    try:
        for op in ops:
            _same(lambda l: getattr(l.tensor([1, 2, 3]), op)())
            _same(lambda l: getattr(l.tensor([True, False]), op)())
        _same(lambda l: l.tensor([1, 2]) / 3)
        _same(lambda l: l.tensor([1.5, 2]))
        _same(lambda l: l.arange(0, 1, 0.25))
        _same(lambda l: l.linspace(0, 1, 5))
        _same(lambda l: l.full((2,), 1.5))
        _same(lambda l: l.tensor([1]) + 1.5)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


# -- losses --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["float64", "float16", "int64", "bool"])
def test_binary_cross_entropy_requires_the_input_dtype(target):
    for lib in (ember, torch):
        x = lib.tensor([0.3, 0.6])
        with pytest.raises(RuntimeError, match="Found dtype .* but expected Float"):
            lib.nn.functional.binary_cross_entropy(x, lib.tensor([1, 0]).to(getattr(lib, target)))


def test_binary_cross_entropy_weight_is_cast_to_the_input_dtype():
    _same(lambda l: l.nn.functional.binary_cross_entropy(l.tensor([0.3, 0.6]), l.tensor([1., 0.]),
                                                         weight=l.tensor([2, 1], dtype=l.float64)))


@pytest.mark.parametrize("target", ["float64", "float16", "bfloat16", "int64", "uint8"])
@pytest.mark.parametrize("extra", [{}, {"weight": "float64"}, {"pos_weight": "float64"}, {"reduction": "none"}])
def test_bce_with_logits_result_dtype_follows_the_target(target, extra):
    def call(l):
        kw = {k: (l.tensor([2., 0.5], dtype=getattr(l, v)) if k != "reduction" else v) for k, v in extra.items()}
        return l.nn.functional.binary_cross_entropy_with_logits(l.tensor([0.3, -0.6]),
                                                                l.tensor([1, 0]).to(getattr(l, target)), **kw)
    _same(call, rtol=1e-2)


@pytest.mark.parametrize("target", ["uint8", "bool", "int64", "float64"])
def test_soft_margin_loss_target_dtypes(target):
    _same(lambda l: l.nn.functional.soft_margin_loss(l.tensor([0.3, -0.6]), l.tensor([1, 0]).to(getattr(l, target))))


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_losses_take_a_bool_target(loss):
    _same(lambda l: getattr(l.nn.functional, loss)(l.tensor([0.3, 0.6]), l.tensor([True, False])))
    if loss == "huber_loss":
        return  # torch's backward refuses the bool target
    x = ember.tensor([0.3, 0.6], requires_grad=True)
    getattr(ember.nn.functional, loss)(x, ember.tensor([True, False])).backward()
    xt = torch.tensor([0.3, 0.6], requires_grad=True)
    getattr(torch.nn.functional, loss)(xt, torch.tensor([True, False])).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


# -- default dtype, factories, tensor() inference -------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    [True, 2], [1, 2.0], [1, 2.0, 1j], [[1, 2], [3, 4.5]], [], [[], []], np.float32(1.5), [np.float32(1.5), 2],
    [np.int32(1), 2.5], [np.float16(1), np.float16(2)], [np.int8(1), np.int16(2)], (1, 2.5), range(3),
    np.array([1, 2], np.int32), [np.array([1, 2]), np.array([3, 4])],
])
def test_tensor_infers_dtypes(data):
    _same(lambda l: l.tensor(data))


@pytest.mark.parametrize("data,exc", [([[1, 2], [3]], ValueError), ([[1, 2], 3], TypeError), (["a"], ValueError),
                                      ("abc", TypeError), ([None], RuntimeError), ([1, "a"], TypeError)])
def test_tensor_errors(data, exc):
    for lib in (ember, torch):
        with pytest.raises(exc):
            lib.tensor(data)


def test_tensor_of_zero_dim_tensors_and_python_dtypes():
    _same(lambda l: l.tensor([l.tensor(1.5, dtype=l.float64), l.tensor(2.)]))
    _same(lambda l: l.tensor([l.tensor(1), 2.5]))
    _same(lambda l: l.tensor([1.5], dtype=int))
    _same(lambda l: l.zeros(2, dtype=float))
    _same(lambda l: l.tensor([1.5]).to(bool))


def test_set_default_dtype_float64_and_errors():
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        for fn in (lambda l: l.tensor([1.5]), lambda l: l.zeros(2), lambda l: l.arange(0, 1, 0.25),
                   lambda l: l.arange(3), lambda l: l.linspace(0, 1, 3), lambda l: l.tensor([1j]),
                   lambda l: l.tensor([1]) / 2, lambda l: l.FloatTensor([1]), lambda l: l.nn.Linear(2, 2).weight,
                   lambda l: l.result_type(l.tensor([1]), 1.5), lambda l: l.rand(2).dtype):
            e, t = fn(ember), fn(torch)
            assert str(getattr(e, "dtype", e)).split(".")[-1] == str(getattr(t, "dtype", t)).split(".")[-1]
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)
    for d in ("int64", "complex64"):
        with pytest.raises(TypeError):
            ember.set_default_dtype(getattr(ember, d))


# -- conversions -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda l, t: t.to(l.float32) is t,
    lambda l, t: t.to(l.float32, copy=True) is t,
    lambda l, t: t.to(l.float32, False, True) is t,
    lambda l, t: t.to("cpu", l.float32, False, True) is t,
    lambda l, t: t.to(l.float64, True).dtype,
    lambda l, t: t.to("cpu", l.int32).dtype,
    lambda l, t: t.to(l.tensor([1], dtype=l.int8)).dtype,
    lambda l, t: t.to(device="cpu") is t,
    lambda l, t: t.type(),
    lambda l, t: t.type("torch.IntTensor").dtype,
    lambda l, t: t.type(l.float64).dtype,
    lambda l, t: t.type(l.LongTensor).dtype,
    lambda l, t: t.type(l.float32) is t,
    lambda l, t: t.type_as(l.tensor([1])).dtype,
    lambda l, t: t.half().type(),
    lambda l, t: t.bfloat16().type(),
    lambda l, t: t.bool().type(),
    lambda l, t: t.to(l.complex64).type(),
    lambda l, t: t.long().tolist(),
    lambda l, t: t.char().tolist(),
    lambda l, t: t.byte().tolist(),
])
def test_to_and_type_overloads(call):
    e = call(ember, ember.tensor([1.7, -1.2]))
    t = call(torch, torch.tensor([1.7, -1.2]))
    assert str(e).replace("ember", "torch") == str(t)


def test_dtype_methods_take_memory_format():
    for name in ("float", "double", "half", "long", "int", "bool"):
        e = getattr(ember.ones(1, 2, 3, 4), name)(memory_format=ember.channels_last)
        t = getattr(torch.ones(1, 2, 3, 4), name)(memory_format=torch.channels_last)
        assert e.stride() == t.stride() and str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda l: l.ones(3).view(l.float64),
    lambda l: l.ones(()).view(l.float64),
    lambda l: l.ones(()).view(l.int16),
    lambda l: l.ones(4, dtype=l.int8)[1:3].view(l.int16),
    lambda l: l.ones(2, 4, dtype=l.int8)[:, 1:].view(l.int16),
])
def test_view_dtype_errors(call):
    with pytest.raises(RuntimeError, match="different element sizes"):
        call(ember)
    with pytest.raises(RuntimeError):
        call(torch)


def test_view_dtype_reinterprets_bits():
    _same(lambda l: l.tensor([1., -2.]).view(l.int32))
    _same(lambda l: l.tensor([[1, 2, 3, 4]], dtype=l.int8).view(l.int16))
    _same(lambda l: l.tensor(1.5).view(l.int32))


@pytest.mark.parametrize("name,data", [("FloatTensor", (2, 3)), ("LongTensor", ([1, 2],)), ("DoubleTensor", ([1],)),
                                       ("ByteTensor", ([1, 255],)), ("BoolTensor", ([1, 0],)),
                                       ("HalfTensor", ([1.5],)), ("IntTensor", ([1.7],)), ("LongTensor", ())])
def test_legacy_constructors(name, data):
    e, t = getattr(ember, name)(*data), getattr(torch, name)(*data)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] and tuple(e.shape) == tuple(t.shape)
    assert e.type() == t.type()
    if data and isinstance(data[0], list):
        assert e.tolist() == t.tolist()


def test_legacy_isinstance_checks():
    for lib in (ember, torch):
        assert isinstance(lib.tensor([1.]), lib.FloatTensor)
        assert not isinstance(lib.tensor([1.]), lib.LongTensor)
        assert isinstance(lib.tensor([1]), lib.LongTensor)


# -- dtype objects, finfo, iinfo ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPES + BARE)
def test_dtype_attributes(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert repr(e) == repr(t).replace("torch", "ember") or repr(e) == repr(t)
    assert (e.itemsize, e.is_floating_point, e.is_complex, e.is_signed) == \
        (t.itemsize, t.is_floating_point, t.is_complex, t.is_signed)
    if e.is_complex or name in ("float32", "float64"):
        assert str(e.to_real()).split(".")[-1] == str(t.to_real()).split(".")[-1]
        assert str(e.to_complex()).split(".")[-1] == str(t.to_complex()).split(".")[-1]


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(e, f) == getattr(t, f), f
    assert type(e.eps) is type(t.eps)


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo(name):
    if name == "bool":
        with pytest.raises(TypeError):
            torch.iinfo(torch.bool)
        with pytest.raises(TypeError):
            ember.iinfo(ember.bool)
        return
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.bits, e.max, e.min) == (t.bits, t.max, t.min)
    assert repr(e).replace("ember", "torch") == repr(t)


@pytest.mark.parametrize("name", ["float64", "int32", "int16", "float16", "bfloat16", "uint8", "bool", "complex128"])
def test_tensor_repr_shows_dtype(name):
    e = ember.tensor([1, 0], dtype=getattr(ember, name))
    t = torch.tensor([1, 0], dtype=getattr(torch, name))
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(e[:0]).replace("ember", "torch") == repr(t[:0])
