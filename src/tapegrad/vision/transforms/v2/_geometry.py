"""The v2 geometric transforms: flips, resizes, crops, pads, rotations, affine and perspective
warps, elastic distortion, and the detection ones (``RandomIoUCrop``, ``RandomZoomOut``,
``ScaleJitter``, ``RandomShortestSize``, ``RandomResize``). They move boxes, masks and keypoints
with the image, and draw their parameters as torchvision's v2 classes draw them."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from ... import transforms as _transforms
from ..functional import _get_perspective_coeffs
from ..transforms import _resized_crop_box, _set_affine_ranges, _setup_crop_size
from . import functional as F
from ._transform import Transform, _RandomApplyTransform
from ._utils import (
    _check_padding_arg,
    _check_padding_mode_arg,
    _check_sequence_input,
    _get_fill,
    _set_fill,
    _setup_angle,
    _setup_center,
    _setup_number_or_seq,
    get_bounding_boxes,
    has_all,
    has_any,
    is_pure_tensor,
    query_size,
)


class RandomHorizontalFlip(_RandomApplyTransform):
    """Mirror left to right with probability ``p``."""

    _v1_transform_cls = _transforms.RandomHorizontalFlip

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.horizontal_flip, inpt)


class RandomVerticalFlip(_RandomApplyTransform):
    """Mirror top to bottom with probability ``p``."""

    _v1_transform_cls = _transforms.RandomVerticalFlip

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.vertical_flip, inpt)


class Resize(Transform):
    """Resize to ``size`` (h, w), the shorter side to ``size`` (an int or [int]), or the longer
    side to ``max_size`` (``size=None``)."""

    _v1_transform_cls = _transforms.Resize

    def __init__(self, size: int | Sequence[int] | None, interpolation: Any = "bilinear",
                 max_size: int | None = None, antialias: bool | None = True) -> None:
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in {1, 2}:
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(
                    f"max_size must be an integer when size is None, but got {max_size} instead.")
        else:
            raise ValueError("size can be an integer, a sequence of one or two integers, or "
                             f"None, but got {size} instead.")
        self.size = size
        self.interpolation = interpolation
        self.max_size = max_size
        self.antialias = antialias

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.resize, inpt, self.size, interpolation=self.interpolation,
                                 max_size=self.max_size, antialias=self.antialias)


class CenterCrop(Transform):
    """The centered crop of ``size``."""

    _v1_transform_cls = _transforms.CenterCrop

    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.center_crop, inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    """A random crop of random area (``scale``) and log-uniform aspect ratio (``ratio``),
    resized to ``size``."""

    _v1_transform_cls = _transforms.RandomResizedCrop

    def __init__(self, size: int | Sequence[int], scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: Any = "bilinear", antialias: bool | None = True) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)
        if not isinstance(scale, Sequence) or len(scale) != 2:
            raise TypeError("Scale should be a sequence of two floats.")
        if not isinstance(ratio, Sequence) or len(ratio) != 2:
            raise TypeError("Ratio should be a sequence of two floats.")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation
        self.antialias = antialias
        self._log_ratio = tapegrad.log(tapegrad.tensor(self.ratio))

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        height, width = query_size(flat_inputs)
        i, j, h, w = _resized_crop_box(height, width, self.scale, self.ratio, self._log_ratio)
        return dict(top=i, left=j, height=h, width=w)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.resized_crop, inpt, **params, size=self.size,
                                 interpolation=self.interpolation, antialias=self.antialias)


class _PassThroughWarning:
    """Five and ten crops pass boxes, keypoints and masks through, with a warning."""

    def _call_kernel(self, functional: Callable, inpt: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints, tv_tensors.Mask)):
            warnings.warn(f"{type(self).__name__}() is currently passing through inputs of type "
                          f"tv_tensors.{type(inpt).__name__}. This will likely change in the "
                          "future.", stacklevel=2)
        return super()._call_kernel(functional, inpt, *args, **kwargs)  # type: ignore[misc]

    def check_inputs(self, flat_inputs: list[Any]) -> None:
        if has_any(flat_inputs, tv_tensors.BoundingBoxes, tv_tensors.Mask):
            raise TypeError(
                f"BoundingBoxes'es and Mask's are not supported by {type(self).__name__}()")


class FiveCrop(_PassThroughWarning, Transform):
    """The four corner crops and the center crop of ``size`` (a tuple of five)."""

    _v1_transform_cls = _transforms.FiveCrop

    def __init__(self, size: int | Sequence[int]) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.five_crop, inpt, self.size)


class TenCrop(_PassThroughWarning, Transform):
    """``FiveCrop`` of the image and of its mirror (a tuple of ten)."""

    _v1_transform_cls = _transforms.TenCrop

    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)
        self.vertical_flip = vertical_flip

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.ten_crop, inpt, self.size, vertical_flip=self.vertical_flip)


class _ScalarFillForV1:
    """Pad and RandomCrop: their v1 transforms take only a scalar ``fill``."""

    fill: Any

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        params = super()._extract_params_for_v1_transform()  # type: ignore[misc]
        if not (params["fill"] is None or isinstance(params["fill"], (int, float))):
            raise ValueError(f"{type(self).__name__}() can only be scripted for a scalar "
                             f"`fill`, but got {self.fill}.")
        return params


class Pad(_ScalarFillForV1, Transform):
    """Pad the borders with a constant ``fill`` (per input type if a dict), or by edge, reflect
    or symmetric padding."""

    _v1_transform_cls = _transforms.Pad

    def __init__(self, padding: int | Sequence[int], fill: Any = 0,
                 padding_mode: str = "constant") -> None:
        super().__init__()
        _check_padding_arg(padding)
        _check_padding_mode_arg(padding_mode)
        if not isinstance(padding, int):
            padding = list(padding)
        self.padding = padding
        _set_fill(self, fill)
        self.padding_mode = padding_mode

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.pad, inpt, padding=self.padding, fill=fill,
                                 padding_mode=self.padding_mode)


class RandomZoomOut(_RandomApplyTransform):
    """With probability ``p``, place the image at a random spot of a canvas ``side_range``
    times larger, filled with ``fill`` (the SSD "zoom out" augmentation)."""

    def __init__(self, fill: Any = 0, side_range: Sequence[float] = (1.0, 4.0),
                 p: float = 0.5) -> None:
        super().__init__(p=p)
        _set_fill(self, fill)
        _check_sequence_input(side_range, "side_range", req_sizes=(2,))
        self.side_range = side_range
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError(f"Invalid side range provided {side_range}.")

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_h, orig_w = query_size(flat_inputs)
        r = self.side_range[0] + tapegrad.rand(1) * (self.side_range[1] - self.side_range[0])
        canvas_width = int(orig_w * r)
        canvas_height = int(orig_h * r)
        r = tapegrad.rand(2)
        left = int((canvas_width - orig_w) * r[0])
        top = int((canvas_height - orig_h) * r[1])
        right = canvas_width - (left + orig_w)
        bottom = canvas_height - (top + orig_h)
        return dict(padding=[left, top, right, bottom])

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.pad, inpt, **params, fill=fill)


class RandomRotation(Transform):
    """Rotate by an angle drawn uniformly from ``degrees`` (±d or (min, max))."""

    _v1_transform_cls = _transforms.RandomRotation

    def __init__(self, degrees: Any, interpolation: Any = "nearest", expand: bool = False,
                 center: list[float] | None = None, fill: Any = 0) -> None:
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        self.interpolation = interpolation
        self.expand = expand
        _set_fill(self, fill)
        self.center = _setup_center(center)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        angle = tapegrad.empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        return dict(angle=angle)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.rotate, inpt, **params, interpolation=self.interpolation,
                                 expand=self.expand, center=self.center, fill=fill)


class RandomAffine(Transform):
    """A random affine map: rotation from ``degrees``, translation up to ``translate`` of the
    size, scale from ``scale``, shear from ``shear``."""

    _v1_transform_cls = _transforms.RandomAffine

    def __init__(self, degrees: Any, translate: Sequence[float] | None = None,
                 scale: Sequence[float] | None = None, shear: Any = None,
                 interpolation: Any = "nearest", fill: Any = 0,
                 center: list[float] | None = None) -> None:
        super().__init__()
        _set_affine_ranges(self, degrees, translate, scale, shear)
        self.interpolation = interpolation
        _set_fill(self, fill)
        self.center = _setup_center(center)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        height, width = query_size(flat_inputs)
        angle = tapegrad.empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        if self.translate is not None:
            max_dx = float(self.translate[0] * width)
            max_dy = float(self.translate[1] * height)
            tx = int(round(float(tapegrad.empty(1).uniform_(-max_dx, max_dx).item())))
            ty = int(round(float(tapegrad.empty(1).uniform_(-max_dy, max_dy).item())))
            translate = (tx, ty)
        else:
            translate = (0, 0)
        if self.scale is not None:
            scale = tapegrad.empty(1).uniform_(self.scale[0], self.scale[1]).item()
        else:
            scale = 1.0
        shear_x = shear_y = 0.0
        if self.shear is not None:
            shear_x = float(tapegrad.empty(1).uniform_(self.shear[0], self.shear[1]).item())
            if len(self.shear) == 4:
                shear_y = float(tapegrad.empty(1).uniform_(self.shear[2], self.shear[3]).item())
        return dict(angle=angle, translate=translate, scale=scale, shear=(shear_x, shear_y))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.affine, inpt, **params, interpolation=self.interpolation,
                                 fill=fill, center=self.center)


class RandomCrop(_ScalarFillForV1, Transform):
    """A crop of ``size`` at a random position, after optional padding (``pad_if_needed`` pads
    a too small image on both sides)."""

    _v1_transform_cls = _transforms.RandomCrop

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        params = super()._extract_params_for_v1_transform()
        padding = self.padding
        if padding is not None:
            pad_left, pad_right, pad_top, pad_bottom = padding
            padding = [pad_left, pad_top, pad_right, pad_bottom]
        params["padding"] = padding
        return params

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: Any = 0,
                 padding_mode: str = "constant") -> None:
        super().__init__()
        self.size = _setup_crop_size(size)
        if pad_if_needed or padding is not None:
            if padding is not None:
                _check_padding_arg(padding)
            _check_padding_mode_arg(padding_mode)
        self.padding = F._geometry._parse_pad_padding(padding) if padding else None
        self.pad_if_needed = pad_if_needed
        _set_fill(self, fill)
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        padded_height, padded_width = query_size(flat_inputs)
        if self.padding is not None:
            pad_left, pad_right, pad_top, pad_bottom = self.padding
            padded_height += pad_top + pad_bottom
            padded_width += pad_left + pad_right
        else:
            pad_left = pad_right = pad_top = pad_bottom = 0
        cropped_height, cropped_width = self.size
        if self.pad_if_needed:
            # pad both sides by the shortfall (v1 pads one side only)
            if padded_height < cropped_height:
                diff = cropped_height - padded_height
                pad_top += diff
                pad_bottom += diff
                padded_height += 2 * diff
            if padded_width < cropped_width:
                diff = cropped_width - padded_width
                pad_left += diff
                pad_right += diff
                padded_width += 2 * diff
        if padded_height < cropped_height or padded_width < cropped_width:
            raise ValueError(
                f"Required crop size {(cropped_height, cropped_width)} is larger than "
                f"{'padded ' if self.padding is not None else ''}input image size "
                f"{(padded_height, padded_width)}.")
        padding = [pad_left, pad_top, pad_right, pad_bottom]
        needs_pad = any(padding)
        needs_vert_crop, top = (
            (True, int(tapegrad.randint(0, padded_height - cropped_height + 1, size=())))
            if padded_height > cropped_height else (False, 0))
        needs_horz_crop, left = (
            (True, int(tapegrad.randint(0, padded_width - cropped_width + 1, size=())))
            if padded_width > cropped_width else (False, 0))
        return dict(needs_crop=needs_vert_crop or needs_horz_crop, top=top, left=left,
                    height=cropped_height, width=cropped_width, needs_pad=needs_pad,
                    padding=padding)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if params["needs_pad"]:
            fill = _get_fill(self._fill, type(inpt))
            inpt = self._call_kernel(F.pad, inpt, padding=params["padding"], fill=fill,
                                     padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = self._call_kernel(F.crop, inpt, top=params["top"], left=params["left"],
                                     height=params["height"], width=params["width"])
        return inpt


class RandomPerspective(_RandomApplyTransform):
    """With probability ``p``, move each corner inwards by up to ``distortion_scale`` of half
    the size and warp accordingly."""

    _v1_transform_cls = _transforms.RandomPerspective

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5,
                 interpolation: Any = "bilinear", fill: Any = 0) -> None:
        super().__init__(p=p)
        if not (0 <= distortion_scale <= 1):
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation
        _set_fill(self, fill)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        height, width = query_size(flat_inputs)
        distortion_scale = self.distortion_scale
        half_height = height // 2
        half_width = width // 2
        bound_height = int(distortion_scale * half_height) + 1
        bound_width = int(distortion_scale * half_width) + 1

        def draw(low: int, high: int) -> int:
            return int(tapegrad.randint(low, high, size=(1,)))

        topleft = [draw(0, bound_width), draw(0, bound_height)]
        topright = [draw(width - bound_width, width), draw(0, bound_height)]
        botright = [draw(width - bound_width, width), draw(height - bound_height, height)]
        botleft = [draw(0, bound_width), draw(height - bound_height, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        endpoints = [topleft, topright, botright, botleft]
        return dict(coefficients=_get_perspective_coeffs(startpoints, endpoints))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.perspective, inpt, startpoints=None, endpoints=None,
                                 fill=fill, interpolation=self.interpolation, **params)


class ElasticTransform(Transform):
    """Displace the pixels by uniform noise smoothed with a Gaussian of ``sigma`` and scaled
    by ``alpha`` pixels."""

    _v1_transform_cls = _transforms.ElasticTransform

    def __init__(self, alpha: float | Sequence[float] = 50.0,
                 sigma: float | Sequence[float] = 5.0, interpolation: Any = "bilinear",
                 fill: Any = 0) -> None:
        super().__init__()
        self.alpha = _setup_number_or_seq(alpha, "alpha")
        self.sigma = _setup_number_or_seq(sigma, "sigma")
        self.interpolation = interpolation
        _set_fill(self, fill)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        height, width = query_size(flat_inputs)
        dx = tapegrad.rand(1, 1, height, width) * 2 - 1
        if self.sigma[0] > 0.0:
            kx = int(8 * self.sigma[0] + 1)
            kx += 1 - kx % 2  # an odd kernel size
            dx = self._call_kernel(F.gaussian_blur, dx, [kx, kx], list(self.sigma))
        dx = dx * self.alpha[0] / width
        dy = tapegrad.rand(1, 1, height, width) * 2 - 1
        if self.sigma[1] > 0.0:
            ky = int(8 * self.sigma[1] + 1)
            ky += 1 - ky % 2
            dy = self._call_kernel(F.gaussian_blur, dy, [ky, ky], list(self.sigma))
        dy = dy * self.alpha[1] / height
        displacement = tapegrad.concat([dx, dy], 1).permute([0, 2, 3, 1])  # 1 x H x W x 2
        return dict(displacement=displacement)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        fill = _get_fill(self._fill, type(inpt))
        return self._call_kernel(F.elastic, inpt, **params, fill=fill,
                                 interpolation=self.interpolation)


class RandomIoUCrop(Transform):
    """The SSD crop: a random crop whose IoU with some box is at least a random threshold from
    ``sampler_options`` (1.0: leave the sample as it is); boxes whose centers fall outside are
    zeroed (``SanitizeBoundingBoxes`` removes them)."""

    def __init__(self, min_scale: float = 0.3, max_scale: float = 1.0,
                 min_aspect_ratio: float = 0.5, max_aspect_ratio: float = 2.0,
                 sampler_options: list[float] | None = None, trials: int = 40) -> None:
        super().__init__()
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.min_aspect_ratio = min_aspect_ratio
        self.max_aspect_ratio = max_aspect_ratio
        if sampler_options is None:
            sampler_options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
        self.options = sampler_options
        self.trials = trials

    def check_inputs(self, flat_inputs: list[Any]) -> None:
        if not (has_all(flat_inputs, tv_tensors.BoundingBoxes)
                and has_any(flat_inputs, PIL.Image.Image, tv_tensors.Image, is_pure_tensor)):
            raise TypeError(f"{type(self).__name__}() requires input sample to contain tensor "
                            "or PIL images and bounding boxes. Sample can also contain masks.")

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_h, orig_w = query_size(flat_inputs)
        bboxes = get_bounding_boxes(flat_inputs)
        while True:
            # a random minimum IoU; 1.0 or more means no crop
            idx = int(tapegrad.randint(low=0, high=len(self.options), size=(1,)))
            min_jaccard_overlap = self.options[idx]
            if min_jaccard_overlap >= 1.0:
                return dict()
            for _ in range(self.trials):
                # a crop size of the right scale and aspect ratio
                r = self.min_scale + (self.max_scale - self.min_scale) * tapegrad.rand(2)
                new_w = int(orig_w * r[0])
                new_h = int(orig_h * r[1])
                aspect_ratio = new_w / new_h
                if not (self.min_aspect_ratio <= aspect_ratio <= self.max_aspect_ratio):
                    continue
                # a position
                r = tapegrad.rand(2)
                left = int((orig_w - new_w) * r[0])
                top = int((orig_h - new_h) * r[1])
                right = left + new_w
                bottom = top + new_h
                if left == right or top == bottom:
                    continue
                # some box center must lie inside the crop
                xyxy_bboxes = F.convert_bounding_box_format(
                    bboxes.as_subclass(Tensor), bboxes.format, tv_tensors.BoundingBoxFormat.XYXY)
                cx = 0.5 * (xyxy_bboxes[..., 0] + xyxy_bboxes[..., 2])
                cy = 0.5 * (xyxy_bboxes[..., 1] + xyxy_bboxes[..., 3])
                is_within_crop_area = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not is_within_crop_area.any():
                    continue
                # and one of those boxes must overlap the crop enough
                xyxy_bboxes = xyxy_bboxes[is_within_crop_area]
                ious = _box_iou(xyxy_bboxes, tapegrad.tensor([[left, top, right, bottom]],
                                                            dtype=xyxy_bboxes.dtype,
                                                            device=xyxy_bboxes.device))
                if ious.max() < min_jaccard_overlap:
                    continue
                return dict(top=top, left=left, height=new_h, width=new_w,
                            is_within_crop_area=is_within_crop_area)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if len(params) < 1:
            return inpt
        output = self._call_kernel(F.crop, inpt, top=params["top"], left=params["left"],
                                   height=params["height"], width=params["width"])
        if isinstance(output, tv_tensors.BoundingBoxes):
            # the boxes whose centers fell outside become empty
            output[~params["is_within_crop_area"]] = 0
        return output


def _box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """torchvision.ops.box_iou."""
    # vision.ops: loaded on first use
    from tapegrad.vision.ops.boxes import box_iou

    return box_iou(boxes1, boxes2)  # type: ignore[no-any-return]


def _scaled_size(orig_height: int, orig_width: int, r: Any) -> tuple[int, int]:
    """(height, width) scaled by ``r``, each truncated to an integer."""
    return int(orig_height * r), int(orig_width * r)


def _set_resize_settings(transform: Any, interpolation: Any, antialias: bool | None) -> None:
    """Keep the ``interpolation`` and ``antialias`` that ``_resize_to`` resizes with."""
    transform.interpolation = interpolation
    transform.antialias = antialias


def _resize_to(transform: Any, inpt: Any, size: Any) -> Any:
    """``inpt`` resized to ``size`` with ``transform``'s interpolation and antialias."""
    return transform._call_kernel(F.resize, inpt, size, interpolation=transform.interpolation,
                                  antialias=transform.antialias)


