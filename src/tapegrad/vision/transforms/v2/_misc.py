"""v2 transforms that are neither geometry nor color: ``Identity``, ``Lambda``,
``LinearTransformation``, ``Normalize``, ``GaussianBlur``, ``GaussianNoise``, ``ToDtype``,
``ConvertImageDtype``, and the box/keypoint sanitizers of the detection pipelines."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.utils._pytree import tree_flatten, tree_unflatten
from tapegrad.vision import tv_tensors

from ... import transforms as _transforms
from ..transforms import _blur_kernel_size, _set_whitening, _whitened_size
from . import functional as F
from ._transform import Transform
from ._utils import (
    _parse_labels_getter,
    _setup_number_or_seq,
    get_bounding_boxes,
    get_keypoints,
    has_any,
    is_pure_tensor,
)


class Identity(Transform):
    """Return the input unchanged."""

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return inpt


class Lambda(Transform):
    """Apply ``lambd`` to the inputs of the given ``types`` (all inputs by default)."""

    _transformed_types = (object,)

    def __init__(self, lambd: Callable[[Any], Any], *types: type) -> None:
        super().__init__()
        self.lambd = lambd
        self.types = types or self._transformed_types

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if isinstance(inpt, self.types):
            return self.lambd(inpt)
        return inpt

    def extra_repr(self) -> str:
        extras = []
        name = getattr(self.lambd, "__name__", None)
        if name:
            extras.append(name)
        extras.append(f"types={[type.__name__ for type in self.types]}")
        return ", ".join(extras)


class LinearTransformation(Transform):
    """Flatten, subtract ``mean_vector``, multiply by ``transformation_matrix`` (whitening)."""

    _v1_transform_cls = _transforms.LinearTransformation

    _transformed_types = (is_pure_tensor, tv_tensors.Image, tv_tensors.Video)

    def __init__(self, transformation_matrix: Tensor, mean_vector: Tensor) -> None:
        super().__init__()
        _set_whitening(self, transformation_matrix, mean_vector)

    def check_inputs(self, sample: Any) -> Any:
        if has_any(sample, PIL.Image.Image):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        shape = inpt.shape
        n = _whitened_size(inpt, self.transformation_matrix, self.mean_vector)
        flat_inpt = inpt.reshape(-1, n) - self.mean_vector
        transformation_matrix = self.transformation_matrix.to(flat_inpt.dtype)
        output = tapegrad.mm(flat_inpt, transformation_matrix).reshape(shape)
        if isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)):
            output = tv_tensors.wrap(output, like=inpt)
        return output


class Normalize(Transform):
    """(x - mean) / std per channel of float images and videos."""

    _v1_transform_cls = _transforms.Normalize

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False
                 ) -> None:
        super().__init__()
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace

    def check_inputs(self, sample: Any) -> Any:
        if has_any(sample, PIL.Image.Image):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.normalize, inpt, mean=self.mean, std=self.std,
                                 inplace=self.inplace)


class GaussianBlur(Transform):
    """Gaussian blur with ``kernel_size`` and a sigma drawn uniformly from ``sigma``."""

    _v1_transform_cls = _transforms.GaussianBlur

    def __init__(self, kernel_size: int | Sequence[int],
                 sigma: int | float | Sequence[float] = (0.1, 2.0)) -> None:
        super().__init__()
        self.kernel_size = _blur_kernel_size(kernel_size)
        self.sigma = _setup_number_or_seq(sigma, "sigma")
        if not 0.0 < self.sigma[0] <= self.sigma[1]:
            raise ValueError("sigma values should be positive and of the form (min, max). Got "
                             f"{self.sigma}")

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        sigma = tapegrad.empty(1).uniform_(self.sigma[0], self.sigma[1]).item()
        return dict(sigma=[sigma, sigma])

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.gaussian_blur, inpt, self.kernel_size, **params)


class GaussianNoise(Transform):
    """Add Gaussian noise of ``mean`` and ``sigma`` (in [0, 1] units), clipped if ``clip``."""

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True) -> None:
        super().__init__()
        self.mean = mean
        self.sigma = sigma
        self.clip = clip

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.gaussian_noise, inpt, mean=self.mean, sigma=self.sigma,
                                 clip=self.clip)


class ToDtype(Transform):
    """Convert to ``dtype`` (per input type if a dict; "others" for the rest); ``scale``
    rescales images and videos (float [0, 1], integers [0, max])."""

    _transformed_types = (Tensor,)

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        super().__init__()
        if not isinstance(dtype, (dict, tapegrad.dtype)):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        if (isinstance(dtype, dict) and Tensor in dtype
                and any(cls in dtype for cls in [tv_tensors.Image, tv_tensors.Video])):
            warnings.warn(
                "Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` or "
                "`tv_tensors.Video`. Note that a plain `torch.Tensor` will *not* be transformed "
                "by this (or any other transformation) in case a `tv_tensors.Image` or "
                "`tv_tensors.Video` is present in the input.", stacklevel=2)
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if isinstance(self.dtype, tapegrad.dtype):
            # a single dtype converts only images and videos (and the pure tensor image)
            if not is_pure_tensor(inpt) and not isinstance(inpt, (tv_tensors.Image,
                                                                  tv_tensors.Video)):
                return inpt
            dtype: Any = self.dtype
        elif type(inpt) in self.dtype:
            dtype = self.dtype[type(inpt)]
        elif "others" in self.dtype:
            dtype = self.dtype["others"]
        else:
            raise ValueError(
                f"No dtype was specified for type {type(inpt)}. If you only need to convert "
                "the dtype of images or videos, you can just pass e.g. dtype=torch.float32. "
                "If you're passing a dict as dtype, you can use \"others\" as a catch-all key "
                "e.g. dtype={tv_tensors.Mask: torch.int64, \"others\": None} to pass-through "
                "the rest of the inputs.")
        supports_scaling = is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image,
                                                                     tv_tensors.Video))
        if dtype is None:
            if self.scale and supports_scaling:
                warnings.warn("scale was set to True but no dtype was specified for images or "
                              "videos: no scaling will be done.", stacklevel=2)
            return inpt
        return self._call_kernel(F.to_dtype, inpt, dtype=dtype, scale=self.scale)


class ConvertImageDtype(Transform):
    """Convert images and videos to ``dtype``, rescaling the values."""

    _v1_transform_cls = _transforms.ConvertImageDtype

    def __init__(self, dtype: Any = tapegrad.float32) -> None:
        super().__init__()
        self.dtype = dtype

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.to_dtype, inpt, dtype=self.dtype, scale=True)


def _check_labels(labels: Any) -> Any:
    if labels is not None:
        msg = "The labels in the input to forward() must be a tensor or None, got {type} instead."
        if isinstance(labels, Tensor):
            labels = (labels,)
        elif isinstance(labels, (tuple, list)):
            for entry in labels:
                if not isinstance(entry, Tensor):
                    raise ValueError(msg.format(type=type(entry)))
        else:
            raise ValueError(msg.format(type=type(labels)))
    return labels


def _sanitize(transform: Transform, inputs: tuple, find: Callable[[list[Any]], Any],
              mismatch: str, valid_mask: Callable[[Any], Tensor]) -> Any:
    """The ``forward`` of the sanitizing transforms: the labels (the transform's
    ``labels_getter``) and the boxes or keypoints ``find`` picks from the inputs; each label
    must have a row per item (else ``mismatch``, formatted with both shapes); then every input
    goes through ``transform.transform`` with the items' ``valid_mask``."""
    inputs = inputs if len(inputs) > 1 else inputs[0]
    labels = _check_labels(transform._labels_getter(inputs))  # type: ignore[attr-defined]
    flat_inputs, spec = tree_flatten(inputs)
    items = find(flat_inputs)
    if labels is not None:
        for label in labels:
            if items.shape[0] != label.shape[0]:
                raise ValueError(mismatch.format(items=items.shape, labels=label.shape))
    params = dict(valid=valid_mask(items), labels=labels)
    flat_outputs = [transform.transform(inpt, params) for inpt in flat_inputs]
    return tree_unflatten(flat_outputs, spec)


