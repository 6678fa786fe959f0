"""DataLoader and sampler state_dict/load_state_dict: a loader restored from a state taken mid-run yields exactly the
batches the uninterrupted run yields from there on, epochs after the interrupted one included."""
import io

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember
from ember.utils.data import (BatchSampler, DataLoader, RandomSampler, SequentialSampler, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler)

from . import helpers

EPOCHS = 3


def _ds(n=10):
    return TensorDataset(ember.arange(n), ember.arange(2 * n, dtype=ember.float32).reshape(n, 2))


def _plain(batch):
    """A batch as nested Python values, for exact comparison."""
    if isinstance(batch, ember.Tensor):
        return batch.tolist()
    if isinstance(batch, (list, tuple)):
        return [_plain(b) for b in batch]
    return batch


def _roundtrip(state):
    """The state as it comes back from a checkpoint file."""
    f = io.BytesIO()
    ember.save(state, f)
    f.seek(0)
    return ember.load(f)


def _reference(make):
    ember.manual_seed(0)
    loader = make()
    return [[_plain(b) for b in loader] for _ in range(EPOCHS)]


def _interrupted(make, cut):
    """Runs ``cut`` batches, saves, then continues in a fresh loader built under another seed, with ember's default
    generator restored as a checkpoint does. ``cut`` may be ("end", e): saved after epoch e's loop has ended."""
    ember.manual_seed(0)
    loader = make()
    epochs = [[] for _ in range(EPOCHS)]
    epoch, taken, state = 0, 0, None
    if cut != 0:
        for epoch in range(EPOCHS):
            for batch in loader:
                epochs[epoch].append(_plain(batch))
                taken += 1
                if taken == cut:
                    break
            if taken == cut or cut == ("end", epoch):
                break
    if cut == ("end", epoch):
        epoch += 1
    state, rng = _roundtrip(loader.state_dict()), ember.get_rng_state()
    del loader
    ember.manual_seed(1234)
    loader = make()
    loader.load_state_dict(state)
    ember.set_rng_state(rng)
    for e in range(epoch, EPOCHS):
        epochs[e] += [_plain(b) for b in loader]
    return epochs


def _check(make, cuts, reshuffled=True):
    expected = _reference(make)
    assert len({len(e) for e in expected}) == 1 and (expected[0] != expected[1]) == reshuffled
    for cut in cuts:
        assert _interrupted(make, cut) == expected, cut


def test_shuffle_mid_epoch_end_of_epoch_and_between_epochs():
    # 4 batches an epoch: before any batch, inside the first epoch, after its last batch (its iterator not yet
    # exhausted), after its loop ended, and inside the second epoch
    _check(lambda: DataLoader(_ds(), batch_size=3, shuffle=True), [0, 1, 2, 4, ("end", 0), 6])


def test_loader_generator_shared_with_the_sampler():
    _check(lambda: DataLoader(_ds(), batch_size=3, shuffle=True, generator=ember.Generator().manual_seed(5)),
           [1, 5, ("end", 1)])


def test_drop_last():
    _check(lambda: DataLoader(_ds(11), batch_size=3, shuffle=True, drop_last=True), [2, 3, ("end", 0)])


def test_replacement_sampler_across_its_draw_chunks():
    # 40 draws an epoch come in chunks of 32: cuts before and after the chunk boundary
    _check(lambda: DataLoader(_ds(), batch_size=4, sampler=RandomSampler(range(10), replacement=True,
                                                                         num_samples=40)), [3, 9, 17])


@pytest.mark.parametrize("generator", [False, True])
def test_batch_sampler(generator):
    def make():
        g = ember.Generator().manual_seed(7) if generator else None
        return DataLoader(_ds(), batch_sampler=BatchSampler(RandomSampler(range(10), generator=g), 4, False))
    _check(make, [1, 4])


@pytest.mark.parametrize("generator", [False, True])
def test_subset_random_sampler(generator):
    def make():
        g = ember.Generator().manual_seed(3) if generator else None
        return DataLoader(_ds(), batch_size=2, sampler=SubsetRandomSampler([0, 2, 3, 5, 7, 9], generator=g))
    _check(make, [1, 3, ("end", 0)])


def test_weighted_random_sampler():
    weights = [0.5, 1.0, 2.0, 0.1, 3.0, 1.0, 0.2, 0.7, 1.5, 0.3]
    _check(lambda: DataLoader(_ds(), batch_size=3, sampler=WeightedRandomSampler(weights, 12)), [2, 5])


def test_sequential_resume_matches_torchs_batches():
    ours = DataLoader(_ds(), batch_size=3)
    it = iter(ours)
    next(it)
    state = _roundtrip(ours.state_dict())
    fresh = DataLoader(_ds(), batch_size=3)
    fresh.load_state_dict(state)
    theirs = tud.DataLoader(tud.TensorDataset(torch.arange(10), torch.arange(20, dtype=torch.float32).reshape(10, 2)),
                            batch_size=3)
    assert [_plain(b) for b in fresh] == [[x.tolist() for x in b] for b in theirs][1:]
    assert [_plain(b) for b in fresh] == [[x.tolist() for x in b] for b in theirs]  # then whole epochs


def test_workers_with_random_augmentation():
    _check(lambda: DataLoader(helpers.Augmented(12), batch_size=2, shuffle=True, num_workers=2), [2, ("end", 0)])


