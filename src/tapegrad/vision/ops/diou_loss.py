"""The distance IoU loss (Zheng et al. 2020): ``1 - IoU`` plus the squared distance of the
boxes' centres over the squared diagonal of their enclosing box."""

from ..._tensor import Tensor
from ._utils import _enclosing_box, _loss_inter_union, _upcast_non_float
from .focal_loss import _reduce


def distance_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none",
                          eps: float = 1e-7) -> Tensor:
    """The DIoU loss of each pair ``boxes1[i]``, ``boxes2[i]`` ((x1, y1, x2, y2))."""
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    loss, _ = _diou_iou_loss(boxes1, boxes2, eps)
    return _reduce(loss, reduction, empty_mean=True)


def _diou_iou_loss(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> tuple[Tensor, Tensor]:
    """The DIoU loss and the IoU of each pair."""
    intsct, union = _loss_inter_union(boxes1, boxes2)
    iou = intsct / (union + eps)
    corners1, corners2 = boxes1.unbind(dim=-1), boxes2.unbind(dim=-1)
    x1, y1, x2, y2 = corners1
    x1g, y1g, x2g, y2g = corners2
    xc1, yc1, xc2, yc2 = _enclosing_box(corners1, corners2)
    diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    x_p = (x2 + x1) / 2
    y_p = (y2 + y1) / 2
    x_g = (x1g + x2g) / 2
    y_g = (y1g + y2g) / 2
    centers_distance_squared = ((x_p - x_g) ** 2) + ((y_p - y_g) ** 2)
    loss = 1 - iou + (centers_distance_squared / diagonal_distance_squared)
    return loss, iou
