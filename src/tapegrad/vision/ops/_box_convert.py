"""Conversions between box formats, each an elementwise formula on the last dimension:
corners (x1, y1, x2, y2), corner and size (x, y, w, h), centre and size (cx, cy, w, h), and the
rotated formats (x1, y1, w, h, r), (cx, cy, w, h, r) and the four corners x1..y4, where r is
the angle in degrees, counter-clockwise in the image plane. Integer rotated boxes are computed
in floating point and rounded back."""

from math import pi

from ... import atan2, stack
from ..._tensor import Tensor


def _box_cxcywh_to_xyxy(boxes: Tensor) -> Tensor:
    # x1 = cx - w/2, y1 = cy - h/2, x2 = cx + w/2, y2 = cy + h/2
    cx, cy, w, h = boxes.unbind(-1)
    return stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)


def _box_xyxy_to_cxcywh(boxes: Tensor) -> Tensor:
    # cx = (x1 + x2)/2, cy = (y1 + y2)/2, w = x2 - x1, h = y2 - y1
    x1, y1, x2, y2 = boxes.unbind(-1)
    return stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)


def _box_xywh_to_xyxy(boxes: Tensor) -> Tensor:
    # x2 = x + w, y2 = y + h
    x, y, w, h = boxes.unbind(-1)
    return stack([x, y, x + w, y + h], dim=-1)


def _box_xyxy_to_xywh(boxes: Tensor) -> Tensor:
    # w = x2 - x1, h = y2 - y1
    x1, y1, x2, y2 = boxes.unbind(-1)
    return stack((x1, y1, x2 - x1, y2 - y1), dim=-1)


def _rounded_back(boxes: Tensor, dtype: object, integral: bool) -> Tensor:
    """Integer boxes were converted in floating point: round them back to their dtype."""
    if integral:
        boxes.round_()
        boxes = boxes.to(dtype)
    return boxes


def _box_cxcywhr_to_xywhr(boxes: Tensor) -> Tensor:
    # the top-left corner: the centre minus half of each rotated side
    dtype, integral = boxes.dtype, not boxes.is_floating_point()
    cx, cy, w, h, r = boxes.unbind(-1)
    r_rad = r * pi / 180.0
    cos, sin = r_rad.cos(), r_rad.sin()
    x1 = cx - w / 2 * cos - h / 2 * sin
    y1 = cy - h / 2 * cos + w / 2 * sin
    return _rounded_back(stack((x1, y1, w, h, r), dim=-1), dtype, integral)


def _box_xywhr_to_cxcywhr(boxes: Tensor) -> Tensor:
    # the centre: the top-left corner plus half of each rotated side
    dtype, integral = boxes.dtype, not boxes.is_floating_point()
    x1, y1, w, h, r = boxes.unbind(-1)
    r_rad = r * pi / 180.0
    cos, sin = r_rad.cos(), r_rad.sin()
    cx = x1 + w / 2 * cos + h / 2 * sin
    cy = y1 - w / 2 * sin + h / 2 * cos
    return _rounded_back(stack([cx, cy, w, h, r], dim=-1), dtype, integral)


def _box_xywhr_to_xyxyxyxy(boxes: Tensor) -> Tensor:
    # the corners clockwise from the top-left: along the width side, then the height side
    dtype, integral = boxes.dtype, not boxes.is_floating_point()
    x1, y1, w, h, r = boxes.unbind(-1)
    r_rad = r * pi / 180.0
    cos, sin = r_rad.cos(), r_rad.sin()
    x2 = x1 + w * cos
    y2 = y1 - w * sin
    x3 = x2 + h * sin
    y3 = y2 + h * cos
    x4 = x1 + h * sin
    y4 = y1 + h * cos
    return _rounded_back(stack((x1, y1, x2, y2, x3, y3, x4, y4), dim=-1), dtype, integral)


def _box_xyxyxyxy_to_xywhr(boxes: Tensor) -> Tensor:
    # the angle of the first side, the lengths of the first two sides
    dtype, integral = boxes.dtype, not boxes.is_floating_point()
    x1, y1, x2, y2, x3, y3, x4, y4 = boxes.unbind(-1)
    r_rad = atan2(y1 - y2, x2 - x1)
    r = r_rad * 180 / pi
    w = ((x2 - x1) ** 2 + (y1 - y2) ** 2).sqrt()
    h = ((x3 - x2) ** 2 + (y3 - y2) ** 2).sqrt()
    return _rounded_back(stack((x1, y1, w, h, r), dim=-1), dtype, integral)
