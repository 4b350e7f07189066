"""v2 augmentations: ``RandomErasing``, ``MixUp`` and ``CutMix`` (on batches, with their
labels), ``JPEG`` (compression artifacts)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.nn.functional import one_hot
from tapegrad.utils._pytree import tree_flatten, tree_unflatten
from tapegrad.vision import tv_tensors

from ... import transforms as _transforms
from ..transforms import _check_erasing, _erasing_box
from . import functional as F
from ._transform import Transform, _RandomApplyTransform
from ._utils import (
    _check_sequence_input,
    _parse_labels_getter,
    has_any,
    is_pure_tensor,
    query_chw,
    query_size,
)


class RandomErasing(_RandomApplyTransform):
    """With probability ``p``, erase a random box of ``scale`` of the area and log-uniform
    aspect ratio in ``ratio`` with ``value`` (a number, one per channel, or ``'random'``)."""

    _v1_transform_cls = _transforms.RandomErasing

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        return dict(super()._extract_params_for_v1_transform(),
                    value="random" if self.value is None else self.value)

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33),
                 ratio: Sequence[float] = (0.3, 3.3), value: Any = 0.0,
                 inplace: bool = False) -> None:
        super().__init__(p=p)
        _check_erasing(value, scale, ratio)
        self.scale = scale
        self.ratio = ratio
        if isinstance(value, (int, float)):
            self.value: Any = [float(value)]
        elif isinstance(value, str):
            self.value = None
        elif isinstance(value, (list, tuple)):
            self.value = [float(v) for v in value]
        else:
            self.value = value
        self.inplace = inplace
        self._log_ratio = tapegrad.log(tapegrad.tensor(self.ratio))

    def _call_kernel(self, functional: Callable, inpt: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints, tv_tensors.Mask)):
            warnings.warn(f"{type(self).__name__}() is currently passing through inputs of type "
                          f"tv_tensors.{type(inpt).__name__}. This will likely change in the "
                          "future.", stacklevel=2)
        return super()._call_kernel(functional, inpt, *args, **kwargs)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        img_c, img_h, img_w = query_chw(flat_inputs)
        if self.value is not None and len(self.value) not in (1, img_c):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{img_c} (number of inpt channels)")
        box = _erasing_box(img_c, img_h, img_w, self.scale, self._log_ratio, self.value)
        i, j, h, w, v = box if box is not None else (0, 0, img_h, img_w, None)
        return dict(i=i, j=j, h=h, w=w, v=v)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if params["v"] is not None:
            inpt = self._call_kernel(F.erase, inpt, **params, inplace=self.inplace)
        return inpt


class _BaseMixUpCutMix(Transform):
    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None,
                 labels_getter: Any = "default") -> None:
        super().__init__()
        self.alpha = float(alpha)
        self._dist = tapegrad.distributions.Beta(tapegrad.tensor([alpha]),
                                                 tapegrad.tensor([alpha]))
        self.num_classes = num_classes
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs: Any) -> Any:
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, spec = tree_flatten(inputs)
        needs_transform_list = self._needs_transform_list(flat_inputs)
        if has_any(flat_inputs, PIL.Image.Image, tv_tensors.BoundingBoxes, tv_tensors.Mask,
                   tv_tensors.KeyPoints):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding "
                             "boxes, keypoints and masks.")
        labels = self._labels_getter(inputs)
        if not isinstance(labels, Tensor):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        if labels.ndim not in (1, 2):
            raise ValueError("labels should be index based with shape (batch_size,) or "
                             "probability based with shape (batch_size, num_classes), but got "
                             f"a tensor of shape {labels.shape} instead.")
        if labels.ndim == 2 and self.num_classes is not None and (
                labels.shape[-1] != self.num_classes):
            raise ValueError("When passing 2D labels, the number of elements in last dimension "
                             f"must match num_classes: {labels.shape[-1]} != "
                             f"{self.num_classes}. You can Leave num_classes to None.")
        if labels.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        params = {
            "labels": labels,
            "batch_size": labels.shape[0],
            **self.make_params([inpt for (inpt, needs) in zip(flat_inputs, needs_transform_list,
                                                              strict=True) if needs]),
        }
        # the labels are transformed too, even when they are a pure tensor that would pass
        needs_transform_list[next(idx for idx, inpt in enumerate(flat_inputs)
                                  if inpt is labels)] = True
        flat_outputs = [self.transform(inpt, params) if needs else inpt
                        for (inpt, needs) in zip(flat_inputs, needs_transform_list, strict=True)]
        return tree_unflatten(flat_outputs, spec)

    def _check_image_or_video(self, inpt: Tensor, *, batch_size: int) -> None:
        expected_num_dims = 5 if isinstance(inpt, tv_tensors.Video) else 4
        if inpt.ndim != expected_num_dims:
            raise ValueError(f"Expected a batched input with {expected_num_dims} dims, but got "
                             f"{inpt.ndim} dimensions instead.")
        if inpt.shape[0] != batch_size:
            raise ValueError("The batch size of the image or video does not match the batch "
                             f"size of the labels: {inpt.shape[0]} != {batch_size}.")

    def _mixup_label(self, label: Tensor, *, lam: float) -> Tensor:
        if label.ndim == 1:
            label = one_hot(label, num_classes=self.num_classes)  # type: ignore[arg-type]
        if not label.dtype.is_floating_point:
            label = label.float()
        return label.roll(1, 0).mul_(1.0 - lam).add_(label.mul(lam))


class MixUp(_BaseMixUpCutMix):
    """MixUp on a batch: each image blended with the next (rolled by one) by a Beta(alpha,
    alpha) weight, the one-hot labels blended alike."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        return dict(lam=float(self._dist.sample(())))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        lam = params["lam"]
        if inpt is params["labels"]:
            return self._mixup_label(inpt, lam=lam)
        elif isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or is_pure_tensor(inpt):
            self._check_image_or_video(inpt, batch_size=params["batch_size"])
            output = inpt.roll(1, 0).mul_(1.0 - lam).add_(inpt.mul(lam))
            if isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)):
                output = tv_tensors.wrap(output, like=inpt)
            return output
        return inpt


