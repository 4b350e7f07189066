"""v1 functions kept in v2 with a deprecation warning: ``to_tensor``, ``get_image_size``."""

from __future__ import annotations

import warnings
from typing import Any

from tapegrad import Tensor

from ... import functional as _F


def to_tensor(inpt: Any) -> Tensor:
    """The v1 ``to_tensor`` (deprecated: use ``to_image`` then ``to_dtype(scale=True)``)."""
    warnings.warn(
        "The function `to_tensor(...)` is deprecated and will be removed in a future release. "
        "Instead, please use `to_image(...)` followed by `to_dtype(..., dtype=torch.float32, "
        "scale=True)`.", stacklevel=2)
    return _F.to_tensor(inpt)


def get_image_size(inpt: Any) -> list[int]:
    """[width, height] (deprecated: ``get_size`` returns [height, width])."""
    warnings.warn(
        "The function `get_image_size(...)` is deprecated and will be removed in a future "
        "release. Instead, please use `get_size(...)` which returns `[h, w]` instead of "
        "`[w, h]`.", stacklevel=2)
    return _F.get_image_size(inpt)
