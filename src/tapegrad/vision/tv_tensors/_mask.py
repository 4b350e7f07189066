"""``Mask``: a tensor of shape (..., H, W) of segmentation or detection masks."""

from __future__ import annotations

from typing import Any

from ..transforms.functional import _is_pil_image, pil_to_tensor
from ._tv_tensor import TVTensor


class Mask(TVTensor):
    """Segmentation or detection masks: a tensor of shape ``(..., H, W)``.

    Args:
        data: a tensor, anything ``torch.as_tensor`` takes, or a PIL image.
        dtype, device, requires_grad: as for ``torch.tensor``.
    """

    def __new__(cls, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool | None = None) -> Mask:
        if _is_pil_image(data):
            data = pil_to_tensor(data)
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        return tensor.as_subclass(cls)  # type: ignore[return-value]
