"""v2 transforms on box and keypoint metadata: format conversion, clamping, clamping mode."""

from __future__ import annotations

from typing import Any

from tapegrad.vision import tv_tensors

from . import functional as F
from ._transform import Transform


class ConvertBoundingBoxFormat(Transform):
    """Convert the boxes to ``format``."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, format: str | tv_tensors.BoundingBoxFormat) -> None:
        super().__init__()
        self.format = format

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.convert_bounding_box_format(inpt, new_format=self.format)  # type: ignore


class ClampBoundingBoxes(Transform):
    """Clamp the boxes to their canvas (``"auto"``: each boxes' own clamping mode)."""

    def __init__(self, clamping_mode: str | None = "auto") -> None:
        super().__init__()
        self.clamping_mode = clamping_mode

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.clamp_bounding_boxes(inpt, clamping_mode=self.clamping_mode)


class ClampKeyPoints(Transform):
    """Clamp the keypoints to the pixels of their canvas."""

    _transformed_types = (tv_tensors.KeyPoints,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return F.clamp_keypoints(inpt)


class SetClampingMode(Transform):
    """Set the clamping mode of the boxes (None, "soft" or "hard")."""

    def __init__(self, clamping_mode: str | None) -> None:
        super().__init__()
        self.clamping_mode = clamping_mode
        if self.clamping_mode not in (None, "soft", "hard"):
            raise ValueError(f"clamping_mode must be soft, hard or None, got {clamping_mode}")

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        out = inpt.clone()
        out.clamping_mode = self.clamping_mode
        return out
