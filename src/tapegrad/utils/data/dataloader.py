"""``DataLoader``: batches from a dataset, in the sampler's order, through ``collate_fn``.

One pass (``iter(loader)``) with ``num_workers=0``, all in this process::

    base_seed = int64 draw from loader.generator (or the default generator)   (as torch)
    for indices in batch_sampler:            # BatchSampler(sampler, batch_size, drop_last)
        samples = [dataset[i] for i in indices]     (or dataset.__getitems__(indices))
        yield collate_fn(samples)            # default_collate: stack tensors, numbers -> tensors

With ``num_workers=n > 0`` the same batches are built in ``n`` worker processes (see
``_worker.py`` for the worker's side)::

    base_seed drawn as above; start n workers with multiprocessing_context (default:
        multiprocessing's start method, fork on Linux up to Python 3.13)
    send prefetch_factor * n tasks: task k = (k, next(batch_sampler)) to worker k % n
    each next(): wait for the result of task `rcvd` (later ones are kept until their turn,
                 unless in_order=False), send one more task, re-raise a worker's exception
    end of the pass: tell the workers to exit (persistent_workers: keep them for the next)

An ``IterableDataset`` is copied into every worker; task k asks worker k % n for its next
batch, so without sharding through ``get_worker_info()`` each worker yields the whole stream.

``shuffle=True`` uses ``RandomSampler``; with the same ``manual_seed`` the order is torch's.
``default_collate`` turns a batch of samples into tensors the way torch does: tensors are
stacked, Python floats become float64 and ints int64 tensors, NumPy arrays and scalars become
tensors of their dtype, and dicts, (named)tuples and lists are collated field by field.
"""

from __future__ import annotations

import atexit
import collections
import copy
import itertools
import math
import os
import pickle
import queue
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
from . import _worker
from ._fetch import make_fetcher
from ._worker import ExceptionWrapper, get_worker_info
from .dataset import Dataset, IterableDataset
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


