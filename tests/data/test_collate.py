"""default_collate / default_convert against torch's: structure, dtypes and values."""
import collections

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate as t_collate, default_convert as t_convert

import ember
from ember.utils.data import default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])


def _to_ember(obj):
    """A sample built with torch tensors, rebuilt with ember tensors."""
    if isinstance(obj, torch.Tensor):
        return ember.from_numpy(obj.numpy().copy())
    if isinstance(obj, Point):
        return Point(*map(_to_ember, obj))
    if isinstance(obj, dict):
        return {k: _to_ember(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(map(_to_ember, obj))
    return obj


def _assert_same(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ember.Tensor), type(ours)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for k in theirs:
            _assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert ours == theirs


BATCHES = {
    "ints": [0, 1, 2],
    "bools": [True, False],
    "floats": [0.5, 1.5],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "np_arrays": [np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)],
    "np_float16": [np.ones((2, 2), np.float16), np.zeros((2, 2), np.float16)],
    "np_scalars": [np.float32(1.5), np.float32(2.5)],
    "np_int_scalars": [np.int16(1), np.int16(2)],
    "np_bool_scalars": [np.bool_(True), np.bool_(False)],
    "np_0d": [np.array(1.0), np.array(2.0)],
    "tuples": [(1, 0.5, "x"), (2, 1.5, "y")],
    "lists": [[1, 2], [3, 4]],
    "dicts": [{"a": 1, "b": np.ones(2)}, {"a": 2, "b": np.zeros(2)}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "nested": [{"p": Point(np.ones(1), [1, (2, 3)])}, {"p": Point(np.zeros(1), [4, (5, 6)])}],
    "tensors": [torch.arange(3.0), torch.arange(3.0, 6.0)],
    "tensor_tuples": [(torch.ones(2, dtype=torch.int64), 1), (torch.zeros(2, dtype=torch.int64), 0)],
}


@pytest.mark.parametrize("name", BATCHES)
def test_default_collate_matches_torch(name):
    batch = BATCHES[name]
    _assert_same(default_collate(_to_ember(batch)), t_collate(batch))


CONVERTS = {
    "array": np.arange(3),
    "scalar": np.float64(2.0),
    "int": 3,
    "str_array": np.array(["a", "b"]),
    "tuple": (np.ones(2), 1),
    "list": [np.ones(2), "s"],
    "dict": {"a": np.zeros(1, np.float32), "b": 2},
    "namedtuple": Point(np.array(0), np.array(1)),
    "np_str": np.str_("x"),
}


@pytest.mark.parametrize("name", CONVERTS)
def test_default_convert_matches_torch(name):
    data = CONVERTS[name]
    _assert_same(default_convert(data), t_convert(data))


def test_collate_errors_match_torch():
    for batch in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as theirs:
            t_collate(batch)
        with pytest.raises(TypeError) as ours:
            default_collate(batch)
        assert str(ours.value).replace("ember", "torch") == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([ember.ones(2), ember.ones(3)])


def test_collate_keeps_custom_mapping_and_sequence_types():
    od = [collections.OrderedDict(a=1), collections.OrderedDict(a=2)]
    out = default_collate(od)
    assert type(out) is collections.OrderedDict and out["a"].tolist() == [1, 2]
