"""NumPy interop, DLPack, pickling/copying, printing and the Python protocol of tensors (``in``, ``reversed``,
``==`` with arrays, ``torch.Size``, legacy constructors) against torch."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember


def _r(x):
    """A repr with the library name normalised, so ember's and torch's compare character for character."""
    return repr(x).replace("ember.", "torch.")


@pytest.fixture(autouse=True)
def _default_printoptions():
    yield
    for lib in (ember, torch):
        lib.set_printoptions(profile="default")
        lib.set_printoptions(sci_mode=None)


# -- NumPy interop --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("other", [np.ones(3), np.array(1.0), np.arange(3.0), np.ones(3, np.int64)])
def test_eq_with_ndarray_is_elementwise(other):
    """``t == arr`` (either side) compares elementwise; ``!=`` and ordering defer to Python as in torch."""
    for expr in (lambda lib: lib.arange(3.0) == other, lambda lib: other == lib.arange(3.0)):
        e, t = expr(ember), expr(torch)
        assert isinstance(e, ember.Tensor) and _r(e) == _r(t)
    assert (ember.ones(3) != np.ones(3)) == (torch.ones(3) != np.ones(3))
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.ones(3) < np.ones(3)
        with pytest.raises(RuntimeError):
            lib.ones(2) == np.ones(3)
        assert (lib.ones(2) == None) is False  # noqa: E711
        assert (lib.ones(2) == [1, 1]) is False


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy.ndarrays")
def test_tensor_from_lists_with_0d_arrays():
    """0-d arrays inside a list contribute their dtype, as NumPy scalars do."""
    for data in ([1, np.array(2.5)], [1, np.array(2, np.int32)], [[1, np.array(2)], [3, 4]],
                 [1.5, np.array(2, np.int32)], [True, np.array(2.5, np.float16)]):
        assert _r(ember.tensor(data)) == _r(torch.tensor(data))


def test_big_endian_arrays_are_refused():
    a = np.array([1, 2], dtype=">i4")
    for lib in (ember, torch):
        for make in (lib.tensor, lib.from_numpy, lib.as_tensor, lib.Tensor):
            with pytest.raises(ValueError, match="byte order"):
                make(a)


@pytest.mark.parametrize("ctor", ["Tensor", "FloatTensor"])
def test_legacy_constructor_shares_matching_ndarray(ctor):
    """``torch.Tensor(arr)`` aliases a float32 array (writes show through) and copies any other dtype."""
    for src_dtype, shared in ((np.float32, True), (np.int64, False), (np.float64, False)):
        res = []
        for lib in (ember, torch):
            a = np.ones(3, src_dtype)
            t = getattr(lib, ctor)(a)
            t += 1
            res.append((a.tolist(), t.tolist(), str(t.dtype).split(".")[1]))
        assert res[0] == res[1] and (res[0][0][0] == 2) == shared


def test_from_numpy_and_numpy_share_memory():
    for lib in (ember, torch):
        a = np.arange(6.0).reshape(2, 3)
        t = lib.from_numpy(a)
        a[0, 0] = 10
        t[1, 2] = -1
        n = t.t().numpy()
        n[1, 0] = 7
        assert a.tolist() == [[10, 7, 2], [3, 4, -1]] and n.strides == (8, 24)
        with pytest.raises(ValueError, match="negative"):
            lib.from_numpy(a[:, ::-1])
        with pytest.raises(RuntimeError, match="requires grad"):
            lib.ones(2, requires_grad=True).numpy()
        assert lib.ones(2, requires_grad=True).numpy(force=True).tolist() == [1, 1]


# -- DLPack ---------------------------------------------------------------------------------------------------------
def test_dlpack_round_trips():
    a = ember.arange(6.0)
    b = ember.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(a))
    b[0] = 7  # a versioned capsule keeps the memory writable
    c = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(a))
    c[1] = 8
    d = torch.from_dlpack(a)
    d[2] = 9
    e = ember.from_dlpack(torch.arange(3.0))
    assert a.tolist() == [7, 8, 9, 3, 4, 5] and _r(e) == _r(torch.arange(3.0))
    kind, index = a.__dlpack_device__()
    tkind, tindex = torch.ones(1).__dlpack_device__()
    assert (repr(kind), index) == (repr(tkind), tindex)
    assert kind == ember.utils.dlpack.DLDeviceType.kDLCPU == 1
    for lib in (ember, torch):
        with pytest.raises(BufferError, match="require gradient"):
            lib.from_dlpack(lib.ones(2, requires_grad=True))


# -- pickle and copy ------------------------------------------------------------------------------------------------
def test_copy_copy_shares_memory():
    res = []
    for lib in (ember, torch):
        t = lib.arange(4.0, requires_grad=True)
        t.tag = ["x"]
        u = copy.copy(t)
        with lib.no_grad():
            u[0] = 9
        p = copy.copy(lib.nn.Parameter(lib.ones(2)))
        res.append((t.tolist(), u.requires_grad, u.is_leaf, u is t, u.tag is t.tag, type(p).__name__,
                    _r(copy.copy(t * 2))))
    assert res[0] == res[1]


def test_deepcopy_keeps_strides_and_shared_memory():
    res = []
    for lib in (ember, torch):
        t = lib.arange(6.0)
        v, w, tt = t[2:], t[::2], t.view(2, 3).t()
        a, b, c, d = copy.deepcopy((t, v, w, tt))
        a[2] = 100
        m = lib.nn.Linear(2, 2)
        m.weight.grad = lib.ones(2, 2)
        m2 = copy.deepcopy(m)
        m2.weight.data.fill_(0)
        res.append((b.tolist(), c.tolist(), d.tolist(), c.stride(), d.stride(), d.is_contiguous(),
                    bool((m.weight != 0).any()), type(m2.weight).__name__, m2.weight.grad))
        with pytest.raises(RuntimeError, match="graph leaves"):
            copy.deepcopy(lib.ones(2, requires_grad=True) * 2)
    assert _r(res[0]) == _r(res[1])


def test_pickle_keeps_attributes_layout_and_parameters():
    res = []
    for lib in (ember, torch):
        t = lib.arange(6.0).reshape(2, 3).t()
        t.meta_info = {"name": "w"}
        u = pickle.loads(pickle.dumps(t))
        p = pickle.loads(pickle.dumps(lib.nn.Parameter(lib.ones(2), requires_grad=False)))
        g = pickle.loads(pickle.dumps(lib.ones(2, requires_grad=True) * 2))
        bf = pickle.loads(pickle.dumps(lib.tensor([1.5, -2], dtype=lib.bfloat16)))
        res.append((_r(u), u.stride(), u.is_contiguous(), u.meta_info, _r(p), type(p).__name__, _r(g), _r(bf)))
    assert res[0] == res[1]


def test_optimizer_state_deepcopy():
    res = []
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.Adam(m.parameters(), lr=0.1)
        m(lib.ones(1, 2)).sum().backward()
        opt.step()
        sd = copy.deepcopy(opt.state_dict())
        res.append((sorted(sd["state"][0]), sd["param_groups"][0]["params"], float(sd["state"][0]["step"])))
    assert res[0] == res[1]


# -- printing -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(3.0), lambda lib: lib.tensor([]), lambda lib: lib.zeros(2, 0, 3),
    lambda lib: lib.zeros(0, dtype=lib.int32), lambda lib: lib.tensor([1e-5, 1.0]), lambda lib: lib.tensor([1e8, 1.0]),
    lambda lib: lib.tensor([1.5, float("nan"), float("inf")]), lambda lib: lib.arange(2000.0).reshape(40, 50),
    lambda lib: lib.arange(3000).reshape(10, 15, 20), lambda lib: lib.tensor([-1, 100, 12345], dtype=lib.int16),
    lambda lib: lib.tensor([1 + 2j, -3.5 - 1j]), lambda lib: lib.ones(2, 3, dtype=lib.bfloat16) / 3,
    lambda lib: lib.ones(30, dtype=lib.float64, requires_grad=True) * 2, lambda lib: lib.ones(2, device="meta"),
    lambda lib: lib.nn.Parameter(lib.arange(6.0).reshape(2, 3)), lambda lib: lib.ones(1001, dtype=lib.bool),
])
def test_repr(make):
    assert _r(make(ember)) == _r(make(torch))


@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(threshold=5, edgeitems=1), dict(threshold=5, edgeitems=0), dict(linewidth=20),
    dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"), dict(profile="full"), dict(profile="bogus"),
])
def test_set_printoptions(opts):
    """Each option, then a reset with ``profile='default'`` (an unknown profile changes nothing)."""
    for lib in (ember, torch):
        lib.set_printoptions(precision=3)
    res = []
    for lib in (ember, torch):
        lib.set_printoptions(**opts)
        res.append(_r([lib.linspace(0, 2, 12), lib.tensor([1e-8, 1e8]), lib.arange(30.0).reshape(5, 6) / 7]))
        lib.set_printoptions(profile="default")
        res.append(_r(lib.tensor([1.23456])))
    assert res[0] == res[2] and res[1] == res[3] == "tensor([1.2346])"


def test_format():
    for lib in (ember, torch):
        assert f"{lib.tensor(3.14159):.3f}" == "3.142" and f"{lib.tensor(3):03d}" == "003"
        assert "%.2f" % lib.tensor([2.5]) == "2.50"
        assert f"{lib.tensor([3.5, 1])}" == "tensor([3.5000, 1.0000])"
        with pytest.raises(TypeError):
            f"{lib.tensor([3.5, 1]):.2f}"
        with pytest.raises(ValueError, match="only one element tensors"):
            "%.2f" % lib.tensor([3.5, 1])


# -- Python protocol ------------------------------------------------------------------------------------------------
def test_contains():
    for lib in (ember, torch):
        m = lib.tensor([[1, 2], [3, 4]])
        assert 2 in m and 5 not in m and 2.0 in m and lib.tensor(4) in m and np.int64(3) in m
        assert lib.tensor([1, 2]) in m and lib.tensor([1, 5]) in m and lib.tensor([5, 6]) not in m
        for bad in ("a", None, [1, 2]):
            with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
                bad in m


def test_reversed():
    for make in (lambda lib: lib.arange(3), lambda lib: lib.arange(6.0).reshape(2, 3), lambda lib: lib.tensor(3)):
        assert _r(reversed(make(ember))) == _r(reversed(make(torch)))
    x = ember.arange(3.0, requires_grad=True)
    reversed(x).backward(ember.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [3, 2, 1]


def test_scalar_protocol_errors():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="len"):
            len(lib.tensor(2.0))
        with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
            iter(lib.tensor(2.0))
        with pytest.raises(RuntimeError, match="ambiguous"):
            bool(lib.tensor([1, 2]))
        with pytest.raises(TypeError):
            [1, 2][lib.tensor(1.0)]
        assert list(range(lib.tensor(3))) == [0, 1, 2] and [10, 20, 30][lib.tensor(1)] == 20
        assert type(lib.tensor(2, dtype=lib.int8).item()) is int and lib.tensor([[1, 2]]).tolist() == [[1, 2]]
        t = lib.ones(2)
        assert {t: 1}[t] == 1 and t in [t] and t in {t}


def test_size():
    res = []
    for lib in (ember, torch):
        s = lib.Size([2, 3, 4])
        res.append([_r(x) for x in (s * 2, 2 * s, s[1:], s + (5,), (5,) + s, s.numel(), lib.Size([]))] +
                   [type(x).__name__ for x in (s * 2, 2 * s, s[1:], s + (5,), (5,) + s)])
    assert res[0] == res[1]


def test_is_storage_and_numel():
    for lib in (ember, torch):
        t = lib.ones(2, 3)
        assert lib.is_storage(t.untyped_storage()) and not lib.is_storage(t) and lib.numel(t) == 6
        with pytest.raises(TypeError, match="must be Tensor, not list"):
            lib.numel([1, 2])


def test_new_factories_inherit_dtype():
    res = []
    for lib in (ember, torch):
        t = lib.ones(2, dtype=lib.float64)
        i = lib.ones(2, dtype=lib.int64)
        res.append(_r([t.new_tensor([1, 2]), t.new_zeros(2, 3), t.new_zeros(()), i.new_ones(3),
                       i.new_full((2,), 3.5), t.new_empty((2, 3)).dtype, t.new_zeros(2, dtype=lib.int8),
                       lib.ones(2, device="meta").new_zeros(3)]))
    assert res[0] == res[1]


def test_dtype_and_device_objects():
    for lib in (ember, torch):
        assert lib.float32 == lib.float and hash(lib.float32) == hash(lib.float) and lib.float32 != "float32"
        d = lib.device("cpu", 0)
        assert (d.type, d.index, str(d)) == ("cpu", 0, "cpu:0") and d != lib.device("cpu")
        assert lib.device("cuda:1") == lib.device("cuda", 1) and lib.device("cpu") != "cpu"
        assert lib.ones(2).device.type == "cpu" and lib.device("cpu").index is None
    assert _r(ember.device("cuda", 1)) == _r(torch.device("cuda", 1))
    assert _r(ember.complex64) == _r(torch.complex64)
