"""Operations on bounding boxes: non-maximum suppression (``nms``, ``batched_nms``), the
pairwise IoU family (``box_iou``, generalized, distance and complete IoU), areas, format
conversions, clipping, filtering small boxes, and the boxes around masks.

Boxes are (x1, y1, x2, y2) unless a ``fmt`` says otherwise. Everything but ``nms`` and the
rotated IoU is written with tensor ops, so it has gradients (the IoU losses use them).
"""

import math

import numpy as np

from ... import any as _any
from ... import empty, float32, int64, stack, unique, where, zeros, zeros_like
from ... import max as _max
from ... import min as _min
from ... import tensor as _tensor
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops._registry import nondiff
from ._box_convert import (
    _box_cxcywh_to_xyxy,
    _box_cxcywhr_to_xywhr,
    _box_xywh_to_xyxy,
    _box_xywhr_to_cxcywhr,
    _box_xywhr_to_xyxyxyxy,
    _box_xyxy_to_cxcywh,
    _box_xyxy_to_xywh,
    _box_xyxyxyxy_to_xywhr,
)
from ._utils import _upcast

_FLOATING = ("float32", "float64")


def _type_name(t: Tensor) -> str:
    """torch's C++ name of a dtype in kernel messages: 'Float', 'Long', 'Half'..."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte", "bool": "Bool"}.get(str(t.dtype).split(".")[-1], str(t.dtype))


# ---------------------------------------------------------------------------------------------
# non-maximum suppression


@nondiff("torchvision.nms", dynamic_shape=True)
def _nms_kernel(dets: np.ndarray, scores: np.ndarray, *, iou_threshold: float) -> np.ndarray:
    """Greedy NMS: visit boxes by decreasing score (ties in their order), keep each box that no
    kept box overlaps with IoU > ``iou_threshold``; the kept indices, best first.

    The arithmetic is the kernel's, in the boxes' dtype: area = (x2 - x1) * (y2 - y1),
    inter = max(0, min(x2) - max(x1)) * max(0, min(y2) - max(y1)),
    IoU = inter / (area_i + area_j - inter), compared with the threshold in double.
    """
    if dets.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    x1, y1, x2, y2 = (np.ascontiguousarray(dets[:, k]) for k in range(4))
    areas = (x2 - x1) * (y2 - y1)
    # by decreasing score, equal scores in index order, NaN first (as torch's sort)
    nan = np.isnan(scores)
    order = np.argsort(-np.where(nan, 0, scores), kind="stable")
    order = np.concatenate([order[nan[order]], order[~nan[order]]])
    suppressed = np.zeros(dets.shape[0], dtype=bool)
    zero = dets.dtype.type(0)
    keep = []
    for pos, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[pos + 1:]
        rest = rest[~suppressed[rest]]
        if rest.size == 0:
            continue
        w = np.maximum(zero, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        h = np.maximum(zero, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = w * h
        ovr = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[ovr.astype(np.float64) > iou_threshold]] = True
    return np.asarray(keep, dtype=np.int64)


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Non-maximum suppression: the indices (int64) of the boxes kept, by decreasing score. A
    box is dropped when a higher-scoring kept box overlaps it with IoU > ``iou_threshold``.
    Boxes are (x1, y1, x2, y2) with ``0 <= x1 < x2`` and ``0 <= y1 < y2``."""
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.size(1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.size(1)}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if boxes.size(0) != scores.size(0):
        raise RuntimeError("boxes and scores should have same number of elements in dimension 0, "
                           f"got {boxes.size(0)} and {scores.size(0)}")
    if boxes.dtype != scores.dtype:
        raise RuntimeError("dets should have the same type as scores")
    if str(boxes.dtype).split(".")[-1] not in _FLOATING:
        raise NotImplementedError(f'"nms_kernel" not implemented for \'{_type_name(boxes)}\'')
    return _nms_kernel(boxes, scores, iou_threshold=float(iou_threshold))


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """NMS within each category (``idxs[i]`` is box i's): boxes of different categories never
    suppress each other. The kept indices (int64), by decreasing score."""
    # Up to 4000 coordinates: one NMS over boxes shifted apart by category; more: one per
    # category (the shifted coordinates grow with the number of categories).
    if boxes.numel() > 4000:
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes: Tensor, scores: Tensor, idxs: Tensor,
                                  iou_threshold: float) -> Tensor:
    # offset each category's boxes by (category * (max coordinate + 1)): no overlaps across
    if boxes.numel() == 0:
        return empty((0,), dtype=int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + _tensor(1).to(boxes))
    boxes_for_nms = boxes + offsets[:, None]
    return nms(boxes_for_nms, scores, iou_threshold)


