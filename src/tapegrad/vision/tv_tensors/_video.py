"""``Video``: a tensor of shape (..., T, C, H, W) that the v2 transforms treat as a video."""

from __future__ import annotations

from typing import Any

from ._tv_tensor import TVTensor


class Video(TVTensor):
    """A video: a tensor of shape ``(..., T, C, H, W)``.

    Args:
        data: a tensor or anything ``torch.as_tensor`` takes.
        dtype, device, requires_grad: as for ``torch.tensor``.
    """

    def __new__(cls, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool | None = None) -> Video:
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if data.ndim < 4:
            raise ValueError
        return tensor.as_subclass(cls)  # type: ignore[return-value]

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return self._make_repr()
