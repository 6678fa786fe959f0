"""Data-pipeline idioms (``torch.utils.data`` as training scripts use it) against torch.

ember's random streams differ from torch's: where an order is shuffled the tests compare reproducibility, coverage
and sizes (or frequencies), never the exact permutation; everything deterministic is compared element by element.
"""
import collections
import math
import warnings

import numpy as np
import pytest
import torch

import ember

Pair = collections.namedtuple("Pair", "x y")


def _plain(x):
    """A comparable structure: tensors become (dtype name, shape, values), containers keep their type name."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return "T", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist()
    if isinstance(x, dict):
        return type(x).__name__, {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x).__name__, [_plain(v) for v in x]
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_plain(v) for v in x]
    return x


def _run(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", _plain(fn(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out = ("raised", type(e), (str(e).splitlines() or [""])[0])
    return out, sorted({w.category.__name__ for w in caught})


def _same(fn, message=True):
    """``fn(ember)`` and ``fn(torch)`` give the same values, or raise the same exception type (and first line)."""
    (e, e_warn), (t, t_warn) = _run(fn, ember), _run(fn, torch)
    if not message and e[0] == t[0] == "raised":
        e, t = e[:2], t[:2]
    assert e == t
    assert e_warn == t_warn


def _data(lib):
    return lib.utils.data


def _tds(lib, n=10):
    return _data(lib).TensorDataset(lib.arange(n), lib.arange(n).float() * 2)


def _range_iterable(lib, start, end, with_len=False):
    """The sharded IterableDataset of torch's documentation: each worker reads its own contiguous slice."""
    class Range(_data(lib).IterableDataset):
        def __iter__(self):
            info = _data(lib).get_worker_info()
            if info is None:
                return iter(range(start, end))
            per = int(math.ceil((end - start) / float(info.num_workers)))
            lo = start + info.id * per
            return iter(range(lo, min(lo + per, end)))

    if with_len:
        Range.__len__ = lambda self: end - start
    return Range()


# -- datasets --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: [_tds(lib)[3], len(_tds(lib)), _tds(lib)[lib.tensor([1, 2])], _tds(lib)[np.int64(4)]],
    lambda lib: [len(_tds(lib) + _tds(lib, 3)), (_tds(lib) + _tds(lib, 3))[11], (_tds(lib) + _tds(lib, 3))[-1]],
    lambda lib: (_tds(lib) + _tds(lib, 3)).cumulative_sizes,
    lambda lib: (_tds(lib) + _tds(lib, 3)).cummulative_sizes,  # the old spelling, with a FutureWarning
    lambda lib: [(_tds(lib) + _tds(lib) + _tds(lib, 2))[21], len(_tds(lib) + _tds(lib) + _tds(lib, 2))],
    lambda lib: [_data(lib).Subset(_tds(lib), [5, 1])[1], _data(lib).Subset(_tds(lib), lib.tensor([7, 2]))[0]],
    lambda lib: _data(lib).Subset(_data(lib).Subset(_tds(lib), [9, 8, 7, 6]), [3, 0]).__getitems__([0, 1]),
    lambda lib: [_data(lib).StackDataset(_tds(lib), list(range(10)))[2],
                 _data(lib).StackDataset(a=_tds(lib), b=list(range(10)))[2]],
    lambda lib: _data(lib).StackDataset(_tds(lib), list(range(10))).__getitems__([1, 2]),
    lambda lib: list(_data(lib).ChainDataset([_range_iterable(lib, 0, 3), _range_iterable(lib, 7, 9)])),
    lambda lib: [list(_range_iterable(lib, 0, 2) + _range_iterable(lib, 5, 6)),
                 len(_range_iterable(lib, 0, 2, True) + _range_iterable(lib, 5, 6, True))],
])
def test_dataset_combinators(fn):
    """TensorDataset, ConcatDataset (``+``), Subset, StackDataset and ChainDataset sample for sample."""
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: _data(lib).TensorDataset(lib.arange(3), lib.arange(4)),
    lambda lib: _data(lib).TensorDataset(lib.tensor(1.0)),
    lambda lib: (_tds(lib) + _tds(lib))[-21],
    lambda lib: (_tds(lib) + _tds(lib))[20],
    lambda lib: _data(lib).ConcatDataset([]),
    lambda lib: _data(lib).ConcatDataset([_range_iterable(lib, 0, 2)]),
    lambda lib: list(_data(lib).ChainDataset([_tds(lib)])),
    lambda lib: len(_data(lib).ChainDataset([_range_iterable(lib, 0, 2)])),
    lambda lib: _data(lib).StackDataset(),
    lambda lib: _data(lib).StackDataset(_tds(lib), b=_tds(lib)),
    lambda lib: _data(lib).StackDataset(a=_tds(lib), b=list(range(9))),
    lambda lib: _data(lib).Dataset()[0],
    lambda lib: _data(lib).IterableDataset(),
])
def test_dataset_errors(fn):
    """Wrong constructions raise torch's exception types with its messages."""
    _same(fn)


