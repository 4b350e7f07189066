"""The complete IoU loss (Zheng et al. 2020): the distance IoU loss plus ``alpha * v``, ``v``
measuring how the aspect ratios differ and ``alpha = v / (1 - IoU + v)`` a constant weight."""

import math

from ... import atan, pow
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ._utils import _upcast_non_float
from .diou_loss import _diou_iou_loss
from .focal_loss import _reduce


def complete_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none",
                          eps: float = 1e-7) -> Tensor:
    """The CIoU loss of each pair ``boxes1[i]``, ``boxes2[i]`` ((x1, y1, x2, y2))."""
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    w_pred = x2 - x1
    h_pred = y2 - y1
    w_gt = x2g - x1g
    h_gt = y2g - y1g
    # v = 4 / pi^2 * (atan(w_gt / h_gt) - atan(w / h))^2
    v = (4 / (math.pi ** 2)) * pow((atan(w_gt / h_gt) - atan(w_pred / h_pred)), 2)
    with no_grad():
        alpha = v / (1 - iou + v + eps)
    loss = diou_loss + alpha * v
    return _reduce(loss, reduction, empty_mean=True)
