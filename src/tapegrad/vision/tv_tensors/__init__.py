"""``torchvision.tv_tensors``: tensor subclasses that label what a tensor holds, so that the v2
transforms (``transforms.v2``) know how to transform it.

    Image          (..., C, H, W) images
    Video          (..., T, C, H, W) videos
    Mask           (..., H, W) segmentation or detection masks
    BoundingBoxes  boxes, with their BoundingBoxFormat and canvas_size
    KeyPoints      (x, y) points, with their canvas_size

A geometric transform (a flip, a crop, a rotation) moves the boxes, points and masks of a sample
with its image; a color transform changes the image and leaves them alone. The operations on a
TVTensor return plain tensors (see ``set_return_type``); ``wrap`` turns a result back into the
class (and metadata) of another TVTensor.
"""

from __future__ import annotations

from typing import Any

from ._bounding_boxes import BoundingBoxes, BoundingBoxFormat, is_rotated_bounding_format
from ._image import Image
from ._keypoints import KeyPoints
from ._mask import Mask
from ._torch_function_helpers import set_return_type
from ._tv_tensor import TVTensor
from ._video import Video

__all__ = ["BoundingBoxFormat", "BoundingBoxes", "Image", "KeyPoints", "Mask", "TVTensor",
           "Video", "is_rotated_bounding_format", "set_return_type", "wrap"]


def wrap(wrappee: Any, *, like: TVTensor, **kwargs: Any) -> TVTensor:
    """``wrappee`` (a tensor) as the TVTensor class of ``like``, with its metadata (format,
    canvas_size, ...), any of which ``kwargs`` may override."""
    wrap_method = getattr(type(like), "wrap", None)
    if wrap_method is not None:
        return wrap_method(wrappee, like, **kwargs)  # type: ignore[no-any-return]
    return wrappee.as_subclass(type(like))  # type: ignore[no-any-return]
