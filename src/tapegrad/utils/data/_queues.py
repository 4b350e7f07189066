"""The queues between a DataLoader and its worker processes, and how a Tensor crosses them.

This is the part of the DataLoader that needs ``multiprocessing``; it is imported when a loader
starts workers (and by each worker), not with tapegrad.

Tensors cross the queues by pickling: ``ForkingPickler`` (what ``multiprocessing`` queues use)
is told to pickle a tapegrad Tensor as its ndarray plus ``requires_grad``, with no extra copy.
"""

from __future__ import annotations

from multiprocessing import queues as mp_queues
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

from ..._tensor import Tensor
from . import _worker
from ._worker import ExceptionWrapper

# ---------------------------------------------------------------------------------------------
# Tensors through multiprocessing queues
# ---------------------------------------------------------------------------------------------


def _rebuild_tensor(data: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._make(data, requires_grad)


def _reduce_tensor(t: Tensor) -> tuple[Any, tuple[np.ndarray, bool]]:
    """Pickle a Tensor for another process: its array (NumPy pickles only the viewed elements)
    and ``requires_grad``. A graph cannot cross processes, so a non-leaf requiring grad is
    refused, as torch refuses it."""
    if t._requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue)."
        )
    return (_rebuild_tensor, (t._data, t._requires_grad))


ForkingPickler.register(Tensor, _reduce_tensor)


class ResultQueue(mp_queues.Queue):
    """The workers' result queue. A result that cannot be pickled (say, a batch holding a
    lambda) reaches the main process as that pickling error instead of vanishing in the
    queue's feeder thread, which would leave the main process waiting."""

    def _on_queue_feeder_error(self, e: Exception, obj: Any) -> None:
        task = obj[0] if isinstance(obj, tuple) and len(obj) == 2 else None
        info = _worker._worker_info
        where = info.id if info is not None else "?"
        error = ExceptionWrapper((type(e), e, e.__traceback__),
                                 where=f"in DataLoader worker process {where}")
        try:
            self.put((task, error))
        except ValueError:  # the queue is closed: the worker is shutting down anyway
            pass
