"""uint16/32/64 and the float8 dtypes against torch: conversions bit for bit, promotion, kernels torch refuses,
printing and serialization."""
import ml_dtypes
import numpy as np
import pytest
import torch

import ember

UINTS = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
OLD = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
       "complex128"]


def _bits(a):
    """The raw bytes of a torch tensor or ember tensor, for bit-exact comparison."""
    a = a.reshape(-1)
    if isinstance(a, torch.Tensor):
        a = a.view(torch.uint8) if a.dtype not in (torch.bool, torch.complex64, torch.complex128) else a
        return a.numpy().view(np.uint8) if a.dtype is not torch.bool else a.numpy()
    a = a.numpy()
    return a if a.dtype == bool else a.view(np.uint8)


def _sources():
    rng = np.random.default_rng(0)
    f32 = np.concatenate([np.arange(2 ** 16, dtype=np.uint16).view(np.float16).astype(np.float32),
                          np.arange(0, 2 ** 32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32),
                          np.array([np.inf, -np.inf, np.nan, -np.nan, 1e30, 448, 464, 480, 57344, 61440], np.float32)])
    ints = np.array([0, 1, -1, 17, 300, 465, 1000, 100000, 2 ** 40, -2 ** 40, 2 ** 62], np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        return {"float32": f32, "float64": np.concatenate([f32, rng.standard_normal(1000) * 100, [1.125 + 2 ** -40]]),
                "float16": f32.astype(np.float16), "int64": ints, "uint8": np.arange(256, dtype=np.uint8),
                "bool": np.array([True, False])}


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_conversions_bit_for_bit(name):
    for src in _sources().values():
        assert (_bits(torch.from_numpy(src).to(getattr(torch, name))) ==
                _bits(ember.from_numpy(src).to(getattr(ember, name)))).all()
    codes = np.arange(256, dtype=np.uint8)
    t, e = torch.from_numpy(codes).view(getattr(torch, name)), ember.from_numpy(codes.view(getattr(ml_dtypes, name)))
    for target in OLD + FLOAT8:
        assert (_bits(t.to(getattr(torch, target))) == _bits(e.to(getattr(ember, target)))).all(), target


@pytest.mark.parametrize("name", UINTS)
def test_uint_conversions(name):
    vals = [-1.0, -1.5, 70000.7, 5e9, 2e19, float("inf"), float("nan"), 65535.9, 4294967295.5]
    for src in ("float32", "float64", "float16"):
        t = torch.tensor(vals, dtype=getattr(torch, src)).to(getattr(torch, name))
        e = ember.tensor(vals, dtype=getattr(ember, src)).to(getattr(ember, name))
        assert t.tolist() == e.tolist()
    ints = [-1, -70000, 2 ** 40 + 5, 2 ** 63 - 1, -2 ** 63]
    assert torch.tensor(ints).to(getattr(torch, name)).tolist() == ember.tensor(ints).to(getattr(ember, name)).tolist()
    big = [0, 1, 65535]
    for target in ("int8", "float16", "bfloat16", "float32"):
        assert (torch.tensor(big, dtype=getattr(torch, name)).to(getattr(torch, target)).tolist() ==
                ember.tensor(big, dtype=getattr(ember, name)).to(getattr(ember, target)).tolist())


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_creation_rounds_as_torch(name):
    vals = [1e30, -1e30, 500.0, 0.1, float("nan"), float("inf"), 2 ** -10]
    td, ed = getattr(torch, name), getattr(ember, name)
    assert (_bits(torch.tensor(vals, dtype=td)) == _bits(ember.tensor(vals, dtype=ed))).all()
    assert (_bits(torch.full((2,), 200.5, dtype=td)) == _bits(ember.full((2,), 200.5, dtype=ed))).all()
    for v in (500.0, float("inf"), 1e30):
        try:
            want = _bits(torch.full((2,), v, dtype=td))
        except RuntimeError:
            with pytest.raises(RuntimeError, match="without overflow"):
                ember.full((2,), v, dtype=ed)
        else:
            assert (want == _bits(ember.full((2,), v, dtype=ed))).all()
    t, e = torch.zeros(3, dtype=td), ember.zeros(3, dtype=ed)
    t[0], e[0] = 1e30, 1e30
    t[1:].copy_(torch.tensor([500.0, -1e9])), e[1:].copy_(ember.tensor([500.0, -1e9]))
    assert (_bits(t) == _bits(e)).all()


def test_dtype_attributes_and_info():
    for name in UINTS + FLOAT8:
        t, e = getattr(torch, name), getattr(ember, name)
        assert (e.itemsize, e.is_floating_point, e.is_signed) == (t.itemsize, t.is_floating_point, t.is_signed)
        assert repr(e) == repr(t).replace("torch.", "ember.")
        info = (torch.finfo, ember.finfo) if t.is_floating_point else (torch.iinfo, ember.iinfo)
        assert repr(info[0](t)) == repr(info[1](e))
        x = ember.zeros(2, dtype=e)
        assert x.element_size() == t.itemsize and x.type() == torch.zeros(2, dtype=t).type()
        assert ember.zeros(2).type(x.type()).dtype is e


def test_promotion_matches_torch():
    names = UINTS + FLOAT8 + OLD
    for a in UINTS + FLOAT8:
        for b in names:
            try:
                want = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "ember.")
            except RuntimeError as err:
                with pytest.raises(RuntimeError, match=str(err).split(",")[0]):
                    ember.promote_types(getattr(ember, a), getattr(ember, b))
            else:
                assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))) == want
    for a in ("uint32", "float8_e5m2"):
        x, y = torch.tensor([1, 2], dtype=getattr(torch, a)), ember.tensor([1, 2], dtype=getattr(ember, a))
        for other in (1, 1.5, True, lambda m: m.tensor(1.0), lambda m: m.tensor([1.0, 2.0])):
            o_t, o_e = (other(torch), other(ember)) if callable(other) else (other, other)
            try:
                want = str(torch.result_type(x, o_t)).replace("torch.", "ember.")
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    ember.result_type(y, o_e)
            else:
                assert str(ember.result_type(y, o_e)) == want
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Float8_e4m3fn"):
        ember.result_type(ember.zeros(2, dtype=ember.float8_e4m3fn), 1j)


