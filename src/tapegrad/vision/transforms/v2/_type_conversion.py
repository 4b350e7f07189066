"""v2 type conversions: ``PILToTensor``, ``ToImage``, ``ToPILImage``, ``ToPureTensor``."""

from __future__ import annotations

from typing import Any

import numpy as np
import PIL.Image

from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from . import functional as F
from ._transform import Transform
from ._utils import is_pure_tensor


class PILToTensor(Transform):
    """PIL images as (C, H, W) tensors of their own dtype."""

    _transformed_types = (PIL.Image.Image,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.pil_to_tensor(inpt)


class ToImage(Transform):
    """Plain tensors, ndarrays and PIL images as ``tv_tensors.Image`` (values unchanged)."""

    _transformed_types = (is_pure_tensor, PIL.Image.Image, np.ndarray)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.to_image(inpt)


class ToPILImage(Transform):
    """Tensors and ndarrays as PIL images (see ``functional.to_pil_image`` for the modes)."""

    _transformed_types = (is_pure_tensor, tv_tensors.Image, np.ndarray)

    def __init__(self, mode: str | None = None) -> None:
        super().__init__()
        self.mode = mode

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.to_pil_image(inpt, mode=self.mode)


class ToPureTensor(Transform):
    """TVTensors as plain tensors (their metadata dropped)."""

    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return inpt.as_subclass(Tensor)
