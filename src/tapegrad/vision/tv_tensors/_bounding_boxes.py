"""``BoundingBoxes`` and ``BoundingBoxFormat``: boxes with their coordinate format and the size of
the image they are drawn on (``canvas_size``), so that geometric transforms move them along."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, TypeAlias

from ..._tensor import Tensor
from ...utils._pytree import tree_flatten
from ._tv_tensor import TVTensor, _same_sequence


class BoundingBoxFormat(Enum):
    """The coordinate format of boxes.

    * ``XYXY``: the top-left and bottom-right corners.
    * ``XYWH``: the top-left corner, the width and the height.
    * ``CXCYWH``: the center, the width and the height.
    * ``XYWHR``: XYWH and a rotation in degrees, counter-clockwise about the top-left corner.
    * ``CXCYWHR``: CXCYWH and a rotation in degrees, counter-clockwise about the center.
    * ``XYXYXYXY``: the four corners of a rotated box, clockwise from the top-left one.
    """

    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"
    XYWHR = "XYWHR"
    CXCYWHR = "CXCYWHR"
    XYXYXYXY = "XYXYXYXY"


def is_rotated_bounding_format(format: BoundingBoxFormat | str) -> bool:
    """Whether ``format`` describes rotated boxes (XYWHR, CXCYWHR or XYXYXYXY)."""
    if isinstance(format, BoundingBoxFormat):
        return format in (BoundingBoxFormat.XYWHR, BoundingBoxFormat.CXCYWHR,
                          BoundingBoxFormat.XYXYXYXY)
    elif isinstance(format, str):
        return format in ("XYWHR", "CXCYWHR", "XYXYXYXY")
    else:
        raise ValueError(f"format should be str or BoundingBoxFormat, got {type(format)}")


# None (no clamping), "soft" or "hard"
CLAMPING_MODE_TYPE: TypeAlias = str | None


class BoundingBoxes(TVTensor):
    """Boxes: a tensor of shape ``(N, K)`` (one box per row; a 1-D tensor is one box).

    Args:
        data: a tensor or anything ``torch.as_tensor`` takes.
        format: a ``BoundingBoxFormat`` or its name (any case).
        canvas_size: the (height, width) of the image the boxes belong to.
        clamping_mode: how transforms clamp boxes to the canvas: ``"soft"`` (default),
            ``"hard"`` or None.
        dtype, device, requires_grad: as for ``torch.tensor``.
    """

    format: BoundingBoxFormat
    canvas_size: tuple[int, int]
    clamping_mode: CLAMPING_MODE_TYPE

    @classmethod
    def _wrap(cls, tensor: Tensor, *, format: BoundingBoxFormat | str,  # type: ignore[override]
              canvas_size: tuple[int, int], clamping_mode: CLAMPING_MODE_TYPE = "soft",
              check_dims: bool = True) -> BoundingBoxes:
        if check_dims:
            if tensor.ndim == 1:
                tensor = tensor.unsqueeze(0)
            elif tensor.ndim != 2:
                raise ValueError(f"Expected a 1D or 2D tensor, got {tensor.ndim}D")
        if clamping_mode is not None and clamping_mode not in ("hard", "soft"):
            raise ValueError(f"clamping_mode must be None, hard or soft, got {clamping_mode}.")
        if isinstance(format, str):
            format = BoundingBoxFormat[format.upper()]
        bounding_boxes: Any = tensor.as_subclass(cls)
        bounding_boxes.format = format
        bounding_boxes.canvas_size = canvas_size
        bounding_boxes.clamping_mode = clamping_mode
        return bounding_boxes  # type: ignore[no-any-return]

    @classmethod
    def wrap(cls, tensor: Tensor, like: BoundingBoxes, **kwargs: Any  # type: ignore[override]
             ) -> BoundingBoxes:
        """``tensor`` as boxes with the format, canvas size and clamping mode of ``like`` (or
        those given in ``kwargs``)."""
        return cls._wrap(tensor, format=kwargs.get("format", like.format),
                         canvas_size=kwargs.get("canvas_size", like.canvas_size),
                         clamping_mode=kwargs.get("clamping_mode", like.clamping_mode))

    def __new__(cls, data: Any, *, format: BoundingBoxFormat | str,
                canvas_size: tuple[int, int], clamping_mode: CLAMPING_MODE_TYPE = "soft",
                dtype: Any = None, device: Any = None,
                requires_grad: bool | None = None) -> BoundingBoxes:
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        if not tensor.is_floating_point() and is_rotated_bounding_format(format):
            raise ValueError(
                f"Rotated bounding boxes should be floating point tensors, got {tensor.dtype}.")
        return cls._wrap(tensor, format=format, canvas_size=canvas_size,
                         clamping_mode=clamping_mode)

    @classmethod
    def _wrap_output(cls, output: Any, args: Sequence[Any] = (),
                     kwargs: Mapping[str, Any] | None = None) -> Any:
        # the metadata comes from the first boxes among the arguments
        flat_params, _ = tree_flatten(tuple(args) + (tuple(kwargs.values()) if kwargs else ()))
        first = next(x for x in flat_params if isinstance(x, BoundingBoxes))
        meta: dict[str, Any] = dict(format=first.format, canvas_size=first.canvas_size,
                                    clamping_mode=first.clamping_mode, check_dims=False)
        if isinstance(output, Tensor) and not isinstance(output, BoundingBoxes):
            output = BoundingBoxes._wrap(output, **meta)
        elif isinstance(output, (tuple, list)):
            output = _same_sequence(output, (BoundingBoxes._wrap(part, **meta) for part in output))
        return output

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return self._make_repr(format=self.format, canvas_size=self.canvas_size,
                               clamping_mode=self.clamping_mode)
