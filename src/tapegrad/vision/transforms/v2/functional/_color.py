"""The v2 color functionals: grayscale, brightness, contrast, saturation, hue, gamma,
sharpness, posterize, solarize, autocontrast, equalize, invert, channel permutation.

The tensor kernels are v2's own (they differ from v1's in the details: a fused
``mul().add_(alpha=)`` grayscale, a floored gray level for integer images, an HSV conversion
with fewer temporaries, a vectorized histogram equalization); PIL images go to Pillow.
"""

from __future__ import annotations

from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.nn.functional import conv2d
from tapegrad.vision import tv_tensors

from ... import _functional_pil as _FP
from ..._functional_tensor import _max_value
from ._misc import _num_value_bits, to_dtype_image
from ._type_conversion import pil_to_tensor, to_pil_image
from ._utils import _get_kernel, _register_kernel_internal


def rgb_to_grayscale(inpt: Tensor, num_output_channels: int = 1) -> Tensor:
    """L = 0.2989 R + 0.587 G + 0.114 B, as 1 or 3 channels."""
    kernel = _get_kernel(rgb_to_grayscale, type(inpt))
    return kernel(inpt, num_output_channels=num_output_channels)  # type: ignore[no-any-return]


# the v1 name
to_grayscale = rgb_to_grayscale


def _rgb_to_grayscale_image(image: Tensor, num_output_channels: int = 1,
                            preserve_dtype: bool = True) -> Tensor:
    if image.shape[-3] == 1 and num_output_channels == 1:
        return image.clone()
    if image.shape[-3] == 1 and num_output_channels == 3:
        s = [1] * len(image.shape)
        s[-3] = 3
        return image.repeat(s)
    r, g, b = image.unbind(dim=-3)
    l_img = r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114)
    l_img = l_img.unsqueeze(dim=-3)
    if preserve_dtype:
        l_img = l_img.to(image.dtype)
    if num_output_channels == 3:
        l_img = l_img.expand(image.shape)
    return l_img


@_register_kernel_internal(rgb_to_grayscale, Tensor)
@_register_kernel_internal(rgb_to_grayscale, tv_tensors.Image)
def rgb_to_grayscale_image(image: Tensor, num_output_channels: int = 1) -> Tensor:
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}.")
    return _rgb_to_grayscale_image(image, num_output_channels=num_output_channels,
                                   preserve_dtype=True)


@_register_kernel_internal(rgb_to_grayscale, PIL.Image.Image)
def _rgb_to_grayscale_image_pil(image: Any, num_output_channels: int = 1) -> Any:
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}.")
    return _FP.to_grayscale(image, num_output_channels=num_output_channels)