class ScaleJitter(Transform):
    """Resize to ``target_size`` times a random scale from ``scale_range``, keeping the aspect
    ratio (large scale jitter)."""

    def __init__(self, target_size: tuple[int, int], scale_range: tuple[float, float] = (0.1, 2.0),
                 interpolation: Any = "bilinear", antialias: bool | None = True) -> None:
        super().__init__()
        self.target_size = target_size
        self.scale_range = scale_range
        _set_resize_settings(self, interpolation, antialias)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_height, orig_width = query_size(flat_inputs)
        scale = self.scale_range[0] + tapegrad.rand(1) * (self.scale_range[1]
                                                           - self.scale_range[0])
        r = min(self.target_size[1] / orig_height, self.target_size[0] / orig_width) * scale
        return dict(size=_scaled_size(orig_height, orig_width, r))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _resize_to(self, inpt, params["size"])


class RandomShortestSize(Transform):
    """Resize the shorter side to one of ``min_size`` (picked at random), the longer one
    capped at ``max_size``."""

    def __init__(self, min_size: list[int] | tuple[int] | int, max_size: int | None = None,
                 interpolation: Any = "bilinear", antialias: bool | None = True) -> None:
        super().__init__()
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        _set_resize_settings(self, interpolation, antialias)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_height, orig_width = query_size(flat_inputs)
        min_size = self.min_size[int(tapegrad.randint(len(self.min_size), ()))]
        r = min_size / min(orig_height, orig_width)
        if self.max_size is not None:
            r = min(r, self.max_size / max(orig_height, orig_width))
        return dict(size=_scaled_size(orig_height, orig_width, r))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _resize_to(self, inpt, params["size"])


class RandomResize(Transform):
    """Resize the shorter side to a size drawn uniformly from [``min_size``, ``max_size``)."""

    def __init__(self, min_size: int, max_size: int, interpolation: Any = "bilinear",
                 antialias: bool | None = True) -> None:
        super().__init__()
        self.min_size = min_size
        self.max_size = max_size
        _set_resize_settings(self, interpolation, antialias)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        size = int(tapegrad.randint(self.min_size, self.max_size, ()))
        return dict(size=[size])

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _resize_to(self, inpt, params["size"])

