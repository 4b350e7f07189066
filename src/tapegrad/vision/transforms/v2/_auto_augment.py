"""v2 automatic augmentation: ``AutoAugment``, ``RandAugment``, ``TrivialAugmentWide``,
``AugMix``. They work on the one image (or video) of a sample and refuse boxes and masks; their
draws follow torchvision's v2 classes (0-d ``torch.rand(())`` and ``torch.randint(n, ())``
draws, which differ from v1's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from tapegrad.vision import tv_tensors

from ... import transforms as _transforms
from .. import autoaugment as _v1
from .._functional_tensor import _max_value
from . import functional as F
from ._transform import Transform
from ._utils import _get_fill, _set_fill, check_type, is_pure_tensor
from .functional._meta import get_size

AutoAugmentPolicy = _v1.AutoAugmentPolicy


def _bins(hi: Callable[[int, int], float]) -> Callable[[int, int, int], Tensor]:
    """Magnitude bins linspace(0, hi(height, width), num_bins)."""
    return lambda num_bins, height, width: tapegrad.linspace(0.0, hi(height, width), num_bins)


def _posterize(start: int, span: int) -> Callable[[int, int, int], Tensor]:
    return lambda num_bins, height, width: (
        start - (tapegrad.arange(num_bins) / ((num_bins - 1) / span))).round().int()


def _no_bins(num_bins: int, height: int, width: int) -> None:
    return None


def _solarize_bins(num_bins: int, height: int, width: int) -> Tensor:
    # a fraction of the dtype's maximum, from 1 down to 0
    return tapegrad.linspace(1.0, 0.0, num_bins)


def _random_sign(magnitude: float, signed: bool) -> float:
    """A signed op's magnitude negated with probability 1/2 (one draw); others' as they are."""
    if signed and tapegrad.rand(()) <= 0.5:
        return -magnitude
    return magnitude


class _AutoAugmentBase(Transform):
    def __init__(self, *, interpolation: Any = "nearest", fill: Any = None) -> None:
        super().__init__()
        self.interpolation = interpolation
        _set_fill(self, fill)

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        params = super()._extract_params_for_v1_transform()
        if isinstance(params["fill"], dict):
            raise ValueError(f"{type(self).__name__}() can not be scripted for when `fill` is a "
                             "dictionary.")
        return params

    def _get_random_item(self, dct: dict[str, Any]) -> tuple[str, Any]:
        keys = tuple(dct.keys())
        key = keys[int(tapegrad.randint(len(keys), ()))]
        return key, dct[key]

    def _flatten_and_extract_image_or_video(
            self, inputs: Any,
            unsupported_types: tuple[type, ...] = (tv_tensors.BoundingBoxes, tv_tensors.Mask,
                                                   tv_tensors.KeyPoints)
    ) -> tuple[tuple[list[Any], TreeSpec, int], Any]:
        flat_inputs, spec = tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        needs_transform_list = self._needs_transform_list(flat_inputs)
        image_or_videos = []
        for idx, (inpt, needs_transform) in enumerate(zip(flat_inputs, needs_transform_list,
                                                          strict=True)):
            if needs_transform and check_type(inpt, (tv_tensors.Image, PIL.Image.Image,
                                                     is_pure_tensor, tv_tensors.Video)):
                image_or_videos.append((idx, inpt))
            elif isinstance(inpt, unsupported_types):
                raise TypeError(f"Inputs of type {type(inpt).__name__} are not supported by "
                                f"{type(self).__name__}()")
        if not image_or_videos:
            raise TypeError("Found no image in the sample.")
        if len(image_or_videos) > 1:
            raise TypeError("Auto augment transformations are only properly defined for a "
                            f"single image or video, but found {len(image_or_videos)}.")
        idx, image_or_video = image_or_videos[0]
        return (flat_inputs, spec, idx), image_or_video

    def _unflatten_and_insert_image_or_video(self, flat_inputs_with_spec: tuple,
                                             image_or_video: Any) -> Any:
        flat_inputs, spec, idx = flat_inputs_with_spec
        flat_inputs[idx] = image_or_video
        return tree_unflatten(flat_inputs, spec)

    def _apply_op(self, image_or_video: Any, transform_id: str, magnitude: float) -> Any:
        """``transform_id`` at ``magnitude``, with this transform's interpolation and fill."""
        return self._apply_image_or_video_transform(
            image_or_video, transform_id, magnitude, interpolation=self.interpolation,
            fill=self._fill)

    def _apply_image_or_video_transform(self, image: Any, transform_id: str, magnitude: float,
                                        interpolation: Any, fill: dict[Any, Any]) -> Any:
        fill_ = _get_fill(fill, type(image))
        if transform_id == "Solarize":  # v2's magnitudes are fractions of the largest value
            bound = _max_value(image.dtype) if isinstance(image, Tensor) else 255.0
            magnitude = bound * magnitude
        return _v1._apply_op(image, transform_id, magnitude, interpolation, fill_,
                             functional=F, unknown="No transform available for {}")


