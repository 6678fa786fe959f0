"""Datasets, samplers and random_split: behaviour and error messages against torch's."""
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
import ember.utils.data as eud


def _same_error(fn_ours, fn_theirs, exc=Exception):
    with pytest.raises(exc) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    assert str(ours.value) == str(theirs.value)


def test_tensor_dataset():
    ds = eud.TensorDataset(ember.arange(4), ember.arange(8.0).reshape(4, 2))
    assert len(ds) == 4
    x, y = ds[2]
    assert x.item() == 2 and y.tolist() == [4.0, 5.0]
    x, y = ds[ember.tensor([0, 3])]
    assert x.tolist() == [0, 3]
    _same_error(lambda: eud.TensorDataset(ember.ones(2), ember.ones(3)),
                lambda: tud.TensorDataset(torch.ones(2), torch.ones(3)), AssertionError)


def test_concat_dataset_matches_torch():
    parts = [list(range(3)), list(range(10, 12)), list(range(20, 24))]
    ours, theirs = eud.ConcatDataset(parts), tud.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 9 and ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    _same_error(lambda: ours[-10], lambda: theirs[-10], ValueError)
    assert isinstance(eud.TensorDataset(ember.ones(1)) + eud.TensorDataset(ember.ones(2)), eud.ConcatDataset)
    _same_error(lambda: eud.ConcatDataset([]), lambda: tud.ConcatDataset([]), AssertionError)


class _Stream(eud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_chain_dataset():
    chained = _Stream(2) + _Stream(3)
    assert isinstance(chained, eud.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(eud.ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        eud.ConcatDataset([_Stream(1)])


def test_subset_and_stack_dataset():
    base = list(range(10, 20))
    sub = eud.Subset(base, [3, 1, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [13, 11, 14] and sub.__getitems__([0, 2]) == [13, 14]
    st = eud.StackDataset(base, [str(b) for b in base])
    assert st[1] == (11, "11") and st.__getitems__([0, 1]) == [(10, "10"), (11, "11")]
    sd = eud.StackDataset(a=base, b=base)
    assert sd[0] == {"a": 10, "b": 10} and sd.__getitems__([2]) == [{"a": 12, "b": 12}]
    _same_error(lambda: eud.StackDataset([1], b=[2]), lambda: tud.StackDataset([1], b=[2]), ValueError)
    _same_error(lambda: eud.StackDataset([1], [1, 2]), lambda: tud.StackDataset([1], [1, 2]), ValueError)
    _same_error(lambda: eud.StackDataset(), lambda: tud.StackDataset(), ValueError)

    def bad(base_cls):
        class Bad(base_cls):
            def __getitem__(self, i):
                return 0
        return Bad

    _same_error(lambda: bad(eud.Subset)(base, [0]), lambda: bad(tud.Subset)(base, [0]), NotImplementedError)


def test_dataset_base_and_generic_subscription():
    class Mine(eud.Dataset[int]):
        pass

    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        Mine()[0]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [1 / 3] * 3, [0.1] * 10])
def test_random_split_lengths_match_torch(lengths):
    ds = list(range(10))
    with warnings.catch_warnings(record=True) as w_theirs:
        warnings.simplefilter("always")
        theirs = tud.random_split(ds, lengths, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as w_ours:
        warnings.simplefilter("always")
        ours = eud.random_split(ds, lengths, generator=ember.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert [str(w.message) for w in w_ours] == [str(w.message) for w in w_theirs]
    flat = [x for s in ours for x in s]
    assert sorted(flat) == ds
    again = eud.random_split(ds, lengths, generator=ember.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]


def test_random_split_errors_match_torch():
    for lengths in ([3, 3], [0.5, 0.6], [-0.5, 1.5]):
        _same_error(lambda: eud.random_split(range(10), lengths), lambda: tud.random_split(range(10), lengths),
                    ValueError)


def test_random_split_uses_the_default_generator():
    ember.manual_seed(7)
    a = [list(s) for s in eud.random_split(range(6), [3, 3])]
    ember.manual_seed(7)
    assert [list(s) for s in eud.random_split(range(6), [3, 3])] == a


# -- samplers ----------------------------------------------------------------------------------------------------
def test_sequential_and_batch_samplers_match_torch():
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False), (0, 2, False)]:
        ours = eud.BatchSampler(eud.SequentialSampler(range(n)), bs, drop)
        theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("args", [(0, False), (2.0, False), (True, False), (2, 1)])
def test_batch_sampler_errors_match_torch(args):
    _same_error(lambda: eud.BatchSampler(range(3), *args), lambda: tud.BatchSampler(range(3), *args), ValueError)


def test_random_sampler():
    g = ember.Generator().manual_seed(0)
    s = eud.RandomSampler(range(10), generator=g)
    a, b = list(s), list(s)
    assert sorted(a) == sorted(b) == list(range(10)) and a != b and len(s) == 10
    more = list(eud.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3]
    rep = list(eud.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(rep) == 70 and set(rep) == {0, 1, 2}
    ember.manual_seed(1)
    x = list(eud.RandomSampler(range(20)))
    ember.manual_seed(1)
    assert list(eud.RandomSampler(range(20))) == x


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 1.5}])
def test_random_sampler_errors_match_torch(kwargs):
    _same_error(lambda: eud.RandomSampler(range(3), **kwargs), lambda: tud.RandomSampler(range(3), **kwargs))


def test_subset_and_weighted_samplers():
    g = ember.Generator().manual_seed(0)
    s = eud.SubsetRandomSampler([5, 7, 9], generator=g)
    assert sorted(s) == [5, 7, 9] and len(s) == 3
    w = eud.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=g)
    draws = list(w)
    assert len(w) == 200 and set(draws) == {1, 3} and draws.count(3) > draws.count(1)
    nr = list(eud.WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=g))
    assert sorted(nr) == [0, 1, 2, 3]
    assert w.weights.dtype == ember.float64


@pytest.mark.parametrize("args", [([1.0], 0), ([1.0], True), ([1.0], 2, 1), ([[1.0, 2.0]], 2)])
def test_weighted_sampler_errors_match_torch(args):
    _same_error(lambda: eud.WeightedRandomSampler(*args), lambda: tud.WeightedRandomSampler(*args), ValueError)


def test_sampler_base():
    with pytest.raises(NotImplementedError):
        iter(eud.Sampler())
    assert list(eud.SequentialSampler(np.zeros(3))) == [0, 1, 2]