def grayscale_to_rgb(inpt: Tensor) -> Tensor:
    """A 1-channel image as 3 equal channels (3-channel images pass)."""
    kernel = _get_kernel(grayscale_to_rgb, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(grayscale_to_rgb, Tensor)
@_register_kernel_internal(grayscale_to_rgb, tv_tensors.Image)
def grayscale_to_rgb_image(image: Tensor) -> Tensor:
    if image.shape[-3] >= 3:
        return image  # already RGB (or RGBA)
    return _rgb_to_grayscale_image(image, num_output_channels=3, preserve_dtype=True)


@_register_kernel_internal(grayscale_to_rgb, PIL.Image.Image)
def grayscale_to_rgb_image_pil(image: Any) -> Any:
    return image.convert(mode="RGB")


def _blend(image1: Tensor, image2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    fp = image1.is_floating_point()
    bound = _max_value(image1.dtype)
    output = image1.mul(ratio).add_(image2, alpha=(1.0 - ratio)).clamp_(0, bound)
    return output if fp else output.to(image1.dtype)


def _check_color_channels(c: int) -> None:
    if c not in [1, 3]:
        raise TypeError(
            f"Input image tensor permitted channel values are 1 or 3, but found {c}")


def adjust_brightness(inpt: Tensor, brightness_factor: float) -> Tensor:
    """Scale the intensities by ``brightness_factor``."""
    kernel = _get_kernel(adjust_brightness, type(inpt))
    return kernel(inpt, brightness_factor=brightness_factor)  # type: ignore[no-any-return]


@_register_kernel_internal(adjust_brightness, Tensor)
@_register_kernel_internal(adjust_brightness, tv_tensors.Image)
def adjust_brightness_image(image: Tensor, brightness_factor: float) -> Tensor:
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _check_color_channels(image.shape[-3])
    fp = image.is_floating_point()
    bound = _max_value(image.dtype)
    output = image.mul(brightness_factor).clamp_(0, bound)
    return output if fp else output.to(image.dtype)


@_register_kernel_internal(adjust_brightness, PIL.Image.Image)
def _adjust_brightness_image_pil(image: Any, brightness_factor: float) -> Any:
    return _FP.adjust_brightness(image, brightness_factor=brightness_factor)


@_register_kernel_internal(adjust_brightness, tv_tensors.Video)
def adjust_brightness_video(video: Tensor, brightness_factor: float) -> Tensor:
    return adjust_brightness_image(video, brightness_factor=brightness_factor)


def adjust_saturation(inpt: Tensor, saturation_factor: float) -> Tensor:
    """Blend with the grayscale image (0: gray, 1: unchanged)."""
    kernel = _get_kernel(adjust_saturation, type(inpt))
    return kernel(inpt, saturation_factor=saturation_factor)  # type: ignore[no-any-return]


@_register_kernel_internal(adjust_saturation, Tensor)
@_register_kernel_internal(adjust_saturation, tv_tensors.Image)
def adjust_saturation_image(image: Tensor, saturation_factor: float) -> Tensor:
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    c = image.shape[-3]
    _check_color_channels(c)
    if c == 1:  # as PIL: a gray image has no saturation
        return image
    grayscale_image = _rgb_to_grayscale_image(image, num_output_channels=1,
                                              preserve_dtype=False)
    if not image.is_floating_point():
        grayscale_image = grayscale_image.floor_()
    return _blend(image, grayscale_image, saturation_factor)


_adjust_saturation_image_pil = _register_kernel_internal(adjust_saturation, PIL.Image.Image)(
    _FP.adjust_saturation)


@_register_kernel_internal(adjust_saturation, tv_tensors.Video)
def adjust_saturation_video(video: Tensor, saturation_factor: float) -> Tensor:
    return adjust_saturation_image(video, saturation_factor=saturation_factor)


def adjust_contrast(inpt: Tensor, contrast_factor: float) -> Tensor:
    """Blend with the mean gray level (0: flat gray, 1: unchanged)."""
    kernel = _get_kernel(adjust_contrast, type(inpt))
    return kernel(inpt, contrast_factor=contrast_factor)  # type: ignore[no-any-return]


@_register_kernel_internal(adjust_contrast, Tensor)
@_register_kernel_internal(adjust_contrast, tv_tensors.Image)
def adjust_contrast_image(image: Tensor, contrast_factor: float) -> Tensor:
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    c = image.shape[-3]
    _check_color_channels(c)
    fp = image.is_floating_point()
    if c == 3:
        grayscale_image = _rgb_to_grayscale_image(image, num_output_channels=1,
                                                  preserve_dtype=False)
        if not fp:
            grayscale_image = grayscale_image.floor_()
    else:
        grayscale_image = image if fp else image.to(tapegrad.float32)
    mean = tapegrad.mean(grayscale_image, dim=(-3, -2, -1), keepdim=True)
    return _blend(image, mean, contrast_factor)


_adjust_contrast_image_pil = _register_kernel_internal(adjust_contrast, PIL.Image.Image)(
    _FP.adjust_contrast)


@_register_kernel_internal(adjust_contrast, tv_tensors.Video)
def adjust_contrast_video(video: Tensor, contrast_factor: float) -> Tensor:
    return adjust_contrast_image(video, contrast_factor=contrast_factor)


def adjust_sharpness(inpt: Tensor, sharpness_factor: float) -> Tensor:
    """Blend with a smoothed image (0: smoothed, 1: unchanged, 2: sharper)."""
    kernel = _get_kernel(adjust_sharpness, type(inpt))
    return kernel(inpt, sharpness_factor=sharpness_factor)  # type: ignore[no-any-return]


@_register_kernel_internal(adjust_sharpness, Tensor)
@_register_kernel_internal(adjust_sharpness, tv_tensors.Image)
def adjust_sharpness_image(image: Tensor, sharpness_factor: float) -> Tensor:
    num_channels, height, width = image.shape[-3:]
    if num_channels not in (1, 3):
        raise TypeError(f"Input image tensor can have 1 or 3 channels, but found {num_channels}")
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    if image.numel() == 0 or height <= 2 or width <= 2:
        return image
    bound = _max_value(image.dtype)
    fp = image.is_floating_point()
    shape = image.shape
    if image.ndim > 4:
        image = image.reshape(-1, num_channels, height, width)
        needs_unsquash = True
    else:
        needs_unsquash = False
    # PIL's SMOOTH filter: 1 1 1 / 1 5 1 / 1 1 1, normalized
    kernel_dtype = image.dtype if fp else tapegrad.float32
    a, b = 1.0 / 13.0, 5.0 / 13.0
    kernel = tapegrad.tensor([[a, a, a], [a, b, a], [a, a, a]], dtype=kernel_dtype,
                             device=image.device)
    kernel = kernel.expand(num_channels, 1, 3, 3)
    output = image.to(dtype=kernel_dtype, copy=True)
    blurred_degenerate = conv2d(output, kernel, groups=num_channels)
    if not fp:
        # PIL rounds the smoothed image before blending
        blurred_degenerate = blurred_degenerate.round_()
    # the border keeps its pixels: blend only the interior, in place
    view = output[..., 1:-1, 1:-1]
    view.add_(blurred_degenerate.sub_(view), alpha=(1.0 - sharpness_factor))
    output = output.clamp_(0, bound)
    if not fp:
        output = output.to(image.dtype)
    if needs_unsquash:
        output = output.reshape(shape)
    return output


_adjust_sharpness_image_pil = _register_kernel_internal(adjust_sharpness, PIL.Image.Image)(
    _FP.adjust_sharpness)


@_register_kernel_internal(adjust_sharpness, tv_tensors.Video)
def adjust_sharpness_video(video: Tensor, sharpness_factor: float) -> Tensor:
    return adjust_sharpness_image(video, sharpness_factor=sharpness_factor)


def adjust_hue(inpt: Tensor, hue_factor: float) -> Tensor:
    """Rotate the hue by ``hue_factor`` turns, in [-0.5, 0.5]."""
    kernel = _get_kernel(adjust_hue, type(inpt))
    return kernel(inpt, hue_factor=hue_factor)  # type: ignore[no-any-return]


def _rgb_to_hsv(image: Tensor) -> Tensor:
    r, g, _ = image.unbind(dim=-3)
    minc, maxc = tapegrad.aminmax(image, dim=-3)
    eqc = maxc == minc  # gray: no hue, no saturation (avoid dividing by zero)
    channels_range = maxc - minc
    ones = tapegrad.ones_like(maxc)
    s = channels_range / tapegrad.where(eqc, ones, maxc)
    channels_range_divisor = tapegrad.where(eqc, ones, channels_range).unsqueeze_(dim=-3)
    rc, gc, bc = ((maxc.unsqueeze(dim=-3) - image) / channels_range_divisor).unbind(dim=-3)
    mask_maxc_neq_r = maxc != r
    mask_maxc_eq_g = maxc == g
    hg = rc.add(2.0).sub_(bc).mul_(mask_maxc_eq_g & mask_maxc_neq_r)
    hr = bc.sub_(gc).mul_(~mask_maxc_neq_r)
    hb = gc.add_(4.0).sub_(rc).mul_(mask_maxc_neq_r.logical_and_(mask_maxc_eq_g.logical_not_()))
    h = hr.add_(hg).add_(hb)
    h = h.mul_(1.0 / 6.0).add_(1.0).fmod_(1.0)
    return tapegrad.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(img: Tensor) -> Tensor:
    h, s, v = img.unbind(dim=-3)
    h6 = h.mul(6)
    i = tapegrad.floor(h6)
    f = h6.sub_(i)
    i = i.to(dtype=tapegrad.int32)
    sxf = s * f
    one_minus_s = 1.0 - s
    q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0)
    t = sxf.add_(one_minus_s).mul_(v).clamp_(0.0, 1.0)
    p = one_minus_s.mul_(v).clamp_(0.0, 1.0)
    i.remainder_(6)
    vpqt = tapegrad.stack((v, p, q, t), dim=-3)
    # which of v, p, q, t each of R, G, B is, for the six hue sectors
    select = tapegrad.tensor([[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]],
                             dtype=tapegrad.long)
    select = select[:, i]
    if select.ndim > 3:
        # the leading dims of i came after the 3 channels; move the channels next to H, W
        select = select.moveaxis(0, -3)
    return vpqt.gather(-3, select)


@_register_kernel_internal(adjust_hue, Tensor)
@_register_kernel_internal(adjust_hue, tv_tensors.Image)
def adjust_hue_image(image: Tensor, hue_factor: float) -> Tensor:
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    c = image.shape[-3]
    _check_color_channels(c)
    if c == 1:  # as PIL: a gray image has no hue
        return image
    if image.numel() == 0:
        return image
    orig_dtype = image.dtype
    image = to_dtype_image(image, tapegrad.float32, scale=True)
    image = _rgb_to_hsv(image)
    h, s, v = image.unbind(dim=-3)
    h.add_(hue_factor).remainder_(1.0)
    image = tapegrad.stack((h, s, v), dim=-3)
    image_hue_adj = _hsv_to_rgb(image)
    return to_dtype_image(image_hue_adj, orig_dtype, scale=True)


_adjust_hue_image_pil = _register_kernel_internal(adjust_hue, PIL.Image.Image)(_FP.adjust_hue)


@_register_kernel_internal(adjust_hue, tv_tensors.Video)
def adjust_hue_video(video: Tensor, hue_factor: float) -> Tensor:
    return adjust_hue_image(video, hue_factor=hue_factor)


def adjust_gamma(inpt: Tensor, gamma: float, gain: float = 1) -> Tensor:
    """I_out = max * gain * (I_in / max) ** gamma."""
    kernel = _get_kernel(adjust_gamma, type(inpt))
    return kernel(inpt, gamma=gamma, gain=gain)  # type: ignore[no-any-return]


@_register_kernel_internal(adjust_gamma, Tensor)
@_register_kernel_internal(adjust_gamma, tv_tensors.Image)
def adjust_gamma_image(image: Tensor, gamma: float, gain: float = 1.0) -> Tensor:
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if not tapegrad.is_floating_point(image):
        output = to_dtype_image(image, tapegrad.float32, scale=True).pow_(gamma)
    else:
        output = image.pow(gamma)
    if gain != 1.0:
        # without a gain, x ** gamma of x in [0, 1] stays in [0, 1]: no clamp needed
        output = output.mul_(gain).clamp_(0.0, 1.0)
    return to_dtype_image(output, image.dtype, scale=True)


_adjust_gamma_image_pil = _register_kernel_internal(adjust_gamma, PIL.Image.Image)(
    _FP.adjust_gamma)


@_register_kernel_internal(adjust_gamma, tv_tensors.Video)
def adjust_gamma_video(video: Tensor, gamma: float, gain: float = 1) -> Tensor:
    return adjust_gamma_image(video, gamma=gamma, gain=gain)


def posterize(inpt: Tensor, bits: int) -> Tensor:
    """Keep the ``bits`` most significant bits (of the value bits, or of [0, 1) levels)."""
    kernel = _get_kernel(posterize, type(inpt))
    return kernel(inpt, bits=bits)  # type: ignore[no-any-return]


@_register_kernel_internal(posterize, Tensor)
@_register_kernel_internal(posterize, tv_tensors.Image)
def posterize_image(image: Tensor, bits: int) -> Tensor:
    if not isinstance(bits, int) or not 0 <= bits <= 8:
        raise TypeError(
            f"bits must be a positive integer in the range [0, 8], got {bits} instead.")
    if image.is_floating_point():
        levels = 1 << bits
        return image.mul(levels).floor_().clamp_(0, levels - 1).mul_(1.0 / levels)
    num_value_bits = _num_value_bits(image.dtype)
    if bits >= num_value_bits:
        return image
    mask = ((1 << bits) - 1) << (num_value_bits - bits)
    return image & mask


_posterize_image_pil = _register_kernel_internal(posterize, PIL.Image.Image)(_FP.posterize)


@_register_kernel_internal(posterize, tv_tensors.Video)
def posterize_video(video: Tensor, bits: int) -> Tensor:
    return posterize_image(video, bits=bits)


def solarize(inpt: Tensor, threshold: float) -> Tensor:
    """Invert the values at or above ``threshold``."""
    kernel = _get_kernel(solarize, type(inpt))
    return kernel(inpt, threshold=threshold)  # type: ignore[no-any-return]


@_register_kernel_internal(solarize, Tensor)
@_register_kernel_internal(solarize, tv_tensors.Image)
def solarize_image(image: Tensor, threshold: float) -> Tensor:
    if threshold > _max_value(image.dtype):
        raise TypeError("Threshold should be less or equal the maximum value of the dtype, "
                        f"but got {threshold}")
    return tapegrad.where(image >= threshold, invert_image(image), image)


_solarize_image_pil = _register_kernel_internal(solarize, PIL.Image.Image)(_FP.solarize)


@_register_kernel_internal(solarize, tv_tensors.Video)
def solarize_video(video: Tensor, threshold: float) -> Tensor:
    return solarize_image(video, threshold=threshold)


def autocontrast(inpt: Tensor) -> Tensor:
    """Stretch each channel's range to the full range."""
    kernel = _get_kernel(autocontrast, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(autocontrast, Tensor)
@_register_kernel_internal(autocontrast, tv_tensors.Image)
def autocontrast_image(image: Tensor) -> Tensor:
    c = image.shape[-3]
    _check_color_channels(c)
    if image.numel() == 0:
        return image
    bound = _max_value(image.dtype)
    fp = image.is_floating_point()
    float_image = image if fp else image.to(tapegrad.float32)
    minimum = float_image.amin(dim=(-2, -1), keepdim=True)
    maximum = float_image.amax(dim=(-2, -1), keepdim=True)
    eq_idxs = maximum == minimum
    inv_scale = maximum.sub_(minimum).mul_(1.0 / bound)
    minimum[eq_idxs] = 0.0
    inv_scale[eq_idxs] = 1.0
    diff = float_image.sub(minimum) if fp else float_image.sub_(minimum)
    return diff.div_(inv_scale).clamp_(0, bound).to(image.dtype)


_autocontrast_image_pil = _register_kernel_internal(autocontrast, PIL.Image.Image)(
    _FP.autocontrast)


@_register_kernel_internal(autocontrast, tv_tensors.Video)
def autocontrast_video(video: Tensor) -> Tensor:
    return autocontrast_image(video)


def equalize(inpt: Tensor) -> Tensor:
    """Equalize each channel's histogram (PIL's ``ImageOps.equalize``)."""
    kernel = _get_kernel(equalize, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(equalize, Tensor)
@_register_kernel_internal(equalize, tv_tensors.Image)
def equalize_image(image: Tensor) -> Tensor:
    if image.numel() == 0:
        return image
    # PIL's algorithm on uint8 values, for every channel of every image at once
    output_dtype = image.dtype
    image = to_dtype_image(image, tapegrad.uint8, scale=True)
    batch_shape = image.shape[:-2]
    flat_image = image.flatten(start_dim=-2).to(tapegrad.long)
    hist = flat_image.new_zeros(batch_shape + (256,), dtype=tapegrad.int32)
    hist.scatter_add_(dim=-1, index=flat_image, src=hist.new_ones(1).expand_as(flat_image))
    cum_hist = hist.cumsum(dim=-1)
    # the step leaves out the pixels of the most frequent value (PIL's "last bin" rule)
    index = cum_hist.argmax(dim=-1)
    num_non_max_pixels = flat_image.shape[-1] - hist.gather(dim=-1, index=index.unsqueeze_(-1))
    step = num_non_max_pixels.div_(255, rounding_mode="floor")
    # a channel with a single value is not equalized
    valid_equalization = step.ne(0).unsqueeze_(-1)
    # the lookup table: (cumulative count + step // 2) // step, shifted by one bin
    cum_hist = cum_hist[..., :-1]
    cum_hist.add_(step // 2).div_(step.clamp_(min=1), rounding_mode="floor").clamp_(0, 255)
    lut = cum_hist.to(tapegrad.uint8)
    lut = tapegrad.cat([lut.new_zeros(1).expand(batch_shape + (1,)), lut], dim=-1)
    equalized_image = lut.gather(dim=-1, index=flat_image).view_as(image)
    output = tapegrad.where(valid_equalization, equalized_image, image)
    return to_dtype_image(output, output_dtype, scale=True)


_equalize_image_pil = _register_kernel_internal(equalize, PIL.Image.Image)(_FP.equalize)


@_register_kernel_internal(equalize, tv_tensors.Video)
def equalize_video(video: Tensor) -> Tensor:
    return equalize_image(video)


def invert(inpt: Tensor) -> Tensor:
    """The negative image: max - x."""
    kernel = _get_kernel(invert, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(invert, Tensor)
@_register_kernel_internal(invert, tv_tensors.Image)
def invert_image(image: Tensor) -> Tensor:
    if image.is_floating_point():
        return 1.0 - image
    elif image.dtype == tapegrad.uint8:
        return image.bitwise_not()
    # signed integers: flip the value bits, keep the sign bit
    return image.bitwise_xor((1 << _num_value_bits(image.dtype)) - 1)


_invert_image_pil = _register_kernel_internal(invert, PIL.Image.Image)(_FP.invert)


@_register_kernel_internal(invert, tv_tensors.Video)
def invert_video(video: Tensor) -> Tensor:
    return invert_image(video)


def permute_channels(inpt: Tensor, permutation: list[int]) -> Tensor:
    """Reorder the channels: output channel i is input channel ``permutation[i]``."""
    kernel = _get_kernel(permute_channels, type(inpt))
    return kernel(inpt, permutation=permutation)  # type: ignore[no-any-return]


@_register_kernel_internal(permute_channels, Tensor)
@_register_kernel_internal(permute_channels, tv_tensors.Image)
def permute_channels_image(image: Tensor, permutation: list[int]) -> Tensor:
    shape = image.shape
    num_channels, height, width = shape[-3:]
    if len(permutation) != num_channels:
        raise ValueError("Length of permutation does not match number of channels: "
                         f"{len(permutation)} != {num_channels}")
    if image.numel() == 0:
        return image
    image = image.reshape(-1, num_channels, height, width)
    image = image[:, permutation, :, :]
    return image.reshape(shape)


@_register_kernel_internal(permute_channels, PIL.Image.Image)
def _permute_channels_image_pil(image: Any, permutation: list[int]) -> Any:
    return to_pil_image(permute_channels_image(pil_to_tensor(image), permutation=permutation))


@_register_kernel_internal(permute_channels, tv_tensors.Video)
def permute_channels_video(video: Tensor, permutation: list[int]) -> Tensor:
    return permute_channels_image(video, permutation=permutation)