def test_persistent_workers():
    _check(lambda: DataLoader(helpers.Augmented(12), batch_size=2, shuffle=True, num_workers=2,
                              persistent_workers=True), [3, 8])


def test_resumed_batches_do_not_depend_on_num_workers():
    ember.manual_seed(0)
    loader = DataLoader(helpers.Augmented(12), batch_size=2, shuffle=True, num_workers=2)
    it = iter(loader)
    next(it), next(it)
    state = _roundtrip(loader.state_dict())
    expected = [_plain(b) for b in it]
    single = DataLoader(helpers.Augmented(12), batch_size=2, shuffle=True)
    single.load_state_dict(state)
    assert [_plain(b) for b in single] == expected


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iterable_dataset_is_refetched(num_workers):
    _check(lambda: DataLoader(helpers.Shards(10), batch_size=2, num_workers=num_workers), [2, ("end", 0)],
           reshuffled=False)


def test_state_is_kept_after_the_iterator_is_dropped_and_until_the_next_iter():
    loader = DataLoader(_ds(), batch_size=3, shuffle=True)
    it = iter(loader)
    next(it)
    del it
    state = loader.state_dict()
    assert state["num_yielded"] == 1 and state["base_seed"] is not None
    loader.load_state_dict(state)
    again = loader.state_dict()
    assert again.keys() == state.keys() and again["num_yielded"] == 1 and again["base_seed"] == state["base_seed"]
    assert len(list(loader)) == 3


def test_finished_epoch_state_starts_a_new_epoch():
    loader = DataLoader(_ds(), batch_size=3, shuffle=True)
    list(loader)
    state = loader.state_dict()
    assert state["base_seed"] is None and state["num_yielded"] == 0 and state["sampler_rng_state"] is None


def test_out_of_order_mid_epoch_state_is_an_error():
    loader = DataLoader(helpers.Range(8), batch_size=2, num_workers=2, in_order=False)
    it = iter(loader)
    next(it)
    with pytest.raises(RuntimeError, match="in_order=False"):
        loader.state_dict()
    list(it)
    assert loader.state_dict()["base_seed"] is None


def test_load_state_dict_errors():
    loader = DataLoader(_ds(), batch_size=3, shuffle=True)
    state = loader.state_dict()
    with pytest.raises(ValueError, match="expected a dict with the keys"):
        loader.load_state_dict({"num_yielded": 1})
    with pytest.raises(ValueError, match="without a generator, but this one has one"):
        DataLoader(_ds(), batch_size=3, shuffle=True, generator=ember.Generator()).load_state_dict(state)
    with pytest.raises(ValueError, match="has a sampler state, but this loader's list has no load_state_dict"):
        DataLoader(_ds(), batch_sampler=[[0, 1], [2]]).load_state_dict(state)
    it = iter(loader)
    for _ in range(4):
        next(it)
    shorter = DataLoader(_ds(6), batch_size=3, shuffle=True)
    shorter.load_state_dict(loader.state_dict())
    with pytest.raises(ValueError, match="4 batches into its epoch, but the sampler now gives 2"):
        iter(shorter)


@pytest.mark.parametrize("make", [
    lambda g: RandomSampler(range(7), generator=g),
    lambda g: RandomSampler(range(7), replacement=True, num_samples=40, generator=g),
    lambda g: SubsetRandomSampler([1, 4, 6], generator=g),
    lambda g: WeightedRandomSampler([1.0, 2.0, 3.0], 5, generator=g),
    lambda g: BatchSampler(RandomSampler(range(7), generator=g), 3, drop_last=True),
])
def test_sampler_state_repeats_the_next_pass(make):
    sampler = make(ember.Generator().manual_seed(0))
    list(sampler)
    state = _roundtrip(sampler.state_dict())
    first, second = list(sampler), list(sampler)
    assert first != second
    other = make(ember.Generator().manual_seed(1))
    other.load_state_dict(state)
    assert list(other) == first and list(other) == second


def test_sampler_state_errors():
    assert RandomSampler(range(3)).state_dict() == {"generator": None}
    assert BatchSampler(SequentialSampler(range(3)), 2, False).state_dict() == {"sampler": None}
    with pytest.raises(ValueError, match="saved from a sampler without a generator, but this one has one"):
        RandomSampler(range(3), generator=ember.Generator()).load_state_dict({"generator": None})
    with pytest.raises(ValueError, match="expected a dict with the key 'generator'"):
        RandomSampler(range(3)).load_state_dict({"seed": 1})
    with pytest.raises(ValueError, match="BatchSampler's SequentialSampler has no load_state_dict"):
        BatchSampler(SequentialSampler(range(3)), 2, False).load_state_dict({"sampler": {"generator": None}})


def test_state_leaves_the_global_generators_alone():
    """Saving and restoring never draws from the global generators."""
    loader = DataLoader(_ds(), batch_size=3, shuffle=True)
    it = iter(loader)
    next(it)
    before = ember.get_rng_state().tolist(), np.random.get_state()[1].tolist()
    loader.load_state_dict(loader.state_dict())
    assert (ember.get_rng_state().tolist(), np.random.get_state()[1].tolist()) == before
    iter(loader)  # the replay borrows the default generator and gives it back
    assert ember.get_rng_state().tolist() == before[0]