@pytest.mark.parametrize("n, lengths", [
    (10, [0.7, 0.2, 0.1]), (11, [0.5, 0.5]), (10, [0.33, 0.33, 0.34]), (10, [0.95, 0.05]), (10, [7, 3]),
    (10, np.array([0.8, 0.2])), (10, [3, 3]), (10, [1.5, -0.5]), (10, [11, -1]), (10, [5.0, 5.0]),
])
def test_random_split_lengths(n, lengths):
    """Lengths or fractions (remainder dealt round-robin, a warning for an empty split) and the errors."""
    _same(lambda lib: [len(s) for s in _data(lib).random_split(range(n), lengths,
                                                               generator=lib.Generator().manual_seed(0))],
          message=not isinstance(lengths[0], float) or lengths[0] != 5.0)


def test_random_split_generator_reproducible():
    """A seeded generator (or ``manual_seed``) repeats the split; the splits partition the dataset."""
    rs = ember.utils.data.random_split
    first = [s.indices for s in rs(range(20), [0.6, 0.2, 0.2], generator=ember.Generator().manual_seed(42))]
    again = [s.indices for s in rs(range(20), [0.6, 0.2, 0.2], generator=ember.Generator().manual_seed(42))]
    ember.manual_seed(3)
    a = [s.indices for s in rs(range(20), [10, 10])]
    ember.manual_seed(3)
    b = [s.indices for s in rs(range(20), [10, 10])]
    assert first == again and a == b and first != [list(range(12)), list(range(12, 16)), list(range(16, 20))]
    assert sorted(sum(first, [])) == list(range(20)) and all(type(i) is int for i in first[0])
    train, _ = rs(_tds(ember), [8, 2])
    assert type(train).__name__ == "Subset" and train.dataset.tensors[0].shape == (10,)


# -- samplers --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda lib: list(_data(lib).SequentialSampler(range(5))),
    lambda lib: [list(_data(lib).BatchSampler(range(7), 3, False)), list(_data(lib).BatchSampler(range(7), 3, True)),
                 len(_data(lib).BatchSampler(range(7), 3, False)), len(_data(lib).BatchSampler(range(7), 3, True))],
    lambda lib: [len(_data(lib).RandomSampler(range(5))), len(_data(lib).RandomSampler(range(5), num_samples=12)),
                 len(list(_data(lib).RandomSampler(range(5), replacement=True, num_samples=40)))],
    lambda lib: sorted(_data(lib).RandomSampler(range(5), num_samples=10, generator=lib.Generator().manual_seed(0))),
    lambda lib: sorted(_data(lib).SubsetRandomSampler([3, 7, 9], generator=lib.Generator().manual_seed(0))),
    lambda lib: [list(_data(lib).WeightedRandomSampler([0, 0, 1.0], 4)), len(_data(lib).WeightedRandomSampler(
        lib.tensor([1.0, 2.0]), 3)), sorted(_data(lib).WeightedRandomSampler([1, 1, 1.0], 3, replacement=False))],
    lambda lib: [type(next(iter(s))).__name__ for s in (
        _data(lib).RandomSampler(range(3)), _data(lib).WeightedRandomSampler([1.0], 1),
        _data(lib).DistributedSampler(range(4), 2, 0))],
    lambda lib: _data(lib).RandomSampler(range(5), num_samples=0),
    lambda lib: _data(lib).RandomSampler(range(5), replacement=1),
    lambda lib: _data(lib).WeightedRandomSampler([[1.0, 2.0]], 3),
    lambda lib: _data(lib).WeightedRandomSampler([1.0, 2.0], 0),
    lambda lib: _data(lib).WeightedRandomSampler([1.0, 2.0], 2, replacement=0),
    lambda lib: list(_data(lib).WeightedRandomSampler([1.0, -2.0], 2)),
    lambda lib: list(_data(lib).WeightedRandomSampler([1.0, float("inf")], 2)),
    lambda lib: list(_data(lib).WeightedRandomSampler([1.0, float("nan")], 2)),
    lambda lib: list(_data(lib).WeightedRandomSampler([], 2)),
    lambda lib: list(_data(lib).WeightedRandomSampler([0.0, 0.0], 2)),
    lambda lib: list(_data(lib).WeightedRandomSampler([1.0, 1.0], 3, replacement=False)),
    lambda lib: _data(lib).BatchSampler(range(7), 0, False),
    lambda lib: _data(lib).BatchSampler(range(7), 3, 1),
    lambda lib: iter(_data(lib).Sampler()),
])
def test_samplers(fn):
    """Sampler values that do not depend on the random stream, and the argument errors."""
    _same(fn)


