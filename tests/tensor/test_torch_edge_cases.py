"""Edge cases a differential test against torch found: the exception class torch raises, or the value it returns."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import torch.nn.functional as TF


def _outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return e


def _same(fn):
    """``fn(lib)`` on ember and torch: the same exception class, or equal values (and dtypes)."""
    e, t = _outcome(fn, ember), _outcome(fn, torch)
    if isinstance(t, Exception):
        assert type(e) is type(t), (e, t)
        return
    assert not isinstance(e, Exception), (e, t)
    if isinstance(t, torch.Tensor):
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert list(e.shape) == list(t.shape)
        np.testing.assert_array_equal(np.asarray(e.tolist()), np.asarray(t.tolist()))
    elif isinstance(t, tuple):
        for a, b in zip(e, t):
            np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))
    else:
        assert str(e).split(".")[-1] == str(t).split(".")[-1]


def _setitem(x, key, value):
    x[key] = value
    return x


CASES = {
    # exception classes
    "nested_int_tensors": lambda L: L.tensor([L.tensor([1, 2]), L.tensor([3, 4])]),
    "nested_float_tensors": lambda L: L.tensor([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]),
    "nested_tensors_as_float": lambda L: L.tensor([L.tensor([1, 2]), L.tensor([3, 4])], dtype=L.float32),
    "nested_one_element": lambda L: L.tensor([L.tensor([1]), L.tensor([3])]),
    "index_str": lambda L: L.tensor([1, 2])["a"],
    "index_numpy_bool": lambda L: L.tensor([1, 2])[np.bool_(True)],
    "bool_floordiv": lambda L: L.tensor([True]) // L.tensor([True]),
    "bool_floordiv_scalar": lambda L: L.tensor([True]) // True,
    "bool_remainder": lambda L: L.tensor([True]) % L.tensor([True]),
    "bool_fmod": lambda L: L.fmod(L.tensor([True]), L.tensor([True])),
    "bool_div_trunc": lambda L: L.div(L.tensor([True]), L.tensor([True]), rounding_mode="trunc"),
    "kthvalue_empty": lambda L: L.ones(0).kthvalue(1),
    "kthvalue_empty_dim": lambda L: L.ones(2, 0).kthvalue(1, dim=1),
    "kthvalue_k_out_of_range": lambda L: L.ones(2).kthvalue(3),
    "reshape_no_args": lambda L: L.ones(1).reshape(),
    "view_no_args": lambda L: L.ones(1).view(),
    "repeat_no_args": lambda L: L.ones(1).repeat(),
    "expand_no_args": lambda L: L.ones(1).expand(),
    "flip_no_args": lambda L: L.ones(1).flip(),
    "new_zeros_no_args": lambda L: L.ones(1).new_zeros(),
    "new_ones_no_args": lambda L: L.ones(1).new_ones(),
    "new_empty_no_args": lambda L: L.ones(1).new_empty(),
    "new_zeros_empty_size": lambda L: L.ones(1).new_zeros(()),
    "sum_to_size_no_args": lambda L: L.ones(1).sum_to_size(),
    "sum_to_size_empty": lambda L: L.ones(2).sum_to_size(()),
    "arange_tensor": lambda L: L.arange(L.tensor([1, 2])),
    "arange_one_element_tensor": lambda L: L.arange(L.tensor([3])),
    "arange_0d_tensor": lambda L: L.arange(L.tensor(3)),
    "randperm_tensor": lambda L: L.randperm(L.tensor([1, 2])),
    "randperm_0d_tensor": lambda L: L.randperm(L.tensor(3)).sort().values,
    "eye_tensor": lambda L: L.eye(L.tensor([1, 2])),
    "eye_one_element_tensor": lambda L: L.eye(L.tensor([2])),
    "eye_float_tensor": lambda L: L.eye(L.tensor(2.0)),
    "einsum_tensor_only": lambda L: L.einsum(L.tensor([1, 2])),
    "einsum_equation_only": lambda L: L.einsum("i"),
    # what torch refuses
    "abs_bool": lambda L: L.abs(L.tensor([True])),
    "abs_bool_method": lambda L: L.tensor([True]).abs(),
    "floor_bool": lambda L: L.floor(L.tensor([True])),
    "ceil_bool": lambda L: L.ceil(L.tensor([True])),
    "round_bool": lambda L: L.round(L.tensor([True])),
    "round_bool_decimals": lambda L: L.round(L.tensor([True]), decimals=1),
    "trunc_bool": lambda L: L.trunc(L.tensor([True])),
    "fix_bool": lambda L: L.fix(L.tensor([True])),
    "floor_int": lambda L: L.floor(L.tensor([1, -2])),
    "abs_uint8": lambda L: L.abs(L.tensor([1], dtype=L.uint8)),
    "frac_int": lambda L: L.frac(L.tensor([1])),
    "frac_uint8": lambda L: L.frac(L.tensor([1], dtype=L.uint8)),
    "frac_bool": lambda L: L.frac(L.tensor([True])),
    "hypot_int": lambda L: L.hypot(L.tensor([1]), L.tensor([2])),
    "hypot_bool": lambda L: L.hypot(L.tensor([True]), L.tensor([True])),
    "hypot_int_float": lambda L: L.hypot(L.tensor([3]), L.tensor([4.0])),
    "lerp_int_scalar_weight": lambda L: L.lerp(L.tensor([1]), L.tensor([2]), 0.5),
    "lerp_int_tensor_weight": lambda L: L.lerp(L.tensor([1]), L.tensor([2]), L.tensor([1])),
    "lerp_bool": lambda L: L.lerp(L.tensor([True]), L.tensor([True]), L.tensor([True])),
    "maximum_number": lambda L: L.maximum(L.tensor([1.0]), 0),
    "maximum_number_first": lambda L: L.maximum(0, L.tensor([1.0])),
    "maximum_method_number": lambda L: L.tensor([1.0]).maximum(0),
    "minimum_number": lambda L: L.minimum(L.tensor([1.0]), 0),
    "fmax_number": lambda L: L.fmax(L.tensor([1.0]), 0),
    "fmin_number": lambda L: L.fmin(L.tensor([1.0]), 0),
    "maximum_tensors": lambda L: L.maximum(L.tensor([1.0, 5.0]), L.tensor(2.0)),
    "logical_or_number": lambda L: L.logical_or(L.tensor([True]), 0),
    "logical_and_number": lambda L: L.logical_and(L.tensor([True]), 0),
    "logical_xor_number": lambda L: L.logical_xor(L.tensor([True]), 0),
    "logical_or_tensors": lambda L: L.logical_or(L.tensor([True, False]), L.tensor([False, False])),
    "setitem_list": lambda L: _setitem(L.tensor([1, 2]), slice(None), [5, 6]),
    "setitem_tuple": lambda L: _setitem(L.tensor([1.0, 2.0]), slice(None), (5, 6)),
    "setitem_ndarray": lambda L: _setitem(L.tensor([1, 2]), slice(None), np.array([5, 6])),
    "setitem_numpy_scalar": lambda L: _setitem(L.tensor([1.0, 2.0]), 0, np.float64(5.0)),
    "setitem_numpy_bool_key": lambda L: _setitem(L.tensor([1, 2]), np.bool_(True), 0),
    "ones_numpy_dtype": lambda L: L.ones(2, dtype=np.float32),
    "zeros_numpy_dtype": lambda L: L.zeros(2, dtype=np.dtype("float64")),
    "full_numpy_dtype": lambda L: L.full((2,), 1, dtype=np.float32),
    "tensor_numpy_dtype": lambda L: L.tensor([1], dtype=np.float32),
    "ones_python_dtype": lambda L: L.ones(2, dtype=float),
    "tensor_python_dtype": lambda L: L.tensor([1], dtype=int),
    "result_type_one": lambda L: L.result_type(L.tensor([1])),
    "result_type_three": lambda L: L.result_type(L.tensor([1]), L.tensor([1.0]), 1),
    "result_type_numbers": lambda L: L.result_type(1, 2.0),
    "sort_positional_dim_with_stable": lambda L: L.tensor([[1.0, 2.0]]).sort(1, descending=True, stable=True),
    "sort_positional_with_stable_false": lambda L: L.tensor([[1.0, 2.0]]).sort(1, stable=False),
    "sort_two_positional_with_stable": lambda L: L.sort(L.tensor([[1.0, 2.0]]), 1, True, stable=True),
    "sort_four_positional": lambda L: L.sort(L.tensor([[1.0, 2.0]]), 1, True, True),
    "sort_keywords_with_stable": lambda L: L.tensor([[1.0, 2.0]]).sort(stable=True, dim=1, descending=True),
    "sort_positional": lambda L: L.sort(L.tensor([[1.0, 3.0, 2.0]]), 1, True),
    "argsort_positional_with_stable": lambda L: L.tensor([[1.0, 2.0]]).argsort(1, stable=True),
    "argsort_keywords": lambda L: L.argsort(L.tensor([[1.0, 3.0, 2.0]]), dim=1, descending=True, stable=True),
    "argsort_positional": lambda L: L.argsort(L.tensor([[1.0, 3.0, 2.0]]), 1, True),
    # values
    "add_bool_alpha": lambda L: L.add(L.tensor([True]), L.tensor([True]), alpha=2),
    "add_bool_alpha_zero": lambda L: L.add(L.tensor([False, True]), L.tensor([True, True]), alpha=0),
    "add_bool_scalar_alpha": lambda L: L.add(L.tensor([False]), True, alpha=2),
    "add_bool_float_alpha": lambda L: L.add(L.tensor([False]), L.tensor([True]), alpha=2.0),
    "add_int_alpha": lambda L: L.add(L.tensor([1]), L.tensor([True]), alpha=3),
    "bool_pow_true": lambda L: L.tensor([True, False]) ** True,
    "bool_pow_false": lambda L: L.tensor([True, False]) ** False,
    "bool_pow_int": lambda L: L.tensor([True, False]) ** 2,
    "bool_pow_bool_tensor": lambda L: L.tensor([True, False]) ** L.tensor([True, True]),
    "uint8_lt_negative": lambda L: L.tensor([1, 2, 250], dtype=L.uint8) < -2,
    "uint8_gt_wrapping": lambda L: L.tensor([1, 2, 250], dtype=L.uint8) > 300,
    "uint8_eq_negative": lambda L: L.tensor([1, 2, 254], dtype=L.uint8) == -2,
    "uint8_lt_function": lambda L: L.lt(L.tensor([1, 2, 250], dtype=L.uint8), -2),
    "int8_eq_wrapping": lambda L: L.tensor([1, -56], dtype=L.int8) == 200,
    "int32_eq_wrapping": lambda L: L.tensor([1], dtype=L.int32) == 2 ** 32 + 1,
    "int64_eq_too_big": lambda L: L.tensor([1]) == 2 ** 64 + 1,
    "uint8_ge_float": lambda L: L.tensor([1, 2, 250], dtype=L.uint8) >= -2.0,
    "bool_eq_two": lambda L: L.tensor([True, False]) == 2,
    "reflected_compare": lambda L: -2 > L.tensor([1, 250], dtype=L.uint8),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    _same(CASES[name])


def test_no_cuda_is_an_assertion_error():
    if ember.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    for fn in (lambda L: L.ones(1).cuda(), lambda L: L.ones(1).to("cuda"), lambda L: L.zeros(1, device="cuda")):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            fn(ember)
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            fn(torch)


@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("input_grad", [True, False])
def test_grid_sample_nearest_grid_gradient(padding_mode, input_grad):
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.2, 1.2, (2, 3, 2, 2))
    grads = []
    for lib, F in ((ember, EF), (torch, TF)):
        xi = lib.tensor(x, dtype=lib.float32, requires_grad=input_grad)
        gi = lib.tensor(g, dtype=lib.float32, requires_grad=True)
        out = F.grid_sample(xi, gi, mode="nearest", padding_mode=padding_mode, align_corners=False)
        assert out.requires_grad
        (out * lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape)).sum().backward()
        grads.append((out.detach().numpy(), gi.grad.numpy(), xi.grad.numpy() if input_grad else None))
    (eo, eg, ex), (to, tg, tx) = grads
    np.testing.assert_allclose(eo, to, rtol=1e-6)
    np.testing.assert_array_equal(eg, np.zeros_like(tg))
    np.testing.assert_array_equal(tg, np.zeros_like(tg))
    if input_grad:
        np.testing.assert_allclose(ex, tx, rtol=1e-6)


def test_cuda_type_name_without_cuda():
    if ember.cuda.is_available():
        pytest.skip("CUDA is present")
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match="Cannot initialize CUDA"):
            m.tensor([1]).type("torch.cuda.FloatTensor")


@pytest.mark.parametrize("call", [lambda m, t: t.split(split_size=2), lambda m, t: m.split(t, 2, 1),
                                  lambda m, t: m.tensor_split(t, indices=[1]), lambda m, t: m.tensor_split(t, sections=2),
                                  lambda m, t: t.tensor_split(2, 1), lambda m, t: m.histogram(t)],
                         ids=["split_size", "split", "indices", "sections", "tensor_split", "histogram_default_bins"])
def test_keyword_forms_and_defaults(call):
    x = np.arange(12.0).reshape(3, 4)
    e, t = call(ember, ember.tensor(x)), call(torch, torch.tensor(x))
    assert len(e) == len(t)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.numpy(), b.numpy())
