"""Helpers of the detection ops: boxes given per image turned into the (K, 5) "rois" layout
(batch index first), their shape checks, the dtype widening that keeps box arithmetic from
overflowing, the intersection, union and enclosing box the box losses share, and the split of a
model's parameters into normalization and other ones (for weight decay), and the renaming of
parameters that version-1 checkpoints of a layer stored under other names."""

from collections.abc import Sequence

from ... import cat, full_like, int32, int64, nn, zeros_like
from ... import float32 as _float32
from ... import float64 as _float64
from ... import max as _max
from ... import min as _min
from ..._tensor import Tensor
from ...nn.modules.batchnorm import _BatchNorm
from ...nn.modules.instancenorm import _InstanceNorm


def _assert(condition: bool, message: str) -> None:
    """``torch._assert``: an AssertionError with ``message`` unless ``condition``."""
    if not condition:
        raise AssertionError(message)


def _cat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    """``cat``, without a copy for a single tensor."""
    if len(tensors) == 1:
        return tensors[0]
    return cat(tensors, dim)


def convert_boxes_to_roi_format(boxes: list[Tensor]) -> Tensor:
    """A list of (L_i, 4) boxes, one tensor per image, as one (sum L_i, 5) tensor whose first
    column is the image's index."""
    concat_boxes = _cat(list(boxes), dim=0)
    ids = _cat([full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return cat([ids, concat_boxes], dim=1)


def check_roi_boxes_shape(boxes: Tensor | list[Tensor]) -> None:
    """Boxes must be a (K, 5) tensor or a list of (L, 4) tensors."""
    if isinstance(boxes, (list, tuple)):
        for t in boxes:
            _assert(t.size(1) == 4, "The shape of the tensor in the boxes list is not correct "
                                    "as List[Tensor[L, 4]]")
    elif isinstance(boxes, Tensor):
        _assert(boxes.size(1) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]")
    else:
        _assert(False, "boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def split_normalization_params(model: nn.Module, norm_classes: list[type] | None = None
                               ) -> tuple[list[Tensor], list[Tensor]]:
    """The trainable parameters of ``model``'s normalization layers (batch, layer, group,
    instance and local response norms by default), and all the others."""
    if not norm_classes:
        norm_classes = [_BatchNorm, nn.LayerNorm, nn.GroupNorm, _InstanceNorm,
                        nn.LocalResponseNorm]
    for t in norm_classes:
        if not issubclass(t, nn.Module):
            raise ValueError(f"Class {t} is not a subclass of nn.Module.")
    classes = tuple(norm_classes)
    norm_params: list[Tensor] = []
    other_params: list[Tensor] = []
    for module in model.modules():
        if next(module.children(), None):
            other_params.extend(p for p in module.parameters(recurse=False) if p.requires_grad)
        elif isinstance(module, classes):
            norm_params.extend(p for p in module.parameters() if p.requires_grad)
        else:
            other_params.extend(p for p in module.parameters() if p.requires_grad)
    return norm_params, other_params


def _upcast(t: Tensor) -> Tensor:
    """Half-precision floats as float32, small integers as int32 (products cannot overflow)."""
    if t.is_floating_point():
        return t if t.dtype in (_float32, _float64) else t.float()
    return t if t.dtype in (int32, int64) else t.int()


def _upcast_non_float(t: Tensor) -> Tensor:
    """Anything but float32 and float64 as float32."""
    if t.dtype not in (_float32, _float64):
        return t.float()
    return t


def _enclosing_box(corners1: Sequence[Tensor],
                   corners2: Sequence[Tensor]) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The corners (x1, y1, x2, y2) of the smallest box enclosing each pair of boxes, given as
    their unbound coordinates (``boxes.unbind(dim=-1)``)."""
    x1, y1, x2, y2 = corners1
    x1g, y1g, x2g, y2g = corners2
    return _min(x1, x1g), _min(y1, y1g), _max(x2, x2g), _max(y2, y2g)


def _loss_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    """Elementwise intersection and union areas of two same-shaped sets of (x1, y1, x2, y2)
    boxes (zero intersection where the boxes do not overlap)."""
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = _max(x1, x1g)
    ykis1 = _max(y1, y1g)
    xkis2 = _min(x2, x2g)
    ykis2 = _min(y2, y2g)
    intsctk = zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def _rename_version_1_keys(state_dict: dict, prefix: str, local_metadata: dict,
                           moves: list[tuple[str, str]]) -> None:
    """Let a checkpoint written before a layer's ``_version`` 2 load: for each ``(old, new)``
    pair of submodule paths, the ``old`` weight and bias found in ``state_dict`` (under
    ``prefix``) move to ``new``, in the order given. Newer checkpoints are left as they are."""
    version = local_metadata.get("version", None)
    if version is None or version < 2:
        for old, new in moves:
            for kind in ["weight", "bias"]:
                old_key = f"{prefix}{old}.{kind}"
                if old_key in state_dict:
                    state_dict[f"{prefix}{new}.{kind}"] = state_dict.pop(old_key)