def _multiprocessing() -> Any:
    """The multiprocessing package (worker processes and their queues)."""
    # multiprocessing: loaded on first use, not at import: only loaders with workers need it
    import multiprocessing

    return multiprocessing


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
        num_workers: how many worker processes load batches (default 0: this process).
        collate_fn: merges a list of samples (default: ``default_collate``).
        pin_memory: accepted; a CPU-only build has no pinned memory (it warns, as torch).
        drop_last: drop the last incomplete batch (default False).
        timeout: seconds to wait for a worker's batch before raising (default 0: no limit).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker, after seeding.
        multiprocessing_context: a start method name ('fork', 'spawn', 'forkserver') or a
            ``multiprocessing`` context (default: multiprocessing's default).
        generator: the generator used by the default ``RandomSampler`` and the base seed.
        prefetch_factor: batches loaded in advance per worker (default 2 with workers).
        persistent_workers: keep the workers alive from one pass to the next.
        in_order: yield batches in sampler order (default True); False yields them as they
            come.

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
        self._iterator: Any = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> Any:
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            multiprocessing = _multiprocessing()

            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method "
                        f"in {methods!r}, but got multiprocessing_context={context!r}"
                    )
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    "string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self._multiprocessing_context = context

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process has CPUs (as torch)."""
        if not self.num_workers:
            return
        has_affinity = hasattr(os, "sched_getaffinity")
        cpus = len(os.sched_getaffinity(0)) if has_affinity else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker "
                          "in current system.")
        else:
            suggestion = (
                f"Our suggested max number of worker in current system is {cpus}"
                f"{'' if has_affinity else ' (`cpuset` is not taken into account)'}, which is "
                "smaller than what this DataLoader is going to create."
            )
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{suggestion} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.",
            UserWarning,
            stacklevel=3,
        )

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

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

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


class _BaseDataLoaderIter:
    """What both iterators share: the index stream, the base seed, the length warning."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                UserWarning,
                stacklevel=4,
            )
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                UserWarning,
                stacklevel=4,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        # default_collate over a TensorDataset may gather each batch in one NumPy index
        self._gather_rows = loader.collate_fn is default_collate
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _fresh_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        length = self._IterableDataset_len_called
        if self._iterable and length is not None and self._num_yielded > length:
            message = (
                f"Length of IterableDataset {self._dataset} was reported to be {length}(when "
                f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                message += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset "
                    "for examples."
                )
            warnings.warn(message, stacklevel=2)
        return data

    def __getstate__(self) -> Any:
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """One pass over a DataLoader, loading in this process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last, self._gather_rows)

    def _next_data(self) -> Any:
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)


# Set when the interpreter exits: then the workers are left to multiprocessing's own cleanup.
_python_exiting = False


def _set_python_exiting() -> None:
    global _python_exiting
    _python_exiting = True


atexit.register(_set_python_exiting)

# The index queues of every iterator whose workers run, by id(iterator). An iterator caught in a
# reference cycle (an exception's traceback holds it) is finalized after the weak references
# to its objects are cleared, and a multiprocessing Queue stops its feeder thread then: its
# workers would never receive their last message. Held here, the queues outlive the iterator's
# __del__.
_running_index_queues: dict[int, list[Any]] = {}


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """One pass over a DataLoader, loading in ``num_workers`` worker processes.

    Task k (the k-th index list of the sampler) goes to the next active worker in turn;
    ``_task_info[k]`` is ``(worker,)`` while it is out and ``(worker, data)`` once its result has
    come early. At most ``prefetch_factor * num_workers`` tasks are out at once.
    """

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor: int = loader.prefetch_factor  # type: ignore[assignment]
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter"
            )
        multiprocessing = _multiprocessing()
        from . import _queues  # the result queue, and Tensors pickled for it

        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._shutdown = False
        self._workers: list[Any] = []
        self._index_queues: list[Any] = []
        self._data_queue = _queues.ResultQueue(ctx=context)
        self._workers_done_event = context.Event()
        self._workers_status = [True] * self._num_workers
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(
                target=_worker._worker_loop,
                args=(self._iterable, self._dataset, index_queue, self._data_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._gather_rows, self._base_seed,
                      loader.worker_init_fn, worker_id, self._num_workers),
            )
            worker.daemon = True
            try:
                worker.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn(
                    "Got pickle error when attempting to start a worker Process. This might be "
                    "because the worker Process arguments are not picklable. Python 3.14+ "
                    "changed the multiprocessing start method in non-Mac POSIX platforms to "
                    "'forkserver', which requires the worker Process arguments to be "
                    "picklable. You can also try multiprocessing.set_start_method('fork').",
                    stacklevel=4,
                )
                raise
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        _running_index_queues[id(self)] = self._index_queues
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to return
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: a new epoch, acknowledged by every worker
            for index_queue in self._index_queues:
                index_queue.put(_worker._ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                task, _ = self._get_data()
                if isinstance(task, _worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = _worker.MP_STATUS_CHECK_INTERVAL) -> Any:
        """``(True, result)``, or ``(False, None)`` after ``timeout`` seconds with no result;
        a worker that died meanwhile raises."""
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = []
            for worker_id, worker in enumerate(self._workers):
                if self._workers_status[worker_id] and not worker.is_alive():
                    failed.append(worker)
                    self._mark_worker_as_unavailable(worker_id)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self) -> Any:
        while True:
            # skip tasks whose worker ended its (iterable) stream before answering them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # its result came early
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        """Send the sampler's next index list to the next active worker (if any)."""
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                self._in_order
                or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)
            ):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        """Send no more tasks to this worker and tell it to exit."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop every worker: ask, wait a moment, then terminate the ones still running."""
        if _python_exiting or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for worker in self._workers:
                worker.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            _running_index_queues.pop(id(self), None)
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if hasattr(self, "_shutdown"):
            self._shutdown_workers()
