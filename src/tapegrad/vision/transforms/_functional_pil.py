"""The PIL-image kernels of ``transforms.functional``: each asks Pillow (``Image``,
``ImageOps``, ``ImageEnhance``) for what torchvision asks it, so the pixels are Pillow's own.

Pillow is the ``vision`` extra; this module imports it, and only code that handles PIL images
imports this module.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from ._functional_tensor import _check_padding_mode

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
           "adjust_saturation", "adjust_sharpness", "affine", "autocontrast", "crop",
           "equalize", "get_dimensions", "get_image_num_channels", "get_image_size", "hflip",
           "invert", "pad", "perspective", "posterize", "resize", "rotate", "solarize",
           "to_grayscale", "vflip"]


def _is_pil_image(img: Any) -> bool:
    return isinstance(img, Image.Image)


def _check(img: Any) -> None:
    if not _is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def pil_from_array(obj: np.ndarray, mode: str) -> Any:
    """``Image.fromarray(obj, mode)`` as Pillow before 11.3 did it: the bytes of ``obj`` read
    in ``mode`` (a conversion, where Pillow 11.3 infers the mode from the array instead)."""
    shape = obj.shape
    size = (1 if obj.ndim == 1 else shape[1], shape[0])
    data = obj if obj.flags.c_contiguous else obj.tobytes()
    return Image.frombuffer(mode, size, data, "raw", mode, 0, 1)


def get_dimensions(img: Any) -> list[int]:
    """[channels, height, width] of a PIL image."""
    if _is_pil_image(img):
        width, height = img.size
        return [len(img.getbands()), height, width]
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_size(img: Any) -> list[int]:
    """[width, height] of a PIL image."""
    if _is_pil_image(img):
        return list(img.size)
    raise TypeError(f"Unexpected type {type(img)}")


def get_image_num_channels(img: Any) -> int:
    """The number of bands of a PIL image."""
    if _is_pil_image(img):
        return len(img.getbands())
    raise TypeError(f"Unexpected type {type(img)}")


def hflip(img: Any) -> Any:
    _check(img)
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img: Any) -> Any:
    _check(img)
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    _check(img)
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    _check(img)
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    _check(img)
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Shift the hue channel (in HSV, uint8) by ``hue_factor * 255``, wrapping around."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check(img)
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    # uint8 addition wraps around, which is what a hue shift wants
    with np.errstate(over="ignore"):
        np_h += np.int32(hue_factor * 255).astype(np.uint8)
    h = pil_from_array(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(input_mode)


def adjust_gamma(img: Any, gamma: float, gain: float = 1.0) -> Any:
    """Map every value v to ``(255 + 1 - 1e-3) * gain * (v / 255) ** gamma`` with a table."""
    _check(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    input_mode = img.mode
    img = img.convert("RGB")
    gamma_map = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
    return img.point(gamma_map).convert(input_mode)


def _parse_fill(fill: Any, img: Any, name: str = "fillcolor") -> dict[str, Any]:
    """The fill argument as Pillow wants it: one int per band (a float for mode F)."""
    num_channels = get_image_num_channels(img)
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            msg = ("The number of elements in 'fill' does not match the number of channels of "
                   "the image ({} != {})")
            raise ValueError(msg.format(len(fill), num_channels))
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def pad(img: Any, padding: int | Sequence[int], fill: Any = 0,
        padding_mode: str = "constant") -> Any:
    """Pad with a constant (``ImageOps.expand``) or NumPy's edge/reflect/symmetric padding; a
    negative padding crops."""
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    _check_padding_mode(padding, padding_mode)
    if isinstance(padding, list):
        padding = tuple(padding)
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]

    if padding_mode == "constant":
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=padding, **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=padding, **opts)

    if isinstance(padding, tuple) and len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    elif isinstance(padding, tuple):
        left, top, right, bottom = padding
    else:
        left = right = top = bottom = padding
    p = [left, top, right, bottom]
    cropping = -np.minimum(p, 0)
    if cropping.any():
        c_left, c_top, c_right, c_bottom = cropping
        img = img.crop((c_left, c_top, img.width - c_right, img.height - c_bottom))
    left, top, right, bottom = np.maximum(p, 0)

    if img.mode == "P":
        palette = img.getpalette()
        arr = np.pad(np.asarray(img), ((top, bottom), (left, right)), mode=padding_mode)  # type: ignore[call-overload]
        out = Image.fromarray(arr)
        out.putpalette(palette)
        return out
    arr = np.asarray(img)
    if arr.ndim == 3:
        arr = np.pad(arr, ((top, bottom), (left, right), (0, 0)),
                     padding_mode)  # type: ignore[call-overload]
    if arr.ndim == 2:
        arr = np.pad(arr, ((top, bottom), (left, right)), padding_mode)  # type: ignore[call-overload]
    return Image.fromarray(arr)


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The box [left, left + width) x [top, top + height); outside the image is black."""
    _check(img)
    return img.crop((left, top, left + width, top + height))


def resize(img: Any, size: list[int], interpolation: int = 2
           ) -> Any:
    """Resize to ``size`` = [height, width] with Pillow's filter ``interpolation``."""
    _check(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def affine(img: Any, matrix: list[float], interpolation: int = 0,
           fill: Any = None) -> Any:
    """Pillow's affine transform; ``matrix`` maps output pixels to input pixels."""
    _check(img)
    return img.transform(img.size, Image.Transform.AFFINE, matrix, interpolation,
                         **_parse_fill(fill, img))


def rotate(img: Any, angle: float, interpolation: int = 0,
           expand: bool = False, center: Any = None, fill: Any = None) -> Any:
    """Pillow's rotation by ``angle`` degrees counter-clockwise."""
    _check(img)
    return img.rotate(angle, interpolation, expand, center, **_parse_fill(fill, img))


def perspective(img: Any, perspective_coeffs: list[float],
                interpolation: int = 3, fill: Any = None) -> Any:
    """Pillow's perspective transform with the 8 coefficients of the output-to-input map."""
    _check(img)
    return img.transform(img.size, Image.Transform.PERSPECTIVE, perspective_coeffs, interpolation,
                         **_parse_fill(fill, img))


def to_grayscale(img: Any, num_output_channels: int) -> Any:
    """Mode L (``num_output_channels=1``) or the L band three times as RGB (3)."""
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        np_img = np.array(img.convert("L"), dtype=np.uint8)
        return pil_from_array(np.dstack([np_img, np_img, np_img]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img: Any) -> Any:
    _check(img)
    return ImageOps.invert(img)


def posterize(img: Any, bits: int) -> Any:
    _check(img)
    return ImageOps.posterize(img, bits)


def solarize(img: Any, threshold: int) -> Any:
    _check(img)
    return ImageOps.solarize(img, threshold)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    _check(img)
    return ImageEnhance.Sharpness(img).enhance(sharpness_factor)


def autocontrast(img: Any) -> Any:
    _check(img)
    return ImageOps.autocontrast(img)


def equalize(img: Any) -> Any:
    _check(img)
    return ImageOps.equalize(img)