_SHEAR = _bins(lambda h, w: 0.3)
_ROTATE = _bins(lambda h, w: 30.0)
_COLOR = _bins(lambda h, w: 0.9)

# the ops (magnitude bins, signed) that AutoAugment and RandAugment share
_AUTOAUGMENT_OPS = {
    "ShearX": (_SHEAR, True),
    "ShearY": (_SHEAR, True),
    "TranslateX": (_bins(lambda h, w: 150.0 / 331.0 * w), True),
    "TranslateY": (_bins(lambda h, w: 150.0 / 331.0 * h), True),
    "Rotate": (_ROTATE, True),
    "Brightness": (_COLOR, True),
    "Color": (_COLOR, True),
    "Contrast": (_COLOR, True),
    "Sharpness": (_COLOR, True),
    "Posterize": (_posterize(8, 4), False),
    "Solarize": (_solarize_bins, False),
    "AutoContrast": (_no_bins, False),
    "Equalize": (_no_bins, False),
}


class AutoAugment(_AutoAugmentBase):
    """AutoAugment with the learned ``policy`` (ImageNet, CIFAR10 or SVHN)."""

    _v1_transform_cls = _transforms.AutoAugment

    _AUGMENTATION_SPACE = {**_AUTOAUGMENT_OPS, "Invert": (_no_bins, False)}

    def __init__(self, policy: Any = AutoAugmentPolicy.IMAGENET,
                 interpolation: Any = "nearest", fill: Any = None) -> None:
        super().__init__(interpolation=interpolation, fill=fill)
        self.policy = policy
        self._policies = self._get_policies(policy)

    def _get_policies(self, policy: Any) -> list:
        if policy not in _v1._POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _v1._parse_policies(_v1._POLICIES[policy])

    def forward(self, *inputs: Any) -> Any:
        flat_inputs_with_spec, image_or_video = self._flatten_and_extract_image_or_video(inputs)
        height, width = get_size(image_or_video)
        policy = self._policies[int(tapegrad.randint(len(self._policies), ()))]
        for transform_id, probability, magnitude_idx in policy:
            if not tapegrad.rand(()) <= probability:
                continue
            magnitudes_fn, signed = self._AUGMENTATION_SPACE[transform_id]
            magnitudes = magnitudes_fn(10, height, width)
            magnitude = (0.0 if magnitudes is None
                         else _random_sign(float(magnitudes[magnitude_idx]), signed))
            image_or_video = self._apply_op(image_or_video, transform_id, magnitude)
        return self._unflatten_and_insert_image_or_video(flat_inputs_with_spec, image_or_video)


class RandAugment(_AutoAugmentBase):
    """RandAugment: ``num_ops`` uniformly chosen ops at the same ``magnitude`` bin."""

    _v1_transform_cls = _transforms.RandAugment
    _AUGMENTATION_SPACE = {"Identity": (_no_bins, False), **_AUTOAUGMENT_OPS}

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation: Any = "nearest", fill: Any = None) -> None:
        super().__init__(interpolation=interpolation, fill=fill)
        if not isinstance(num_ops, int) or (num_ops < 0):
            raise ValueError(
                f"num_ops should be a non-negative integer, but got {num_ops} instead.")
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins

    def forward(self, *inputs: Any) -> Any:
        flat_inputs_with_spec, image_or_video = self._flatten_and_extract_image_or_video(inputs)
        height, width = get_size(image_or_video)
        for _ in range(self.num_ops):
            transform_id, (magnitudes_fn, signed) = self._get_random_item(
                self._AUGMENTATION_SPACE)
            magnitudes = magnitudes_fn(self.num_magnitude_bins, height, width)
            magnitude = (0.0 if magnitudes is None
                         else _random_sign(float(magnitudes[self.magnitude]), signed))
            image_or_video = self._apply_op(image_or_video, transform_id, magnitude)
        return self._unflatten_and_insert_image_or_video(flat_inputs_with_spec, image_or_video)


