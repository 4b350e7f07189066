"""Fetchers: turn one index (or one list of indices) from the sampler into one collated batch.

The same fetcher runs in the main process (``num_workers=0``) and inside each worker process,
so a batch is built the same way wherever it is loaded::

    map-style:       [dataset[i] for i in indices]   (or dataset.__getitems__(indices))
                     -> collate_fn(samples)
    iterable-style:  len(indices) x next(iter(dataset))   (the index values are ignored)
                     -> collate_fn(samples); StopIteration once the stream is dry

``_MapFetcher`` has one shortcut: a ``TensorDataset`` (possibly under ``Subset``s) collated by
``default_collate`` is gathered with one NumPy fancy index per tensor instead of stacking
``batch_size`` rows one by one. The result is the same tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .dataset import Subset, TensorDataset


def _tensor_rows(dataset: Any, indices: list[Any]) -> tuple[TensorDataset, np.ndarray] | None:
    """The TensorDataset under a chain of Subsets and the row numbers of ``indices`` in it,
    when fetching can be one gather per tensor (plain int indices, nothing requires grad)."""
    rows: Any = indices
    while type(dataset) is Subset:
        try:
            rows = [dataset.indices[i] for i in rows]
        except (TypeError, IndexError):
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not rows:
        return None
    if not all(type(i) is int for i in rows):
        return None
    if any(t._requires_grad for t in dataset.tensors):
        return None
    n = len(dataset)
    idx = np.fromiter(rows, dtype=np.int64, count=len(rows))
    if idx.min() < -n or idx.max() >= n:
        return None  # the slow path raises torch's IndexError
    return dataset, idx


class _Fetcher:
    """What both fetchers keep: the dataset, whether indices come in batches, ``collate_fn`` and
    ``drop_last``."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last


class _MapFetcher(_Fetcher):
    """Fetch from a map-style dataset: ``collate_fn([dataset[i] for i in indices])``.

    Args:
        dataset: the map-style dataset.
        auto_collation: indices come in lists (a batch sampler) rather than one by one.
        collate_fn: merges the samples of one batch.
        drop_last: unused here (the batch sampler drops the last batch).
        gather_rows: ``collate_fn`` is ``default_collate``, so a ``TensorDataset`` batch may be
            gathered in one go.
    """

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool, gather_rows: bool = False) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.gather_rows = gather_rows

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.gather_rows:
            fast = _tensor_rows(self.dataset, index)
            if fast is not None:
                ds, rows = fast
                return [Tensor._make(t._data[rows]) for t in ds.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableFetcher(_Fetcher):
    """Fetch from an iterable-style dataset: the next ``len(indices)`` items of one pass.

    ``iter(dataset)`` is called when the fetcher is made (in a worker: after
    ``worker_init_fn``); ``fetch`` raises ``StopIteration`` once the stream has nothing left (or,
    with ``drop_last``, less than a full batch).
    """

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool, gather_rows: bool = False) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter: Iterator[Any] = iter(dataset)
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable: bool, dataset: Any, auto_collation: bool,
                 collate_fn: Callable[[Any], Any], drop_last: bool,
                 gather_rows: bool = False) -> _MapFetcher | _IterableFetcher:
    """The fetcher for a map-style (``iterable=False``) or iterable-style dataset."""
    kind = _IterableFetcher if iterable else _MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last, gather_rows)
