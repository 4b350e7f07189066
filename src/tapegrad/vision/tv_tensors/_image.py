"""``Image``: a tensor of shape (..., C, H, W) that the v2 transforms treat as an image."""

from __future__ import annotations

from typing import Any

from ..transforms.functional import _is_pil_image, pil_to_tensor
from ._tv_tensor import TVTensor


class Image(TVTensor):
    """An image: a tensor of shape ``(..., C, H, W)`` (a 2-D tensor gets a channel dim).

    Args:
        data: a tensor, anything ``torch.as_tensor`` takes, or a PIL image.
        dtype, device, requires_grad: as for ``torch.tensor`` (``requires_grad`` defaults to
            that of a tensor ``data``, else False).
    """

    def __new__(cls, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool | None = None) -> Image:
        if _is_pil_image(data):
            data = pil_to_tensor(data)
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if tensor.ndim < 2:
            raise ValueError(f"Tensor must be 2D or higher, got {tensor.ndim}D tensor.")
        elif tensor.ndim == 2:
            tensor = tensor.unsqueeze(0)
        return tensor.as_subclass(cls)  # type: ignore[return-value]

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return self._make_repr()