def test_sampler_subclass_takes_no_data_source():
    """``Sampler.__init__`` takes no ``data_source``: a subclass passing it up fails as in torch."""
    def run(lib):
        class Reverse(_data(lib).Sampler):
            def __init__(self, data_source):
                super().__init__(data_source)

        return Reverse(range(3))

    _same(run)

    class Reverse(ember.utils.data.Sampler[int]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n - 1, -1, -1))

        def __len__(self):
            return self.n

    loader = ember.utils.data.DataLoader(_tds(ember), sampler=Reverse(10), batch_size=4)
    assert [b[0].tolist() for b in loader] == [[9, 8, 7, 6], [5, 4, 3, 2], [1, 0]]


@pytest.mark.parametrize("w", [[], [0.0, 0.0], [1.0, -1.0], [float("nan"), 1.0], [float("inf"), 1.0]])
@pytest.mark.parametrize("shape", [None, (2, -1)])
@pytest.mark.parametrize("n, replacement", [(2, True), (1, True), (1, False), (2, False)])
def test_multinomial_invalid_distributions(w, shape, n, replacement):
    """``multinomial`` (behind WeightedRandomSampler) names what is wrong with the weights, as torch does."""
    def run(lib):
        p = lib.tensor(w + w if shape else w)
        return lib.multinomial(p.reshape(shape) if shape else p, n, replacement)

    _same(run, message=bool(w))
    _same(lambda lib: lib.multinomial(lib.ones(0, 3), n, replacement).shape)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (10, 4, False), (2, 5, False),
                                                    (9, 3, True)])
def test_distributed_sampler(n, replicas, drop_last):
    """Every rank's share in order (shuffle=False); with shuffle, sizes, coverage and epochs (set_epoch/seed)."""
    def shares(lib, shuffle, epoch=0, seed=0):
        out = []
        for rank in range(replicas):
            s = _data(lib).DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                              seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append((len(s), s.num_samples, s.total_size, list(s)))
        return out

    _same(lambda lib: shares(lib, False))
    _same(lambda lib: [len(_data(lib).DataLoader(range(n), batch_size=2, sampler=_data(lib).DistributedSampler(
        range(n), num_replicas=replicas, rank=0, drop_last=drop_last)))])
    e, t = shares(ember, True), shares(torch, True)
    assert [x[:3] for x in e] == [x[:3] for x in t]
    if n % replicas == 0:
        assert sorted(sum((x[3] for x in e), [])) == list(range(n))
    elif drop_last:
        assert len(set(sum((x[3] for x in e), []))) == e[0][2]
    else:
        assert set(sum((x[3] for x in e), [])) == set(range(n))
    assert e == shares(ember, True)
    if n > 2:
        assert e != shares(ember, True, epoch=1) and e != shares(ember, True, seed=1)


@pytest.mark.parametrize("fn", [
    lambda lib: _data(lib).DistributedSampler(range(5), num_replicas=2, rank=2),
    lambda lib: _data(lib).DistributedSampler(range(5), num_replicas=2, rank=-1),
    lambda lib: _data(lib).DistributedSampler(range(5)),
])
def test_distributed_sampler_errors(fn):
    _same(fn)


