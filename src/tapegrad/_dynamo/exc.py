"""``torch._dynamo.exc``: the errors a compiled call can raise, as torch names them."""

from __future__ import annotations

from .._compile import InvalidBackend
from ..compiler.capture import Unsupported

__all__ = ["InvalidBackend", "Unsupported"]
