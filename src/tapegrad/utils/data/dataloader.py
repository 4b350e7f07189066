"""``DataLoader``: batches from a dataset, in the sampler's order, through ``collate_fn``.

One pass (``iter(loader)``), all in this process::

    base_seed = int64 draw from loader.generator (or the default generator)   (as torch)
    for indices in batch_sampler:            # BatchSampler(sampler, batch_size, drop_last)
        samples = [dataset[i] for i in indices]     (or dataset.__getitems__(indices))
        yield collate_fn(samples)            # default_collate: stack tensors, numbers -> tensors

``shuffle=True`` uses ``RandomSampler``; with the same ``manual_seed`` the order is torch's.
``default_collate`` turns a batch of samples into tensors the way torch does: tensors are
stacked, Python floats become float64 and ints int64 tensors, NumPy arrays and scalars become
tensors of their dtype, and dicts, (named)tuples and lists are collated field by field.
Loading with ``num_workers > 0`` happens in the main process (with a warning); the batches are
the same.
"""

from __future__ import annotations

import collections
import copy
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ... import _dtype
from ..._creation import from_numpy, tensor
from ..._random import Generator
from ..._tensor import Tensor
from ...ops.shape import stack
from .dataset import Dataset, IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _fresh_seed

__all__ = [
    "DataLoader",
    "default_collate",
    "default_convert",
    "get_worker_info",
]

_NP_STR_OBJ = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def get_worker_info() -> None:
    """Always None: tapegrad loads data in the main process."""
    return None


def _np_to_tensor(a: Any) -> Tensor:
    """``torch.as_tensor`` of a NumPy array or scalar (its dtype kept)."""
    return from_numpy(np.asarray(a))


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays/scalars inside ``data`` into tensors, keeping the structure (what a
    loader with ``batch_size=None`` applies)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return _np_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                seq = copy.copy(data)
                for i, d in enumerate(data):
                    seq[i] = default_convert(d)
                return seq
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch: Any, *, collate_fn_map: dict[Any, Callable] | None = None) -> Any:
    """Collate a list of samples: the first matching entry of ``collate_fn_map`` (by exact type,
    then isinstance) handles leaves; mappings and sequences are collated element-wise."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        def fields() -> dict[Any, Any]:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                    for k in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields())
                return clone
            return elem_type(fields())
        except TypeError:
            return fields()
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(
            *(collate(samples, collate_fn_map=collate_fn_map)
              for samples in zip(*batch, strict=False))
        )
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=False))
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                seq = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    seq[i] = collate(samples, collate_fn_map=collate_fn_map)
                return seq
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: Any = None) -> Tensor:
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: Any = None) -> Any:
    elem = batch[0]
    if _NP_STR_OBJ.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_np_to_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: Any = None) -> Tensor:
    return _np_to_tensor(np.array(batch))


def collate_float_fn(batch: Any, *, collate_fn_map: Any = None) -> Tensor:
    return tensor(list(batch), dtype=_dtype.float64)


def collate_int_fn(batch: Any, *, collate_fn_map: Any = None) -> Tensor:
    return tensor(list(batch))


def collate_str_fn(batch: Any, *, collate_fn_map: Any = None) -> Any:
    return batch


default_collate_fn_map: dict[Any, Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """Merge a list of samples into a batch, as torch's ``default_collate``.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.utils.data import default_collate
        >>> default_collate([(torch.tensor([1.0]), 0), (torch.tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


class _InfiniteConstantSampler(Sampler[None]):
    """The sampler of an iterable-style dataset: None forever."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a map-style or iterable-style dataset.
        batch_size: samples per batch (default 1); None disables automatic batching.
        shuffle: reshuffle at every pass (default False).
        sampler: the index order (exclusive with ``shuffle``).
        batch_sampler: yields lists of indices (exclusive with batch_size, shuffle, sampler,
            drop_last).
        num_workers: accepted for compatibility; loading happens in this process.
        collate_fn: merges a list of samples (default: ``default_collate``).
        drop_last: drop the last incomplete batch (default False).
        generator: the generator used by the default ``RandomSampler`` and the base seed.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
        >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(
        self,
        dataset: Dataset[Any],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[Any] | Iterable[Any] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to "
                "None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._iterable = True
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, but "
                    f"got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._iterable = False

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self._initialized = True

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
            "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is "
                "initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            self._IterableDataset_len_called = length
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


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


class _DataLoaderIter:
    """One pass over a DataLoader (torch's single-process iterator)."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._loader = loader
        if loader.num_workers > 0:
            warnings.warn(
                f"tapegrad's DataLoader loads in the main process: num_workers="
                f"{loader.num_workers} gives the same batches without worker processes.",
                UserWarning,
                stacklevel=3,
            )
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                UserWarning,
                stacklevel=3,
            )
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _fresh_seed(loader.generator)
        self._num_yielded = 0
        self._dataset_iter = iter(self._dataset) if self._iterable else None
        self._ended = False

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _fetch(self, index: Any) -> Any:
        if self._iterable:
            if self._ended:
                raise StopIteration
            if self._auto_collation:
                data = []
                for _ in index:
                    try:
                        data.append(next(self._dataset_iter))  # type: ignore[arg-type]
                    except StopIteration:
                        self._ended = True
                        break
                if len(data) == 0 or (self._drop_last and len(data) < len(index)):
                    raise StopIteration
            else:
                data = next(self._dataset_iter)  # type: ignore[arg-type]
            return self._collate_fn(data)
        if self._auto_collation:
            if self._collate_fn is default_collate:
                fast = _tensor_rows(self._dataset, index)
                if fast is not None:
                    ds, rows = fast
                    return [Tensor._make(t._data[rows]) for t in ds.tensors]
            getitems = getattr(self._dataset, "__getitems__", None)
            if getitems:
                data = getitems(index)
            else:
                data = [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        return self._collate_fn(data)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)
        data = self._fetch(index)
        self._num_yielded += 1
        length = self._loader._IterableDataset_len_called
        if self._iterable and length is not None and self._num_yielded > length:
            warnings.warn(
                f"Length of IterableDataset {self._dataset} was reported to be {length}(when "
                f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ",
                stacklevel=2,
            )
        return data
