"""``ToTensor`` in v2, kept with a deprecation warning."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import PIL.Image

from .. import functional as _F
from ._transform import Transform


class ToTensor(Transform):
    """The v1 ``ToTensor`` (deprecated: ``Compose([ToImage(), ToDtype(torch.float32,
    scale=True)])``)."""

    _transformed_types = (PIL.Image.Image, np.ndarray)

    def __init__(self) -> None:
        warnings.warn(
            "The transform `ToTensor()` is deprecated and will be removed in a future release. "
            "Instead, please use `v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, "
            "scale=True)])`.Output is equivalent up to float precision.", stacklevel=2)
        super().__init__()

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _F.to_tensor(inpt)
