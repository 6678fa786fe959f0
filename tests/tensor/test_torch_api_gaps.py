"""torch API names ember lacked: default device, buffers, sym_* helpers, layouts, resize_, callbacks, histogramdd,
binomial, nonzero_static, and the error cases of the ops in tests/ops/db_view_copy_family.py and db_gradient_vander.py
(values and gradients of those are checked by the op table)."""
import array
import pickle

import numpy as np
import pytest
import torch

import ember


def _same_error(fn):
    """Runs ``fn(lib)`` for torch and ember: both raise the same exception type."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(expected.type):
        fn(ember)


# -- default device ----------------------------------------------------------------------------------------------------
@pytest.fixture
def restore_default_device():
    yield
    ember.set_default_device(None)


def test_default_device(restore_default_device):
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("cpu")
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(2).device == ember.device("cpu")
    ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("meta")  # creation honours it
    assert ember.get_default_device() == ember.device("meta")
    for make in (lambda: ember.zeros(2), lambda: ember.tensor([1.0]), lambda: ember.arange(3), lambda: ember.rand(2),
                 lambda: ember.as_tensor([1.0]), lambda: ember.eye(2), lambda: ember.empty_permuted((2,), (0,))):
        assert make().is_meta
    x = ember.ones(2, device="cpu")  # an explicit device, *_like and from_numpy are not affected
    assert ember.zeros_like(x).device.type == "cpu"
    assert ember.from_numpy(np.ones(2)).device.type == "cpu"


def test_device_as_context_manager(restore_default_device):
    with ember.device("meta") as d:
        assert d == ember.device("meta") and ember.get_default_device() == d
        with ember.device("cpu"):
            assert ember.zeros(2).device.type == "cpu"
        assert ember.zeros(2).is_meta
    assert ember._creation._default_device is None and ember.zeros(1).device.type == "cpu"


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (3, 0, 2)])
def test_empty_tensor_strides(shape):
    assert ember.empty(shape).stride() == torch.empty(shape).stride()
    assert ember.zeros(3, 4)[:, :0].stride() == torch.zeros(3, 4)[:, :0].stride()


# -- buffers and layouts -----------------------------------------------------------------------------------------------
def test_frombuffer_shares_memory():
    b = bytearray(16)
    t = ember.frombuffer(b, dtype=ember.int32)
    t[0] = 5
    assert b[:4] == bytearray(b"\x05\x00\x00\x00")
    for kw in ({"dtype": "int16", "count": 2, "offset": 2}, {"dtype": "int32"}, {"dtype": "uint8", "offset": 15}):
        src = bytearray(range(16))
        e = ember.frombuffer(src, **{**kw, "dtype": getattr(ember, kw["dtype"])})
        r = torch.frombuffer(bytearray(range(16)), **{**kw, "dtype": getattr(torch, kw["dtype"])})
        assert e.tolist() == r.tolist() and e.dtype.name == str(r.dtype)[6:]
    g = ember.frombuffer(array.array("d", [1.0, 2.0]), dtype=ember.float64, requires_grad=True)
    assert g.requires_grad and g.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("args", [((bytearray(16),), {"dtype": "float64", "count": 3}),
                                  ((bytearray(16),), {"dtype": "float32", "offset": 17}),
                                  ((bytearray(3),), {"dtype": "int16"}), ((bytearray(0),), {"dtype": "int16"}),
                                  ((bytearray(8),), {"dtype": "int32", "count": 0}), (([1, 2],), {"dtype": "int32"}),
                                  ((bytearray(8),), {"dtype": "int32", "offset": -1}), ((bytearray(8),), {})])
def test_frombuffer_errors(args):
    a, kw = args
    _same_error(lambda m: m.frombuffer(*a, **{k: getattr(m, v) if k == "dtype" else v for k, v in kw.items()}))


def test_empty_permuted():
    for size, perm in (((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((0, 3), (1, 0)), ((), ())):
        assert ember.empty_permuted(size, perm).stride() == torch.empty_permuted(size, perm).stride()
    _same_error(lambda m: m.empty_permuted((2, 3), (0, 0)))
    _same_error(lambda m: m.empty_permuted((2, 3), (0,)))


def test_layout_and_queries():
    x = ember.ones(2, 3)
    assert x.layout is ember.strided and isinstance(ember.strided, ember.layout)
    assert repr(ember.strided) == "ember.strided"
    assert pickle.loads(pickle.dumps(ember.strided)) is ember.strided
    assert ember.zeros(2, layout=ember.strided).shape == (2,)
    for name in ("is_meta", "is_sparse", "is_sparse_csr", "is_quantized", "is_nested", "is_mkldnn"):
        assert getattr(x, name) is False
    assert x.to_dense() is x and x.to_dense(ember.float64).dtype is ember.float64
    assert x.const_data_ptr() == x.data_ptr()
    assert not ember.is_inference(x) and not x.is_inference()


@pytest.mark.parametrize("make", [
    lambda m: m.ones(2, 3), lambda m: m.ones(3, 1), lambda m: m.ones(2, 3, 4).permute(2, 0, 1),
    lambda m: m.ones(2, 3, 4, 5).permute(0, 2, 3, 1), lambda m: m.ones(2, 2).expand(3, 2, 2),
    lambda m: m.empty_strided((2, 3), (1, 1)), lambda m: m.ones(()),
    lambda m: m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last)])
@pytest.mark.parametrize("check", [False, True, "formats"])
def test_dim_order(make, check):
    def run(m):
        formats = [m.contiguous_format, m.channels_last]
        return make(m).dim_order(ambiguity_check=formats if check == "formats" else check)
    try:
        expected = run(torch)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            run(ember)
        return
    assert run(ember) == expected
    _same_error(lambda m: m.ones(2).dim_order(ambiguity_check="ILLEGAL"))


# -- small Tensor methods ----------------------------------------------------------------------------------------------
def test_is_nonzero_output_nr_new_empty_strided():
    for v in ([0.0], [2], [True]):
        assert ember.tensor(v).is_nonzero() == torch.tensor(v).is_nonzero()
    for v in ([1.0, 2.0], []):
        _same_error(lambda m: m.tensor(v).is_nonzero())
    a, b = (ember.ones(2, requires_grad=True) * 2).unbind()
    assert (a.output_nr, b.output_nr) == (0, 1)
    x = ember.ones(2, dtype=ember.int32)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.stride() == (1, 2) and y.dtype is ember.int32
    assert x.new_empty_strided((2,), (1,), dtype=ember.float64).dtype is ember.float64


class _Sub(ember.Tensor):
    pass


def test_as_subclass():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    s = x.as_subclass(_Sub)
    assert type(s) is _Sub and s.data_ptr() == x.data_ptr() and s.requires_grad and not s.is_leaf
    (s * ember.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]
    plain = ember.ones(2).as_subclass(_Sub)
    assert type(plain) is _Sub and plain.is_leaf
    with pytest.raises(TypeError):
        x.as_subclass(int)


def test_apply_map_map2():
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0, 3.0])
        assert x.clone().apply_(lambda v: v * 2).tolist() == [2.0, 4.0, 6.0]
        assert x.clone().map_(m.tensor(10.0), lambda a, b: a + b).tolist() == [11.0, 12.0, 13.0]
        assert x.clone().map2_(m.ones(3), m.tensor([2.0]), lambda a, b, c: a + b * c).tolist() == [3.0, 4.0, 5.0]
        assert m.tensor([1, 2]).apply_(lambda v: v / 2).tolist() == [0, 1]
    y = ember.ones(2)
    before = y._version
    y.apply_(lambda v: v + 1)
    assert y._version > before
    _same_error(lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v))
    _same_error(lambda m: m.ones(3).map_(m.ones(2), lambda a, b: a))
    _same_error(lambda m: (m.ones(2, requires_grad=True) * 1).map2_(m.ones(2), m.ones(2), lambda a, b, c: a))


# -- resize_ ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("steps", [[(4,)], [(4,), (2, 2), (3, 3)], [(8,)], [(2, 3)], [(0,), (2,)], [(1, 6)]])
@pytest.mark.parametrize("start", ["plain", "t", "t_clone", "view", "offset_view"])
def test_resize_matches_torch(start, steps):
    def run(m):
        base = m.arange(6.0).reshape(2, 3)
        x = {"plain": base.clone(), "t": base.t(), "t_clone": base.t().clone(), "view": base.view(-1)[:4],
             "offset_view": base.view(-1)[2:4]}[start]
        shown = []
        for s in steps:
            r = x.resize_(*s)
            assert r is x
            n = min(x.numel(), 6 - x.storage_offset())  # elements that held values before
            offset = x.storage_offset() if x.numel() else None  # ember reports 0 for empty views
            shown.append((tuple(x.shape), x.stride(), offset, x.reshape(-1)[:n].tolist()
                          if x.is_contiguous() else x.tolist(), base.tolist()))
        return shown
    assert run(ember) == run(torch)


def test_resize_as_and_errors():
    e = ember.empty(0)
    assert e.resize_as_(ember.ones(2, 3)).shape == (2, 3)
    y = ember.zeros(2, 2, 3, 3).resize_(2, 3, 3, 2, memory_format=ember.channels_last)
    assert y.stride() == torch.zeros(2, 2, 3, 3).resize_(2, 3, 3, 2, memory_format=torch.channels_last).stride()
    _same_error(lambda m: m.ones(2, requires_grad=True).resize_(3))
    _same_error(lambda m: m.ones(2, requires_grad=True).resize_(2))
    _same_error(lambda m: m.ones(2).resize_(-1))


# -- sym_* and settings ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda m: m.sym_int(3.7), lambda m: m.sym_int(-3.7), lambda m: m.sym_float(3),
                                  lambda m: m.sym_max(1, 2.0), lambda m: m.sym_max(3, 2), lambda m: m.sym_min(1, 2.5),
                                  lambda m: m.sym_min(np.int64(4), 2), lambda m: m.sym_not(True),
                                  lambda m: m.sym_sqrt(4), lambda m: m.sym_sum([1, 2, 3]), lambda m: m.sym_sum(1, 2),
                                  lambda m: m.sym_ite(False, 1, 2), lambda m: m.sym_int(m.tensor(3.7)),
                                  lambda m: m.sym_float(m.tensor(3.7)), lambda m: m.sym_not(m.tensor(True)),
                                  lambda m: m.sym_sqrt(m.tensor(2.0)), lambda m: m.sym_sum([m.tensor(3.0), 1]).item()])
def test_sym(call):
    got, expected = call(ember), call(torch)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("call", [lambda m: m.sym_max(m.tensor(1.0), 2), lambda m: m.sym_min("a", 1),
                                  lambda m: m.sym_ite(m.tensor(True), 1, 2), lambda m: m.sym_ite(True, 1, 2.0)])
def test_sym_errors(call):
    _same_error(call)


def test_settings():
    assert ember.is_warn_always_enabled() is False
    ember.set_warn_always(True)
    try:
        assert ember.is_warn_always_enabled() is True
    finally:
        ember.set_warn_always(False)
    assert ember.set_flush_denormal(False) is False  # not supported: denormals stay
    assert ember.GradScaler is ember.amp.GradScaler
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(ember.rms_norm(ember.tensor(x), (3,), eps=1e-6).numpy(),
                               torch.rms_norm(torch.tensor(x), (3,), eps=1e-6).numpy(), rtol=1e-6)


# -- histogramdd, binomial, nonzero_static -------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"bins": 4}, {"bins": [2, 3, 4], "density": True},
                                {"bins": 3, "range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]}, {"bins": "edges"},
                                {"bins": 2, "weight": True}])
def test_histogramdd(kw):
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(5, 10, 3)), rng.random((5, 10))
    out = []
    for m in (ember, torch):
        k = dict(kw)
        if k["bins"] == "edges":
            k["bins"] = [m.tensor(np.linspace(-3, 3, n)) for n in (3, 5, 4)]
        if k.pop("weight", False):
            k["weight"] = m.tensor(w)
        out.append(m.histogramdd(m.tensor(x), **k))
    (eh, ee), (th, te) = out
    np.testing.assert_allclose(eh.numpy(), th.numpy(), rtol=1e-12)
    assert len(ee) == len(te) and all(np.allclose(a.numpy(), b.numpy()) for a, b in zip(ee, te))
    assert eh.dtype is ember.float64 and type(out[0]).__name__ == "histogramdd"


@pytest.mark.parametrize("call", [lambda m: m.histogramdd(m.ones(3, 2).long(), 2),
                                  lambda m: m.histogramdd(m.ones(3), 2),
                                  lambda m: m.histogramdd(m.ones(3, 2), bins=[2]),
                                  lambda m: m.histogramdd(m.ones(3, 2), bins=2, range=[0.0, 1.0]),
                                  lambda m: m.histogramdd(m.ones(3, 2), bins=2, weight=m.ones(2)),
                                  lambda m: m.histogramdd(m.ones(3, 2), bins=0),
                                  lambda m: m.histogramdd(m.ones(3, 2), bins=2, range=[0.0, 1.0, 2.0, 1.0])])
def test_histogramdd_errors(call):
    _same_error(call)


def test_binomial():
    count = ember.tensor([[10.0, 0.0, 7.0, 2.5, -1.0]], dtype=ember.float64)
    prob = ember.tensor([[0.5, 0.5, 1.0, 1.0, 0.5]], dtype=ember.float64)
    ember.manual_seed(0)
    s = ember.binomial(count.expand(2000, 5), prob)
    assert s.dtype is ember.float64 and s.shape == (2000, 5)
    assert (s[:, 1] == 0).all() and (s[:, 2] == 7).all() and (s[:, 3] == 2.5).all() and (s[:, 4] == 0).all()
    assert ((s[:, 0] >= 0) & (s[:, 0] <= 10)).all() and abs(s[:, 0].mean().item() - 5) < 0.3
    g = ember.Generator().manual_seed(3)
    a = ember.binomial(ember.full((4,), 20.0), ember.full((4,), 0.3), generator=g)
    g.manual_seed(3)
    assert ember.binomial(ember.full((4,), 20.0), ember.full((4,), 0.3), generator=g).tolist() == a.tolist()
    c = ember.full((3,), 5.0, requires_grad=True)
    ember.binomial(c, ember.full((3,), 0.5)).sum().backward()
    assert c.grad.tolist() == [0.0, 0.0, 0.0]
    _same_error(lambda m: m.binomial(m.tensor([10]), m.tensor([0.5])))
    _same_error(lambda m: m.binomial(m.tensor([10.0]), m.tensor([0.5], dtype=m.float64)))
    _same_error(lambda m: m.binomial(m.tensor([10.0]), 0.5))


@pytest.mark.parametrize("x,kw", [([[0, 1], [2, 0]], {"size": 3}), ([[0, 1], [2, 0]], {"size": 1, "fill_value": 9}),
                                  ([1, 0, 3], {"size": 4, "fill_value": -5}), (5, {"size": 2}),
                                  ([0.0, 0.0], {"size": 0}), ([[True, False]], {"size": 2})])
def test_nonzero_static(x, kw):
    got, expected = ember.nonzero_static(ember.tensor(x), **kw), torch.nonzero_static(torch.tensor(x), **kw)
    assert got.tolist() == expected.tolist() and got.shape == expected.shape and got.dtype is ember.int64
    assert ember.tensor(x).nonzero_static(**kw).tolist() == expected.tolist()
    _same_error(lambda m: m.nonzero_static(m.tensor(x), size=-1))


# -- error cases of the op-table ops ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m: m.gradient(m.tensor([1.0])), lambda m: m.gradient(m.ones(3, 3), edge_order=3),
    lambda m: m.gradient(m.ones(2, 2), edge_order=2), lambda m: m.gradient(m.ones(3, 3), spacing=[1.0]),
    lambda m: m.gradient(m.ones(3, 3), spacing=[1.0, 2.0], dim=1), lambda m: m.gradient(m.ones(3, 3), dim=(0, 0)),
    lambda m: m.gradient(m.ones(3, 3), dim=5),
    lambda m: m.vander(m.ones(2, 2)), lambda m: m.vander(m.ones(2), N=-1),
    lambda m: m.slice_copy(m.ones(3), 0, 0, 2, 0), lambda m: m.slice_copy(m.ones(3), 0, 0, 2, -1),
    lambda m: m.split_copy(m.ones(5, 3), [1, 4]), lambda m: m.t_copy(m.ones(2, 2, 2)),
    lambda m: m.view_copy(m.ones(2, 3), (4,)), lambda m: m.unsafe_split(m.ones(5), -1),
    lambda m: m.unsafe_chunk(m.ones(5), 0), lambda m: m.unsafe_split_with_sizes(m.ones(5), [1, 1]),
    lambda m: m.as_strided_scatter(m.zeros(2, 3), m.ones(2, 2), (2, 2), (1, 3), 7),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(3), (2,), (1,)),
])
def test_op_errors(call):
    _same_error(call)


def test_gradient_dtypes():
    for x in ([1, 2, 4], [1.0 + 1j, 2.0, 4.0]):
        got, expected = ember.gradient(ember.tensor(x)), torch.gradient(torch.tensor(x))
        assert got[0].dtype.name == str(expected[0].dtype)[6:]
        np.testing.assert_allclose(got[0].numpy(), expected[0].numpy())
    assert ember.gradient(ember.tensor(1.0)) == ()


def test_copies_are_new_contiguous_memory():
    x = ember.arange(12.0).reshape(3, 4)
    for y in (ember.t_copy(x), ember.alias_copy(x), ember.expand_copy(x[:1], (2, 4)), ember.slice_copy(x, 1, 0, 4, 2)):
        assert y.is_contiguous() and y.data_ptr() != x.data_ptr()
    out = ember.empty(0)
    assert ember.t_copy(x, out=out) is out and out.shape == (4, 3)
    assert not ember.detach_copy(x.requires_grad_()).requires_grad


def test_as_strided_scatter_keeps_input_strides():
    for make in (lambda m: m.zeros(2, 8)[:, ::2], lambda m: m.zeros(4, 2).t()):
        src = np.arange(1.0, 5.0, dtype=np.float32).reshape(2, 2)
        got = ember.as_strided_scatter(make(ember), ember.tensor(src), (2, 2), (1, 4))
        expected = torch.as_strided_scatter(make(torch), torch.tensor(src), (2, 2), (1, 4))
        assert got.tolist() == expected.tolist() and got.stride() == expected.stride()


def test_unsafe_split_pieces_are_not_views():
    y = ember.arange(6.0, requires_grad=True) * 1
    a, b = ember.unsafe_split(y, 3)
    assert a._base is None and a.data_ptr() == y.data_ptr()
    assert "UnsafeSplitBackward0" in repr(a.grad_fn)
    assert "UnsafeSplitWithSizesBackward0" in repr(y.unsafe_split_with_sizes([2, 4])[1].grad_fn)
    a.mul_(2)  # allowed, unlike for split's views
    assert a.tolist() == [0.0, 2.0, 4.0]