class SanitizeBoundingBoxes(Transform):
    """Remove the boxes that are too small (``min_size``, ``min_area``) or outside the canvas,
    with their labels (found by ``labels_getter``) and masks."""

    def __init__(self, min_size: float = 1.0, min_area: float = 1.0,
                 labels_getter: Callable[[Any], Any] | str | None = "default") -> None:
        super().__init__()
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        self.min_size = min_size
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_area = min_area
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs: Any) -> Any:
        return _sanitize(self, inputs, get_bounding_boxes,
                         "Number of boxes (shape={items}) and must match the number of "
                         "labels.Found labels with shape={labels}).", self._valid_boxes)

    def _valid_boxes(self, boxes: Any) -> Tensor:
        return F._misc._get_sanitize_bounding_boxes_mask(
            boxes, format=boxes.format, canvas_size=boxes.canvas_size, min_size=self.min_size,
            min_area=self.min_area)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        is_label = params["labels"] is not None and any(inpt is label
                                                        for label in params["labels"])
        is_bounding_boxes = isinstance(inpt, tv_tensors.BoundingBoxes)
        is_mask = isinstance(inpt, tv_tensors.Mask)
        if not (is_label or is_bounding_boxes or is_mask):
            return inpt
        try:
            output = inpt[params["valid"]]
        except IndexError:
            # a semantic segmentation mask (no per-box masks) passes through
            return inpt
        if is_label:
            return output
        return tv_tensors.wrap(output, like=inpt)


class SanitizeKeyPoints(Transform):
    """Remove the keypoints (or groups of keypoints) outside the canvas, with their labels."""

    def __init__(self, labels_getter: Callable[[Any], Any] | str | None = None) -> None:
        super().__init__()
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def forward(self, *inputs: Any) -> Any:
        return _sanitize(self, inputs, get_keypoints,
                         "Number of kepyoints (shape={items}) must match the number of "
                         "labels.Found labels with shape={labels}).",
                         lambda points: F._misc._get_sanitize_keypoints_mask(
                             points, canvas_size=points.canvas_size))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        is_label = params["labels"] is not None and any(inpt is label
                                                        for label in params["labels"])
        is_keypoints = isinstance(inpt, tv_tensors.KeyPoints)
        if not (is_label or is_keypoints):
            return inpt
        output = inpt[params["valid"]]
        if is_label:
            return output
        return tv_tensors.wrap(output, like=inpt)