OPS = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "mul_scalar": lambda x, y: x * 2, "div": lambda x, y: x / y,
       "eq": lambda x, y: x == y, "lt": lambda x, y: x < y, "neg": lambda x, y: -x, "abs": lambda x, y: x.abs(),
       "sum": lambda x, y: x.sum(), "max": lambda x, y: x.max(), "exp": lambda x, y: x.exp(),
       "mm": lambda x, y: x[None] @ y[:, None], "cat": lambda x, y: torch_or_ember(x).cat([x, y]),
       "index": lambda x, y: x[[0, 2]], "flip": lambda x, y: x.flip(0), "and": lambda x, y: x & y,
       "to_float": lambda x, y: x.float(), "clone": lambda x, y: x.clone(), "sort": lambda x, y: x.sort()[0],
       "add_float": lambda x, y: x + torch_or_ember(x).ones(3)}


def torch_or_ember(x):
    return torch if isinstance(x, torch.Tensor) else ember


@pytest.mark.parametrize("name", ["uint16", "uint64", "float8_e4m3fn", "float8_e5m2fnuz"])
def test_ops_computed_or_refused_as_torch(name):
    vals_x, vals_y = [100, 3, 2], [3, 2, 5]
    xt, yt = torch.tensor(vals_x, dtype=getattr(torch, name)), torch.tensor(vals_y, dtype=getattr(torch, name))
    xe, ye = ember.tensor(vals_x, dtype=getattr(ember, name)), ember.tensor(vals_y, dtype=getattr(ember, name))
    for op, f in OPS.items():
        try:
            want = f(xt, yt)
        except (NotImplementedError, RuntimeError) as err:
            with pytest.raises(type(err)) as got:
                f(xe, ye)
            assert type(got.value) is type(err), op
            continue
        got = f(xe, ye)
        assert str(got.dtype).replace("ember.", "") == str(want.dtype).replace("torch.", ""), op
        if op == "exp":  # float32 exp may differ by an ulp between libms
            assert np.allclose(want.numpy(), got.numpy(), rtol=1e-6), op
        else:
            assert (_bits(want) == _bits(got)).all(), op


