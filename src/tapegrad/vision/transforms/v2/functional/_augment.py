"""v2 ``erase`` (a box set to a value) and ``jpeg`` (a JPEG round trip at a quality)."""

from __future__ import annotations

import io
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from ...functional import pil_to_tensor, to_pil_image
from ._utils import _get_kernel, _register_kernel_internal


def erase(inpt: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
          ) -> Tensor:
    """Set the box of ``h`` x ``w`` at (``i``, ``j``) to ``v``."""
    kernel = _get_kernel(erase, type(inpt))
    return kernel(inpt, i=i, j=j, h=h, w=w, v=v, inplace=inplace)  # type: ignore[no-any-return]


@_register_kernel_internal(erase, Tensor)
@_register_kernel_internal(erase, tv_tensors.Image)
def erase_image(image: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
                ) -> Tensor:
    if not inplace:
        image = image.clone()
    image[..., i:i + h, j:j + w] = v
    return image


@_register_kernel_internal(erase, PIL.Image.Image)
def _erase_image_pil(image: Any, i: int, j: int, h: int, w: int, v: Tensor,
                     inplace: bool = False) -> Any:
    t_img = pil_to_tensor(image)
    output = erase_image(t_img, i=i, j=j, h=h, w=w, v=v, inplace=inplace)
    return to_pil_image(output, mode=image.mode)


@_register_kernel_internal(erase, tv_tensors.Video)
def erase_video(video: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
                ) -> Tensor:
    return erase_image(video, i=i, j=j, h=h, w=w, v=v, inplace=inplace)


def jpeg(image: Tensor, quality: int) -> Tensor:
    """Encode as JPEG at ``quality`` (1 to 100) and decode again: the compression artifacts."""
    kernel = _get_kernel(jpeg, type(image))
    return kernel(image, quality=quality)  # type: ignore[no-any-return]


_ENCODE_JPEG_CPP = "encode_jpeg, /__w/vision/vision/pytorch/vision/torchvision/csrc/io/image/cpu/" \
    "encode_jpeg.cpp"


def _check_encodable(image: Tensor, quality: int) -> Tensor:
    """torchvision's checks of ``io.encode_jpeg`` with its C++ kernel's messages as they reach
    the v2 transforms (the source file and line included)."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if image.dtype != tapegrad.uint8:
        raise RuntimeError(f"{_ENCODE_JPEG_CPP}:70, Input tensor dtype should be uint8")
    if image.dim() != 3:
        raise RuntimeError(f"{_ENCODE_JPEG_CPP}:74, Input data should be a 3-dimensional tensor")
    if image.shape[0] not in (1, 3):
        raise RuntimeError(f"{_ENCODE_JPEG_CPP}:83, The number of channels should be 1 or 3, "
                           f"got: {image.shape[0]}")
    return image


def _jpeg_round_trip(pil: Any, quality: int) -> Any:
    raw = io.BytesIO()
    pil.save(raw, format="JPEG", quality=quality)
    raw.seek(0)
    return PIL.Image.open(raw).copy()


@_register_kernel_internal(jpeg, Tensor)
@_register_kernel_internal(jpeg, tv_tensors.Image)
def jpeg_image(image: Tensor, quality: int) -> Tensor:
    # each uint8 image of the batch through the io's JPEG codec, as torchvision's
    original_shape = image.shape
    image = image.view((-1,) + image.shape[-3:])
    if image.shape[0] == 0:
        return image.reshape(original_shape).clone()
    # vision.io: loaded on first use
    from ....io import decode_jpeg, encode_jpeg

    images = [decode_jpeg(encode_jpeg(_check_encodable(image[i], quality), quality=quality))
              for i in range(image.shape[0])]
    return tapegrad.stack(images, dim=0).view(original_shape)


@_register_kernel_internal(jpeg, tv_tensors.Video)
def jpeg_video(video: Tensor, quality: int) -> Tensor:
    return jpeg_image(video, quality=quality)


@_register_kernel_internal(jpeg, PIL.Image.Image)
def _jpeg_image_pil(image: Any, quality: int) -> Any:
    return _jpeg_round_trip(image, quality)