def test_weighted_sampler_balances_classes():
    """The class-balancing idiom: inverse class-frequency weights give each class about the same share."""
    targets = np.array([0, 0, 0, 0, 1, 1, 2, 0, 0, 1])
    weight = 1.0 / np.bincount(targets)
    samples_weight = ember.from_numpy(weight[targets])
    sampler = ember.utils.data.WeightedRandomSampler(samples_weight.type("torch.DoubleTensor"), 30000,
                                                     generator=ember.Generator().manual_seed(0))
    assert sampler.weights.dtype == ember.float64 and len(sampler) == 30000
    drawn = np.bincount(targets[list(sampler)], minlength=3) / 30000
    np.testing.assert_allclose(drawn, [1 / 3] * 3, atol=0.015)
    a = list(ember.utils.data.WeightedRandomSampler(samples_weight, 50, generator=ember.Generator().manual_seed(1)))
    b = list(ember.utils.data.WeightedRandomSampler(samples_weight, 50, generator=ember.Generator().manual_seed(1)))
    assert a == b


# -- the DataLoader --------------------------------------------------------------------------------------------------
def _loader(lib, *args, **kwargs):
    return _data(lib).DataLoader(*args, **kwargs)


@pytest.mark.parametrize("fn", [
    lambda lib: list(_loader(lib, _tds(lib), batch_size=4)),
    lambda lib: [len(_loader(lib, _tds(lib), batch_size=4, drop_last=True)),
                 list(_loader(lib, _tds(lib), batch_size=4, drop_last=True))],
    lambda lib: [len(_loader(lib, _tds(lib), batch_size=None)), list(_loader(lib, _tds(lib), batch_size=None))[:2]],
    lambda lib: list(_loader(lib, [np.array([1, 2]), 3, "a", (np.float32(1.5),)], batch_size=None)),
    lambda lib: [len(_loader(lib, _tds(lib), batch_sampler=[[0, 1], [5]])),
                 list(_loader(lib, _tds(lib), batch_sampler=[[0, 1], [5]]))],
    lambda lib: list(_loader(lib, _tds(lib), sampler=[9, 1, 3], batch_size=2)),
    lambda lib: list(_loader(lib, _tds(lib), sampler=lib.arange(9, -1, -3), batch_size=2)),
    lambda lib: list(_loader(lib, _tds(lib), batch_size=None,
                             sampler=_data(lib).BatchSampler(_data(lib).SequentialSampler(range(10)), 4, False))),
    lambda lib: list(_loader(lib, lib.arange(10).reshape(5, 2), batch_size=2)),
    lambda lib: list(_loader(lib, np.arange(5.0), batch_size=2)),
    lambda lib: list(_loader(lib, [("a", 1), ("b", 2), ("c", 3)], batch_size=2)),
    lambda lib: list(_loader(lib, _data(lib).StackDataset(x=_tds(lib), y=list(range(10))), batch_size=4))[0],
    lambda lib: list(_loader(lib, _tds(lib), batch_size=3, collate_fn=lambda b: [len(b), b[0][0]])),
    lambda lib: [len(_loader(lib, _range_iterable(lib, 0, 7, True), batch_size=3)),
                 len(_loader(lib, _range_iterable(lib, 0, 7, True), batch_size=3, drop_last=True)),
                 len(_loader(lib, _range_iterable(lib, 0, 7, True), batch_size=None)),
                 list(_loader(lib, _range_iterable(lib, 0, 7), batch_size=3, drop_last=True))],
    lambda lib: len(_loader(lib, _range_iterable(lib, 0, 7), batch_size=3)),
    lambda lib: [len(_loader(lib, range(7), sampler=_data(lib).RandomSampler(range(7), num_samples=20),
                             batch_size=3)),
                 len(_loader(lib, range(7), sampler=_data(lib).WeightedRandomSampler([1.0] * 7, 20), batch_size=3,
                             drop_last=True))],
    lambda lib: [type(_loader(lib, _tds(lib)).sampler).__name__,
                 type(_loader(lib, _tds(lib), shuffle=True).sampler).__name__,
                 type(_loader(lib, _tds(lib)).batch_sampler).__name__,
                 _loader(lib, _tds(lib), batch_size=None).batch_sampler,
                 _loader(lib, _tds(lib)).collate_fn.__name__,
                 _loader(lib, _tds(lib), batch_size=None).collate_fn.__name__,
                 _loader(lib, _tds(lib), num_workers=2).prefetch_factor, _loader(lib, _tds(lib)).prefetch_factor],
])
def test_dataloader_batches(fn):
    """Batch contents, their dtypes and ``len(loader)`` for the DataLoader's options, in the main process."""
    _same(fn)


