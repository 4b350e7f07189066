"""The v2 functionals that are neither geometry nor color: ``normalize``, ``gaussian_blur``,
``gaussian_noise``, ``to_dtype`` (with value scaling) and the box/keypoint sanitizers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.nn.functional import conv2d
from tapegrad.nn.functional import pad as torch_pad
from tapegrad.vision import tv_tensors

from ..._functional_tensor import _max_value, _normalize_arrays
from ...functional import _blur_kernel_size_and_default_sigma, pil_to_tensor, to_pil_image
from ._meta import _convert_bounding_box_format
from ._utils import _get_kernel, _register_kernel_internal, is_pure_tensor


def normalize(inpt: Tensor, mean: list[float], std: list[float], inplace: bool = False
              ) -> Tensor:
    """(x - mean) / std per channel of a float image or video."""
    kernel = _get_kernel(normalize, type(inpt))
    return kernel(inpt, mean=mean, std=std, inplace=inplace)  # type: ignore[no-any-return]


@_register_kernel_internal(normalize, Tensor)
@_register_kernel_internal(normalize, tv_tensors.Image)
def normalize_image(image: Tensor, mean: list[float], std: list[float], inplace: bool = False
                    ) -> Tensor:
    if not image.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {image.dtype}.")
    if image.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"{image.shape}.")
    if isinstance(std, (tuple, list)):
        divzero = not all(std)
    elif isinstance(std, (int, float)):
        divzero = std == 0
    else:
        divzero = False
    if divzero:
        raise ValueError("std evaluated to zero, leading to division by zero.")
    if not inplace:
        fast = _normalize_arrays(image, mean, std)
        if fast is not None:
            return fast
    dtype = image.dtype
    device = image.device
    mean_t = tapegrad.as_tensor(mean, dtype=dtype, device=device)
    std_t = tapegrad.as_tensor(std, dtype=dtype, device=device)
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    image = image.sub_(mean_t) if inplace else image.sub(mean_t)
    return image.div_(std_t)


@_register_kernel_internal(normalize, tv_tensors.Video)
def normalize_video(video: Tensor, mean: list[float], std: list[float], inplace: bool = False
                    ) -> Tensor:
    return normalize_image(video, mean, std, inplace=inplace)


def gaussian_blur(inpt: Tensor, kernel_size: list[int], sigma: list[float] | None = None
                  ) -> Tensor:
    """Blur with a Gaussian of odd ``kernel_size`` (see ``transforms.v2.GaussianBlur``)."""
    kernel = _get_kernel(gaussian_blur, type(inpt))
    return kernel(inpt, kernel_size=kernel_size, sigma=sigma)  # type: ignore[no-any-return]


def _get_gaussian_kernel1d(kernel_size: int, sigma: float, dtype: Any, device: Any) -> Tensor:
    # softmax(-(x / sigma)^2) over x = linspace(-lim, lim) with lim = (k - 1) / (2 sqrt 2): the
    # normalized Gaussian exp(-x'^2 / (2 sigma^2)) at x' = -(k-1)/2 .. (k-1)/2
    lim = (kernel_size - 1) / (2.0 * math.sqrt(2.0))
    x = tapegrad.linspace(-lim, lim, steps=kernel_size, dtype=dtype, device=device)
    return tapegrad.softmax(x.div(sigma).pow(2).neg(), dim=0)


def _get_gaussian_kernel2d(kernel_size: list[int], sigma: list[float], dtype: Any,
                           device: Any) -> Tensor:
    kernel1d_x = _get_gaussian_kernel1d(kernel_size[0], sigma[0], dtype, device)
    kernel1d_y = _get_gaussian_kernel1d(kernel_size[1], sigma[1], dtype, device)
    return kernel1d_y.unsqueeze(-1) * kernel1d_x


@_register_kernel_internal(gaussian_blur, Tensor)
@_register_kernel_internal(gaussian_blur, tv_tensors.Image)
def gaussian_blur_image(image: Tensor, kernel_size: list[int],
                        sigma: list[float] | None = None) -> Tensor:
    kernel_size, sigma = _blur_kernel_size_and_default_sigma(kernel_size, sigma)
    if isinstance(sigma, (list, tuple)):
        length = len(sigma)
        if length == 1:
            sigma = [sigma[0], sigma[0]]
        elif length != 2:
            raise ValueError(f"If sigma is a sequence, its length should be 2. Got {length}")
    elif isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    else:
        raise TypeError(
            f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if image.numel() == 0:
        return image
    dtype = image.dtype
    shape = image.shape
    ndim = image.ndim
    if ndim == 3:
        image = image.unsqueeze(dim=0)
    elif ndim > 4:
        image = image.reshape((-1,) + shape[-3:])
    fp = tapegrad.is_floating_point(image)
    kernel = _get_gaussian_kernel2d(kernel_size, sigma, dtype=dtype if fp else tapegrad.float32,
                                    device=image.device)
    kernel = kernel.expand(shape[-3], 1, kernel.shape[0], kernel.shape[1])
    output = image if fp else image.to(dtype=tapegrad.float32)
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2,
               kernel_size[1] // 2]
    output = torch_pad(output, padding, mode="reflect")
    output = conv2d(output, kernel, groups=shape[-3])
    if ndim == 3:
        output = output.squeeze(dim=0)
    elif ndim > 4:
        output = output.reshape(shape)
    if not fp:
        output = output.round_().to(dtype=dtype)
    return output


@_register_kernel_internal(gaussian_blur, PIL.Image.Image)
def _gaussian_blur_image_pil(image: Any, kernel_size: list[int],
                             sigma: list[float] | None = None) -> Any:
    t_img = pil_to_tensor(image)
    output = gaussian_blur_image(t_img, kernel_size=kernel_size, sigma=sigma)
    return to_pil_image(output, mode=image.mode)


@_register_kernel_internal(gaussian_blur, tv_tensors.Video)
def gaussian_blur_video(video: Tensor, kernel_size: list[int],
                        sigma: list[float] | None = None) -> Tensor:
    return gaussian_blur_image(video, kernel_size, sigma)


def gaussian_noise(inpt: Tensor, mean: float = 0.0, sigma: float = 0.1, clip: bool = True
                   ) -> Tensor:
    """Add Gaussian noise N(mean, sigma) (in [0, 1] units; uint8 images are scaled)."""
    kernel = _get_kernel(gaussian_noise, type(inpt))
    return kernel(inpt, mean=mean, sigma=sigma, clip=clip)  # type: ignore[no-any-return]


@_register_kernel_internal(gaussian_noise, Tensor)
@_register_kernel_internal(gaussian_noise, tv_tensors.Image)
def gaussian_noise_image(image: Tensor, mean: float = 0.0, sigma: float = 0.1,
                         clip: bool = True) -> Tensor:
    if sigma < 0:
        raise ValueError(f"sigma shouldn't be negative. Got {sigma}")
    if image.is_floating_point():
        noise = mean + tapegrad.randn_like(image) * sigma
        out = image + noise
        if clip:
            out = tapegrad.clamp(out, 0, 1)
        return out
    elif image.dtype == tapegrad.uint8:
        # the noise in uint8 units, truncated to int16, added and clamped
        noise = ((mean * 255) + tapegrad.randn_like(image, dtype=tapegrad.float32)
                 * (sigma * 255)).to(tapegrad.int16)
        out = image + noise
        if clip:
            out = tapegrad.clamp(out, 0, 255)
        return out.to(tapegrad.uint8)
    raise ValueError(
        f"Input tensor is expected to be in uint8 or float dtype, got dtype={image.dtype}")


@_register_kernel_internal(gaussian_noise, tv_tensors.Video)
def gaussian_noise_video(video: Tensor, mean: float = 0.0, sigma: float = 0.1,
                         clip: bool = True) -> Tensor:
    return gaussian_noise_image(video, mean=mean, sigma=sigma, clip=clip)


@_register_kernel_internal(gaussian_noise, PIL.Image.Image)
def _gaussian_noise_pil(video: Any, mean: float = 0.0, sigma: float = 0.1,
                        clip: bool = True) -> Any:
    raise ValueError("Gaussian Noise is not implemented for PIL images.")


def to_dtype(inpt: Tensor, dtype: Any = tapegrad.float, scale: bool = False) -> Tensor:
    """Convert to ``dtype``; with ``scale``, images and videos are rescaled (float images span
    [0, 1], integer ones [0, max])."""
    kernel = _get_kernel(to_dtype, type(inpt))
    return kernel(inpt, dtype=dtype, scale=scale)  # type: ignore[no-any-return]


def _num_value_bits(dtype: Any) -> int:
    bits = {"uint8": 8, "int8": 7, "int16": 15, "uint16": 16, "int32": 31, "int64": 63}
    if dtype.name not in bits:
        raise TypeError(
            f"Number of value bits is only defined for integer dtypes, but got {dtype}.")
    return bits[dtype.name]


@_register_kernel_internal(to_dtype, Tensor)
@_register_kernel_internal(to_dtype, tv_tensors.Image)
def to_dtype_image(image: Tensor, dtype: Any = tapegrad.float, scale: bool = False) -> Tensor:
    if image.dtype == dtype:
        return image
    elif not scale:
        return image.to(dtype)
    float_input = image.is_floating_point()
    float_output = dtype.is_floating_point
    if float_input:
        if float_output:
            return image.to(dtype)
        if (image.dtype == tapegrad.float32 and dtype in (tapegrad.int32, tapegrad.int64)) or (
                image.dtype == tapegrad.float64 and dtype == tapegrad.int64):
            raise RuntimeError(
                f"The conversion from {image.dtype} to {dtype} cannot be performed safely.")
        # just below max + 1, so that 1.0 maps to max and the value bins are equal
        eps = 1e-3
        max_value = float(_max_value(dtype))
        return image.mul(max_value + 1.0 - eps).to(dtype)
    if float_output:
        if (type(image) is Tensor and not image.requires_grad and dtype in (
                tapegrad.float32, tapegrad.float64) and image._data.dtype.kind in "iu"):
            # on the arrays (every image of a data loader): the exact conversion, then one
            # product by the reciprocal rounded to the float dtype, as torch's mul_ takes it
            ft = np.dtype(dtype.name)
            return Tensor._make(np.multiply(image._data, ft.type(1.0 / _max_value(image.dtype)),
                                            dtype=ft))
        return image.to(dtype).mul_(1.0 / _max_value(image.dtype))
    # integer to integer: shift the value bits
    num_value_bits_input = _num_value_bits(image.dtype)
    num_value_bits_output = _num_value_bits(dtype)
    shift_by = abs(num_value_bits_input - num_value_bits_output)
    if num_value_bits_input > num_value_bits_output:
        if image.dtype == tapegrad.uint16:
            return (image / 2 ** (shift_by)).to(dtype)
        return image.bitwise_right_shift(shift_by).to(dtype)
    if dtype == tapegrad.uint16:
        return image.to(dtype) * 2 ** (shift_by)
    return image.to(dtype).bitwise_left_shift_(shift_by)


def convert_image_dtype(image: Tensor, dtype: Any = tapegrad.float32) -> Tensor:
    """``to_dtype(image, dtype, scale=True)`` (the v1 name)."""
    return to_dtype_image(image, dtype=dtype, scale=True)


@_register_kernel_internal(to_dtype, tv_tensors.Video)
def to_dtype_video(video: Tensor, dtype: Any = tapegrad.float, scale: bool = False) -> Tensor:
    return to_dtype_image(video, dtype, scale=scale)


@_register_kernel_internal(to_dtype, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
@_register_kernel_internal(to_dtype, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
@_register_kernel_internal(to_dtype, tv_tensors.Mask, tv_tensor_wrapper=False)
def _to_dtype_tensor_dispatch(inpt: Tensor, dtype: Any, scale: bool = False) -> Tensor:
    # boxes, masks and keypoints are never rescaled; .to keeps the TVTensor and its metadata
    return inpt.to(dtype)


def sanitize_bounding_boxes(bounding_boxes: Tensor, format: Any = None,
                            canvas_size: tuple[int, int] | None = None, min_size: float = 1.0,
                            min_area: float = 1.0) -> tuple[Tensor, Tensor]:
    """The boxes that are at least ``min_size`` wide and high, of at least ``min_area``, and
    inside the canvas; and the boolean mask of which ones those are."""
    if is_pure_tensor(bounding_boxes):
        if format is None or canvas_size is None:
            raise ValueError(
                "format and canvas_size cannot be None if bounding_boxes is a pure tensor. "
                f"Got format={format} and canvas_size={canvas_size}."
                "Set those to appropriate values or pass bounding_boxes as a "
                "tv_tensors.BoundingBoxes object.")
        if isinstance(format, str):
            format = tv_tensors.BoundingBoxFormat[format.upper()]
        valid = _get_sanitize_bounding_boxes_mask(bounding_boxes, format=format,
                                                  canvas_size=canvas_size, min_size=min_size,
                                                  min_area=min_area)
        bounding_boxes = bounding_boxes[valid]
    else:
        if not isinstance(bounding_boxes, tv_tensors.BoundingBoxes):
            raise ValueError(
                "bounding_boxes must be a tv_tensors.BoundingBoxes instance or a pure tensor.")
        if format is not None or canvas_size is not None:
            raise ValueError(
                "format and canvas_size must be None when bounding_boxes is a "
                f"tv_tensors.BoundingBoxes instance. Got format={format} and "
                f"canvas_size={canvas_size}. Leave those to None or pass bounding_boxes as a "
                "pure tensor.")
        valid = _get_sanitize_bounding_boxes_mask(
            bounding_boxes, format=bounding_boxes.format,
            canvas_size=bounding_boxes.canvas_size, min_size=min_size, min_area=min_area)
        bounding_boxes = tv_tensors.wrap(bounding_boxes[valid], like=bounding_boxes)
    return bounding_boxes, valid


def _get_sanitize_bounding_boxes_mask(bounding_boxes: Tensor, format: Any,
                                      canvas_size: tuple[int, int], min_size: float = 1.0,
                                      min_area: float = 1.0) -> Tensor:
    is_rotated = tv_tensors.is_rotated_bounding_format(format)
    intermediate_format = (tv_tensors.BoundingBoxFormat.XYXYXYXY if is_rotated
                           else tv_tensors.BoundingBoxFormat.XYXY)
    bounding_boxes = _convert_bounding_box_format(bounding_boxes, new_format=intermediate_format,
                                                  old_format=format)
    image_h, image_w = canvas_size
    if is_rotated:
        dx12 = bounding_boxes[..., 0] - bounding_boxes[..., 2]
        dy12 = bounding_boxes[..., 1] - bounding_boxes[..., 3]
        dx23 = bounding_boxes[..., 3] - bounding_boxes[..., 5]
        dy23 = bounding_boxes[..., 4] - bounding_boxes[..., 6]
        ws = tapegrad.sqrt(dx12.pow(2) + dy12.pow(2))
        hs = tapegrad.sqrt(dx23.pow(2) + dy23.pow(2))
    else:
        ws = bounding_boxes[:, 2] - bounding_boxes[:, 0]
        hs = bounding_boxes[:, 3] - bounding_boxes[:, 1]
    valid = ((ws >= min_size) & (hs >= min_size) & (bounding_boxes >= 0).all(dim=-1)
             & (ws * hs >= min_area))
    valid &= (bounding_boxes[:, 0] <= image_w) & (bounding_boxes[:, 2] <= image_w)
    valid &= (bounding_boxes[:, 1] <= image_h) & (bounding_boxes[:, 3] <= image_h)
    if is_rotated:
        valid &= (bounding_boxes[..., 4] <= image_w) & (bounding_boxes[..., 5] <= image_h)
        valid &= (bounding_boxes[..., 6] <= image_w) & (bounding_boxes[..., 7] <= image_h)
    return valid


def sanitize_keypoints(key_points: Tensor, canvas_size: tuple[int, int] | None = None
                       ) -> tuple[Tensor, Tensor]:
    """The keypoints (or groups of them) inside the canvas, and the mask of which they are."""
    if is_pure_tensor(key_points):
        if canvas_size is None:
            raise ValueError(
                "canvas_size cannot be None if key_points is a pure tensor. Set it to an "
                "appropriate value or pass key_points as a tv_tensors.KeyPoints object.")
        valid = _get_sanitize_keypoints_mask(key_points, canvas_size=canvas_size)
        key_points = key_points[valid]
    else:
        if not isinstance(key_points, tv_tensors.KeyPoints):
            raise ValueError(
                "key_points must be a tv_tensors.KeyPoints instance or a pure tensor.")
        if canvas_size is not None:
            raise ValueError(
                "canvas_size must be None when key_points is a tv_tensors.KeyPoints instance. "
                f"Got canvas_size={canvas_size}. Leave it to None or pass key_points as a pure "
                "tensor.")
        valid = _get_sanitize_keypoints_mask(key_points, canvas_size=key_points.canvas_size)
        key_points = tv_tensors.wrap(key_points[valid], like=key_points)
    return key_points, valid


def _get_sanitize_keypoints_mask(key_points: Tensor, canvas_size: tuple[int, int]) -> Tensor:
    h, w = canvas_size
    x, y = key_points[..., 0], key_points[..., 1]
    valid = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    return valid.flatten(start_dim=1).all(dim=1) if valid.ndim > 1 else valid
