"""``torchvision.transforms.functional``: the image operations behind the v1 transforms, on PIL
images and on tensors (..., C, H, W).

Every function checks its arguments as torchvision does, then hands a tensor to
``_functional_tensor`` and a PIL image to ``_functional_pil`` (Pillow computes the PIL pixels,
tapegrad's ops the tensor ones, the same ops in the same order as torchvision's, so both come
out as torchvision's). Geometry is given in pixels: ``rotate``/``affine`` build the inverse map
(``_get_inverse_affine_matrix``) about the image center, ``perspective`` solves for the 8
projective coefficients from four point pairs.

Pillow is imported only when a PIL image (or ``to_pil_image``) is met.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any

import numpy as np

import tapegrad
from tapegrad import Tensor

from . import _functional_tensor as F_t

__all__ = ["InterpolationMode", "adjust_brightness", "adjust_contrast", "adjust_gamma",
           "adjust_hue", "adjust_saturation", "adjust_sharpness", "affine", "autocontrast",
           "center_crop", "convert_image_dtype", "crop", "elastic_transform", "equalize",
           "erase", "five_crop", "gaussian_blur", "get_dimensions", "get_image_num_channels",
           "get_image_size", "hflip", "invert", "normalize", "pad", "perspective",
           "pil_to_tensor", "posterize", "resize", "resized_crop", "rgb_to_grayscale", "rotate",
           "solarize", "ten_crop", "to_grayscale", "to_pil_image", "to_tensor", "vflip"]


class InterpolationMode(Enum):
    """Interpolation modes: ``nearest``, ``nearest-exact``, ``bilinear``, ``bicubic``, ``box``,
    ``hamming`` and ``lanczos`` (the last three for PIL images only, and lanczos for tensors in
    the v2 transforms)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    # Pillow's filters
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i: int) -> InterpolationMode:
    """The mode of a Pillow filter constant (``PIL.Image.BILINEAR`` is 2, ...)."""
    return {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
            3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
            5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}[i]


# the Pillow filter constant of each mode (Pillow has one nearest filter)
pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3,
    InterpolationMode.NEAREST_EXACT: 0,
    InterpolationMode.BOX: 4,
    InterpolationMode.HAMMING: 5,
    InterpolationMode.LANCZOS: 1,
}


def _is_pil_image(img: Any) -> bool:
    """Whether ``img`` is a PIL image (if Pillow was never imported, nothing is)."""
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def _pil() -> Any:
    """The PIL half of the functions (transforms/_functional_pil.py, which imports Pillow)."""
    # _functional_pil: loaded on first use, as Pillow is (the vision extra; optional)
    from . import _functional_pil

    return _functional_pil


def _check_interpolation(interpolation: Any) -> InterpolationMode:
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    return interpolation


def get_dimensions(img: Any) -> list[int]:
    """[channels, height, width] of a PIL image or tensor."""
    if isinstance(img, Tensor):
        return F_t.get_dimensions(img)
    return _pil().get_dimensions(img)  # type: ignore[no-any-return]


def get_image_size(img: Any) -> list[int]:
    """[width, height] of a PIL image or tensor."""
    if isinstance(img, Tensor):
        return F_t.get_image_size(img)
    return _pil().get_image_size(img)  # type: ignore[no-any-return]


def get_image_num_channels(img: Any) -> int:
    """The number of channels of a PIL image or tensor."""
    if isinstance(img, Tensor):
        return F_t.get_image_num_channels(img)
    return _pil().get_image_num_channels(img)  # type: ignore[no-any-return]


def _is_numpy(img: Any) -> bool:
    return isinstance(img, np.ndarray)


def _is_numpy_image(img: Any) -> bool:
    return img.ndim in {2, 3}