def test_float8_arithmetic_rounds_and_saturates_as_torch():
    a, b = [[1.0, 2.0], [3.0, 400.0]], [[300.0, 1.0], [1.0, 2.0]]
    for name in FLOAT8:
        t = torch.tensor(a, dtype=getattr(torch, name)), torch.tensor(b, dtype=getattr(torch, name))
        e = ember.tensor(a, dtype=getattr(ember, name)), ember.tensor(b, dtype=getattr(ember, name))
        assert (_bits(t[0] @ t[1]) == _bits(e[0] @ e[1])).all()
        assert (_bits(t[0] * t[1]) == _bits(e[0] * e[1])).all()


def test_refusals_name_the_op_and_dtype():
    with pytest.raises(NotImplementedError, match="add.*UInt16"):
        ember.ones(2, dtype=ember.uint16) + 1
    with pytest.raises(NotImplementedError, match="arange_cpu.*Float8_e5m2"):
        ember.arange(3, dtype=ember.float8_e5m2)
    with pytest.raises(NotImplementedError, match="eye.*UInt32"):
        ember.eye(2, dtype=ember.uint32)
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
        ember.ones(2, dtype=ember.uint16) * ember.ones(2, dtype=ember.int64)
    assert ember.eye(2, dtype=ember.float8_e4m3fn).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_printing():
    for name, vals in [("float8_e4m3fn", [0.001, 1.5, 448, 100]), ("float8_e5m2", [1e-5, float("nan"), -1e4]),
                       ("float8_e4m3fnuz", [1.0, 2.0]), ("uint64", [0, 2 ** 64 - 1]), ("uint16", 7)]:
        assert repr(ember.tensor(vals, dtype=getattr(ember, name))) == \
            repr(torch.tensor(vals, dtype=getattr(torch, name))).replace("torch.", "ember.")


def test_views_and_numpy():
    x = ember.tensor([1, 2], dtype=ember.uint16)
    assert x.view(ember.int16).tolist() == [1, 2] and x.view(ember.uint8).tolist() == [1, 0, 2, 0]
    assert ember.tensor([1.0], dtype=ember.float8_e5m2).view(ember.int8).tolist() == [60]
    assert ember.tensor([1, 2], dtype=ember.uint8).view(ember.float8_e4m3fn).tolist() == [0.001953125, 0.00390625]
    for name in UINTS:
        a = np.array([1, np.iinfo(name).max], dtype=name)
        t = ember.from_numpy(a)
        assert t.dtype is getattr(ember, name) and t.numpy() is a and t.tolist() == a.tolist()
    assert ember.tensor(2 ** 64 - 1, dtype=ember.uint64).item() == 2 ** 64 - 1


def test_serialization_round_trips(tmp_path):
    sd = {n: torch.tensor([1, 2, 60000], dtype=getattr(torch, n)) for n in UINTS}
    sd.update({n: torch.tensor([1.5, -200.0, float("nan")], dtype=getattr(torch, n)) for n in FLOAT8})
    torch.save(sd, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    for k, v in sd.items():
        assert got[k].dtype is getattr(ember, k) and (_bits(got[k]) == _bits(v)).all()
    ember.save(got, tmp_path / "e.pt")
    again = ember.load(tmp_path / "e.pt")
    assert all((_bits(again[k]) == _bits(v)).all() and again[k].dtype is got[k].dtype for k, v in sd.items())
    import safetensors.torch
    from ember.utils import safetensors as est
    est.save_file(got, tmp_path / "e.safetensors")
    back = safetensors.torch.load_file(tmp_path / "e.safetensors")
    assert all(back[k].dtype == v.dtype and (_bits(back[k]) == _bits(v)).all() for k, v in sd.items())
    safetensors.torch.save_file(sd, tmp_path / "t.safetensors")
    mine = est.load_file(tmp_path / "t.safetensors")
    assert all(mine[k].dtype is getattr(ember, k) and (_bits(mine[k]) == _bits(v)).all() for k, v in sd.items())
