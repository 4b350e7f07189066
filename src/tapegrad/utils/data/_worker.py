"""What runs inside a DataLoader worker process, and what crosses the process boundary.

A worker is started by the main process with a copy of the dataset (by fork, or pickled for
spawn/forkserver) and one index queue of its own; all workers share one result queue::

    main process                                       worker process w (of n)
    ------------                                       -----------------------
    base_seed (one int64 draw, as torch)  --start-->   seed = base_seed + w
                                                       random.seed(seed); tapegrad.manual_seed(seed)
                                                       np.random.seed(_numpy_seed(base_seed, w))
                                                       get_worker_info() = WorkerInfo(w, n, ...)
                                                       worker_init_fn(w); fetcher = make_fetcher()
    index_queue[w].put((task, indices)) ------------>  batch = fetcher.fetch(indices)
    result_queue.get() <---------------------------    result_queue.put((task, batch))
                                                         an exception: ExceptionWrapper (traceback
                                                         as text, re-raised by the main process)
                                                         an exhausted IterableDataset:
                                                         _IterableDatasetStopIteration(w)
    index_queue[w].put(_ResumeIteration()) --------->  (persistent workers) ack, new fetcher
    index_queue[w].put(None) ----------------------->  leave the loop, exit

The queues themselves, and how Tensors cross them, are in ``_queues.py``: ``multiprocessing``
is imported only when a DataLoader starts workers.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._blas import set_num_threads
from ..._random import manual_seed, register_worker_generator
from ._fetch import make_fetcher

# How often (seconds) a waiting worker checks that the main process is alive, and how long the
# main process waits for one result before checking that its workers are (torch's value).
MP_STATUS_CHECK_INTERVAL = 5.0


# ---------------------------------------------------------------------------------------------
# What a worker knows about itself
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """The current DataLoader worker: ``id`` (0 to ``num_workers - 1``), ``num_workers``,
    ``seed`` (``base_seed + id``) and ``dataset`` (this process's copy of the dataset)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of this DataLoader worker process; None in the main process.

    Use it in an ``IterableDataset.__iter__`` (or a ``worker_init_fn``) to give each worker its
    own share of the data, or in ``worker_init_fn`` to seed other libraries from ``seed``.

    Example:
        >>> from tapegrad.utils.data import get_worker_info
        >>> get_worker_info() is None   # not inside a worker
        True
    """
    return _worker_info


def _thread_worker_generator() -> Any:
    """The generator of this DataLoader thread worker, or None (``torch.thread_safe_generator``)."""
    info = _worker_info
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return getattr(info.rng, "torch_generator", None)
    return None


register_worker_generator(_thread_worker_generator)  # (_random.py's thread_safe_generator)


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted: send it no more tasks."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Start a new epoch with the same (persistent) worker."""

    seed: int | None = None


def _numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """Four 32-bit words seeding NumPy's global generator in worker ``worker_id`` (torch's rule):
    the words ``[worker_id, low 32 bits, high 32 bits, 0]`` run through NumPy ``SeedSequence``'s
    hash-and-mix, so that NumPy's and Python's generators do not start from the same seed."""
    mask = 0xFFFFFFFF
    multiplier = 0x43B0D7E5

    def hashmix(value: int) -> int:
        nonlocal multiplier
        value = (value ^ multiplier) & mask
        multiplier = (multiplier * 0x931E8875) & mask
        value = (value * multiplier) & mask
        return value ^ (value >> 16)

    def mix(x: int, y: int) -> int:
        value = (0xCA01F9DD * x - 0x4973F715 * y) & mask
        return value ^ (value >> 16)

    pool = [hashmix(word) for word in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    words = []
    multiplier_b = 0x8B51F9DD
    for value in pool:
        value ^= multiplier_b
        multiplier_b = (multiplier_b * 0x58F38DED) & mask
        value = (value * multiplier_b) & mask
        words.append(value ^ (value >> 16))
    return words


# ---------------------------------------------------------------------------------------------
# Exceptions across processes
# ---------------------------------------------------------------------------------------------


class KeyErrorMessage(str):
    """A str whose repr is itself: a KeyError's message keeps its line breaks."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, as its type and formatted traceback (picklable).

    ``reraise()`` raises ``exc_type("Caught ValueError in DataLoader worker process 0.\\n
    Original Traceback (most recent call last): ...")`` in the main process, or a RuntimeError
    with that message when the type cannot be built from one string.
    """

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __reduce__(self) -> Any:
        exc_type = self.exc_type
        try:  # a class defined inside a function cannot be pickled: send a RuntimeError
            pickle.dumps(exc_type)
        except Exception:
            exc_type = RuntimeError
        return (_rebuild_exception_wrapper, (exc_type, self.exc_msg, self.where))

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:  # this frame must not hold the exception: that would be a reference cycle
            del exception


def _rebuild_exception_wrapper(exc_type: type, exc_msg: str, where: str) -> ExceptionWrapper:
    wrapper = ExceptionWrapper.__new__(ExceptionWrapper)
    wrapper.exc_type, wrapper.exc_msg, wrapper.where = exc_type, exc_msg, where
    return wrapper


# ---------------------------------------------------------------------------------------------
# The worker's loop
# ---------------------------------------------------------------------------------------------


def _worker_loop(iterable: bool, dataset: Any, index_queue: Any, data_queue: Any,
                 done_event: Any, auto_collation: bool, collate_fn: Any, drop_last: bool,
                 gather_rows: bool, base_seed: int, init_fn: Any, worker_id: int,
                 num_workers: int) -> None:
    """Serve tasks from ``index_queue`` until told to stop (``None``) or the main process dies."""
    global _worker_info
    from . import _queues  # noqa: F401  (Tensors pickled for the result queue as _queues says)

    try:
        set_num_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(_numpy_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"

        init_error: ExceptionWrapper | None = None
        fetcher: Any = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last,
                                   gather_rows)
        except Exception:
            init_error = ExceptionWrapper(where=where)

        iteration_end = False  # our iterable dataset is exhausted: wait for None
        manager_pid = os.getppid()
        while os.getppid() == manager_pid:  # the main process is alive
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                       drop_last, gather_rows)
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = task
            data: Any
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, task
    except KeyboardInterrupt:
        pass  # the main process raises it
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