def to_tensor(pic: Any) -> Tensor:
    """A PIL image or (H, W, C) ndarray as a (C, H, W) tensor; uint8 values become floats in
    [0, 1] (divided by 255), other dtypes keep their values."""
    if not (_is_pil_image(pic) or _is_numpy(pic)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if _is_numpy(pic) and not _is_numpy_image(pic):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    default_float_dtype = tapegrad.get_default_dtype()
    if isinstance(pic, np.ndarray):
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = tapegrad.from_numpy(pic.transpose((2, 0, 1))).contiguous()
        if img.dtype == tapegrad.uint8:
            return img.to(dtype=default_float_dtype).div(255)
        return img
    mode_to_nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16,
                      "F": np.float32}
    arr = np.array(pic, mode_to_nptype.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = 255 * arr
    arr = arr.reshape(pic.size[1], pic.size[0], _pil().get_image_num_channels(pic))
    chw = np.ascontiguousarray(arr.transpose(2, 0, 1))
    if chw.dtype == np.uint8:
        # x.to(float).div(255), in one step on the array: the same IEEE division
        ft = np.dtype(default_float_dtype.name)
        return tapegrad.from_numpy(np.divide(chw, ft.type(255), dtype=ft))
    return tapegrad.from_numpy(chw)


def pil_to_tensor(pic: Any) -> Tensor:
    """A PIL image as a (C, H, W) tensor of its own dtype (a copy, not rescaled)."""
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    arr = arr.reshape(pic.size[1], pic.size[0], _pil().get_image_num_channels(pic))
    return tapegrad.as_tensor(arr).permute((2, 0, 1))


def convert_image_dtype(image: Tensor, dtype: Any = tapegrad.float) -> Tensor:
    """Convert a tensor image to ``dtype``, rescaling the values (float images are in [0, 1])."""
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def _hwc_array(pic: np.ndarray) -> np.ndarray:
    """``to_pil_image``'s array as (H, W, C): a 2-d one gains a channel axis; more than 3
    dimensions or 4 channels are errors."""
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    return pic


def to_pil_image(pic: Any, mode: str | None = None) -> Any:
    """A (C, H, W) tensor or (H, W, C) ndarray as a PIL image; float values are scaled by 255.
    The mode follows from the channels and dtype unless given."""
    pil_from_array = _pil().pil_from_array
    if isinstance(pic, Tensor):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.numpy(force=True)
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    pic = _hwc_array(pic)
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        expected_mode = None
        npimg = npimg[:, :, 0]
        if npimg.dtype == np.uint8:
            expected_mode = "L"
        elif npimg.dtype == np.int16:
            expected_mode = "I;16" if sys.byteorder == "little" else "I;16B"
        elif npimg.dtype == np.int32:
            expected_mode = "I"
        elif npimg.dtype == np.float32:
            expected_mode = "F"
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        permitted_2_channel_modes = ["LA"]
        if mode is not None and mode not in permitted_2_channel_modes:
            raise ValueError(
                f"Only modes {permitted_2_channel_modes} are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        permitted_4_channel_modes = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted_4_channel_modes:
            raise ValueError(
                f"Only modes {permitted_4_channel_modes} are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        permitted_3_channel_modes = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted_3_channel_modes:
            raise ValueError(
                f"Only modes {permitted_3_channel_modes} are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return pil_from_array(npimg, mode=mode)


def normalize(tensor: Tensor, mean: list[float], std: list[float], inplace: bool = False
              ) -> Tensor:
    """(x - mean) / std, one mean and std per channel of a float tensor image."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(image_size: tuple[int, int], size: list[int] | None,
                                 max_size: int | None = None, allow_size_none: bool = False
                                 ) -> list[int]:
    """[new_h, new_w]: ``size`` both sides, or the shorter side (the longer one scaled to keep
    the aspect ratio, capped at ``max_size``)."""
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("This should never happen!!")
        if not isinstance(max_size, int):
            raise ValueError(
                f"max_size must be an integer when size is None, but got {max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    elif len(size) == 1:
        requested_new_short = size if isinstance(size, int) else size[0]
        new_short, new_long = requested_new_short, int(requested_new_short * long / short)
        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(
                    f"max_size = {max_size} must be strictly greater than the requested "
                    f"size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(img: Any, size: Any, interpolation: Any = InterpolationMode.BILINEAR,
           max_size: int | None = None, antialias: bool | None = True) -> Any:
    """Resize to ``size`` (h, w), or the shorter side to ``size`` (an int or [int]).

    Tensors resample with ``interpolate`` (antialiased for bilinear and bicubic unless
    ``antialias=False``); PIL images with Pillow's filters, always antialiased.
    """
    interpolation = _check_interpolation(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller "
                "edge, i.e. size should be an int or a sequence of length 1 in torchscript "
                "mode.")
    _, image_height, image_width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)
    if [image_height, image_width] == output_size:
        return img
    if not isinstance(img, Tensor):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument "
                          "antialias is ignored.", stacklevel=2)
        return _pil().resize(img, size=output_size,
                             interpolation=pil_modes_mapping[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value,
                      antialias=antialias)


def pad(img: Any, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Any:
    """Pad the borders by ``padding`` (all sides, (left/right, top/bottom) or (left, top,
    right, bottom)) with a constant ``fill``, or by edge, reflect or symmetric padding."""
    if not isinstance(img, Tensor):
        return _pil().pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The box of ``height`` x ``width`` at (``top``, ``left``); beyond the image is zero."""
    if not isinstance(img, Tensor):
        return _pil().crop(img, top, left, height, width)
    return F_t.crop(img, top, left, height, width)


def center_crop(img: Any, output_size: Any) -> Any:
    """The centered box of ``output_size`` (zero-padded where larger than the image)."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))  # type: ignore[call-overload]
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)  # PIL pads with 0
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img: Any, top: int, left: int, height: int, width: int, size: Any,
                 interpolation: Any = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> Any:
    """``crop`` then ``resize`` to ``size``."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img: Any) -> Any:
    """Mirror left to right."""
    if not isinstance(img, Tensor):
        return _pil().hflip(img)
    return F_t.hflip(img)


def _get_perspective_coeffs(startpoints: list[list[int]], endpoints: list[list[int]]
                            ) -> list[float]:
    """The 8 coefficients (a..h) of the projective map from ``endpoints`` back to
    ``startpoints``: x_in = (a x + b y + c) / (g x + h y + 1), y_in = (d x + e y + f) / (...),
    solved by least squares in float64 (torch's ``gels``), rounded to float32."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} "
                         f"startpoints and {len(endpoints)} endpoints.")
    a_matrix = tapegrad.zeros(2 * len(startpoints), 8, dtype=tapegrad.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints, strict=True)):
        a_matrix[2 * i, :] = tapegrad.tensor(
            [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a_matrix[2 * i + 1, :] = tapegrad.tensor(
            [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    b_matrix = tapegrad.tensor(startpoints, dtype=tapegrad.float64).view(8)
    res = tapegrad.linalg.lstsq(a_matrix, b_matrix, driver="gels").solution.to(tapegrad.float32)
    return res.tolist()  # type: ignore[no-any-return]


def perspective(img: Any, startpoints: list[list[int]], endpoints: list[list[int]],
                interpolation: Any = InterpolationMode.BILINEAR, fill: Any = None) -> Any:
    """Warp so that the four ``startpoints`` land on the four ``endpoints``."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _check_interpolation(interpolation)
    if not isinstance(img, Tensor):
        return _pil().perspective(img, coeffs, interpolation=pil_modes_mapping[interpolation],
                                  fill=fill)
    return F_t.perspective(img, coeffs, interpolation=interpolation.value, fill=fill)


def vflip(img: Any) -> Any:
    """Mirror top to bottom."""
    if not isinstance(img, Tensor):
        return _pil().vflip(img)
    return F_t.vflip(img)


def _five_crops(img: Any, size: Any, crop_height: int, crop_width: int, image_height: int,
                image_width: int, crop_fn: Callable, center_crop_fn: Callable) -> tuple:
    """``five_crop``'s (v1's and v2's) crops of ``img``, cut by ``crop_fn`` and
    ``center_crop_fn``: the four corners (top-left, top-right, bottom-left, bottom-right), then
    the center; a crop larger than the image is an error."""
    if crop_width > image_width or crop_height > image_height:
        msg = "Requested crop size {} is bigger than input size {}"
        raise ValueError(msg.format(size, (image_height, image_width)))
    tl = crop_fn(img, 0, 0, crop_height, crop_width)
    tr = crop_fn(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop_fn(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop_fn(img, image_height - crop_height, image_width - crop_width, crop_height,
                 crop_width)
    center = center_crop_fn(img, [crop_height, crop_width])
    return tl, tr, bl, br, center


def five_crop(img: Any, size: Any) -> tuple:
    """The four corner crops and the center crop of ``size``."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))  # type: ignore[call-overload]
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    return _five_crops(img, size, crop_height, crop_width, image_height, image_width, crop,
                       center_crop)


def ten_crop(img: Any, size: Any, vertical_flip: bool = False) -> tuple:
    """``five_crop`` of the image and of its mirror (horizontal, or vertical)."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))  # type: ignore[call-overload]
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first_five + five_crop(img, size)


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    """Scale the intensities (0: black, 1: unchanged)."""
    if not isinstance(img, Tensor):
        return _pil().adjust_brightness(img, brightness_factor)
    return F_t.adjust_brightness(img, brightness_factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    """Blend with the mean gray level (0: flat gray, 1: unchanged)."""
    if not isinstance(img, Tensor):
        return _pil().adjust_contrast(img, contrast_factor)
    return F_t.adjust_contrast(img, contrast_factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    """Blend with the grayscale image (0: gray, 1: unchanged)."""
    if not isinstance(img, Tensor):
        return _pil().adjust_saturation(img, saturation_factor)
    return F_t.adjust_saturation(img, saturation_factor)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Rotate the hue by ``hue_factor`` turns, in [-0.5, 0.5]."""
    if not isinstance(img, Tensor):
        return _pil().adjust_hue(img, hue_factor)
    return F_t.adjust_hue(img, hue_factor)


def adjust_gamma(img: Any, gamma: float, gain: float = 1) -> Any:
    """I_out = 255 * gain * (I_in / 255) ** gamma."""
    if not isinstance(img, Tensor):
        return _pil().adjust_gamma(img, gamma, gain)
    return F_t.adjust_gamma(img, gamma, gain)


def _get_inverse_affine_matrix(center: Any, angle: float, translate: Any, scale: float,
                               shear: Any, inverted: bool = True) -> list[float]:
    """The affine map (6 values, row-major 2x3) of rotation by ``angle`` degrees, shear, scale
    and translation about ``center``: M = T * C * RSS * C^-1 with RSS = R(a) S(sx, sy) scale,
    or its inverse (the default: output pixel to input pixel, what resampling needs)."""
    rot = math.radians(angle)
    sx = math.radians(shear[0])
    sy = math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    # RSS without scaling
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        # inverted rotation and shear, then the inverted translation about the center
        matrix = [d, -b, 0.0, -c, a, 0.0]
        matrix = [x / scale for x in matrix]
        matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
        matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
        matrix[2] += cx
        matrix[5] += cy
    else:
        matrix = [a, b, 0.0, c, d, 0.0]
        matrix = [x * scale for x in matrix]
        matrix[2] += matrix[0] * (-cx) + matrix[1] * (-cy)
        matrix[5] += matrix[3] * (-cx) + matrix[4] * (-cy)
        matrix[2] += cx + tx
        matrix[5] += cy + ty
    return matrix


def rotate(img: Any, angle: float, interpolation: Any = InterpolationMode.NEAREST,
           expand: bool = False, center: list[int] | None = None, fill: Any = None) -> Any:
    """Rotate by ``angle`` degrees counter-clockwise about ``center`` (default the image
    center); ``expand`` grows the output to hold the whole rotated image."""
    interpolation = _check_interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not isinstance(img, Tensor):
        return _pil().rotate(img, angle=angle, interpolation=pil_modes_mapping[interpolation],
                             expand=expand, center=center, fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        # the center relative to the image center
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height], strict=True)]
    # the tensor grid has y pointing down, so the angle is negated
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix=matrix, interpolation=interpolation.value, expand=expand,
                      fill=fill)


def _check_affine_args(angle: Any, translate: Any, scale: float, shear: Any) -> None:
    """``affine``'s (v1's and v2's) checks of the angle, translation, scale and shear."""
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, (list, tuple))):
        raise TypeError("Shear should be either a single value or a sequence of two values")


def _normalized_affine_args(angle: Any, translate: Any, shear: Any
                            ) -> tuple[float, Any, list[float]]:
    """``affine``'s (v1's and v2's) angle as a float, translation as a list, and shear as
    [x, y] (one number s is [s, 0], a one-value sequence [s, s])."""
    if isinstance(angle, int):
        angle = float(angle)
    if isinstance(translate, tuple):
        translate = list(translate)
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if isinstance(shear, tuple):
        shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    return angle, translate, shear


def affine(img: Any, angle: float, translate: list[int], scale: float, shear: Any,
           interpolation: Any = InterpolationMode.NEAREST, fill: Any = None,
           center: list[int] | None = None) -> Any:
    """Rotate by ``angle`` degrees, translate by ``translate`` pixels, scale and shear (in
    degrees, along x and y) about ``center``, keeping the image size."""
    interpolation = _check_interpolation(interpolation)
    _check_affine_args(angle, translate, scale, shear)
    angle, translate, shear = _normalized_affine_args(angle, translate, shear)
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _, height, width = get_dimensions(img)
    if not isinstance(img, Tensor):
        # PIL's transform takes the center in pixels (0, 0 the top-left corner)
        if center is None:
            center = [width * 0.5, height * 0.5]  # type: ignore[list-item]
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return _pil().affine(img, matrix=matrix, interpolation=pil_modes_mapping[interpolation],
                             fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height], strict=True)]
    translate_f = [1.0 * t for t in translate]
    matrix = _get_inverse_affine_matrix(center_f, angle, translate_f, scale, shear)
    return F_t.affine(img, matrix=matrix, interpolation=interpolation.value, fill=fill)


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """A PIL image in grayscale: mode L (1 channel) or three equal RGB channels (3)."""
    if _is_pil_image(img):
        return _pil().to_grayscale(img, num_output_channels)
    raise TypeError("Input should be PIL Image")


def rgb_to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """L = 0.2989 R + 0.587 G + 0.114 B, as 1 or 3 channels."""
    if not isinstance(img, Tensor):
        return _pil().to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
          ) -> Tensor:
    """Set the box of ``h`` x ``w`` at (``i``, ``j``) to ``v``."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def _blur_kernel_size_and_default_sigma(kernel_size: Any, sigma: Any) -> tuple[Any, Any]:
    """``gaussian_blur``'s kernel size (an int stands for both sides) checked to be two odd
    positive integers, and ``sigma``, by default 0.3 ((k - 1) 0.5 - 1) + 0.8 per side."""
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    elif len(kernel_size) != 2:
        raise ValueError(
            f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(
                f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    return kernel_size, sigma


def gaussian_blur(img: Any, kernel_size: Any, sigma: Any = None) -> Any:
    """Blur with a Gaussian of odd ``kernel_size`` and ``sigma`` (default 0.3 ((k - 1) 0.5 -
    1) + 0.8, as OpenCV), reflecting at the borders. PIL images go through a tensor."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(
            f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    kernel_size, sigma = _blur_kernel_size_and_default_sigma(kernel_size, sigma)
    if sigma is not None and not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(
            f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    t_img = img
    if not isinstance(img, Tensor):
        if not _is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    output = F_t.gaussian_blur(t_img, kernel_size, sigma)
    if not isinstance(img, Tensor):
        output = to_pil_image(output, mode=img.mode)
    return output


def invert(img: Any) -> Any:
    """max - x: the negative image."""
    if not isinstance(img, Tensor):
        return _pil().invert(img)
    return F_t.invert(img)


def posterize(img: Any, bits: int) -> Any:
    """Keep the ``bits`` (0 to 8) most significant bits of each uint8 value."""
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    if not isinstance(img, Tensor):
        return _pil().posterize(img, bits)
    return F_t.posterize(img, bits)


def solarize(img: Any, threshold: float) -> Any:
    """Invert the values at or above ``threshold``."""
    if not isinstance(img, Tensor):
        return _pil().solarize(img, threshold)
    return F_t.solarize(img, threshold)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    """Blend with a smoothed image (0: smoothed, 1: unchanged, 2: sharper)."""
    if not isinstance(img, Tensor):
        return _pil().adjust_sharpness(img, sharpness_factor)
    return F_t.adjust_sharpness(img, sharpness_factor)


def autocontrast(img: Any) -> Any:
    """Stretch each channel so that its darkest value is black and its lightest white."""
    if not isinstance(img, Tensor):
        return _pil().autocontrast(img)
    return F_t.autocontrast(img)


def equalize(img: Any) -> Any:
    """Equalize the histogram of each channel (uint8), as PIL's ``ImageOps.equalize``."""
    if not isinstance(img, Tensor):
        return _pil().equalize(img)
    return F_t.equalize(img)


def elastic_transform(img: Any, displacement: Tensor,
                      interpolation: Any = InterpolationMode.BILINEAR, fill: Any = None) -> Any:
    """Move every pixel by ``displacement`` (1, H, W, 2), in normalized [-1, 1] units."""
    if isinstance(interpolation, int):
        warnings.warn("Argument interpolation should be of type InterpolationMode instead of "
                      "int. Please, use InterpolationMode enum.", stacklevel=2)
        interpolation = _interpolation_modes_from_int(interpolation)
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    t_img = img
    if not isinstance(img, Tensor):
        if not _is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    shape = t_img.shape
    shape = (1,) + shape[-2:] + (2,)
    if shape != displacement.shape:
        raise ValueError(
            f"Argument displacement shape should be {shape}, but given {displacement.shape}")
    output = F_t.elastic_transform(t_img, displacement, interpolation=interpolation.value,
                                   fill=fill)
    if not isinstance(img, Tensor):
        output = to_pil_image(output, mode=img.mode)
    return output