@pytest.mark.parametrize("fn", [
    lambda lib: _loader(lib, _tds(lib), batch_size=None, drop_last=True),
    lambda lib: _loader(lib, _tds(lib), sampler=range(3), shuffle=True),
    lambda lib: _loader(lib, _tds(lib), batch_sampler=[[0, 1]], batch_size=2),
    lambda lib: _loader(lib, _tds(lib), batch_sampler=[[0, 1]], drop_last=True),
    lambda lib: _loader(lib, _tds(lib), batch_sampler=[[0, 1]], shuffle=True),
    lambda lib: _loader(lib, _tds(lib), batch_sampler=[[0, 1]], sampler=[0]),
    lambda lib: _loader(lib, _range_iterable(lib, 0, 3), shuffle=True),
    lambda lib: _loader(lib, _range_iterable(lib, 0, 3), sampler=[0]),
    lambda lib: _loader(lib, _range_iterable(lib, 0, 3), batch_sampler=[[0]]),
    lambda lib: _loader(lib, _tds(lib), num_workers=-1),
    lambda lib: _loader(lib, _tds(lib), timeout=-1),
    lambda lib: _loader(lib, _tds(lib), timeout=None),
    lambda lib: _loader(lib, _tds(lib), prefetch_factor=2),
    lambda lib: _loader(lib, _tds(lib), num_workers=1, prefetch_factor=-1),
    lambda lib: _loader(lib, _tds(lib), persistent_workers=True),
    lambda lib: _loader(lib, _tds(lib), multiprocessing_context="spawn"),
    lambda lib: _loader(lib, _tds(lib), num_workers=1, multiprocessing_context="bogus"),
    lambda lib: _loader(lib, _tds(lib), batch_size=0),
    lambda lib: _loader(lib, _tds(lib), drop_last=1),
    lambda lib: setattr(_loader(lib, _tds(lib)), "batch_size", 3),
    lambda lib: list(_loader(lib, _tds(lib), timeout=2, batch_size=4)),  # a timeout needs worker processes
    lambda lib: list(_loader(lib, _tds(lib), shuffle=True, generator=42)),
    lambda lib: len(_loader(lib, _tds(lib), batch_sampler=iter([[0]]))),
    lambda lib: len(_loader(lib, _data(lib).Dataset())),
])
def test_dataloader_option_errors(fn):
    """Incompatible or invalid options raise torch's exception types (messages where they are torch's)."""
    _same(fn, message=False)


def test_dataloader_shuffle_reproducible():
    """A seeded ``generator`` (or ``manual_seed``) repeats the shuffle; epochs differ; nothing is lost."""
    g = ember.Generator().manual_seed(7)
    loader = ember.utils.data.DataLoader(_tds(ember), batch_size=4, shuffle=True, generator=g)
    e1, e2 = [b[0].tolist() for b in loader], [b[0].tolist() for b in loader]
    g.manual_seed(7)
    assert [b[0].tolist() for b in loader] == e1 != e2
    assert sorted(sum(e1, [])) == list(range(10)) and [len(b) for b in e1] == [4, 4, 2]
    loader = ember.utils.data.DataLoader(_tds(ember), batch_size=4, shuffle=True)
    ember.manual_seed(5)
    a = [b[0].tolist() for b in loader]
    ember.manual_seed(5)
    assert [b[0].tolist() for b in loader] == a


