"""``torch.types``: the type aliases torch's annotations use (``Number``, ``Device``...), for
code that annotates with them.

    >>> import tapegrad as torch
    >>> def scale(x: torch.Tensor, k: torch.types.Number) -> torch.Tensor:
    ...     return x * k
"""

from __future__ import annotations

import os
from typing import IO, Union

from ._device import device as _device
from ._naming import public
from ._tensor import Size, Tensor

__all__ = ["Device", "FileLike", "Number", "Size", "Storage", "Tensor"]

Number = int | float | bool
Device = _device | str | int | None
FileLike = Union[str, os.PathLike[str], IO[bytes]]  # noqa: UP007 - torch's spelling


@public(".types")
class Storage:
    """The annotation torch's code gives a storage (the classes themselves are
    ``UntypedStorage`` and ``TypedStorage``: ``tapegrad.storage``)."""

    device: _device
    dtype: object
