"""DistributedSampler, as ``torch.utils.data.distributed``: each of ``num_replicas`` processes reads its own share."""
import math

from .sampler import Sampler, T_co

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[T_co]):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` reads: every ``num_replicas``-th index,
    from ``rank``, of a (shuffled) index list padded by repeating its start, or cut with ``drop_last``, to a
    multiple of ``num_replicas``.

    Args:
        dataset (Dataset): the dataset (of constant size).
        num_replicas (int): the number of processes; required, as ember has no process group to ask.
        rank (int): this process's rank in ``[0, num_replicas - 1]``; required.
        shuffle (bool): shuffle the indices, from the seed ``seed + epoch``. Default: True
        seed (int): the shuffling seed, the same in every process. Default: 0
        drop_last (bool): drop the tail of the indices instead of padding. Default: False

    Call :meth:`set_epoch` before each epoch for a different order per epoch.

    Example::

        >>> list(ember.utils.data.DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ... import Generator, randperm
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - n
            indices += (indices * math.ceil(padding / n))[:padding] if padding > n else indices[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which shuffling seeds from (``seed + epoch``): call it before each epoch."""
        self.epoch = epoch
