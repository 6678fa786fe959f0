"""DistributedSampler against torch's: shares, padding, drop_last, shuffling per epoch, errors."""
import pytest
import torch

import ember
from ember.utils.data import DataLoader, DistributedSampler
from ember.utils.data.distributed import DistributedSampler as FromModule


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (12, 4, True), (2, 5, False),
                                                  (11, 4, True), (7, 1, False)])
def test_unshuffled_shares_match_torch(n, replicas, drop_last):
    for rank in range(replicas):
        e = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        t = torch.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                                drop_last=drop_last)
        assert list(e) == list(t)
        assert len(e) == len(t) and e.total_size == t.total_size and e.num_samples == t.num_samples


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_partition_the_dataset(drop_last):
    n, replicas = 23, 4
    samplers = [DistributedSampler(range(n), replicas, r, seed=7, drop_last=drop_last) for r in range(replicas)]
    shares = [list(s) for s in samplers]
    assert all(len(s) == len(samplers[0]) for s in shares)
    flat = [i for s in shares for i in s]
    if drop_last:
        assert len(flat) == len(set(flat)) == 20  # disjoint, the tail of the permutation dropped
    else:
        assert set(flat) == set(range(n)) and len(flat) == 24  # covers all, one index repeated
    assert shares == [list(s) for s in samplers]  # same seed and epoch, same order
    for s in samplers:
        s.set_epoch(1)
    reshuffled = [list(s) for s in samplers]
    assert reshuffled != shares
    other_seed = [list(DistributedSampler(range(n), replicas, r, seed=8, drop_last=drop_last))
                  for r in range(replicas)]
    assert other_seed != shares


def test_padding_repeats_when_dataset_smaller_than_padding():
    assert [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)] == [[0], [1], [0], [1], [0]]


def test_errors_match_torch():
    for kw in [{}, {"num_replicas": 2}, {"rank": 0}, {"num_replicas": 2, "rank": 2}, {"num_replicas": 2, "rank": -1}]:
        with pytest.raises(ValueError) as te:
            torch.utils.data.DistributedSampler(range(4), **kw)
        with pytest.raises(ValueError) as ee:
            DistributedSampler(range(4), **kw)
        assert str(ee.value) == str(te.value)


def test_module_path_and_dataloader():
    assert FromModule is DistributedSampler is ember.utils.data.distributed.DistributedSampler
    data = ember.utils.data.TensorDataset(ember.arange(10))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1, 3], [5, 7], [9]]
