"""Samplers, as ``torch.utils.data.sampler``: iterables of dataset indices (or of lists of indices, for batches).

The random samplers and BatchSampler also have ``state_dict``/``load_state_dict`` (torch's have none; this mirrors
torchdata's stateful samplers): the state their next pass starts from, which is their generator's state. A sampler
without a generator draws from ember's default generator, whose state is global (saved by a checkpoint, not here).
"""
import itertools
from typing import Generic, TypeVar

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base of all samplers: subclasses implement ``__iter__`` (indices) and usually ``__len__``."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class _GeneratorState:
    """``state_dict``/``load_state_dict`` of a sampler whose only state is its ``generator``."""

    def state_dict(self):
        """The state the next pass starts from: ``{'generator': its state, or None without a generator}``."""
        return {"generator": None if self.generator is None else self.generator.get_state()}

    def load_state_dict(self, state_dict):
        """Restores a state from :meth:`state_dict`, so that the next pass repeats the one it was taken before."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"generator"}:
            raise ValueError(f"{name}.load_state_dict: expected a dict with the key 'generator', got "
                             f"{sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict).__name__}")
        saved = state_dict["generator"]
        if (saved is None) != (self.generator is None):
            raise ValueError(f"{name}.load_state_dict: the state was saved from a sampler "
                             f"{'without' if saved is None else 'with'} a generator, but this one has "
                             f"{'one' if saved is None else 'none'}")
        if saved is not None:
            self.generator.set_state(saved)


class RandomSampler(_GeneratorState, Sampler[int]):
    """A random permutation of the indices, or ``num_samples`` indices drawn with replacement.

    Args:
        data_source (Sized): the dataset
        replacement (bool): draw with replacement. Default: False
        num_samples (int): how many indices to draw (default ``len(data_source)``); past one permutation without
            replacement, further permutations follow
        generator (Generator): the generator to draw from; by default each pass seeds a fresh one from ember's
            default generator
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ... import Generator, empty, int64, randint, randperm
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(empty((), dtype=int64).random_().item())
            generator = Generator().manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(_GeneratorState, Sampler[int]):
    """The given ``indices`` in random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ... import randperm
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(_GeneratorState, Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Example::

        >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 3)
        >>> list(s)
        [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ... import as_tensor, float64
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = as_tensor(weights, dtype=float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ... import multinomial
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    Example::

        >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def state_dict(self):
        """``{'sampler': the state of the sampler it groups}`` (None if that one has no ``state_dict``)."""
        inner = getattr(self.sampler, "state_dict", None)
        return {"sampler": None if inner is None else inner()}

    def load_state_dict(self, state_dict):
        """Restores a state from :meth:`state_dict` into the sampler it groups."""
        if not isinstance(state_dict, dict) or set(state_dict) != {"sampler"}:
            raise ValueError(f"BatchSampler.load_state_dict: expected a dict with the key 'sampler', got "
                             f"{sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict).__name__}")
        inner = state_dict["sampler"]
        load = getattr(self.sampler, "load_state_dict", None)
        if (inner is None) != (load is None):
            raise ValueError(f"BatchSampler.load_state_dict: the state {'has no' if inner is None else 'has a'} "
                             f"sampler state, but this BatchSampler's {type(self.sampler).__name__} "
                             f"{'has' if inner is None else 'has no'} load_state_dict")
        if load is not None:
            load(inner)

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