@pytest.mark.parametrize("fn", [
    lambda lib: _data(lib).default_collate([{"a": 1, "b": 2.5, "c": "s", "d": np.array([1, 2], np.int32)},
                                            {"a": 3, "b": 4.5, "c": "t", "d": np.array([3, 4], np.int32)}]),
    lambda lib: _data(lib).default_collate([Pair(1, lib.tensor([1.0])), Pair(2, lib.tensor([2.0]))]),
    lambda lib: _data(lib).default_collate([(1, True), (2, False)]),
    lambda lib: _data(lib).default_collate([np.float32(1), np.float32(2)]),
    lambda lib: _data(lib).default_collate([np.array(1.5), np.array(2.5)]),
    lambda lib: _data(lib).default_collate([{"x": (1, [2.0, "a"])}, {"x": (3, [4.0, "b"])}]),
    lambda lib: _data(lib).default_collate([collections.OrderedDict(a=1, b=np.uint8(3))]),
    lambda lib: _data(lib).default_collate([np.full((2, 2, 3), i, np.uint8) for i in range(2)]).permute(0, 3, 1, 2),
    lambda lib: _data(lib).default_collate([lib.ones(2, dtype=lib.float16), lib.zeros(2, dtype=lib.float16)]),
    lambda lib: _data(lib).default_collate([1, 2.5]),
    lambda lib: _data(lib).default_collate([[1, 2], [3]]),
    lambda lib: _data(lib).default_collate([lib.ones(2), lib.ones(3)]),
    lambda lib: _data(lib).default_collate([np.array(["a"]), np.array(["b"])]),
    lambda lib: _data(lib).default_collate([None, None]),
    lambda lib: _data(lib).default_convert([np.array([1, 2]), 3, (np.float64(2.0), "a"),
                                            {"k": np.zeros(2, np.float32)}, Pair(np.int64(1), 2)]),
])
def test_default_collate_and_convert(fn):
    """``default_collate`` on dicts, namedtuples, tuples, NumPy arrays and scalars, Python numbers and strings."""
    _same(fn)


# -- worker processes ------------------------------------------------------------------------------------------------
def test_iterable_dataset_sharded_in_workers():
    """``get_worker_info`` sharding in ``__iter__`` and in ``worker_init_fn``: the same batches, in torch's order."""
    _same(lambda lib: list(_loader(lib, _range_iterable(lib, 3, 10), num_workers=2, batch_size=2)))

    def init_fn_sharding(lib):
        class Range(_data(lib).IterableDataset):
            def __init__(self):
                self.start, self.end = 0, 9

            def __iter__(self):
                return iter(range(self.start, self.end))

        def worker_init_fn(worker_id):
            info = _data(lib).get_worker_info()
            d = info.dataset
            per = int(math.ceil((d.end - d.start) / float(info.num_workers)))
            d.start = d.start + worker_id * per
            d.end = min(d.start + per, d.end)

        return list(_loader(lib, Range(), num_workers=2, worker_init_fn=worker_init_fn))

    _same(init_fn_sharding)


def test_worker_seeding_idiom():
    """``seed_worker`` from torch's reproducibility notes: NumPy seeded from ``initial_seed()`` in each worker makes
    a seeded run repeat its augmentations, different across samples; persistent workers keep their processes."""
    def seed_worker(worker_id):
        np.random.seed(ember.initial_seed() % 2 ** 32)

    class Noisy(ember.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return i + np.random.rand()

    def run():
        g = ember.Generator().manual_seed(0)
        loader = ember.utils.data.DataLoader(Noisy(), batch_size=2, shuffle=True, num_workers=2,
                                             worker_init_fn=seed_worker, generator=g, persistent_workers=True,
                                             prefetch_factor=1)
        return [b.tolist() for b in loader], [b.tolist() for b in loader]

    (a1, a2), (b1, _) = run(), run()
    assert a1 == b1 and a1 != a2
    flat = sum(a1, [])
    assert sorted(int(v) for v in flat) == list(range(6)) and len(set(v % 1 for v in flat)) == 6

    _same(lambda lib: [list(_loader(lib, range(4), num_workers=2, batch_size=None,
                                    collate_fn=lambda i: (i, _data(lib).get_worker_info().id,
                                                          _data(lib).get_worker_info().num_workers))),
                       _data(lib).get_worker_info()])


def test_worker_errors_keep_their_type():
    """An exception in a worker is raised again in the main process with its type and the worker's id."""
    def run(lib):
        class Broken(_data(lib).Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                raise KeyError("missing sample")

        return list(_loader(lib, Broken(), num_workers=1))

    _same(run)


# -- seeding and shapes around the pipeline --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [7, 1.5, "7", True, -5, 2 ** 64, None, "x"])
def test_manual_seed_accepts_what_int_accepts(seed):
    """``manual_seed(args.seed)`` converts its argument with ``int()`` (a config may hold ``"7"`` or ``7.0``)."""
    _same(lambda lib: lib.manual_seed(seed).initial_seed())
    _same(lambda lib: lib.Generator().manual_seed(seed).initial_seed(), message=False)


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_size_of_a_zero_dim_tensor(dim):
    """``t.size(0)`` on a scalar, as in ``TensorDataset(scalar)``: torch's IndexError message."""
    _same(lambda lib: lib.tensor(1.0).size(dim))
