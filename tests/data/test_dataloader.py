"""DataLoader in the main process, and its argument checks, against torch's."""
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
import ember.utils.data as eud


def _ember_ds(n=10):
    return eud.TensorDataset(ember.arange(n), ember.arange(2 * n, dtype=ember.float32).reshape(n, 2))


def _torch_ds(n=10):
    return tud.TensorDataset(torch.arange(n), torch.arange(2 * n, dtype=torch.float32).reshape(n, 2))


def _lists(loader):
    return [[x.tolist() for x in batch] for batch in loader]


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": 20}, {"batch_size": None}])
def test_batches_match_torch(kwargs):
    ours, theirs = eud.DataLoader(_ember_ds(), **kwargs), tud.DataLoader(_torch_ds(), **kwargs)
    assert _lists(ours) == _lists(theirs) and len(ours) == len(theirs)


def test_samplers_and_batch_samplers_match_torch():
    order = [9, 0, 5, 5, 2]
    ours = eud.DataLoader(_ember_ds(), sampler=order, batch_size=2)
    theirs = tud.DataLoader(_torch_ds(), sampler=order, batch_size=2)
    assert _lists(ours) == _lists(theirs)
    batches = [[1, 2], [7], [3, 3, 3]]
    assert _lists(eud.DataLoader(_ember_ds(), batch_sampler=batches)) == \
        _lists(tud.DataLoader(_torch_ds(), batch_sampler=batches))


def test_shuffle_is_a_permutation_driven_by_the_generator():
    def epoch(seed):
        loader = eud.DataLoader(_ember_ds(), batch_size=4, shuffle=True, generator=ember.Generator().manual_seed(seed))
        return [x for b in loader for x in b[0].tolist()]
    a = epoch(0)
    assert sorted(a) == list(range(10)) and a == epoch(0) and a != epoch(1)


def test_dict_samples_and_getitems():
    class Batched(eud.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            return [{"x": np.full(2, i), "label": i % 2, "name": f"s{i}"} for i in idx]

    batch = next(iter(eud.DataLoader(Batched(), batch_size=3)))
    assert batch["x"].tolist() == [[0, 0], [1, 1], [2, 2]] and batch["label"].dtype == ember.int64
    assert batch["name"] == ["s0", "s1", "s2"]


class _Stream(eud.IterableDataset):
    def __init__(self, n, lib=ember):
        self.n, self.lib = n, lib

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class _TStream(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}])
def test_iterable_dataset_matches_torch(kwargs):
    ours, theirs = eud.DataLoader(_Stream(8), **kwargs), tud.DataLoader(_TStream(8), **kwargs)
    to_list = lambda xs: [x.tolist() if hasattr(x, "tolist") else x for x in xs]  # noqa: E731
    assert to_list(ours) == to_list(theirs) and len(ours) == len(theirs)


def test_iterable_dataset_length_warning_matches_torch():
    class Liar(_Stream):
        def __len__(self):
            return 2

    class TLiar(_TStream):
        def __len__(self):
            return 2

    for cls, lib in ((Liar, eud), (TLiar, tud)):
        loader = lib.DataLoader(cls(4))
        len(loader)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            list(loader)
        assert len(w) == 2 and "was reported to be 2(when accessing len(dataloader)), but 3 samples" in str(w[0].message)


INVALID = [
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True},
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"multiprocessing_context": "spawn"},
    {"num_workers": 1, "multiprocessing_context": "nope"},
    {"num_workers": 1, "multiprocessing_context": 3},
]


@pytest.mark.parametrize("kwargs", INVALID)
def test_argument_errors_match_torch(kwargs):
    with pytest.raises(Exception) as theirs:
        tud.DataLoader(_torch_ds(), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        eud.DataLoader(_ember_ds(), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_iterable_dataset_argument_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(_TStream(2), **kwargs)
    with pytest.raises(ValueError) as ours:
        eud.DataLoader(_Stream(2), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_attributes_are_frozen_after_init():
    loader = eud.DataLoader(_ember_ds())
    for attr in ("batch_size", "sampler", "dataset", "drop_last", "batch_sampler", "persistent_workers"):
        with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
            setattr(loader, attr, None)
    loader.num_workers = 0  # others may change


def test_pin_memory_warns_without_an_accelerator():
    if ember.cuda.is_available():
        pytest.skip("an accelerator is present")
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        list(eud.DataLoader(_ember_ds(), pin_memory=True))


def test_too_many_workers_warns():
    with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes in total"):
        eud.DataLoader(_ember_ds(), num_workers=64)


def test_iterator_cannot_be_pickled():
    with pytest.raises(NotImplementedError):
        pickle.dumps(iter(eud.DataLoader(_ember_ds())))


def test_stop_iteration_is_sticky_and_len_works():
    it = iter(eud.DataLoader(_ember_ds(4), batch_size=3))
    assert len(it) == 2
    list(it)
    with pytest.raises(StopIteration):
        next(it)