class TrivialAugmentWide(_AutoAugmentBase):
    """TrivialAugment: one uniformly chosen op at a uniformly chosen magnitude bin."""

    _v1_transform_cls = _transforms.TrivialAugmentWide
    _AUGMENTATION_SPACE = {
        "Identity": (_no_bins, False),
        "ShearX": (_bins(lambda h, w: 0.99), True),
        "ShearY": (_bins(lambda h, w: 0.99), True),
        "TranslateX": (_bins(lambda h, w: 32.0), True),
        "TranslateY": (_bins(lambda h, w: 32.0), True),
        "Rotate": (_bins(lambda h, w: 135.0), True),
        "Brightness": (_bins(lambda h, w: 0.99), True),
        "Color": (_bins(lambda h, w: 0.99), True),
        "Contrast": (_bins(lambda h, w: 0.99), True),
        "Sharpness": (_bins(lambda h, w: 0.99), True),
        "Posterize": (_posterize(8, 6), False),
        "Solarize": (_solarize_bins, False),
        "AutoContrast": (_no_bins, False),
        "Equalize": (_no_bins, False),
    }

    def __init__(self, num_magnitude_bins: int = 31, interpolation: Any = "nearest",
                 fill: Any = None) -> None:
        super().__init__(interpolation=interpolation, fill=fill)
        self.num_magnitude_bins = num_magnitude_bins

    def forward(self, *inputs: Any) -> Any:
        flat_inputs_with_spec, image_or_video = self._flatten_and_extract_image_or_video(inputs)
        height, width = get_size(image_or_video)
        transform_id, (magnitudes_fn, signed) = self._get_random_item(self._AUGMENTATION_SPACE)
        magnitudes = magnitudes_fn(self.num_magnitude_bins, height, width)
        if magnitudes is not None:  # the bin is drawn only for an op that has magnitudes
            bin_ = int(tapegrad.randint(self.num_magnitude_bins, ()))
            magnitude = _random_sign(float(magnitudes[bin_]), signed)
        else:
            magnitude = 0.0
        image_or_video = self._apply_op(image_or_video, transform_id, magnitude)
        return self._unflatten_and_insert_image_or_video(flat_inputs_with_spec, image_or_video)


class AugMix(_AutoAugmentBase):
    """AugMix: ``mixture_width`` chains of random ops mixed with Dirichlet weights, then
    blended with the original."""

    _v1_transform_cls = _transforms.AugMix
    _PARTIAL_AUGMENTATION_SPACE = {
        "ShearX": (_SHEAR, True),
        "ShearY": (_SHEAR, True),
        "TranslateX": (_bins(lambda h, w: w / 3.0), True),
        "TranslateY": (_bins(lambda h, w: h / 3.0), True),
        "Rotate": (_ROTATE, True),
        "Posterize": (_posterize(4, 4), False),
        "Solarize": (_solarize_bins, False),
        "AutoContrast": (_no_bins, False),
        "Equalize": (_no_bins, False),
    }
    _AUGMENTATION_SPACE = {
        **_PARTIAL_AUGMENTATION_SPACE,
        "Brightness": (_COLOR, True),
        "Color": (_COLOR, True),
        "Contrast": (_COLOR, True),
        "Sharpness": (_COLOR, True),
    }

    def __init__(self, severity: int = 3, mixture_width: int = 3, chain_depth: int = -1,
                 alpha: float = 1.0, all_ops: bool = True, interpolation: Any = "bilinear",
                 fill: Any = None) -> None:
        super().__init__(interpolation=interpolation, fill=fill)
        _v1._set_augmix_settings(self, severity, mixture_width, chain_depth, alpha, all_ops)

    def _sample_dirichlet(self, params: Tensor) -> Tensor:
        return tapegrad._sample_dirichlet(params)

    def forward(self, *inputs: Any) -> Any:
        flat_inputs_with_spec, orig_image_or_video = self._flatten_and_extract_image_or_video(
            inputs)
        height, width = get_size(orig_image_or_video)
        if isinstance(orig_image_or_video, Tensor):
            image_or_video = orig_image_or_video
        else:  # a PIL image
            image_or_video = F.pil_to_tensor(orig_image_or_video)
        augmentation_space = (self._AUGMENTATION_SPACE if self.all_ops
                              else self._PARTIAL_AUGMENTATION_SPACE)
        orig_dims = list(image_or_video.shape)
        expected_ndim = 5 if isinstance(orig_image_or_video, tv_tensors.Video) else 4
        batch = image_or_video.reshape([1] * max(expected_ndim - image_or_video.ndim, 0)
                                       + orig_dims)
        batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
        m, combined_weights = _v1._mixing_weights(self._sample_dirichlet, self.alpha,
                                                  self.mixture_width, batch)
        mix = m[:, 0].reshape(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = _v1._chain_depth(self.chain_depth)
            for _ in range(depth):
                transform_id, (magnitudes_fn, signed) = self._get_random_item(
                    augmentation_space)
                magnitudes = magnitudes_fn(self._PARAMETER_MAX, height, width)
                magnitude = (0.0 if magnitudes is None else _random_sign(
                    float(magnitudes[int(tapegrad.randint(self.severity, ()))]), signed))
                aug = self._apply_op(aug, transform_id, magnitude)
            mix.add_(combined_weights[:, i].reshape(batch_dims) * aug)
        mix = mix.reshape(orig_dims).to(dtype=image_or_video.dtype)
        if isinstance(orig_image_or_video, (tv_tensors.Image, tv_tensors.Video)):
            mix = tv_tensors.wrap(mix, like=orig_image_or_video)
        elif isinstance(orig_image_or_video, PIL.Image.Image):
            mix = F.to_pil_image(mix)
        return self._unflatten_and_insert_image_or_video(flat_inputs_with_spec, mix)
