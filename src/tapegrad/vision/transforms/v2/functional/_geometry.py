"""The v2 geometry functionals: flips, resize, affine, rotate, pad, crop, perspective, elastic,
center/resized/five/ten crop; each with kernels for images (tensor and PIL), videos, masks,
bounding boxes and keypoints, so that one call moves a whole sample consistently.

Images resample through ``interpolate`` and ``grid_sample`` as in v1, with v2's arithmetic
(``_affine_grid``, ``_apply_grid_transform``: a fill blended in place, uint8 rounded back) and
v2's choices (uint8 bilinear, bicubic and lanczos resize natively in fixed point, rotations by
multiples of 90 degrees as ``rot90``). Boxes become corner points (XYXY, or XYXYXYXY for rotated
boxes), the points are mapped, and the new box is their bounding box (or the parallelogram
fitted back to a rotated box), clamped to the new canvas.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.nn.functional import grid_sample, interpolate
from tapegrad.nn.functional import pad as torch_pad
from tapegrad.vision import tv_tensors
from tapegrad.vision.tv_tensors._bounding_boxes import CLAMPING_MODE_TYPE

from ... import _functional_pil as _FP
from ..._functional_tensor import (
    _constant_pad_arrays,
    _pad_symmetric,
    _perspective_grid,
    _small_matmul,
)
from ...functional import (
    InterpolationMode,
    _check_affine_args,
    _five_crops,
    _get_perspective_coeffs,
    _interpolation_modes_from_int,
    _normalized_affine_args,
    pil_modes_mapping,
    pil_to_tensor,
    to_pil_image,
)
from ...functional import _compute_resized_output_size as __compute_resized_output_size
from ._meta import _get_size_image_pil, clamp_bounding_boxes, convert_bounding_box_format
from ._utils import (
    _FillTypeJIT,
    _get_kernel,
    _register_five_ten_crop_kernel_internal,
    _register_kernel_internal,
)

_INTERPOLATION_STRING_TO_MODE = {m.value: m for m in InterpolationMode}
_BBF = tv_tensors.BoundingBoxFormat


def _check_interpolation(interpolation: Any) -> InterpolationMode:
    """An InterpolationMode from the mode, its name or a Pillow constant."""
    if isinstance(interpolation, str):
        if interpolation not in _INTERPOLATION_STRING_TO_MODE:
            raise ValueError(
                f"Invalid interpolation mode: '{interpolation}'. Supported string values are: "
                f"{list(_INTERPOLATION_STRING_TO_MODE.keys())}.")
        return _INTERPOLATION_STRING_TO_MODE[interpolation]
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise ValueError("Argument interpolation should be an `InterpolationMode` or a "
                         f"corresponding Pillow integer constant, but got {interpolation}.")
    return interpolation


def _squeezed(kernel: Any, mask: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Run an image kernel on a mask, which may lack the channel dim."""
    if mask.ndim < 3:
        return kernel(mask.unsqueeze(0), *args, **kwargs).squeeze(0)  # type: ignore[no-any-return]
    return kernel(mask, *args, **kwargs)  # type: ignore[no-any-return]


# -- flips --------------------------------------------------------------------------------------

