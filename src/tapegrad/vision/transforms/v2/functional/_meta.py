"""The v2 metadata functionals: image and video sizes, the bounding box formats and their
conversions, and clamping boxes and keypoints to the canvas.

Box formats convert through XYXY (or, for rotated boxes, XYWHR): ``_xywh_to_xyxy`` adds the
size to the corner, ``_cxcywh_to_corner`` subtracts half the size from the center, ... in place
when asked, in torchvision's order of operations. Rotated boxes are clamped edge by edge
(``_clamp_rotated_bounding_boxes``).
"""

from __future__ import annotations

from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.vision import tv_tensors
from tapegrad.vision.tv_tensors import BoundingBoxFormat
from tapegrad.vision.tv_tensors._bounding_boxes import CLAMPING_MODE_TYPE

from ... import _functional_pil as _FP
from ._utils import _get_kernel, _register_kernel_internal, is_pure_tensor


def get_dimensions(inpt: Any) -> list[int]:
    """[channels, height, width] of an image or video (tensor, TVTensor or PIL image)."""
    kernel = _get_kernel(get_dimensions, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(get_dimensions, Tensor)
@_register_kernel_internal(get_dimensions, tv_tensors.Image, tv_tensor_wrapper=False)
def get_dimensions_image(image: Tensor) -> list[int]:
    chw = list(image.shape[-3:])
    ndims = len(chw)
    if ndims == 3:
        return chw
    elif ndims == 2:
        chw.insert(0, 1)
        return chw
    raise TypeError(f"Input tensor should have at least two dimensions, but got {ndims}")


_get_dimensions_image_pil = _register_kernel_internal(get_dimensions, PIL.Image.Image)(
    _FP.get_dimensions)


@_register_kernel_internal(get_dimensions, tv_tensors.Video, tv_tensor_wrapper=False)
def get_dimensions_video(video: Tensor) -> list[int]:
    return get_dimensions_image(video)


def get_num_channels(inpt: Any) -> int:
    """The number of channels of an image or video."""
    kernel = _get_kernel(get_num_channels, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(get_num_channels, Tensor)
@_register_kernel_internal(get_num_channels, tv_tensors.Image, tv_tensor_wrapper=False)
def get_num_channels_image(image: Tensor) -> int:
    chw = image.shape[-3:]
    ndims = len(chw)
    if ndims == 3:
        return chw[0]  # type: ignore[no-any-return]
    elif ndims == 2:
        return 1
    raise TypeError(f"Input tensor should have at least two dimensions, but got {ndims}")


_get_num_channels_image_pil = _register_kernel_internal(get_num_channels, PIL.Image.Image)(
    _FP.get_image_num_channels)


@_register_kernel_internal(get_num_channels, tv_tensors.Video, tv_tensor_wrapper=False)
def get_num_channels_video(video: Tensor) -> int:
    return get_num_channels_image(video)


# the v1 name, kept by v2
get_image_num_channels = get_num_channels


def get_size(inpt: Any) -> list[int]:
    """[height, width] of an image, video or mask; the canvas size of boxes and keypoints."""
    kernel = _get_kernel(get_size, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(get_size, Tensor)
@_register_kernel_internal(get_size, tv_tensors.Image, tv_tensor_wrapper=False)
def get_size_image(image: Tensor) -> list[int]:
    hw = list(image.shape[-2:])
    ndims = len(hw)
    if ndims == 2:
        return hw
    raise TypeError(f"Input tensor should have at least two dimensions, but got {ndims}")


@_register_kernel_internal(get_size, PIL.Image.Image)
def _get_size_image_pil(image: Any) -> list[int]:
    width, height = _FP.get_image_size(image)
    return [height, width]


@_register_kernel_internal(get_size, tv_tensors.Video, tv_tensor_wrapper=False)
def get_size_video(video: Tensor) -> list[int]:
    return get_size_image(video)


@_register_kernel_internal(get_size, tv_tensors.Mask, tv_tensor_wrapper=False)
def get_size_mask(mask: Tensor) -> list[int]:
    return get_size_image(mask)


@_register_kernel_internal(get_size, tv_tensors.BoundingBoxes, tv_tensor_wrapper=False)
def get_size_bounding_boxes(bounding_box: Any) -> list[int]:
    return list(bounding_box.canvas_size)


@_register_kernel_internal(get_size, tv_tensors.KeyPoints, tv_tensor_wrapper=False)
def get_size_keypoints(keypoints: Any) -> list[int]:
    return list(keypoints.canvas_size)


def get_num_frames(inpt: Any) -> int:
    """The number of frames (T) of a (..., T, C, H, W) video."""
    kernel = _get_kernel(get_num_frames, type(inpt))
    return kernel(inpt)  # type: ignore[no-any-return]


@_register_kernel_internal(get_num_frames, Tensor)
@_register_kernel_internal(get_num_frames, tv_tensors.Video, tv_tensor_wrapper=False)
def get_num_frames_video(video: Tensor) -> int:
    return video.shape[-4]  # type: ignore[no-any-return]


# -- box format conversions -------------------------------------------------------------------

def _floor_div_unless_float(t: Tensor) -> Any:
    return None if t.is_floating_point() else "floor"


def _xywh_to_xyxy(xywh: Tensor, inplace: bool) -> Tensor:
    xyxy = xywh if inplace else xywh.clone()
    xyxy[..., 2:] += xyxy[..., :2]
    return xyxy


def _xyxy_to_xywh(xyxy: Tensor, inplace: bool) -> Tensor:
    xywh = xyxy if inplace else xyxy.clone()
    xywh[..., 2:] -= xywh[..., :2]
    return xywh


def _xywh_to_cxcywh(xywh: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        xywh = xywh.clone()
    # integer boxes keep integer centers (floor division)
    xywh[..., :2].add_(xywh[..., 2:].div(2, rounding_mode=_floor_div_unless_float(xywh)))
    return xywh


def _cxcywh_to_corner(cxcywh: Tensor, inplace: bool, to_xyxy: bool) -> Tensor:
    """CXCYWH boxes as XYXY (``to_xyxy``) or XYWH; integer boxes are converted in float and
    rounded back to their dtype."""
    original = cxcywh
    dtype = cxcywh.dtype
    need_cast = not cxcywh.is_floating_point()
    if need_cast:
        cxcywh = cxcywh.float()
    elif not inplace:
        cxcywh = cxcywh.clone()
    half_wh = cxcywh[..., 2:] / 2
    cxcywh[..., :2].sub_(half_wh)  # the top-left corner x1 y1
    if to_xyxy:
        cxcywh[..., 2:].add_(cxcywh[..., :2])  # x2 y2
    if need_cast:
        if to_xyxy:
            cxcywh = cxcywh.to(dtype)
        else:
            # the width and height from the rounded corners, so that x1 + w gives the rounded x2
            x2y2 = (cxcywh[..., :2] + cxcywh[..., 2:]).to(dtype)
            cxcywh = cxcywh.to(dtype)
            cxcywh[..., 2:] = x2y2 - cxcywh[..., :2]
        if inplace:
            original[:] = cxcywh
            return original
    return cxcywh


def _xyxy_to_cxcywh(xyxy: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        xyxy = xyxy.clone()
    xyxy[..., 2:].sub_(xyxy[..., :2])  # w h
    # (2 x1 + w) / 2 is the center, floored for integer boxes
    xyxy[..., :2].mul_(2).add_(xyxy[..., 2:]).div_(
        2, rounding_mode=_floor_div_unless_float(xyxy))
    return xyxy


def _xyxy_to_keypoints(bounding_boxes: Tensor) -> Tensor:
    return bounding_boxes[:, [[0, 1], [2, 1], [2, 3], [0, 3]]]


def _xyxyxyxy_to_keypoints(bounding_boxes: Tensor) -> Tensor:
    return bounding_boxes[:, [[0, 1], [2, 3], [4, 5], [6, 7]]]


def _move_rotated_reference(boxes: Tensor, inplace: bool, to_corner: bool) -> Tensor:
    """Rotated boxes' reference point moved by their half diagonal, rotated by their angle:
    from the center to the top-left corner (``to_corner``, CXCYWHR -> XYWHR) or back."""
    if not inplace:
        boxes = boxes.clone()
    half_wh = boxes[..., 2:-1].div(-2, rounding_mode=_floor_div_unless_float(boxes)).abs_()
    r_rad = boxes[..., 4].mul(tapegrad.pi).div(180.0)
    cos, sin = r_rad.cos(), r_rad.sin()
    # the rotated half diagonal: (w/2 cos + h/2 sin, h/2 cos - w/2 sin)
    w_cos, h_sin = half_wh[..., 0].mul(cos), half_wh[..., 1].mul(sin)
    w_sin, h_cos = half_wh[..., 0].mul(sin), half_wh[..., 1].mul(cos)
    if to_corner:
        boxes[..., 0].sub_(w_cos).sub_(h_sin)
        boxes[..., 1].add_(w_sin).sub_(h_cos)
    else:
        boxes[..., 0].add_(w_cos).add_(h_sin)
        boxes[..., 1].sub_(w_sin).add_(h_cos)
    return boxes


def _xywhr_to_xyxyxyxy(xywhr: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        xywhr = xywhr.clone()
    wh = xywhr[..., 2:-1]
    r_rad = xywhr[..., 4].mul(tapegrad.pi).div(180.0)
    cos, sin = r_rad.cos(), r_rad.sin()
    xywhr = xywhr[..., :2].tile((1, 4))  # the four corners start at the top-left one
    xywhr[..., 2].add_(wh[..., 0].mul(cos))  # x2 = x1 + w cos
    xywhr[..., 3].sub_(wh[..., 0].mul(sin))  # y2 = y1 - w sin
    xywhr[..., 4].add_(wh[..., 0].mul(cos).add(wh[..., 1].mul(sin)))  # x3 = x2 + h sin
    xywhr[..., 5].sub_(wh[..., 0].mul(sin).sub(wh[..., 1].mul(cos)))  # y3 = y2 + h cos
    xywhr[..., 6].add_(wh[..., 1].mul(sin))  # x4 = x1 + h sin
    xywhr[..., 7].add_(wh[..., 1].mul(cos))  # y4 = y1 + h cos
    return xywhr


def _xyxyxyxy_to_xywhr(xyxyxyxy: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        xyxyxyxy = xyxyxyxy.clone()
    dtype = xyxyxyxy.dtype
    need_cast = dtype not in (tapegrad.float32, tapegrad.float64)
    if need_cast:
        xyxyxyxy = xyxyxyxy.to(tapegrad.float32)
    r_rad = tapegrad.atan2(xyxyxyxy[..., 1].sub(xyxyxyxy[..., 3]),
                           xyxyxyxy[..., 2].sub(xyxyxyxy[..., 0]))
    xyxyxyxy[..., 4:6].sub_(xyxyxyxy[..., 2:4])  # the second edge (x3 - x2, y3 - y2)
    xyxyxyxy[..., 2:4].sub_(xyxyxyxy[..., :2])  # the first edge (x2 - x1, y2 - y1)
    xyxyxyxy[..., 2] = xyxyxyxy[..., 2].pow(2).add(xyxyxyxy[..., 3].pow(2)).sqrt()  # w
    xyxyxyxy[..., 3] = xyxyxyxy[..., 4].pow(2).add(xyxyxyxy[..., 5].pow(2)).sqrt()  # h
    xyxyxyxy[..., 4] = r_rad.div_(tapegrad.pi).mul_(180.0)
    if need_cast:
        xyxyxyxy = xyxyxyxy.to(dtype)
    return xyxyxyxy[..., :5]


def _convert_bounding_box_format(bounding_boxes: Tensor, old_format: BoundingBoxFormat,
                                 new_format: BoundingBoxFormat, inplace: bool = False
                                 ) -> Tensor:
    if new_format == old_format:
        return bounding_boxes
    if (tv_tensors.is_rotated_bounding_format(old_format)
            ^ tv_tensors.is_rotated_bounding_format(new_format)):
        raise ValueError("Cannot convert between rotated and unrotated bounding boxes.")
    # the direct conversions, then everything through XYXY (XYWHR for rotated boxes)
    if old_format == BoundingBoxFormat.XYWH and new_format == BoundingBoxFormat.CXCYWH:
        return _xywh_to_cxcywh(bounding_boxes, inplace)
    if old_format == BoundingBoxFormat.CXCYWH and new_format == BoundingBoxFormat.XYWH:
        return _cxcywh_to_corner(bounding_boxes, inplace, to_xyxy=False)
    if old_format == BoundingBoxFormat.XYWH:
        bounding_boxes = _xywh_to_xyxy(bounding_boxes, inplace)
    elif old_format == BoundingBoxFormat.CXCYWH:
        bounding_boxes = _cxcywh_to_corner(bounding_boxes, inplace, to_xyxy=True)
    elif old_format == BoundingBoxFormat.CXCYWHR:
        bounding_boxes = _move_rotated_reference(bounding_boxes, inplace, to_corner=True)
    elif old_format == BoundingBoxFormat.XYXYXYXY:
        bounding_boxes = _xyxyxyxy_to_xywhr(bounding_boxes, inplace)
    if new_format == BoundingBoxFormat.XYWH:
        bounding_boxes = _xyxy_to_xywh(bounding_boxes, inplace)
    elif new_format == BoundingBoxFormat.CXCYWH:
        bounding_boxes = _xyxy_to_cxcywh(bounding_boxes, inplace)
    elif new_format == BoundingBoxFormat.CXCYWHR:
        bounding_boxes = _move_rotated_reference(bounding_boxes, inplace, to_corner=False)
    elif new_format == BoundingBoxFormat.XYXYXYXY:
        bounding_boxes = _xywhr_to_xyxyxyxy(bounding_boxes, inplace)
    return bounding_boxes


def convert_bounding_box_format(inpt: Tensor, old_format: BoundingBoxFormat | None = None,
                                new_format: BoundingBoxFormat | None = None,
                                inplace: bool = False) -> Tensor:
    """Convert boxes to ``new_format``; a plain tensor needs its ``old_format``."""
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: "
                        "'new_format'")
    if isinstance(old_format, str):
        old_format = BoundingBoxFormat[old_format.upper()]
    if isinstance(new_format, str):
        new_format = BoundingBoxFormat[new_format.upper()]
    if is_pure_tensor(inpt):
        if old_format is None:
            raise ValueError("For pure tensor inputs, `old_format` has to be passed.")
        return _convert_bounding_box_format(inpt, old_format=old_format, new_format=new_format,
                                            inplace=inplace)
    elif isinstance(inpt, tv_tensors.BoundingBoxes):
        if old_format is not None:
            raise ValueError("For bounding box tv_tensor inputs, `old_format` must not be "
                             "passed.")
        output = _convert_bounding_box_format(inpt.as_subclass(Tensor), old_format=inpt.format,
                                              new_format=new_format, inplace=inplace)
        return tv_tensors.wrap(output, like=inpt, format=new_format)
    raise TypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got "
                    f"{type(inpt)} instead.")


# -- clamping ----------------------------------------------------------------------------------

def _clamp_bounding_boxes(bounding_boxes: Tensor, format: BoundingBoxFormat,
                          canvas_size: tuple[int, int], clamping_mode: CLAMPING_MODE_TYPE
                          ) -> Tensor:
    if clamping_mode is None:
        return bounding_boxes.clone()
    # clamp in XYXY, as floats (the conversions of integer boxes round)
    in_dtype = bounding_boxes.dtype
    bounding_boxes = (bounding_boxes.clone() if bounding_boxes.is_floating_point()
                      else bounding_boxes.float())
    xyxy_boxes = convert_bounding_box_format(bounding_boxes, old_format=format,
                                             new_format=BoundingBoxFormat.XYXY, inplace=True)
    xyxy_boxes[..., 0::2].clamp_(min=0, max=canvas_size[1])
    xyxy_boxes[..., 1::2].clamp_(min=0, max=canvas_size[0])
    out_boxes = convert_bounding_box_format(xyxy_boxes, old_format=BoundingBoxFormat.XYXY,
                                            new_format=format, inplace=True)
    return out_boxes.to(in_dtype)


def _order_bounding_boxes_points(bounding_boxes: Tensor, indices: Tensor | None = None
                                 ) -> tuple[Tensor, Tensor]:
    """The corners of rotated boxes rotated in turn so that the first is the leftmost (the
    lowest of those), and the index map that did it (or apply a given ``indices``)."""
    if indices is None:
        output_xyxyxyxy = bounding_boxes.reshape(-1, 8)
        x, y = output_xyxyxyxy[..., 0::2], output_xyxyxyxy[..., 1::2]
        y_max = tapegrad.max(y.abs(), dim=1, keepdim=True)[0]
        x_max = tapegrad.max(x.abs(), dim=1, keepdim=True)[0]
        _, x1 = (y / y_max + (x / x_max) * 100).min(dim=1)
        indices = tapegrad.ones_like(output_xyxyxyxy)
        indices[..., 0] = x1.mul(2)
        indices.cumsum_(1).remainder_(8)
    return indices, bounding_boxes.gather(1, indices.to(tapegrad.int64))


def _get_slope_and_intercept(box: Tensor) -> tuple[Tensor, Tensor]:
    """The slope a and intercept b (y = a x + b) of the four edges of each box."""
    x, y = box[..., ::2], box[..., 1::2]
    a = y.diff(append=y[..., 0:1]) / x.diff(append=x[..., 0:1])
    b = y - a * x
    return a, b


def _get_intersection_point(a: Tensor, b: Tensor) -> Tensor:
    """The corners where consecutive edges (slopes a, intercepts b) meet."""
    batch_size = a.shape[0]
    x = b.diff(prepend=b[..., 3:4]).neg() / a.diff(prepend=a[..., 3:4])
    y = a * x + b
    return tapegrad.cat((x.unsqueeze(-1), y.unsqueeze(-1)), dim=-1).view(batch_size, 8)


def _clamp_y_intercept(bounding_boxes: Tensor, original_bounding_boxes: Tensor,
                       canvas_size: tuple[int, int], clamping_mode: CLAMPING_MODE_TYPE
                       ) -> Tensor:
    """The edges' intercepts moved so that the box stays within the canvas (along y), not
    beyond the original box's."""
    a, b = _get_slope_and_intercept(bounding_boxes)
    a1, a2, a3, a4 = a.unbind(-1)
    b1, b2, b3, b4 = b.unbind(-1)
    _, bm = _get_slope_and_intercept(original_bounding_boxes)
    b1m, b2m, b3m, b4m = bm.unbind(-1)
    b1 = b2.clamp(b1, b3).clamp(0, canvas_size[0])
    b4 = b3.clamp(b2, b4).clamp(0, canvas_size[0])
    if clamping_mode is not None and clamping_mode == "hard":
        # hard clamping keeps the box a rectangle inside the canvas
        b1 = b4 = (b1 + b4) / 2
        b2_candidates = tapegrad.stack([
            b1 * a2 / a1,
            b3 * a2 / a3,
            (a1 - a2) * canvas_size[1] + b1,
            (a3 - a2) * canvas_size[1] + b3,
        ], dim=1)
        b2 = tapegrad.max(b2_candidates, dim=1)[0].clamp(max=b2)
        b3_candidates = tapegrad.stack([
            canvas_size[0] * (1 - a3 / a4) + b4 * a3 / a4,
            canvas_size[0] * (1 - a3 / a2) + b2 * a3 / a2,
            (a2 - a3) * canvas_size[1] + b2,
            (a4 - a3) * canvas_size[1] + b4,
        ], dim=1)
        b3 = tapegrad.min(b3_candidates, dim=1)[0].clamp(min=b3)
    b1.clamp_(b1m, b3m)
    b3.clamp_(b1m, b3m)
    b2.clamp_(b2m, b4m)
    b4.clamp_(b2m, b4m)
    return tapegrad.stack([b1, b2, b3, b4], dim=-1)


def _clamp_along_y_axis(bounding_boxes: Tensor, original_bounding_boxes: Tensor,
                        canvas_size: tuple[int, int], clamping_mode: CLAMPING_MODE_TYPE
                        ) -> Tensor:
    """Clamp the first (leftmost) corner of rotated boxes to x >= 0 by moving its edges."""
    original_shape = bounding_boxes.shape
    bounding_boxes = bounding_boxes.reshape(-1, 8)
    original_bounding_boxes = original_bounding_boxes.reshape(-1, 8)
    a, b = _get_slope_and_intercept(bounding_boxes)
    x1, y1, x2, y2, x3, y3, x4, y4 = bounding_boxes.unbind(-1)
    b = _clamp_y_intercept(bounding_boxes, original_bounding_boxes, canvas_size, clamping_mode)
    case_a = _get_intersection_point(a, b)
    case_b = bounding_boxes.clone()
    case_b[..., 0].clamp_(0)
    case_b[..., 6].clamp_(0)
    case_c = tapegrad.zeros_like(case_b)
    cond_a = (x1 < 0) & ~case_a.isnan().any(-1)  # the first point is left of the canvas
    cond_b = y1.isclose(y2) | y3.isclose(y4)  # the first edge is nearly vertical
    cond_c = (x1 <= 0) & (x2 <= 0) & (x3 <= 0) & (x4 <= 0)  # all points left of the canvas
    cond_c = cond_c | y1.isclose(y4) | y2.isclose(y3) | (cond_b & x1.isclose(x2))
    for cond, case in zip([cond_a, cond_b, cond_c], [case_a, case_b, case_c], strict=True):
        bounding_boxes = tapegrad.where(cond.unsqueeze(1).repeat(1, 8), case.reshape(-1, 8),
                                        bounding_boxes)
    return bounding_boxes.reshape(original_shape)


def _clamp_rotated_bounding_boxes(bounding_boxes: Tensor, format: BoundingBoxFormat,
                                  canvas_size: tuple[int, int],
                                  clamping_mode: CLAMPING_MODE_TYPE) -> Tensor:
    """Clamp rotated boxes: four times, clamp the leftmost corner to x >= 0 and turn the
    canvas a quarter, so that every side of the canvas clamps once."""
    if clamping_mode is None:
        return bounding_boxes.clone()
    original_shape = bounding_boxes.shape
    bounding_boxes = bounding_boxes.clone()
    out_boxes = convert_bounding_box_format(bounding_boxes, old_format=format,
                                            new_format=BoundingBoxFormat.XYXYXYXY,
                                            inplace=True).reshape(-1, 8)
    original_boxes = out_boxes.clone()
    for _ in range(4):
        indices, out_boxes = _order_bounding_boxes_points(out_boxes)
        _, original_boxes = _order_bounding_boxes_points(original_boxes, indices)
        out_boxes = _clamp_along_y_axis(out_boxes, original_boxes, canvas_size, clamping_mode)
        _, out_boxes = _order_bounding_boxes_points(out_boxes, indices)
        _, original_boxes = _order_bounding_boxes_points(original_boxes, indices)
        # rotate the frame by 90 degrees: (x, y) -> (y, width - x)
        out_boxes[:, ::2], out_boxes[:, 1::2] = (
            out_boxes[:, 1::2].clone(), canvas_size[1] - out_boxes[:, ::2].clone())
        original_boxes[:, ::2], original_boxes[:, 1::2] = (
            original_boxes[:, 1::2].clone(), canvas_size[1] - original_boxes[:, ::2].clone())
        canvas_size = (canvas_size[1], canvas_size[0])
    return convert_bounding_box_format(out_boxes, old_format=BoundingBoxFormat.XYXYXYXY,
                                       new_format=format, inplace=True).reshape(original_shape)


def clamp_bounding_boxes(inpt: Tensor, format: BoundingBoxFormat | None = None,
                         canvas_size: tuple[int, int] | None = None,
                         clamping_mode: CLAMPING_MODE_TYPE | str = "auto") -> Tensor:
    """Clamp boxes to their canvas (``"auto"``: the boxes' own clamping mode)."""
    if clamping_mode is not None and clamping_mode not in ("soft", "hard", "auto"):
        raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
    if is_pure_tensor(inpt):
        if format is None or canvas_size is None or (
                clamping_mode is not None and clamping_mode == "auto"):
            raise ValueError("For pure tensor inputs, `format`, `canvas_size` and "
                             "`clamping_mode` have to be passed.")
        if tv_tensors.is_rotated_bounding_format(format):
            return _clamp_rotated_bounding_boxes(inpt, format=format, canvas_size=canvas_size,
                                                 clamping_mode=clamping_mode)
        return _clamp_bounding_boxes(inpt, format=format, canvas_size=canvas_size,
                                     clamping_mode=clamping_mode)
    elif isinstance(inpt, tv_tensors.BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("For bounding box tv_tensor inputs, `format` and `canvas_size` "
                             "must not be passed.")
        if clamping_mode is not None and clamping_mode == "auto":
            clamping_mode = inpt.clamping_mode
        clamp = (_clamp_rotated_bounding_boxes if tv_tensors.is_rotated_bounding_format(
            inpt.format) else _clamp_bounding_boxes)
        output = clamp(inpt.as_subclass(Tensor), format=inpt.format,
                       canvas_size=inpt.canvas_size, clamping_mode=clamping_mode)
        return tv_tensors.wrap(output, like=inpt)
    raise TypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got "
                    f"{type(inpt)} instead.")


def _clamp_keypoints(keypoints: Tensor, canvas_size: tuple[int, int]) -> Tensor:
    dtype = keypoints.dtype
    keypoints = keypoints.clone() if keypoints.is_floating_point() else keypoints.float()
    # the last pixel is canvas_size - 1: a point is a pixel, not a corner
    keypoints[..., 0].clamp_(min=0, max=canvas_size[1] - 1)
    keypoints[..., 1].clamp_(min=0, max=canvas_size[0] - 1)
    return keypoints.to(dtype=dtype)


def clamp_keypoints(inpt: Tensor, canvas_size: tuple[int, int] | None = None) -> Tensor:
    """Clamp keypoints to the pixels of their canvas."""
    if is_pure_tensor(inpt):
        if canvas_size is None:
            raise ValueError("For pure tensor inputs, `canvas_size` has to be passed.")
        return _clamp_keypoints(inpt, canvas_size=canvas_size)
    elif isinstance(inpt, tv_tensors.KeyPoints):
        if canvas_size is not None:
            raise ValueError(
                "For keypoints tv_tensor inputs, `canvas_size` must not be passed.")
        output = _clamp_keypoints(inpt.as_subclass(Tensor), canvas_size=inpt.canvas_size)
        return tv_tensors.wrap(output, like=inpt)
    raise TypeError("Input can either be a plain tensor or a keypoints tv_tensor, but got "
                    f"{type(inpt)} instead.")
