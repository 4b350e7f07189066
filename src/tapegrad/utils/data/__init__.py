"""``tapegrad.utils.data``: datasets, samplers and the ``DataLoader`` (torch's API).

    ds = TensorDataset(x, y)
    train, val = random_split(ds, [0.8, 0.2])
    for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
        ...
"""

from __future__ import annotations

from . import distributed  # noqa: F401 - torch.utils.data.distributed, imported as torch's is
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "DistributedSampler",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
