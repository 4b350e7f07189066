"""The generalized IoU loss (Rezatofighi et al. 2019): ``1 - GIoU`` of matched box pairs."""

from ..._tensor import Tensor
from ._utils import _enclosing_box, _loss_inter_union, _upcast_non_float
from .focal_loss import _reduce


def generalized_box_iou_loss(boxes1: Tensor, boxes2: Tensor, reduction: str = "none",
                             eps: float = 1e-7) -> Tensor:
    """``1 - GIoU`` of each pair ``boxes1[i]``, ``boxes2[i]`` ((x1, y1, x2, y2), same shapes):
    1 minus the IoU plus the part of the smallest enclosing box outside the union; ``eps``
    keeps the divisions finite."""
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    iouk = intsctk / (unionk + eps)
    xc1, yc1, xc2, yc2 = _enclosing_box(boxes1.unbind(dim=-1), boxes2.unbind(dim=-1))
    area_c = (xc2 - xc1) * (yc2 - yc1)
    miouk = iouk - ((area_c - unionk) / (area_c + eps))
    return _reduce(1 - miouk, reduction, empty_mean=True)