def _batched_nms_vanilla(boxes: Tensor, scores: Tensor, idxs: Tensor,
                         iou_threshold: float) -> Tensor:
    # one NMS per category, then every kept index sorted by score
    keep_mask = zeros_like(scores, dtype=bool)
    for class_id in unique(idxs):
        curr_indices = where(idxs == class_id)[0]
        curr_keep_indices = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)
        keep_mask[curr_indices[curr_keep_indices]] = True
    keep_indices = where(keep_mask)[0]
    return keep_indices[scores[keep_indices].sort(descending=True)[1]]


# ---------------------------------------------------------------------------------------------
# filtering, clipping, formats, areas


def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
    """The indices of the boxes whose width and height are both at least ``min_size``."""
    ws, hs = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return where(keep)[0]


def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """Boxes clamped into an image of ``size`` = (height, width)."""
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


_BOX_FORMATS = ("xyxy", "xywh", "cxcywh", "xywhr", "cxcywhr", "xyxyxyxy")

# (in, out) -> the conversions to chain
_CONVERSIONS = {
    ("xywh", "xyxy"): (_box_xywh_to_xyxy,),
    ("cxcywh", "xyxy"): (_box_cxcywh_to_xyxy,),
    ("xyxy", "xywh"): (_box_xyxy_to_xywh,),
    ("xyxy", "cxcywh"): (_box_xyxy_to_cxcywh,),
    ("xywh", "cxcywh"): (_box_xywh_to_xyxy, _box_xyxy_to_cxcywh),
    ("cxcywh", "xywh"): (_box_cxcywh_to_xyxy, _box_xyxy_to_xywh),
    ("cxcywhr", "xywhr"): (_box_cxcywhr_to_xywhr,),
    ("xywhr", "cxcywhr"): (_box_xywhr_to_cxcywhr,),
    ("xywhr", "xyxyxyxy"): (_box_xywhr_to_xyxyxyxy,),
    ("xyxyxyxy", "xywhr"): (_box_xyxyxyxy_to_xywhr,),
}


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Boxes (``[..., K]``) from ``in_fmt`` to ``out_fmt``: 'xyxy' (corners), 'xywh' (corner,
    size), 'cxcywh' (centre, size), 'xywhr' and 'cxcywhr' (the same, rotated by r degrees
    counter-clockwise), 'xyxyxyxy' (the four corners of a rotated box)."""
    if in_fmt not in _BOX_FORMATS or out_fmt not in _BOX_FORMATS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and "
                         f"out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    key = (in_fmt, out_fmt)
    if key == ("cxcywhr", "xyxyxyxy"):
        return _box_xywhr_to_xyxyxyxy(_box_cxcywhr_to_xywhr(boxes).to(boxes.dtype))
    if key == ("xyxyxyxy", "cxcywhr"):
        return _box_xywhr_to_cxcywhr(_box_xyxyxyxy_to_xywhr(boxes).to(boxes.dtype))
    if key not in _CONVERSIONS:
        raise NotImplementedError(f"Unsupported Bounding Box Conversions for given in_fmt "
                                  f"{in_fmt} and out_fmt {out_fmt}")
    for step in _CONVERSIONS[key]:
        boxes = step(boxes)
    return boxes


def box_area(boxes: Tensor, fmt: str = "xyxy") -> Tensor:
    """The area of each box (``[..., 4]`` -> ``[...]``) in format 'xyxy', 'xywh' or 'cxcywh'."""
    if fmt not in ("xyxy", "xywh", "cxcywh"):
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _box_inter_union(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> tuple[Tensor, Tensor]:
    """The (..., N, M) intersection and union areas of every pair of boxes."""
    area1 = box_area(boxes1, fmt=fmt)
    area2 = box_area(boxes2, fmt=fmt)
    if fmt not in ("xyxy", "xywh", "cxcywh"):
        raise ValueError(f"Unsupported Box IoU Calculation for given fmt {fmt}.")
    if fmt == "xyxy":
        lt = _max(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = _min(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    elif fmt == "xywh":
        lt = _max(boxes1[..., None, :2], boxes2[..., None, :, :2])
        rb = _min(boxes1[..., None, :2] + boxes1[..., None, 2:],
                  boxes2[..., None, :, :2] + boxes2[..., None, :, 2:])
    else:  # cxcywh
        lt = _max(boxes1[..., None, :2] - boxes1[..., None, 2:] / 2,
                  boxes2[..., None, :, :2] - boxes2[..., None, :, 2:] / 2)
        rb = _min(boxes1[..., None, :2] + boxes1[..., None, 2:] / 2,
                  boxes2[..., None, :, :2] + boxes2[..., None, :, 2:] / 2)
    wh = _upcast(rb - lt).clamp(min=0)  # [..., N, M, 2]
    inter = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - inter
    return inter, union


def box_iou(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tensor:
    """The (..., N, M) intersection over union of every pair of boxes (Jaccard index). Axis-
    aligned formats: 'xyxy', 'xywh', 'cxcywh'; rotated ones: 'cxcywhr', 'xywhr', 'xyxyxyxy'
    (the rotated IoU has no gradient)."""
    axis_aligned_fmts = ("xyxy", "xywh", "cxcywh")
    rotated_fmts = ("cxcywhr", "xywhr", "xyxyxyxy")
    if fmt in axis_aligned_fmts:
        inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
        return inter / union
    if fmt in rotated_fmts:
        if fmt != "cxcywhr":
            boxes1 = box_convert(boxes1, in_fmt=fmt, out_fmt="cxcywhr")
            boxes2 = box_convert(boxes2, in_fmt=fmt, out_fmt="cxcywhr")
        return _box_iou_rotated(boxes1, boxes2)
    raise ValueError(f"Unsupported format '{fmt}'. Supported axis-aligned formats: "
                     f"{axis_aligned_fmts}. Supported rotated formats: {rotated_fmts}.")


# ---------------------------------------------------------------------------------------------
# rotated IoU


def _rotated_corners(boxes: np.ndarray) -> np.ndarray:
    """(n, 5) (cx, cy, w, h, angle in degrees) -> (n, 4, 2) corners, in order around the box.
    With y pointing down, the width side runs along (cos a, -sin a), the height side along
    (sin a, cos a)."""
    theta = boxes[:, 4] * (math.pi / 180.0)
    c, s = np.cos(theta) * 0.5, np.sin(theta) * 0.5
    cx, cy, w, h = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    p0 = np.stack([cx + s * h + c * w, cy + c * h - s * w], axis=-1)
    p1 = np.stack([cx - s * h + c * w, cy - c * h - s * w], axis=-1)
    p2 = np.stack([2 * cx, 2 * cy], axis=-1) - p0
    p3 = np.stack([2 * cx, 2 * cy], axis=-1) - p1
    return np.stack([p0, p1, p2, p3], axis=1)


def _clip_polygon(poly: list, edge_start: np.ndarray, edge_end: np.ndarray) -> list:
    """Sutherland-Hodgman: the part of a convex polygon on the left of the directed edge
    (``cross(edge, p - start) >= 0``)."""
    d = edge_end - edge_start

    def side(p: np.ndarray) -> float:
        return d[0] * (p[1] - edge_start[1]) - d[1] * (p[0] - edge_start[0])

    out = []
    for k in range(len(poly)):
        cur, nxt = poly[k], poly[(k + 1) % len(poly)]
        sc, sn = side(cur), side(nxt)
        if sc >= 0:
            out.append(cur)
        if (sc >= 0) != (sn >= 0):
            t = sc / (sc - sn)
            out.append(cur + (nxt - cur) * t)
    return out


def _polygon_area(poly: list) -> float:
    """The shoelace formula."""
    if len(poly) < 3:
        return 0.0
    area = 0.0
    for k in range(len(poly)):
        x0, y0 = poly[k]
        x1, y1 = poly[(k + 1) % len(poly)]
        area += x0 * y1 - x1 * y0
    return abs(area) / 2.0


@nondiff("torchvision.box_iou_rotated")
def _box_iou_rotated_kernel(boxes1: np.ndarray, boxes2: np.ndarray) -> np.ndarray:
    """IoU of every pair of (cx, cy, w, h, angle) boxes: the intersection of two rectangles
    is one clipped by the other's four edges; computed in double, each pair shifted to its
    centres' midpoint first. Boxes of area below 1e-14 have IoU 0; the result is clamped to
    [0, 1], in float32."""
    out = np.zeros((boxes1.shape[0], boxes2.shape[0]), dtype=np.float64)
    b1 = boxes1.astype(np.float64)
    b2 = boxes2.astype(np.float64)
    for i in range(b1.shape[0]):
        for j in range(b2.shape[0]):
            a, b = b1[i].copy(), b2[j].copy()
            area1, area2 = a[2] * a[3], b[2] * b[3]
            if area1 < 1e-14 or area2 < 1e-14:
                continue
            shift = (a[:2] + b[:2]) / 2.0
            a[:2] -= shift
            b[:2] -= shift
            pa, pb = _rotated_corners(a[None])[0], _rotated_corners(b[None])[0]
            # orient both counter-clockwise (the clipping keeps the left side of each edge)
            if _signed_area(pa) < 0:
                pa = pa[::-1]
            if _signed_area(pb) < 0:
                pb = pb[::-1]
            poly = list(pa)
            for k in range(4):
                if not poly:
                    break
                poly = _clip_polygon(poly, pb[k], pb[(k + 1) % 4])
            inter = _polygon_area(poly)
            base = area1 + area2 - inter
            out[i, j] = min(max(inter / base, 0.0), 1.0) if base > 1e-14 else 0.0
    return out.astype(np.float32)  # the kernel's output is float32 whatever the boxes'


def _signed_area(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) / 2.0)


def _box_iou_rotated(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    for t in (boxes1, boxes2):
        if str(t.dtype).split(".")[-1] not in _FLOATING:
            raise NotImplementedError(
                f'"box_iou_rotated_cpu" not implemented for \'{_type_name(t)}\'')
    return _box_iou_rotated_kernel(boxes1, boxes2)


# ---------------------------------------------------------------------------------------------
# IoU variants


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Generalized IoU (Rezatofighi et al. 2019) of every pair: IoU minus the fraction of the
    smallest enclosing box that the union does not cover."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lti = _min(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = _max(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai


def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Complete IoU (Zheng et al. 2020) of every pair: distance IoU minus ``alpha * v``, v the
    squared difference of the aspect ratios' arctangents (times 4/pi^2), alpha = v / (1 - IoU +
    v) taken as a constant."""
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[..., None, 2] - boxes1[..., None, 0]
    h_pred = boxes1[..., None, 3] - boxes1[..., None, 1]
    w_gt = boxes2[..., None, :, 2] - boxes2[..., None, :, 0]
    h_gt = boxes2[..., None, :, 3] - boxes2[..., None, :, 1]
    v = (4 / (math.pi ** 2)) * ((w_pred / h_pred).atan() - (w_gt / h_gt).atan()).pow(2)
    with no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Distance IoU (Zheng et al. 2020) of every pair: IoU minus the squared distance of the
    centres over the squared diagonal of the smallest enclosing box."""
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    diou, _ = _box_diou_iou(boxes1, boxes2, eps=eps)
    return diou


def _box_diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> tuple[Tensor, Tensor]:
    iou = box_iou(boxes1, boxes2)
    lti = _min(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = _max(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    diagonal_distance_squared = (whi[..., 0] ** 2) + (whi[..., 1] ** 2) + eps
    x_p = (boxes1[..., 0] + boxes1[..., 2]) / 2
    y_p = (boxes1[..., 1] + boxes1[..., 3]) / 2
    x_g = (boxes2[..., 0] + boxes2[..., 2]) / 2
    y_g = (boxes2[..., 1] + boxes2[..., 3]) / 2
    centers_distance_squared = ((_upcast(x_p[..., None] - x_g[..., None, :]) ** 2)
                                + (_upcast(y_p[..., None] - y_g[..., None, :]) ** 2))
    return iou - (centers_distance_squared / diagonal_distance_squared), iou


# ---------------------------------------------------------------------------------------------
# masks


def masks_to_boxes(masks: Tensor) -> Tensor:
    """The (N, 4) float boxes (x1, y1, x2, y2) enclosing the nonzero pixels of (N, H, W) masks
    (an empty mask gives zeros)."""
    if masks.numel() == 0:
        return zeros((0, 4), device=masks.device, dtype=float32)
    n, h, w = masks.shape
    masks_bool = masks.bool()
    non_zero_rows = _any(masks_bool, dim=2)
    non_zero_cols = _any(masks_bool, dim=1)
    empty_masks = ~_any(non_zero_rows, dim=1)
    non_zero_rows_f = non_zero_rows.float()
    non_zero_cols_f = non_zero_cols.float()
    # the first and the last nonzero row and column
    y1 = non_zero_rows_f.argmax(dim=1)
    x1 = non_zero_cols_f.argmax(dim=1)
    y2 = (h - 1) - non_zero_rows_f.flip(dims=[1]).argmax(dim=1)
    x2 = (w - 1) - non_zero_cols_f.flip(dims=[1]).argmax(dim=1)
    bounding_boxes = stack([x1, y1, x2, y2], dim=1).float()
    bounding_boxes[empty_masks] = 0
    return bounding_boxes


__all__ = ["nms", "batched_nms", "remove_small_boxes", "clip_boxes_to_image", "box_convert",
           "box_area", "box_iou", "generalized_box_iou", "complete_box_iou", "distance_box_iou",
           "masks_to_boxes"]
