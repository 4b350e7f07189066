"""``DistributedSampler``: each of ``num_replicas`` processes takes every ``num_replicas``-th
index of one shuffled order, so that together they see the dataset once per epoch.

The order is ``randperm(len(dataset))`` from a generator seeded with ``seed + epoch`` (call
``set_epoch`` each epoch for a new order), the same on every replica; it is padded with its
own first indices to a multiple of ``num_replicas`` (or cut with ``drop_last``). Without a
process group, ``num_replicas`` and ``rank`` are given explicitly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of replica ``rank`` of ``num_replicas`` (see the module docstring).

    Example:
        >>> import tapegrad as torch
        >>> s = torch.utils.data.DistributedSampler(range(5), num_replicas=2, rank=1,
        ...                                         shuffle=False)
        >>> list(s)
        [1, 3, 0]
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:  # (from the process group: there is none)
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            from ..._random import Generator, randperm

            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order the next iteration takes (``seed + epoch``)."""
        self.epoch = epoch
