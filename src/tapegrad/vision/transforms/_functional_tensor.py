"""The tensor kernels of ``transforms.functional`` (v1): images are tensors of shape
(..., C, H, W), uint8 in [0, 255] or floating in [0, 1].

Each kernel does what torchvision's does, in the same ops and the same order, so that the
numbers are torch's: colors blend as ``ratio * a + (1 - ratio) * b`` in float32 then cast back,
geometry builds a sampling grid (``_gen_affine_grid``, ``_perspective_grid``) for
``grid_sample``, blurs are depthwise ``conv2d`` after a reflection pad, and integer images go
through float32 and are rounded back (``_cast_squeeze_in`` / ``_cast_squeeze_out``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import tapegrad
from tapegrad import Tensor
from tapegrad.nn.functional import conv2d, grid_sample, interpolate
from tapegrad.nn.functional import pad as torch_pad

_INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")


def _is_tensor_a_torch_image(x: Tensor) -> bool:
    return x.ndim >= 2


def _assert_image_tensor(img: Tensor) -> None:
    if not _is_tensor_a_torch_image(img):
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img: Tensor) -> list[int]:
    """[channels, height, width] of a (..., C, H, W) or (H, W) tensor."""
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def get_image_size(img: Tensor) -> list[int]:
    """[width, height]."""
    _assert_image_tensor(img)
    return [img.shape[-1], img.shape[-2]]


def get_image_num_channels(img: Tensor) -> int:
    _assert_image_tensor(img)
    if img.ndim == 2:
        return 1
    elif img.ndim > 2:
        return img.shape[-3]
    raise TypeError(f"Input ndim should be 2 or more. Got {img.ndim}")


def _max_value(dtype: Any) -> int:
    """The value of full intensity: 255 for uint8, the dtype's maximum for integers, 1 else."""
    return {"uint8": 255, "int8": 127, "int16": 32767, "uint16": 65535,
            "int32": 2147483647, "int64": 9223372036854775807}.get(dtype.name, 1)


def _assert_channels(img: Tensor, permitted: list[int]) -> None:
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(
            f"Input image tensor permitted channel values are {permitted}, but found {c}")


def _assert_3d(img: Tensor) -> None:
    if img.ndim < 3:
        raise TypeError(
            f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")


def _assert_color_image(img: Tensor) -> None:
    """The checks of the color ops: an image tensor of at least 3 dimensions, with 1 or 3
    channels."""
    _assert_image_tensor(img)
    _assert_3d(img)
    _assert_channels(img, [1, 3])


def convert_image_dtype(image: Tensor, dtype: Any = tapegrad.float) -> Tensor:
    """Change the dtype and rescale: float images span [0, 1], integer ones [0, max]."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if tapegrad.tensor(0, dtype=dtype).is_floating_point():
            return image.to(dtype)
        if (image.dtype == tapegrad.float32 and dtype in (tapegrad.int32, tapegrad.int64)) or (
                image.dtype == tapegrad.float64 and dtype == tapegrad.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # a value just below max + 1 so that 1.0 maps to max and the bins are equal
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if tapegrad.tensor(0, dtype=dtype).is_floating_point():
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return tapegrad.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def vflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    return img.flip(-2)


def hflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    return img.flip(-1)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    """The box [top, top + height) x [left, left + width); outside the image is zero."""
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right = left + width
    bottom = top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                        max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
    """L = 0.2989 R + 0.587 G + 0.114 B (ITU-R 601-2 luma), in the image's dtype."""
    _assert_3d(img)
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img: Tensor, brightness_factor: float) -> Tensor:
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    return _blend(img, tapegrad.zeros_like(img), brightness_factor)


