"""``torchvision.transforms.v2.functional``: the v2 image operations, each dispatching on its
input's type (plain tensor or ``tv_tensors.Image``, PIL image, ``Video``, ``Mask``,
``BoundingBoxes``, ``KeyPoints``) to the kernel for it (``_utils``). The kernels themselves are
public too (``resize_image``, ``resize_bounding_boxes``, ...).

The modules below import one another directly, never this package; ``register_kernel`` is
defined here, the one place that holds every functional's name (it takes a name too)."""

# ruff: noqa: F401  (the package re-exports its modules' names)

from __future__ import annotations  # noqa: I001  (the modules in torchvision's order)

from collections.abc import Callable

from tapegrad.vision import tv_tensors

from ...functional import InterpolationMode

from ._utils import (
    _register_kernel_internal,
    is_pure_tensor,
)
from ._meta import (
    clamp_bounding_boxes,
    clamp_keypoints,
    convert_bounding_box_format,
    get_dimensions_image,
    get_dimensions_video,
    get_dimensions,
    get_num_frames_video,
    get_num_frames,
    get_image_num_channels,
    get_num_channels_image,
    get_num_channels_video,
    get_num_channels,
    get_size_bounding_boxes,
    get_size_keypoints,
    get_size_image,
    get_size_mask,
    get_size_video,
    get_size,
)
from ._augment import (
    erase,
    erase_image,
    erase_video,
    jpeg,
    jpeg_image,
    jpeg_video,
)
from ._color import (
    adjust_brightness,
    adjust_brightness_image,
    adjust_brightness_video,
    adjust_contrast,
    adjust_contrast_image,
    adjust_contrast_video,
    adjust_gamma,
    adjust_gamma_image,
    adjust_gamma_video,
    adjust_hue,
    adjust_hue_image,
    adjust_hue_video,
    adjust_saturation,
    adjust_saturation_image,
    adjust_saturation_video,
    adjust_sharpness,
    adjust_sharpness_image,
    adjust_sharpness_video,
    autocontrast,
    autocontrast_image,
    autocontrast_video,
    equalize,
    equalize_image,
    equalize_video,
    grayscale_to_rgb,
    grayscale_to_rgb_image,
    invert,
    invert_image,
    invert_video,
    permute_channels,
    permute_channels_image,
    permute_channels_video,
    posterize,
    posterize_image,
    posterize_video,
    rgb_to_grayscale,
    rgb_to_grayscale_image,
    solarize,
    solarize_image,
    solarize_video,
    to_grayscale,
)
from ._geometry import (
    affine,
    affine_bounding_boxes,
    affine_image,
    affine_keypoints,
    affine_mask,
    affine_video,
    center_crop,
    center_crop_bounding_boxes,
    center_crop_image,
    center_crop_keypoints,
    center_crop_mask,
    center_crop_video,
    crop,
    crop_bounding_boxes,
    crop_image,
    crop_keypoints,
    crop_mask,
    crop_video,
    elastic,
    elastic_bounding_boxes,
    elastic_image,
    elastic_keypoints,
    elastic_mask,
    elastic_transform,
    elastic_video,
    five_crop,
    five_crop_image,
    five_crop_video,
    hflip,
    horizontal_flip,
    horizontal_flip_bounding_boxes,
    horizontal_flip_image,
    horizontal_flip_keypoints,
    horizontal_flip_mask,
    horizontal_flip_video,
    pad,
    pad_bounding_boxes,
    pad_image,
    pad_keypoints,
    pad_mask,
    pad_video,
    perspective,
    perspective_bounding_boxes,
    perspective_image,
    perspective_keypoints,
    perspective_mask,
    perspective_video,
    resize,
    resize_bounding_boxes,
    resize_image,
    resize_keypoints,
    resize_mask,
    resize_video,
    resized_crop,
    resized_crop_bounding_boxes,
    resized_crop_image,
    resized_crop_keypoints,
    resized_crop_mask,
    resized_crop_video,
    rotate,
    rotate_bounding_boxes,
    rotate_image,
    rotate_keypoints,
    rotate_mask,
    rotate_video,
    ten_crop,
    ten_crop_image,
    ten_crop_video,
    vertical_flip,
    vertical_flip_bounding_boxes,
    vertical_flip_image,
    vertical_flip_keypoints,
    vertical_flip_mask,
    vertical_flip_video,
    vflip,
)
from ._misc import (
    convert_image_dtype,
    gaussian_blur,
    gaussian_blur_image,
    gaussian_blur_video,
    gaussian_noise,
    gaussian_noise_image,
    gaussian_noise_video,
    normalize,
    normalize_image,
    normalize_video,
    sanitize_bounding_boxes,
    sanitize_keypoints,
    to_dtype,
    to_dtype_image,
    to_dtype_video,
)
from ._temporal import (
    uniform_temporal_subsample,
    uniform_temporal_subsample_video,
)
from ._type_conversion import (
    pil_to_tensor,
    to_image,
    to_pil_image,
)
from ._deprecated import (
    get_image_size,
    to_tensor,
)


def _name_to_functional(name: str) -> Callable:
    try:
        return globals()[name]  # type: ignore[no-any-return]
    except KeyError:
        raise ValueError(f"Could not find functional with name '{name}' in "
                         "torchvision.transforms.v2.functional.") from None


_BUILTIN_DATAPOINT_TYPES = {
    obj for obj in tv_tensors.__dict__.values()
    if isinstance(obj, type) and issubclass(obj, tv_tensors.TVTensor)
}


def register_kernel(functional: Callable | str, tv_tensor_cls: type) -> Callable:
    """Decorate a kernel of ``functional`` (a v2 functional or its name) for inputs of the
    user TVTensor class ``tv_tensor_cls``; the kernel gets the TVTensor itself."""
    if isinstance(functional, str):
        functional = _name_to_functional(name=functional)
    elif not (callable(functional) and getattr(functional, "__module__", "").startswith(
            ("torchvision.transforms.v2.functional",
             "tapegrad.vision.transforms.v2.functional"))):
        raise ValueError(
            "Kernels can only be registered on functionals from the "
            f"torchvision.transforms.v2.functional namespace, but got {functional}.")
    if not (isinstance(tv_tensor_cls, type) and issubclass(tv_tensor_cls, tv_tensors.TVTensor)):
        raise ValueError("Kernels can only be registered for subclasses of "
                         f"torchvision.tv_tensors.TVTensor, but got {tv_tensor_cls}.")
    if tv_tensor_cls in _BUILTIN_DATAPOINT_TYPES:
        raise ValueError("Kernels cannot be registered for the builtin tv_tensor classes, but "
                         f"got {tv_tensor_cls}")
    return _register_kernel_internal(functional, tv_tensor_cls, tv_tensor_wrapper=False)
