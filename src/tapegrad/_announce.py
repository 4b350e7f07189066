"""The listener the layers below the engine announce to: the Tensor's methods and properties
(``item``, ``.grad``...), the random engine's draws and seeding, the value checks, the modules'
and optimizers' calls.

The stack of listeners and the events are in autograd/listeners.py; it sets ``listener`` here on
every push and pop (None with no listener). It lives here, below the Tensor, so that _tensor.py
and _rng.py read it without importing the autograd package: each announcing method pays one
``is None`` test when nothing listens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

listener: Any = None


def zero_grad(obj: Any, method: Callable, work: Callable, set_to_none: bool) -> None:
    """``obj.zero_grad(set_to_none)`` (``method``, done by ``work(obj, set_to_none)``) announced
    to ``listener`` as ``run_method``, with the arguments as a capture lists them (none for
    the default)."""
    args = () if set_to_none is True else (set_to_none,)
    listener.run_method(obj, method, args, {}, functools.partial(work, obj))
