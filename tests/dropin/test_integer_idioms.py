"""Integer and bool tensor semantics against torch: wraparound, floor/trunc division and remainder signs, integer
powers, shifts past the bit width, bitwise ops on every integer dtype, accumulate dtypes of sum/prod/cumsum, type
promotion with Python scalars and 0-d tensors, float->int casts of NaN/inf/out of range values, integer indexing,
bool arithmetic, gcd/lcm/bincount/count_nonzero, integer matmul, random integers of the unsigned dtypes, and 0-d
integer tensors used as dims and indices."""
import pytest
import torch

import ember

INTS = ["int8", "int16", "int32", "int64", "uint8"]
UINTS = ["uint16", "uint32", "uint64"]


def _run(lib, fn):
    """``fn(lib)`` as ('err', exception type) or ('ok', nested (dtype name, shape, exact values))."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "err", type(e).__name__
    return "ok", _plain(lib, r)


def _plain(lib, r):
    if isinstance(r, lib.Tensor):
        vals = r.float().tolist() if r.dtype is lib.bfloat16 else r.tolist()
        return str(r.dtype).split(".")[-1], tuple(r.shape), vals
    if isinstance(r, (tuple, list)):
        return tuple(_plain(lib, x) for x in r)
    return r


def _same(fn):
    e, t = _run(ember, fn), _run(torch, fn)
    assert repr(e) == repr(t), (e, t)


def _t(lib, dt, vals=(7, -2, 3)):
    return lib.tensor(list(vals), dtype=getattr(lib, dt))


def _min(lib, dt):
    return lib.iinfo(getattr(lib, dt)).min


# -- arithmetic on every integer dtype --------------------------------------------------------------------------------
ARITH = [
    lambda l, d: _t(l, d, (100, 2, 3)) + _t(l, d, (100, 127, 7)),
    lambda l, d: _t(l, d, (100, 2, 3)) * 100,
    lambda l, d: _t(l, d, (1, 2, 3)) - 5,
    lambda l, d: _t(l, d, (7, 2, 3)) / 2,
    lambda l, d: _t(l, d, (7, 2, 3)) * 1.5,
    lambda l, d: _t(l, d, (7, 2, 3)) + True,
    lambda l, d: _t(l, d, (7, 2, 3)) + l.tensor(1000),
    lambda l, d: _t(l, d, (7, 2, 3)) + l.tensor(3.5),
    lambda l, d: _t(l, d, (7, 2, 3)) + l.tensor([1, 2, 3], dtype=l.int8),
    lambda l, d: _t(l, d, (7, 2, 3)) * l.tensor([1.5, 2, 0], dtype=l.float16),
    lambda l, d: _t(l, d, (7, 2, 3)) & 6,
    lambda l, d: _t(l, d, (7, 2, 3)) | _t(l, d, (8, 1, 0)),
    lambda l, d: _t(l, d, (7, 2, 3)) ^ l.tensor([True, False, True]),
    lambda l, d: ~_t(l, d, (7, 0, 3)),
    lambda l, d: _t(l, d, (7, 2, 3)) << _t(l, d, (0, 7, 8)),
    lambda l, d: _t(l, d, (7, 2, 3)) >> _t(l, d, (0, 7, 80)),
    lambda l, d: 1 << _t(l, d, (0, 3, 6)),
    lambda l, d: _t(l, d, (7, 2, 3)) << 1.5,
    lambda l, d: _t(l, d, (7, 2, 3)) & 1.5,
    lambda l, d: _t(l, d, (7, 2, 3)) ** 2,
    lambda l, d: _t(l, d, (7, 2, 3)) ** 0.5,
    lambda l, d: _t(l, d, (2, 1, 3)) ** 70,
    lambda l, d: _t(l, d, (7, 2, 3)) ** -1,
    lambda l, d: _t(l, d, (7, 2, 3)).pow(_t(l, d, (2, 0, 1))),
    lambda l, d: 2 ** _t(l, d, (0, 1, 5)),
    lambda l, d: 2.5 ** _t(l, d, (0, 1, 5)),
    lambda l, d: _t(l, d, (7, 2, 3)).abs(),
    lambda l, d: -_t(l, d, (7, 2, 3)),
    lambda l, d: _t(l, d, (7, 0, 3)).sign(),
    lambda l, d: _t(l, d, (7, 2, 3)).clamp(2.5, 5),
    lambda l, d: _t(l, d, (7, 2, 3)).clamp(min=_t(l, d, (1, 5, 2))),
    lambda l, d: _t(l, d, (7, 2, 3)).add_(2.5),
    lambda l, d: _t(l, d, (7, 2, 3)).floor_divide_(2),
    lambda l, d: _t(l, d, (7, 2, 3)).__rfloordiv__(64),
    lambda l, d: _t(l, d, (7, 2, 3)).__rmod__(64),
    lambda l, d: _t(l, d, (7, 2, 3)).__rrshift__(64),
    lambda l, d: _t(l, d, (7, 2, 3)).float(),
    lambda l, d: _t(l, d, (7, 2, 3)).sqrt(),
]


@pytest.mark.parametrize("dt", INTS + ["bool"])
@pytest.mark.parametrize("call", ARITH)
def test_integer_arithmetic_dtypes_and_values(call, dt):
    _same(lambda l: call(l, dt))


SIGNED = [
    lambda l, d: _t(l, d, (-7, 7, -7, 7, 0)) // _t(l, d, (2, -2, -2, 2, 3)),
    lambda l, d: _t(l, d, (-7, 7, -7, 7, 0)) % _t(l, d, (2, -2, -2, 2, 3)),
    lambda l, d: l.fmod(_t(l, d, (-7, 7, -7, 7, 0)), _t(l, d, (2, -2, -2, 2, 3))),
    lambda l, d: l.div(_t(l, d, (-7, 7, -7, 7, 0)), _t(l, d, (2, -2, -2, 2, 3)), rounding_mode="trunc"),
    lambda l, d: l.div(_t(l, d, (-7, 7, -7, 7, 0)), _t(l, d, (2, -2, -2, 2, 3)), rounding_mode="floor"),
    lambda l, d: l.div(_t(l, d, (-7, 7, -7, 7, 0)), _t(l, d, (2, -2, -2, 2, 3))),
    lambda l, d: _t(l, d, (-7, 7)) % 2.5,
    lambda l, d: _t(l, d, (-7, 7)) // 2.5,
    lambda l, d: l.fmod(_t(l, d, (-7, 7)), -3),
    lambda l, d: l.remainder(-7, _t(l, d, (3, -3))),
    lambda l, d: _t(l, d, (_min(l, d), -1, 5)).abs(),
    lambda l, d: -_t(l, d, (_min(l, d), -1, 5)),
    lambda l, d: _t(l, d, (_min(l, d), -1, 5)) // -1,
    lambda l, d: _t(l, d, (_min(l, d), -1, 5)) % -1,
    lambda l, d: _t(l, d, (-1, 1, -8, 8)) >> _t(l, d, (1, 70, 70, -1)),
    lambda l, d: _t(l, d, (-1, 1, -8, 8)) << _t(l, d, (1, 70, 70, -1)),
    lambda l, d: _t(l, d, (-1, 1, -8, 8)) >> l.iinfo(getattr(l, d)).bits,
    lambda l, d: _t(l, d, (-1, 1, -8, 8)) << l.iinfo(getattr(l, d)).bits - 1,
    lambda l, d: _t(l, d, (-1, 1, 0, 2)) ** _t(l, d, (-1, -2, 0, 3)),
    lambda l, d: _t(l, d, (-1, 1, 1, 2)) ** _t(l, d, (-1, -2, 0, -3)),
    lambda l, d: (-2) ** _t(l, d, (0, 1, 2, 3)),
    lambda l, d: _t(l, d, (-6, 12, 0, 0, -4)).gcd(_t(l, d, (4, -18, 0, 5, 0))),
    lambda l, d: _t(l, d, (-6, 12, 0, 0, -4)).lcm(_t(l, d, (4, -18, 0, 5, 0))),
    lambda l, d: _t(l, d, (-1, 1, -8, 8)).clamp(min=-2.5),
    lambda l, d: _t(l, d, (-1, 1, -8, 8)).clamp(5, 2),
]


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("call", SIGNED)
def test_signed_division_remainder_shifts_and_minimum_values(call, dt):
    _same(lambda l: call(l, dt))


@pytest.mark.parametrize("call", [
    lambda l, d: _t(l, d, (1, 0)) // _t(l, d, (0, 0)),
    lambda l, d: _t(l, d, (1, 0)) % _t(l, d, (0, 0)),
    lambda l, d: l.fmod(_t(l, d, (1, 0)), 0),
    lambda l, d: l.div(_t(l, d, (1, 0)), 0, rounding_mode="floor"),
    lambda l, d: _t(l, d, (1, 0)) / _t(l, d, (0, 0)),
    lambda l, d: _t(l, d, (1, 0)) // 0.0,
    lambda l, d: _t(l, d, (1, 0)) % 0.0,
])
@pytest.mark.parametrize("dt", ["int8", "int64", "uint8", "bool"])
def test_integer_division_by_zero(call, dt):
    _same(lambda l: call(l, dt))


# -- reductions and their accumulate dtypes ---------------------------------------------------------------------------
REDUCE = [
    lambda l, d: _t(l, d, (100, 100, 1)).sum(),
    lambda l, d: _t(l, d, (100, 100, 1)).sum(dtype=getattr(l, d)),
    lambda l, d: _t(l, d, (100, 100, 1)).sum(dtype=l.float32),
    lambda l, d: _t(l, d, (100, 100, 3)).prod(),
    lambda l, d: _t(l, d, (100, 100, 3)).prod(dtype=getattr(l, d)),
    lambda l, d: _t(l, d, (100, 100, 3)).cumsum(0),
    lambda l, d: _t(l, d, (100, 100, 3)).cumsum(0, dtype=l.int8),
    lambda l, d: _t(l, d, (100, 100, 3)).cumprod(0),
    lambda l, d: _t(l, d, (100, 100, 3)).nansum(),
    lambda l, d: _t(l, d, (100, 100, 3)).mean(),
    lambda l, d: _t(l, d, (100, 100, 3)).mean(dtype=l.float64),
    lambda l, d: _t(l, d, (100, 100, 3)).std(),
    lambda l, d: _t(l, d, (3, 100, 3)).max(0),
    lambda l, d: _t(l, d, (3, 100, 100)).argmax(),
    lambda l, d: _t(l, d, (3, 1, 3)).argmin(),
    lambda l, d: _t(l, d, (3, 1, 3, 1)).sort(stable=True),
    lambda l, d: _t(l, d, (3, 1, 2)).median(),
    lambda l, d: _t(l, d, (3, 0, 2)).count_nonzero(),
    lambda l, d: l.tensor([[3, 0], [0, 1]], dtype=getattr(l, d)).count_nonzero(0),
    lambda l, d: _t(l, d, (3, 1, 3, 1)).bincount(minlength=6),
    lambda l, d: _t(l, d, (3, 1, 3, 1)).bincount(weights=l.tensor([1., 2., 3., 4.], dtype=l.float64)),
    lambda l, d: _t(l, d, (3, 1, 3, 1)).unique(return_counts=True),
    lambda l, d: l.tensor([], dtype=getattr(l, d)).sum(),
    lambda l, d: l.tensor([], dtype=getattr(l, d)).max(),
    lambda l, d: l.zeros(0, 3, dtype=getattr(l, d)).sum(0),
]


@pytest.mark.parametrize("dt", INTS + ["bool"])
@pytest.mark.parametrize("call", REDUCE)
def test_integer_reductions_accumulate_dtypes(call, dt):
    _same(lambda l: call(l, dt))


@pytest.mark.parametrize("dt", INTS + ["bool"])
def test_integer_matmul_family(dt):
    a = [[3, 0], [1, 1]]
    for call in (lambda l: l.tensor(a, dtype=getattr(l, dt)) @ l.tensor(a, dtype=getattr(l, dt)),
                 lambda l: l.tensor(a, dtype=getattr(l, dt)).mv(l.tensor([100, 1], dtype=getattr(l, dt))),
                 lambda l: l.tensor([3, 0], dtype=getattr(l, dt)).dot(l.tensor([100, 1], dtype=getattr(l, dt))),
                 lambda l: l.einsum("ij,jk->ik", l.tensor(a, dtype=getattr(l, dt)), l.tensor(a, dtype=getattr(l, dt))),
                 lambda l: l.tensor(a, dtype=getattr(l, dt)) @ l.tensor(a, dtype=l.float32)):
        _same(call)


# -- conversions, promotion and creation ------------------------------------------------------------------------------
@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("dt", INTS + UINTS + ["bool"])
def test_float_to_integer_casts(src, dt):
    vals = [float("nan"), float("inf"), -float("inf"), 1e20, -1e20, 3.7, -3.7, 300., -1.]
    if src in ("float16", "bfloat16"):
        vals = [float("nan"), 3.7, -3.7, 300., -1.]
    _same(lambda l: l.tensor(vals, dtype=getattr(l, src)).to(getattr(l, dt)))


@pytest.mark.parametrize("call", [
    lambda l: l.tensor([-1, 255, 256, -129, 70000, 2 ** 40]).to(l.uint8),
    lambda l: l.tensor([2 ** 53 + 1, 2 ** 53]).sum(),
    lambda l: l.tensor([2 ** 53 + 1]) == 2 ** 53,
    lambda l: l.tensor([16777217], dtype=l.int32) == l.tensor(16777216.0),
    lambda l: l.tensor([2 ** 53 + 1, 2 ** 53]) // 3,
    lambda l: l.tensor([2 ** 53 + 1, 2 ** 53]).sort(),
    lambda l: l.zeros(2, dtype=l.int64).scatter_reduce(0, l.tensor([0, 0]), l.tensor([-7, 2]), "mean",
                                                       include_self=False),
    lambda l: l.tensor([1, 2], dtype=l.int32) + 2 ** 40,
    lambda l: l.tensor([1, 2], dtype=l.uint8) + 256,
    lambda l: l.tensor([1, 2], dtype=l.int64) + 2 ** 64,
    lambda l: l.tensor([1, 2], dtype=l.uint8) == 257,
    lambda l: l.full((2,), 1.5, dtype=l.int32),
    lambda l: l.zeros(2, dtype=l.int32).fill_(float("nan")),
    lambda l: l.add(l.tensor([1, 2]), 0.5, out=l.empty(2, dtype=l.int64)),
    lambda l: l.tensor([1, 2], dtype=l.int16).bitwise_left_shift_(l.tensor([15, 16], dtype=l.int16)),
    lambda l: l.tensor(2 ** 63, dtype=l.float32),
    lambda l: l.tensor(2 ** 70, dtype=l.float64),
    lambda l: l.tensor(-2 ** 63 - 1, dtype=l.bfloat16),
    lambda l: l.tensor(10 ** 400, dtype=l.bool),
    lambda l: l.tensor(10 ** 400, dtype=l.float32),
    lambda l: l.tensor([2 ** 63, 1], dtype=l.float32),
    lambda l: l.tensor([[2 ** 70], [-2 ** 64]], dtype=l.complex64),
    lambda l: l.tensor([2 ** 63, True], dtype=l.bool),
    lambda l: l.tensor(2 ** 63),
    lambda l: l.tensor([2 ** 63, 1], dtype=l.int64),
])
def test_large_values_promotion_and_creation(call):
    _same(call)


# -- bool arithmetic --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda l: l.tensor([True, True, False]) + l.tensor([True, True, False]),
    lambda l: l.tensor([True, True, False]) - l.tensor([True, True, False]),
    lambda l: l.tensor([True, True, False]) - True,
    lambda l: l.tensor([True, True, False]) - 1,
    lambda l: -l.tensor([True, True, False]),
    lambda l: l.tensor([True, True, False]) / l.tensor([True, True, True]),
    lambda l: l.tensor([True, True, False]) // l.tensor([True, True, True]),
    lambda l: l.tensor([True, True, False]) ** 2,
    lambda l: l.tensor([True, True, False]) << 1,
    lambda l: l.tensor([True, True, False]) & 3,
    lambda l: l.tensor([True, True, False]).add(l.tensor([True, True, False]), alpha=2),
    lambda l: l.tensor([[True, True, False]]).sum(-1),
    lambda l: l.tensor([[True, True, False]]).cumsum(-1),
    lambda l: l.tensor([[True, True, False]]).mean(),
    lambda l: l.tensor([[True, True, False]]).float().mean(),
    lambda l: l.tensor([[True, True], [False, True]]) @ l.tensor([[True, True], [False, True]]),
    lambda l: (l.tensor([[1, 1, 0], [1, 1, 1]]).cumsum(-1) - 1).masked_fill_(l.tensor([[1, 1, 0], [1, 1, 1]]) == 0, 1),
    lambda l: (l.tensor([[1, 0, 1, 1, 0, 0, 0, 1]], dtype=l.bool) << l.arange(8)).sum(-1, dtype=l.uint8),
    lambda l: (l.tensor([3, 5, 255], dtype=l.uint8).unsqueeze(-1) >> l.arange(8, dtype=l.uint8)) & 1,
])
def test_bool_arithmetic_and_bit_packing(call):
    _same(call)


# -- indexing ---------------------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:indexing with dtype")
@pytest.mark.parametrize("idx", ["int8", "int16", "int32", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("call", [
    lambda l, i: l.arange(6)[l.tensor(2, dtype=i)],
    lambda l, i: l.ones(3, 4)[:, l.tensor(1, dtype=i)],
    lambda l, i: l.arange(12).reshape(3, 4)[l.tensor(1, dtype=i), l.tensor(2, dtype=i)],
    lambda l, i: l.arange(6)[l.tensor([0, 2], dtype=i)],
    lambda l, i: l.arange(6).reshape(2, 3).gather(1, l.tensor([[0], [2]], dtype=i)),
    lambda l, i: l.arange(6).index_select(0, l.tensor([0, 2], dtype=i)),
    lambda l, i: l.nn.functional.embedding(l.tensor([0, 2], dtype=i), l.ones(4, 2)),
    lambda l, i: l.nn.functional.one_hot(l.tensor([0, 2], dtype=i), 3),
])
def test_index_dtypes(call, idx):
    _same(lambda l: call(l, getattr(l, idx)))


@pytest.mark.parametrize("call", [
    lambda l: _t(l, "int64")[-1],
    lambda l: _t(l, "int64")[3],
    lambda l: _t(l, "int64")[-4],
    lambda l: _t(l, "int64")[l.tensor([-1, 0])],
    lambda l: _t(l, "int64")[l.tensor([3])],
    lambda l: _t(l, "int64")[[0, 5]],
    lambda l: _t(l, "int64").index_select(0, l.tensor([3])),
    lambda l: _t(l, "int64").take(l.tensor([-1])),
    lambda l: _t(l, "int64").gather(0, l.tensor([3])),
    lambda l: _t(l, "int64").__setitem__(l.tensor([5]), 1),
])
def test_out_of_bounds_and_negative_indices(call):
    _same(call)


@pytest.mark.parametrize("dim", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("call", [
    lambda l, d: l.ones(3, 4).sum(d),
    lambda l, d: l.ones(3, 4).sum((d, 0)),
    lambda l, d: l.ones(3, 4).mean(d),
    lambda l, d: l.ones(3, 4).amax(d),
    lambda l, d: l.ones(3, 4).std(d),
    lambda l, d: l.ones(3, 4).prod(d),
    lambda l, d: l.ones(3, 4).all(d),
    lambda l, d: l.ones(3, 4).count_nonzero(d),
    lambda l, d: l.ones(3, 4).logsumexp(d),
])
def test_zero_dim_integer_tensor_as_dim(call, dim):
    _same(lambda l: call(l, l.tensor(1, dtype=getattr(l, dim))))


def test_float_tensor_is_no_dim():
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.ones(3, 4).sum(lib.tensor(1.))


# -- unsigned dtypes --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dt", UINTS)
def test_random_integers_of_unsigned_dtypes(dt):
    for lib in (ember, torch):
        d = getattr(lib, dt)
        x = lib.randint(3, 9, (200,), dtype=d)
        assert x.dtype is d and set(x.tolist()) <= set(range(3, 9))
        y = lib.empty(200, dtype=d).random_(0, 2)
        assert y.dtype is d and set(y.tolist()) <= {0, 1}
        with pytest.raises(RuntimeError, match="from is out of bounds"):
            lib.randint(-5, 200, (3,), dtype=d)


@pytest.mark.parametrize("dt", UINTS)
@pytest.mark.parametrize("call", [
    lambda l, d: _t(l, d, (7, 2, 3)) + _t(l, d, (250, 100, 7)),
    lambda l, d: _t(l, d, (7, 2, 3)) - 5,
    lambda l, d: _t(l, d, (7, 2, 3)) // 2,
    lambda l, d: _t(l, d, (7, 2, 3)) & 6,
    lambda l, d: _t(l, d, (7, 2, 3)) << 2,
    lambda l, d: ~_t(l, d, (7, 2, 3)),
    lambda l, d: _t(l, d, (7, 2, 3)).sum(),
    lambda l, d: _t(l, d, (7, 2, 3)).max(),
    lambda l, d: _t(l, d, (7, 2, 3)).sort(),
    lambda l, d: _t(l, d, (7, 2, 3)).to(l.int64),
    lambda l, d: _t(l, d, (7, 2, 3)) == 2,
    lambda l, d: _t(l, d, (7, 2, 3)) < 2,
])
def test_unsigned_dtypes(call, dt):
    _same(lambda l: call(l, dt))


def test_zero_division_error_message():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            _t(lib, "int8") % 0
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            _t(lib, "int32") ** -2
        with pytest.raises(RuntimeError, match="mean"):
            _t(lib, "int64").mean()
