"""The listener the layers below the engine announce to: the Tensor's methods and properties
(``item``, ``.grad``...), the random engine's draws and seeding, the value checks, the modules'
and optimizers' calls.

The stack of listeners and the events are in autograd/listeners.py; it sets ``listener`` here on
every push and pop (None with no listener). It lives here, below the Tensor, so that _tensor.py
and _rng.py read it without importing the autograd package: each announcing method pays one
``is None`` test when nothing listens.
"""

from __future__ import annotations

from typing import Any

listener: Any = None
