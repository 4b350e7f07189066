"""The grad-mode flags of each thread: whether ops record a graph, inference mode, view replay.

The flags are read by the Tensor itself (``requires_grad_`` in inference mode, the warnings of
``numpy()`` and ``item()``), by the ops and by the engine; the context managers that set them
(``no_grad``, ``inference_mode``...) and their documentation are in autograd/grad_mode.py. The
state lives here, below the Tensor, so that _tensor.py can read it without importing the
autograd package.
"""

from __future__ import annotations

import itertools
import threading


class _GradState(threading.local):
    def __init__(self) -> None:
        self.grad_mode = True
        self.inference = False
        self.enabled = True  # grad_mode and not inference: what apply() reads
        self.view_replay = False  # views remember their view ops (_force_original_view_tracking)
        self.multithreading = True  # set_multithreading_enabled (nothing here runs threads)


_state = _GradState()

# The creation order of graph nodes (``Node._seq``: the engine runs the latest first); here, below
# the Tensor, because ``detach_`` takes a number from it too.
_sequence = itertools.count()