def horizontal_flip(inpt: Tensor) -> Tensor:
    """Mirror left to right (boxes and keypoints included)."""
    kernel = _get_kernel(horizontal_flip, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(horizontal_flip, Tensor)
@_register_kernel_internal(horizontal_flip, tv_tensors.Image)
def horizontal_flip_image(image: Tensor) -> Tensor:
    return image.flip(-1)


@_register_kernel_internal(horizontal_flip, PIL.Image.Image)
def _horizontal_flip_image_pil(image: Any) -> Any:
    return _FP.hflip(image)


@_register_kernel_internal(horizontal_flip, tv_tensors.Mask)
def horizontal_flip_mask(mask: Tensor) -> Tensor:
    return horizontal_flip_image(mask)


def horizontal_flip_keypoints(keypoints: Tensor, canvas_size: tuple[int, int]) -> Tensor:
    shape = keypoints.shape
    keypoints = keypoints.clone().reshape(-1, 2)
    # pixel x moves to width - 1 - x
    keypoints[..., 0] = keypoints[..., 0].sub_(canvas_size[1] - 1).neg_()
    return keypoints.reshape(shape)


@_register_kernel_internal(horizontal_flip, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _horizontal_flip_keypoints_dispatch(keypoints: Any) -> Any:
    out = horizontal_flip_keypoints(keypoints.as_subclass(Tensor),
                                    canvas_size=keypoints.canvas_size)
    return tv_tensors.wrap(out, like=keypoints)


def _reshape_boxes(bounding_boxes: Tensor, format: Any) -> Tensor:
    """A clone of the boxes as (N, K) rows: K 4, 5 (XYWHR, CXCYWHR) or 8 (XYXYXYXY)."""
    if tv_tensors.is_rotated_bounding_format(format):
        return bounding_boxes.clone().reshape(-1, 8 if format == _BBF.XYXYXYXY else 5)
    return bounding_boxes.clone().reshape(-1, 4)


def horizontal_flip_bounding_boxes(bounding_boxes: Tensor, format: Any,
                                   canvas_size: tuple[int, int]) -> Tensor:
    shape = bounding_boxes.shape
    bounding_boxes = _reshape_boxes(bounding_boxes, format)
    # box edges x move to width - x
    if format == _BBF.XYXY:
        bounding_boxes[:, [2, 0]] = bounding_boxes[:, [0, 2]].sub_(canvas_size[1]).neg_()
    elif format == _BBF.XYWH:
        bounding_boxes[:, 0].add_(bounding_boxes[:, 2]).sub_(canvas_size[1]).neg_()
    elif format == _BBF.CXCYWH:
        bounding_boxes[:, 0].sub_(canvas_size[1]).neg_()
    elif format == _BBF.XYXYXYXY:
        bounding_boxes[:, 0::2].sub_(canvas_size[1]).neg_()
        bounding_boxes = bounding_boxes[:, [2, 3, 0, 1, 6, 7, 4, 5]]
    elif format == _BBF.XYWHR:
        angle_rad = bounding_boxes[:, 4].mul(tapegrad.pi).div(180)
        bounding_boxes[:, 0].add_(bounding_boxes[:, 2].mul(angle_rad.cos())).sub_(
            canvas_size[1]).neg_()
        bounding_boxes[:, 1].sub_(bounding_boxes[:, 2].mul(angle_rad.sin()))
        bounding_boxes[:, 4].neg_()
    else:  # CXCYWHR
        bounding_boxes[:, 0].sub_(canvas_size[1]).neg_()
        bounding_boxes[:, 4].neg_()
    return bounding_boxes.reshape(shape)


@_register_kernel_internal(horizontal_flip, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _horizontal_flip_bounding_boxes_dispatch(inpt: Any) -> Any:
    output = horizontal_flip_bounding_boxes(inpt.as_subclass(Tensor), format=inpt.format,
                                            canvas_size=inpt.canvas_size)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(horizontal_flip, tv_tensors.Video)
def horizontal_flip_video(video: Tensor) -> Tensor:
    return horizontal_flip_image(video)


def vertical_flip(inpt: Tensor) -> Tensor:
    """Mirror top to bottom (boxes and keypoints included)."""
    kernel = _get_kernel(vertical_flip, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(vertical_flip, Tensor)
@_register_kernel_internal(vertical_flip, tv_tensors.Image)
def vertical_flip_image(image: Tensor) -> Tensor:
    return image.flip(-2)


@_register_kernel_internal(vertical_flip, PIL.Image.Image)
def _vertical_flip_image_pil(image: Any) -> Any:
    return _FP.vflip(image)


@_register_kernel_internal(vertical_flip, tv_tensors.Mask)
def vertical_flip_mask(mask: Tensor) -> Tensor:
    return vertical_flip_image(mask)


def vertical_flip_keypoints(keypoints: Tensor, canvas_size: tuple[int, int]) -> Tensor:
    shape = keypoints.shape
    keypoints = keypoints.clone().reshape(-1, 2)
    keypoints[..., 1] = keypoints[..., 1].sub_(canvas_size[0] - 1).neg_()
    return keypoints.reshape(shape)


def vertical_flip_bounding_boxes(bounding_boxes: Tensor, format: Any,
                                 canvas_size: tuple[int, int]) -> Tensor:
    shape = bounding_boxes.shape
    bounding_boxes = _reshape_boxes(bounding_boxes, format)
    if format == _BBF.XYXY:
        bounding_boxes[:, [1, 3]] = bounding_boxes[:, [3, 1]].sub_(canvas_size[0]).neg_()
    elif format == _BBF.XYWH:
        bounding_boxes[:, 1].add_(bounding_boxes[:, 3]).sub_(canvas_size[0]).neg_()
    elif format == _BBF.CXCYWH:
        bounding_boxes[:, 1].sub_(canvas_size[0]).neg_()
    elif format == _BBF.XYXYXYXY:
        bounding_boxes[:, 1::2].sub_(canvas_size[0]).neg_()
        bounding_boxes = bounding_boxes[:, [2, 3, 0, 1, 6, 7, 4, 5]]
    elif format == _BBF.XYWHR:
        angle_rad = bounding_boxes[:, 4].mul(tapegrad.pi).div(180)
        bounding_boxes[:, 1].sub_(bounding_boxes[:, 2].mul(angle_rad.sin())).sub_(
            canvas_size[0]).neg_()
        bounding_boxes[:, 0].add_(bounding_boxes[:, 2].mul(angle_rad.cos()))
        bounding_boxes[:, 4].neg_().add_(180)
    else:  # CXCYWHR
        bounding_boxes[:, 1].sub_(canvas_size[0]).neg_()
        bounding_boxes[:, 4].neg_().add_(180)
    return bounding_boxes.reshape(shape)


@_register_kernel_internal(vertical_flip, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _vertical_flip_keypoints_dispatch(inpt: Any) -> Any:
    output = vertical_flip_keypoints(inpt.as_subclass(Tensor), canvas_size=inpt.canvas_size)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(vertical_flip, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _vertical_flip_bounding_boxes_dispatch(inpt: Any) -> Any:
    output = vertical_flip_bounding_boxes(inpt.as_subclass(Tensor), format=inpt.format,
                                          canvas_size=inpt.canvas_size)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(vertical_flip, tv_tensors.Video)
def vertical_flip_video(video: Tensor) -> Tensor:
    return vertical_flip_image(video)


hflip = horizontal_flip
vflip = vertical_flip


# -- resize -------------------------------------------------------------------------------------

def _compute_resized_output_size(canvas_size: tuple[int, int], size: list[int] | None,
                                 max_size: int | None = None) -> list[int]:
    if isinstance(size, int):
        size = [size]
    elif max_size is not None and size is not None and len(size) != 1:
        raise ValueError(
            "max_size should only be passed if size is None or specifies the length of the "
            "smaller edge, i.e. size should be an int or a sequence of length 1 in torchscript "
            "mode.")
    return __compute_resized_output_size(canvas_size, size=size, max_size=max_size,
                                         allow_size_none=True)


def resize(inpt: Tensor, size: list[int] | None, interpolation: Any = InterpolationMode.BILINEAR,
           max_size: int | None = None, antialias: bool | None = True) -> Tensor:
    """Resize to ``size`` (h, w), the shorter side to ``size`` ([int]), or the longer side to
    ``max_size`` (``size=None``); boxes, keypoints and masks scale along."""
    kernel = _get_kernel(resize, type(inpt))
    return kernel(inpt, size=size, interpolation=interpolation,  # type: ignore[no-any-return]
                  max_size=max_size, antialias=antialias)


def _do_native_uint8_resize_on_cpu(interpolation: InterpolationMode) -> bool:
    # torchvision resizes uint8 images natively for bilinear where torch's vectorized kernels
    # run (AVX2, AVX-512, ARM: every current CPU); tapegrad's fixed point gives those kernels'
    # integers on any CPU, so it always takes that path
    return interpolation in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC,
                             InterpolationMode.LANCZOS)


@_register_kernel_internal(resize, Tensor)
@_register_kernel_internal(resize, tv_tensors.Image)
def resize_image(image: Tensor, size: list[int] | None,
                 interpolation: Any = InterpolationMode.BILINEAR, max_size: int | None = None,
                 antialias: bool | None = True) -> Tensor:
    interpolation = _check_interpolation(interpolation)
    antialias = False if antialias is None else antialias
    align_corners: bool | None = None
    if interpolation in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC,
                         InterpolationMode.LANCZOS):
        align_corners = False
        if interpolation == InterpolationMode.LANCZOS and not antialias:
            raise ValueError("InterpolationMode.LANCZOS requires antialias=True")
    else:
        # antialias only applies to bilinear, bicubic and lanczos
        antialias = False
    shape = image.shape
    numel = image.numel()
    num_channels, old_height, old_width = shape[-3:]
    new_height, new_width = _compute_resized_output_size((old_height, old_width), size=size,
                                                         max_size=max_size)
    if (new_height, new_width) == (old_height, old_width):
        return image
    elif numel > 0:
        dtype = image.dtype
        acceptable_dtypes = [tapegrad.float32, tapegrad.float64]
        if interpolation in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
            acceptable_dtypes.append(tapegrad.uint8)
        elif _do_native_uint8_resize_on_cpu(interpolation):
            acceptable_dtypes.append(tapegrad.uint8)
        image = image.reshape(-1, num_channels, old_height, old_width)
        need_cast = dtype not in acceptable_dtypes
        if need_cast:
            image = image.to(dtype=tapegrad.float32)
        image = interpolate(image, size=[new_height, new_width], mode=interpolation.value,
                            align_corners=align_corners, antialias=antialias)
        if need_cast:
            if interpolation in (InterpolationMode.BICUBIC, InterpolationMode.LANCZOS) and (
                    dtype == tapegrad.uint8):
                # these filters overshoot: clamp before the cast
                image = image.clamp_(min=0, max=255)
            if dtype in (tapegrad.uint8, tapegrad.int8, tapegrad.int16, tapegrad.int32,
                         tapegrad.int64):
                image = image.round_()
            image = image.to(dtype=dtype)
    return image.reshape(shape[:-3] + (num_channels, new_height, new_width))


def _resize_image_pil(image: Any, size: Any, interpolation: Any = InterpolationMode.BILINEAR,
                      max_size: int | None = None) -> Any:
    old_height, old_width = image.height, image.width
    new_height, new_width = _compute_resized_output_size((old_height, old_width), size=size,
                                                         max_size=max_size)
    interpolation = _check_interpolation(interpolation)
    if (new_height, new_width) == (old_height, old_width):
        return image
    return image.resize((new_width, new_height), resample=pil_modes_mapping[interpolation])


@_register_kernel_internal(resize, PIL.Image.Image)
def __resize_image_pil_dispatch(image: Any, size: Any,
                                interpolation: Any = InterpolationMode.BILINEAR,
                                max_size: int | None = None,
                                antialias: bool | None = True) -> Any:
    if antialias is False:
        warnings.warn("Anti-alias option is always applied for PIL Image input. Argument "
                      "antialias is ignored.", stacklevel=2)
    return _resize_image_pil(image, size=size, interpolation=interpolation, max_size=max_size)


def resize_mask(mask: Tensor, size: list[int] | None,
                interpolation: Any = InterpolationMode.BILINEAR, max_size: int | None = None
                ) -> Tensor:
    interpolation = _check_interpolation(interpolation)
    # masks hold labels: only nearest modes keep them labels
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
        interpolation = InterpolationMode.NEAREST
    return _squeezed(resize_image, mask, size=size, interpolation=interpolation,
                     max_size=max_size)


@_register_kernel_internal(resize, tv_tensors.Mask, tv_tensor_wrapper=False)
def _resize_mask_dispatch(inpt: Any, size: list[int],
                          interpolation: Any = InterpolationMode.BILINEAR,
                          max_size: int | None = None, **kwargs: Any) -> Any:
    output = resize_mask(inpt.as_subclass(Tensor), size, interpolation=interpolation,
                         max_size=max_size)
    return tv_tensors.wrap(output, like=inpt)


def resize_keypoints(keypoints: Tensor, size: list[int] | None, canvas_size: tuple[int, int],
                     max_size: int | None = None) -> tuple[Tensor, tuple[int, int]]:
    old_height, old_width = canvas_size
    new_height, new_width = _compute_resized_output_size(canvas_size, size=size,
                                                         max_size=max_size)
    if (new_height, new_width) == (old_height, old_width):
        return keypoints, canvas_size
    ratios = tapegrad.tensor([new_width / old_width, new_height / old_height],
                             device=keypoints.device)
    keypoints = keypoints.mul(ratios).to(keypoints.dtype)
    return keypoints, (new_height, new_width)


@_register_kernel_internal(resize, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _resize_keypoints_dispatch(keypoints: Any, size: list[int] | None,
                               max_size: int | None = None, **kwargs: Any) -> Any:
    out, canvas_size = resize_keypoints(keypoints.as_subclass(Tensor), size,
                                        canvas_size=keypoints.canvas_size, max_size=max_size)
    return tv_tensors.wrap(out, like=keypoints, canvas_size=canvas_size)


def _parallelogram_to_bounding_boxes(parallelogram: Tensor) -> Tensor:
    """The rotated rectangle (as XYXYXYXY) that a mapped box's parallelogram becomes: same
    center, the longer side's direction, the area kept."""
    original_shape = parallelogram.shape
    dtype = parallelogram.dtype
    need_cast = dtype not in (tapegrad.float32, tapegrad.float64)
    if need_cast:
        parallelogram = parallelogram.to(tapegrad.float32)
    x1, y1, x2, y2, x3, y3, x4, y4 = parallelogram.unbind(-1)
    cx = (x1 + x3) / 2
    cy = (y1 + y3) / 2
    wp = tapegrad.sqrt((x2 - x1).pow(2) + (y2 - y1).pow(2))
    hp = tapegrad.sqrt((x4 - x1).pow(2) + (y4 - y1).pow(2))
    r12 = tapegrad.atan2(y1 - y2, x2 - x1)
    r14 = tapegrad.atan2(y1 - y4, x4 - x1)
    r_rad = r12 - r14
    sign = tapegrad.where(r_rad > tapegrad.pi / 2, -1, 1)
    cos, sin = r_rad.cos(), r_rad.sin()
    w = tapegrad.where(wp < hp, wp * sin, wp + hp * cos * sign)
    h = tapegrad.where(wp > hp, hp * sin, hp + wp * cos * sign)
    r_rad = tapegrad.where(hp > wp, r14 + tapegrad.pi / 2, r12)
    cos, sin = r_rad.cos(), r_rad.sin()
    x1 = cx - w / 2 * cos - h / 2 * sin
    y1 = cy - h / 2 * cos + w / 2 * sin
    x2 = cx + w / 2 * cos - h / 2 * sin
    y2 = cy - h / 2 * cos - w / 2 * sin
    x3 = cx + w / 2 * cos + h / 2 * sin
    y3 = cy + h / 2 * cos - w / 2 * sin
    x4 = cx - w / 2 * cos + h / 2 * sin
    y4 = cy + h / 2 * cos + w / 2 * sin
    out_boxes = tapegrad.stack((x1, y1, x2, y2, x3, y3, x4, y4), dim=-1).reshape(original_shape)
    if need_cast:
        out_boxes = out_boxes.to(dtype)
    return out_boxes


def resize_bounding_boxes(bounding_boxes: Tensor, canvas_size: tuple[int, int],
                          size: list[int] | None, max_size: int | None = None,
                          format: Any = _BBF.XYXY, clamping_mode: CLAMPING_MODE_TYPE = "soft"
                          ) -> tuple[Tensor, tuple[int, int]]:
    old_height, old_width = canvas_size
    new_height, new_width = _compute_resized_output_size(canvas_size, size=size,
                                                         max_size=max_size)
    if (new_height, new_width) == (old_height, old_width):
        return bounding_boxes, canvas_size
    w_ratio = new_width / old_width
    h_ratio = new_height / old_height
    if tv_tensors.is_rotated_bounding_format(format):
        original_shape = bounding_boxes.shape
        xyxyxyxy_boxes = convert_bounding_box_format(
            bounding_boxes, old_format=format, new_format=_BBF.XYXYXYXY,
            inplace=False).reshape(-1, 8)
        ratios = tapegrad.tensor([w_ratio, h_ratio] * 4, device=bounding_boxes.device)
        transformed_points = xyxyxyxy_boxes.mul(ratios)
        out_bboxes = _parallelogram_to_bounding_boxes(transformed_points)
        out_bboxes = clamp_bounding_boxes(out_bboxes, format=_BBF.XYXYXYXY,
                                          canvas_size=(new_height, new_width),
                                          clamping_mode=clamping_mode)
        return (convert_bounding_box_format(out_bboxes, old_format=_BBF.XYXYXYXY,
                                            new_format=format, inplace=False)
                .to(bounding_boxes.dtype).reshape(original_shape), (new_height, new_width))
    ratios = tapegrad.tensor([w_ratio, h_ratio, w_ratio, h_ratio], device=bounding_boxes.device)
    return bounding_boxes.mul(ratios).to(bounding_boxes.dtype), (new_height, new_width)


@_register_kernel_internal(resize, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _resize_bounding_boxes_dispatch(inpt: Any, size: list[int] | None,
                                    max_size: int | None = None, **kwargs: Any) -> Any:
    output, canvas_size = resize_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, canvas_size=inpt.canvas_size, size=size,
        max_size=max_size, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


@_register_kernel_internal(resize, tv_tensors.Video)
def resize_video(video: Tensor, size: list[int] | None,
                 interpolation: Any = InterpolationMode.BILINEAR, max_size: int | None = None,
                 antialias: bool | None = True) -> Tensor:
    return resize_image(video, size=size, interpolation=interpolation, max_size=max_size,
                        antialias=antialias)


# -- affine and rotate -------------------------------------------------------------------------

def affine(inpt: Tensor, angle: float, translate: list[float], scale: float,
           shear: list[float], interpolation: Any = InterpolationMode.NEAREST,
           fill: _FillTypeJIT = None, center: list[float] | None = None) -> Tensor:
    """Rotate by ``angle``, translate, scale and shear about ``center`` (the image center by
    default), keeping the canvas."""
    kernel = _get_kernel(affine, type(inpt))
    return kernel(inpt, angle=angle, translate=translate,  # type: ignore[no-any-return]
                  scale=scale, shear=shear, interpolation=interpolation, fill=fill,
                  center=center)


def _affine_parse_args(angle: Any, translate: Any, scale: float, shear: Any,
                       interpolation: Any = InterpolationMode.NEAREST, center: Any = None
                       ) -> tuple[float, list[float], list[float], list[float] | None]:
    _check_affine_args(angle, translate, scale, shear)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode")
    angle, translate, shear = _normalized_affine_args(angle, translate, shear)
    if center is not None:
        if not isinstance(center, (list, tuple)):
            raise TypeError("Argument center should be a sequence")
        center = [float(c) for c in center]
    return angle, translate, shear, center


def _get_inverse_affine_matrix(center: Any, angle: float, translate: Any, scale: float,
                               shear: Any, inverted: bool = True) -> list[float]:
    """v2's form of the affine matrix (v1's ``_get_inverse_affine_matrix``, its terms shared
    and ordered as v2 orders them, which rounds a little differently)."""
    rot = math.radians(angle)
    sx = math.radians(shear[0])
    sy = math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    cos_sy = math.cos(sy)
    tan_sx = math.tan(sx)
    rot_minus_sy = rot - sy
    cx_plus_tx = cx + tx
    cy_plus_ty = cy + ty
    # rotation with shear: R(rot) * Shear(sx, sy), as [[a, b], [c, d]]
    a = math.cos(rot_minus_sy) / cos_sy
    b = -(a * tan_sx + math.sin(rot))
    c = math.sin(rot_minus_sy) / cos_sy
    d = math.cos(rot) - c * tan_sx
    if inverted:
        # the inverse of [[a, b], [c, d]] / scale (its determinant is 1), then the translation
        matrix = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
        matrix[2] += cx - matrix[0] * cx_plus_tx - matrix[1] * cy_plus_ty
        matrix[5] += cy - matrix[3] * cx_plus_tx - matrix[4] * cy_plus_ty
    else:
        matrix = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        matrix[2] += cx_plus_tx - matrix[0] * cx - matrix[1] * cy
        matrix[5] += cy_plus_ty - matrix[3] * cx - matrix[4] * cy
    return matrix


def _compute_affine_output_size(matrix: list[float], w: int, h: int) -> tuple[int, int]:
    """(width, height) of the box holding the mapped image corners."""
    a, b, c, d, e, f = matrix
    xx = []
    yy = []
    half_w = 0.5 * w
    half_h = 0.5 * h
    for x, y in ((-half_w, -half_h), (half_w, -half_h), (half_w, half_h), (-half_w, half_h)):
        nx = a * x + b * y + c
        ny = d * x + e * y + f
        xx.append(nx + half_w)
        yy.append(ny + half_h)
    nw = math.ceil(max(xx)) - math.floor(min(xx))
    nh = math.ceil(max(yy)) - math.floor(min(yy))
    return int(nw), int(nh)


def _apply_grid_transform(img: Tensor, grid: Tensor, mode: str, fill: _FillTypeJIT) -> Tensor:
    """``grid_sample`` the (..., C, H, W) image at ``grid``; with a fill, a ones channel
    sampled along marks the output pixels that came from outside the image."""
    input_shape = img.shape
    output_height, output_width = grid.shape[1], grid.shape[2]
    num_channels, input_height, input_width = input_shape[-3:]
    output_shape = input_shape[:-3] + (num_channels, output_height, output_width)
    if img.numel() == 0:
        return img.reshape(output_shape)
    img = img.reshape(-1, num_channels, input_height, input_width)
    squashed_batch_size = img.shape[0]
    fp = img.dtype == grid.dtype
    float_img = img if fp else img.to(grid.dtype)
    if squashed_batch_size > 1:
        grid = grid.expand(squashed_batch_size, -1, -1, -1)
    if fill is not None:
        mask = tapegrad.ones((squashed_batch_size, 1, input_height, input_width),
                             dtype=float_img.dtype, device=float_img.device)
        float_img = tapegrad.cat((float_img, mask), dim=1)
    float_img = grid_sample(float_img, grid, mode=mode, padding_mode="zeros",
                            align_corners=False)
    if fill is not None:
        float_img, mask = tapegrad.tensor_split(float_img, indices=(-1,), dim=-3)
        mask = mask.expand_as(float_img)
        fill_list = fill if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = tapegrad.tensor(fill_list, dtype=float_img.dtype,
                                   device=float_img.device).view(1, -1, 1, 1)
        if mode == "nearest":
            float_img = tapegrad.where(mask < 0.5, fill_img.expand_as(float_img), float_img)
        else:  # bilinear: (img - fill) * mask + fill blends towards the fill at the border
            float_img = float_img.sub_(fill_img).mul_(mask).add_(fill_img)
    img = float_img.round_().to(img.dtype) if not fp else float_img
    return img.reshape(output_shape)


def _assert_grid_transform_inputs(image: Tensor, matrix: list[float] | None, interpolation: str,
                                  fill: _FillTypeJIT, supported_interpolation_modes: list[str],
                                  coeffs: list[float] | None = None) -> None:
    if matrix is not None:
        if not isinstance(matrix, list):
            raise TypeError("Argument matrix should be a list")
        elif len(matrix) != 6:
            raise ValueError("Argument matrix should have 6 float values")
    if coeffs is not None and len(coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    if fill is not None:
        if isinstance(fill, (tuple, list)):
            length = len(fill)
            num_channels = image.shape[-3]
            if length > 1 and length != num_channels:
                raise ValueError(
                    "The number of elements in 'fill' cannot broadcast to match the number of "
                    f"channels of the image ({length} != {num_channels})")
        elif not isinstance(fill, (int, float)):
            raise ValueError("Argument fill should be either int, float, tuple or list")
    if interpolation not in supported_interpolation_modes:
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")


def _affine_grid(theta: Tensor, w: int, h: int, ow: int, oh: int) -> Tensor:
    """The (1, oh, ow, 2) normalized grid of the affine map ``theta`` (1, 2, 3), given in
    pixels about the image center."""
    dtype = theta.dtype
    device = theta.device
    base_grid = tapegrad.empty(1, oh, ow, 3, dtype=dtype, device=device)
    x_grid = tapegrad.linspace((1.0 - ow) * 0.5, (ow - 1.0) * 0.5, steps=ow, device=device)
    base_grid[..., 0].copy_(x_grid)
    y_grid = tapegrad.linspace((1.0 - oh) * 0.5, (oh - 1.0) * 0.5, steps=oh,
                               device=device).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)
    base_grid[..., 2].fill_(1)
    rescaled_theta = theta.transpose(1, 2).div_(
        tapegrad.tensor([0.5 * w, 0.5 * h], dtype=dtype, device=device))
    output_grid = _small_matmul(base_grid.view(1, oh * ow, 3), rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


@_register_kernel_internal(affine, Tensor)
@_register_kernel_internal(affine, tv_tensors.Image)
def affine_image(image: Tensor, angle: float, translate: list[float], scale: float,
                 shear: list[float], interpolation: Any = InterpolationMode.NEAREST,
                 fill: _FillTypeJIT = None, center: list[float] | None = None) -> Tensor:
    interpolation = _check_interpolation(interpolation)
    angle, translate, shear, center = _affine_parse_args(angle, translate, scale, shear,
                                                         interpolation, center)
    height, width = image.shape[-2:]
    center_f = [0.0, 0.0]
    if center is not None:
        # the center relative to the image center
        center_f = [(c - s * 0.5) for c, s in zip(center, [width, height], strict=True)]
    translate_f = [float(t) for t in translate]
    matrix = _get_inverse_affine_matrix(center_f, angle, translate_f, scale, shear)
    _assert_grid_transform_inputs(image, matrix, interpolation.value, fill,
                                  ["nearest", "bilinear"])
    dtype = image.dtype if tapegrad.is_floating_point(image) else tapegrad.float32
    theta = tapegrad.tensor(matrix, dtype=dtype, device=image.device).reshape(1, 2, 3)
    grid = _affine_grid(theta, w=width, h=height, ow=width, oh=height)
    return _apply_grid_transform(image, grid, interpolation.value, fill=fill)


@_register_kernel_internal(affine, PIL.Image.Image)
def _affine_image_pil(image: Any, angle: float, translate: list[float], scale: float,
                      shear: list[float], interpolation: Any = InterpolationMode.NEAREST,
                      fill: _FillTypeJIT = None, center: list[float] | None = None) -> Any:
    interpolation = _check_interpolation(interpolation)
    angle, translate, shear, center = _affine_parse_args(angle, translate, scale, shear,
                                                         interpolation, center)
    # PIL's transform takes the center in pixels from the top-left corner
    if center is None:
        height, width = _get_size_image_pil(image)
        center = [width * 0.5, height * 0.5]
    matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
    return _FP.affine(image, matrix, interpolation=pil_modes_mapping[interpolation], fill=fill)


def _affine_keypoints_with_expand(keypoints: Tensor, canvas_size: tuple[int, int],
                                  angle: float, translate: list[float], scale: float,
                                  shear: list[float], center: list[float] | None = None,
                                  expand: bool = False) -> tuple[Tensor, tuple[int, int]]:
    if keypoints.numel() == 0:
        return keypoints, canvas_size
    original_dtype = keypoints.dtype
    original_shape = keypoints.shape
    keypoints = keypoints.clone() if keypoints.is_floating_point() else keypoints.float()
    dtype = keypoints.dtype
    device = keypoints.device
    angle, translate, shear, center = _affine_parse_args(angle, translate, scale, shear,
                                                         InterpolationMode.NEAREST, center)
    if center is None:
        height, width = canvas_size
        center = [width * 0.5, height * 0.5]
    affine_vector = _get_inverse_affine_matrix(center, angle, translate, scale, shear,
                                               inverted=False)
    transposed_affine_matrix = tapegrad.tensor(affine_vector, dtype=dtype,
                                               device=device).reshape(2, 3).T
    points = keypoints.reshape(-1, 2)
    points = tapegrad.cat([points, tapegrad.ones(points.shape[0], 1, device=device,
                                                 dtype=dtype)], dim=-1)
    transformed_points = _small_matmul(points, transposed_affine_matrix)
    if expand:
        # the canvas grows to hold the mapped image; shift the points into it
        height, width = canvas_size
        corners = tapegrad.tensor([[0.0, 0.0, 1.0], [0.0, float(height), 1.0],
                                   [float(width), float(height), 1.0], [float(width), 0.0, 1.0]],
                                  dtype=dtype, device=device)
        new_points = _small_matmul(corners, transposed_affine_matrix)
        tr = tapegrad.amin(new_points, dim=0, keepdim=True)
        transformed_points.sub_(tr)
        affine_vector = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        new_width, new_height = _compute_affine_output_size(affine_vector, width, height)
        canvas_size = (new_height, new_width)
    out_keypoints = transformed_points.reshape(original_shape).to(original_dtype)
    return out_keypoints, canvas_size


def affine_keypoints(keypoints: Tensor, canvas_size: tuple[int, int], angle: float,
                     translate: list[float], scale: float, shear: list[float],
                     center: list[float] | None = None) -> tuple[Tensor, tuple[int, int]]:
    return _affine_keypoints_with_expand(keypoints=keypoints, canvas_size=canvas_size,
                                         angle=angle, translate=translate, scale=scale,
                                         shear=shear, center=center, expand=False)


@_register_kernel_internal(affine, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _affine_keypoints_dispatch(inpt: Any, angle: float, translate: list[float], scale: float,
                               shear: list[float], center: list[float] | None = None,
                               **kwargs: Any) -> Any:
    output, canvas_size = affine_keypoints(inpt.as_subclass(Tensor),
                                           canvas_size=inpt.canvas_size, angle=angle,
                                           translate=translate, scale=scale, shear=shear,
                                           center=center)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def _affine_bounding_boxes_with_expand(
        bounding_boxes: Tensor, format: Any, canvas_size: tuple[int, int], angle: float,
        translate: list[float], scale: float, shear: list[float],
        center: list[float] | None = None, expand: bool = False,
        clamping_mode: CLAMPING_MODE_TYPE = "soft") -> tuple[Tensor, tuple[int, int]]:
    if bounding_boxes.numel() == 0:
        return bounding_boxes, canvas_size
    original_shape = bounding_boxes.shape
    dtype = bounding_boxes.dtype
    need_cast = not bounding_boxes.is_floating_point()
    bounding_boxes = bounding_boxes.float() if need_cast else bounding_boxes.clone()
    device = bounding_boxes.device
    is_rotated = tv_tensors.is_rotated_bounding_format(format)
    intermediate_format = _BBF.XYXYXYXY if is_rotated else _BBF.XYXY
    intermediate_shape = 8 if is_rotated else 4
    bounding_boxes = convert_bounding_box_format(
        bounding_boxes, old_format=format, new_format=intermediate_format,
        inplace=True).reshape(-1, intermediate_shape)
    angle, translate, shear, center = _affine_parse_args(angle, translate, scale, shear,
                                                         InterpolationMode.NEAREST, center)
    if center is None:
        height, width = canvas_size
        center = [width * 0.5, height * 0.5]
    affine_vector = _get_inverse_affine_matrix(center, angle, translate, scale, shear,
                                               inverted=False)
    transposed_affine_matrix = tapegrad.tensor(affine_vector, dtype=bounding_boxes.dtype,
                                               device=device).reshape(2, 3).T
    # the corners of each box, mapped
    if is_rotated:
        points = bounding_boxes.reshape(-1, 2)
    else:
        points = bounding_boxes[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
    points = tapegrad.cat([points, tapegrad.ones(points.shape[0], 1, device=device,
                                                 dtype=bounding_boxes.dtype)], dim=-1)
    transformed_points = _small_matmul(points, transposed_affine_matrix)
    if is_rotated:
        transformed_points = transformed_points.reshape(-1, 8)
        out_bboxes = _parallelogram_to_bounding_boxes(transformed_points)
    else:
        # the new box bounds the mapped corners
        transformed_points = transformed_points.reshape(-1, 4, 2)
        out_bbox_mins, out_bbox_maxs = tapegrad.aminmax(transformed_points, dim=1)
        out_bboxes = tapegrad.cat([out_bbox_mins, out_bbox_maxs], dim=1)
    if expand:
        height, width = canvas_size
        corners = tapegrad.tensor([[0.0, 0.0, 1.0], [0.0, float(height), 1.0],
                                   [float(width), float(height), 1.0], [float(width), 0.0, 1.0]],
                                  dtype=bounding_boxes.dtype, device=device)
        new_points = _small_matmul(corners, transposed_affine_matrix)
        tr = tapegrad.amin(new_points, dim=0, keepdim=True)
        out_bboxes.sub_(tr.repeat((1, 4 if is_rotated else 2)))
        affine_vector = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        new_width, new_height = _compute_affine_output_size(affine_vector, width, height)
        canvas_size = (new_height, new_width)
    out_bboxes = clamp_bounding_boxes(out_bboxes, format=intermediate_format,
                                      canvas_size=canvas_size, clamping_mode=clamping_mode)
    out_bboxes = convert_bounding_box_format(out_bboxes, old_format=intermediate_format,
                                             new_format=format, inplace=True).reshape(
                                                 original_shape)
    if need_cast:
        out_bboxes = out_bboxes.to(dtype)
    return out_bboxes, canvas_size


def affine_bounding_boxes(bounding_boxes: Tensor, format: Any, canvas_size: tuple[int, int],
                          angle: float, translate: list[float], scale: float,
                          shear: list[float], center: list[float] | None = None,
                          clamping_mode: CLAMPING_MODE_TYPE = "soft") -> Tensor:
    out_box, _ = _affine_bounding_boxes_with_expand(
        bounding_boxes, format=format, canvas_size=canvas_size, angle=angle,
        translate=translate, scale=scale, shear=shear, center=center, expand=False,
        clamping_mode=clamping_mode)
    return out_box


@_register_kernel_internal(affine, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _affine_bounding_boxes_dispatch(inpt: Any, angle: float, translate: list[float],
                                    scale: float, shear: list[float],
                                    center: list[float] | None = None, **kwargs: Any) -> Any:
    output = affine_bounding_boxes(inpt.as_subclass(Tensor), format=inpt.format,
                                   canvas_size=inpt.canvas_size, angle=angle,
                                   translate=translate, scale=scale, shear=shear, center=center,
                                   clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt)


def affine_mask(mask: Tensor, angle: float, translate: list[float], scale: float,
                shear: list[float], fill: _FillTypeJIT = None,
                center: list[float] | None = None) -> Tensor:
    return _squeezed(affine_image, mask, angle=angle, translate=translate, scale=scale,
                     shear=shear, interpolation=InterpolationMode.NEAREST, fill=fill,
                     center=center)


@_register_kernel_internal(affine, tv_tensors.Mask, tv_tensor_wrapper=False)
def _affine_mask_dispatch(inpt: Any, angle: float, translate: list[float], scale: float,
                          shear: list[float], fill: _FillTypeJIT = None,
                          center: list[float] | None = None, **kwargs: Any) -> Any:
    output = affine_mask(inpt.as_subclass(Tensor), angle=angle, translate=translate,
                         scale=scale, shear=shear, fill=fill, center=center)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(affine, tv_tensors.Video)
def affine_video(video: Tensor, angle: float, translate: list[float], scale: float,
                 shear: list[float], interpolation: Any = InterpolationMode.NEAREST,
                 fill: _FillTypeJIT = None, center: list[float] | None = None) -> Tensor:
    return affine_image(video, angle=angle, translate=translate, scale=scale, shear=shear,
                        interpolation=interpolation, fill=fill, center=center)


def rotate(inpt: Tensor, angle: float, interpolation: Any = InterpolationMode.NEAREST,
           expand: bool = False, center: list[float] | None = None,
           fill: _FillTypeJIT = None) -> Tensor:
    """Rotate by ``angle`` degrees counter-clockwise about ``center``; ``expand`` grows the
    canvas to hold the whole rotated image."""
    kernel = _get_kernel(rotate, type(inpt))
    return kernel(inpt, angle=angle, interpolation=interpolation,  # type: ignore[no-any-return]
                  expand=expand, fill=fill, center=center)


@_register_kernel_internal(rotate, Tensor)
@_register_kernel_internal(rotate, tv_tensors.Image)
def rotate_image(image: Tensor, angle: float, interpolation: Any = InterpolationMode.NEAREST,
                 expand: bool = False, center: list[float] | None = None,
                 fill: _FillTypeJIT = None) -> Tensor:
    angle = angle % 360  # in [0, 360)
    if center is None:
        # quarter turns about the center are exact as index permutations
        if angle == 0:
            return image.clone()
        if angle == 180:
            return tapegrad.rot90(image, k=2, dims=(-2, -1))
        if expand or image.shape[-1] == image.shape[-2]:
            if angle == 90:
                return tapegrad.rot90(image, k=1, dims=(-2, -1))
            if angle == 270:
                return tapegrad.rot90(image, k=3, dims=(-2, -1))
    interpolation = _check_interpolation(interpolation)
    input_height, input_width = image.shape[-2:]
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [(c - s * 0.5) for c, s in zip(center, [input_width, input_height],
                                                  strict=True)]
    # the grid's y axis points down: the inverse rotation is by -angle
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    _assert_grid_transform_inputs(image, matrix, interpolation.value, fill,
                                  ["nearest", "bilinear"])
    output_width, output_height = (
        _compute_affine_output_size(matrix, input_width, input_height) if expand
        else (input_width, input_height))
    dtype = image.dtype if tapegrad.is_floating_point(image) else tapegrad.float32
    theta = tapegrad.tensor(matrix, dtype=dtype, device=image.device).reshape(1, 2, 3)
    grid = _affine_grid(theta, w=input_width, h=input_height, ow=output_width, oh=output_height)
    return _apply_grid_transform(image, grid, interpolation.value, fill=fill)


@_register_kernel_internal(rotate, PIL.Image.Image)
def _rotate_image_pil(image: Any, angle: float, interpolation: Any = InterpolationMode.NEAREST,
                      expand: bool = False, center: list[float] | None = None,
                      fill: _FillTypeJIT = None) -> Any:
    interpolation = _check_interpolation(interpolation)
    return _FP.rotate(image, angle, interpolation=pil_modes_mapping[interpolation],
                      expand=expand, fill=fill, center=center)


def rotate_keypoints(keypoints: Tensor, canvas_size: tuple[int, int], angle: float,
                     expand: bool = False, center: list[float] | None = None
                     ) -> tuple[Tensor, tuple[int, int]]:
    return _affine_keypoints_with_expand(keypoints=keypoints, canvas_size=canvas_size,
                                         angle=-angle, translate=[0.0, 0.0], scale=1.0,
                                         shear=[0.0, 0.0], center=center, expand=expand)


@_register_kernel_internal(rotate, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _rotate_keypoints_dispatch(inpt: Any, angle: float, expand: bool = False,
                               center: list[float] | None = None, **kwargs: Any) -> Any:
    output, canvas_size = rotate_keypoints(inpt, canvas_size=inpt.canvas_size, angle=angle,
                                           center=center, expand=expand)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def rotate_bounding_boxes(bounding_boxes: Tensor, format: Any, canvas_size: tuple[int, int],
                          angle: float, expand: bool = False, center: list[float] | None = None,
                          clamping_mode: CLAMPING_MODE_TYPE = "soft"
                          ) -> tuple[Tensor, tuple[int, int]]:
    return _affine_bounding_boxes_with_expand(
        bounding_boxes, format=format, canvas_size=canvas_size, angle=-angle,
        translate=[0.0, 0.0], scale=1.0, shear=[0.0, 0.0], center=center, expand=expand,
        clamping_mode=clamping_mode)


@_register_kernel_internal(rotate, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _rotate_bounding_boxes_dispatch(inpt: Any, angle: float, expand: bool = False,
                                    center: list[float] | None = None, **kwargs: Any) -> Any:
    output, canvas_size = rotate_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, canvas_size=inpt.canvas_size,
        angle=angle, expand=expand, center=center, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def rotate_mask(mask: Tensor, angle: float, expand: bool = False,
                center: list[float] | None = None, fill: _FillTypeJIT = None) -> Tensor:
    return _squeezed(rotate_image, mask, angle=angle, expand=expand,
                     interpolation=InterpolationMode.NEAREST, fill=fill, center=center)


@_register_kernel_internal(rotate, tv_tensors.Mask, tv_tensor_wrapper=False)
def _rotate_mask_dispatch(inpt: Any, angle: float, expand: bool = False,
                          center: list[float] | None = None, fill: _FillTypeJIT = None,
                          **kwargs: Any) -> Any:
    output = rotate_mask(inpt.as_subclass(Tensor), angle=angle, expand=expand, fill=fill,
                         center=center)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(rotate, tv_tensors.Video)
def rotate_video(video: Tensor, angle: float, interpolation: Any = InterpolationMode.NEAREST,
                 expand: bool = False, center: list[float] | None = None,
                 fill: _FillTypeJIT = None) -> Tensor:
    return rotate_image(video, angle, interpolation=interpolation, expand=expand, fill=fill,
                        center=center)


# -- pad ----------------------------------------------------------------------------------------

def pad(inpt: Tensor, padding: list[int], fill: Any = None, padding_mode: str = "constant"
        ) -> Tensor:
    """Pad the borders (left, top, right, bottom; or all, or left/right and top/bottom)."""
    kernel = _get_kernel(pad, type(inpt))
    return kernel(inpt, padding=padding, fill=fill,  # type: ignore[no-any-return]
                  padding_mode=padding_mode)


def _parse_pad_padding(padding: Any) -> list[int]:
    """[left, right, top, bottom] from an int or 1, 2 or 4 values (left, top, right, bottom)."""
    if isinstance(padding, int):
        return [padding] * 4
    if isinstance(padding, (tuple, list)):
        if len(padding) == 1:
            return [padding[0]] * 4
        if len(padding) == 2:
            return [padding[0], padding[0], padding[1], padding[1]]
        if len(padding) == 4:
            return [padding[0], padding[2], padding[1], padding[3]]
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple or list. Found "
                         f"{len(padding)}")
    raise TypeError(
        f"`padding` should be an integer or tuple or list of integers, but got {padding}")


@_register_kernel_internal(pad, Tensor)
@_register_kernel_internal(pad, tv_tensors.Image)
def pad_image(image: Tensor, padding: list[int], fill: Any = None,
              padding_mode: str = "constant") -> Tensor:
    torch_padding = _parse_pad_padding(padding)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("`padding_mode` should be either `'constant'`, `'edge'`, `'reflect'` "
                         f"or `'symmetric'`, but got `'{padding_mode}'`.")
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)):
        return _pad_with_scalar_fill(image, torch_padding, fill=fill, padding_mode=padding_mode)
    elif len(fill) == 1:
        return _pad_with_scalar_fill(image, torch_padding, fill=fill[0],
                                     padding_mode=padding_mode)
    return _pad_with_vector_fill(image, torch_padding, fill=fill, padding_mode=padding_mode)


def _pad_with_scalar_fill(image: Tensor, torch_padding: list[int], fill: float,
                          padding_mode: str) -> Tensor:
    shape = image.shape
    num_channels, height, width = shape[-3:]
    batch_size = 1
    for s in shape[:-3]:
        batch_size *= s
    image = image.reshape(batch_size, num_channels, height, width)
    if padding_mode == "edge":
        padding_mode = "replicate"
    if padding_mode == "constant":
        padded = _constant_pad_arrays(image, torch_padding, fill)
        image = padded if padded is not None else torch_pad(
            image, torch_padding, mode=padding_mode, value=float(fill))
    elif padding_mode in ("reflect", "replicate"):
        # reflect and replicate take floating tensors only
        dtype = image.dtype
        needs_cast = not image.is_floating_point()
        if needs_cast:
            image = image.to(tapegrad.float32)
        image = torch_pad(image, torch_padding, mode=padding_mode)
        if needs_cast:
            image = image.to(dtype)
    else:  # symmetric
        image = _pad_symmetric(image, torch_padding)
    new_height, new_width = image.shape[-2:]
    return image.reshape(shape[:-3] + (num_channels, new_height, new_width))


def _pad_with_vector_fill(image: Tensor, torch_padding: list[int], fill: list[float],
                          padding_mode: str) -> Tensor:
    if padding_mode != "constant":
        raise ValueError(f"Padding mode '{padding_mode}' is not supported if fill is not scalar")
    output = _pad_with_scalar_fill(image, torch_padding, fill=0, padding_mode="constant")
    left, right, top, bottom = torch_padding
    fill_t = tapegrad.tensor(fill, device=image.device).to(dtype=image.dtype).reshape(-1, 1, 1)
    if top > 0:
        output[..., :top, :] = fill_t
    if left > 0:
        output[..., :, :left] = fill_t
    if bottom > 0:
        output[..., -bottom:, :] = fill_t
    if right > 0:
        output[..., :, -right:] = fill_t
    return output


_pad_image_pil = _register_kernel_internal(pad, PIL.Image.Image)(_FP.pad)


@_register_kernel_internal(pad, tv_tensors.Mask)
def pad_mask(mask: Tensor, padding: list[int], fill: Any = None,
             padding_mode: str = "constant") -> Tensor:
    if fill is None:
        fill = 0
    if isinstance(fill, (tuple, list)):
        raise ValueError("Non-scalar fill value is not supported")
    return _squeezed(pad_image, mask, padding=padding, fill=fill, padding_mode=padding_mode)


def pad_keypoints(keypoints: Tensor, canvas_size: tuple[int, int], padding: list[int],
                  padding_mode: str = "constant") -> tuple[Tensor, tuple[int, int]]:
    supported = ["constant"]
    if padding_mode not in supported:
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with KeyPoints "
                         f"(supported modes are {', '.join(supported)})")
    left, right, top, bottom = _parse_pad_padding(padding)
    shift = tapegrad.tensor([left, top], dtype=keypoints.dtype, device=keypoints.device)
    canvas_size = (canvas_size[0] + top + bottom, canvas_size[1] + left + right)
    return keypoints + shift, canvas_size


@_register_kernel_internal(pad, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _pad_keypoints_dispatch(keypoints: Any, padding: list[int], padding_mode: str = "constant",
                            **kwargs: Any) -> Any:
    output, canvas_size = pad_keypoints(keypoints.as_subclass(Tensor),
                                        canvas_size=keypoints.canvas_size, padding=padding,
                                        padding_mode=padding_mode)
    return tv_tensors.wrap(output, like=keypoints, canvas_size=canvas_size)


def _box_offsets(format: Any, left: int, top: int) -> list[int]:
    """What a shift of the origin by (left, top) adds to each coordinate of a box."""
    if format == _BBF.XYXYXYXY:
        return [left, top, left, top, left, top, left, top]
    if format in (_BBF.XYWHR, _BBF.CXCYWHR):
        return [left, top, 0, 0, 0]
    if format == _BBF.XYXY:
        return [left, top, left, top]
    return [left, top, 0, 0]


def pad_bounding_boxes(bounding_boxes: Tensor, format: Any, canvas_size: tuple[int, int],
                       padding: list[int], padding_mode: str = "constant",
                       clamping_mode: CLAMPING_MODE_TYPE = "soft"
                       ) -> tuple[Tensor, tuple[int, int]]:
    if padding_mode not in ["constant"]:
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with bounding boxes")
    left, right, top, bottom = _parse_pad_padding(padding)
    bounding_boxes = bounding_boxes + tapegrad.tensor(
        _box_offsets(format, left, top), dtype=bounding_boxes.dtype,
        device=bounding_boxes.device)
    height, width = canvas_size
    canvas_size = (height + top + bottom, width + left + right)
    return (clamp_bounding_boxes(bounding_boxes, format=format, canvas_size=canvas_size,
                                 clamping_mode=clamping_mode), canvas_size)


@_register_kernel_internal(pad, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _pad_bounding_boxes_dispatch(inpt: Any, padding: list[int], padding_mode: str = "constant",
                                 **kwargs: Any) -> Any:
    output, canvas_size = pad_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, canvas_size=inpt.canvas_size,
        padding=padding, padding_mode=padding_mode, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


@_register_kernel_internal(pad, tv_tensors.Video)
def pad_video(video: Tensor, padding: list[int], fill: Any = None,
              padding_mode: str = "constant") -> Tensor:
    return pad_image(video, padding, fill=fill, padding_mode=padding_mode)


# -- crop ---------------------------------------------------------------------------------------

def crop(inpt: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    """The box of ``height`` x ``width`` at (``top``, ``left``); beyond the image is zero."""
    kernel = _get_kernel(crop, type(inpt))
    return kernel(inpt, top=top, left=left, height=height,  # type: ignore[no-any-return]
                  width=width)


@_register_kernel_internal(crop, Tensor)
@_register_kernel_internal(crop, tv_tensors.Image)
def crop_image(image: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    h, w = image.shape[-2:]
    right = left + width
    bottom = top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        image = image[..., max(top, 0):bottom, max(left, 0):right]
        torch_padding = [max(min(right, 0) - left, 0), max(right - max(w, left), 0),
                         max(min(bottom, 0) - top, 0), max(bottom - max(h, top), 0)]
        return _pad_with_scalar_fill(image, torch_padding, fill=0, padding_mode="constant")
    return image[..., top:bottom, left:right]


_crop_image_pil = _FP.crop
_register_kernel_internal(crop, PIL.Image.Image)(_crop_image_pil)


def crop_keypoints(keypoints: Tensor, top: int, left: int, height: int, width: int
                   ) -> tuple[Tensor, tuple[int, int]]:
    keypoints = keypoints - tapegrad.tensor([left, top], dtype=keypoints.dtype,
                                            device=keypoints.device)
    return keypoints, (height, width)


@_register_kernel_internal(crop, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _crop_keypoints_dispatch(inpt: Any, top: int, left: int, height: int, width: int) -> Any:
    output, canvas_size = crop_keypoints(inpt.as_subclass(Tensor), top=top, left=left,
                                         height=height, width=width)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def crop_bounding_boxes(bounding_boxes: Tensor, format: Any, top: int, left: int, height: int,
                        width: int, clamping_mode: CLAMPING_MODE_TYPE = "soft"
                        ) -> tuple[Tensor, tuple[int, int]]:
    bounding_boxes = bounding_boxes - tapegrad.tensor(
        _box_offsets(format, left, top), dtype=bounding_boxes.dtype,
        device=bounding_boxes.device)
    canvas_size = (height, width)
    if format == _BBF.XYXYXYXY:
        bounding_boxes = _parallelogram_to_bounding_boxes(bounding_boxes)
    return (clamp_bounding_boxes(bounding_boxes, format=format, canvas_size=canvas_size,
                                 clamping_mode=clamping_mode), canvas_size)


@_register_kernel_internal(crop, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _crop_bounding_boxes_dispatch(inpt: Any, top: int, left: int, height: int,
                                  width: int) -> Any:
    output, canvas_size = crop_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, top=top, left=left, height=height,
        width=width, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


@_register_kernel_internal(crop, tv_tensors.Mask)
def crop_mask(mask: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    return _squeezed(crop_image, mask, top, left, height, width)


@_register_kernel_internal(crop, tv_tensors.Video)
def crop_video(video: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    return crop_image(video, top, left, height, width)


# -- perspective --------------------------------------------------------------------------------

def perspective(inpt: Tensor, startpoints: list[list[int]] | None,
                endpoints: list[list[int]] | None,
                interpolation: Any = InterpolationMode.BILINEAR, fill: _FillTypeJIT = None,
                coefficients: list[float] | None = None) -> Tensor:
    """Warp so that ``startpoints`` land on ``endpoints`` (or by the 8 ``coefficients``)."""
    kernel = _get_kernel(perspective, type(inpt))
    return kernel(inpt, startpoints=startpoints,  # type: ignore[no-any-return]
                  endpoints=endpoints, interpolation=interpolation, fill=fill,
                  coefficients=coefficients)


def _perspective_coefficients(startpoints: Any, endpoints: Any, coefficients: Any
                              ) -> list[float]:
    if coefficients is not None:
        if startpoints is not None and endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be "
                             "defined concurrently.")
        elif len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
        return coefficients  # type: ignore[no-any-return]
    elif startpoints is not None and endpoints is not None:
        return _get_perspective_coeffs(startpoints, endpoints)
    raise ValueError("Either the startpoints/endpoints or the coefficients must have non `None` "
                     "values.")


@_register_kernel_internal(perspective, Tensor)
@_register_kernel_internal(perspective, tv_tensors.Image)
def perspective_image(image: Tensor, startpoints: list[list[int]] | None,
                      endpoints: list[list[int]] | None,
                      interpolation: Any = InterpolationMode.BILINEAR,
                      fill: _FillTypeJIT = None, coefficients: list[float] | None = None
                      ) -> Tensor:
    perspective_coeffs = _perspective_coefficients(startpoints, endpoints, coefficients)
    interpolation = _check_interpolation(interpolation)
    _assert_grid_transform_inputs(image, matrix=None, interpolation=interpolation.value,
                                  fill=fill, supported_interpolation_modes=["nearest", "bilinear"],
                                  coeffs=perspective_coeffs)
    oh, ow = image.shape[-2:]
    dtype = image.dtype if tapegrad.is_floating_point(image) else tapegrad.float32
    grid = _perspective_grid(perspective_coeffs, ow=ow, oh=oh, dtype=dtype, device=image.device,
                             steps_dtype=dtype)
    return _apply_grid_transform(image, grid, interpolation.value, fill=fill)


@_register_kernel_internal(perspective, PIL.Image.Image)
def _perspective_image_pil(image: Any, startpoints: list[list[int]] | None,
                           endpoints: list[list[int]] | None,
                           interpolation: Any = InterpolationMode.BILINEAR,
                           fill: _FillTypeJIT = None, coefficients: list[float] | None = None
                           ) -> Any:
    perspective_coeffs = _perspective_coefficients(startpoints, endpoints, coefficients)
    interpolation = _check_interpolation(interpolation)
    return _FP.perspective(image, perspective_coeffs,
                           interpolation=pil_modes_mapping[interpolation], fill=fill)


def _compute_perspective_thetas(perspective_coeffs: list[float], dtype: Any, device: Any,
                                denom: float) -> tuple[Tensor, Tensor]:
    """The forward projective map (points move the other way than the image's sampling)."""
    a, b, c, d, e, f, g, h = perspective_coeffs
    inv_coeffs = [(e - f * h) / denom, (-b + c * h) / denom, (b * f - c * e) / denom,
                  (-d + f * g) / denom, (a - c * g) / denom, (-a * f + c * d) / denom,
                  (-e * g + d * h) / denom, (-a * h + b * g) / denom]
    theta1 = tapegrad.tensor([[inv_coeffs[0], inv_coeffs[1], inv_coeffs[2]],
                              [inv_coeffs[3], inv_coeffs[4], inv_coeffs[5]]],
                             dtype=dtype, device=device)
    theta2 = tapegrad.tensor([[inv_coeffs[6], inv_coeffs[7], 1.0],
                              [inv_coeffs[6], inv_coeffs[7], 1.0]], dtype=dtype, device=device)
    return theta1, theta2


def perspective_keypoints(keypoints: Tensor, canvas_size: tuple[int, int],
                          startpoints: list[list[int]] | None,
                          endpoints: list[list[int]] | None,
                          coefficients: list[float] | None = None) -> Tensor:
    if keypoints.numel() == 0:
        return keypoints
    dtype = keypoints.dtype if tapegrad.is_floating_point(keypoints) else tapegrad.float32
    device = keypoints.device
    original_shape = keypoints.shape
    keypoints = keypoints.clone().reshape(-1, 2)
    perspective_coeffs = _perspective_coefficients(startpoints, endpoints, coefficients)
    denom = perspective_coeffs[0] * perspective_coeffs[4] - (
        perspective_coeffs[1] * perspective_coeffs[3])
    if denom == 0:
        raise RuntimeError(f"Provided perspective_coeffs {perspective_coeffs} can not be "
                           "inverted to transform keypoints. Denominator is zero, "
                           f"denom={denom}")
    theta1, theta2 = _compute_perspective_thetas(perspective_coeffs, dtype, device, denom)
    points = tapegrad.cat([keypoints, tapegrad.ones(keypoints.shape[0], 1,
                                                    device=keypoints.device)], dim=-1)
    numer_points = _small_matmul(points, theta1.T)
    denom_points = _small_matmul(points, theta2.T)
    transformed_points = numer_points.div_(denom_points)
    return transformed_points.to(keypoints.dtype).reshape(original_shape)


@_register_kernel_internal(perspective, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _perspective_keypoints_dispatch(inpt: Any, startpoints: list[list[int]] | None,
                                    endpoints: list[list[int]] | None,
                                    coefficients: list[float] | None = None,
                                    **kwargs: Any) -> Any:
    output = perspective_keypoints(inpt.as_subclass(Tensor), canvas_size=inpt.canvas_size,
                                   startpoints=startpoints, endpoints=endpoints,
                                   coefficients=coefficients)
    return tv_tensors.wrap(output, like=inpt)


def perspective_bounding_boxes(bounding_boxes: Tensor, format: Any,
                               canvas_size: tuple[int, int],
                               startpoints: list[list[int]] | None,
                               endpoints: list[list[int]] | None,
                               coefficients: list[float] | None = None,
                               clamping_mode: CLAMPING_MODE_TYPE = "soft") -> Tensor:
    if bounding_boxes.numel() == 0:
        return bounding_boxes
    perspective_coeffs = _perspective_coefficients(startpoints, endpoints, coefficients)
    original_shape = bounding_boxes.shape
    original_dtype = bounding_boxes.dtype
    is_rotated = tv_tensors.is_rotated_bounding_format(format)
    intermediate_format = _BBF.XYXYXYXY if is_rotated else _BBF.XYXY
    bounding_boxes = convert_bounding_box_format(
        bounding_boxes, old_format=format, new_format=intermediate_format).reshape(
            -1, 8 if is_rotated else 4)
    dtype = bounding_boxes.dtype if tapegrad.is_floating_point(bounding_boxes) else (
        tapegrad.float32)
    device = bounding_boxes.device
    denom = perspective_coeffs[0] * perspective_coeffs[4] - (
        perspective_coeffs[1] * perspective_coeffs[3])
    if denom == 0:
        raise RuntimeError(f"Provided perspective_coeffs {perspective_coeffs} can not be "
                           "inverted to transform bounding boxes. Denominator is zero, "
                           f"denom={denom}")
    theta1, theta2 = _compute_perspective_thetas(perspective_coeffs, dtype, device, denom)
    # the corners of each box, mapped one by one
    points = bounding_boxes if is_rotated else bounding_boxes[:, [[0, 1], [2, 1], [2, 3],
                                                                  [0, 3]]]
    points = points.reshape(-1, 2)
    points = tapegrad.cat([points, tapegrad.ones(points.shape[0], 1, device=points.device)],
                          dim=-1)
    numer_points = _small_matmul(points, theta1.T)
    denom_points = _small_matmul(points, theta2.T)
    transformed_points = numer_points.div_(denom_points)
    if is_rotated:
        transformed_points = transformed_points.reshape(-1, 8)
        out_bboxes = _parallelogram_to_bounding_boxes(transformed_points)
    else:
        transformed_points = transformed_points.reshape(-1, 4, 2)
        out_bbox_mins, out_bbox_maxs = tapegrad.aminmax(transformed_points, dim=1)
        out_bboxes = tapegrad.cat([out_bbox_mins, out_bbox_maxs], dim=1)
    out_bboxes = clamp_bounding_boxes(out_bboxes, format=intermediate_format,
                                      canvas_size=canvas_size, clamping_mode=clamping_mode)
    out_bboxes = convert_bounding_box_format(out_bboxes, old_format=intermediate_format,
                                             new_format=format, inplace=True).reshape(
                                                 original_shape)
    return out_bboxes.to(original_dtype)


@_register_kernel_internal(perspective, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _perspective_bounding_boxes_dispatch(inpt: Any, startpoints: list[list[int]] | None,
                                         endpoints: list[list[int]] | None,
                                         coefficients: list[float] | None = None,
                                         **kwargs: Any) -> Any:
    output = perspective_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, canvas_size=inpt.canvas_size,
        startpoints=startpoints, endpoints=endpoints, coefficients=coefficients,
        clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt)


def perspective_mask(mask: Tensor, startpoints: list[list[int]] | None,
                     endpoints: list[list[int]] | None, fill: _FillTypeJIT = None,
                     coefficients: list[float] | None = None) -> Tensor:
    return _squeezed(perspective_image, mask, startpoints, endpoints,
                     interpolation=InterpolationMode.NEAREST, fill=fill,
                     coefficients=coefficients)


@_register_kernel_internal(perspective, tv_tensors.Mask, tv_tensor_wrapper=False)
def _perspective_mask_dispatch(inpt: Any, startpoints: list[list[int]] | None,
                               endpoints: list[list[int]] | None, fill: _FillTypeJIT = None,
                               coefficients: list[float] | None = None, **kwargs: Any) -> Any:
    output = perspective_mask(inpt.as_subclass(Tensor), startpoints=startpoints,
                              endpoints=endpoints, fill=fill, coefficients=coefficients)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(perspective, tv_tensors.Video)
def perspective_video(video: Tensor, startpoints: list[list[int]] | None,
                      endpoints: list[list[int]] | None,
                      interpolation: Any = InterpolationMode.BILINEAR,
                      fill: _FillTypeJIT = None, coefficients: list[float] | None = None
                      ) -> Tensor:
    return perspective_image(video, startpoints, endpoints, interpolation=interpolation,
                             fill=fill, coefficients=coefficients)


# -- elastic ------------------------------------------------------------------------------------

def elastic(inpt: Tensor, displacement: Tensor,
            interpolation: Any = InterpolationMode.BILINEAR, fill: _FillTypeJIT = None
            ) -> Tensor:
    """Move every pixel by ``displacement`` (1, H, W, 2, in normalized units)."""
    kernel = _get_kernel(elastic, type(inpt))
    return kernel(inpt, displacement=displacement,  # type: ignore[no-any-return]
                  interpolation=interpolation, fill=fill)


elastic_transform = elastic


@_register_kernel_internal(elastic, Tensor)
@_register_kernel_internal(elastic, tv_tensors.Image)
def elastic_image(image: Tensor, displacement: Tensor,
                  interpolation: Any = InterpolationMode.BILINEAR, fill: _FillTypeJIT = None
                  ) -> Tensor:
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    interpolation = _check_interpolation(interpolation)
    height, width = image.shape[-2:]
    device = image.device
    dtype = image.dtype if tapegrad.is_floating_point(image) else tapegrad.float32
    # torch's CPU grid_sample takes no float16: sample in float32
    is_cpu_half = dtype == tapegrad.float16
    if is_cpu_half:
        image = image.to(tapegrad.float32)
        dtype = tapegrad.float32
    expected_shape = (1, height, width, 2)
    if expected_shape != displacement.shape:
        raise ValueError(f"Argument displacement shape should be {expected_shape}, but given "
                         f"{displacement.shape}")
    grid = _create_identity_grid((height, width), device=device, dtype=dtype).add_(
        displacement.to(dtype=dtype, device=device))
    output = _apply_grid_transform(image, grid, interpolation.value, fill=fill)
    if is_cpu_half:
        output = output.to(tapegrad.float16)
    return output


@_register_kernel_internal(elastic, PIL.Image.Image)
def _elastic_image_pil(image: Any, displacement: Tensor,
                       interpolation: Any = InterpolationMode.BILINEAR,
                       fill: _FillTypeJIT = None) -> Any:
    t_img = pil_to_tensor(image)
    output = elastic_image(t_img, displacement, interpolation=interpolation, fill=fill)
    return to_pil_image(output, mode=image.mode)


def _create_identity_grid(size: tuple[int, int], device: Any, dtype: Any) -> Tensor:
    sy, sx = size
    base_grid = tapegrad.empty(1, sy, sx, 2, device=device, dtype=dtype)
    x_grid = tapegrad.linspace((-sx + 1) / sx, (sx - 1) / sx, sx, device=device, dtype=dtype)
    base_grid[..., 0].copy_(x_grid)
    y_grid = tapegrad.linspace((-sy + 1) / sy, (sy - 1) / sy, sy, device=device,
                               dtype=dtype).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)
    return base_grid


def elastic_keypoints(keypoints: Tensor, canvas_size: tuple[int, int], displacement: Tensor
                      ) -> Tensor:
    expected_shape = (1, canvas_size[0], canvas_size[1], 2)
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    elif displacement.shape != expected_shape:
        raise ValueError(f"Argument displacement shape should be {expected_shape}, but given "
                         f"{displacement.shape}")
    if keypoints.numel() == 0:
        return keypoints
    device = keypoints.device
    dtype = keypoints.dtype if tapegrad.is_floating_point(keypoints) else tapegrad.float32
    if displacement.dtype != dtype or displacement.device != device:
        displacement = displacement.to(dtype=dtype, device=device)
    original_shape = keypoints.shape
    keypoints = keypoints.clone().reshape(-1, 2)
    # the inverse map: each point moves by minus the displacement at its pixel
    id_grid = _create_identity_grid(canvas_size, device=device, dtype=dtype)
    inv_grid = id_grid.sub_(displacement)
    index_xy = keypoints.to(dtype=tapegrad.long)
    index_x, index_y = index_xy[:, 0], index_xy[:, 1]
    index_x.clamp_(0, inv_grid.shape[2] - 1)
    index_y.clamp_(0, inv_grid.shape[1] - 1)
    t_size = tapegrad.tensor(canvas_size[::-1], device=displacement.device,
                             dtype=displacement.dtype)
    transformed_points = inv_grid[0, index_y, index_x, :].add_(1).mul_(0.5 * t_size).sub_(0.5)
    return transformed_points.to(keypoints.dtype).reshape(original_shape)


@_register_kernel_internal(elastic, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _elastic_keypoints_dispatch(inpt: Any, displacement: Tensor, **kwargs: Any) -> Any:
    output = elastic_keypoints(inpt.as_subclass(Tensor), canvas_size=inpt.canvas_size,
                               displacement=displacement)
    return tv_tensors.wrap(output, like=inpt)


def elastic_bounding_boxes(bounding_boxes: Tensor, format: Any, canvas_size: tuple[int, int],
                           displacement: Tensor, clamping_mode: CLAMPING_MODE_TYPE = "soft"
                           ) -> Tensor:
    expected_shape = (1, canvas_size[0], canvas_size[1], 2)
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    elif displacement.shape != expected_shape:
        raise ValueError(f"Argument displacement shape should be {expected_shape}, but given "
                         f"{displacement.shape}")
    if bounding_boxes.numel() == 0:
        return bounding_boxes
    device = bounding_boxes.device
    dtype = bounding_boxes.dtype if tapegrad.is_floating_point(bounding_boxes) else (
        tapegrad.float32)
    is_rotated = tv_tensors.is_rotated_bounding_format(format)
    if displacement.dtype != dtype or displacement.device != device:
        displacement = displacement.to(dtype=dtype, device=device)
    original_shape = bounding_boxes.shape
    intermediate_format = _BBF.CXCYWHR if is_rotated else _BBF.XYXY
    bounding_boxes = convert_bounding_box_format(
        bounding_boxes.clone(), old_format=format, new_format=intermediate_format).reshape(
            -1, 5 if is_rotated else 4)
    id_grid = _create_identity_grid(canvas_size, device=device, dtype=dtype)
    # the inverse map, at the box corners (the center for rotated boxes), rounded up
    inv_grid = id_grid.sub_(displacement)
    points = (bounding_boxes[:, :2] if is_rotated
              else bounding_boxes[:, [[0, 1], [2, 1], [2, 3], [0, 3]]])
    points = points.reshape(-1, 2)
    if points.is_floating_point():
        points = points.ceil_()
    index_xy = points.to(dtype=tapegrad.long)
    index_x, index_y = index_xy[:, 0], index_xy[:, 1]
    index_x = index_x.clamp(0, inv_grid.shape[2] - 1)
    index_y = index_y.clamp(0, inv_grid.shape[1] - 1)
    t_size = tapegrad.tensor(canvas_size[::-1], device=displacement.device,
                             dtype=displacement.dtype)
    transformed_points = inv_grid[0, index_y, index_x, :].add_(1).mul_(0.5 * t_size).sub_(0.5)
    if is_rotated:
        transformed_points = transformed_points.reshape(-1, 2)
        out_bboxes = tapegrad.cat([transformed_points, bounding_boxes[:, 2:]], dim=1).to(
            bounding_boxes.dtype)
    else:
        transformed_points = transformed_points.reshape(-1, 4, 2)
        out_bbox_mins, out_bbox_maxs = tapegrad.aminmax(transformed_points, dim=1)
        out_bboxes = tapegrad.cat([out_bbox_mins, out_bbox_maxs], dim=1).to(
            bounding_boxes.dtype)
    out_bboxes = clamp_bounding_boxes(out_bboxes, format=intermediate_format,
                                      canvas_size=canvas_size, clamping_mode=clamping_mode)
    return convert_bounding_box_format(out_bboxes, old_format=intermediate_format,
                                       new_format=format, inplace=False).reshape(original_shape)


@_register_kernel_internal(elastic, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _elastic_bounding_boxes_dispatch(inpt: Any, displacement: Tensor, **kwargs: Any) -> Any:
    output = elastic_bounding_boxes(inpt.as_subclass(Tensor), format=inpt.format,
                                    canvas_size=inpt.canvas_size, displacement=displacement,
                                    clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt)


def elastic_mask(mask: Tensor, displacement: Tensor, fill: _FillTypeJIT = None) -> Tensor:
    return _squeezed(elastic_image, mask, displacement=displacement,
                     interpolation=InterpolationMode.NEAREST, fill=fill)


@_register_kernel_internal(elastic, tv_tensors.Mask, tv_tensor_wrapper=False)
def _elastic_mask_dispatch(inpt: Any, displacement: Tensor, fill: _FillTypeJIT = None,
                           **kwargs: Any) -> Any:
    output = elastic_mask(inpt.as_subclass(Tensor), displacement=displacement, fill=fill)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(elastic, tv_tensors.Video)
def elastic_video(video: Tensor, displacement: Tensor,
                  interpolation: Any = InterpolationMode.BILINEAR, fill: _FillTypeJIT = None
                  ) -> Tensor:
    return elastic_image(video, displacement, interpolation=interpolation, fill=fill)


# -- center, resized, five and ten crops --------------------------------------------------------

def center_crop(inpt: Tensor, output_size: list[int]) -> Tensor:
    """The centered crop of ``output_size`` (zero-padded where larger than the image)."""
    kernel = _get_kernel(center_crop, type(inpt))
    return kernel(inpt, output_size=output_size)  # type: ignore[no-any-return]


def _center_crop_parse_output_size(output_size: Any) -> list[int]:
    if isinstance(output_size, numbers.Number):
        s = int(output_size)  # type: ignore[call-overload]
        return [s, s]
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        return [output_size[0], output_size[0]]
    return list(output_size)


def _center_crop_compute_padding(crop_height: int, crop_width: int, image_height: int,
                                 image_width: int) -> list[int]:
    return [
        (crop_width - image_width) // 2 if crop_width > image_width else 0,
        (crop_height - image_height) // 2 if crop_height > image_height else 0,
        (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
        (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
    ]


def _center_crop_compute_crop_anchor(crop_height: int, crop_width: int, image_height: int,
                                     image_width: int) -> tuple[int, int]:
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop_top, crop_left


@_register_kernel_internal(center_crop, Tensor)
@_register_kernel_internal(center_crop, tv_tensors.Image)
def center_crop_image(image: Tensor, output_size: list[int]) -> Tensor:
    crop_height, crop_width = _center_crop_parse_output_size(output_size)
    shape = image.shape
    if image.numel() == 0:
        return image.reshape(shape[:-2] + (crop_height, crop_width))
    image_height, image_width = shape[-2:]
    if crop_height > image_height or crop_width > image_width:
        padding_ltrb = _center_crop_compute_padding(crop_height, crop_width, image_height,
                                                    image_width)
        image = torch_pad(image, _parse_pad_padding(padding_ltrb), value=0.0)
        image_height, image_width = image.shape[-2:]
        if crop_width == image_width and crop_height == image_height:
            return image
    crop_top, crop_left = _center_crop_compute_crop_anchor(crop_height, crop_width,
                                                           image_height, image_width)
    return image[..., crop_top:(crop_top + crop_height), crop_left:(crop_left + crop_width)]


@_register_kernel_internal(center_crop, PIL.Image.Image)
def _center_crop_image_pil(image: Any, output_size: list[int]) -> Any:
    crop_height, crop_width = _center_crop_parse_output_size(output_size)
    image_height, image_width = _get_size_image_pil(image)
    if crop_height > image_height or crop_width > image_width:
        padding_ltrb = _center_crop_compute_padding(crop_height, crop_width, image_height,
                                                    image_width)
        image = _pad_image_pil(image, padding_ltrb, fill=0)
        image_height, image_width = _get_size_image_pil(image)
        if crop_width == image_width and crop_height == image_height:
            return image
    crop_top, crop_left = _center_crop_compute_crop_anchor(crop_height, crop_width,
                                                           image_height, image_width)
    return _crop_image_pil(image, crop_top, crop_left, crop_height, crop_width)


def center_crop_keypoints(inpt: Tensor, canvas_size: tuple[int, int], output_size: list[int]
                          ) -> tuple[Tensor, tuple[int, int]]:
    crop_height, crop_width = _center_crop_parse_output_size(output_size)
    crop_top, crop_left = _center_crop_compute_crop_anchor(crop_height, crop_width,
                                                           *canvas_size)
    return crop_keypoints(inpt, top=crop_top, left=crop_left, height=crop_height,
                          width=crop_width)


@_register_kernel_internal(center_crop, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _center_crop_keypoints_dispatch(inpt: Any, output_size: list[int]) -> Any:
    output, canvas_size = center_crop_keypoints(inpt.as_subclass(Tensor),
                                                canvas_size=inpt.canvas_size,
                                                output_size=output_size)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def center_crop_bounding_boxes(bounding_boxes: Tensor, format: Any,
                               canvas_size: tuple[int, int], output_size: list[int],
                               clamping_mode: CLAMPING_MODE_TYPE = "soft"
                               ) -> tuple[Tensor, tuple[int, int]]:
    crop_height, crop_width = _center_crop_parse_output_size(output_size)
    crop_top, crop_left = _center_crop_compute_crop_anchor(crop_height, crop_width,
                                                           *canvas_size)
    return crop_bounding_boxes(bounding_boxes, format, top=crop_top, left=crop_left,
                               height=crop_height, width=crop_width,
                               clamping_mode=clamping_mode)


@_register_kernel_internal(center_crop, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _center_crop_bounding_boxes_dispatch(inpt: Any, output_size: list[int]) -> Any:
    output, canvas_size = center_crop_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, canvas_size=inpt.canvas_size,
        output_size=output_size, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


@_register_kernel_internal(center_crop, tv_tensors.Mask)
def center_crop_mask(mask: Tensor, output_size: list[int]) -> Tensor:
    return _squeezed(center_crop_image, mask, output_size=output_size)


@_register_kernel_internal(center_crop, tv_tensors.Video)
def center_crop_video(video: Tensor, output_size: list[int]) -> Tensor:
    return center_crop_image(video, output_size)


def resized_crop(inpt: Tensor, top: int, left: int, height: int, width: int, size: list[int],
                 interpolation: Any = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> Tensor:
    """``crop`` then ``resize`` to ``size``."""
    kernel = _get_kernel(resized_crop, type(inpt))
    return kernel(inpt, top=top, left=left, height=height,  # type: ignore[no-any-return]
                  width=width, size=size, interpolation=interpolation, antialias=antialias)


@_register_kernel_internal(resized_crop, Tensor)
@_register_kernel_internal(resized_crop, tv_tensors.Image)
def resized_crop_image(image: Tensor, top: int, left: int, height: int, width: int,
                       size: list[int], interpolation: Any = InterpolationMode.BILINEAR,
                       antialias: bool | None = True) -> Tensor:
    image = crop_image(image, top, left, height, width)
    return resize_image(image, size, interpolation=interpolation, antialias=antialias)


def _resized_crop_image_pil(image: Any, top: int, left: int, height: int, width: int,
                            size: list[int], interpolation: Any = InterpolationMode.BILINEAR
                            ) -> Any:
    image = _crop_image_pil(image, top, left, height, width)
    return _resize_image_pil(image, size, interpolation=interpolation)


@_register_kernel_internal(resized_crop, PIL.Image.Image)
def _resized_crop_image_pil_dispatch(image: Any, top: int, left: int, height: int, width: int,
                                     size: list[int],
                                     interpolation: Any = InterpolationMode.BILINEAR,
                                     antialias: bool | None = True) -> Any:
    if antialias is False:
        warnings.warn("Anti-alias option is always applied for PIL Image input. Argument "
                      "antialias is ignored.", stacklevel=2)
    return _resized_crop_image_pil(image, top=top, left=left, height=height, width=width,
                                   size=size, interpolation=interpolation)


def resized_crop_keypoints(keypoints: Tensor, top: int, left: int, height: int, width: int,
                           size: list[int]) -> tuple[Tensor, tuple[int, int]]:
    keypoints, canvas_size = crop_keypoints(keypoints, top, left, height, width)
    return resize_keypoints(keypoints, size=size, canvas_size=canvas_size)


@_register_kernel_internal(resized_crop, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def _resized_crop_keypoints_dispatch(inpt: Any, top: int, left: int, height: int, width: int,
                                     size: list[int], **kwargs: Any) -> Any:
    output, canvas_size = resized_crop_keypoints(inpt.as_subclass(Tensor), top=top, left=left,
                                                 height=height, width=width, size=size)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def resized_crop_bounding_boxes(bounding_boxes: Tensor, format: Any, top: int, left: int,
                                height: int, width: int, size: list[int],
                                clamping_mode: CLAMPING_MODE_TYPE = "soft"
                                ) -> tuple[Tensor, tuple[int, int]]:
    bounding_boxes, canvas_size = crop_bounding_boxes(bounding_boxes, format, top, left, height,
                                                      width, clamping_mode=clamping_mode)
    return resize_bounding_boxes(bounding_boxes, format=format, canvas_size=canvas_size,
                                 size=size, clamping_mode=clamping_mode)


@_register_kernel_internal(resized_crop, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def _resized_crop_bounding_boxes_dispatch(inpt: Any, top: int, left: int, height: int,
                                          width: int, size: list[int], **kwargs: Any) -> Any:
    output, canvas_size = resized_crop_bounding_boxes(
        inpt.as_subclass(Tensor), format=inpt.format, top=top, left=left, height=height,
        width=width, size=size, clamping_mode=inpt.clamping_mode)
    return tv_tensors.wrap(output, like=inpt, canvas_size=canvas_size)


def resized_crop_mask(mask: Tensor, top: int, left: int, height: int, width: int,
                      size: list[int]) -> Tensor:
    mask = crop_mask(mask, top, left, height, width)
    return resize_mask(mask, size)


@_register_kernel_internal(resized_crop, tv_tensors.Mask, tv_tensor_wrapper=False)
def _resized_crop_mask_dispatch(inpt: Any, top: int, left: int, height: int, width: int,
                                size: list[int], **kwargs: Any) -> Any:
    output = resized_crop_mask(inpt.as_subclass(Tensor), top=top, left=left, height=height,
                               width=width, size=size)
    return tv_tensors.wrap(output, like=inpt)


@_register_kernel_internal(resized_crop, tv_tensors.Video)
def resized_crop_video(video: Tensor, top: int, left: int, height: int, width: int,
                       size: list[int], interpolation: Any = InterpolationMode.BILINEAR,
                       antialias: bool | None = True) -> Tensor:
    return resized_crop_image(video, top, left, height, width, antialias=antialias, size=size,
                              interpolation=interpolation)


def five_crop(inpt: Tensor, size: list[int]) -> tuple:
    """The four corner crops and the center crop of ``size``."""
    kernel = _get_kernel(five_crop, type(inpt))
    return kernel(inpt, size=size)  # type: ignore[no-any-return]


def _parse_five_crop_size(size: Any) -> list[int]:
    if isinstance(size, numbers.Number):
        s = int(size)  # type: ignore[call-overload]
        size = [s, s]
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = [size[0], size[0]]
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return size  # type: ignore[no-any-return]


@_register_five_ten_crop_kernel_internal(five_crop, Tensor)
@_register_five_ten_crop_kernel_internal(five_crop, tv_tensors.Image)
def five_crop_image(image: Tensor, size: list[int]) -> tuple:
    crop_height, crop_width = _parse_five_crop_size(size)
    image_height, image_width = image.shape[-2:]
    return _five_crops(image, size, crop_height, crop_width, image_height, image_width,
                       crop_image, center_crop_image)


@_register_five_ten_crop_kernel_internal(five_crop, PIL.Image.Image)
def _five_crop_image_pil(image: Any, size: list[int]) -> tuple:
    crop_height, crop_width = _parse_five_crop_size(size)
    image_height, image_width = _get_size_image_pil(image)
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = _crop_image_pil(image, 0, 0, crop_height, crop_width)
    tr = _crop_image_pil(image, 0, image_width - crop_width, crop_height, crop_width)
    bl = _crop_image_pil(image, image_height - crop_height, 0, crop_height, crop_width)
    br = _crop_image_pil(image, image_height - crop_height, image_width - crop_width,
                         crop_height, crop_width)
    center = _center_crop_image_pil(image, [crop_height, crop_width])
    return tl, tr, bl, br, center


@_register_five_ten_crop_kernel_internal(five_crop, tv_tensors.Video)
def five_crop_video(video: Tensor, size: list[int]) -> tuple:
    return five_crop_image(video, size)


def ten_crop(inpt: Tensor, size: list[int], vertical_flip: bool = False) -> tuple:
    """``five_crop`` of the image and of its mirror."""
    kernel = _get_kernel(ten_crop, type(inpt))
    return kernel(inpt, size=size, vertical_flip=vertical_flip)  # type: ignore[no-any-return]


@_register_five_ten_crop_kernel_internal(ten_crop, Tensor)
@_register_five_ten_crop_kernel_internal(ten_crop, tv_tensors.Image)
def ten_crop_image(image: Tensor, size: list[int], vertical_flip: bool = False) -> tuple:
    non_flipped = five_crop_image(image, size)
    image = vertical_flip_image(image) if vertical_flip else horizontal_flip_image(image)
    return non_flipped + five_crop_image(image, size)


@_register_five_ten_crop_kernel_internal(ten_crop, PIL.Image.Image)
def _ten_crop_image_pil(image: Any, size: list[int], vertical_flip: bool = False) -> tuple:
    non_flipped = _five_crop_image_pil(image, size)
    image = (_vertical_flip_image_pil(image) if vertical_flip
             else _horizontal_flip_image_pil(image))
    return non_flipped + _five_crop_image_pil(image, size)


@_register_five_ten_crop_kernel_internal(ten_crop, tv_tensors.Video)
def ten_crop_video(video: Tensor, size: list[int], vertical_flip: bool = False) -> tuple:
    return ten_crop_image(video, size, vertical_flip=vertical_flip)