def adjust_contrast(img: Tensor, contrast_factor: float) -> Tensor:
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [3, 1])
    c = get_dimensions(img)[0]
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    gray = rgb_to_grayscale(img) if c == 3 else img
    mean = tapegrad.mean(gray.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor image")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:  # as PIL: a gray image has no hue
        return img
    orig_dtype = img.dtype
    img = convert_image_dtype(img, tapegrad.float32)
    h, s, v = _rgb2hsv(img).unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    img_hue_adj = _hsv2rgb(tapegrad.stack((h, s, v), dim=-3))
    return convert_image_dtype(img_hue_adj, orig_dtype)


def adjust_saturation(img: Tensor, saturation_factor: float) -> Tensor:
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:  # as PIL
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_gamma(img: Tensor, gamma: float, gain: float = 1) -> Tensor:
    """gain * img ** gamma on [0, 1] values, clamped."""
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be a Tensor.")
    _assert_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    result = img
    dtype = img.dtype
    if not tapegrad.is_floating_point(img):
        result = convert_image_dtype(result, tapegrad.float32)
    result = (gain * result.pow(gamma)).clamp(0, 1)
    return convert_image_dtype(result, dtype)


def _rgb2hsv(img: Tensor) -> Tensor:
    """RGB in [0, 1] to HSV in [0, 1] (hue a fraction of the circle)."""
    r, g, b = img.unbind(dim=-3)
    maxc = tapegrad.max(img, dim=-3).values
    minc = tapegrad.min(img, dim=-3).values
    eqc = maxc == minc  # gray: no hue, no saturation
    cr = maxc - minc
    ones = tapegrad.ones_like(maxc)
    s = cr / tapegrad.where(eqc, ones, maxc)
    cr_divisor = tapegrad.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = hr + hg + hb
    h = tapegrad.fmod((h / 6.0 + 1.0), 1.0)
    return tapegrad.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img: Tensor) -> Tensor:
    """HSV back to RGB: the sector i = floor(6 h) picks which of v, p, q, t each channel is."""
    h, s, v = img.unbind(dim=-3)
    i = tapegrad.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(dtype=tapegrad.int32)
    p = tapegrad.clamp((v * (1.0 - s)), 0.0, 1.0)
    q = tapegrad.clamp((v * (1.0 - s * f)), 0.0, 1.0)
    t = tapegrad.clamp((v * (1.0 - s * (1.0 - f))), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == tapegrad.arange(6, device=i.device).view(-1, 1, 1)
    a1 = tapegrad.stack((v, q, p, p, t, v), dim=-3)
    a2 = tapegrad.stack((t, v, v, q, p, p), dim=-3)
    a3 = tapegrad.stack((p, p, t, v, v, q), dim=-3)
    a4 = tapegrad.stack((a1, a2, a3), dim=-4)
    return tapegrad.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def _pad_symmetric(img: Tensor, padding: list[int]) -> Tensor:
    """Mirror padding that repeats the edge pixel (NumPy's 'symmetric'), by index gathers; a
    negative padding crops. ``padding`` is [left, right, top, bottom]."""
    if padding[0] < 0 or padding[1] < 0 or padding[2] < 0 or padding[3] < 0:
        crop_left, crop_right, crop_top, crop_bottom = [-min(x, 0) for x in padding]
        img = img[..., crop_top:img.shape[-2] - crop_bottom,
                  crop_left:img.shape[-1] - crop_right]
        padding = [max(x, 0) for x in padding]
    in_sizes = img.size()
    x_indices = tapegrad.tensor(list(range(padding[0] - 1, -1, -1)) + list(range(in_sizes[-1]))
                                + [-(i + 1) for i in range(padding[1])], device=img.device)
    y_indices = tapegrad.tensor(list(range(padding[2] - 1, -1, -1)) + list(range(in_sizes[-2]))
                                + [-(i + 1) for i in range(padding[3])], device=img.device)
    ndim = img.ndim
    if ndim == 3:
        return img[:, y_indices[:, None], x_indices[None, :]]
    elif ndim == 4:
        return img[:, :, y_indices[:, None], x_indices[None, :]]
    raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")


def _parse_pad_padding(padding: int | list[int]) -> list[int]:
    """1, 2 or 4 values (left, top, right, bottom) as [left, right, top, bottom]."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _check_padding_mode(padding: Any, padding_mode: Any) -> None:
    """The checks ``pad`` makes for PIL images and tensors after those of the padding's and the
    fill's types, in torchvision's order: a string mode, a 1, 2 or 4 long padding sequence, and
    a known mode."""
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (list, tuple)) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


def pad(img: Tensor, padding: int | list[int], fill: float | None = 0,
        padding_mode: str = "constant") -> Tensor:
    """Pad the last two dims: constant ``fill``, edge, reflect or symmetric."""
    _assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    _check_padding_mode(padding, padding_mode)
    if isinstance(padding, tuple):
        padding = list(padding)
    p = _parse_pad_padding(padding)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    # reflect and replicate take floating tensors only (the copied integers stay exact)
    req_dtypes = [img.dtype] if padding_mode == "constant" else [tapegrad.float32,
                                                                  tapegrad.float64]
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, req_dtypes)
    if padding_mode in ("reflect", "replicate"):
        img = torch_pad(img, p, mode=padding_mode)
    else:
        padded = _constant_pad_arrays(img, p, fill)
        img = padded if padded is not None else torch_pad(img, p, mode=padding_mode,
                                                          value=float(fill))
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def resize(img: Tensor, size: list[int], interpolation: str = "bilinear",
           antialias: bool | None = True) -> Tensor:
    """``interpolate`` to ``size`` = [height, width]; integer images through float32."""
    _assert_image_tensor(img)
    if isinstance(size, tuple):
        size = list(size)
    if antialias is None:
        antialias = False
    if antialias and interpolation not in ["bilinear", "bicubic"]:
        # antialias only applies to bilinear and bicubic; it is ignored for the other modes
        antialias = False
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(
        img, [tapegrad.float32, tapegrad.float64])
    align_corners = False if interpolation in ["bilinear", "bicubic"] else None
    img = interpolate(img, size=size, mode=interpolation, align_corners=align_corners,
                      antialias=antialias)
    if interpolation == "bicubic" and out_dtype == tapegrad.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast=need_cast, need_squeeze=need_squeeze,
                             out_dtype=out_dtype)


def _assert_grid_transform_inputs(img: Tensor, matrix: list[float] | None, interpolation: str,
                                  fill: Any, supported_interpolation_modes: list[str],
                                  coeffs: list[float] | None = None) -> None:
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor")
    _assert_image_tensor(img)
    if matrix is not None and not isinstance(matrix, list):
        raise TypeError("Argument matrix should be a list")
    if matrix is not None and len(matrix) != 6:
        raise ValueError("Argument matrix should have 6 float values")
    if coeffs is not None and len(coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    if fill is not None and not isinstance(fill, (int, float, tuple, list)):
        warnings.warn("Argument fill should be either int, float, tuple or list", stacklevel=2)
    num_channels = get_dimensions(img)[0]
    if fill is not None and isinstance(fill, (tuple, list)) and 1 < len(fill) != num_channels:
        msg = ("The number of elements in 'fill' cannot broadcast to match the number of "
               "channels of the image ({} != {})")
        raise ValueError(msg.format(len(fill), num_channels))
    if interpolation not in supported_interpolation_modes:
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")


def _cast_squeeze_in(img: Tensor, req_dtypes: list[Any]) -> tuple[Tensor, bool, bool, Any]:
    """A 4-D tensor of the first of ``req_dtypes`` unless it already has one of them."""
    need_squeeze = False
    if img.ndim < 4:
        img = img.unsqueeze(dim=0)
        need_squeeze = True
    out_dtype = img.dtype
    need_cast = False
    if out_dtype not in req_dtypes:
        need_cast = True
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img: Tensor, need_cast: bool, need_squeeze: bool, out_dtype: Any
                      ) -> Tensor:
    """Undo ``_cast_squeeze_in``: integers are rounded before the cast."""
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype.name in _INT_DTYPES:
            img = tapegrad.round(img)
        img = img.to(out_dtype)
    return img


def _apply_grid_transform(img: Tensor, grid: Tensor, mode: str, fill: Any) -> Tensor:
    """``grid_sample`` the image at ``grid``; with a fill, a ones channel sampled along tells
    which output pixels came from outside the image."""
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        mask = tapegrad.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype,
                             device=img.device)
        img = tapegrad.cat((img, mask), dim=1)
    img = grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :]
        img = img[:, :-1, :, :]
        mask = mask.expand_as(img)
        fill_list, len_fill = ((fill, len(fill)) if isinstance(fill, (tuple, list))
                               else ([float(fill)], 1))
        fill_img = tapegrad.tensor(fill_list, dtype=img.dtype, device=img.device).view(
            1, len_fill, 1, 1).expand_as(img)
        if mode == "nearest":
            mask = mask < 0.5
            img[mask] = fill_img[mask]
        else:  # bilinear: blend towards the fill as the ones channel fades
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def _small_matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for a short inner dim (3: homogeneous coordinates), summed term by term in
    order, as torch's kernel sums such products (a BLAS product fuses them differently)."""
    if b.ndim == 3:
        b = b[0]
    out = a[..., 0:1] * b[0]
    for k in range(1, b.shape[0]):
        out = out + a[..., k:k + 1] * b[k]
    return out


def _gen_affine_grid(theta: Tensor, w: int, h: int, ow: int, oh: int) -> Tensor:
    """The (1, oh, ow, 2) grid of an affine map ``theta`` (1, 2, 3) given in pixels about the
    image center: the output pixel centers, mapped, then normalized by the input size."""
    d = 0.5
    base_grid = tapegrad.empty(1, oh, ow, 3, dtype=theta.dtype, device=theta.device)
    x_grid = tapegrad.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, device=theta.device)
    base_grid[..., 0].copy_(x_grid)
    y_grid = tapegrad.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh,
                               device=theta.device).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)
    base_grid[..., 2].fill_(1)
    rescaled_theta = theta.transpose(1, 2) / tapegrad.tensor(
        [0.5 * w, 0.5 * h], dtype=theta.dtype, device=theta.device)
    output_grid = _small_matmul(base_grid.view(1, oh * ow, 3), rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


def affine(img: Tensor, matrix: list[float], interpolation: str = "nearest",
           fill: Any = None) -> Tensor:
    """Resample with the inverse affine ``matrix`` (output to input, about the center)."""
    _assert_grid_transform_inputs(img, matrix, interpolation, fill, ["nearest", "bilinear"])
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    theta = tapegrad.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    shape = img.shape
    grid = _gen_affine_grid(theta, w=shape[-1], h=shape[-2], ow=shape[-1], oh=shape[-2])
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _compute_affine_output_size(matrix: list[float], w: int, h: int) -> tuple[int, int]:
    """(width, height) of the box holding the image's four corners after the map."""
    pts = tapegrad.tensor([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                           [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]])
    theta = tapegrad.tensor(matrix, dtype=tapegrad.float).view(2, 3)
    new_pts = _small_matmul(pts, theta.T)
    min_vals, _ = new_pts.min(dim=0)
    max_vals, _ = new_pts.max(dim=0)
    # shift to the top-left corner origin
    min_vals += tapegrad.tensor((w * 0.5, h * 0.5))
    max_vals += tapegrad.tensor((w * 0.5, h * 0.5))
    # truncate at 1e-4 first, so that 15.00004 does not round up to 16
    tol = 1e-4
    cmax = tapegrad.ceil((max_vals / tol).trunc_() * tol)
    cmin = tapegrad.floor((min_vals / tol).trunc_() * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def rotate(img: Tensor, matrix: list[float], interpolation: str = "nearest",
           expand: bool = False, fill: Any = None) -> Tensor:
    _assert_grid_transform_inputs(img, matrix, interpolation, fill, ["nearest", "bilinear"])
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = _compute_affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    theta = tapegrad.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _perspective_grid(coeffs: list[float], ow: int, oh: int, dtype: Any, device: Any,
                      steps_dtype: Any = None) -> Tensor:
    """The grid of the projective map (a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (...),
    at the output pixel centers, normalized. The centers are spaced in ``steps_dtype`` (v1 the
    default dtype, v2 the grid's) before they are copied into the grid."""
    theta1 = tapegrad.tensor([[[coeffs[0], coeffs[1], coeffs[2]],
                               [coeffs[3], coeffs[4], coeffs[5]]]], dtype=dtype, device=device)
    theta2 = tapegrad.tensor([[[coeffs[6], coeffs[7], 1.0], [coeffs[6], coeffs[7], 1.0]]],
                             dtype=dtype, device=device)
    d = 0.5
    base_grid = tapegrad.empty(1, oh, ow, 3, dtype=dtype, device=device)
    x_grid = tapegrad.linspace(d, ow * 1.0 + d - 1.0, steps=ow, device=device, dtype=steps_dtype)
    base_grid[..., 0].copy_(x_grid)
    y_grid = tapegrad.linspace(d, oh * 1.0 + d - 1.0, steps=oh, device=device,
                               dtype=steps_dtype).unsqueeze_(-1)
    base_grid[..., 1].copy_(y_grid)
    base_grid[..., 2].fill_(1)
    rescaled_theta1 = theta1.transpose(1, 2) / tapegrad.tensor([0.5 * ow, 0.5 * oh],
                                                               dtype=dtype, device=device)
    output_grid1 = _small_matmul(base_grid.view(1, oh * ow, 3), rescaled_theta1)
    output_grid2 = _small_matmul(base_grid.view(1, oh * ow, 3), theta2.transpose(1, 2))
    output_grid = output_grid1 / output_grid2 - 1.0
    return output_grid.view(1, oh, ow, 2)


def perspective(img: Tensor, perspective_coeffs: list[float], interpolation: str = "bilinear",
                fill: Any = None) -> Tensor:
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor.")
    _assert_image_tensor(img)
    _assert_grid_transform_inputs(img, matrix=None, interpolation=interpolation, fill=fill,
                                  supported_interpolation_modes=["nearest", "bilinear"],
                                  coeffs=perspective_coeffs)
    ow, oh = img.shape[-1], img.shape[-2]
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    grid = _perspective_grid(perspective_coeffs, ow=ow, oh=oh, dtype=dtype, device=img.device)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _get_gaussian_kernel1d(kernel_size: int, sigma: float, dtype: Any, device: Any) -> Tensor:
    ksize_half = (kernel_size - 1) * 0.5
    x = tapegrad.linspace(-ksize_half, ksize_half, steps=kernel_size, dtype=dtype,
                          device=device)
    pdf = tapegrad.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def _get_gaussian_kernel2d(kernel_size: list[int], sigma: list[float], dtype: Any,
                           device: Any) -> Tensor:
    kernel1d_x = _get_gaussian_kernel1d(kernel_size[0], sigma[0], dtype, device)
    kernel1d_y = _get_gaussian_kernel1d(kernel_size[1], sigma[1], dtype, device)
    return tapegrad.mm(kernel1d_y[:, None], kernel1d_x[None, :])


def gaussian_blur(img: Tensor, kernel_size: list[int], sigma: list[float]) -> Tensor:
    """Depthwise convolution with a normalized Gaussian, after a reflection pad."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor. Got {type(img)}")
    _assert_image_tensor(img)
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    kernel = _get_gaussian_kernel2d(kernel_size, sigma, dtype=dtype, device=img.device)
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2,
               kernel_size[1] // 2]
    img = torch_pad(img, padding, mode="reflect")
    img = conv2d(img, kernel, groups=img.shape[-3])
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def invert(img: Tensor) -> Tensor:
    _assert_color_image(img)
    return _max_value(img.dtype) - img


def posterize(img: Tensor, bits: int) -> Tensor:
    """Keep the ``bits`` high bits of each uint8 value."""
    _assert_image_tensor(img)
    _assert_3d(img)
    if img.dtype != tapegrad.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    mask = -int(2 ** (8 - bits))  # ~(2 ** (8 - bits) - 1) in two's complement
    return img & mask


def solarize(img: Tensor, threshold: float) -> Tensor:
    """Invert the values at or above ``threshold``."""
    _assert_color_image(img)
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    inverted_img = invert(img)
    return tapegrad.where(img >= threshold, inverted_img, img)


def _blurred_degenerate_image(img: Tensor) -> Tensor:
    """PIL's smoothing filter (1 1 1 / 1 5 1 / 1 1 1, normalized) on the interior pixels."""
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    kernel = tapegrad.ones((3, 3), dtype=dtype, device=img.device)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    result_tmp, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    result_tmp = conv2d(result_tmp, kernel, groups=result_tmp.shape[-3])
    result_tmp = _cast_squeeze_out(result_tmp, need_cast, need_squeeze, out_dtype)
    result = img.clone()
    result[..., 1:-1, 1:-1] = result_tmp
    return result


def adjust_sharpness(img: Tensor, sharpness_factor: float) -> Tensor:
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if img.size(-1) <= 2 or img.size(-2) <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def autocontrast(img: Tensor) -> Tensor:
    """Stretch each channel's range to [0, max]."""
    _assert_color_image(img)
    bound = _max_value(img.dtype)
    dtype = img.dtype if tapegrad.is_floating_point(img) else tapegrad.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq_idxs = tapegrad.isfinite(scale).logical_not()
    minimum[eq_idxs] = 0
    scale[eq_idxs] = 1
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _scale_channel(img_chan: Tensor) -> Tensor:
    """PIL's equalization of one uint8 channel: a lookup table from the cumulative histogram."""
    hist = tapegrad.bincount(img_chan.reshape(-1), minlength=256)
    nonzero_hist = hist[hist != 0]
    step = tapegrad.div(nonzero_hist[:-1].sum(), 255, rounding_mode="floor")
    if step == 0:
        return img_chan
    lut = tapegrad.div(tapegrad.cumsum(hist, 0) + tapegrad.div(step, 2, rounding_mode="floor"),
                       step, rounding_mode="floor")
    lut = tapegrad.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
    return lut[img_chan.to(tapegrad.int64)].to(tapegrad.uint8)


def _equalize_single_image(img: Tensor) -> Tensor:
    return tapegrad.stack([_scale_channel(img[c]) for c in range(img.size(0))])


def equalize(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    if not (3 <= img.ndim <= 4):
        raise TypeError(
            f"Input image tensor should have 3 or 4 dimensions, but found {img.ndim}")
    if img.dtype != tapegrad.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    if img.ndim == 3:
        return _equalize_single_image(img)
    return tapegrad.stack([_equalize_single_image(x) for x in img])


def normalize(tensor: Tensor, mean: list[float], std: list[float], inplace: bool = False
              ) -> Tensor:
    """(x - mean) / std per channel."""
    _assert_image_tensor(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if not inplace:
        fast = _normalize_arrays(tensor, mean, std)
        if fast is not None:
            return fast
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean_t = tapegrad.as_tensor(mean, dtype=dtype, device=tensor.device)
    std_t = tapegrad.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std_t == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to "
                         "division by zero.")
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


def _constant_pad_arrays(img: Tensor, padding: list[int], fill: Any) -> Tensor | None:
    """``pad(img, [left, right, top, bottom], value=fill)`` of a plain tensor outside autograd
    with paddings >= 0, on the arrays (a random crop's padding of every image of a data loader);
    None for anything else, and for fills that torch's cast would change (a fraction or an
    out-of-range number into an integer dtype)."""
    if type(img) is not Tensor or img.requires_grad or not all(
            type(v) is int and v >= 0 for v in padding) or type(fill) not in (int, float):
        return None
    data = img._data
    if data.dtype.kind == "f" and data.dtype.itemsize >= 4:
        value = data.dtype.type(fill)
    elif data.dtype.kind in "iu" and float(fill).is_integer() and (
            np.iinfo(data.dtype).min <= fill <= np.iinfo(data.dtype).max):
        value = data.dtype.type(int(fill))
    else:
        return None
    left, right, top, bottom = padding
    h, w = data.shape[-2:]
    out = np.full(data.shape[:-2] + (h + top + bottom, w + left + right), value,
                  dtype=data.dtype)
    out[..., top:top + h, left:left + w] = data
    return Tensor._make(out)


def _normalize_arrays(tensor: Tensor, mean: Any, std: Any) -> Tensor | None:
    """``normalize`` of a plain float32/float64 tensor outside autograd, by a list of numbers
    per channel, on the arrays: the same two IEEE operations (the numbers rounded to the
    tensor's dtype first, as ``as_tensor`` rounds them), a data loader's every image without the
    ops' bookkeeping. None for anything else (the general path)."""
    if (type(tensor) is not Tensor or tensor.requires_grad or not isinstance(mean, (list, tuple))
            or not isinstance(std, (list, tuple))):
        return None
    data = tensor._data
    if data.dtype not in (np.float32, np.float64) or not data.flags.c_contiguous:
        return None
    c = data.shape[-3]
    if len(mean) not in (1, c) or len(std) not in (1, c) or not all(
            type(v) in (int, float) for v in (*mean, *std)):
        return None
    mean_a = np.array(mean, dtype=data.dtype).reshape(-1, 1, 1)
    std_a = np.array(std, dtype=data.dtype).reshape(-1, 1, 1)
    if not std_a.all():
        return None  # (the general path raises torch's error)
    out = np.subtract(data, mean_a)
    np.divide(out, std_a, out=out)
    return Tensor._make(out)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False
          ) -> Tensor:
    """Set the box [i, i + h) x [j, j + w) to ``v``."""
    _assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def _create_identity_grid(size: list[int]) -> Tensor:
    hw_space = [tapegrad.linspace((-s + 1) / s, (s - 1) / s, s) for s in size]
    grid_y, grid_x = tapegrad.meshgrid(hw_space, indexing="ij")
    return tapegrad.stack([grid_x, grid_y], -1).unsqueeze(0)  # 1 x H x W x 2


def elastic_transform(img: Tensor, displacement: Tensor, interpolation: str = "bilinear",
                      fill: Any = None) -> Tensor:
    """Sample at the identity grid plus ``displacement`` (1, H, W, 2), normalized units."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor. Got {type(img)}")
    size = list(img.shape[-2:])
    displacement = displacement.to(img.device)
    grid = _create_identity_grid(size).to(img.device) + displacement
    return _apply_grid_transform(img, grid, interpolation, fill)
