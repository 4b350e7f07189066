"""``DistributedSampler``: each rank reads its own share of a dataset, the same indices torch
gives.

Every rank draws the same permutation (``torch.randperm`` from a generator seeded with
``seed + epoch``), pads it by repeating its start until it divides evenly (or, with
``drop_last``, cuts the tail), and takes every ``num_replicas``-th index starting at its rank::

    permutation  7 2 9 0 4 1 8 3 6 5 (+ 7 2 for 4 ranks)
    rank 0       7       4       6
    rank 1         2       1       5 ...

Call ``set_epoch(epoch)`` at the start of each epoch so the order changes between epochs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ..._random import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """``DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
    drop_last=False)``; ``num_replicas`` and ``rank`` default to the default process group's."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist  # tapegrad.distributed: loaded on first use (MPI)

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                             f"{num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # the largest even share that needs no padding
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            repeats = math.ceil(missing / len(indices)) if indices else 0
            indices += (indices * repeats)[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch seeds the shuffle: call this before each epoch's loop."""
        self.epoch = epoch