class CutMix(_BaseMixUpCutMix):
    """CutMix on a batch: a random box of each image replaced by the next image's, the labels
    mixed by the area left."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        lam = float(self._dist.sample(()))
        H, W = query_size(flat_inputs)
        r_x = tapegrad.randint(W, size=(1,))
        r_y = tapegrad.randint(H, size=(1,))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half = int(r * W)
        r_h_half = int(r * H)
        x1 = int(tapegrad.clamp(r_x - r_w_half, min=0))
        y1 = int(tapegrad.clamp(r_y - r_h_half, min=0))
        x2 = int(tapegrad.clamp(r_x + r_w_half, max=W))
        y2 = int(tapegrad.clamp(r_y + r_h_half, max=H))
        box = (x1, y1, x2, y2)
        lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
        return dict(box=box, lam_adjusted=lam_adjusted)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if inpt is params["labels"]:
            return self._mixup_label(inpt, lam=params["lam_adjusted"])
        elif isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or is_pure_tensor(inpt):
            self._check_image_or_video(inpt, batch_size=params["batch_size"])
            x1, y1, x2, y2 = params["box"]
            rolled = inpt.roll(1, 0)
            output = inpt.clone()
            output[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
            if isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)):
                output = tv_tensors.wrap(output, like=inpt)
            return output
        return inpt


class JPEG(Transform):
    """JPEG-compress at a quality drawn from ``quality`` (an int, or a [min, max] range)."""

    def __init__(self, quality: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(quality, int):
            if isinstance(quality, bool):
                raise TypeError("quality can't be bool")
            quality = [quality, quality]
        else:
            _check_sequence_input(quality, "quality", req_sizes=(2,))
        if not (1 <= quality[0] <= quality[1] <= 100 and isinstance(quality[0], int)
                and isinstance(quality[1], int)):
            raise ValueError(f"quality must be an integer from 1 to 100, got {quality =}")
        self.quality = quality

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        quality = tapegrad.randint(self.quality[0], self.quality[1] + 1, ()).item()
        return dict(quality=quality)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.jpeg, inpt, quality=params["quality"])
